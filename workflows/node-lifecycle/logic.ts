/*
 * The node lifecycle controller's decisions (upstream pkg/controller/nodelifecycle), as pure
 * functions: which taints a node's conditions call for, each zone's state, and the rate at which
 * a zone's unhealthy nodes are tainted NoExecute.
 */

export const CONTROLLER = 'nodelifecycle';
/** the Event source upstream's recorder names */
export const EVENT_COMPONENT = 'node-controller';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const EXCLUDE_DISRUPTION_LABEL = 'node.kubernetes.io/exclude-disruption';
/** upstream's nodeUpdateWorkerSize: nodes judged, and their writes made, at once */
export const NODE_UPDATE_WORKERS = 8;

export type ConditionStatus = 'True' | 'False' | 'Unknown';
export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

export interface TaintKey {
  key: string;
  effect: string;
}

/** The condition a NoSchedule taint stands for, and the status that calls for it (upstream's nodeConditionToTaintKeyStatusMap). */
const CONDITION_TAINTS: ReadonlyArray<{ condition: string; status: ConditionStatus; key: string }> = [
  { condition: 'Ready', status: 'False', key: TAINT_NOT_READY },
  { condition: 'Ready', status: 'Unknown', key: TAINT_UNREACHABLE },
  { condition: 'MemoryPressure', status: 'True', key: 'node.kubernetes.io/memory-pressure' },
  { condition: 'DiskPressure', status: 'True', key: 'node.kubernetes.io/disk-pressure' },
  { condition: 'NetworkUnavailable', status: 'True', key: 'node.kubernetes.io/network-unavailable' },
  { condition: 'PIDPressure', status: 'True', key: 'node.kubernetes.io/pid-pressure' },
];
const CONDITION_TAINT_KEYS = new Set(CONDITION_TAINTS.map((c) => c.key));

/**
 * The NoSchedule taints the node's conditions and spec.unschedulable call for, against those of
 * the same keys it has (upstream's doNoScheduleTaintingPass). Taints of other keys are not ours.
 */
export function noScheduleDiff(
  conditions: ReadonlyArray<{ type: string; status: string }>,
  unschedulable: boolean,
  taints: readonly TaintKey[],
): { add: TaintKey[]; remove: TaintKey[] } {
  const want: TaintKey[] = [];
  for (const c of conditions) {
    for (const m of CONDITION_TAINTS) if (m.condition === c.type && m.status === c.status) want.push({ key: m.key, effect: 'NoSchedule' });
  }
  if (unschedulable) want.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  const have = taints.filter((t) => t.effect === 'NoSchedule' && (t.key === TAINT_UNSCHEDULABLE || CONDITION_TAINT_KEYS.has(t.key)));
  const has = (list: readonly TaintKey[], t: TaintKey) => list.some((x) => x.key === t.key && x.effect === t.effect);
  return { add: want.filter((t) => !has(have, t)), remove: have.filter((t) => !has(want, t)) };
}

/** upstream keeps the deprecated beta OS and arch labels equal to the stable ones */
const LABEL_PAIRS = [
  { primary: 'kubernetes.io/os', secondary: 'beta.kubernetes.io/os' },
  { primary: 'kubernetes.io/arch', secondary: 'beta.kubernetes.io/arch' },
];

/** The beta labels to set so they match the stable ones (upstream's reconcileNodeLabels). */
export function labelsToReconcile(labels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!labels) return out;
  for (const { primary, secondary } of LABEL_PAIRS) {
    if (!(primary in labels)) continue;
    if (labels[secondary] !== labels[primary]) out[secondary] = labels[primary];
  }
  return out;
}

/** upstream's GetZoneKey: region and zone (the beta labels first), '' when neither is set */
export function zoneKey(labels: Readonly<Record<string, string>> | undefined): string {
  const l = labels ?? {};
  const zone = l['failure-domain.beta.kubernetes.io/zone'] ?? l['topology.kubernetes.io/zone'] ?? '';
  const region = l['failure-domain.beta.kubernetes.io/region'] ?? l['topology.kubernetes.io/region'] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\u0000:${zone}`;
}

/** A zone key as people read it: `region/zone`. */
export const zoneLabel = (key: string) => key.replace(':\u0000:', '/');

export interface DisruptionSettings {
  /** --node-eviction-rate, nodes per second */
  evictionRate: number;
  /** --secondary-node-eviction-rate */
  secondaryEvictionRate: number;
  /** --large-cluster-size-threshold */
  largeClusterThreshold: number;
  /** --unhealthy-zone-threshold */
  unhealthyZoneThreshold: number;
}

/**
 * A zone's state from its nodes' Ready statuses (undefined: no Ready condition): all not ready is
 * full disruption; at least three not ready and at least the threshold's share is partial.
 */
export function computeZoneState(ready: ReadonlyArray<ConditionStatus | undefined>, threshold: number): { unhealthy: number; state: ZoneState } {
  const readyCount = ready.filter((s) => s === 'True').length;
  const notReady = ready.length - readyCount;
  if (readyCount === 0 && notReady > 0) return { unhealthy: notReady, state: 'FullDisruption' };
  // float32 in upstream; the threshold's own rounding is the same either side of the comparison
  if (notReady > 2 && Math.fround(notReady / ready.length) >= Math.fround(threshold)) return { unhealthy: notReady, state: 'PartialDisruption' };
  return { unhealthy: notReady, state: 'Normal' };
}

/** The tainting rate a zone's state calls for (upstream's setLimiterInZone). */
export function zoneRate(state: ZoneState, zoneSize: number, s: DisruptionSettings): number {
  switch (state) {
    case 'Normal':
      return s.evictionRate;
    case 'PartialDisruption':
      return zoneSize > s.largeClusterThreshold ? s.secondaryEvictionRate : 0;
    case 'FullDisruption':
      return s.evictionRate;
    default:
      return s.evictionRate;
  }
}

export interface DisruptionDecision {
  zoneStates: Record<string, ZoneState>;
  /** zones whose limiter is swapped, to this rate */
  rates: Record<string, number>;
  /** every zone fully disrupted: the controller stops tainting and lifts the NoExecute taints everywhere */
  enterMasterDisruption: boolean;
  /** some node is Ready again after that: every node gets a fresh grace period */
  exitMasterDisruption: boolean;
  /** zones whose state changed, for the log */
  changed: Array<{ zone: string; from: ZoneState; to: ZoneState }>;
}

/**
 * Upstream's handleDisruption: new zone states from the Ready statuses per zone (excluded nodes
 * left out), with the special case where every zone is fully disrupted, which upstream reads as
 * the control plane having lost the nodes rather than the nodes having died.
 */
export function handleDisruption(
  previous: Readonly<Record<string, ZoneState>>,
  readyByZone: Readonly<Record<string, ReadonlyArray<ConditionStatus | undefined>>>,
  s: DisruptionSettings,
): DisruptionDecision {
  const fresh: Record<string, ZoneState> = {};
  let allAreFullyDisrupted = true;
  const states: Record<string, ZoneState> = {};
  for (const [zone, ready] of Object.entries(readyByZone)) {
    const { state } = computeZoneState(ready, s.unhealthyZoneThreshold);
    if (state !== 'FullDisruption') allAreFullyDisrupted = false;
    fresh[zone] = state;
    states[zone] = previous[zone] ?? 'Initial';
  }
  // zones with no nodes left are forgotten; a zone seen for the first time is Initial, so not fully disrupted
  const allWasFullyDisrupted = Object.values(states).every((z) => z === 'FullDisruption');
  const out: DisruptionDecision = { zoneStates: states, rates: {}, enterMasterDisruption: false, exitMasterDisruption: false, changed: [] };
  if (allAreFullyDisrupted && allWasFullyDisrupted) return out;
  if (allAreFullyDisrupted) {
    out.enterMasterDisruption = true;
    for (const zone of Object.keys(states)) {
      out.rates[zone] = 0;
      if (states[zone] !== 'FullDisruption') out.changed.push({ zone, from: states[zone], to: 'FullDisruption' });
      states[zone] = 'FullDisruption';
    }
    return out;
  }
  if (allWasFullyDisrupted) {
    out.exitMasterDisruption = true;
    for (const zone of Object.keys(states)) {
      out.rates[zone] = zoneRate(fresh[zone], readyByZone[zone].length, s);
      if (states[zone] !== fresh[zone]) out.changed.push({ zone, from: states[zone], to: fresh[zone] });
      states[zone] = fresh[zone];
    }
    return out;
  }
  for (const zone of Object.keys(states)) {
    if (states[zone] === fresh[zone]) continue;
    out.rates[zone] = zoneRate(fresh[zone], readyByZone[zone].length, s);
    out.changed.push({ zone, from: states[zone], to: fresh[zone] });
    states[zone] = fresh[zone];
  }
  return out;
}

/**
 * client-go's token bucket with a burst of one, as upstream's eviction limiter: a fresh bucket
 * holds one token, refilled at `qps`; a rate of zero never allows anything.
 */
export interface TokenBucket {
  qps: number;
  tokens: number;
  /** when `tokens` was last brought up to date, ms since the epoch */
  atMs: number;
}

export const newBucket = (qps: number, nowMs: number): TokenBucket => ({ qps, tokens: qps > 0 ? 1 : 0, atMs: nowMs });

/** How late a Temporal timer may fire: the tokens of that much time are made up for at a wake. */
export const TIMER_LATENESS_MS = 1000;

/**
 * How a pass looks at a zone's bucket:
 * - `idle`: nothing waited since the bucket was last looked at; it holds one token at most (burst 1).
 * - `draining`: nodes have been waiting since the bucket was last looked at. Upstream polls its
 *   bucket every 100 ms while nodes wait, so each token is spent the moment it is there; a
 *   workflow timer fires up to a second late, so the tokens of that second are spent at the wake
 *   too, which keeps upstream's rate at any --node-eviction-rate. Never more: a replica that was
 *   down for a while must not make up for its downtime with a burst.
 * - `continuing`: later in the same pass, after a taint was written. What the wake granted is kept;
 *   the time the write took (a second, or a failover's worth when the replica writing it died)
 *   adds one token at most, as upstream's burst of 1 would after a slow API call.
 */
export type BucketLook = 'idle' | 'draining' | 'continuing';

function refill(b: TokenBucket, nowMs: number, look: BucketLook = 'idle'): TokenBucket {
  if (b.qps <= 0) return { ...b, atMs: nowMs };
  const accrued = b.tokens + ((nowMs - b.atMs) / 1000) * b.qps;
  const tokens = look === 'draining' ? Math.min(1 + (TIMER_LATENESS_MS / 1000) * b.qps, accrued)
    : look === 'continuing' ? Math.max(b.tokens, Math.min(1, accrued))
      : Math.min(1, accrued);
  return { ...b, tokens, atMs: nowMs };
}

/**
 * upstream's SwapLimiter: the same rate keeps its bucket; a new one starts full unless the old one
 * had no token to give (a swap must not hand out a free eviction).
 */
export function swapBucket(b: TokenBucket, qps: number, nowMs: number): TokenBucket {
  if (Math.fround(b.qps) === Math.fround(qps)) return b;
  if (qps <= 0) return { qps: 0, tokens: 0, atMs: nowMs };
  return { qps, tokens: refill(b, nowMs).tokens >= 1 ? 1 : 0, atMs: nowMs };
}

/** Takes a token if one is there. */
export function tryAccept(b: TokenBucket, nowMs: number, look: BucketLook = 'idle'): { ok: boolean; bucket: TokenBucket } {
  const r = refill(b, nowMs, look);
  if (r.tokens >= 1) return { ok: true, bucket: { ...r, tokens: r.tokens - 1 } };
  return { ok: false, bucket: r };
}

/** When the next token is there (undefined: never). */
export function nextTokenAt(b: TokenBucket, nowMs: number): number | undefined {
  if (b.qps <= 0) return undefined;
  const r = refill(b, nowMs);
  if (r.tokens >= 1) return nowMs;
  return nowMs + Math.ceil(((1 - r.tokens) / r.qps) * 1000);
}
