import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { EPHEMERAL_POD_FIELDS, EPHEMERAL_PVC_FIELDS, claimState, ephemeralPodView } from '../../activities/ephemeral-volume/projections';
import { PV_PROTECTION_FIELDS, pvView } from '../../activities/pv-protection/projections';
import { CLAIM_POD_FIELDS, PODS_BY_CLAIM, PVC_PROTECTION_FIELDS, pvcPodView, pvcView } from '../../activities/pvc-protection/projections';
import { PVC_CLASS_FIELDS, PV_CLASS_FIELDS, VAC_FIELDS, classesOfPv, classesOfPvc, vacView } from '../../activities/vac-protection/projections';
import { podClaimRefs } from '../../workflows/common/ephemeral-claims';
import { protectionAction, protectionNeed, withFinalizer, type ProtectedObject } from '../../workflows/common/storage-protection';
import { claimFor, claimsDue, nextStep, volumeClaims, type EphemeralPodView } from '../../workflows/ephemeral-volume/logic';
import { pvWriteDue } from '../../workflows/pv-protection/logic';
import { claimsFreedBy, podUsesPvc, podUsingPvc, type PvcPodView, type PvcView } from '../../workflows/pvc-protection/logic';
import { classesLetGo, pvcClassNames, vacWriteDue } from '../../workflows/vac-protection/logic';

const obj = (o: Partial<ProtectedObject> = {}): ProtectedObject =>
  ({ namespace: 'a', name: 'x', uid: 'u', resourceVersion: '1', deleting: false, protected: true, ...o });

describe('protectionutil', () => {
  test('an object without the finalizer gets it; one being deleted with it is checked for use; anything else needs nothing', () => {
    expect(protectionNeed(obj({ protected: false }))).toBe('add');
    expect(protectionNeed(obj({ deleting: true }))).toBe('check-use');
    expect(protectionNeed(obj())).toBe('none');
    // being deleted without the finalizer: it is not ours to hold, and never re-added
    expect(protectionNeed(obj({ deleting: true, protected: false }))).toBe('none');
  });

  test('use is asked only of a deletion candidate', () => {
    const asked: string[] = [];
    const inUse = (v: boolean) => () => { asked.push('asked'); return v; };
    expect(protectionAction(obj({ protected: false }), inUse(true))).toBe('add');
    expect(protectionAction(obj(), inUse(false))).toBe('none');
    expect(asked).toEqual([]);
    expect(protectionAction(obj({ deleting: true }), inUse(true))).toBe('keep');
    expect(protectionAction(obj({ deleting: true }), inUse(false))).toBe('remove');
  });

  test('finalizers: appended at the end, every copy removed, others kept in order', () => {
    expect(withFinalizer(['a'], 'f', true)).toEqual(['a', 'f']);
    expect(withFinalizer(['f', 'a'], 'f', true)).toEqual(['f', 'a']);
    expect(withFinalizer(['f', 'a', 'f'], 'f', false)).toEqual(['a']);
    expect(withFinalizer(undefined, 'f', false)).toEqual([]);
  });
});

const pvc = (o: Partial<PvcView> = {}): PvcView => ({ ...obj({ name: 'data', deleting: true }), ...o });
const pod = (o: Partial<PvcPodView> = {}): PvcPodView => ({
  namespace: 'a', name: 'p', uid: 'pu', nodeName: 'n1', shutDown: false, terminated: false,
  claims: [{ volume: 'v', claim: 'data', ephemeral: false }], ...o,
});

describe('pvc protection: podUsesPVC', () => {
  test('a scheduled pod naming the claim uses it, whatever its phase; an unscheduled one does not', () => {
    expect(podUsesPvc(pod(), pvc())).toBe(true);
    expect(podUsesPvc(pod({ terminated: true }), pvc())).toBe(true);
    expect(podUsesPvc(pod({ shutDown: true }), pvc())).toBe(true);
    expect(podUsesPvc(pod({ nodeName: '' }), pvc())).toBe(false);
    expect(podUsesPvc(pod({ claims: [{ volume: 'v', claim: 'other', ephemeral: false }] }), pvc())).toBe(false);
    expect(podUsesPvc(pod({ namespace: 'b' }), pvc())).toBe(false);
  });

  test('an ephemeral claim counts only if the pod controls it and is not shut down', () => {
    const eph = pod({ claims: [{ volume: 'scratch', claim: 'p-scratch', ephemeral: true }] });
    expect(podUsesPvc(eph, pvc({ name: 'p-scratch', controllerUid: 'pu' }))).toBe(true);
    expect(podUsesPvc(eph, pvc({ name: 'p-scratch', controllerUid: 'someone-else' }))).toBe(false);
    expect(podUsesPvc(eph, pvc({ name: 'p-scratch' }))).toBe(false);
    expect(podUsesPvc({ ...eph, shutDown: true }, pvc({ name: 'p-scratch', controllerUid: 'pu' }))).toBe(false);
  });

  test('the first user by name is reported', () => {
    expect(podUsingPvc([pod({ name: 'z' }), pod({ name: 'b' }), pod({ name: 'a', nodeName: '' })], pvc())?.name).toBe('b');
    expect(podUsingPvc([], pvc())).toBeUndefined();
  });

  test('enqueuePVCs: a running scheduled pod frees nothing; a deleted, terminated or unscheduled one names its claims', () => {
    const two = pod({ claims: [{ volume: 'v', claim: 'data', ephemeral: false }, { volume: 'w', claim: 'p-w', ephemeral: true }, { volume: 'x', claim: 'data', ephemeral: false }] });
    expect(claimsFreedBy(two, false)).toEqual([]);
    expect(claimsFreedBy(two, true)).toEqual(['data', 'p-w']);
    expect(claimsFreedBy({ ...two, terminated: true }, false)).toEqual(['data', 'p-w']);
    expect(claimsFreedBy({ ...two, nodeName: '' }, false)).toEqual(['data', 'p-w']);
  });

  test('the pod index names both kinds of claim; a claim source wins over an ephemeral one', () => {
    expect(podClaimRefs('p', [{ name: 'a', persistentVolumeClaim: { claimName: 'c1' } }, { name: 'b', ephemeral: {} }, { name: 'e' },
      { name: 'z', persistentVolumeClaim: { claimName: '' } }])).toEqual([
      { volume: 'a', claim: 'c1', ephemeral: false }, { volume: 'b', claim: 'p-b', ephemeral: true },
    ]);
  });
});

describe('pv protection', () => {
  const pv = (phase: string, o: Partial<ProtectedObject> = {}) => ({ ...obj({ namespace: '', deleting: true }), phase, ...o });
  test('a deletion candidate is due unless Bound; a volume without the finalizer always', () => {
    expect(pvWriteDue(pv('Bound'))).toBe(false);
    for (const phase of ['Available', 'Released', 'Failed', 'Pending', '']) expect(pvWriteDue(pv(phase))).toBe(true);
    expect(pvWriteDue(pv('Bound', { deleting: false, protected: false }))).toBe(true);
    expect(pvWriteDue(pv('Available', { deleting: false }))).toBe(false);
  });
});

describe('vac protection', () => {
  test('a claim names its spec, current and target classes, each once', () => {
    expect(pvcClassNames({ spec: { volumeAttributesClassName: 'a' }, status: { currentVolumeAttributesClassName: 'b', modifyVolumeStatus: { targetVolumeAttributesClassName: 'a' } } }))
      .toEqual(['a', 'b']);
    expect(pvcClassNames({ spec: { volumeAttributesClassName: '' }, status: { modifyVolumeStatus: null } })).toEqual([]);
  });

  test('only the classes an update let go of may be freed', () => {
    expect(classesLetGo(['a', 'b'], ['b', 'c'])).toEqual(['a']);
    expect(classesLetGo([], ['a'])).toEqual([]);
  });

  test('a candidate is due only when nothing names it', () => {
    const vac = obj({ namespace: '', deleting: true });
    expect(vacWriteDue(vac, true)).toBe(false);
    expect(vacWriteDue(vac, false)).toBe(true);
    expect(vacWriteDue(obj({ protected: false }), true)).toBe(true);
  });
});

describe('ephemeral volumes', () => {
  const ephPod = (o: Partial<EphemeralPodView> = {}): EphemeralPodView => ({
    namespace: 'a', name: 'p', uid: 'pu', deleting: false,
    volumes: volumeClaims('p', [{ name: 'one', template: { spec: { accessModes: ['ReadWriteOnce'] } } }, { name: 'two', template: { metadata: { labels: { l: '1' } }, spec: {} } }]),
    ...o,
  });

  test('volumes in order: the first missing claim is created; a claim the pod does not control stops the walk with upstream\'s message', () => {
    const p = ephPod();
    expect(nextStep(p, {})).toEqual({ kind: 'create', volume: p.volumes[0] });
    expect(nextStep(p, { 'p-one': { uid: 'c1', controllerUid: 'pu' } })).toEqual({ kind: 'create', volume: p.volumes[1] });
    expect(nextStep(p, { 'p-one': { uid: 'c1', controllerUid: 'other' }, 'p-two': null })).toEqual({
      kind: 'foreign', volume: p.volumes[0], message: 'PVC a/p-one was not created for pod a/p (pod is not owner)',
    });
    expect(nextStep(p, { 'p-one': { uid: 'c1', controllerUid: 'pu' }, 'p-two': { uid: 'c2', controllerUid: 'pu' } })).toBeUndefined();
  });

  test('a pod being deleted, or without ephemeral volumes, needs nothing', () => {
    expect(claimsDue(ephPod({ deleting: true }), {})).toBe(false);
    expect(claimsDue(ephPod({ volumes: [] }), {})).toBe(false);
    expect(claimsDue(ephPod(), {})).toBe(true);
  });

  test('the claim: template labels, annotations and spec, controlled by the pod with blockOwnerDeletion', () => {
    const v = { name: 'scratch', claim: 'p-scratch', template: { metadata: { labels: { a: 'b' }, annotations: { n: 'm' } }, spec: { resources: { requests: { storage: '1Gi' } } } } };
    expect(claimFor({ name: 'p', uid: 'pu' }, v)).toEqual({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim',
      metadata: { name: 'p-scratch', annotations: { n: 'm' }, labels: { a: 'b' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'pu', controller: true, blockOwnerDeletion: true }] },
      spec: { resources: { requests: { storage: '1Gi' } } },
    });
  });
});

/** Each projection reads nothing its mask drops: a fixture with every field read, and more. */
describe('projection masks', () => {
  const richPod = (): KubeObject => ({
    metadata: {
      namespace: 'a', name: 'p', uid: 'pu', resourceVersion: '3', deletionTimestamp: '2026-01-01T00:00:00Z', labels: { x: 'y' },
      ...{ deletionGracePeriodSeconds: 0 },
    },
    spec: {
      nodeName: 'n1', containers: [{ name: 'c', image: 'i' }],
      volumes: [
        { name: 'd', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
        { name: 's', ephemeral: { volumeClaimTemplate: { metadata: { labels: { a: 'b' }, annotations: { n: 'm' }, name: 'ignored' }, spec: { accessModes: ['ReadWriteOnce'] } } } },
        { name: 'e', emptyDir: {} },
      ],
    },
    status: {
      phase: 'Running', podIP: '10.0.0.1',
      containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0 } } }],
      initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'X' } } }],
      ephemeralContainerStatuses: [{ name: 'dbg', state: { running: { startedAt: 'x' } } }],
    },
  });
  const richPvc = (): KubeObject => ({
    metadata: { namespace: 'a', name: 'p-s', uid: 'cu', resourceVersion: '4', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['kubernetes.io/pvc-protection'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'pu', controller: true }] },
    spec: { volumeAttributesClassName: 'gold', resources: { requests: { storage: '1Gi' } } },
    status: { phase: 'Bound', currentVolumeAttributesClassName: 'silver', modifyVolumeStatus: { targetVolumeAttributesClassName: 'bronze', status: 'InProgress' } },
  });

  test('pvc protection', () => {
    expect(pvcPodView(prune(richPod(), CLAIM_POD_FIELDS) as KubeObject)).toEqual(pvcPodView(richPod()));
    expect(PODS_BY_CLAIM.keys(prune(richPod(), CLAIM_POD_FIELDS) as KubeObject)).toEqual(['a/data', 'a/p-s']);
    expect(pvcView(prune(richPvc(), PVC_PROTECTION_FIELDS) as KubeObject)).toEqual(pvcView(richPvc()));
    // a pod deleted with a zero grace period whose containers all stopped: shut down and terminated
    expect(pvcPodView(richPod())).toMatchObject({ shutDown: true, terminated: false, nodeName: 'n1' });
  });

  test('pv protection', () => {
    const pv: KubeObject = { metadata: { name: 'v', uid: 'vu', resourceVersion: '2', finalizers: ['kubernetes.io/pv-protection'] },
      spec: { capacity: { storage: '1Gi' } }, status: { phase: 'Released', message: 'm' } };
    expect(pvView(prune(pv, PV_PROTECTION_FIELDS) as KubeObject)).toEqual(pvView(pv));
    expect(pvView(pv)).toEqual({ namespace: '', name: 'v', uid: 'vu', resourceVersion: '2', deleting: false, protected: true, phase: 'Released' });
  });

  test('vac protection', () => {
    const vac: KubeObject = { metadata: { name: 'gold', uid: 'g', resourceVersion: '1', finalizers: ['kubernetes.io/vac-protection'] }, ...{ driverName: 'd' } };
    expect(vacView(prune(vac, VAC_FIELDS) as KubeObject)).toEqual(vacView(vac));
    expect(classesOfPvc(prune(richPvc(), PVC_CLASS_FIELDS) as KubeObject)).toEqual(['gold', 'silver', 'bronze']);
    const pv: KubeObject = { metadata: { name: 'v' }, spec: { volumeAttributesClassName: 'gold', capacity: {} } };
    expect(classesOfPv(prune(pv, PV_CLASS_FIELDS) as KubeObject)).toEqual(['gold']);
  });

  test('ephemeral volume', () => {
    expect(ephemeralPodView(prune(richPod(), EPHEMERAL_POD_FIELDS) as KubeObject)).toEqual(ephemeralPodView(richPod()));
    expect(ephemeralPodView(richPod()).volumes).toEqual([
      { name: 's', claim: 'p-s', template: { metadata: { labels: { a: 'b' }, annotations: { n: 'm' } }, spec: { accessModes: ['ReadWriteOnce'] } } },
    ]);
    expect(claimState(prune(richPvc(), EPHEMERAL_PVC_FIELDS) as KubeObject)).toEqual({ uid: 'cu', controllerUid: 'pu' });
  });
});
