import { diffContent, normalizeContent, normalizeString } from '../../workflows/shadow/compare';
import { HOUR_MS, MINUTE_MS, buildReport, emptyLedger, ingest, nextSettlement, settle, type LedgerState } from '../../workflows/shadow/ledger-logic';
import type { ShadowEntry } from '../../workflows/shadow/types';

const T0 = Date.parse('2026-11-28T12:00:00Z');
const SETTINGS = { windowMs: 10_000, horizonMs: 60_000 };

let batch = 0;
const feed = (s: LedgerState, ...entries: ShadowEntry[]) => ingest(s, `b${batch++}`, entries);

function status(side: 'ours' | 'theirs', at: number, st: Record<string, unknown>, more: Partial<ShadowEntry> = {}): ShadowEntry {
  return {
    side, at, kind: 'write', resource: 'replicasets', subresource: 'status', namespace: 'ns', target: 'web-1', name: 'web-1',
    content: { status: st }, ...(side === 'ours' ? { controller: 'replicaset', reason: 'pods changed', workflowId: 'replicaset/ns/web-1' } : {}), ...more,
  };
}

const countsOf = (s: LedgerState, now: number) => Object.fromEntries(buildReport(s, undefined, now).rows.map((r) => [r.controller, r.counts]));

describe('shadow ledger: matching ours with theirs', () => {
  test('the same write within the window agrees, at once; further apart it is late', () => {
    const s = emptyLedger(SETTINGS, T0);
    expect(feed(s, status('ours', T0, { replicas: 3 }))).toEqual([]);
    expect(feed(s, status('theirs', T0 + 400, { replicas: 3 }))).toEqual([{ controller: 'replicaset', outcome: 'agree' }]);
    feed(s, status('theirs', T0 + 1000, { replicas: 4 }));
    expect(feed(s, status('ours', T0 + 21_000, { replicas: 4 }))).toEqual([{ controller: 'replicaset', outcome: 'late' }]);
    expect(s.pending).toEqual([]);
    const late = buildReport(s, undefined, T0 + 30_000).findings;
    expect(late).toHaveLength(1);
    expect(late[0].example).toMatchObject({ outcome: 'late', ours: { at: T0 + 21_000, reason: 'pods changed' }, theirs: { at: T0 + 1000 } });
  });

  test('a write one side makes on the way to the other\'s waits for the horizon, then is only theirs', () => {
    const s = emptyLedger(SETTINGS, T0);
    feed(s, status('theirs', T0, { replicas: 1 }), status('theirs', T0 + 100, { replicas: 2 }), status('theirs', T0 + 200, { replicas: 3 }));
    expect(feed(s, status('ours', T0 + 300, { replicas: 3 }))).toEqual([{ controller: 'replicaset', outcome: 'agree' }]);
    expect(settle(s, T0 + 59_000)).toEqual([]);
    expect(nextSettlement(s)).toBe(T0 + 60_000);
    // the controller of theirs is learned from ours' writes of the same shape
    expect(settle(s, T0 + 60_200)).toEqual([{ controller: 'replicaset', outcome: 'only-theirs' }, { controller: 'replicaset', outcome: 'only-theirs' }]);
  });

  test('a write of theirs that ours, reconciling since, left as it was is accepted; unseen, it is only theirs', () => {
    const s = emptyLedger(SETTINGS, T0);
    const pod = (side: 'ours' | 'theirs', name: string, at: number): ShadowEntry => ({
      side, at, kind: 'create', resource: 'pods', namespace: 'ns', target: 'owner:rs-uid', name, ownerKind: 'ReplicaSet', ownerName: 'web-1', content: {},
      ...(side === 'ours' ? { controller: 'replicaset' } : {}),
    });
    // the shapes are learned from writes of ours
    feed(s, status('ours', T0 - 5000, { replicas: 1 }), status('theirs', T0 - 5000, { replicas: 1 }), pod('ours', 'web-1-x', T0 - 5000), pod('theirs', 'web-1-y', T0 - 5000));
    feed(s, status('theirs', T0, { replicas: 2 }), pod('theirs', 'web-1-a', T0), pod('theirs', 'web-1-b', T0 + 5000));
    // ours' replicaset workflow of web-1 reconciled after the first two, not after the third
    ingest(s, `b${batch++}`, [], [{ workflowId: 'shadow:replicaset/ns/web-1', controller: 'replicaset', kind: 'ReplicaSet', startedAt: T0 + 300 }]);
    expect(settle(s, T0 + 70_000)).toEqual([
      { controller: 'replicaset', outcome: 'accepted' },
      { controller: 'replicaset', outcome: 'accepted' },
      { controller: 'replicaset', outcome: 'only-theirs' },
    ]);
  });

  test('an orphaning of theirs is accepted by ours\' collector workflow of the owner, named by its UID, reconciling after it', () => {
    const s = emptyLedger(SETTINGS, T0);
    const orphaned = (side: 'ours' | 'theirs', at: number, more: Partial<ShadowEntry> = {}): ShadowEntry => ({
      side, at, kind: 'write', resource: 'pods', namespace: 'ns', target: 'p', name: 'p', uid: 'p-uid', objectKind: 'Pod', content: { metadata: {} }, ...more,
    });
    // the shape is the collector's, learned from an orphaning of ours
    feed(s, orphaned('ours', T0 - 30_000, { controller: 'garbagecollector' }), orphaned('theirs', T0 - 30_000));
    feed(s, orphaned('theirs', T0, { formerOwnerUids: ['job-uid'] }), orphaned('theirs', T0 + 100, { name: 'q', target: 'q', uid: 'q-uid', formerOwnerUids: ['other-uid'] }));
    ingest(s, `b${batch++}`, [], [{ workflowId: 'shadow:1234abcd:garbagecollector/ns/job-uid', controller: 'garbagecollector', kind: 'Job', startedAt: T0 + 500 }]);
    expect(settle(s, T0 + 61_000)).toEqual([{ controller: 'garbagecollector', outcome: 'accepted' }, { controller: 'garbagecollector', outcome: 'only-theirs' }]);
  });

  test('an owner reference taken off is the collector\'s when its workflow of that owner looked since, though it proposed no orphaning yet', () => {
    const s = emptyLedger(SETTINGS, T0);
    const released = (side: 'ours' | 'theirs', at: number, more: Partial<ShadowEntry> = {}): ShadowEntry => ({
      side, at, kind: 'write', resource: 'pods', namespace: 'ns', target: 'p', name: 'p', uid: 'p-uid', objectKind: 'Pod', content: { metadata: {} }, ...more,
    });
    // only the replicaset controller has written the shape (a release); the collector is known by its reconciles
    feed(s, released('ours', T0 - 30_000, { controller: 'replicaset', name: 'q', target: 'q' }));
    ingest(s, `b${batch++}`, [], [{ workflowId: 'garbagecollector/ns/x-uid', controller: 'garbagecollector', kind: 'Job', startedAt: T0 - 30_000 }]);
    feed(s, released('theirs', T0, { formerOwnerUids: ['job-uid'] }));
    ingest(s, `b${batch++}`, [], [{ workflowId: 'garbagecollector/ns/job-uid', controller: 'garbagecollector', kind: 'Job', startedAt: T0 + 500 }]);
    expect(settle(s, T0 + 61_000).filter((x) => x.outcome !== 'only-ours')).toEqual([{ controller: 'garbagecollector', outcome: 'accepted' }]);
  });

  test('a shape two controllers of ours write is settled for the one that looked at it since', () => {
    const s = emptyLedger(SETTINGS, T0);
    const released = (side: 'ours' | 'theirs', at: number, more: Partial<ShadowEntry> = {}): ShadowEntry => ({
      side, at, kind: 'write', resource: 'pods', namespace: 'ns', target: 'p', name: 'p', uid: 'p-uid', objectKind: 'Pod', content: { metadata: {} }, ...more,
    });
    // the collector orphans, then the replicaset controller releases, pods: the same shape
    feed(s, released('ours', T0 - 40_000, { controller: 'garbagecollector', name: 'a', target: 'a' }), released('ours', T0 - 30_000, { controller: 'replicaset', name: 'q', target: 'q' }));
    // upstream's collector orphans a Job's pod; ours' collector workflow of the Job looked after it
    feed(s, released('theirs', T0, { formerOwnerUids: ['job-uid'] }));
    ingest(s, `b${batch++}`, [], [{ workflowId: 'garbagecollector/ns/job-uid', controller: 'garbagecollector', kind: 'Job', startedAt: T0 + 500 }]);
    const settled = settle(s, T0 + 61_000);
    expect(settled.filter((x) => x.outcome === 'accepted')).toEqual([{ controller: 'garbagecollector', outcome: 'accepted' }]);
  });

  test('a write that took a finalizer off is that finalizer\'s controller\'s, whatever its shape says', () => {
    const s = emptyLedger(SETTINGS, T0);
    const deployment = (side: 'ours' | 'theirs', at: number, more: Partial<ShadowEntry>): ShadowEntry => ({
      side, at, kind: 'write', resource: 'deployments', namespace: 'ns', target: 'web', name: 'web', uid: 'd-uid', objectKind: 'Deployment', content: { metadata: {} }, ...more,
    });
    // the deployment controller writes Deployments (its revision annotation): the shape is its
    feed(s, deployment('ours', T0 - 30_000, { controller: 'deployment', content: { metadata: { annotations: { a: '1' } } } }), deployment('theirs', T0 - 30_000, { content: { metadata: { annotations: { a: '1' } } } }));
    // upstream's collector takes foregroundDeletion off; ours' collector workflow of the Deployment looked after it
    feed(s, deployment('theirs', T0, { decidedBy: 'garbagecollector' }));
    ingest(s, `b${batch++}`, [], [{ workflowId: 'garbagecollector/ns/d-uid', controller: 'garbagecollector', kind: 'Deployment', startedAt: T0 + 300 }]);
    expect(settle(s, T0 + 61_000)).toEqual([{ controller: 'garbagecollector', outcome: 'accepted' }]);
  });

  test('a controller that has proposed nothing is known by its reconciles: their workflows and the kind they decide', () => {
    const s = emptyLedger(SETTINGS, T0);
    const cronStatus: ShadowEntry = { side: 'theirs', at: T0, kind: 'write', resource: 'cronjobs', subresource: 'status', namespace: 'ns', target: 'tick', name: 'tick', objectKind: 'CronJob', content: {} };
    const endpoints: ShadowEntry = { side: 'theirs', at: T0, kind: 'write', resource: 'endpoints', namespace: 'ns', target: 'web', name: 'web', objectKind: 'Endpoints', content: {} };
    const ours: ShadowEntry = { side: 'ours', at: T0 - 30_000, kind: 'write', resource: 'endpoints', namespace: 'ns', target: 'old', name: 'old', controller: 'endpoint', workflowId: 'shadow:0badcafe:endpoints/ns/old', content: {} };
    feed(s, ours, cronStatus, endpoints);
    // the endpoint controller's workflows are called endpoints/...
    ingest(s, `b${batch++}`, [], [
      { workflowId: 'shadow:0badcafe:cronjob/ns/tick', controller: 'cronjob', kind: 'CronJob', startedAt: T0 + 100 },
      { workflowId: 'shadow:0badcafe:endpoints/ns/web', controller: 'endpoint', kind: 'Service', startedAt: T0 + 100 },
    ]);
    expect(settle(s, T0 + 60_000)).toEqual([
      { controller: 'endpoint', outcome: 'only-ours' },
      { controller: 'cronjob', outcome: 'accepted' },
      { controller: 'endpoint', outcome: 'accepted' },
    ]);
  });

  test('a planted difference settles as differ, naming the field', () => {
    const s = emptyLedger(SETTINGS, T0);
    // ours built without status.terminatingReplicas (its feature gate off)
    feed(s, status('ours', T0, { replicas: 3, readyReplicas: 3 }), status('theirs', T0 + 200, { replicas: 3, readyReplicas: 3, terminatingReplicas: 0 }));
    expect(settle(s, T0 + 60_000)).toEqual([{ controller: 'replicaset', outcome: 'differ' }]);
    const [f] = buildReport(s, undefined, T0 + 60_000).findings;
    expect(f).toEqual({ count: 1, example: expect.objectContaining({ outcome: 'differ', controller: 'replicaset', differences: [{ path: 'status.terminatingReplicas', theirs: 0 }] }) });
  });

  test('two controllers writing one object at once are not set side by side as a difference', () => {
    const s = emptyLedger(SETTINGS, T0);
    const pod = (side: 'ours' | 'theirs', at: number, metadata: Record<string, unknown>, controller?: string): ShadowEntry => ({
      side, at, kind: 'write', resource: 'pods', namespace: 'ns', target: 'ns/p', name: 'p', objectKind: 'Pod', content: { metadata }, ...(controller ? { controller } : {}),
    });
    // the collector's orphaning write has been seen from ours (so its shape is the collector's)
    feed(s, pod('ours', T0 - 30_000, { ownerReferences: null }, 'garbagecollector'), pod('theirs', T0 - 30_000, { ownerReferences: null }));
    // now the job controller of ours releases the pod's finalizer as upstream's collector orphans it
    feed(s, { ...pod('ours', T0, { finalizers: [], ownerReferences: [{ kind: 'Job', name: 'j' }] }, 'job'), ownerKind: 'Job', ownerName: 'j' }, pod('theirs', T0 + 100, { ownerReferences: null, finalizers: ['f'] }));
    expect(settle(s, T0 + 61_000)).toEqual([{ controller: 'job', outcome: 'only-ours' }, { controller: 'garbagecollector', outcome: 'only-theirs' }]);
  });

  test('a Warning Event of ours that only followed a stale dry run is counted apart, not compared', () => {
    const s = emptyLedger(SETTINGS, T0);
    const warning: ShadowEntry = {
      side: 'ours', at: T0, kind: 'event', resource: 'events', namespace: 'ns', target: 'Endpoints/web:FailedToUpdateEndpoint', controller: 'endpoint',
      content: { type: 'Warning', reason: 'FailedToUpdateEndpoint' }, afterRefusal: true,
    };
    expect(feed(s, warning)).toEqual([]);
    expect(s.pending).toEqual([]);
    expect(settle(s, T0 + 61_000)).toEqual([]);
    const r = buildReport(s, undefined, T0 + 61_000);
    expect({ rows: r.rows, afterRefusal: r.afterRefusal }).toEqual({ rows: [], afterRefusal: 1 });
  });

  test('a proposal repeating its controller\'s previous one to the same object is the shadow repeating itself, not compared', () => {
    const s = emptyLedger(SETTINGS, T0);
    // the first is met by theirs; its repeats (re-read, decided again) are counted apart
    feed(s, status('ours', T0, { replicas: 3 }), status('theirs', T0 + 200, { replicas: 3 }));
    expect(feed(s, status('ours', T0 + 1000, { replicas: 3 }), status('ours', T0 + 2000, { replicas: 3 }))).toEqual([]);
    // a different write is a new decision, and the one before it again too
    feed(s, status('ours', T0 + 3000, { replicas: 4 }), status('ours', T0 + 4000, { replicas: 3 }));
    // past the horizon the same write is a decision again
    feed(s, status('ours', T0 + 65_000, { replicas: 3 }));
    // creates of the same content are separate decisions
    const pod = (at: number): ShadowEntry => ({ side: 'ours', at, kind: 'create', resource: 'pods', namespace: 'ns', target: 'owner:u', controller: 'replicaset', content: {} });
    feed(s, pod(T0 + 5000), pod(T0 + 5001));
    expect(s.pending.filter((e) => e.side === 'ours')).toHaveLength(5);
    expect(buildReport(s, undefined, T0 + 70_000).repeats).toBe(2);
  });

  test('alone: only ours; only theirs; a write of theirs no controller of ours makes is not compared', () => {
    const s = emptyLedger(SETTINGS, T0);
    const job = (side: 'ours' | 'theirs', name: string): ShadowEntry => ({
      side, at: T0, kind: 'create', resource: 'jobs', namespace: 'ns', target: name, name, ownerKind: 'CronJob', content: {}, ...(side === 'ours' ? { controller: 'cronjob' } : {}),
    });
    feed(s, status('ours', T0, { replicas: 3 }), job('ours', 'hourly-1'), job('theirs', 'hourly-2'));
    feed(s, { side: 'theirs', at: T0, kind: 'write', resource: 'daemonsets', subresource: 'status', namespace: 'ns', target: 'ds', content: {} });
    expect(settle(s, T0 + 60_000)).toEqual([
      { controller: 'replicaset', outcome: 'only-ours' },
      { controller: 'cronjob', outcome: 'only-ours' },
      { controller: 'cronjob', outcome: 'only-theirs' },
    ]);
    expect(buildReport(s, undefined, T0 + 60_000).unattributed).toBe(1);
  });

  test('a deletion nobody can be named for meets our delete, and alone is not counted', () => {
    const s = emptyLedger(SETTINGS, T0);
    const del = (side: 'ours' | 'theirs', name: string): ShadowEntry => ({
      side, at: T0, kind: 'delete', resource: 'pods', namespace: 'ns', target: name, name, ...(side === 'ours' ? { controller: 'replicaset' } : { unattributed: true }),
    });
    expect(feed(s, del('ours', 'p1'), del('theirs', 'p1'), del('theirs', 'p2'))).toEqual([{ controller: 'replicaset', outcome: 'agree' }]);
    expect(settle(s, T0 + 60_000)).toEqual([]);
  });

  test('a delete of a collection is one write, met by any delete in it', () => {
    const s = emptyLedger(SETTINGS, T0);
    const gone = (name: string, at: number): ShadowEntry => ({ side: 'theirs', at, kind: 'delete', resource: 'pods', namespace: 'ns', target: name, name, unattributed: true });
    feed(s, gone('a', T0));
    expect(feed(s, { side: 'ours', at: T0 + 10, kind: 'deletecollection', resource: 'pods', namespace: 'ns', target: '*', controller: 'namespace' }))
      .toEqual([{ controller: 'namespace', outcome: 'agree' }]);
    expect(feed(s, gone('b', T0 + 20), gone('c', T0 + 30))).toEqual([]);
    expect(settle(s, T0 + 120_000)).toEqual([]);
    expect(countsOf(s, T0 + 120_000).namespace).toMatchObject({ agree: 1, 'only-ours': 0 });
  });

  test('a batch delivered twice is taken once', () => {
    const s = emptyLedger(SETTINGS, T0);
    ingest(s, 'y', [status('ours', T0, { replicas: 2 })]);
    ingest(s, 'y', [status('ours', T0, { replicas: 2 })]);
    expect(s.pending).toHaveLength(1);
  });

  test('counts by minute, then by hour, then gone; --since picks the buckets', () => {
    const s = emptyLedger(SETTINGS, T0);
    feed(s, status('ours', T0, { r: 1 }), status('theirs', T0, { r: 1 }));
    feed(s, status('ours', T0 + 3 * HOUR_MS, { r: 2 }), status('theirs', T0 + 3 * HOUR_MS, { r: 2 }));
    settle(s, T0 + 3 * HOUR_MS + MINUTE_MS);
    expect(s.buckets.map((b) => b.widthMs)).toEqual([HOUR_MS, MINUTE_MS]);
    expect(buildReport(s, undefined, T0 + 3 * HOUR_MS + MINUTE_MS).rows[0].counts.agree).toBe(2);
    expect(buildReport(s, T0 + 2 * HOUR_MS, T0 + 3 * HOUR_MS + MINUTE_MS).rows[0]).toMatchObject({ compared: 1, agreement: 1 });
    settle(s, T0 + 9 * 24 * HOUR_MS);
    expect(s.buckets).toEqual([]);
  });
});

describe('shadow comparison: what counts as the same', () => {
  test('times and generated name tails are masked; template hashes are not', () => {
    expect(normalizeString('2026-11-28T12:00:01Z')).toBe('<time>');
    expect(normalizeString('Created pod: web-7d9f8b6c5-x2b4q')).toBe('Created pod: web-7d9f8b6c5-*****');
    expect(normalizeString('kube-api-access-h7x9z')).toBe('kube-api-access-*****');
    expect(normalizeString('web-7d9f8b6c5')).toBe('web-7d9f8b6c5');
    expect(normalizeContent({ a: ['2026-01-01T00:00:00.123Z'], b: undefined })).toEqual({ a: ['<time>'] });
  });

  test('arrays of conditions or containers compare by type or name, not position', () => {
    const c = (t: string, reason: string) => ({ type: t, status: 'True', reason });
    expect(diffContent({ status: { conditions: [c('Available', 'A'), c('Progressing', 'P')] } }, { status: { conditions: [c('Progressing', 'P'), c('Available', 'A')] } })).toEqual([]);
    expect(diffContent({ status: { conditions: [c('Available', 'A')] } }, { status: { conditions: [c('Available', 'B')] } }))
      .toEqual([{ path: 'status.conditions[type=Available].reason', ours: 'A', theirs: 'B' }]);
    // metadata only: the rest is not compared
    expect(diffContent({ metadata: { labels: { a: '1' } }, spec: { x: 1 } }, { metadata: { labels: { a: '1' } } }, { only: ['metadata'] })).toEqual([]);
    // a request's body spells out zero values the API server leaves out; a served object's absent field is absent
    expect(diffContent({ spec: { minReadySeconds: 0 } }, { spec: {} }, { oursFromRequest: true })).toEqual([]);
    expect(diffContent({ status: { terminatingReplicas: 0 } }, { status: {} })).toEqual([{ path: 'status.terminatingReplicas', ours: 0 }]);
    // a list of UIDs is a set; any other list keeps its order
    const [u1, u2] = ['37c6eb68-58e9-4f0b-bbc5-02de14727baa', '178ba747-c44d-433a-b384-d68eb5ef409b'];
    expect(diffContent({ status: { uncounted: [u1, u2] } }, { status: { uncounted: [u2, u1] } })).toEqual([]);
    expect(diffContent({ spec: { args: ['a', 'b'] } }, { spec: { args: ['b', 'a'] } })).toHaveLength(2);
  });
});
