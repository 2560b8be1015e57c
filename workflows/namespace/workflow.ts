import { log, proxyActivities } from '@temporalio/workflow';
import type { NamespaceActivities } from '../../activities/namespace/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import {
  DEFAULT_NAMESPACE_SYNC_MS,
  DELETION_GRACE_MS,
  NAMESPACE_BACKOFF_MAX_MS,
  classifyContent,
  decidePass,
  graceRemainingMs,
  holdsOurFinalizer,
  isBeingDeleted,
  isEmptied,
  isFinalized,
  namespaceConditions,
  nextStatus,
  planPass,
  resourceKey,
  summarizePass,
} from './logic';
import type { ContentOutcome, NamespaceCondition, NamespaceProgress, NamespaceView, NamespacedResource } from './types';
import { NAMESPACE_CALLS, NAMESPACE_CONTENT } from '../runtime/activity-options';

/** What the router sends: the workflow re-reads the Namespace on every reconcile, so this only wakes it. */
export interface NamespaceEvent {
  /** the terminating namespace the watch saw */
  uid: string;
  /** the watch relisted: events may have been missed */
  relist?: boolean;
}

export function mergeNamespaceEvents(a: NamespaceEvent, b: NamespaceEvent): NamespaceEvent {
  return a.relist || b.relist ? { uid: b.uid, relist: true } : { uid: b.uid };
}

export interface NamespaceWorkflowInput {
  name: string;
  /** the namespace this run deletes; a run started by a signal learns it on first observation */
  uid?: string;
  /** --namespace-sync-period: a terminating namespace is looked at again at least this often, ms */
  syncMs?: number;
  /** wait after the deletion timestamp before the first pass (upstream: 5 s) */
  deletionGraceMs?: number;
  tuning?: Partial<LoopTuning>;
  /** what earlier runs of this deletion already emptied */
  progress?: NamespaceProgress;
}

export function namespaceWorkflowId(name: string): string {
  return `namespace/${name}`;
}

/** Resources emptied side by side; each is one activity, and a namespace may hold dozens of kinds. */
const CONTENT_CONCURRENCY = 4;
/** status writes that lose a race re-observe and recompute this many times before leaving it to the next pass */
const STATUS_ATTEMPTS = 3;

const io = proxyActivities<NamespaceActivities>(NAMESPACE_CALLS);

/** Emptying one resource may take many pages of deletes; it heartbeats as it goes. */
const content = proxyActivities<Pick<NamespaceActivities, 'deleteNamespaceContent' | 'verifyNamespaceContent'>>(NAMESPACE_CONTENT);

/**
 * One terminating Namespace: deletes everything in it, resource by resource, waits for what
 * terminates gracefully, keeps the deletion conditions in its status, and then releases the
 * `kubernetes` finalizer. Which resources are already empty is kept in workflow state (and in
 * continue-as-new input), so a restart resumes where it stopped instead of starting over.
 */
export async function namespaceWorkflow(input: NamespaceWorkflowInput): Promise<void> {
  const base: LoopTuning = { ...DEFAULT_TUNING, backoffMaxMs: NAMESPACE_BACKOFF_MAX_MS, ...input.tuning };
  const syncMs = input.syncMs ?? DEFAULT_NAMESPACE_SYNC_MS;
  const tuning: LoopTuning = { ...base, resyncMs: Math.min(base.resyncMs, syncMs) };
  const name = input.name;
  const id = objectIdentity<typeof namespaceWorkflow>(input.uid, (next) => [{ ...input, uid: next, progress: undefined }]);
  const emptied = new Set<string>(input.progress?.emptied ?? []);
  /** the latest outcome of every resource not yet emptied; rebuilt by the next pass after continue-as-new */
  const outcomes = new Map<string, ContentOutcome>();
  // objectIdentity publishes now; this call stays for runs recorded before it did (it is a no-op after)
  id.publish();

  async function deleteContent(ns: NamespaceView, resources: NamespacedResource[]): Promise<void> {
    for (let i = 0; i < resources.length; i += CONTENT_CONCURRENCY) {
      await Promise.all(resources.slice(i, i + CONTENT_CONCURRENCY).map(async (resource) => {
        const obs = await content.deleteNamespaceContent({ namespace: name, resource });
        const outcome = classifyContent(name, obs, ns.deletionTimestamp, Date.now());
        const key = resourceKey(resource);
        outcomes.set(key, outcome);
        if (isEmptied(outcome)) emptied.add(key);
        else emptied.delete(key);
      }));
    }
  }

  /** Write phase and conditions against the version they were computed from; a lost race re-reads. */
  async function writeStatus(observed: NamespaceView, computed: NamespaceCondition[]): Promise<void> {
    let ns = observed;
    for (let attempt = 0; attempt < STATUS_ATTEMPTS; attempt++) {
      const next = nextStatus(ns, computed, Date.now());
      if (!next) return;
      try {
        const r = await io.updateNamespaceConditions({ name, uid: ns.uid, resourceVersion: ns.resourceVersion, ...next });
        if (r.ok || r.reason === 'Gone') return;
      } catch (err) {
        // upstream only logs a failed condition update: the deletion itself must go on
        log.warn('namespace status update failed', { error: String(err) });
        return;
      }
      const again = (await io.observeNamespace({ name })).namespace;
      if (!again || again.uid !== ns.uid) return;
      ns = again;
    }
  }

  async function reconcile(): Promise<ReconcileResult> {
    const ns = (await io.observeNamespace({ name })).namespace;
    if (!ns) return { finished: true };
    if (id.isNew(ns.uid)) {
      // Another namespace under the same name: its deletion is a new run with nothing remembered.
      // That run starts once the loop has ended: continue-as-new thrown inside a reconcile would
      // be taken for a failed reconcile.
      if (isBeingDeleted(ns)) id.replacedBy(ns.uid);
      return { finished: true };
    }
    id.learn(ns.uid);
    if (!isBeingDeleted(ns) || isFinalized(ns)) return { finished: true };

    const grace = graceRemainingMs(ns.deletionTimestamp, Date.now(), input.deletionGraceMs ?? DELETION_GRACE_MS);
    if (grace > 0) return { requeueAfterMs: grace };

    const discovery = await io.discoverNamespacedResources();
    const plan = planPass(discovery.resources, emptied);
    await deleteContent(ns, plan.toDelete);

    let summary = summarizePass(discovery, outcomes, emptied);
    let decision = decidePass(summary);
    if (decision.kind === 'finalize' && plan.toVerify.length) {
      // resources emptied by earlier passes were skipped this time: make sure nothing came back
      const check = await content.verifyNamespaceContent({ namespace: name, resources: plan.toVerify });
      const back = [...check.nonEmpty, ...Object.keys(check.errors)];
      if (back.length) {
        for (const key of back) emptied.delete(key);
        const again = plan.toVerify.filter((r) => back.includes(resourceKey(r)));
        await deleteContent(ns, again);
        summary = summarizePass(discovery, outcomes, emptied);
        decision = decidePass(summary);
      }
    }

    await writeStatus(ns, namespaceConditions(discovery, summary));

    switch (decision.kind) {
      case 'retry':
        return { failed: true };
      case 'wait':
        return { requeueAfterMs: decision.afterMs };
      case 'finalize': {
        // another finalizer still holds the namespace: upstream keeps syncing it until that one goes
        if (!holdsOurFinalizer(ns)) return {};
        const r = await io.finalizeNamespace({ name, uid: ns.uid });
        if (!r.finalized) return r.reason === 'AlreadyFinalized' ? {} : { finished: true };
        return r.remainingFinalizers.length ? {} : { finished: true };
      }
    }
  }

  await runObjectLoop<NamespaceEvent>({
    controller: 'namespace',
    tuning,
    // every reconcile re-reads the namespace, so an event only has to wake the loop
    apply() {},
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid, progress: { emptied: [...emptied].sort() } } satisfies NamespaceWorkflowInput],
  });
  await id.handOverToSuccessor();
}
