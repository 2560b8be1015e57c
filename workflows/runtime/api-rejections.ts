import { workflowInfo } from '@temporalio/workflow';
import { SA_KIND, SA_NAME, SA_NAMESPACE, SA_UID } from '../search-attributes';

/** What the API server said when it refused an activity's call for good (activities/kube/failures.ts). */
export interface ApiRejection {
  status: number;
  reason: string;
  /** the failure's message: `<VERB> <path>: <status> <the server's message>` */
  message: string;
}

/**
 * The API rejection at the root of a reconcile's failure, if that is what it was: the
 * ApplicationFailure of type ApiRejected an activity threw, under the ActivityFailure the workflow
 * sees. Duck-typed: failures cross the workflow boundary as plain errors with a cause chain.
 */
export function apiRejectionOf(err: unknown): ApiRejection | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const x = e as { type?: unknown; details?: unknown; message?: unknown; cause?: unknown };
    if (x.type === 'ApiRejected' && Array.isArray(x.details)) {
      const d = x.details[0] as { status?: unknown; reason?: unknown } | undefined;
      if (typeof d?.status === 'number') return { status: d.status, reason: typeof d.reason === 'string' ? d.reason : '', message: String(x.message ?? '') };
    }
    e = x.cause;
  }
  return undefined;
}

/** The object a run is about, as its search attributes name it (the informer and singletons set them). */
export interface RunObject {
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export function runObject(): RunObject | undefined {
  const sa = workflowInfo().typedSearchAttributes;
  const kind = sa.get(SA_KIND);
  const name = sa.get(SA_NAME);
  if (!kind || !name) return undefined;
  return { kind, name, namespace: sa.get(SA_NAMESPACE) ?? '', uid: sa.get(SA_UID) ?? '' };
}

/** The input of the reportForbidden activity every controller's worker has (activities/kube/forbidden.ts). */
export interface ForbiddenReport {
  /** why the activity runs, in words (DESIGN 7) */
  reason: string;
  controller: string;
  object: RunObject;
  /** the API server's refusal, as the failure said it */
  message: string;
}
