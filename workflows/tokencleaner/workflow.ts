import { proxyActivities } from '@temporalio/workflow';
import type { TokenCleanerActivities } from '../../activities/tokencleaner/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { API_WRITES } from '../runtime/activity-options';
import { CONTROLLER, TokenDecision, decideToken } from './logic';

/**
 * What the watch sends: only that the Secret (this UID) changed its expiration, type or UID. The
 * watch holds digests of Secret values, never the values, so the run reads the expiration itself.
 */
export interface TokenCleanerEvent {
  uid: string;
}

export interface TokenCleanerWorkflowInput {
  namespace: string;
  name: string;
  /** the Secret this run times; one recreated under the name gets a run of its own */
  uid: string;
  tuning?: Partial<LoopTuning>;
}

export function tokenCleanerWorkflowId(namespace: string, name: string): string {
  return `${CONTROLLER}/${namespace}/${name}`;
}

export function mergeTokenCleanerEvents(_earlier: TokenCleanerEvent, later: TokenCleanerEvent): TokenCleanerEvent {
  return later;
}

const io = proxyActivities<TokenCleanerActivities>(API_WRITES);

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One bootstrap token Secret with an expiration: reads it, waits on a durable timer until it
 * expires (upstream requeues it for then), reads it again and deletes it if it has expired by its
 * current expiration. An edited expiration re-times it; the run ends once the Secret is deleted,
 * gone, or no longer expires.
 */
export async function tokenCleanerWorkflow(input: TokenCleanerWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let last: TokenDecision | undefined;
  let expiration: string | undefined;
  let outcome = '';

  const id = objectIdentity<typeof tokenCleanerWorkflow>(input.uid, (next) => [{ ...input, uid: next }]);

  async function reconcile(): Promise<ReconcileResult> {
    // every wake (a change, the expiry, a resync) decides on the Secret as it is now: the watch
    // never has the expiration itself
    const token = await io.readBootstrapToken({ namespace: input.namespace, name: input.name });
    if (!token) {
      outcome = 'gone';
      return { finished: true };
    }
    await id.handOverIfNew(token.uid);
    expiration = token.expiration;
    last = decideToken(token, Date.now());
    if (last.kind === 'keep') {
      outcome = last.why;
      return { finished: true };
    }
    if (last.kind === 'wait') return { requeueAfterMs: last.ms };
    const r = await io.deleteExpiredBootstrapToken({
      namespace: input.namespace, name: input.name, uid: token.uid, reason: last.why,
      ...(last.expiresAt !== undefined ? { expiredAt: iso(last.expiresAt) } : {}),
    });
    // replaced: the next read finds the newcomer and hands over to a run of its own
    if (r.outcome === 'replaced') return { requeueAfterMs: 0 };
    outcome = r.outcome;
    return { finished: true };
  }

  await runObjectLoop<TokenCleanerEvent>({
    controller: CONTROLLER,
    tuning,
    apply() {
      // a nudge: the next reconcile reads the Secret
    },
    reconcile,
    describe: () => ({
      secret: `${input.namespace}/${input.name}`,
      expiration,
      decision: last?.kind,
      expiresAt: last && last.kind !== 'keep' && last.expiresAt !== undefined ? iso(last.expiresAt) : undefined,
      outcome: outcome || undefined,
    }),
    drainBeforeFinish: true,
    continueAsNewArgs: () => [input],
  });
}
