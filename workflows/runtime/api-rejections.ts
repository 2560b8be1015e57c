import { ActivityFailure, ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { SA_KIND, SA_NAME, SA_NAMESPACE, SA_UID } from '../search-attributes';

/**
 * The authorizer's refusal in a failure's text, in the API server's words (`pods "web-0" is
 * forbidden: User "x" cannot create resource "pods" ...`): the caller lacks a right. Admission's
 * 403s (an exceeded quota, a webhook's denial) do not read so; controllers report those with their
 * own reasons, as upstream's do.
 */
export function authorizerRefusalIn(text: string): string | undefined {
  return /(?:[\w.-]+(?: "[^"]*")? )?is forbidden: User "[^"]*" cannot [^;\n]*/.exec(text)?.[0];
}

export function refusedByAuthorizer(status: number, message: string): boolean {
  return status === 403 && authorizerRefusalIn(message) !== undefined;
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

/** The input of the reportForbidden activity every controller's worker has (activities/kube/failure-reports.ts). */
export interface ForbiddenReport {
  /** why the activity runs, in words (DESIGN 7) */
  reason: string;
  controller: string;
  object: RunObject;
  /** the authorizer's refusal, in the API server's words */
  message: string;
}

/**
 * Where a controller's own code threw: routing a watch event to its workflows (its routes, in the
 * informer); in its workflow, folding an event into its view or reconciling; or in one of its
 * activities (the code around the API calls, not the API's answer).
 */
export type ThrowStage = 'route' | 'event' | 'reconcile' | 'activity';

/**
 * The failure type an activity's own code throwing leaves with (workers/manager.ts sets it on a
 * TypeError, RangeError or ReferenceError). It is final: the same code on the same object throws
 * again, so the attempt's retries would only delay the object loop's backoff and its report.
 */
export const ACTIVITY_CODE_THREW = 'ActivityCodeThrew';

/** An activity failure whose cause is the activity's own code throwing (see ACTIVITY_CODE_THREW). */
export function activityCodeThrew(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === ACTIVITY_CODE_THREW;
}

/** The input of the reportThrown activity every controller's worker has (activities/kube/failure-reports.ts). */
export interface ThrownReport {
  /** why the activity runs, in words (DESIGN 7) */
  reason: string;
  controller: string;
  object: RunObject;
  stage: ThrowStage;
  /** the error, as the LastError memo shows it */
  message: string;
}
