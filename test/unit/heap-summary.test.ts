import { growthByKind, totalsByKind } from '../../bench/heap-summary';

/** A snapshot of the given nodes: [type, name, self size] each. */
const snapshot = (nodes: Array<[string, string, number]>) => {
  const types = ['hidden', 'array', 'string', 'object', 'code', 'closure'];
  const strings: string[] = [];
  const flat: number[] = [];
  nodes.forEach(([type, name, size], id) => {
    strings.push(name);
    flat.push(types.indexOf(type), strings.length - 1, id, size, 0, 0, 0);
  });
  return { snapshot: { meta: { node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'], node_types: [types] as [string[]] } }, nodes: flat, strings };
};

describe('heap snapshot summary', () => {
  test('self sizes add up by type and constructor; strings and code by type alone', () => {
    const t = totalsByKind(snapshot([['object', 'Activator', 100], ['object', 'Activator', 120], ['string', 'hello', 40], ['string', 'other', 24], ['closure', 'next', 32], ['code', 'x', 500]]));
    expect(t.get('object:Activator')).toEqual({ kind: 'object:Activator', count: 2, bytes: 220 });
    expect(t.get('string')).toEqual({ kind: 'string', count: 2, bytes: 64 });
    expect(t.get('closure:next')?.bytes).toBe(32);
    expect(t.get('code')?.count).toBe(1);
  });

  test('the growth between two snapshots, per added run, the largest first', () => {
    const a = totalsByKind(snapshot([['object', 'Activator', 100], ['string', 's', 10]]));
    const b = totalsByKind(snapshot([['object', 'Activator', 100], ['object', 'Activator', 100], ['object', 'Activator', 100], ['string', 's', 10], ['object', 'Map', 60]]));
    expect(growthByKind(a, b, 2)).toEqual([
      { kind: 'object:Activator', count: 1, bytes: 100 },
      { kind: 'object:Map', count: 0.5, bytes: 30 },
      { kind: 'string', count: 0, bytes: 0 },
    ]);
  });
});
