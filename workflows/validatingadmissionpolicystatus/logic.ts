/**
 * When a ValidatingAdmissionPolicy's status is due: upstream type-checks a policy whose
 * metadata.generation is greater than its status.observedGeneration, and writes nothing otherwise.
 * Each check is one episode here: the watch starts a run for a policy that is due, the run has it
 * checked and its status written, and ends.
 */

export const CONTROLLER = 'vapstatus';

/** upstream's field manager for the status it applies */
export const FIELD_MANAGER = 'validatingadmissionpolicy-status';

/** What the watch knows of a policy: enough to tell whether a check is due. */
export interface PolicyView {
  name: string;
  uid: string;
  generation: number;
  /** status.observedGeneration; 0 when unset */
  observedGeneration: number;
}

/** A check is due while the spec has a generation the status has not observed. */
export function checkDue(p: Pick<PolicyView, 'generation' | 'observedGeneration'>): boolean {
  return p.generation > p.observedGeneration;
}

/** The words the check's activity input carries. */
export function checkReason(p: Pick<PolicyView, 'generation' | 'observedGeneration'>): string {
  return p.observedGeneration === 0
    ? `generation ${p.generation} never type-checked`
    : `generation ${p.generation} is newer than the observed generation ${p.observedGeneration}`;
}
