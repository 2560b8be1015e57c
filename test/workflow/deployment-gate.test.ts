import { randomUUID } from 'node:crypto';
import type { DeploymentActivities } from '../../activities/deployment/activities';
import type { DeploymentObservation } from '../../workflows/deployment/cache';
import type { DeploymentView, ReplicaSetView } from '../../workflows/deployment/types';
import { REVISION_ANNOTATION } from '../../workflows/deployment/util';
import { deploymentWouldAct } from '../../workflows/deployment/would-act';
import { deploymentWorkflow, type DeploymentEvent, type DeploymentWorkflowInput } from '../../workflows/deployment/workflow';
import { formatTime } from '../../workflows/replicaset/logic';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { SEC, Sim, deployment, template } from '../support/deployment-sim';
import { settledAfter, workflowEnvPerSuite } from '../support/workflow-env';
import { seededRandom } from '../../chaos/storm';

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

/** A converged Deployment, perhaps disturbed, as the cache's snapshot of it. */
function randomCase(n: number): { name: string; snapshot: DeploymentObservation } {
  // seeded: the same cases on every run, so a failure names a case that can be run again
  const r = seededRandom(5000 + n);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const name = `d-${n}`;
  const over: Partial<DeploymentView> = {
    name, uid: `${name}-uid`, namespace: 'gate', selector: { matchLabels: { app: name } }, template: template('img:1', { app: name }),
    replicas: pick([0, 1, 2, 3, 5]),
    strategy: pick([{ type: 'RollingUpdate' as const, maxSurge: '25%', maxUnavailable: '25%' }, { type: 'RollingUpdate' as const, maxSurge: 1, maxUnavailable: 0 }, { type: 'Recreate' as const }]),
    progressDeadlineSeconds: pick([600, 600, null]),
    revisionHistoryLimit: pick([10, 1, 0]),
  };
  // the planner's clock is the workflow's: start the fake cluster a little in the past so that
  // no condition it writes is dated after the moment the workflow plans
  const sim = new Sim(deployment(over), [], Date.now() - 120 * SEC, true);
  sim.converge();
  // a few revisions deep
  for (let i = 0, k = pick([0, 0, 1, 2]); i < k; i++) {
    sim.setTemplate(template(`img:${i + 2}`, { app: name }));
    sim.converge();
  }
  if (r() < 0.15) {
    sim.d = { ...sim.d, paused: true, generation: sim.d.generation + 1 };
    sim.converge();
  }
  const disturb = pick(['none', 'none', 'none', 'echo', 'template', 'replicas', 'unready', 'status', 'orphan', 'revision'] as const);
  const rss: ReplicaSetView[] = sim.rss.map((x) => ({ ...x, status: { ...x.status } }));
  let d = sim.d;
  const live = rss.find((x) => x.replicas > 0) ?? rss[0];
  switch (disturb) {
    case 'echo': // a ReplicaSet's own status write seen again: a new version, nothing else
      if (live) live.resourceVersion = String(Number(live.resourceVersion) + 7);
      break;
    case 'template':
      d = { ...d, template: template('img:new', { app: name }), generation: d.generation + 1 };
      break;
    case 'replicas':
      d = { ...d, replicas: d.replicas + 1, generation: d.generation + 1 };
      break;
    case 'unready':
      if (live && live.status.readyReplicas > 0) live.status = { ...live.status, readyReplicas: live.status.readyReplicas - 1, availableReplicas: live.status.availableReplicas - 1 };
      break;
    case 'status':
      d = { ...d, status: { ...d.status, updatedReplicas: d.status.updatedReplicas + 1 } };
      break;
    case 'orphan':
      rss.push({ ...(live ?? rss[0]), name: `${name}-orphan`, uid: `${name}-orphan-uid`, ownerReferences: [], creationTimestamp: formatTime(Date.now() - 60 * SEC), replicas: 0,
        status: { replicas: 0, readyReplicas: 0, availableReplicas: 0, fullyLabeledReplicas: 0, observedGeneration: 1 } });
      break;
    case 'revision':
      if (live) live.annotations = { ...live.annotations, [REVISION_ANNOTATION]: '99' };
      break;
  }
  return { name, snapshot: { deployment: d, replicaSets: rss, activePodsByReplicaSet: {}, versions: { deployments: '1000', replicaSets: '1000' } } };
}

test(`on ${CASES} random snapshots, every one the gate holds is one the workflow's reconcile calls no activity for`, async () => {
  const cases = Array.from({ length: CASES }, (_, n) => randomCase(n));
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
  let c: ReturnType<typeof randomCase> | undefined;
  for (let n = CASES; n < CASES + 200 && !c; n++) {
    const k = randomCase(n);
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
