/**
 * When a CertificateSigningRequest is due for deletion, as upstream's CSR cleaner judges it on each
 * of its hourly passes: an issued request whose Approved condition was updated more than an hour
 * ago; a Denied or Failed one whose condition was updated more than an hour ago; one with no
 * condition at all created more than a day ago; an approved, issued one whose certificate has
 * expired; an approved one still without a certificate a day after its approval. Each rule is
 * "strictly later than": a time equal to the deadline is not yet past it.
 */

export const CONTROLLER = 'csrcleaner';

export const APPROVED_EXPIRATION_MS = 3600_000;
export const DENIED_EXPIRATION_MS = 3600_000;
export const PENDING_EXPIRATION_MS = 24 * 3600_000;

/** One status condition, as the cleaner reads it: its type and when it was last updated (RFC 3339; absent when zero). */
export interface CsrConditionView {
  type: string;
  lastUpdateTime?: string;
}

/** What the cleaner reads of a CSR: no request, no certificate bytes, only what the rules look at. */
export interface CsrView {
  name: string;
  uid: string;
  /** RFC 3339 */
  creationTimestamp?: string;
  conditions: CsrConditionView[];
  /** status.certificate is not empty */
  issued: boolean;
  /** RFC 3339: the NotAfter of the first certificate of the first PEM block, when it parses */
  certificateNotAfter?: string;
}

/** The rule a CSR is cleaned up under, in the order upstream checks them. */
export type CsrCleanupRule =
  | 'issued-past-deadline'
  | 'denied-past-deadline'
  | 'failed-past-deadline'
  | 'pending-past-deadline'
  | 'issued-expired'
  | 'approved-unissued-past-deadline';

/** Upstream's log line for each rule, for ours. */
export const RULE_MESSAGES: Record<CsrCleanupRule, string> = {
  'issued-past-deadline': 'approved and issued more than an hour ago',
  'denied-past-deadline': 'denied more than an hour ago',
  'failed-past-deadline': 'failed more than an hour ago',
  'pending-past-deadline': 'pending, unhandled, for more than 24 hours',
  'issued-expired': 'its certificate has expired',
  'approved-unissued-past-deadline': 'approved but not issued for more than 24 hours',
};

/** A rule's deadline: the CSR qualifies once the clock is strictly past `afterMs`. */
export interface CsrDeadline {
  rule: CsrCleanupRule;
  afterMs: number;
}

/** A Kubernetes time: undefined when absent or unparseable (upstream's zero time never qualifies). */
function ms(t: string | undefined): number | undefined {
  if (!t) return undefined;
  const v = Date.parse(t);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * Every deadline that applies to the CSR, in upstream's order. A condition with no time, a CSR
 * with no creation time or a certificate that does not parse contributes none.
 */
export function csrDeadlines(csr: CsrView): CsrDeadline[] {
  const out: CsrDeadline[] = [];
  const updatedPlus = (type: string, rule: CsrCleanupRule, d: number) => {
    for (const c of csr.conditions) {
      if (c.type !== type) continue;
      const t = ms(c.lastUpdateTime);
      if (t !== undefined) out.push({ rule, afterMs: t + d });
    }
  };
  if (csr.issued) updatedPlus('Approved', 'issued-past-deadline', APPROVED_EXPIRATION_MS);
  updatedPlus('Denied', 'denied-past-deadline', DENIED_EXPIRATION_MS);
  updatedPlus('Failed', 'failed-past-deadline', DENIED_EXPIRATION_MS);
  if (csr.conditions.length === 0) {
    const created = ms(csr.creationTimestamp);
    if (created !== undefined) out.push({ rule: 'pending-past-deadline', afterMs: created + PENDING_EXPIRATION_MS });
  }
  const notAfter = ms(csr.certificateNotAfter);
  if (csr.issued && notAfter !== undefined && csr.conditions.some((c) => c.type === 'Approved')) {
    out.push({ rule: 'issued-expired', afterMs: notAfter });
  }
  if (!csr.issued) updatedPlus('Approved', 'approved-unissued-past-deadline', PENDING_EXPIRATION_MS);
  return out;
}

export type CsrDecision =
  | { kind: 'delete'; rule: CsrCleanupRule; afterMs: number }
  | { kind: 'wait'; ms: number; rule: CsrCleanupRule; afterMs: number }
  | { kind: 'keep' };

/**
 * Upstream's handle, made continuous: the first rule (in upstream's order) already past its
 * deadline deletes the CSR; otherwise the earliest deadline is waited for (1 ms past it, as the
 * rules want strictly later); a CSR no rule will ever apply to is kept until it changes.
 */
export function decideCsr(csr: CsrView, nowMs: number): CsrDecision {
  const deadlines = csrDeadlines(csr);
  const due = deadlines.find((d) => nowMs > d.afterMs);
  if (due) return { kind: 'delete', rule: due.rule, afterMs: due.afterMs };
  if (deadlines.length === 0) return { kind: 'keep' };
  const next = deadlines.reduce((a, b) => (b.afterMs < a.afterMs ? b : a));
  return { kind: 'wait', ms: next.afterMs - nowMs + 1, rule: next.rule, afterMs: next.afterMs };
}

/** Two views the same for the rules: signals between them change nothing. */
export function sameForCleaner(a: CsrView, b: CsrView): boolean {
  return a.uid === b.uid && a.creationTimestamp === b.creationTimestamp && a.issued === b.issued
    && a.certificateNotAfter === b.certificateNotAfter && a.conditions.length === b.conditions.length
    && a.conditions.every((c, i) => c.type === b.conditions[i].type && c.lastUpdateTime === b.conditions[i].lastUpdateTime);
}
