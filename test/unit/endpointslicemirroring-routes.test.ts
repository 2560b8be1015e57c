import { mergeMirroringEvents, mirroringRoutes } from '../../activities/endpointslicemirroring/routes';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { MirroringEvent } from '../../workflows/endpointslicemirroring/types';
import { routeHarness } from '../support/routes';

const SVC = RESOURCES.services;
const EP = RESOURCES.endpoints;
const SLICES = RESOURCES.endpointSlices;
const OURS = 'endpointslicemirroring-controller.k8s.io';

function harness(flags?: Record<string, number>) {
  const t = routeHarness<MirroringEvent>(mirroringRoutes, { controllers: ['endpointslicemirroring'], flags });
  const to = (id: string) => t.sent.filter((s) => s.target.workflowId === id).map((s) => s.event);
  const ids = () => t.sent.map((s) => s.target.workflowId).sort();
  return { ...t, to, ids };
}

const svc = (name: string, selector?: Record<string, string>, rv = '1', ns = 'a'): KubeObject =>
  ({ metadata: { namespace: ns, name, uid: `u-${name}`, resourceVersion: rv }, spec: { selector, ports: [{ port: 80 }], clusterIP: 'None' } } as KubeObject);
const ep = (name: string, o: { rv?: string; skip?: boolean; leader?: boolean } = {}): KubeObject =>
  ({
    metadata: {
      namespace: 'a', name, uid: `e-${name}`, resourceVersion: o.rv ?? '1',
      labels: o.skip ? { 'endpointslice.kubernetes.io/skip-mirror': 'true' } : {},
      annotations: o.leader ? { 'control-plane.alpha.kubernetes.io/leader': '{}' } : {},
    },
    subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }],
  } as unknown as KubeObject);
const slice = (name: string, service: string, o: { rv?: string; managedBy?: string } = {}): KubeObject =>
  ({ metadata: { namespace: 'a', name, uid: `s-${name}`, resourceVersion: o.rv ?? '1', labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': o.managedBy ?? OURS } },
    addressType: 'IPv4', endpoints: [] } as unknown as KubeObject);

/** a selector-less `ext` with mirrorable Endpoints, a selecting `web` with Endpoints, and the lists done */
function listed() {
  const t = harness();
  t.h(SVC).relisted([svc('ext'), svc('web', { app: 'web' })]);
  t.h(EP).relisted([ep('ext'), ep('web')]);
  t.h(SLICES).relisted([slice('ext-1', 'ext')]);
  t.sent.length = 0;
  return t;
}

describe('mirroring routes: lists', () => {
  test('a selector-less Service with Endpoints to mirror is looked at once both are listed, in either order', () => {
    const a = harness();
    a.h(SVC).relisted([svc('ext'), svc('web', { app: 'web' }), svc('lonely')]);
    expect(a.sent).toHaveLength(0);
    a.h(EP).relisted([ep('ext'), ep('web'), ep('skipped', { skip: true }), ep('nosvc')]);
    expect(a.ids()).toEqual(['endpointslicemirroring/a/ext']);
    expect(a.to('endpointslicemirroring/a/ext')).toEqual([{ changed: true, relist: true }]);

    const b = harness();
    b.h(EP).relisted([ep('ext'), ep('web'), ep('skipped', { skip: true })]);
    expect(b.sent).toHaveLength(0);
    b.h(SVC).relisted([svc('ext'), svc('web', { app: 'web' })]);
    // a selecting Service with mirrorable Endpoints is looked at too: what was mirrored may need cleaning
    expect(b.ids()).toEqual(['endpointslicemirroring/a/ext', 'endpointslicemirroring/a/web']);
    expect(b.sent.every((s) => JSON.stringify(s.event) === JSON.stringify({ changed: true, relist: true }))).toBe(true);
  });

  test('a later Services list looks again at pairs that are or were selector-less, and at those whose Service vanished', () => {
    const { sent, h, to, ids } = listed();
    h(SVC).relisted([svc('ext', undefined, '2'), svc('web', { app: 'web' }, '2')]);
    expect(ids()).toEqual(['endpointslicemirroring/a/ext']);
    sent.length = 0;
    h(SVC).relisted([svc('web', undefined, '3')]);
    expect(to('endpointslicemirroring/a/web')).toEqual([{ changed: true, relist: true }]);
    expect(to('endpointslicemirroring/a/ext')).toEqual([{ changed: true }]);
  });

  test('a later Endpoints list looks again at mirrored pairs; Endpoints gone meanwhile are a change', () => {
    const { sent, h, to, ids } = listed();
    h(EP).relisted([ep('ext', { rv: '2' }), ep('web', { rv: '2' })]);
    expect(ids()).toEqual(['endpointslicemirroring/a/ext']);
    expect(to('endpointslicemirroring/a/ext')).toEqual([{ changed: true, relist: true }]);
    sent.length = 0;
    h(EP).relisted([ep('web', { rv: '3' })]);
    expect(to('endpointslicemirroring/a/ext')).toEqual([{ changed: true }]);
    expect(sent).toHaveLength(1);
  });

  test('a slices list looks at our slices of pairs no longer mirrored; a mirrored slice gone meanwhile is a deletion', () => {
    const { sent, h, to } = listed();
    h(SLICES).relisted([slice('ext-1', 'ext', { rv: '2' }), slice('web-1', 'web'), slice('gone-1', 'gone'), slice('other', 'gone', { managedBy: 'someone' })]);
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([
      ['endpointslicemirroring/a/web', { changed: true, relist: true }],
      ['endpointslicemirroring/a/gone', { changed: true, relist: true }],
    ]);
    sent.length = 0;
    h(SLICES).relisted([]);
    expect(to('endpointslicemirroring/a/ext')).toEqual([{ slices: [{ name: 'ext-1', resourceVersion: '2', deleted: true }] }]);
    expect(sent).toHaveLength(1);
  });
});

describe('mirroring routes: watch events', () => {
  test('Services: only the presence of a selector matters', () => {
    const { sent, h, to } = listed();
    h(SVC).event('MODIFIED', svc('ext', undefined, '2'));
    h(SVC).event('MODIFIED', svc('web', { app: 'other' }, '2'));
    expect(sent).toHaveLength(0);
    h(SVC).event('MODIFIED', svc('ext', { app: 'x' }, '3'));
    h(SVC).event('MODIFIED', svc('web', undefined, '3'));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([
      ['endpointslicemirroring/a/ext', { changed: true }],
      ['endpointslicemirroring/a/web', { changed: true }],
    ]);
    sent.length = 0;
    h(SVC).event('DELETED', svc('ext', { app: 'x' }, '4'));
    expect(sent).toHaveLength(0);
    h(SVC).event('DELETED', svc('web', undefined, '4'));
    expect(to('endpointslicemirroring/a/web')).toEqual([{ changed: true }]);
    sent.length = 0;
    h(SVC).event('ADDED', svc('new'));
    expect(sent).toHaveLength(0); // no Endpoints to mirror
  });

  test('Endpoints: whatever is or was to be mirrored, unless a Service selects pods', () => {
    const { sent, h, ids } = listed();
    h(EP).event('MODIFIED', ep('web', { rv: '2' }));
    h(EP).event('ADDED', ep('skip', { skip: true }));
    expect(sent).toHaveLength(0);
    h(EP).event('MODIFIED', ep('ext', { rv: '2' }));
    h(EP).event('ADDED', ep('nosvc'));
    expect(ids()).toEqual(['endpointslicemirroring/a/ext', 'endpointslicemirroring/a/nosvc']);
    sent.length = 0;
    h(EP).event('MODIFIED', ep('ext', { rv: '3', leader: true }));
    h(EP).event('MODIFIED', ep('ext', { rv: '4', leader: true }));
    expect(sent.map((s) => s.event)).toEqual([{ changed: true }]);
    sent.length = 0;
    h(EP).event('DELETED', ep('nosvc', { rv: '5' }));
    expect(sent.map((s) => s.event)).toEqual([{ changed: true }]);
  });

  test('slices: our writes come back as echoes; a move or a change of hands is a change; a deletion only for a mirrored pair', () => {
    const { sent, h, to } = listed();
    h(SLICES).event('MODIFIED', slice('ext-1', 'ext', { rv: '7' }));
    h(SLICES).event('ADDED', slice('ext-2', 'ext', { rv: '8' }));
    h(SLICES).event('ADDED', slice('foreign', 'ext', { managedBy: 'someone' }));
    expect(to('endpointslicemirroring/a/ext')).toEqual([{ slices: [{ name: 'ext-1', resourceVersion: '7' }] }, { slices: [{ name: 'ext-2', resourceVersion: '8' }] }]);
    expect(sent).toHaveLength(2);
    sent.length = 0;
    h(SLICES).event('MODIFIED', slice('ext-2', 'web', { rv: '9' }));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([
      ['endpointslicemirroring/a/web', { changed: true }],
      ['endpointslicemirroring/a/ext', { changed: true }],
    ]);
    sent.length = 0;
    h(SLICES).event('MODIFIED', slice('ext-1', 'ext', { rv: '10', managedBy: 'someone' }));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([['endpointslicemirroring/a/ext', { changed: true }]]);
    sent.length = 0;
    // the echo of a deletion carries the version the watch reported it at
    h(SLICES).event('ADDED', slice('ext-3', 'ext', { rv: '11' }));
    h(SLICES).event('DELETED', slice('ext-3', 'ext', { rv: '12' }));
    expect(to('endpointslicemirroring/a/ext')).toEqual([{ slices: [{ name: 'ext-3', resourceVersion: '11' }] }, { slices: [{ name: 'ext-3', resourceVersion: '12', deleted: true }] }]);
    sent.length = 0;
    h(SLICES).event('DELETED', slice('ext-2', 'web', { rv: '13' }));
    expect(sent).toHaveLength(0);
  });

  test('what the workflow is started with: its ID, the Endpoints\' UID (else the Service\'s) and --mirroring-max-endpoints-per-subset', () => {
    const { sent, h } = harness({ 'mirroring-max-endpoints-per-subset': 50 });
    h(SVC).relisted([svc('ext')]);
    h(EP).relisted([ep('ext')]);
    h(SLICES).relisted([]);
    h(EP).event('DELETED', ep('ext', { rv: '2' }));
    expect(sent.map((s) => ({ id: s.target.workflowId, kind: s.target.kind, uid: s.target.uid, controller: s.target.controller, args: s.target.args, urgent: s.urgent }))).toEqual([
      { id: 'endpointslicemirroring/a/ext', kind: 'Endpoints', uid: 'e-ext', controller: 'endpointslicemirroring', args: { namespace: 'a', name: 'ext', tuning: undefined, maxEndpointsPerSubset: 50 }, urgent: false },
      { id: 'endpointslicemirroring/a/ext', kind: 'Endpoints', uid: 'u-ext', controller: 'endpointslicemirroring', args: { namespace: 'a', name: 'ext', tuning: undefined, maxEndpointsPerSubset: 50 }, urgent: false },
    ]);
  });

  test('not enabled: no routes; enabled: Endpoints and slices are kept as metadata only', () => {
    expect(routeHarness(mirroringRoutes, { controllers: ['endpoint'] }).family).toBeUndefined();
    const { cache } = listed();
    expect(Object.keys([...cache.store(EP)!.list()][0])).toEqual(['metadata']);
    expect(Object.keys([...cache.store(SLICES)!.list()][0])).toEqual(['metadata']);
    expect([...cache.store(SVC)!.list()][0].spec).toEqual({});
    expect(([...cache.store(SVC)!.list()].find((o) => o.metadata?.name === 'web')!.spec)).toEqual({ selector: { app: 'web' } });
  });
});

test('merging: changes and relists stick; the latest echo of each slice wins', () => {
  expect(mergeMirroringEvents({ slices: [{ name: 'a', resourceVersion: '1' }] }, { changed: true, slices: [{ name: 'a', resourceVersion: '2' }, { name: 'b', resourceVersion: '3' }] }))
    .toEqual({ changed: true, slices: [{ name: 'a', resourceVersion: '2' }, { name: 'b', resourceVersion: '3' }] });
  expect(mergeMirroringEvents({ changed: true, relist: true }, {})).toEqual({ changed: true, relist: true });
});
