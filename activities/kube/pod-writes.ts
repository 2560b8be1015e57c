import type { EventTarget, RecordEvent } from './events';
import { asActivityFailure, isStatus } from './failures';
import { heartbeat } from './heartbeat';
import type { KubeObject } from './projections';
import { ApiError, type KubeRest } from './rest';
import { RESOURCES, resourcePath } from './resources';
import { readByName } from './update';
import { controllerRef } from '../../workflows/common/controller-ref';

/*
 * Creating and deleting a controller's pods, written once for every controller that owns pods
 * (replicaset, replicationcontroller, daemonset, statefulset): idempotent, one request per pod in parallel, and
 * the Events upstream's pod control records.
 */

export interface PodWriteFailure {
  name: string;
  status: number;
  reason: string;
  message: string;
}

/** Who writes: the owner the Events are about, and the component that records them. */
export interface PodOwner {
  target: EventTarget;
  component: string;
  /** the Events' messages, where a controller words them otherwise than the ReplicaSet's pod control */
  messages?: PodEventMessages;
}

/** What each pod write's Event says (reasons are SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete). */
export interface PodEventMessages {
  created(name: string): string;
  createFailed(name: string, error: string): string;
  deleted(name: string): string;
  deleteFailed(name: string, error: string): string;
}

const REPLICA_MESSAGES: PodEventMessages = {
  created: (name) => `Created pod: ${name}`,
  createFailed: (_name, error) => `Error creating: ${error}`,
  deleted: (name) => `Deleted pod: ${name}`,
  deleteFailed: (_name, error) => `Error deleting: ${error}`,
};

function failure(name: string, e: unknown): PodWriteFailure {
  if (e instanceof ApiError) return { name, status: e.status, reason: e.reason, message: e.serverMessage };
  return { name, status: 0, reason: 'Unknown', message: String(e) };
}

/**
 * One write per item, in parallel. A rejection is that item's own failure, reported back (and as
 * a Warning Event by `onRejected`); a transient error fails the whole batch so Temporal retries it,
 * which is safe because every write here is idempotent.
 */
export async function writeEachPod<T>(items: readonly T[], nameOf: (t: T) => string, write: (t: T) => Promise<void>, onRejected: (f: PodWriteFailure) => Promise<void>): Promise<PodWriteFailure[]> {
  const failed: PodWriteFailure[] = [];
  let transient: ApiError | undefined;
  await Promise.all(
    items.map(async (t) => {
      try {
        await write(t);
      } catch (e) {
        if (e instanceof ApiError && e.transient) {
          transient = e;
          return;
        }
        const f = failure(nameOf(t), e);
        failed.push(f);
        await onRejected(f);
      } finally {
        heartbeat();
      }
    }),
  );
  if (transient) throw asActivityFailure(transient);
  return failed;
}

const podPath = (ns: string, name?: string) => resourcePath(RESOURCES.pods, ns, name);

/**
 * Creates pods with deterministic names. A name that already exists and is this owner's counts as
 * created: that is the same activity running a second time after a crash.
 */
export async function createOwnedPods(rest: KubeRest, recordEvent: RecordEvent, owner: PodOwner, pods: ReadonlyArray<{ metadata: { name: string } }>): Promise<{ created: KubeObject[]; failed: PodWriteFailure[] }> {
  const created: KubeObject[] = [];
  const ns = owner.target.namespace;
  const failed = await writeEachPod(pods, (p) => p.metadata.name, async (pod) => {
    const name = pod.metadata.name;
    try {
      // a retried POST that the server took the first time answers 409, read below as ours
      created.push((await rest.request<KubeObject>('POST', podPath(ns), { body: pod, idempotent: true })).body);
      recordEvent(owner.component, owner.target, 'Normal', 'SuccessfulCreate', (owner.messages ?? REPLICA_MESSAGES).created(name));
    } catch (e) {
      if (!isStatus(e, 409)) throw e;
      const found = await readByName(rest, podPath(ns, name));
      if (!found || controllerRef(found.metadata?.ownerReferences)?.uid !== owner.target.uid) throw e;
      created.push(found);
    }
  }, async (f) => recordEvent(owner.component, owner.target, 'Warning', 'FailedCreate', (owner.messages ?? REPLICA_MESSAGES).createFailed(f.name, f.message)));
  return { created, failed };
}

/**
 * Creates pods in slow-start batches, one batch after another, and stops after the first batch
 * with a rejected create, as upstream's slowStartBatch does: a broken template or a full quota
 * costs a handful of rejected calls. The pods of the batches not tried are `skipped`.
 */
export async function createOwnedPodsInBatches(rest: KubeRest, recordEvent: RecordEvent, owner: PodOwner, pods: ReadonlyArray<{ metadata: { name: string } }>, batches: readonly number[]): Promise<{ created: KubeObject[]; failed: PodWriteFailure[]; skipped: string[] }> {
  const created: KubeObject[] = [];
  const failed: PodWriteFailure[] = [];
  let next = 0;
  for (const size of batches) {
    const r = await createOwnedPods(rest, recordEvent, owner, pods.slice(next, next + size));
    next += size;
    created.push(...r.created);
    failed.push(...r.failed);
    if (r.failed.length) break;
  }
  return { created, failed, skipped: pods.slice(next).map((p) => p.metadata.name) };
}

/** Deletes pods by name with a UID precondition; already gone (or replaced) counts as deleted. Returns the UIDs. */
export async function deleteOwnedPods(rest: KubeRest, recordEvent: RecordEvent, owner: PodOwner, pods: ReadonlyArray<{ name: string; uid: string }>): Promise<{ deleted: string[]; failed: PodWriteFailure[] }> {
  const deleted: string[] = [];
  const failed = await writeEachPod(pods, (p) => p.name, async (p) => {
    try {
      await rest.request('DELETE', podPath(owner.target.namespace, p.name), { body: { preconditions: { uid: p.uid } }, idempotent: true });
      recordEvent(owner.component, owner.target, 'Normal', 'SuccessfulDelete', (owner.messages ?? REPLICA_MESSAGES).deleted(p.name));
    } catch (e) {
      if (!isStatus(e, 404, 409)) throw e;
    }
    deleted.push(p.uid);
  }, async (f) => recordEvent(owner.component, owner.target, 'Warning', 'FailedDelete', (owner.messages ?? REPLICA_MESSAGES).deleteFailed(f.name, f.message)));
  return { deleted, failed };
}
