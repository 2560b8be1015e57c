import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { CreatePodsRequest, CreatePodsResult, ReplicaActivities, StatusUpdateRequest, StatusUpdateResult } from '../../activities/replicaset/activities';
import { podName } from '../../workflows/replicaset/logic';
import type { PodSummary, ReplicaOwner } from '../../workflows/replicaset/types';
import { replicaOwnerWorkflow, type ReplicaOwnerEvent, type ReplicaOwnerWorkflowInput } from '../../workflows/replicaset/workflow';
import { OBJECT_EVENT_SIGNAL } from '../../workflows/runtime/object-loop';
import { controllerTaskQueue } from '../../workflows/runtime/task-queues';
import { settledAfter, workflowEnvPerSuite } from '../support/workflow-env';

/*
 * The ReplicaSet workflow wired as it runs: the real workflow on the Temporal dev server, with the
 * project's data converter, and in-process activities over a small fake pod store that answers a
 * taken name as the API would (AlreadyExists).
 *
 * The pod-name counter: pods of ours exist under names the counter has not passed. That is what a workflow task
 * that created pods through local activities and then failed leaves behind (a failed task records
 * nothing, so the retry starts from the old counter). A replacement must get a name after every
 * name seen, never a gone or living pod's name: upstream's random suffixes never repeat.
 */

const NS = 'names';
const base = `replicaset-names-${randomUUID()}`;
const taskQueue = controllerTaskQueue(base, 'replicaset');

/** The fake API's pods, by owner name then pod name. */
const store = new Map<string, Map<string, PodSummary>>();
const created: Array<{ owner: string; names: string[] }> = [];
const observedOwners: string[] = [];
let uidSeq = 0;

function ownerObject(name: string, uid: string, replicas: number): ReplicaOwner {
  return {
    kind: 'ReplicaSet', apiVersion: 'apps/v1', namespace: NS, name, uid, resourceVersion: '1', generation: 1,
    replicas, minReadySeconds: 0,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } },
    status: { replicas, fullyLabeledReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas, terminatingReplicas: 0, observedGeneration: 1, conditions: [] },
  };
}
const owners = new Map<string, ReplicaOwner>();

function pod(owner: ReplicaOwner, name: string): PodSummary {
  return {
    namespace: NS, name, uid: `pod-${++uidSeq}`, resourceVersion: String(100 + uidSeq), creationTimestamp: '2026-01-01T00:00:00Z',
    labels: { app: owner.name },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true }],
    phase: 'Running', nodeName: 'node-1', ready: true, readySince: '2026-01-01T00:00:00Z', restartCount: 0, deletionCost: 0,
  };
}

function podsOf(owner: string): Map<string, PodSummary> {
  if (!store.has(owner)) store.set(owner, new Map());
  return store.get(owner)!;
}

const activities: Pick<ReplicaActivities, 'observeReplicaOwner' | 'createPods' | 'updateReplicaOwnerStatus' | 'adoptPods' | 'releasePods' | 'deletePods'> = {
  async observeReplicaOwner(key) {
    observedOwners.push(key.name);
    return { owner: owners.get(key.name), pods: [...podsOf(key.name).values()] };
  },
  async createPods(req: CreatePodsRequest): Promise<CreatePodsResult> {
    created.push({ owner: req.owner.name, names: req.names });
    const pods = podsOf(req.owner.name);
    const out: CreatePodsResult = { created: [], failed: [] };
    for (const name of req.names) {
      if (pods.has(name)) {
        out.failed.push({ name, status: 409, reason: 'AlreadyExists', message: `pods "${name}" already exists` });
        continue;
      }
      const p = pod(req.owner, name);
      pods.set(name, p);
      out.created.push(p);
    }
    return out;
  },
  async updateReplicaOwnerStatus(req: StatusUpdateRequest): Promise<StatusUpdateResult> {
    owners.set(req.owner.name, { ...req.owner, status: req.status });
    return { updated: true, resourceVersion: String(Number(req.owner.resourceVersion) + 1) };
  },
  async adoptPods() {
    throw new Error('every pod here is owned already');
  },
  async releasePods() {
    throw new Error('every pod here matches its selector');
  },
  async deletePods() {
    throw new Error('nothing here is scaled down');
  },
};

const env = workflowEnvPerSuite({ taskQueue, workflowsPath: require.resolve('../../workflows'), activities });


/** A ReplicaSet of 3 whose 3 pods already carry the names of counter values 0, 1 and 2. */
function ownerWithPods(name: string): { owner: ReplicaOwner; pods: PodSummary[] } {
  const owner = ownerObject(name, `${name}-uid`, 3);
  owners.set(name, owner);
  const pods = [0, 1, 2].map((seq) => pod(owner, podName(name, owner.uid, seq)));
  for (const p of pods) podsOf(name).set(p.name, p);
  return { owner, pods };
}

function input(owner: ReplicaOwner): ReplicaOwnerWorkflowInput {
  // nextSeq 0: the counter a lost workflow task leaves behind after creating seq 0..2
  return { controller: 'replicaset', kind: 'ReplicaSet', namespace: NS, name: owner.name, uid: owner.uid, nextSeq: 0 };
}

/** The world loses one pod; the workflow hears of it as the informer would tell it. */
async function deletePod(h: WorkflowHandle, owner: string, p: PodSummary): Promise<void> {
  podsOf(owner).delete(p.name);
  await h.signal<[ReplicaOwnerEvent]>(OBJECT_EVENT_SIGNAL, { podsDeleted: [p.uid] });
}

test('names seen in an observation move the counter: the replacement of a deleted pod gets the next unused name', async () => {
  const { owner, pods } = ownerWithPods('observed');
  const h = await env().client.workflow.start(replicaOwnerWorkflow, { workflowId: `replicaset/${NS}/observed`, taskQueue, args: [input(owner)] });
  await settledAfter(h, 1);
  expect(observedOwners).toContain('observed');
  expect(created.filter((c) => c.owner === 'observed')).toEqual([]);

  await deletePod(h, 'observed', pods[0]);
  const s = await settledAfter(h, 2);
  expect(created.filter((c) => c.owner === 'observed')).toEqual([{ owner: 'observed', names: [podName('observed', owner.uid, 3)] }]);
  expect(s.view?.nextPodSequence).toBe(4);
  expect(podsOf('observed').size).toBe(3);
  await h.terminate('test done');
}, 60_000);

test('names seen in a signal\'s cache snapshot move the counter, with no API read', async () => {
  const { owner, pods } = ownerWithPods('signalled');
  const h = await env().client.workflow.signalWithStart(replicaOwnerWorkflow, {
    workflowId: `replicaset/${NS}/signalled`,
    taskQueue,
    args: [input(owner)],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [{ owner, snapshot: { ownerUid: owner.uid, pods, resourceVersion: '200' } } satisfies ReplicaOwnerEvent],
  });
  await settledAfter(h, 1);

  await deletePod(h, 'signalled', pods[1]);
  const s = await settledAfter(h, 2);
  expect(observedOwners).not.toContain('signalled');
  expect(created.filter((c) => c.owner === 'signalled')).toEqual([{ owner: 'signalled', names: [podName('signalled', owner.uid, 3)] }]);
  expect(s.view?.nextPodSequence).toBe(4);
  await h.terminate('test done');
}, 60_000);

test('an owner of 6,000 pods: its observation, over the server\'s 2 MiB payload limit as JSON, goes through compressed', async () => {
  const owner = ownerObject('large', 'large-uid', 6000);
  owners.set('large', owner);
  for (let seq = 0; seq < 6000; seq++) {
    const p = pod(owner, podName('large', owner.uid, seq));
    podsOf('large').set(p.name, p);
  }
  expect(Buffer.byteLength(JSON.stringify([...podsOf('large').values()]))).toBeGreaterThan(2 * 1024 * 1024);
  const h = await env().client.workflow.start(replicaOwnerWorkflow, { workflowId: `replicaset/${NS}/large`, taskQueue, args: [{ ...input(owner), nextSeq: 6000 }] });
  const s = await settledAfter(h, 1);
  expect(observedOwners).toContain('large');
  expect(s.view?.activePods).toBe(6000);
  expect(s.view?.readyPods).toBe(6000);
  expect(created.filter((c) => c.owner === 'large')).toEqual([]);
  await h.terminate('test done');
}, 120_000);
