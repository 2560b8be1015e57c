import { hashRevisionData, revisionTemplate, statefulSetRevisionData } from '../../workflows/common/controller-history';
import { actionCount, availabilityRequeueMs, planSync, planUpdateRevision, revisionsToTruncate, statusToWrite } from '../../workflows/statefulset/control';
import type { StatefulClaimView, StatefulPodView, StatefulRevisionView, StatefulSetView } from '../../workflows/statefulset/types';
import {
  claimManifests,
  claimOwnerRefsFor,
  identityMatches,
  isClaimOwnerUpToDate,
  parentAndOrdinal,
  setControllerRef,
  statefulPodManifest,
  storageMatches,
} from '../../workflows/statefulset/utils';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i:1' }], volumes: [{ name: 'cfg', emptyDir: {} }] } };

const sts = (o: Partial<StatefulSetView> = {}): StatefulSetView => ({
  namespace: 'ns', name: 'web', uid: 'su', resourceVersion: '1', generation: 1, deleting: false,
  selector: { matchLabels: { app: 'web' } }, replicas: 3, template, serviceName: 'svc', podManagementPolicy: 'OrderedReady',
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, revisionHistoryLimit: 10, minReadySeconds: 0, ordinalsStart: 0,
  volumeClaimTemplates: [{ metadata: { name: 'www', labels: { tier: 'data' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  retention: { whenDeleted: 'Retain', whenScaled: 'Retain' },
  status: { replicas: 0 },
  ...o,
});

const rev = (name: string, revision: number, tmpl: Record<string, unknown> = template): StatefulRevisionView => ({
  name, uid: `r-${name}`, labels: {}, revision, data: statefulSetRevisionData(tmpl),
});

const pod = (ord: number, o: Partial<StatefulPodView> & { revision?: string } = {}): StatefulPodView => ({
  name: `web-${ord}`, namespace: 'ns', uid: `p${ord}`, labels: { app: 'web', 'statefulset.kubernetes.io/pod-name': `web-${ord}`, 'controller-revision-hash': o.revision ?? 'web-a' },
  phase: 'Running', ready: true, readySince: '2026-01-01T00:00:00Z', deleting: false, volumes: { www: `www-web-${ord}`, cfg: '' },
  ...o,
});

const A = rev('web-a', 1);
const B = rev('web-b', 2, { ...template, spec: { ...template.spec, containers: [{ name: 'c', image: 'i:2' }] } });
const now = Date.parse('2026-01-01T01:00:00Z');
const noClaims = new Map<string, StatefulClaimView>();

describe('names and identity', () => {
  test('a pod name is parent and ordinal; anything else has ordinal -1', () => {
    expect(parentAndOrdinal('web-12')).toEqual({ parent: 'web', ordinal: 12 });
    expect(parentAndOrdinal('my-db-0')).toEqual({ parent: 'my-db', ordinal: 0 });
    expect(parentAndOrdinal('web-x')).toEqual({ parent: '', ordinal: -1 });
    expect(parentAndOrdinal('web-99999999999').ordinal).toBe(-1);
  });

  test('a new pod has its identity, hostname, subdomain, claim volumes and revision', () => {
    const m = statefulPodManifest(sts(), template, 'web-a', 2);
    expect(m.metadata).toMatchObject({
      name: 'web-2', generateName: 'web-', namespace: 'ns',
      labels: { app: 'web', 'statefulset.kubernetes.io/pod-name': 'web-2', 'apps.kubernetes.io/pod-index': '2', 'controller-revision-hash': 'web-a' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'su', controller: true, blockOwnerDeletion: true }],
    });
    expect(m.spec).toMatchObject({ hostname: 'web-2', subdomain: 'svc' });
    expect(m.spec.volumes).toEqual([{ name: 'www', persistentVolumeClaim: { claimName: 'www-web-2' } }, { name: 'cfg', emptyDir: {} }]);
    expect(identityMatches(sts(), pod(2))).toBe(true);
    expect(storageMatches(sts(), pod(2))).toBe(true);
    expect(storageMatches(sts(), pod(2, { volumes: {} }))).toBe(false);
  });

  test('claims are named <template>-<set>-<ordinal>, with the selector\'s labels', () => {
    const [c] = claimManifests(sts(), 1);
    expect(c.metadata).toEqual({ name: 'www-web-1', namespace: 'ns', labels: { tier: 'data', app: 'web' } });
    expect(c.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
  });
});

describe('revisions', () => {
  test('the first revision is made, named by the hash of its data with the collision count', () => {
    const step = planUpdateRevision(sts(), []);
    expect(step).toMatchObject({ kind: 'create', revision: 1, collisionCount: 0 });
    if (step.kind !== 'create') throw new Error();
    expect(step.name).toBe(`web-${hashRevisionData(step.data, 0)}`);
    expect(step.data.startsWith('{"spec":{"template":{"$patch":"replace",')).toBe(true);
    expect(revisionTemplate(step.data)).toEqual(template);
  });

  test('the newest revision is used; an older one with the template is renumbered', () => {
    expect(planUpdateRevision(sts(), [A])).toEqual({ kind: 'use', update: A });
    expect(planUpdateRevision(sts(), [A, B])).toEqual({ kind: 'renumber', name: 'web-a', revision: 3 });
  });

  test('a revision made before 1.34, with a null creationTimestamp in the template, is still the set\'s', () => {
    const old = { ...A, data: statefulSetRevisionData({ ...template, metadata: { ...template.metadata, creationTimestamp: null } }) };
    expect(planUpdateRevision(sts(), [old])).toEqual({ kind: 'use', update: old });
  });

  test('history beyond the limit goes, oldest first, never a live revision', () => {
    const revs = [rev('r1', 1), rev('r2', 2), rev('r3', 3), rev('r4', 4)];
    expect(revisionsToTruncate(sts({ revisionHistoryLimit: 1 }), revs, [pod(0, { revision: 'r2' })], 'r4', 'r4')).toEqual(['r1']);
    expect(revisionsToTruncate(sts({ revisionHistoryLimit: 0 }), revs, [], 'r4', 'r4')).toEqual(['r1', 'r2', 'r3']);
  });
});

describe('OrderedReady', () => {
  test('creates ordinal 0 first, with its claims, and waits for it', () => {
    const p = planSync(sts(), [], noClaims, A, A, 0, now);
    expect(p.replicaActions).toHaveLength(1);
    expect(p.replicaActions[0]).toMatchObject({ type: 'create', ordinal: 0, claims: [{ metadata: { name: 'www-web-0' } }] });
    expect(p.status).toMatchObject({ replicas: 0, currentRevision: 'web-a', updateRevision: 'web-a', collisionCount: 0, observedGeneration: 1 });
  });

  test('never creates an ordinal before its predecessor is Running and Ready', () => {
    const p = planSync(sts(), [pod(0, { ready: false })], noClaims, A, A, 0, now);
    expect(actionCount(p)).toBe(0);
    expect(p.waitingFor).toBe('web-0 to be Running and Ready');
    const q = planSync(sts(), [pod(0)], noClaims, A, A, 0, now);
    expect(q.replicaActions.map((a) => a.type === 'create' && a.ordinal)).toEqual([1]);
  });

  test('minReadySeconds: waits for availability, and requeues when it comes', () => {
    const set = sts({ minReadySeconds: 10 });
    const p0 = pod(0, { readySince: new Date(now - 4000).toISOString() });
    const p = planSync(set, [p0], noClaims, A, A, 0, now);
    expect(p.waitingFor).toBe('web-0 to be available');
    expect(p.status).toMatchObject({ readyReplicas: 1, availableReplicas: 0 });
    expect(availabilityRequeueMs(set, [p0], p.status, now)).toBe(6000);
  });

  test('a failed pod is deleted (to be made again), and nothing after it', () => {
    const p = planSync(sts(), [pod(0, { phase: 'Failed' }), pod(1)], noClaims, A, A, 0, now);
    expect(p.replicaActions).toEqual([expect.objectContaining({ type: 'delete', pod: { name: 'web-0', uid: 'p0' } })]);
  });

  test('scales down from the highest ordinal, one at a time', () => {
    const set = sts({ replicas: 1 });
    const p = planSync(set, [pod(0), pod(1), pod(2)], noClaims, A, A, 0, now);
    expect(p.condemnedActions).toEqual([expect.objectContaining({ type: 'delete', pod: { name: 'web-2', uid: 'p2' } })]);
    const q = planSync(set, [pod(0), pod(1), pod(2, { deleting: true })], noClaims, A, A, 0, now);
    expect(actionCount(q)).toBe(0);
  });

  test('spec.ordinals.start shifts the range', () => {
    const p = planSync(sts({ ordinalsStart: 5, replicas: 2 }), [pod(5)], noClaims, A, A, 0, now);
    expect(p.replicaActions).toEqual([expect.objectContaining({ type: 'create', ordinal: 6 })]);
    const q = planSync(sts({ ordinalsStart: 5, replicas: 2 }), [pod(0), pod(5), pod(6)], noClaims, A, A, 0, now);
    expect(q.condemnedActions).toEqual([expect.objectContaining({ type: 'delete', pod: { name: 'web-0', uid: 'p0' } })]);
  });
});

describe('Parallel', () => {
  test('creates every missing ordinal and deletes every condemned pod in one sync', () => {
    const p = planSync(sts({ podManagementPolicy: 'Parallel', replicas: 3 }), [pod(0, { ready: false })], noClaims, A, A, 0, now);
    expect(p.burst).toBe(true);
    expect(p.replicaActions.map((a) => a.type === 'create' && a.ordinal)).toEqual([1, 2]);
    const q = planSync(sts({ podManagementPolicy: 'Parallel', replicas: 1 }), [pod(0), pod(1), pod(2, { ready: false })], noClaims, A, A, 0, now);
    expect(q.condemnedActions.map((a) => a.pod)).toEqual([{ name: 'web-2', uid: 'p2' }, { name: 'web-1', uid: 'p1' }]);
  });
});

describe('rolling update', () => {
  const set = sts({ status: { replicas: 3, currentReplicas: 3, currentRevision: 'web-a' } });
  test('deletes the highest ordinal not at the update revision, above the partition', () => {
    const p = planSync(set, [pod(0), pod(1), pod(2)], noClaims, A, B, 0, now);
    expect(p.updateActions).toEqual([expect.objectContaining({ type: 'delete', pod: { name: 'web-2', uid: 'p2' } })]);
    expect(p.status).toMatchObject({ currentReplicas: 2, updatedReplicas: 0 });
    const q = planSync({ ...set, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } }, [pod(0), pod(1), pod(2, { revision: 'web-b' })], noClaims, A, B, 0, now);
    expect(q.updateActions).toEqual([]);
  });

  test('an ordinal below the partition is made again at the current revision', () => {
    const part = { ...set, updateStrategy: { type: 'RollingUpdate' as const, rollingUpdate: { partition: 2 } } };
    const p = planSync(part, [pod(1), pod(2, { revision: 'web-b' })], noClaims, A, B, 0, now);
    expect(p.replicaActions[0]).toMatchObject({ type: 'create', ordinal: 0, pod: { metadata: { labels: { 'controller-revision-hash': 'web-a' } }, spec: { containers: [{ image: 'i:1' }] } } });
  });

  test('OnDelete leaves old pods alone', () => {
    const p = planSync({ ...set, updateStrategy: { type: 'OnDelete' } }, [pod(0), pod(1), pod(2)], noClaims, A, B, 0, now);
    expect(actionCount(p)).toBe(0);
  });

  test('once every pod is updated and ready, the current revision becomes the update revision', () => {
    const p = planSync(set, [pod(0, { revision: 'web-b' }), pod(1, { revision: 'web-b' }), pod(2, { revision: 'web-b' })], noClaims, A, B, 0, now);
    expect(statusToWrite(set, p.status)).toMatchObject({ currentRevision: 'web-b', updateRevision: 'web-b', currentReplicas: 3, updatedReplicas: 3 });
  });

  test('an unchanged status is not written', () => {
    const s = sts({ status: { replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: 'web-a', updateRevision: 'web-a', observedGeneration: 1, collisionCount: 0 } });
    const p = planSync(s, [pod(0), pod(1), pod(2)], noClaims, A, A, 0, now);
    expect(statusToWrite(s, p.status)).toBeUndefined();
  });
});

describe('PVC retention', () => {
  const claim = (name: string, refs: StatefulClaimView['ownerReferences'] = []): StatefulClaimView => ({ name, uid: `c-${name}`, ownerReferences: refs, deleting: false });
  const setRef = setControllerRef(sts());
  const podRef = (ord: number, uid = `p${ord}`) => ({ apiVersion: 'v1', kind: 'Pod', name: `web-${ord}`, uid, controller: true, blockOwnerDeletion: true });

  test('Retain/Retain: no owners', () => {
    expect(isClaimOwnerUpToDate([], sts(), { name: 'web-0', uid: 'p0' })).toBe(true);
    expect(claimOwnerRefsFor([setRef], sts(), { name: 'web-0', uid: 'p0' })).toEqual([]);
  });

  test('whenDeleted Delete: the set owns every claim', () => {
    const s = sts({ retention: { whenDeleted: 'Delete', whenScaled: 'Retain' } });
    expect(isClaimOwnerUpToDate([], s, { name: 'web-0', uid: 'p0' })).toBe(false);
    expect(claimOwnerRefsFor([], s, { name: 'web-0', uid: 'p0' })).toEqual([setRef]);
  });

  test('whenScaled Delete: a scaled-down pod owns its claims, and its ordinal waits for a stale claim to go', () => {
    const s = sts({ replicas: 1, retention: { whenDeleted: 'Retain', whenScaled: 'Delete' } });
    expect(claimOwnerRefsFor([], s, { name: 'web-2', uid: 'p2' })).toEqual([podRef(2)]);
    expect(isClaimOwnerUpToDate([], s, { name: 'web-0', uid: 'p0' })).toBe(true);
    const p = planSync(s, [pod(0), pod(1)], new Map([['www-web-1', claim('www-web-1')]]), A, A, 0, now);
    expect(p.condemnedClaimActions).toEqual([expect.objectContaining({ type: 'fixClaims', pod: { name: 'web-1', uid: 'p1' } })]);
    // scaled up again before the collector removed web-1's claim: web-1 waits
    const up = sts({ replicas: 2, retention: { whenDeleted: 'Retain', whenScaled: 'Delete' } });
    const q = planSync(up, [pod(0)], new Map([['www-web-1', claim('www-web-1', [podRef(1, 'old')])]]), A, A, 0, now);
    expect(actionCount(q)).toBe(0);
    expect(q.waitingFor).toBe('the claims of an earlier web-1 to be deleted');
  });
});
