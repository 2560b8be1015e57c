import { bindClaimToVolume, bindVolumeToClaim, setClaimStatus, unbindVolume } from '../../workflows/pv-binder/bind';
import { delayBindingEvent, planClaimSync, type ClaimObservation } from '../../workflows/pv-binder/claim-sync';
import { accessModesKey, findBestMatch, volumeUnsatisfiedReason } from '../../workflows/pv-binder/match';
import { deleterRoute, provisioningRoute } from '../../workflows/pv-binder/plugins';
import type { ClaimView, ClassView, VolumeView } from '../../workflows/pv-binder/types';
import { planVolumeSync, volumeAnneal } from '../../workflows/pv-binder/volume-sync';

const claim = (over: Partial<ClaimView> = {}): ClaimView => ({
  namespace: 'ns', name: 'data', uid: 'c1', resourceVersion: '10', annotations: {}, storageClassName: 'manual', volumeName: '',
  accessModes: ['ReadWriteOnce'], request: '1Gi', hasDataSource: false, phase: 'Pending', deleting: false, ...over,
});
const volume = (name: string, over: Partial<VolumeView> = {}): VolumeView => ({
  name, uid: `u-${name}`, resourceVersion: '5', annotations: {}, labels: {}, finalizers: [], storageClassName: 'manual', capacity: '1Gi',
  accessModes: ['ReadWriteOnce'], reclaimPolicy: 'Retain', phase: 'Available', deleting: false, source: 'local', ...over,
});
const cls = (over: Partial<ClassView> = {}): ClassView => ({
  name: 'manual', provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'Immediate', mountOptions: [], isDefault: false, creationTimestamp: '', ...over,
});
const flags = { dynamicProvisioning: true, hostPathProvisioner: false };

describe('findBestMatch', () => {
  test('picks the smallest volume that fits, in quantities of any format', () => {
    const vs = [volume('big', { capacity: '10Gi' }), volume('fit', { capacity: '1500Mi' }), volume('small', { capacity: '1G' })];
    expect(findBestMatch(claim({ request: '1.2Gi' }), vs, false)?.name).toBe('fit');
  });

  test('prefers the fewest access modes that cover the claim over a smaller volume with more', () => {
    const vs = [volume('rwx', { capacity: '1Gi', accessModes: ['ReadWriteOnce', 'ReadWriteMany'] }), volume('rwo', { capacity: '5Gi' })];
    expect(findBestMatch(claim(), vs, false)?.name).toBe('rwo');
    expect(findBestMatch(claim({ accessModes: ['ReadWriteMany'] }), vs, false)?.name).toBe('rwx');
  });

  test('skips other classes, taken, non-Available, deleting, other volume modes and unselected volumes', () => {
    const vs = [
      volume('other-class', { storageClassName: 'fast' }),
      volume('taken', { claimRef: { namespace: 'ns', name: 'x', uid: 'x1' } }),
      volume('released', { phase: 'Released' }),
      volume('deleting', { deleting: true }),
      volume('block', { volumeMode: 'Block' }),
      volume('unlabelled'),
    ];
    expect(findBestMatch(claim(), vs, false)?.name).toBe('unlabelled');
    expect(findBestMatch(claim({ selector: { matchLabels: { tier: 'gold' } } }), vs, false)).toBeUndefined();
  });

  test('a volume pre-bound to the claim wins, also under delayed binding, which skips the rest', () => {
    const vs = [volume('small', { capacity: '1Gi' }), volume('pre', { capacity: '9Gi', claimRef: { namespace: 'ns', name: 'data', uid: '' } })];
    expect(findBestMatch(claim(), vs, false)?.name).toBe('pre');
    expect(findBestMatch(claim(), [vs[0]], true)).toBeUndefined();
    expect(findBestMatch(claim(), vs, true)?.name).toBe('pre');
  });

  test('pairs 50 claims with 50 volumes of the same sizes one to one, whatever the order', () => {
    const vs = Array.from({ length: 50 }, (_, i) => volume(`pv-${i + 1}`, { capacity: `${i + 1}Gi` }));
    const order = Array.from({ length: 50 }, (_, i) => (i * 37) % 50);
    const taken = new Map<string, string>();
    for (const i of order) {
      const c = claim({ name: `c-${i + 1}`, uid: `c${i}`, request: `${i + 1}Gi` });
      const free = vs.filter((v) => !taken.has(v.name));
      const m = findBestMatch(c, free, false)!;
      taken.set(m.name, c.name);
    }
    for (const [pv, c] of taken) expect(pv.slice(3)).toBe(c.slice(2));
  });

  test('mode sets are keyed as upstream spells them', () => {
    expect(accessModesKey(['ReadWriteMany', 'ReadWriteOnce'])).toBe('ReadWriteOnce,ReadWriteMany');
  });
});

describe('planClaimSync', () => {
  const obs = (over: Partial<ClaimObservation> = {}): ClaimObservation => ({ claim: claim(), cls: cls(), nonScheduledPods: [], ...over });

  test('binds the match; without one, an Immediate no-provisioner class fails provisioning with upstream\'s words', () => {
    expect(planClaimSync(obs({ match: volume('pv') }), flags)).toMatchObject({ kind: 'bind', volume: { name: 'pv' } });
    const message = 'no volume plugin matched name: kubernetes.io/no-provisioner';
    expect(planClaimSync(obs(), flags)).toEqual({ kind: 'none', why: message, events: [{ type: 'Warning', reason: 'ProvisioningFailed', message }] });
    expect(provisioningRoute('nfs', cls({ provisioner: 'kubernetes.io/nfs' }))).toEqual({ kind: 'failed', message: 'no provisionable volume plugin matched' });
  });

  test('a class-less claim gets FailedBinding, or the default class first', () => {
    const noClass = claim({ storageClassName: '' });
    expect(planClaimSync(obs({ claim: noClass, cls: undefined }), flags)).toMatchObject({ kind: 'pending', events: [{ reason: 'FailedBinding' }] });
    const unset = claim({ storageClassName: undefined });
    expect(planClaimSync(obs({ claim: unset, cls: undefined, defaultClass: 'std' }), flags)).toEqual({ kind: 'assign-default-class', className: 'std' });
  });

  test('WaitForFirstConsumer waits and names the pods the scheduler has not placed', () => {
    const wffc = cls({ volumeBindingMode: 'WaitForFirstConsumer' });
    expect(planClaimSync(obs({ cls: wffc }), flags)).toMatchObject({ kind: 'pending', events: [delayBindingEvent([])] });
    expect(delayBindingEvent(['a', 'b']).message).toBe('waiting for pods a,b to be scheduled');
    // once the scheduler picked a node, the class's provisioner is asked
    const picked = claim({ annotations: { 'volume.kubernetes.io/selected-node': 'n1' } });
    expect(planClaimSync(obs({ claim: picked, cls: { ...wffc, provisioner: 'example.com/nfs' } }), flags))
      .toEqual({ kind: 'external-provisioning', provisioner: 'example.com/nfs' });
  });

  test('a requested volume that does not fit gives VolumeMismatch; one taken by another claim FailedBinding', () => {
    const named = claim({ volumeName: 'pv' });
    expect(planClaimSync(obs({ claim: named, named: volume('pv', { capacity: '100Mi' }) }), flags))
      .toMatchObject({ kind: 'pending', events: [{ reason: 'VolumeMismatch', message: 'Cannot bind to requested volume "pv": requested PV is too small' }] });
    expect(planClaimSync(obs({ claim: named, named: volume('pv', { claimRef: { namespace: 'ns', name: 'other', uid: 'o' } }) }), flags))
      .toMatchObject({ kind: 'pending', events: [{ reason: 'FailedBinding', message: 'volume "pv" already bound to a different claim.' }] });
    expect(planClaimSync(obs({ claim: named, named: null }), flags)).toMatchObject({ kind: 'pending', events: [] });
  });

  test('a bound claim whose volume went, or was taken, is Lost', () => {
    const bound = claim({ volumeName: 'pv', phase: 'Bound', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } });
    expect(planClaimSync(obs({ claim: bound, named: null }), flags)).toMatchObject({ kind: 'lost', event: { reason: 'ClaimLost' } });
    expect(planClaimSync(obs({ claim: bound, named: volume('pv', { claimRef: { namespace: 'ns', name: 'data', uid: 'other' } }) }), flags))
      .toMatchObject({ kind: 'lost', event: { reason: 'ClaimMisbound' } });
  });

  test('migrated in-tree provisioners go to their CSI driver', () => {
    expect(provisioningRoute('gp2', cls({ provisioner: 'kubernetes.io/aws-ebs' }))).toEqual({ kind: 'external', provisioner: 'ebs.csi.aws.com' });
    expect(provisioningRoute('x', undefined)).toEqual({ kind: 'failed', message: 'storageclass.storage.k8s.io "x" not found' });
    expect(provisioningRoute('x', cls({ provisioner: 'kubernetes.io/foo' }))).toEqual({ kind: 'failed', message: 'no volume plugin matched name: kubernetes.io/foo' });
  });
});

describe('planVolumeSync', () => {
  test('unused and pre-bound volumes are Available; a volume whose claim is gone is Released, then reclaimed', () => {
    expect(planVolumeSync({ volume: volume('pv', { phase: 'Pending' }) })).toMatchObject({ kind: 'phase', phase: 'Available' });
    const orphan = volume('pv', { phase: 'Bound', claimRef: { namespace: 'ns', name: 'data', uid: 'c1' } });
    expect(planVolumeSync({ volume: orphan })).toMatchObject({ kind: 'phase', phase: 'Released' });
    expect(planVolumeSync({ volume: { ...orphan, phase: 'Released' } })).toMatchObject({ kind: 'none', settled: true });
    expect(planVolumeSync({ volume: { ...orphan, phase: 'Released', reclaimPolicy: 'Delete' } }))
      .toMatchObject({ kind: 'phase', phase: 'Failed', event: { reason: 'VolumeFailedDelete', message: 'error getting deleter volume plugin for volume "pv": no volume plugin matched' } });
    expect(planVolumeSync({ volume: { ...orphan, phase: 'Released', reclaimPolicy: 'Delete', source: 'hostPath', hostPath: '/tmp/x/y' } }))
      .toMatchObject({ kind: 'delete', path: '/tmp/x/y' });
    expect(deleterRoute({ ...orphan, source: 'hostPath', hostPath: '/data/x' })).toEqual({ kind: 'failed', message: 'host_path deleter only supports /tmp/.+ but received provided /data/x' });
    expect(deleterRoute({ ...orphan, source: 'csi' })).toEqual({ kind: 'external' });
  });

  test('a controller-made binding to a claim bound elsewhere is rolled back; a bound pair is Bound', () => {
    const ref = { namespace: 'ns', name: 'data', uid: 'c1' };
    const c = claim({ volumeName: 'other' });
    expect(planVolumeSync({ volume: volume('pv', { claimRef: ref, annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }), claim: c })).toMatchObject({ kind: 'unbind' });
    expect(planVolumeSync({ volume: volume('pv', { claimRef: ref, phase: 'Available' }), claim: claim({ volumeName: 'pv' }) })).toMatchObject({ kind: 'phase', phase: 'Bound' });
    expect(planVolumeSync({ volume: volume('pv', { claimRef: ref }), claim: claim({ volumeMode: 'Block' }) })).toMatchObject({ kind: 'mismatch' });
  });

  test('in-tree provisioned volumes carry the deletion finalizer only under Delete', () => {
    const v = volume('pv', { annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/host-path' }, reclaimPolicy: 'Delete' });
    expect(volumeAnneal(v)).toEqual({ finalizers: ['kubernetes.io/pv-controller'] });
    expect(volumeAnneal({ ...v, reclaimPolicy: 'Retain', finalizers: ['kubernetes.io/pv-controller', 'x'] })).toEqual({ finalizers: ['x'] });
    expect(volumeAnneal({ ...v, annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/csi' } })).toBeUndefined();
  });
});

describe('bind edits', () => {
  const pvc = () => ({ metadata: { namespace: 'ns', name: 'data', uid: 'c1', resourceVersion: '7' }, spec: { accessModes: ['ReadWriteOnce'] }, status: { phase: 'Pending' } });
  const pv = () => ({ metadata: { name: 'pv' }, spec: { capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'] }, status: { phase: 'Available' } });

  test('a volume bound by the controller is marked so; binding twice changes nothing', () => {
    const v = pv();
    expect(bindVolumeToClaim(v, pvc())).toBe(true);
    expect(v.spec).toMatchObject({ claimRef: { kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data', uid: 'c1', apiVersion: 'v1', resourceVersion: '7' } });
    expect((v as { metadata: { annotations?: Record<string, string> } }).metadata.annotations).toEqual({ 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(bindVolumeToClaim(v, pvc())).toBe(false);
  });

  test('a user\'s pre-binding gets the UID without the controller mark', () => {
    const v = { ...pv(), spec: { ...pv().spec, claimRef: { namespace: 'ns', name: 'data' } } };
    expect(bindVolumeToClaim(v, pvc())).toBe(true);
    expect((v as { metadata: { annotations?: Record<string, string> } }).metadata.annotations).toBeUndefined();
  });

  test('the claim names the volume, is marked, and takes its capacity and modes as it becomes Bound', () => {
    const c = pvc();
    expect(bindClaimToVolume(c, 'pv')).toBe(true);
    expect((c as { metadata: { annotations?: Record<string, string> } }).metadata.annotations)
      .toEqual({ 'pv.kubernetes.io/bound-by-controller': 'yes', 'pv.kubernetes.io/bind-completed': 'yes' });
    expect(setClaimStatus(c, 'Bound', pv())).toBe(true);
    expect(c.status).toEqual({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '2Gi' } });
    expect(setClaimStatus(c, 'Bound', pv())).toBe(false);
    expect(setClaimStatus(c, 'Lost')).toBe(true);
    expect(c.status).toEqual({ phase: 'Lost' });
  });

  test('unbinding drops a controller binding whole and keeps a user\'s name', () => {
    const v = { metadata: { name: 'pv', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }, spec: { claimRef: { name: 'data', uid: 'c1' } } };
    unbindVolume(v);
    expect(v).toEqual({ metadata: { name: 'pv' }, spec: {} });
    const u = { metadata: { name: 'pv' }, spec: { claimRef: { name: 'data', uid: 'c1' } } };
    unbindVolume(u);
    expect(u.spec.claimRef).toEqual({ name: 'data', uid: '' });
  });

  test('a volume that does not satisfy a claim says why, as upstream words it', () => {
    expect(volumeUnsatisfiedReason(volume('pv', { accessModes: ['ReadOnlyMany'] }), claim())).toBe('incompatible accessMode');
    expect(volumeUnsatisfiedReason(volume('pv', { storageClassName: 'x' }), claim())).toBe('storageClassName does not match');
  });
});

describe('recycler', () => {
  const { defaultRecyclerTemplate, recyclerPod, recyclerTemplateError, recyclerTimeoutSeconds } = jest.requireActual('../../workflows/pv-binder/recycler') as typeof import('../../workflows/pv-binder/recycler');

  test('the deadline is the increment per whole Gi, at least the minimum, as CalculateTimeoutForVolume', () => {
    expect(recyclerTimeoutSeconds('4Gi', { minimumSeconds: 60, incrementSeconds: 30 })).toBe(120);
    expect(recyclerTimeoutSeconds('1500Mi', { minimumSeconds: 60, incrementSeconds: 30 })).toBe(60);
    expect(recyclerTimeoutSeconds('100Gi', { minimumSeconds: 300, incrementSeconds: 30 })).toBe(3000);
    expect(recyclerTimeoutSeconds(undefined, { minimumSeconds: 60, incrementSeconds: 30 })).toBe(60);
  });

  test('the pod is named for the volume, mounts it at the template\'s first volume, and drops generateName', () => {
    const v = volume('pv-1', { source: 'nfs', nfs: { server: 'nfs.local', path: '/export' }, capacity: '10Gi' });
    const pod = recyclerPod(defaultRecyclerTemplate(), v, { minimumSeconds: 300, incrementSeconds: 30 });
    expect(pod.metadata).toEqual({ name: 'recycler-for-pv-1', namespace: 'default' });
    expect(pod.spec?.volumes).toEqual([{ name: 'vol', nfs: { server: 'nfs.local', path: '/export' } }]);
    expect(pod.spec?.activeDeadlineSeconds).toBe(300);
    const h = recyclerPod(defaultRecyclerTemplate(), volume('pv-2', { source: 'hostPath', hostPath: '/tmp/x' }), { minimumSeconds: 60, incrementSeconds: 30 });
    expect(h.spec?.volumes).toEqual([{ name: 'vol', hostPath: { path: '/tmp/x' } }]);
  });

  test('a template without volumes is refused, as upstream refuses it', () => {
    expect(recyclerTemplateError({ spec: { volumes: [] } })).toBe('does not contain any volume(s)');
    expect(recyclerTemplateError(defaultRecyclerTemplate())).toBeUndefined();
  });

  test('Recycle runs the recycler for host-path and NFS volumes, and fails the rest with upstream\'s words', () => {
    const orphan = volume('pv', { phase: 'Released', reclaimPolicy: 'Recycle', claimRef: { namespace: 'ns', name: 'data', uid: 'c1' } });
    expect(planVolumeSync({ volume: { ...orphan, source: 'hostPath', hostPath: '/tmp/x' } })).toMatchObject({ kind: 'recycle' });
    expect(planVolumeSync({ volume: orphan })).toMatchObject({ kind: 'phase', phase: 'Failed', event: { reason: 'VolumeFailedRecycle', message: 'No recycler plugin found for the volume!' } });
  });
});
