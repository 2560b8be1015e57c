import { createHash } from 'node:crypto';
import { attachSource, attachableVolume, attachmentName } from '../../activities/attachdetach/projections';
import {
  ATTACHER_TIMEOUT_MS,
  initialActualState,
  mergeAttachDetachEvents,
  multiAttachMessage,
  operationBackoffMs,
  parseCsiUniqueName,
  planAttachDetach,
  type PlanInput,
} from '../../workflows/attachdetach/logic';
import type { AttachableVolume, AttachmentObservation, NodeView } from '../../workflows/attachdetach/types';
import type { KubeObject } from '../../activities/kube/projections';

const RWO: AttachableVolume = { uniqueName: 'kubernetes.io/csi/d.example.com^h1', driver: 'd.example.com', handle: 'h1', pvName: 'pv1', multiAttach: false };
const pod = (name: string, namespace = 'ns') => ({ namespace, name, uid: `uid-${name}` });
const node = (over: Partial<NodeView> = {}): NodeView => ({ exists: true, ready: true, outOfService: false, inUse: false, reported: false, ...over });
const SETTINGS = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

function input(over: Partial<PlanInput>): PlanInput {
  return {
    now: 1_000_000, uniqueName: RWO.uniqueName, volume: RWO, desired: [], verify: false, asw: {}, multiAttachReported: [],
    observed: { nodes: {}, attachments: {} }, settings: SETTINGS, ...over,
  };
}

const observed = (nodes: Record<string, NodeView>, attachments: AttachmentObservation['attachments'] = {}): AttachmentObservation => ({ nodes, attachments });
const va = (attached: boolean, extra: object = {}) => ({ name: 'csi-x', attached, deleting: false, ...extra });

describe('attach', () => {
  test('a wanted volume gets its VolumeAttachment, then is reported and its pods told once the attacher confirms', () => {
    const first = planAttachDetach(input({ desired: [{ node: 'n1', pods: [pod('a')] }], observed: observed({ n1: node() }) }));
    expect(first.steps.map((s) => s.kind)).toEqual(['createAttachment']);
    expect(first.asw.n1.op).toEqual({ kind: 'attach', deadline: 1_000_000 + ATTACHER_TIMEOUT_MS });
    expect(first.settled).toBe(false);
    expect(first.wakeAt).toBe(1_000_000 + ATTACHER_TIMEOUT_MS);

    const done = planAttachDetach(input({ now: 1_005_000, desired: [{ node: 'n1', pods: [pod('a')] }], asw: first.asw, observed: observed({ n1: node() }, { n1: va(true) }) }));
    expect(done.steps).toEqual([
      { kind: 'event', node: 'n1', pods: [pod('a')], type: 'Normal', reason: 'SuccessfulAttachVolume', message: 'AttachVolume.Attach succeeded for volume "pv1" ' },
      { kind: 'report', node: 'n1', attached: true, reason: 'the volume is attached to n1' },
    ]);
    expect(done.asw.n1).toEqual({ confirmed: true, failures: 0 });

    const quiet = planAttachDetach(input({ desired: [{ node: 'n1', pods: [pod('a')] }], asw: done.asw, observed: observed({ n1: node({ reported: true }) }, { n1: va(true) }) }));
    expect(quiet.steps).toEqual([]);
    expect(quiet.settled).toBe(true);
  });

  test('an attach error fails the attach with the attacher\'s words, and the retry backs off', () => {
    const asw = { n1: { confirmed: false, failures: 0, op: { kind: 'attach' as const, deadline: 2_000_000 } } };
    const failed = planAttachDetach(input({ desired: [{ node: 'n1', pods: [pod('a')] }], asw, observed: observed({ n1: node() }, { n1: va(false, { attachError: 'disk is busy' }) }) }));
    expect(failed.steps).toEqual([{ kind: 'event', node: 'n1', pods: [pod('a')], type: 'Warning', reason: 'FailedAttachVolume', message: 'AttachVolume.Attach failed for volume "pv1" : disk is busy' }]);
    expect(failed.asw.n1).toEqual({ confirmed: false, failures: 1, retryAt: 1_000_500, failedOp: 'attach' });
    // inside the backoff nothing is tried
    const waiting = planAttachDetach(input({ now: 1_000_200, desired: [{ node: 'n1', pods: [pod('a')] }], asw: failed.asw, observed: observed({ n1: node() }, { n1: va(false, { attachError: 'disk is busy' }) }) }));
    expect(waiting.steps).toEqual([]);
    expect(waiting.wakeAt).toBe(1_000_500);
    // after it, the attach runs again (the VolumeAttachment exists, so nothing is created) and fails again
    const again = planAttachDetach(input({ now: 1_000_600, desired: [{ node: 'n1', pods: [pod('a')] }], asw: failed.asw, observed: observed({ n1: node() }, { n1: va(false, { attachError: 'disk is busy' }) }) }));
    expect(again.steps.map((s) => s.kind)).toEqual(['event']);
    expect(again.asw.n1.failures).toBe(2);
    expect(again.asw.n1.retryAt).toBe(1_000_600 + 1000);
    expect(operationBackoffMs(20)).toBe(122_000);
    // the attach's backoff does not hold back a detach once no pod wants the volume there
    const detach = planAttachDetach(input({ now: 1_000_700, asw: again.asw, observed: observed({ n1: node() }, { n1: va(false, { attachError: 'disk is busy' }) }) }));
    expect(detach.steps.map((s) => s.kind)).toEqual(['deleteAttachment']);
  });

  test('an attacher that never answers times out after two minutes', () => {
    const asw = { n1: { confirmed: false, failures: 0, op: { kind: 'attach' as const, deadline: 1_000_000 } } };
    const p = planAttachDetach(input({ desired: [{ node: 'n1', pods: [pod('a')] }], asw, observed: observed({ n1: node() }, { n1: va(false) }) }));
    expect(p.steps[0]).toMatchObject({ reason: 'FailedAttachVolume', message: 'AttachVolume.Attach failed for volume "pv1" : timed out waiting for external-attacher of d.example.com CSI driver to attach volume h1' });
  });

  test('a volume for one node only: a second node gets the Multi-Attach error once, naming the pods that hold it', () => {
    const asw = { n1: { confirmed: true, failures: 0 } };
    const desired = [{ node: 'n1', pods: [pod('a'), pod('x', 'other')] }, { node: 'n2', pods: [pod('b')] }];
    const obs = observed({ n1: node({ reported: true }), n2: node() }, { n1: va(true) });
    const p = planAttachDetach(input({ desired, asw, observed: obs }));
    expect(p.steps).toEqual([{ kind: 'event', node: 'n2', pods: [pod('b')], type: 'Warning', reason: 'FailedAttachVolume',
      message: 'Multi-Attach error for volume "pv1" Volume is already used by pod(s) a and 1 pod(s) in different namespaces' }]);
    expect(p.multiAttachReported).toEqual(['n2']);
    expect(p.settled).toBe(false);
    expect(planAttachDetach(input({ desired, asw, observed: obs, multiAttachReported: p.multiAttachReported })).steps).toEqual([]);
    // a volume many nodes may share is attached to both
    const shared = planAttachDetach(input({ volume: { ...RWO, multiAttach: true }, desired, asw, observed: obs }));
    expect(shared.steps.map((s) => [s.kind, s.node])).toEqual([['createAttachment', 'n2']]);
  });

  test('Multi-Attach messages by namespace, and for a volume no pod holds', () => {
    expect(multiAttachMessage('pv', pod('b'), [])).toBe('Multi-Attach error for volume "pv" Volume is already exclusively attached to one node and can\'t be attached to another');
    expect(multiAttachMessage('pv', pod('b'), [pod('a', 'o1'), pod('c', 'o2')])).toBe('Multi-Attach error for volume "pv" Volume is already used by 2 pod(s) in different namespaces');
  });
});

describe('detach', () => {
  test('a volume no pod wants is taken off the node\'s report, then its VolumeAttachment deleted; gone means detached', () => {
    const asw = { n1: { confirmed: true, failures: 0 } };
    const p = planAttachDetach(input({ asw, observed: observed({ n1: node({ reported: true }) }, { n1: va(true) }) }));
    expect(p.steps.map((s) => s.kind)).toEqual(['report', 'deleteAttachment']);
    expect(p.steps[1]).toMatchObject({ verifySafe: true });
    expect(p.asw.n1.op?.kind).toBe('detach');
    const done = planAttachDetach(input({ asw: p.asw, observed: observed({ n1: node() }) }));
    expect(done.asw).toEqual({});
    expect(done.steps).toEqual([]);
    expect(done.settled).toBe(true);
  });

  test('a single-node volume moves: once its detach is done, the node that wants it gets it in the same pass', () => {
    const asw = { n0: { confirmed: true, failures: 0, detachRequestedAt: 999_000, op: { kind: 'detach' as const, deadline: 1_100_000 } } };
    const desired = [{ node: 'n1', pods: [pod('b')] }];
    // while the detach runs, the other node waits without an error
    const during = planAttachDetach(input({ desired, asw, observed: observed({ n0: node(), n1: node() }, { n0: va(true) }) }));
    expect(during.steps).toEqual([]);
    expect(during.wakeAt).toBe(1_100_000);
    const p = planAttachDetach(input({ desired, asw, observed: observed({ n0: node(), n1: node() }) }));
    expect(p.asw.n0).toBeUndefined();
    expect(p.steps.map((s) => [s.kind, s.node])).toEqual([['createAttachment', 'n1']]);
  });

  test('a mounted volume waits for the kubelet; on an unhealthy node it is forced after six minutes', () => {
    const asw = { n1: { confirmed: true, failures: 0 } };
    const mounted = planAttachDetach(input({ asw, observed: observed({ n1: node({ inUse: true, reported: true }) }, { n1: va(true) }) }));
    expect(mounted.steps).toEqual([]);
    expect(mounted.asw.n1.detachRequestedAt).toBe(1_000_000);
    expect(mounted.wakeAt).toBeUndefined();
    const sick = observed({ n1: node({ inUse: true, reported: true, ready: false }) }, { n1: va(true) });
    const waiting = planAttachDetach(input({ now: 1_100_000, asw: mounted.asw, observed: sick }));
    expect(waiting.steps).toEqual([]);
    expect(waiting.wakeAt).toBe(1_000_000 + 360_000 + 1);
    const forced = planAttachDetach(input({ now: 1_000_000 + 360_001, asw: mounted.asw, observed: sick }));
    expect(forced.steps.map((s) => s.kind)).toEqual(['report', 'deleteAttachment']);
    expect(forced.steps[1]).toMatchObject({ verifySafe: false });
    // unless force detach is off
    const never = planAttachDetach(input({ now: 1_000_000 + 360_001, asw: mounted.asw, observed: sick, settings: { ...SETTINGS, disableForceDetachOnTimeout: true } }));
    expect(never.steps).toEqual([]);
  });

  test('the out-of-service taint detaches at once, without the safety check', () => {
    const asw = { n1: { confirmed: true, failures: 0 } };
    const p = planAttachDetach(input({ asw, observed: observed({ n1: node({ inUse: true, outOfService: true, reported: true }) }, { n1: va(true) }) }));
    expect(p.steps[1]).toMatchObject({ kind: 'deleteAttachment', verifySafe: false });
  });

  test('the periodic sync forgets an attachment the attacher no longer confirms, and attaches it again', () => {
    const asw = { n1: { confirmed: true, failures: 0 } };
    const desired = [{ node: 'n1', pods: [pod('a')] }];
    const p = planAttachDetach(input({ verify: true, desired, asw, observed: observed({ n1: node({ reported: true }) }) }));
    expect(p.steps.map((s) => [s.kind, 'attached' in s ? s.attached : undefined])).toEqual([['createAttachment', undefined], ['report', false]]);
    // without the sync the watch's view is trusted as it was
    expect(planAttachDetach(input({ desired, asw, observed: observed({ n1: node({ reported: true }) }) })).steps).toEqual([]);
  });
});

test('a new run starts from the nodes\' reports and the VolumeAttachments that exist', () => {
  expect(initialActualState(observed({ n1: node({ reported: true }), n2: node() }, { n1: va(true), n3: va(false) }))).toEqual({
    n1: { confirmed: true, failures: 0 },
    n3: { confirmed: false, failures: 0 },
  });
});

test('events merge to the latest desired state, keeping a sync\'s verify request', () => {
  expect(mergeAttachDetachEvents({ desired: [], verify: true }, { desired: [{ node: 'n', pods: [] }] })).toEqual({ desired: [{ node: 'n', pods: [] }], verify: true });
});

describe('names', () => {
  test('attachments are named as the CSI attacher names them', () => {
    const sha = createHash('sha256').update('h1d.example.comnode-1').digest('hex');
    expect(attachmentName('h1', 'd.example.com', 'node-1')).toBe(`csi-${sha}`);
    expect(parseCsiUniqueName('kubernetes.io/csi/d.example.com^vol/with/slash')).toEqual({ driver: 'd.example.com', handle: 'vol/with/slash' });
    expect(parseCsiUniqueName('kubernetes.io/iscsi/x')).toBeUndefined();
  });

  const pv = (spec: object, labels: Record<string, string> = {}): KubeObject => ({ metadata: { name: 'pv', labels }, spec } as KubeObject);
  test.each([
    [{ csi: { driver: 'd', volumeHandle: 'h' } }, {}, { driver: 'd', handle: 'h' }],
    [{ awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-0abc' } }, {}, { driver: 'ebs.csi.aws.com', handle: 'vol-0abc' }],
    [{ awsElasticBlockStore: { volumeID: 'vol-0abc' } }, {}, { driver: 'ebs.csi.aws.com', handle: 'vol-0abc' }],
    [{ awsElasticBlockStore: { volumeID: 'aws://us-east-1a/disk-1' } }, {}, undefined],
    [{ gcePersistentDisk: { pdName: 'disk' } }, { 'topology.kubernetes.io/zone': 'us-c1-a' }, { driver: 'pd.csi.storage.gke.io', handle: 'projects/UNSPECIFIED/zones/us-c1-a/disks/disk' }],
    [{ gcePersistentDisk: { pdName: 'disk' } }, { 'topology.kubernetes.io/zone': 'us-c1-a__us-c1-b' }, { driver: 'pd.csi.storage.gke.io', handle: 'projects/UNSPECIFIED/regions/us-c1/disks/disk' }],
    [{ gcePersistentDisk: { pdName: 'disk' } }, {}, { driver: 'pd.csi.storage.gke.io', handle: 'projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk' }],
    [{ azureDisk: { diskName: 'd', diskURI: '/subscriptions/s/disks/d' } }, {}, { driver: 'disk.csi.azure.com', handle: '/subscriptions/s/disks/d' }],
    [{ cinder: { volumeID: 'c1' } }, {}, { driver: 'cinder.csi.openstack.org', handle: 'c1' }],
    [{ nfs: { server: 's', path: '/' } }, {}, undefined],
  ])('%j with labels %j attaches as %j', (spec, labels, want) => {
    expect(attachSource(pv(spec, labels) as never)).toEqual(want);
  });

  test('multi-attach follows the access modes', () => {
    const v = (accessModes?: string[]) => attachableVolume({ metadata: { name: 'pv' }, spec: { csi: { driver: 'd', volumeHandle: 'h' }, ...(accessModes ? { accessModes } : {}) } } as KubeObject);
    expect(v(['ReadWriteOnce'])?.multiAttach).toBe(false);
    expect(v(['ReadWriteOncePod'])?.multiAttach).toBe(false);
    expect(v(['ReadWriteOnce', 'ReadOnlyMany'])?.multiAttach).toBe(true);
    expect(v()?.multiAttach).toBe(true);
    expect(v(['ReadWriteOnce'])?.uniqueName).toBe('kubernetes.io/csi/d^h');
  });
});
