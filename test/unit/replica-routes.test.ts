import { SNAPSHOT_MAX_PODS, replicaRoutes, shrinkReplicaOwnerEvent } from '../../activities/replicaset/routes';
import { SIGNAL_BUDGET_BYTES } from '../../activities/informers/signaller';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { mergeReplicaOwnerEvents } from '../../activities/replicaset/merge';
import type { ReplicaOwnerEvent } from '../../workflows/replicaset/workflow';
import { routeHarness } from '../support/routes';

const RS = RESOURCES.replicaSets;
const PODS = RESOURCES.pods;

const harness = () => routeHarness<ReplicaOwnerEvent>(replicaRoutes, { controllers: ['replicaset'] });

const rs = (name: string, app: string, ns = 'a', rv = '5'): KubeObject =>
  ({ metadata: { namespace: ns, name, uid: `u-${name}`, resourceVersion: rv }, spec: { replicas: 2, selector: { matchLabels: { app } } } } as KubeObject);
const pod = (name: string, labels: Record<string, string>, o: { owner?: string; rv?: string; ns?: string } = {}): KubeObject =>
  ({
    metadata: {
      namespace: o.ns ?? 'a', name, uid: `p-${name}`, resourceVersion: o.rv ?? '3', labels,
      ownerReferences: o.owner ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.owner, uid: `u-${o.owner}`, controller: true }] : undefined,
    },
    status: { phase: 'Running' },
  } as unknown as KubeObject);

const names = (e: ReplicaOwnerEvent | undefined) => e?.snapshot?.pods.map((p) => p.name).sort();

describe('replica routes: owners get their pods from the synced cache', () => {
  test('owners listed before the pods wait for them, then each gets its own pods and matching orphans', () => {
    const { sent, h } = harness();
    h(RS).relisted([rs('web', 'web'), rs('db', 'db')], '10');
    expect(sent).toHaveLength(0);
    h(PODS).relisted([
      pod('w1', { app: 'web' }, { owner: 'web' }),
      pod('w2', { app: 'other' }, { owner: 'web' }), // owned but relabelled: still the owner's to release
      pod('orphan', { app: 'web' }),
      pod('elsewhere', { app: 'web' }, { ns: 'b' }),
      pod('d1', { app: 'db' }, { owner: 'db' }),
      pod('taken', { app: 'web' }, { owner: 'db' }),
    ], '42');
    const web = sent.find((s) => s.id === 'a/web')!.event;
    expect(web.relist).toBeUndefined();
    expect(web.owner?.uid).toBe('u-web');
    expect(web.snapshot).toMatchObject({ ownerUid: 'u-web', resourceVersion: '42' });
    expect(names(web)).toEqual(['orphan', 'w1', 'w2']);
    expect(names(sent.find((s) => s.id === 'a/db')!.event)).toEqual(['d1', 'taken']);
  });

  test('with the pods listed first, a relisted or new owner gets its snapshot at once; a modified one only itself', () => {
    const { sent, h } = harness();
    h(PODS).relisted([pod('w1', { app: 'web' }, { owner: 'web' })], '7');
    h(RS).relisted([rs('web', 'web')], '8');
    expect(names(sent[0].event)).toEqual(['w1']);
    h(PODS).event('ADDED', pod('n1', { app: 'new' }, { rv: '9' }));
    sent.length = 0;
    h(RS).event('ADDED', rs('new', 'new', 'a', '10'));
    expect(sent[0].event.snapshot).toMatchObject({ resourceVersion: '9' });
    expect(names(sent[0].event)).toEqual(['n1']);
    sent.length = 0;
    h(RS).event('MODIFIED', rs('new', 'new', 'a', '11'));
    expect(sent[0].event).toEqual({ owner: expect.objectContaining({ resourceVersion: '11' }) });
  });

  test('an owner with more pods than a snapshot carries reads them itself', () => {
    const { sent, h } = harness();
    h(PODS).relisted(Array.from({ length: SNAPSHOT_MAX_PODS + 1 }, (_, i) => pod(`w${i}`, { app: 'web' }, { owner: 'web' })), '7');
    h(RS).relisted([rs('web', 'web')], '8');
    expect(sent[0].event.snapshot).toBeUndefined();
    expect(sent[0].event.relist).toBe(true);
  });

  test('a later pod relist sends what changed, appeared or vanished during the gap', () => {
    const { sent, h } = harness();
    h(RS).relisted([rs('web', 'web')], '2');
    h(PODS).relisted([pod('keep', { app: 'web' }, { owner: 'web' }), pod('gone', { app: 'web' }, { owner: 'web' }), pod('same', { app: 'web' }, { owner: 'web' })], '3');
    sent.length = 0;
    h(PODS).relisted([
      pod('keep', { app: 'web', v: '2' }, { owner: 'web', rv: '20' }),
      pod('same', { app: 'web' }, { owner: 'web' }),
      pod('fresh', { app: 'web' }, { rv: '21' }),
    ], '22');
    const merged = sent.map((s) => s.event).reduce(mergeReplicaOwnerEvents);
    expect(merged.pods?.map((p) => p.name).sort()).toEqual(['fresh', 'keep']);
    expect(merged.podsDeleted).toEqual(['p-gone']);
  });
});

describe('replica routes: what needs action skips the hot-key wait', () => {
  test('a pod that leaves the active set and a new generation are urgent; status changes are not', () => {
    const { sent, h } = harness();
    h(PODS).relisted([pod('w1', { app: 'web' }, { owner: 'web' }), pod('w2', { app: 'web' }, { owner: 'web' })], '3');
    h(RS).relisted([rs('web', 'web')], '4');
    sent.length = 0;
    const w1 = pod('w1', { app: 'web' }, { owner: 'web', rv: '5' });
    (w1.status as { conditions?: unknown[] }).conditions = [{ type: 'Ready', status: 'True' }];
    h(PODS).event('MODIFIED', w1);
    h(PODS).event('DELETED', pod('w2', { app: 'web' }, { owner: 'web', rv: '6' }));
    const failed = pod('w1', { app: 'web' }, { owner: 'web', rv: '7' });
    (failed.status as { phase: string }).phase = 'Failed';
    h(PODS).event('MODIFIED', failed);
    h(RS).event('MODIFIED', { ...rs('web', 'web', 'a', '8'), status: { replicas: 1 } } as KubeObject);
    h(RS).event('MODIFIED', { ...rs('web', 'web', 'a', '9'), metadata: { ...rs('web', 'web').metadata, resourceVersion: '9', generation: 2 } } as KubeObject);
    expect(sent.map((s) => s.urgent)).toEqual([false, true, true, false, true]);
  });
});

describe('merging a snapshot with pod deltas', () => {
  const snap = (rv: string, ...uids: string[]): ReplicaOwnerEvent['snapshot'] =>
    ({ ownerUid: 'o', resourceVersion: rv, pods: uids.map((uid) => ({ uid } as never)) });
  test('a later snapshot replaces earlier deltas; deltas after a snapshot ride on top of it', () => {
    const earlier: ReplicaOwnerEvent = { pods: [{ uid: 'x' } as never], podsDeleted: ['y'] };
    expect(mergeReplicaOwnerEvents(earlier, { snapshot: snap('5', 'a') })).toEqual({ snapshot: snap('5', 'a') });
    const m = mergeReplicaOwnerEvents({ snapshot: snap('5', 'a'), relist: true }, { pods: [{ uid: 'b' } as never], podsDeleted: ['a'] });
    expect(m).toEqual({ snapshot: snap('5', 'a'), pods: [{ uid: 'b' }], podsDeleted: ['a'], relist: true });
  });
});

describe('replica routes: an event too large for a payload', () => {
  test('an owner whose snapshot outgrows the signal budget is sent, at its send, a relist without its state; deletions stay', () => {
    const { sent, h } = harness();
    // fewer pods than SNAPSHOT_MAX_PODS, each with about 4 KiB of labels: a snapshot past the budget
    const labels = (i: number) => ({ app: 'web', ...Object.fromEntries(Array.from({ length: 48 }, (_, k) => [`l${k}.example.com/k${i}`, `${'v'.repeat(60)}${k}`])) });
    h(PODS).relisted(Array.from({ length: 400 }, (_, i) => pod(`w${i}`, labels(i), { owner: 'web' })), '7');
    h(RS).relisted([rs('web', 'web')], '8');
    const { target, event } = sent[0];
    expect(event.snapshot?.pods).toHaveLength(400);
    expect(Buffer.byteLength(JSON.stringify(event))).toBeGreaterThan(SIGNAL_BUDGET_BYTES);
    expect(target.shrink).toBe(shrinkReplicaOwnerEvent);
    const cut = target.shrink!({ ...event, podsDeleted: ['p-gone'], pods: event.snapshot!.pods });
    expect(cut).toEqual({ podsDeleted: ['p-gone'], relist: true });
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThan(SIGNAL_BUDGET_BYTES);
  });
});
