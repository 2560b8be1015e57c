import { prune } from '../../activities/informers/fields';
import { JOB_POD_FIELDS, JOB_VIEW_FIELDS, jobPod, jobView } from '../../activities/job/projections';
import { POD_SUMMARY_FIELDS, REPLICA_OWNER_FIELDS, podSummary, replicaOwner, type KubeObject } from '../../activities/kube/projections';
import { DAEMON_NODE_FIELDS, DAEMON_POD_FIELDS, REVISION_FIELDS, daemonNodeView, daemonPodView, revisionView } from '../../activities/daemonset/projections';
import { DISRUPTION_POD_FIELDS, PDB_FIELDS, disruptionTargetView, pdbPodView, pdbView } from '../../activities/disruption/projections';
import { STATEFUL_POD_FIELDS, STATEFUL_REVISION_FIELDS, statefulPodView, statefulRevisionView } from '../../activities/statefulset/projections';
import { DEPLOYMENT_VIEW_FIELDS, REPLICA_SET_VIEW_FIELDS, deploymentView, replicaSetView } from '../../activities/deployment/projections';

/**
 * The shared cache keeps of an object only what its readers' masks name: each projection must read
 * nothing outside its own mask, or it would see `undefined` at run time. Each fixture sets every
 * field its projection reads, plus fields no one reads.
 */
const richPod = (): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: {
    namespace: 'a', name: 'p', uid: 'u', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-01-02T00:00:00Z',
    labels: { app: 'web' }, annotations: { 'controller.kubernetes.io/pod-deletion-cost': '5', other: 'x' },
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'ju', controller: true, blockOwnerDeletion: true }],
    finalizers: ['batch.kubernetes.io/job-tracking'],
    ...{ deletionGracePeriodSeconds: 30 },
  },
  spec: {
    nodeName: 'n1', containers: [{ name: 'c', image: 'x' }], initContainers: [{ name: 's', restartPolicy: 'Always' }, { name: 'i' }],
    volumes: [{ name: 'v' }],
  },
  status: {
    phase: 'Failed', podIP: '10.0.0.1',
    conditions: [{ type: 'Ready', status: 'True', reason: 'R', message: 'M', lastTransitionTime: '2026-01-01T00:00:01Z' }, { type: 'DisruptionTarget', status: 'True' }],
    containerStatuses: [{ name: 'c', restartCount: 3, image: 'x', state: { terminated: { exitCode: 2, reason: 'Error', finishedAt: '2026-01-01T00:00:02Z' } } }],
    initContainerStatuses: [{ name: 's', restartCount: 4, state: { terminated: { exitCode: 0 } } }, { name: 'i', restartCount: 1 }],
  },
});

const richJob = (): KubeObject => ({
  metadata: { namespace: 'a', name: 'j', uid: 'ju', resourceVersion: '3', generation: 2, creationTimestamp: '2026-01-01T00:00:00Z', labels: { a: 'b' } },
  spec: {
    parallelism: 2, completions: 4, completionMode: 'Indexed', backoffLimit: 1, backoffLimitPerIndex: 1, maxFailedIndexes: 2, activeDeadlineSeconds: 60,
    podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
    successPolicy: { rules: [{ succeededCount: 1 }] }, suspend: true, podReplacementPolicy: 'Failed', selector: { matchLabels: { x: 'y' } },
    managedBy: 'kubernetes.io/job-controller', template: { metadata: { labels: { x: 'y' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } },
  },
  status: { active: 1, succeeded: 2, conditions: [{ type: 'Suspended', status: 'True' }] },
});

const richReplicaSet = (): KubeObject => ({
  metadata: { namespace: 'a', name: 'r', uid: 'ru', resourceVersion: '9', generation: 3 },
  spec: { replicas: 3, minReadySeconds: 5, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } } },
  status: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, terminatingReplicas: 1, observedGeneration: 2, conditions: [] },
});

const richBudget = (): KubeObject => ({
  metadata: { namespace: 'a', name: 'b', uid: 'bu', resourceVersion: '4', generation: 2 },
  spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: '20%', unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  status: {
    observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 5, desiredHealthy: 4, expectedPods: 5, disruptedPods: { p: '2026-01-01T00:00:00Z' },
    conditions: [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 }],
  },
});

const richNode = (): KubeObject => ({
  metadata: { name: 'n1', uid: 'nu', resourceVersion: '5', labels: { role: 'agent' } },
  spec: { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule', timeAdded: '2026-01-01T00:00:00Z' }], podCIDR: '10.0.0.0/24' },
  status: { conditions: [{ type: 'Ready', status: 'True' }], capacity: { pods: '110' } },
});

const richDaemonPod = (): KubeObject => {
  const p = richPod();
  (p.spec as Record<string, unknown>).affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } };
  p.metadata!.labels = { app: 'agent', 'controller-revision-hash': 'h1', 'pod-template-generation': '2' };
  return p;
};

const richRevision = (): KubeObject => ({
  metadata: { namespace: 'a', name: 'agent-h1', uid: 'ru', labels: { 'controller-revision-hash': 'h1' }, creationTimestamp: '2026-01-01T00:00:00Z',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'du', controller: true }] },
  ...{ data: { spec: { template: { $patch: 'replace', spec: { containers: [{ name: 'c' }] } } } }, revision: 3 },
});

test.each([
  ['daemonNodeView', DAEMON_NODE_FIELDS, daemonNodeView, richNode],
  ['daemonPodView', DAEMON_POD_FIELDS, daemonPodView, richDaemonPod],
  ['revisionView', REVISION_FIELDS, revisionView, richRevision],
  ['statefulRevisionView', STATEFUL_REVISION_FIELDS, statefulRevisionView, richRevision],
  ['statefulPodView', STATEFUL_POD_FIELDS, statefulPodView, () => {
    const p = richPod();
    (p.spec as Record<string, unknown>).volumes = [{ name: 'www', persistentVolumeClaim: { claimName: 'www-web-0', readOnly: false } }, { name: 'v', emptyDir: {} }];
    return p;
  }],
  ['pdbView', PDB_FIELDS, pdbView, richBudget],
  ['pdbPodView', DISRUPTION_POD_FIELDS, pdbPodView, richPod],
  ['disruptionTargetView', DISRUPTION_POD_FIELDS, disruptionTargetView, () => {
    const p = richPod();
    (p.status as { conditions: Array<Record<string, string>> }).conditions[1] = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', lastTransitionTime: '2026-01-01T00:00:03Z' };
    return p;
  }],
  ['podSummary', POD_SUMMARY_FIELDS, podSummary, richPod],
  ['jobPod', JOB_POD_FIELDS, jobPod, richPod],
  ['jobView', JOB_VIEW_FIELDS, jobView, richJob],
  ['replicaOwner', REPLICA_OWNER_FIELDS, (o: KubeObject) => replicaOwner('ReplicaSet', o), richReplicaSet],
  ['replicaSetView', REPLICA_SET_VIEW_FIELDS, replicaSetView, richReplicaSet],
  ['deploymentView', DEPLOYMENT_VIEW_FIELDS, deploymentView, richReplicaSet],
] as const)('%s reads nothing its mask drops', (_name, mask, project, fixture) => {
  const full = (project as (o: KubeObject) => unknown)(fixture());
  expect((project as (o: KubeObject) => unknown)(prune(fixture(), mask) as KubeObject)).toEqual(full);
});

test('the masks do drop what no reader needs', () => {
  const kept = prune(richPod(), POD_SUMMARY_FIELDS) as { spec: Record<string, unknown>; status: Record<string, unknown> };
  expect(kept.spec.containers).toBeUndefined();
  expect(kept.status.podIP).toBeUndefined();
});
