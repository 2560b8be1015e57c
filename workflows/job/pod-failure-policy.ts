/**
 * Matching a failed pod against a Job's podFailurePolicy, as upstream's job controller (v1.35) does.
 * Pure and workflow-safe. JobBackoffLimitPerIndex is on by default in v1.35, so FailIndex rules apply.
 */
import type {
  ConditionLike,
  ContainerStatusLike,
  JobPodStatus,
  PodFailurePolicy,
  PodFailurePolicyAction,
  PodFailurePolicyOnExitCodesRequirement,
  PodFailurePolicyOnPodConditionsPattern,
} from './api';

export interface PodFailurePolicyMatch {
  /** set only for a FailJob match: the text upstream puts into the Job's Failed condition */
  message?: string;
  /** false only for an Ignore match: the failure does not count towards backoffLimit(PerIndex) */
  countFailed: boolean;
  /** the matched rule's action; absent when no rule matched */
  action?: PodFailurePolicyAction;
}

const NO_MATCH: PodFailurePolicyMatch = { countFailed: true };

/**
 * The first rule (in order) that the failed pod matches decides. `podKey` is "namespace/name", used
 * only in the FailJob message. A rule with an action this module does not know never matches, so the
 * next rule gets its chance, as upstream's switch falls through.
 */
export function matchPodFailurePolicy(
  policy: PodFailurePolicy | undefined,
  pod: JobPodStatus,
  podKey = '',
): PodFailurePolicyMatch {
  if (!policy) return { ...NO_MATCH };
  for (let index = 0; index < policy.rules.length; index++) {
    const rule = policy.rules[index];
    if (rule.onExitCodes) {
      const container = matchOnExitCodes(pod, rule.onExitCodes);
      if (!container) continue;
      const exitCode = container.terminated?.exitCode ?? 0;
      const failJob = `Container ${container.name} for pod ${podKey} failed with exit code ${exitCode} matching FailJob rule at index ${index}`;
      const decided = decide(rule.action, failJob);
      if (decided) return decided;
    } else if (rule.onPodConditions) {
      const condition = matchOnPodConditions(pod.conditions, rule.onPodConditions);
      if (!condition) continue;
      const failJob = `Pod ${podKey} has condition ${condition.type} matching FailJob rule at index ${index}`;
      const decided = decide(rule.action, failJob);
      if (decided) return decided;
    }
  }
  return { ...NO_MATCH };
}

function decide(action: PodFailurePolicyAction, failJobMessage: string): PodFailurePolicyMatch | undefined {
  switch (action) {
    case 'Ignore':
      return { countFailed: false, action };
    case 'FailIndex':
    case 'Count':
      return { countFailed: true, action };
    case 'FailJob':
      return { message: failJobMessage, countFailed: true, action };
    default:
      return undefined;
  }
}

/** Regular containers are looked at before init containers; the first match wins. */
export function matchOnExitCodes(
  pod: Pick<JobPodStatus, 'containerStatuses' | 'initContainerStatuses'>,
  req: PodFailurePolicyOnExitCodesRequirement,
): ContainerStatusLike | undefined {
  return firstMatchingContainer(pod.containerStatuses, req) ?? firstMatchingContainer(pod.initContainerStatuses, req);
}

function firstMatchingContainer(
  statuses: readonly ContainerStatusLike[] | undefined,
  req: PodFailurePolicyOnExitCodesRequirement,
): ContainerStatusLike | undefined {
  for (const cs of statuses ?? []) {
    // a container still running (or terminating) has no exit code to judge yet
    if (!cs.terminated) continue;
    if (req.containerName !== undefined && req.containerName !== cs.name) continue;
    // exit code 0 is success and never matches, even under NotIn
    if (cs.terminated.exitCode === 0) continue;
    if (exitCodeMatches(cs.terminated.exitCode, req)) return cs;
  }
  return undefined;
}

function exitCodeMatches(exitCode: number, req: PodFailurePolicyOnExitCodesRequirement): boolean {
  switch (req.operator) {
    case 'In':
      return req.values.includes(exitCode);
    case 'NotIn':
      return !req.values.includes(exitCode);
    default:
      return false;
  }
}

/** Pod conditions are scanned in the pod's order, so the first pod condition hit by any pattern wins. */
export function matchOnPodConditions(
  conditions: readonly ConditionLike[] | undefined,
  patterns: readonly PodFailurePolicyOnPodConditionsPattern[],
): ConditionLike | undefined {
  for (const c of conditions ?? []) {
    for (const p of patterns) {
      // the API server defaults a pattern's status to True
      if (c.type === p.type && c.status === (p.status ?? 'True')) return c;
    }
  }
  return undefined;
}
