import { NodeHealthTracker } from '../../activities/node-lifecycle/health';
import { unknownStatus } from '../../activities/node-lifecycle/activities';
import {
  computeZoneState,
  handleDisruption,
  labelsToReconcile,
  newBucket,
  nextTokenAt,
  noScheduleDiff,
  swapBucket,
  tryAccept,
  zoneKey,
  zoneRate,
} from '../../workflows/node-lifecycle/logic';
import { mergeNodeLifecycleEvents } from '../../workflows/node-lifecycle/workflow';

const settings = { evictionRate: 0.1, secondaryEvictionRate: 0.01, largeClusterThreshold: 50, unhealthyZoneThreshold: 0.55 };

describe('NoSchedule taints and labels, as upstream doNoScheduleTaintingPass and reconcileNodeLabels', () => {
  test('conditions call for their taints; taints of other keys are left alone', () => {
    const d = noScheduleDiff([{ type: 'Ready', status: 'Unknown' }, { type: 'MemoryPressure', status: 'False' }], false,
      [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }, { key: 'dedicated', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]);
    expect(d).toEqual({ add: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }], remove: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
  });
  test('a Ready node loses its not-ready taint; a cordoned one gets the unschedulable taint', () => {
    expect(noScheduleDiff([{ type: 'Ready', status: 'True' }], true, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]))
      .toEqual({ add: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }], remove: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
  });
  test('beta OS and arch labels follow the stable ones', () => {
    expect(labelsToReconcile({ 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64', 'beta.kubernetes.io/arch': 'amd64' }))
      .toEqual({ 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'arm64' });
    expect(labelsToReconcile({ 'beta.kubernetes.io/os': 'linux' })).toEqual({});
  });
  test('zone keys: region NUL zone, the beta labels first', () => {
    expect(zoneKey({ 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'z', 'failure-domain.beta.kubernetes.io/zone': 'old' })).toBe('r:\u0000:old');
    expect(zoneKey({})).toBe('');
  });
});

describe('zone states and rates, as upstream ComputeZoneState and handleDisruption', () => {
  test('all not ready is full disruption; 3 or more and 55% is partial', () => {
    expect(computeZoneState(['Unknown', undefined], 0.55)).toEqual({ unhealthy: 2, state: 'FullDisruption' });
    expect(computeZoneState(['Unknown', 'Unknown', 'True'], 0.55).state).toBe('Normal');
    expect(computeZoneState(['Unknown', 'False', 'Unknown', 'True', 'True'], 0.55).state).toBe('PartialDisruption');
    expect(computeZoneState(['Unknown', 'False', 'Unknown', 'True', 'True', 'True'], 0.55).state).toBe('Normal');
  });
  test('a partially disrupted zone is tainted at the secondary rate only when large', () => {
    expect(zoneRate('PartialDisruption', 51, settings)).toBe(0.01);
    expect(zoneRate('PartialDisruption', 50, settings)).toBe(0);
    expect(zoneRate('FullDisruption', 10, settings)).toBe(0.1);
  });
  test('one zone dark among healthy ones: that zone is fully disrupted and keeps the normal rate', () => {
    const d = handleDisruption({ a: 'Normal', b: 'Normal' }, { a: ['Unknown', 'Unknown'], b: ['True'] }, settings);
    expect(d.zoneStates).toEqual({ a: 'FullDisruption', b: 'Normal' });
    expect(d.rates).toEqual({ a: 0.1 });
    expect(d.enterMasterDisruption).toBe(false);
  });
  test('every zone dark: master disruption, no tainting; the first node back ends it', () => {
    const enter = handleDisruption({ a: 'Normal', b: 'FullDisruption' }, { a: ['Unknown'], b: ['Unknown'] }, settings);
    expect(enter).toMatchObject({ enterMasterDisruption: true, rates: { a: 0, b: 0 }, zoneStates: { a: 'FullDisruption', b: 'FullDisruption' } });
    const stay = handleDisruption(enter.zoneStates, { a: ['Unknown'], b: ['Unknown'] }, settings);
    expect(stay).toMatchObject({ enterMasterDisruption: false, exitMasterDisruption: false, rates: {} });
    const exit = handleDisruption(enter.zoneStates, { a: ['True'], b: ['Unknown'] }, settings);
    expect(exit).toMatchObject({ exitMasterDisruption: true, zoneStates: { a: 'Normal', b: 'FullDisruption' }, rates: { a: 0.1, b: 0.1 } });
  });
  test('a new zone starts Initial and zones without nodes are forgotten', () => {
    const d = handleDisruption({ gone: 'Normal' }, { fresh: ['True'] }, settings);
    expect(d.zoneStates).toEqual({ fresh: 'Normal' });
    expect(d.changed).toEqual([{ zone: 'fresh', from: 'Initial', to: 'Normal' }]);
  });
});

describe('the eviction token bucket (burst 1)', () => {
  test('a fresh bucket gives one token, then one per 1/qps seconds', () => {
    let b = newBucket(0.1, 0);
    let t = tryAccept(b, 0);
    expect(t.ok).toBe(true);
    b = t.bucket;
    expect(tryAccept(b, 5000).ok).toBe(false);
    expect(nextTokenAt(b, 5000)).toBe(10_000);
    t = tryAccept(b, 10_000);
    expect(t.ok).toBe(true);
  });
  test('a zero rate never allows; a swap keeps an empty bucket empty', () => {
    expect(tryAccept(newBucket(0, 0), 1e9).ok).toBe(false);
    expect(nextTokenAt(newBucket(0, 0), 0)).toBeUndefined();
    const drained = tryAccept(newBucket(0.1, 0), 0).bucket;
    expect(swapBucket(drained, 1, 100).tokens).toBe(0);
    expect(swapBucket(newBucket(0.1, 0), 1, 100).tokens).toBe(1);
    expect(swapBucket(drained, 0.1, 100)).toBe(drained);
  });
});

describe('node health as the informer hears it', () => {
  const grace = { monitorMs: 50_000, startupMs: 60_000 };
  const node = (heartbeat?: string) => ({ name: 'n', creationMs: 0, ...(heartbeat ? { ready: { heartbeat } } : {}) });
  test('a new heartbeat or lease renewal is heard at the time it arrives; silence past the grace period is stale', () => {
    const t = new NodeHealthTracker();
    t.observeNode(node('h1'), 1000);
    expect(t.stale('n', 51_000, grace)).toBe(false);
    expect(t.stale('n', 51_001, grace)).toBe(true);
    t.observeLease('n', 5, 40_000);
    expect(t.stale('n', 90_000, grace)).toBe(false);
    t.observeLease('n', 5, 80_000); // the same renewal again: nothing new
    expect(t.stale('n', 90_001, grace)).toBe(true);
    t.observeNode(node('h1'), 95_000); // a status update without a new heartbeat is not a sign of life
    expect(t.stale('n', 95_000, grace)).toBe(true);
  });
  test('a node without a Ready condition has the startup grace period from its creation', () => {
    const t = new NodeHealthTracker();
    t.observeNode(node(), 30_000);
    expect(t.stale('n', 60_000, grace)).toBe(false);
    expect(t.stale('n', 60_001, grace)).toBe(true);
  });
});

describe('a silent node\'s status, as upstream writes it', () => {
  test('posted conditions go Unknown; missing ones are added as never updated', () => {
    const { conditions, readyChanged } = unknownStatus({ metadata: { creationTimestamp: 'c' }, status: { conditions: [
      { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: 'h' },
      { type: 'MemoryPressure', status: 'Unknown', reason: 'NodeStatusUnknown' },
    ] } }, 'now');
    expect(readyChanged).toBe(true);
    expect(conditions).toEqual([
      { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: 'h', lastTransitionTime: 'now' },
      { type: 'MemoryPressure', status: 'Unknown', reason: 'NodeStatusUnknown' },
      { type: 'DiskPressure', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: 'c', lastTransitionTime: 'now' },
      { type: 'PIDPressure', status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: 'c', lastTransitionTime: 'now' },
    ]);
  });
});

describe('mergeNodeLifecycleEvents', () => {
  const r = (uid: string) => ({ uid, zone: 'z', excluded: false, stale: false, probeAtMs: 0, unreachableTaint: false, notReadyTaint: false, noScheduleOutOfSync: false, labelsOutOfSync: false });
  test('the latest report per node; a node gone drops its report; pods and settings carried', () => {
    const m = mergeNodeLifecycleEvents({ nodes: { a: r('1'), b: r('2') }, pods: [{ namespace: 'n', name: 'p', node: 'a' }] }, { nodesGone: { a: '1' }, nodes: { b: r('3') } });
    expect(m).toEqual({ nodes: { b: r('3') }, nodesGone: { a: '1' }, pods: [{ namespace: 'n', name: 'p', node: 'a' }] });
  });
});

describe('a bucket drained by late wakes', () => {
  test('tokens that came while nodes waited are all spent at a late wake; an idle bucket holds one', () => {
    let b = tryAccept(newBucket(2, 0), 0).bucket;
    // the timer for the next token (due at 500 ms) fires at 1000 ms: upstream would have spent two by then
    let t = tryAccept(b, 1000, 'draining');
    expect(t.ok).toBe(true);
    t = tryAccept(t.bucket, 1000, 'draining');
    expect(t.ok).toBe(true);
    expect(tryAccept(t.bucket, 1000, 'draining').ok).toBe(false);
    b = t.bucket;
    // nodes waited through a minute's outage: a second's worth is made up for, not a minute's
    let late = tryAccept(b, 60_000, 'draining');
    let spent = 0;
    while (late.ok) {
      spent++;
      late = tryAccept(late.bucket, 60_000, 'draining');
    }
    expect(spent).toBe(3);
    b = t.bucket;
    // idle for a minute: one token, not 120
    t = tryAccept(b, 61_000);
    expect(t.ok).toBe(true);
    expect(tryAccept(t.bucket, 61_000).ok).toBe(false);
  });

  test('a write held up within a pass (the replica writing it died) is followed by one token, not a second\'s worth', () => {
    // a wake half a second late grants two; one is spent and its write takes 8 s (a failover)
    let t = tryAccept(tryAccept(newBucket(2, 0), 0).bucket, 1000, 'draining');
    expect(t.ok).toBe(true);
    // what the wake granted is kept, and nothing more came of the 8 s
    t = tryAccept(t.bucket, 9000, 'continuing');
    expect(t.ok).toBe(true);
    expect(tryAccept(t.bucket, 9000, 'continuing').ok).toBe(false);
    // a pass after a write that took no time keeps spending the wake's tokens
    let w = tryAccept(tryAccept(newBucket(2, 0), 0).bucket, 1000, 'draining');
    let spent = 0;
    while (w.ok) {
      spent++;
      w = tryAccept(w.bucket, 1000, 'continuing');
    }
    expect(spent).toBe(2);
    // and a write that took 8 s from a bucket with nothing left adds exactly one
    w = tryAccept(w.bucket, 9000, 'continuing');
    expect(w.ok).toBe(true);
    expect(tryAccept(w.bucket, 9000, 'continuing').ok).toBe(false);
  });
});
