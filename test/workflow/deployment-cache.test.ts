import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { deploymentView, replicaSetView } from '../../activities/deployment/projections';
import type { DeploymentActivities, DeploymentWrite, WriteResult } from '../../activities/deployment/activities';
import type { KubeObject } from '../../activities/kube/projections';
import { planDeployment } from '../../workflows/deployment/controller';
import type { DeploymentObservation } from '../../workflows/deployment/cache';
import type { DeploymentAction } from '../../workflows/deployment/types';
import { deploymentWorkflow, type DeploymentEvent } from '../../workflows/deployment/workflow';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { settledAfter, workflowEnvPerSuite } from '../support/workflow-env';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';

/*
 * The Deployment workflow fed from the shared cache, on the Temporal dev server: a reconcile plans
 * from the snapshot its signal carries, and reads the API (observeDeployment) only when the
 * snapshot is older than the workflow's own last write. Activities are in-process fakes that
 * count calls; the planner and workflow are the real ones.
 */

const NS = 'cache';
const NAME = 'web';
const DEPLOYMENT_UID = 'd-uid';

function deploymentObject(): KubeObject {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { namespace: NS, name: NAME, uid: DEPLOYMENT_UID, generation: 1, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: NAME } },
      template: { metadata: { labels: { app: NAME } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } },
    },
    status: {},
  };
}

/**
 * A Deployment and its one ReplicaSet as they are once the controller has nothing left to do: the
 * real planner is run against a world where every ReplicaSet is fully available, its writes applied,
 * until it plans nothing.
 */
function settledWorld(now: number): { deployment: KubeObject; replicaSet: KubeObject } {
  const d = deploymentObject();
  let rs: KubeObject | undefined;
  for (let round = 0; round < 10; round++) {
    const plan = planDeployment({ deployment: deploymentView(d), replicaSets: rs ? [replicaSetView(rs)] : [], oldPodsRunning: 0, now });
    if (!plan.actions.length) return { deployment: d, replicaSet: rs! };
    for (const a of plan.actions) rs = applyToWorld(d, rs, a);
  }
  throw new Error('the planner did not settle in 10 rounds');
}

function applyToWorld(d: KubeObject, rs: KubeObject | undefined, a: DeploymentAction): KubeObject | undefined {
  const full = (n: number) => ({ replicas: n, fullyLabeledReplicas: n, readyReplicas: n, availableReplicas: n, observedGeneration: 1 });
  switch (a.type) {
    case 'createReplicaSet':
      return {
        apiVersion: 'apps/v1', kind: 'ReplicaSet',
        metadata: { namespace: NS, name: a.name, uid: 'rs-uid', generation: 1, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', labels: a.labels, annotations: a.annotations, ownerReferences: a.ownerReferences },
        spec: { replicas: a.replicas, minReadySeconds: a.minReadySeconds, selector: a.selector, template: a.template },
        status: full(a.replicas),
      };
    case 'scaleReplicaSet':
      return { ...rs!, metadata: { ...rs!.metadata, annotations: a.annotations }, spec: { ...rs!.spec, replicas: a.replicas }, status: full(a.replicas) };
    case 'updateReplicaSetAnnotations':
      return { ...rs!, metadata: { ...rs!.metadata, annotations: a.annotations } };
    case 'updateDeploymentAnnotations':
      d.metadata = { ...d.metadata, annotations: { ...d.metadata?.annotations, ...a.annotations } };
      return rs;
    case 'updateDeploymentStatus':
      d.status = a.status as unknown as Record<string, unknown>;
      return rs;
    default:
      throw new Error(`a settled world has no ${a.type}`);
  }
}

const world = settledWorld(Date.now());

/** The settled world as a cache snapshot (or an API read) at the given watch positions. */
function observation(versions: { deployments: string; replicaSets: string }, change?: (d: KubeObject) => void): DeploymentObservation {
  const d = structuredClone(world.deployment);
  d.metadata = { ...d.metadata, resourceVersion: versions.deployments };
  change?.(d);
  const rs = replicaSetView(world.replicaSet);
  return { deployment: deploymentView(d), replicaSets: [rs], activePodsByReplicaSet: { [rs.uid]: 1 }, versions };
}

const observed: number[] = [];
const writes: DeploymentWrite[] = [];
/** what the fake API answers a read with, and the version it gives the next write */
let apiVersions = { deployments: '1', replicaSets: '1' };
let nextWriteVersion = '1';
/** the fake API has no Deployment any more */
let apiGone = false;

const activities: Pick<DeploymentActivities, 'observeDeployment' | 'applyDeploymentAction' | 'adoptReplicaSets' | 'releaseReplicaSets'> = {
  async observeDeployment() {
    observed.push(Date.now());
    return apiGone ? { replicaSets: [], activePodsByReplicaSet: {}, versions: apiVersions } : observation(apiVersions);
  },
  async applyDeploymentAction(req): Promise<WriteResult> {
    writes.push(req);
    return { ok: true, resourceVersion: nextWriteVersion };
  },
  async adoptReplicaSets() {
    throw new Error('nothing to adopt in a settled world');
  },
  async releaseReplicaSets() {
    throw new Error('nothing to release in a settled world');
  },
};
const base = `deployment-cache-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'deployment');
const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });


test('a reconcile plans from the signal\'s snapshot, and reads the API only when the snapshot predates its own write', async () => {
  const signal = (h: WorkflowHandle, e: DeploymentEvent) => h.signal<[DeploymentEvent]>(OBJECT_EVENT_SIGNAL, e);

  // 1. a snapshot of a settled Deployment: planned from as it is, nothing read, nothing written
  const h = await env().client.workflow.signalWithStart(deploymentWorkflow, {
    workflowId: `deployment/${NS}/${NAME}`,
    taskQueue,
    args: [{ namespace: NS, name: NAME, uid: DEPLOYMENT_UID }],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [{ snapshot: observation({ deployments: '10', replicaSets: '10' }) } satisfies DeploymentEvent],
  });
  await settledAfter(h, 1);
  expect(observed).toHaveLength(0);
  expect(writes).toHaveLength(0);

  // 2. a snapshot whose status lags its generation: one status write, planned from the snapshot
  nextWriteVersion = '12';
  await signal(h, { snapshot: observation({ deployments: '11', replicaSets: '10' }, (d) => { (d.status as Record<string, unknown>).observedGeneration = 0; }) });
  await settledAfter(h, 2);
  expect(observed).toHaveLength(0);
  expect(writes.map((w) => w.action.type)).toEqual(['updateDeploymentStatus']);

  // 3. a snapshot from before that write (version 11 < 12): the API is read instead
  apiVersions = { deployments: '12', replicaSets: '10' };
  await signal(h, { snapshot: observation({ deployments: '11', replicaSets: '10' }) });
  await settledAfter(h, 3);
  expect(observed).toHaveLength(1);

  // 4. a snapshot that has caught up with the write: planned from again, no read
  await signal(h, { snapshot: observation({ deployments: '13', replicaSets: '10' }) });
  await settledAfter(h, 4);
  expect(observed).toHaveLength(1);
  expect(writes).toHaveLength(1);

  // 5. the Deployment is deleted: the run reads the API, finds nothing and ends
  apiGone = true;
  await signal(h, { deletedUid: DEPLOYMENT_UID });
  await h.result();
  expect(observed).toHaveLength(2);
  expect(writes).toHaveLength(1);
}, 120_000);
