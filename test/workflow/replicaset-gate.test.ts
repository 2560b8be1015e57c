import { randomUUID } from 'node:crypto';
import type { CreatePodsRequest, DeletePodsRequest, OwnershipRequest, ReplicaActivities, StatusUpdateRequest } from '../../activities/replicaset/activities';
import { replicaOwnerSignalGate, replicaRoutes } from '../../activities/replicaset/routes';
import type { InformerInput } from '../../activities/informers/family';
import type { Signaller, Target } from '../../activities/informers/signaller';
import { podSummary, replicaOwner, type KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { calculateStatus, classifyPods, filterActivePods, isControlledBy } from '../../workflows/replicaset/logic';
import type { ReplicaStatus } from '../../workflows/replicaset/types';
import { replicaOwnerWorkflow, type ReplicaOwnerEvent, type ReplicaOwnerWorkflowInput } from '../../workflows/replicaset/workflow';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { routeHarness } from '../support/routes';
import { settledAfter, workflowEnvPerSuite } from '../support/workflow-env';
import { seededRandom } from '../../chaos/storm';

/*
 * The ReplicaSet signal gate may only err toward sending: wherever it would hold an event, the
 * workflow's own reconcile, given the same cache state, must call no activity. Random cache
 * states (owned pods, orphans that match and do not, other owners' pods, every phase, readiness
 * and deletion, converged and stale statuses) go into a real informer cache, where the gate judges
 * them; the same state goes to the real workflow on the Temporal dev server, as the snapshot the
 * informer would send it, with in-process activities that record every call.
 */

const base = `replicaset-gate-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'replicaset');
const CASES = 120;

/** Activity calls by owner name. */
const calls = new Map<string, string[]>();
const record = (owner: string, what: string) => calls.set(owner, [...(calls.get(owner) ?? []), what]);
/** What each case's API would answer to an observation (the gate's snapshot makes one unneeded). */
const world = new Map<string, { owner: KubeObject; pods: KubeObject[] }>();

const activities: Pick<ReplicaActivities, 'observeReplicaOwner' | 'createPods' | 'updateReplicaOwnerStatus' | 'adoptPods' | 'releasePods' | 'deletePods'> = {
  async observeReplicaOwner(key) {
    record(key.name, 'observeReplicaOwner');
    const w = world.get(key.name)!;
    return { owner: replicaOwner('ReplicaSet', w.owner), pods: w.pods.map(podSummary).filter((p) => !p.ownerReferences.some((r) => r.controller) || p.ownerReferences.some((r) => r.uid === w.owner.metadata?.uid)) };
  },
  async createPods(req: CreatePodsRequest) {
    record(req.owner.name, 'createPods');
    return { created: [], failed: [] };
  },
  async deletePods(req: DeletePodsRequest) {
    record(req.owner.name, 'deletePods');
    return { deleted: req.pods.map((p) => p.uid), failed: [] };
  },
  async adoptPods(req: OwnershipRequest) {
    record(req.owner.name, 'adoptPods');
    return { updated: [], skipped: [] };
  },
  async releasePods(req: OwnershipRequest) {
    record(req.owner.name, 'releasePods');
    return { updated: [], skipped: [] };
  },
  async updateReplicaOwnerStatus(req: StatusUpdateRequest) {
    record(req.owner.name, 'updateReplicaOwnerStatus');
    return { updated: true as const, resourceVersion: `${req.owner.resourceVersion}1` };
  },
};

const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });

interface Case {
  n: number;
  owner: KubeObject;
  pods: KubeObject[];
}

/** One random owner and the pods of its namespace, as a reflector lists them. */
function randomCase(n: number): Case {
  // seeded: the same cases on every run, so a failure names a case that can be run again
  const r = seededRandom(1000 + n);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const ns = `gate-${n}`;
  const name = `rs-${n}`;
  const uid = `${name}-uid`;
  const now = Date.now();
  // minReadySeconds 0 or 10 minutes, and readiness an hour old or a second old: no availability
  // flips while a case runs, so the gate and the workflow judge the same moment
  const minReadySeconds = pick([0, 0, 600]);
  const generation = pick([1, 2]);
  const anyReplicas = pick([0, 1, 2, 3, 3, 4]);
  const labels = { app: name };
  const pods: KubeObject[] = [];
  const count = pick([0, 1, 2, 3, 3, 4, 5]);
  for (let i = 0; i < count; i++) {
    const kind = pick(['owned', 'owned', 'owned', 'owned', 'owned', 'owned', 'orphan', 'orphan-unmatched', 'other-owner', 'owned-unmatched'] as const);
    const phase = pick(['Running', 'Running', 'Running', 'Running', 'Running', 'Running', 'Pending', 'Succeeded', 'Failed'] as const);
    const ready = phase === 'Running' && r() < 0.8;
    const ownerRef = (u: string, nm: string) => [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: nm, uid: u, controller: true, blockOwnerDeletion: true }];
    pods.push({
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        namespace: ns, name: `${name}-p${i}`, uid: `${name}-p${i}-uid`, resourceVersion: String(100 + i), creationTimestamp: new Date(now - 3_600_000 + i * 1000).toISOString(),
        labels: kind === 'orphan-unmatched' || kind === 'owned-unmatched' ? { app: 'other' } : labels,
        ...(kind === 'owned' || kind === 'owned-unmatched' ? { ownerReferences: ownerRef(uid, name) } : kind === 'other-owner' ? { ownerReferences: ownerRef('someone-else', 'other') } : {}),
        ...(r() < 0.1 ? { deletionTimestamp: new Date(now - 1000).toISOString() } : {}),
        ...(r() < 0.3 ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(pick([-5, 0, 7])) } } : {}),
      },
      spec: r() < 0.9 ? { nodeName: 'node-1' } : {},
      status: {
        phase,
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: new Date(now - pick([3_600_000, 1000])).toISOString() }],
        containerStatuses: [{ restartCount: pick([0, 0, 1, 3]) }],
      },
    });
  }
  // most owners want as many pods as they have active (nothing to create or delete), the rest any number
  const summaries = pods.map(podSummary);
  const activeOwned = (replicas: number) => {
    const o = replicaOwner('ReplicaSet', ownerObject(replicas, {}));
    return filterActivePods(classifyPods(o, summaries).activeOwned).length;
  };
  const replicas = r() < 0.6 ? activeOwned(0) : anyReplicas;
  {
    const projected = replicaOwner('ReplicaSet', ownerObject(replicas, {}));
    const converged = calculateStatus(projected, classifyPods(projected, summaries).activeOwned, summaries.filter((p) => isControlledBy(p, projected)), undefined, now);
    // most cases carry the status the controller would write (a converged owner); the rest a stale one
    const stale: ReplicaStatus = pick([
      { ...converged, readyReplicas: converged.readyReplicas + 1 },
      { ...converged, observedGeneration: generation - 1 },
      { ...converged, availableReplicas: Math.max(0, converged.availableReplicas - 1) },
      { ...converged, replicas: converged.replicas + 1 },
    ]);
    return { n, owner: ownerObject(replicas, r() < 0.65 ? converged : stale), pods };
  }

  function ownerObject(replicas: number, status: ReplicaStatus | Record<string, never>): KubeObject {
    return {
      apiVersion: 'apps/v1', kind: 'ReplicaSet',
      metadata: { namespace: ns, name, uid, resourceVersion: '50', generation },
      spec: { replicas, minReadySeconds, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } } },
      status: { ...status },
    };
  }
}

const input: InformerInput = { controllers: ['replicaset'] };

test(`on ${CASES} random cache states, every one the gate holds is one the workflow's reconcile calls no activity for`, async () => {
  const { cache, h, family } = routeHarness<ReplicaOwnerEvent>(replicaRoutes, input);
  expect(family).toBeDefined();
  const gate = replicaOwnerSignalGate({ input, cache, signaller: {} as Signaller, baseTaskQueue: 'test-queue' });
  const cases = Array.from({ length: CASES }, (_, n) => randomCase(n));
  const all = cases.flatMap((c) => c.pods);
  h(RESOURCES.pods).relisted(all, '1000');
  h(RESOURCES.replicaSets).relisted(cases.map((c) => c.owner), '1000');

  const verdicts: Array<{ n: number; held: boolean; calls: string[] }> = [];
  // a few at a time: each is a workflow of its own on the one dev server
  for (let i = 0; i < cases.length; i += 12) {
    await Promise.all(cases.slice(i, i + 12).map(async (c) => {
      const owner = replicaOwner('ReplicaSet', c.owner);
      world.set(owner.name, c);
      const args: ReplicaOwnerWorkflowInput = { controller: 'replicaset', kind: 'ReplicaSet', namespace: owner.namespace, name: owner.name, uid: owner.uid };
      const target: Target = { controller: 'replicaset', workflow: replicaOwnerWorkflow, kind: 'ReplicaSet', namespace: owner.namespace, name: owner.name, uid: owner.uid, args };
      const held = !gate.wouldAct(target);
      // what the informer sends the owner: the cache's snapshot of it, exactly as a holder that took over does
      const event = gate.full(target) as ReplicaOwnerEvent;
      expect(event.snapshot).toBeDefined();
      const handle = await env().client.workflow.signalWithStart(replicaOwnerWorkflow, {
        workflowId: `replicaset/${owner.namespace}/${owner.name}`, taskQueue, args: [args], signal: OBJECT_EVENT_SIGNAL, signalArgs: [event],
      });
      await settledAfter(handle, 1);
      await handle.terminate('case judged');
      verdicts.push({ n: c.n, held, calls: calls.get(owner.name) ?? [] });
    }));
  }

  const wrong = verdicts.filter((v) => v.held && v.calls.length);
  expect(wrong).toEqual([]);
  // the cases are varied enough to mean something: the gate holds many and lets many through
  const held = verdicts.filter((v) => v.held).length;
  expect(held).toBeGreaterThanOrEqual(CASES / 4);
  expect(CASES - held).toBeGreaterThanOrEqual(CASES / 4);
  // every case it lets through is one the workflow acts on: the gate sends no more than it must here
  expect(verdicts.filter((v) => !v.held && !v.calls.length).map((v) => v.n)).toEqual([]);
}, 240_000);

test('a resync reads the owner and its pods afresh, so what a gate held reaches the workflow there', async () => {
  const { cache, h } = routeHarness<ReplicaOwnerEvent>(replicaRoutes, input);
  const gate = replicaOwnerSignalGate({ input, cache, signaller: {} as Signaller, baseTaskQueue: 'test-queue' });
  // the first of the seeded cases past the property test's that the gate holds: a converged owner
  const target = (c: Case): Target => {
    const owner = replicaOwner('ReplicaSet', c.owner);
    const args: ReplicaOwnerWorkflowInput = { controller: 'replicaset', kind: 'ReplicaSet', namespace: owner.namespace, name: owner.name, uid: owner.uid, tuning: { resyncMs: 1000 } };
    return { controller: 'replicaset', workflow: replicaOwnerWorkflow, kind: 'ReplicaSet', namespace: owner.namespace, name: owner.name, uid: owner.uid, args };
  };
  let c: Case | undefined;
  for (let n = CASES; n < CASES + 200 && !c; n++) {
    const k = randomCase(n);
    h(RESOURCES.pods).relisted(k.pods, '2000');
    h(RESOURCES.replicaSets).relisted([k.owner], '2000');
    if (!gate.wouldAct(target(k))) c = k;
  }
  expect(c).toBeDefined();
  const t = target(c!);
  world.set(t.name, c!);
  const handle = await env().client.workflow.signalWithStart(replicaOwnerWorkflow, {
    workflowId: `replicaset/${t.namespace}/${t.name}`, taskQueue, args: [t.args as ReplicaOwnerWorkflowInput], signal: OBJECT_EVENT_SIGNAL, signalArgs: [gate.full(t) as ReplicaOwnerEvent],
  });
  await settledAfter(handle, 1);
  // the snapshot served as its observation: no read, no write
  expect(calls.get(t.name) ?? []).toEqual([]);
  // the resync reads again (and, converged, writes nothing)
  const deadline = Date.now() + 15_000;
  while (!(calls.get(t.name) ?? []).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  await handle.terminate('resync seen');
  // one read per resync (another may have come before the terminate), and nothing else
  expect([...new Set(calls.get(t.name))]).toEqual(['observeReplicaOwner']);
}, 60_000);
