import { randomUUID } from 'node:crypto';
import type { DeploymentActivities } from '../../activities/deployment/activities';
import { deploymentWouldAct } from '../../workflows/deployment/would-act';
import { deploymentWorkflow, type DeploymentEvent, type DeploymentWorkflowInput } from '../../workflows/deployment/workflow';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { randomDeploymentCase } from '../support/deployment-sim';
import { settledAfter, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The Deployment signal gate may only err toward sending: wherever it would hold an event, the
 * workflow's reconcile, planning from the same cache snapshot, must call no activity. Random
 * Deployments (either strategy, paused or not, with or without a progress deadline, a few
 * revisions deep) are run to convergence on the planner's fake cluster, then most are disturbed in
 * one way (a new template or size, a ReplicaSet losing a ready pod, a status drifting, an orphan to
 * adopt, a ReplicaSet's echo) and judged by the gate, and the same snapshot goes to the real
 * workflow on the Temporal dev server with in-process activities that record every call.
 */

const base = `deployment-gate-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'deployment');
const CASES = 80;

const calls = new Map<string, string[]>();
const record = (name: string, what: string) => calls.set(name, [...(calls.get(name) ?? []), what]);

const activities: Pick<DeploymentActivities, 'observeDeployment' | 'applyDeploymentAction' | 'adoptReplicaSets' | 'releaseReplicaSets'> = {
  async observeDeployment(key) {
    record(key.name, 'observeDeployment');
    return { replicaSets: [], activePodsByReplicaSet: {} };
  },
  async applyDeploymentAction(req) {
    record(req.deployment.name, `applyDeploymentAction:${req.action.type}`);
    return { ok: true, resourceVersion: `${req.deployment.resourceVersion}1` };
  },
  async adoptReplicaSets(req) {
    record(req.deployment.name, 'adoptReplicaSets');
    return { changed: req.replicaSets.length };
  },
  async releaseReplicaSets(req) {
    record(req.deployment.name, 'releaseReplicaSets');
    return { changed: req.replicaSets.length };
  },
};

const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });

test(`on ${CASES} random snapshots, every one the gate holds is one the workflow's reconcile calls no activity for`, async () => {
  const cases = Array.from({ length: CASES }, (_, n) => randomDeploymentCase(n));
  const verdicts: Array<{ name: string; held: boolean; calls: string[] }> = [];
  for (let i = 0; i < cases.length; i += 10) {
    await Promise.all(cases.slice(i, i + 10).map(async (c) => {
      const d = c.snapshot.deployment!;
      const held = !deploymentWouldAct(c.snapshot, Date.now());
      const args: DeploymentWorkflowInput = { namespace: d.namespace, name: d.name, uid: d.uid };
      const handle = await env().client.workflow.signalWithStart(deploymentWorkflow, {
        workflowId: `deployment/${d.namespace}/${d.name}`, taskQueue, args: [args], signal: OBJECT_EVENT_SIGNAL,
        signalArgs: [{ changed: true, snapshot: c.snapshot } satisfies DeploymentEvent],
      });
      await settledAfter(handle, 1);
      await handle.terminate('case judged');
      verdicts.push({ name: c.name, held, calls: calls.get(c.name) ?? [] });
    }));
  }
  expect(verdicts.filter((v) => v.held && v.calls.length)).toEqual([]);
  const held = verdicts.filter((v) => v.held).length;
  expect(held).toBeGreaterThanOrEqual(CASES / 4);
  expect(CASES - held).toBeGreaterThanOrEqual(CASES / 4);
}, 240_000);

test('a resync reads the API afresh rather than planning from the last snapshot, so what a gate held reaches the workflow there', async () => {
  let c: ReturnType<typeof randomDeploymentCase> | undefined;
  for (let n = CASES; n < CASES + 200 && !c; n++) {
    const k = randomDeploymentCase(n);
    if (!deploymentWouldAct(k.snapshot, Date.now())) c = k;
  }
  expect(c).toBeDefined();
  const d = c!.snapshot.deployment!;
  const args: DeploymentWorkflowInput = { namespace: d.namespace, name: d.name, uid: d.uid, tuning: { resyncMs: 1000 } };
  const handle = await env().client.workflow.signalWithStart(deploymentWorkflow, {
    workflowId: `deployment/${d.namespace}/${d.name}`, taskQueue, args: [args], signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [{ changed: true, snapshot: c!.snapshot } satisfies DeploymentEvent],
  });
  await settledAfter(handle, 1);
  // it planned from the snapshot: nothing read, nothing written
  expect(calls.get(c!.name) ?? []).toEqual([]);
  // the resync reads the API (whose answer here is that the Deployment is gone, which ends the run)
  await handle.result();
  expect(calls.get(c!.name)).toEqual(['observeDeployment']);
}, 60_000);
