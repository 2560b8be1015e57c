import { proxyActivities } from '@temporalio/workflow';
import type { BootstrapSignerActivities, SignClusterInfoResult } from '../../activities/bootstrapsigner/activities';
import { apiBatches } from '../runtime/activity-options';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONFIGMAP_NAME, CONFIGMAP_NAMESPACE, CONTROLLER, msUntilExpiryCheck } from './logic';

/**
 * What the watch sends: that cluster-info changed (its new resourceVersion), that bootstrap token
 * Secrets changed (their names), or that a list re-sent them. Never a Secret value: the watch
 * holds digests only, and the signing pass reads the Secrets itself.
 */
export interface BootstrapSignerEvent {
  configMapRv?: string;
  secrets?: string[];
  /** sent by a (re)list rather than a watch event: look again whatever the resourceVersion */
  listed?: boolean;
}

export interface BootstrapSignerWorkflowInput {
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new: the ConfigMap version the last pass left */
  resourceVersion?: string;
}

/** One signer per deployment (it signs the cluster's one cluster-info); the task queue names the deployment. */
export function bootstrapSignerWorkflowId(taskQueue: string): string {
  return `${CONTROLLER}/${taskQueue}`;
}

/** Secret names kept in one merged event, for the log's reason; any change triggers the same pass. */
const MAX_NAMES = 10;

export function mergeBootstrapSignerEvents(earlier: BootstrapSignerEvent, later: BootstrapSignerEvent): BootstrapSignerEvent {
  const configMapRv = later.configMapRv ?? earlier.configMapRv;
  const secrets = [...new Set([...(earlier.secrets ?? []), ...(later.secrets ?? [])])].slice(0, MAX_NAMES);
  const listed = !!(earlier.listed || later.listed);
  return { ...(configMapRv !== undefined ? { configMapRv } : {}), ...(secrets.length ? { secrets } : {}), ...(listed ? { listed } : {}) };
}

// a pass is a few calls, each followed by a heartbeat: a replica killed mid-pass is noticed in
// seconds and the pass runs again elsewhere, instead of after a whole start-to-close limit
const io = proxyActivities<BootstrapSignerActivities>(apiBatches('5 seconds'));

/**
 * Upstream's single work item (the cluster-info key) as one long-running workflow: every change of
 * cluster-info or of a bootstrap token Secret runs one signing pass (a burst of them, one pass);
 * the echo of its own write does not. A signing token with an expiration is looked at again when
 * it expires, and a 12-hour resync stands in for upstream's informer resync.
 */
export async function bootstrapSignerWorkflow(input: BootstrapSignerWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  /** the resourceVersion the last pass read or wrote: a ConfigMap event at it is that pass's own echo */
  let resourceVersion = input.resourceVersion;
  let signalled = 0;
  let due = false;
  /** the last pass asks for another at once (its write conflicted), and why */
  let again: string | undefined;
  let why = new Set<string>();
  let last: SignClusterInfoResult | undefined;
  let lastReason = '';
  let passes = 0;

  function reasonOf(): string {
    if (again !== undefined) return [again, ...why].join('; ');
    if (signalled === 0) return last?.nextExpiryAt !== undefined && Date.parse(last.nextExpiryAt) <= Date.now() ? 'a signing token expired' : 'resync';
    return [...why].join('; ') || 'change';
  }

  async function reconcile(): Promise<ReconcileResult> {
    // woken by events that were all the echo of our own write: nothing to look at
    if (signalled > 0 && !due && again === undefined) {
      signalled = 0;
      return wake();
    }
    const reason = reasonOf();
    signalled = 0;
    due = false;
    again = undefined;
    why = new Set();
    lastReason = reason;
    passes++;
    try {
      last = await io.signClusterInfo({ reason });
    } catch (err) {
      // the loop retries after its backoff; that pass says why it runs
      again = 'retry after a failed pass';
      throw err;
    }
    resourceVersion = last.resourceVersion;
    if (last.outcome === 'failed') {
      again = 'retry after a rejected pass';
      return { failed: true, error: `signing ${CONFIGMAP_NAMESPACE}/${CONFIGMAP_NAME}: ${last.message ?? 'rejected'}` };
    }
    // changed between the read and the write: read again at once
    if (last.outcome === 'conflict') {
      again = `${CONFIGMAP_NAME} changed while signing`;
      return { requeueAfterMs: 0 };
    }
    return wake();
  }

  function wake(): ReconcileResult {
    const ms = msUntilExpiryCheck(last?.nextExpiryAt !== undefined ? Date.parse(last.nextExpiryAt) : undefined, Date.now());
    return ms !== undefined ? { requeueAfterMs: ms } : {};
  }

  await runObjectLoop<BootstrapSignerEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      signalled++;
      if (e.secrets?.length) {
        due = true;
        for (const s of e.secrets) if (why.size < MAX_NAMES) why.add(`secret ${s} changed`);
      }
      if (e.listed) {
        due = true;
        why.add('listed');
      }
      if (e.configMapRv !== undefined && e.configMapRv !== resourceVersion) {
        due = true;
        why.add(`${CONFIGMAP_NAME} changed`);
      }
    },
    reconcile,
    describe: () => ({
      configMap: `${CONFIGMAP_NAMESPACE}/${CONFIGMAP_NAME}`,
      resourceVersion: resourceVersion ?? null,
      outcome: last?.outcome,
      signedBy: last?.signed ?? [],
      added: last?.added ?? [],
      changed: last?.changed ?? [],
      removed: last?.removed ?? [],
      skipped: (last?.skipped ?? []).map((s) => `${s.secret}: ${s.why}`),
      nextExpiryAt: last?.nextExpiryAt,
      lastReason: lastReason || undefined,
      passes,
    }),
    continueAsNewArgs: () => [{ tuning: input.tuning, ...(resourceVersion !== undefined ? { resourceVersion } : {}) } satisfies BootstrapSignerWorkflowInput],
  });
}
