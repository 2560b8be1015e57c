import { proxyActivities } from '@temporalio/workflow';
import type { ResourceQuotaActivities } from '../../activities/resourcequota/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { planQuotaStatus } from './logic';
import type { QuotaObjectKind } from './types';
import { LIST_PAGES } from '../runtime/activity-options';

/** What the informer sends a quota's workflow; a burst for one quota arrives merged (mergeResourceQuotaEvents). */
export interface ResourceQuotaEvent {
  /** the quota was created, its spec changed, or the watch relisted: recount everything */
  all?: boolean;
  /** objects of these kinds changed in the quota's namespace: recount what they feed */
  kinds?: QuotaObjectKind[];
  /** the quota with this UID was deleted */
  deletedUid?: string;
}

export interface ResourceQuotaWorkflowInput {
  namespace: string;
  name: string;
  /** the quota this run belongs to; a run started by a signal learns it on first observation */
  uid?: string;
  /** --resource-quota-sync-period: a full recount at least this often (counts of unwatched kinds drift otherwise) */
  syncMs?: number;
  tuning?: Partial<LoopTuning>;
}

export const DEFAULT_QUOTA_SYNC_MS = 5 * 60_000;

export function resourceQuotaWorkflowId(namespace: string, name: string): string {
  return `resourcequota/${namespace}/${name}`;
}

export function mergeResourceQuotaEvents(earlier: ResourceQuotaEvent, later: ResourceQuotaEvent): ResourceQuotaEvent {
  const out: ResourceQuotaEvent = {};
  if (earlier.all || later.all) out.all = true;
  const kinds = new Set([...(earlier.kinds ?? []), ...(later.kinds ?? [])]);
  if (kinds.size && !out.all) out.kinds = [...kinds].sort();
  const gone = later.deletedUid ?? earlier.deletedUid;
  if (gone) out.deletedUid = gone;
  return out;
}

// a recount heartbeats per page listed, so a replica killed mid-list is noticed in seconds
const io = proxyActivities<ResourceQuotaActivities>(LIST_PAGES);

/**
 * One ResourceQuota: keeps status.hard equal to spec.hard and status.used equal to what the
 * namespace holds, recounting what a change touched when the informer says something changed
 * and everything every syncMs. Ends when the quota (by UID) is gone.
 */
export async function resourceQuotaWorkflow(input: ResourceQuotaWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const syncMs = input.syncMs && input.syncMs > 0 ? input.syncMs : DEFAULT_QUOTA_SYNC_MS;
  const id = objectIdentity<typeof resourceQuotaWorkflow>(input.uid, (next) => [{ ...input, uid: next }]);
  // every run starts with a full recount: it is how a run learns the quota, and it heals any drift
  let recountAll = true;
  const recountKinds = new Set<QuotaObjectKind>();
  let lastFullAt = 0;

  async function reconcile(): Promise<ReconcileResult> {
    const now = Date.now();
    const full = recountAll || now - lastFullAt >= syncMs;
    // a timer with nothing else pending is the pod-deletion-grace recheck
    const kinds: QuotaObjectKind[] | undefined = full ? undefined : recountKinds.size ? [...recountKinds].sort() : ['pods'];
    recountAll = false;
    recountKinds.clear();
    const retryLater = () => {
      if (kinds) for (const k of kinds) recountKinds.add(k);
      else recountAll = true;
    };

    try {
      const seen = await io.observeResourceQuota({ namespace: input.namespace, name: input.name, ...(kinds ? { kinds } : {}) });
      const quota = seen.quota;
      if (!quota) return { finished: true };
      if (id.isNew(quota.uid)) {
        // A new object with this name: it gets a fresh run (same workflow ID), never this run's
        // state. The loop ends first: it treats anything thrown from here as a failed reconcile.
        id.replacedBy(quota.uid);
        return { finished: true };
      }
      id.learn(quota.uid);
      if (full) lastFullAt = now;

      const plan = planQuotaStatus(quota, seen.used);
      if (plan.write) {
        const r = await io.updateResourceQuotaStatus({
          namespace: quota.namespace, name: quota.name, uid: quota.uid, resourceVersion: quota.resourceVersion,
          hard: plan.hard, used: plan.used, reason: plan.reason,
        });
        if (!r.updated) {
          // changed since read (quota admission charged something) or gone: look again, now
          retryLater();
          return { requeueAfterMs: 0 };
        }
      }
      if (seen.errors.length) {
        retryLater();
        return { failed: true };
      }
      const untilFull = Math.max(0, lastFullAt + syncMs - Date.now());
      return { requeueAfterMs: seen.recheckAfterMs !== undefined ? Math.min(untilFull, seen.recheckAfterMs) : untilFull };
    } catch (e) {
      retryLater();
      throw e;
    }
  }

  await runObjectLoop<ResourceQuotaEvent>({
    controller: 'resourcequota',
    tuning,
    apply(e) {
      if (e.all || (e.deletedUid !== undefined && e.deletedUid === id.uid)) recountAll = true;
      for (const k of e.kinds ?? []) recountKinds.add(k);
    },
    reconcile,
    continueAsNewArgs: () => [{ ...input, uid: id.uid } satisfies ResourceQuotaWorkflowInput],
  });
  await id.handOverToSuccessor();
}
