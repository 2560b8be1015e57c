import { requiredNodeAffinityMatches } from '../../workflows/common/node-affinity';
import { untoleratedTaint } from '../../workflows/common/tolerations';
import {
  daemonPodTolerations,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  pinnedAffinity,
  surgeCount,
  targetNodeName,
  unavailableCount,
} from '../../workflows/daemonset/predicates';

const node = (name: string, labels: Record<string, string> = {}, taints: Array<{ key: string; value?: string; effect: string }> = []) => ({ name, labels, taints });
const required = (...terms: object[]) => ({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } });

describe('required node affinity (component-helpers nodeaffinity)', () => {
  const n = node('n1', { zone: 'a', gpus: '4', os: 'linux' });
  test('nodeSelector labels must all be there', () => {
    expect(requiredNodeAffinityMatches({ os: 'linux' }, undefined, n)).toBe(true);
    expect(requiredNodeAffinityMatches({ os: 'linux', zone: 'b' }, undefined, n)).toBe(false);
  });
  test('terms are ORed, expressions within a term ANDed; Gt and Lt compare integers', () => {
    expect(requiredNodeAffinityMatches(undefined, required(
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
      { matchExpressions: [{ key: 'gpus', operator: 'Gt', values: ['2'] }, { key: 'ssd', operator: 'DoesNotExist' }] },
    ), n)).toBe(true);
    expect(requiredNodeAffinityMatches(undefined, required({ matchExpressions: [{ key: 'gpus', operator: 'Lt', values: ['2'] }] }), n)).toBe(false);
    expect(requiredNodeAffinityMatches(undefined, required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['b'] }, { key: 'os', operator: 'Exists' }] }), n)).toBe(true);
  });
  test('matchFields select on the node\'s name, one value each', () => {
    expect(requiredNodeAffinityMatches(undefined, required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }), n)).toBe(true);
    expect(requiredNodeAffinityMatches(undefined, required({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }), n)).toBe(false);
    // two values: a parse error, which never matches
    expect(requiredNodeAffinityMatches(undefined, required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1', 'n2'] }] }), n)).toBe(false);
  });
  test('an empty term selects nothing, no terms select nothing, a term that does not parse never matches', () => {
    expect(requiredNodeAffinityMatches(undefined, required({}), n)).toBe(false);
    expect(requiredNodeAffinityMatches(undefined, required(), n)).toBe(false);
    expect(requiredNodeAffinityMatches(undefined, required({ matchExpressions: [{ key: 'zone', operator: 'In', values: [] }] }, { matchExpressions: [{ key: 'os', operator: 'Exists' }] }), n)).toBe(true);
    expect(requiredNodeAffinityMatches(undefined, required({ matchExpressions: [{ key: 'gpus', operator: 'Gt', values: ['x'] }] }), n)).toBe(false);
  });
});

describe('daemon pod tolerations (AddOrUpdateDaemonPodTolerations)', () => {
  test('the node-problem taints are tolerated forever; network-unavailable only with host networking', () => {
    const t = daemonPodTolerations([], false);
    expect(t.map((x) => `${x.key}:${x.effect}`)).toEqual([
      'node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule', 'node.kubernetes.io/pid-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    expect(daemonPodTolerations([], true).map((x) => x.key)).toContain('node.kubernetes.io/network-unavailable');
  });
  test('a user\'s toleration of the same taint with seconds is replaced in place; others are kept in order', () => {
    const mine = [{ key: 'dedicated', operator: 'Equal', value: 'agents', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }];
    const t = daemonPodTolerations(mine, false);
    expect(t[0]).toEqual(mine[0]);
    expect(t[1]).toEqual({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' });
    expect(t).toHaveLength(7);
  });
});

describe('NodeShouldRunDaemonPod', () => {
  const spec = { nodeSelector: { role: 'agent' } };
  test('a node the selector picks runs it; another does not', () => {
    expect(nodeShouldRunDaemonPod(node('a', { role: 'agent' }), spec)).toEqual({ shouldRun: true, shouldContinueRunning: true });
    expect(nodeShouldRunDaemonPod(node('b'), spec)).toEqual({ shouldRun: false, shouldContinueRunning: false });
  });
  test('a NoSchedule taint keeps new pods off but lets a running one stay; NoExecute sends it away', () => {
    expect(nodeShouldRunDaemonPod(node('a', { role: 'agent' }, [{ key: 'k', effect: 'NoSchedule' }]), spec)).toEqual({ shouldRun: false, shouldContinueRunning: true });
    expect(nodeShouldRunDaemonPod(node('a', { role: 'agent' }, [{ key: 'k', effect: 'NoExecute' }]), spec)).toEqual({ shouldRun: false, shouldContinueRunning: false });
    expect(nodeShouldRunDaemonPod(node('a', { role: 'agent' }, [{ key: 'k', effect: 'PreferNoSchedule' }]), spec).shouldRun).toBe(true);
  });
  test('the default tolerations let daemons onto cordoned, not-ready and pressured nodes', () => {
    const taints = [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }, { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }];
    expect(nodeShouldRunDaemonPod(node('a', {}, taints), {}).shouldRun).toBe(true);
    expect(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), {}).shouldRun).toBe(false);
    expect(nodeShouldRunDaemonPod(node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), { hostNetwork: true }).shouldRun).toBe(true);
  });
  test('a template naming a node runs only there', () => {
    expect(nodeShouldRunDaemonPod(node('a'), { nodeName: 'b' }).shouldRun).toBe(false);
    expect(nodeShouldRunDaemonPod(node('b'), { nodeName: 'b' }).shouldRun).toBe(true);
  });
  test('untolerated taints: the first one the filter keeps', () => {
    expect(untoleratedTaint([{ key: 'a', effect: 'NoSchedule' }, { key: 'b', effect: 'NoExecute' }], [{ key: 'a', operator: 'Exists' }], () => true)).toEqual({ key: 'b', effect: 'NoExecute' });
  });
});

describe('daemon pods', () => {
  test('pinned to their node by the one required term, the rest of the affinity kept', () => {
    const a = pinnedAffinity({ podAntiAffinity: { x: 1 }, nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Exists' }] }] }, preferredDuringSchedulingIgnoredDuringExecution: [] } }, 'n1');
    expect(a).toEqual({ podAntiAffinity: { x: 1 }, nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [],
    } });
    expect(targetNodeName({ affinity: a })).toBe('n1');
    expect(targetNodeName({ nodeName: 'n2', affinity: a })).toBe('n2');
    expect(targetNodeName({})).toBeUndefined();
  });
  test('updated: the revision hash label, or the deprecated template generation', () => {
    expect(isPodUpdated({ 'controller-revision-hash': 'h1' }, 'h1')).toBe(true);
    expect(isPodUpdated({ 'controller-revision-hash': 'h0' }, 'h1')).toBe(false);
    expect(isPodUpdated({ 'pod-template-generation': '3' }, 'h1', '3')).toBe(true);
  });
  test('surge and unavailability counts, rounded up; OnDelete has neither', () => {
    expect(surgeCount({ type: 'RollingUpdate', maxSurge: '10%' }, 25)).toEqual({ value: 3 });
    expect(surgeCount({ type: 'RollingUpdate', maxUnavailable: 1 }, 25)).toEqual({ value: 0 });
    expect(unavailableCount({ type: 'RollingUpdate', maxUnavailable: 1 }, 25)).toEqual({ value: 1 });
    expect(unavailableCount({ type: 'OnDelete' }, 25)).toEqual({ value: 0 });
  });
});
