import { labelSelectorToString, parseSelectorString, requirementsMatch } from '../../workflows/common/label-selector-string';

const parse = (s: string) => {
  const p = parseSelectorString(s);
  if (!p.ok) throw new Error(p.error);
  return p.requirements;
};
const matches = (s: string, labels: Record<string, string>) => requirementsMatch(parse(s), labels);

describe('parseSelectorString', () => {
  it('parses every operator of the grammar', () => {
    expect(parse('app=web,tier==front,env!=prod')).toEqual([
      { key: 'app', op: 'in', values: ['web'] },
      { key: 'tier', op: 'in', values: ['front'] },
      { key: 'env', op: 'notin', values: ['prod'] },
    ]);
    expect(parse('a in (x, y),b notin (z),c,!d')).toEqual([
      { key: 'a', op: 'in', values: ['x', 'y'] },
      { key: 'b', op: 'notin', values: ['z'] },
      { key: 'c', op: 'exists' },
      { key: 'd', op: '!' },
    ]);
    expect(parse('n>3,m<10')).toEqual([{ key: 'n', op: 'gt', value: 3 }, { key: 'm', op: 'lt', value: 10 }]);
    expect(parse('example.com/app=web')).toEqual([{ key: 'example.com/app', op: 'in', values: ['web'] }]);
  });

  it('takes an empty string as everything and an empty value as a value', () => {
    expect(parse('')).toEqual([]);
    expect(parse('a=')).toEqual([{ key: 'a', op: 'in', values: [''] }]);
  });

  it.each([
    ['a=b,', 'trailing comma'],
    ['=b', 'no key'],
    ['a in b', 'no parenthesis'],
    ['a in (b', 'unclosed set'],
    ['a b', 'two identifiers'],
    ['a>x', 'non-integer Gt'],
    ['-a=b', 'invalid key'],
    ['a=b c', 'junk after a requirement'],
    ['a=-b-', 'invalid value'],
  ])('refuses %j (%s)', (s) => {
    const p = parseSelectorString(s);
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.error).toMatch(/^unable to parse requirement: /);
  });
});

describe('requirementsMatch', () => {
  it('matches as labels.Selector does', () => {
    expect(matches('app=web', { app: 'web', x: 'y' })).toBe(true);
    expect(matches('app=web', { app: 'db' })).toBe(false);
    expect(matches('app!=web', {})).toBe(true);
    expect(matches('app notin (a,b)', { app: 'a' })).toBe(false);
    expect(matches('app in (a,b)', { app: 'b' })).toBe(true);
    expect(matches('app', {})).toBe(false);
    expect(matches('!app', {})).toBe(true);
    expect(matches('n>3', { n: '4' })).toBe(true);
    expect(matches('n>3', { n: 'four' })).toBe(false);
    expect(matches('n<3', { n: '3' })).toBe(false);
    expect(matches('', { any: 'thing' })).toBe(true);
  });
});

describe('labelSelectorToString', () => {
  it('prints as LabelSelectorAsSelector(...).String(): sorted by key, values sorted', () => {
    expect(labelSelectorToString({ matchLabels: { tier: 'front', app: 'web' } })).toBe('app=web,tier=front');
    expect(labelSelectorToString({
      matchExpressions: [
        { key: 'zone', operator: 'In', values: ['b', 'a'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'gpu', operator: 'Exists' },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    })).toBe('!canary,env notin (prod),gpu,zone in (a,b)');
    expect(labelSelectorToString(undefined)).toBe('');
    expect(labelSelectorToString({})).toBe('');
  });

  it('prints what parseSelectorString reads back to the same requirements', () => {
    const s = labelSelectorToString({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] });
    expect(matches(s, { app: 'web', zone: 'b' })).toBe(true);
    expect(matches(s, { app: 'web', zone: 'c' })).toBe(false);
  });
});
