import { createHash } from 'node:crypto';
import type { KubeObject } from '../../activities/kube/projections';
import { proposalEntry } from '../../activities/kube/shadow';
import { KCM_FIELD_MANAGER, ManagerWrites, writtenBy } from '../../activities/shadow/observer';
import { formatShadowReport } from '../../starter/shadow/report';
import { buildReport, emptyLedger, ingest, settle } from '../../workflows/shadow/ledger-logic';
import type { ShadowEntry } from '../../workflows/shadow/types';

type Obj = KubeObject & Record<string, unknown>;
const mf = (manager: string, subresource: string | undefined, time: string, fields: unknown = { 'f:status': {} }) =>
  ({ manager, operation: 'Update', ...(subresource ? { subresource } : {}), time, fieldsV1: fields });

function rs(managedFields: unknown[], status: Record<string, unknown> = { replicas: 1 }, more: Partial<KubeObject['metadata']> = {}): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: { name: 'web-1', namespace: 'ns', uid: 'rs-uid', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }], ...more, managedFields } as KubeObject['metadata'],
    spec: { replicas: 1 },
    status,
  };
}

const created0 = [mf(KCM_FIELD_MANAGER, undefined, '2026-11-28T12:00:00Z', { 'f:spec': {} })];

describe('whose change the watch saw', () => {
  const created = created0;

  test('a new object with an entry of the manager is its create', () => {
    expect(writtenBy(KCM_FIELD_MANAGER, undefined, rs(created))).toEqual(['']);
    expect(writtenBy(KCM_FIELD_MANAGER, undefined, rs([mf('kubectl-create', undefined, '2026-11-28T12:00:00Z')]))).toEqual([]);
  });

  test('a change that moved its status entry is its status write; another manager\'s is not', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('replicasets', (e) => seen.push(e), KCM_FIELD_MANAGER, () => 5);
    m.event('ADDED', rs(created));
    m.event('MODIFIED', rs([...created, mf(KCM_FIELD_MANAGER, 'status', '2026-11-28T12:00:01Z')], { replicas: 2 }));
    m.event('MODIFIED', rs([...created, mf(KCM_FIELD_MANAGER, 'status', '2026-11-28T12:00:01Z'), mf('kubectl-label', undefined, '2026-11-28T12:00:02Z', { 'f:metadata': {} })], { replicas: 2 }));
    // kubectl's label: its entry moved, not the manager's
    expect(seen.map((e) => [e.kind, e.subresource ?? '', e.target, e.content])).toEqual([
      ['create', '', 'web-1', { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }] }, spec: { replicas: 1 } }],
      ['write', 'status', 'web-1', { status: { replicas: 2 } }],
    ]);
    expect(seen[0]).toMatchObject({ side: 'theirs', at: 5, resource: 'replicasets', namespace: 'ns', name: 'web-1', ownerKind: 'Deployment' });
  });

  test('a rewrite in the same second by the manager with the only newest entry is its write', () => {
    const first = rs([...created, mf(KCM_FIELD_MANAGER, 'status', '2026-11-28T12:00:03Z')], { replicas: 2 });
    const seen: ShadowEntry[] = [];
    const n = new ManagerWrites('replicasets', (e) => seen.push(e));
    n.listed([first]);
    n.event('MODIFIED', rs([...created, mf(KCM_FIELD_MANAGER, 'status', '2026-11-28T12:00:03Z')], { replicas: 3 }));
    // a change that moves no entry and leaves the status (a binding sets spec.nodeName so) is nobody's
    n.event('MODIFIED', { ...rs([...created, mf(KCM_FIELD_MANAGER, 'status', '2026-11-28T12:00:03Z')], { replicas: 3 }), spec: { replicas: 1, nodeName: 'n1' } });
    expect(seen.map((e) => e.content)).toEqual([{ status: { replicas: 3 } }]);
  });

  test('an orphaning names the owner whose reference it took off, and every write its object\'s UID', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('replicasets', (e) => seen.push(e));
    m.listed([rs(created)]);
    m.event('MODIFIED', rs([mf(KCM_FIELD_MANAGER, undefined, '2026-11-28T12:00:05Z', { 'f:spec': {} })], { replicas: 1 }, { ownerReferences: [] }));
    expect(seen.map((e) => [e.kind, e.uid, e.ownerUid, e.formerOwnerUids])).toEqual([['write', 'rs-uid', undefined, ['d-uid']]]);
  });

  test('a deletion is seen once, and not attributed', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('pods', (e) => seen.push(e));
    const pod = (more: Partial<KubeObject['metadata']> = {}): Obj => ({ kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'p-uid', ...more } });
    m.listed([pod()]);
    m.event('MODIFIED', pod({ deletionTimestamp: '2026-11-28T12:00:00Z' }));
    m.event('DELETED', pod({ deletionTimestamp: '2026-11-28T12:00:00Z' }));
    m.event('DELETED', { kind: 'Pod', metadata: { name: 'q', namespace: 'ns', uid: 'q-uid' } });
    expect(seen.map((e) => [e.kind, e.target, e.unattributed])).toEqual([['delete', 'p', true], ['delete', 'q', true]]);
  });

  test('the last finalizers taken off a terminating object are their controller\'s write, though the watch sees only the deletion', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('pods', (e) => seen.push(e));
    const created = [mf(KCM_FIELD_MANAGER, undefined, '2026-11-28T12:00:00Z', { 'f:metadata': { 'f:finalizers': {} } })];
    const pod = (finalizers: string[]): Obj => ({
      kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'p-uid', deletionTimestamp: '2026-11-28T12:00:01Z', ...(finalizers.length ? { finalizers } : {}), managedFields: created } as KubeObject['metadata'],
    });
    // the deletion carries the state before the write that let the pod go: its finalizer still on
    m.listed([pod(['batch.kubernetes.io/job-tracking'])]);
    m.event('DELETED', pod(['batch.kubernetes.io/job-tracking']));
    expect(seen.map((e) => [e.kind, e.target, e.content, e.decidedBy])).toEqual([['write', 'p', { metadata: {} }, 'job']]);
    // the collector's foregroundDeletion, likewise
    m.listed([pod(['foregroundDeletion'])]);
    m.event('DELETED', pod(['foregroundDeletion']));
    expect(seen.slice(1).map((e) => [e.kind, e.decidedBy])).toEqual([['write', 'garbagecollector']]);
    // a finalizer of nobody known, or of two controllers: not attributed
    for (const f of [['example.com/x'], ['foregroundDeletion', 'batch.kubernetes.io/job-tracking']]) {
      m.listed([pod(f)]);
      m.event('DELETED', pod(f));
    }
    expect(seen).toHaveLength(2);
  });

  test('foregroundDeletion taken off a live object with no entry moving is the collector\'s; a user\'s patch is not', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('replicasets', (e) => seen.push(e));
    const before = rs(created0, { replicas: 1 }, { finalizers: ['foregroundDeletion', 'example.com/keep'] });
    m.listed([before]);
    m.event('MODIFIED', rs(created0, { replicas: 1 }, { finalizers: ['example.com/keep'] }));
    expect(seen.map((e) => [e.kind, e.decidedBy])).toEqual([['write', 'garbagecollector']]);
    m.listed([before]);
    m.event('MODIFIED', rs([...created0, mf('kubectl-patch', undefined, '2026-11-28T12:00:09Z', { 'f:metadata': {} })], { replicas: 1 }, { finalizers: ['example.com/keep'] }));
    expect(seen).toHaveLength(1);
  });

  test('an Event of the manager is an event about its object, by reason', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('events', (e) => seen.push(e));
    m.event('ADDED', {
      kind: 'Event', metadata: { name: 'web.1', namespace: 'ns', uid: 'e1', managedFields: [mf(KCM_FIELD_MANAGER, undefined, '2026-11-28T12:00:00Z')] } as KubeObject['metadata'],
      involvedObject: { kind: 'ReplicaSet', name: 'web-1', namespace: 'ns', uid: 'rs-uid' }, reason: 'SuccessfulCreate', message: 'Created pod: web-1-x2b4q', type: 'Normal',
      source: { component: 'replicaset-controller' },
    });
    expect(seen).toEqual([expect.objectContaining({
      kind: 'event', resource: 'events', target: 'ReplicaSet/web-1:SuccessfulCreate', component: 'replicaset-controller',
      content: { type: 'Normal', reason: 'SuccessfulCreate', message: 'Created pod: web-1-*****', involvedObject: { kind: 'ReplicaSet', name: 'web-1', namespace: 'ns' } },
    })]);
  });

  test('a combined Event counted up in the second its entry already shows is a write of each repeat', () => {
    const seen: ShadowEntry[] = [];
    const m = new ManagerWrites('events', (e) => seen.push(e));
    const combined = (count: number, manager = KCM_FIELD_MANAGER) => ({
      kind: 'Event', metadata: { name: 'web.2', namespace: 'ns', uid: 'e2', managedFields: [mf(manager, undefined, '2026-11-28T12:00:00Z', { 'f:count': {} })] } as KubeObject['metadata'],
      involvedObject: { kind: 'ReplicaSet', name: 'web-1', namespace: 'ns', uid: 'rs-uid' }, reason: 'SuccessfulCreate', type: 'Normal',
      message: `(combined from similar events): Created pod: web-1-x2b4${"bcd"[count - 1]}`, count, source: { component: 'replicaset-controller' },
    });
    for (const n of [1, 2, 3]) m.event(n === 1 ? 'ADDED' : 'MODIFIED', combined(n));
    // the same count again (a relist's copy) is no write
    m.event('MODIFIED', combined(3));
    expect(seen.map((e) => e.content?.message)).toEqual(Array(3).fill('(combined from similar events): Created pod: web-1-*****'));
    // another recorder's Event counted up is not the manager's
    const other = new ManagerWrites('events', (e) => seen.push(e));
    other.event('ADDED', combined(1, 'kubelet'));
    other.event('MODIFIED', combined(2, 'kubelet'));
    expect(seen).toHaveLength(3);
  });
});

describe('a proposal as the ledger sees it', () => {
  const base = { controller: 'replicaset', namespace: 'ns' };

  test('a pod created for its owner is matched by owner, an eviction is a delete', () => {
    const pod = { kind: 'Pod', metadata: { name: 'web-1-b2c4d', namespace: 'ns', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs-uid', controller: true }] }, spec: { containers: [] }, status: { phase: 'Pending' } };
    expect(proposalEntry({ ...base, verb: 'create', resource: 'pods', name: 'web-1-b2c4d', reason: 'too few pods' }, pod, 7)).toMatchObject({
      side: 'ours', at: 7, kind: 'create', target: 'owner:rs-uid', ownerKind: 'ReplicaSet', reason: 'too few pods',
      content: { metadata: { ownerReferences: [expect.objectContaining({ uid: 'rs-uid' })] }, spec: { containers: [] } },
    });
    expect(proposalEntry({ controller: 'taint-eviction-controller', verb: 'create', resource: 'pods', namespace: 'ns', name: 'p', subresource: 'eviction' }, {}, 7))
      .toMatchObject({ kind: 'delete', target: 'p' });
    expect(proposalEntry({ ...base, verb: 'deletecollection', resource: 'pods' }, undefined, 7)).toMatchObject({ kind: 'deletecollection', target: '*' });
  });

  test('a Secret\'s values are compared by digest, never carried', () => {
    const e = proposalEntry({ controller: 'serviceaccount-token', verb: 'update', resource: 'secrets', namespace: 'ns', name: 's' },
      { kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, type: 'kubernetes.io/service-account-token', data: { token: Buffer.from('secret-token').toString('base64') } }, 1);
    expect(JSON.stringify(e)).not.toContain(Buffer.from('secret-token').toString('base64'));
    expect((e.content as { data: { token: string } }).data.token).toBe(createHash('sha256').update('secret-token').digest('hex'));
  });
});

test('the report: a row per controller, each kind of difference with its fields', () => {
  const T0 = Date.parse('2026-11-28T12:00:00Z');
  const s = emptyLedger({ windowMs: 10_000, horizonMs: 60_000 }, T0);
  const st = (side: 'ours' | 'theirs', status: Record<string, unknown>): ShadowEntry => ({
    side, at: T0, kind: 'write', resource: 'replicasets', subresource: 'status', namespace: 'ns', target: 'web-1', name: 'web-1', content: { status },
    ...(side === 'ours' ? { controller: 'replicaset', reason: 'pods changed' } : {}),
  });
  ingest(s, 'a', [st('ours', { replicas: 1 }), st('theirs', { replicas: 1 }), st('ours', { replicas: 2 }), st('theirs', { replicas: 2, terminatingReplicas: 0 })]);
  settle(s, T0 + 60_000);
  expect(formatShadowReport('L', buildReport(s, undefined, T0 + 60_000))).toBe([
    'shadow ledger L',
    'from 2026-11-28T12:00:00.000Z to 2026-11-28T12:01:00.000Z; window 10s, horizon 60s; not yet settled: 0 ours, 0 theirs',
    'not compared: 0 writes of theirs by controllers this shadow does not run; 0 Warning Events of ours that only followed a dry run refused as stale; 0 proposals of ours repeating their previous one (a shadow\'s write never lands)',
    '',
    'CONTROLLER  AGREE  ACCEPTED  LATE  DIFFER  ONLY-OURS  ONLY-THEIRS  AGREEMENT',
    'replicaset      1         0     0       1          0            0      50.0%',
    '',
    'differences, newest first:',
    '  1x differ  replicaset  write replicasets/status ns/web-1  at 2026-11-28T12:00:00.000Z',
    '      status.terminatingReplicas: ours (absent), theirs 0',
    '      ours: reason "pods changed"',
  ].join('\n'));
});
