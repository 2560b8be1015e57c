import { proxyActivities } from '@temporalio/workflow';
import type { TokenActivities } from '../../activities/serviceaccount-token/activities';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { objectIdentity } from '../runtime/identity';
import { decideTokenSecret } from './logic';
import type { TokenSecretView } from './types';
import { API_WRITES } from '../runtime/activity-options';

export const TOKEN_CONTROLLER = 'serviceaccount-token';

/** What the watch sends one token Secret's workflow; several events for one key arrive merged. */
export interface TokenSecretEvent {
  /** the Secret as last seen by the watch (references and booleans, never data) */
  secret?: TokenSecretView;
  /** the Secret with this UID was deleted */
  secretDeletedUid?: string;
  /** the ServiceAccount the Secret names was deleted */
  serviceAccountDeleted?: { name: string; uid: string };
}

export interface TokenSecretWorkflowInput {
  namespace: string;
  name: string;
  /** the Secret this run belongs to */
  uid: string;
  /** the account it named when last seen, to clean up after it once it is gone */
  serviceAccountName?: string;
  serviceAccountUid?: string;
  tuning?: Partial<LoopTuning>;
}

export function tokenSecretWorkflowId(namespace: string, name: string): string {
  return `${TOKEN_CONTROLLER}/${namespace}/${name}`;
}

/** Merges a burst of events for one Secret into one signal: the latest view, every deletion seen. */
export function mergeTokenSecretEvents(a: TokenSecretEvent, b: TokenSecretEvent): TokenSecretEvent {
  const secret = b.secret ?? a.secret;
  const secretDeletedUid = b.secretDeletedUid ?? a.secretDeletedUid;
  const serviceAccountDeleted = b.serviceAccountDeleted ?? a.serviceAccountDeleted;
  return {
    ...(secret ? { secret } : {}),
    ...(secretDeletedUid ? { secretDeletedUid } : {}),
    ...(serviceAccountDeleted ? { serviceAccountDeleted } : {}),
  };
}

const io = proxyActivities<TokenActivities>(API_WRITES);

/**
 * One kubernetes.io/service-account-token Secret: keeps its token, ca.crt and namespace filled for
 * the ServiceAccount it names, deletes it when that account does not exist, and, once it is gone,
 * takes it out of the account's `secrets`. Every decision starts from a fresh read; the token is
 * minted and written inside fillTokenSecret and never enters this workflow.
 */
export async function tokenSecretWorkflow(input: TokenSecretWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const who = `${input.namespace}/${input.name}`;
  let account: { name: string; uid?: string } | undefined = input.serviceAccountName
    ? { name: input.serviceAccountName, uid: input.serviceAccountUid }
    : undefined;
  /** when a new Secret takes the name, this run ends and hands the name over (nothing of its state) */
  const id = objectIdentity<typeof tokenSecretWorkflow>(input.uid, (next) => [
    { namespace: input.namespace, name: input.name, uid: next, tuning: input.tuning },
  ]);

  // objectIdentity publishes now; this call stays for runs recorded before it did (it is a no-op after)
  id.publish();

  async function reconcile(): Promise<ReconcileResult> {
    const seen = await io.observeTokenSecret({ namespace: input.namespace, name: input.name, uid: input.uid, ...(account ? { serviceAccount: account } : {}) });
    if (seen.secret) {
      account = { name: seen.secret.serviceAccountName, uid: seen.secret.serviceAccountUid };
    }
    const action = decideTokenSecret(seen, who);
    switch (action.type) {
      case 'nothing':
        return {};
      case 'fill': {
        const r = await io.fillTokenSecret({
          namespace: input.namespace, name: input.name, uid: input.uid,
          resourceVersion: action.resourceVersion, serviceAccount: action.serviceAccount, fill: action.fill, reason: action.reason,
        });
        // changed or gone since the read: look again rather than write over it
        return r.outcome === 'filled' ? {} : { requeueAfterMs: 0 };
      }
      case 'delete':
        await io.deleteTokenSecret({ namespace: input.namespace, name: input.name, uid: input.uid, reason: action.reason });
        return { requeueAfterMs: 0 }; // the next read finds it gone (or still finalizing) and acts on that
      case 'removeReference': {
        const r = await io.removeServiceAccountSecretReference({
          namespace: input.namespace, serviceAccount: action.serviceAccount, secretName: input.name, reason: action.reason,
        });
        if (r.outcome === 'conflict') return { requeueAfterMs: 0 };
        break;
      }
      case 'finish':
        break;
    }
    id.replacedBy(seen.replacedByUid);
    return { finished: true };
  }

  await runObjectLoop<TokenSecretEvent>({
    controller: TOKEN_CONTROLLER,
    tuning,
    apply(e) {
      // every event only prompts a fresh read; the account is remembered for the cleanup after deletion
      if (e.secret && e.secret.uid === input.uid && e.secret.serviceAccountName) {
        account = { name: e.secret.serviceAccountName, uid: e.secret.serviceAccountUid };
      }
    },
    reconcile,
    continueAsNewArgs: () => [
      { ...input, serviceAccountName: account?.name, serviceAccountUid: account?.uid } satisfies TokenSecretWorkflowInput,
    ],
  });

  await id.handOverToSuccessor();
}
