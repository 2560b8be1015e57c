import { mergeReplicaOwnerEvents } from '../../activities/replicaset/merge';
import { podSummary, replicaOwner } from '../../activities/kube/projections';
import type { PodSummary } from '../../workflows/replicaset/types';

const pod = (uid: string, rv: string, labels: Record<string, string> = {}): PodSummary =>
  podSummary({ metadata: { uid, name: `p-${uid}`, namespace: 'ns', resourceVersion: rv, labels } });

describe('merging events for one key into one signal', () => {
  test('the latest state of each pod wins; a later delete removes an earlier update', () => {
    const m = mergeReplicaOwnerEvents({ pods: [pod('a', '1'), pod('b', '1')] }, { pods: [pod('a', '2')], podsDeleted: ['b'] });
    expect(m.pods?.map((p) => [p.uid, p.resourceVersion])).toEqual([['a', '2']]);
    expect(m.podsDeleted).toEqual(['b']);
  });

  test('an update after a delete of the same uid keeps the pod (it was re-listed)', () => {
    const m = mergeReplicaOwnerEvents({ podsDeleted: ['a'] }, { pods: [pod('a', '3')] });
    expect(m.pods?.map((p) => p.uid)).toEqual(['a']);
    expect(m.podsDeleted).toBeUndefined();
  });

  test('owner: later wins; relist and delete marks stick', () => {
    const o1 = replicaOwner('ReplicaSet', { metadata: { uid: 'o', name: 'web', namespace: 'ns', resourceVersion: '1' }, spec: { replicas: 1 } });
    const o2 = { ...o1, resourceVersion: '2', replicas: 3 };
    const m = mergeReplicaOwnerEvents({ owner: o1, relist: true }, { owner: o2 });
    expect(m.owner?.replicas).toBe(3);
    expect(m.relist).toBe(true);
    expect(mergeReplicaOwnerEvents({ ownerDeletedUid: 'o' }, { pods: [pod('x', '1')] }).ownerDeletedUid).toBe('o');
  });
});

describe('projections', () => {
  test('a pod summary keeps what decisions need and nothing else', () => {
    const p = podSummary({
      metadata: {
        uid: 'u', name: 'web-abcde', namespace: 'ns', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { app: 'web' }, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-5', other: 'x' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'o', controller: true }],
      },
      spec: { nodeName: 'n1', initContainers: [{ name: 'side', restartPolicy: 'Always' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:05Z' }],
        containerStatuses: [{ restartCount: 2 }, { restartCount: 4 }],
        initContainerStatuses: [{ name: 'side', restartCount: 1 }],
      },
    });
    expect(p).toMatchObject({ phase: 'Running', ready: true, readySince: '2026-01-01T00:00:05Z', nodeName: 'n1', restartCount: 4, sidecarRestartCount: 1, deletionCost: -5 });
    expect(JSON.stringify(p)).not.toContain('other');
  });

  test("a ReplicationController's empty selector defaults to its template labels, replicas to 1", () => {
    const o = replicaOwner('ReplicationController', { metadata: { uid: 'o', name: 'rc', namespace: 'ns' }, spec: { template: { metadata: { labels: { a: 'b' } }, spec: {} } } });
    expect(o.selector).toEqual({ matchLabels: { a: 'b' } });
    expect(o.replicas).toBe(1);
    expect(o.apiVersion).toBe('v1');
  });
});
