/**
 * The namespace controller's decisions, pure and deterministic: what a terminating namespace's
 * next pass deletes, how long to wait for what remains, which status conditions it reports and
 * when its `kubernetes` finalizer may go. Upstream: pkg/controller/namespace/deletion.
 */

import {
  NAMESPACE_FINALIZER,
  type ContentObservation,
  type ContentOutcome,
  type NamespaceCondition,
  type NamespaceConditionType,
  type NamespaceView,
  type NamespacedDiscovery,
  type NamespacedResource,
} from './types';

/** Items that still carry finalizers get this long to let their owners finish, as upstream assumes. */
export const FINALIZER_ESTIMATE_SECONDS = 15;

/**
 * Upstream waits this long after a namespace event before deleting: HA apiservers must all see the
 * deletion (and refuse new content) and late creations must reach every etcd member first.
 */
export const DELETION_GRACE_MS = 5000;

/** --namespace-sync-period default */
export const DEFAULT_NAMESPACE_SYNC_MS = 5 * 60_000;

/** Upstream's namespace queue retries a failing namespace at least once a minute. */
export const NAMESPACE_BACKOFF_MAX_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// identity

/** How a resource is named in progress and in the Web UI: `deployments.apps`, `pods`. */
export function resourceKey(r: Pick<NamespacedResource, 'group' | 'resource'>): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** schema.GroupVersionResource as Go prints it, which upstream's messages embed. */
export function gvrString(r: Pick<NamespacedResource, 'group' | 'version' | 'resource'>): string {
  return `${r.group}/${r.version}, Resource=${r.resource}`;
}

function isCorePods(r: Pick<NamespacedResource, 'group' | 'resource'>): boolean {
  return r.group === '' && r.resource === 'pods';
}

// ---------------------------------------------------------------------------------------------
// namespace state

function parseTime(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** Epoch millis as metav1.Time serializes: RFC 3339, whole seconds, UTC. */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function isBeingDeleted(ns: Pick<NamespaceView, 'deletionTimestamp'>): boolean {
  return parseTime(ns.deletionTimestamp) !== undefined;
}

/** Upstream stops once spec.finalizers is empty, whoever emptied it. */
export function isFinalized(ns: Pick<NamespaceView, 'finalizers'>): boolean {
  return ns.finalizers.length === 0;
}

export function holdsOurFinalizer(ns: Pick<NamespaceView, 'finalizers'>): boolean {
  return ns.finalizers.includes(NAMESPACE_FINALIZER);
}

/** How much longer the deletion grace period runs; 0 once it is over. */
export function graceRemainingMs(deletionTimestamp: string | undefined, now: number, graceMs = DELETION_GRACE_MS): number {
  const at = parseTime(deletionTimestamp);
  return at === undefined ? 0 : Math.max(0, at + graceMs - now);
}

/**
 * spec.finalizers without ours, deduplicated and sorted as upstream writes them through the
 * finalize subresource.
 */
export function withoutOurFinalizer(finalizers: readonly string[]): string[] {
  return [...new Set(finalizers.filter((f) => f !== NAMESPACE_FINALIZER))].sort();
}

// ---------------------------------------------------------------------------------------------
// the wait for graceful pods

export interface PodGraceView {
  phase?: string;
  terminationGracePeriodSeconds?: number | null;
}

/** The longest grace period among pods that may still be running; terminal pods need none. */
export function maxPodGraceSeconds(pods: Iterable<PodGraceView>): number {
  let max = 0;
  for (const p of pods) {
    if (p.phase === 'Succeeded' || p.phase === 'Failed') continue;
    const g = p.terminationGracePeriodSeconds;
    if (typeof g === 'number' && g > max) max = g;
  }
  return max;
}

/**
 * Seconds to wait for pods to terminate: their longest grace period, unless the namespace has
 * been terminating at least that long already (then nothing is owed and remaining pods are a fault).
 */
export function gracefulEstimateSeconds(podGraceSeconds: number, deletionTimestamp: string | undefined, now: number): number {
  const at = parseTime(deletionTimestamp);
  const elapsedMs = at === undefined ? 0 : now - at;
  return elapsedMs >= podGraceSeconds * 1000 ? 0 : podGraceSeconds;
}

/** Upstream requeues a namespace with content remaining after half the estimate, plus a second. */
export function requeueAfterEstimateMs(estimateSeconds: number): number {
  return (Math.floor(estimateSeconds / 2) + 1) * 1000;
}

// ---------------------------------------------------------------------------------------------
// one resource

const EMPTY: ContentOutcome = { remaining: 0, finalizers: {}, estimateSeconds: 0 };

/**
 * The verdict on one resource's content after its delete: gone; still going (graceful pods, or
 * items with finalizers, which get a fixed allowance); or an error, including items that remain
 * with nothing to explain them.
 */
export function classifyContent(namespace: string, obs: ContentObservation, deletionTimestamp: string | undefined, now: number): ContentOutcome {
  const estimate = obs.podGraceSeconds !== undefined ? gracefulEstimateSeconds(obs.podGraceSeconds, deletionTimestamp, now) : 0;
  if (obs.error !== undefined) return { ...EMPTY, estimateSeconds: estimate, error: obs.error };
  if (obs.remaining === 0) return EMPTY;
  const finalizers = Object.fromEntries(Object.entries(obs.finalizers).filter(([, n]) => n > 0));
  if (estimate > 0) return { remaining: obs.remaining, finalizers, estimateSeconds: estimate };
  if (Object.keys(finalizers).length) return { remaining: obs.remaining, finalizers, estimateSeconds: FINALIZER_ESTIMATE_SECONDS };
  return {
    remaining: obs.remaining,
    finalizers: {},
    estimateSeconds: 0,
    error: `unexpected items still remain in namespace: ${namespace} for gvr: ${gvrString(obs.resource)}`,
  };
}

export function isEmptied(o: ContentOutcome): boolean {
  return o.remaining === 0 && o.error === undefined;
}

// ---------------------------------------------------------------------------------------------
// a pass over every resource

/** Core pods first (their grace periods are the long pole), then by name, so passes read alike. */
export function orderResources(resources: readonly NamespacedResource[]): NamespacedResource[] {
  return [...resources].sort((a, b) => {
    if (isCorePods(a) !== isCorePods(b)) return isCorePods(a) ? -1 : 1;
    const ka = resourceKey(a);
    const kb = resourceKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

export interface PassPlan {
  /** resources whose content is (still) to be deleted this pass */
  toDelete: NamespacedResource[];
  /** resources emptied by an earlier pass: checked cheaply before finalizing, in case content came back */
  toVerify: NamespacedResource[];
}

/** What a pass does, given what earlier passes (possibly before a restart) already emptied. */
export function planPass(discovered: readonly NamespacedResource[], emptied: ReadonlySet<string>): PassPlan {
  const ordered = orderResources(discovered);
  return {
    toDelete: ordered.filter((r) => !emptied.has(resourceKey(r))),
    toVerify: ordered.filter((r) => emptied.has(resourceKey(r)) && r.list),
  };
}

export interface PassSummary {
  /** the longest wait any resource asked for, seconds */
  estimateSeconds: number;
  /** content deletion errors, one per failed resource */
  contentErrors: string[];
  /** discovery failed for some or all groups: what the API may hold is not fully known */
  discoveryFailed: boolean;
  /** group versions that could not be parsed */
  parseFailed: boolean;
  /** resourceKey-ish label (upstream's `resource.group`) -> remaining count, for resources with content left */
  remainingByResource: Record<string, number>;
  /** finalizer -> remaining items carrying it */
  remainingByFinalizer: Record<string, number>;
}

/**
 * Totals over the discovered resources: those emptied earlier count as empty, the rest by their
 * latest outcome. Resources no longer discovered are not counted (upstream only sees what
 * discovery returns).
 */
export function summarizePass(
  discovery: NamespacedDiscovery,
  outcomes: ReadonlyMap<string, ContentOutcome>,
  emptied: ReadonlySet<string>,
): PassSummary {
  const s: PassSummary = {
    estimateSeconds: 0,
    contentErrors: [],
    discoveryFailed: discovery.failure !== undefined || discovery.failedGroups.length > 0,
    parseFailed: discovery.unparsable.length > 0,
    remainingByResource: {},
    remainingByFinalizer: {},
  };
  for (const r of discovery.resources) {
    const key = resourceKey(r);
    const o = emptied.has(key) ? EMPTY : outcomes.get(key);
    if (!o) continue;
    if (o.error !== undefined) s.contentErrors.push(o.error);
    s.estimateSeconds = Math.max(s.estimateSeconds, o.estimateSeconds);
    if (o.remaining > 0) {
      const label = `${r.resource}.${r.group}`;
      s.remainingByResource[label] = (s.remainingByResource[label] ?? 0) + o.remaining;
      for (const [f, n] of Object.entries(o.finalizers)) if (n > 0) s.remainingByFinalizer[f] = (s.remainingByFinalizer[f] ?? 0) + n;
    }
  }
  return s;
}

export type PassDecision =
  /** something failed (discovery, a delete, content that should be gone): retry with backoff */
  | { kind: 'retry' }
  /** content is on its way out: look again after this long */
  | { kind: 'wait'; afterMs: number }
  /** nothing is left (once resources emptied earlier are verified): remove our finalizer */
  | { kind: 'finalize' };

/** Errors win over waiting, as upstream returns the error before it looks at the estimate. */
export function decidePass(s: PassSummary): PassDecision {
  if (s.discoveryFailed || s.parseFailed || s.contentErrors.length) return { kind: 'retry' };
  if (s.estimateSeconds > 0) return { kind: 'wait', afterMs: requeueAfterEstimateMs(s.estimateSeconds) };
  return { kind: 'finalize' };
}

// ---------------------------------------------------------------------------------------------
// status conditions

/** The condition types this controller keeps, in the order it adds them. */
export const NAMESPACE_CONDITION_TYPES: readonly NamespaceConditionType[] = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
];

const OK: Record<NamespaceConditionType, { reason: string; message: string }> = {
  NamespaceDeletionDiscoveryFailure: { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: { reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
};

/** Go's sort.Strings order: byte-wise, which for these ASCII strings is code-unit order. */
function sortStrings(xs: string[]): string[] {
  return xs.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** client-go's discovery error text, with the count upstream prefixes for partial failures. */
export function discoveryFailureMessage(d: NamespacedDiscovery): string | undefined {
  if (d.failure !== undefined) return d.failure;
  if (!d.failedGroups.length) return undefined;
  const parts = sortStrings(d.failedGroups.map((g) => `${g.groupVersion}: ${g.message}`));
  return `Discovery failed for some groups, ${d.failedGroups.length} failing: unable to retrieve the complete list of server APIs: ${parts.join(', ')}`;
}

/** The five conditions a pass reports (without times): True with the failure, or False with the all-clear. */
export function namespaceConditions(discovery: NamespacedDiscovery, s: PassSummary): NamespaceCondition[] {
  const failing = new Map<NamespaceConditionType, { reason: string; message: string }>();
  const discoveryMsg = discoveryFailureMessage(discovery);
  if (discoveryMsg !== undefined) failing.set('NamespaceDeletionDiscoveryFailure', { reason: 'DiscoveryFailed', message: discoveryMsg });
  if (discovery.unparsable.length) {
    // upstream stops parsing at the first bad group version and reports that one
    failing.set('NamespaceDeletionGroupVersionParsingFailure', { reason: 'GroupVersionParsingFailed', message: `unexpected GroupVersion string: ${discovery.unparsable[0]}` });
  }
  if (s.contentErrors.length) {
    const msgs = sortStrings([...s.contentErrors]);
    failing.set('NamespaceDeletionContentFailure', {
      reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
    });
  }
  const byResource = Object.entries(s.remainingByResource).filter(([, n]) => n > 0);
  if (byResource.length) {
    const parts = sortStrings(byResource.map(([label, n]) => `${label} has ${n} resource instances`));
    failing.set('NamespaceContentRemaining', { reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${parts.join(', ')}` });
  }
  const byFinalizer = Object.entries(s.remainingByFinalizer).filter(([, n]) => n > 0);
  if (byFinalizer.length) {
    const parts = sortStrings(byFinalizer.map(([f, n]) => `${f} in ${n} resource instances`));
    failing.set('NamespaceFinalizersRemaining', {
      reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${parts.join(', ')}`,
    });
  }
  return NAMESPACE_CONDITION_TYPES.map((type) => {
    const f = failing.get(type);
    return f ? { type, status: 'True', ...f } : { type, status: 'False', ...OK[type] };
  });
}

/**
 * Fold freshly computed conditions into the stored ones as upstream does: other types are kept
 * as they are, a missing type is appended, and a changed one is updated in place, its transition
 * time moving only when its status flips.
 */
export function mergeConditions(
  existing: readonly NamespaceCondition[],
  computed: readonly NamespaceCondition[],
  nowIso: string,
): { conditions: NamespaceCondition[]; changed: boolean } {
  const conditions = existing.map((c) => ({ ...c }));
  let changed = false;
  for (const c of computed) {
    const old = conditions.find((x) => x.type === c.type);
    if (!old) {
      conditions.push({ ...c, lastTransitionTime: nowIso });
      changed = true;
    } else if (old.status !== c.status || (old.reason ?? '') !== (c.reason ?? '') || (old.message ?? '') !== (c.message ?? '')) {
      if (old.status !== c.status) old.lastTransitionTime = nowIso;
      old.status = c.status;
      old.reason = c.reason;
      old.message = c.message;
      changed = true;
    }
  }
  return { conditions, changed };
}

/** The status to write (phase Terminating plus the merged conditions), or undefined when it would change nothing. */
export function nextStatus(
  ns: Pick<NamespaceView, 'phase' | 'conditions'>,
  computed: readonly NamespaceCondition[],
  now: number,
): { phase: string; conditions: NamespaceCondition[] } | undefined {
  const merged = mergeConditions(ns.conditions, computed, formatTime(now));
  if (!merged.changed && ns.phase === 'Terminating') return undefined;
  return { phase: 'Terminating', conditions: merged.conditions };
}
