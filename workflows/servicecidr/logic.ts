/**
 * Upstream's ServiceCIDR controller rules (pkg/controller/servicecidrs, with pkg/api/servicecidr's
 * containment helpers): every ServiceCIDR carries the protection finalizer and a Ready condition;
 * one being deleted keeps its finalizer while some IPAddress the API server allocated from it
 * would be left in no ServiceCIDR, and loses it a grace period after its deletion began once none
 * would.
 */
import { familyLabelOf, parseAddr, parsePrefix, prefixContainsPrefix, prefixesOverlap, serviceCidrContainsIp, type Addr, type Prefix } from './ip';

export const CONTROLLER = 'servicecidr';

export const SERVICE_CIDR_FINALIZER = 'networking.k8s.io/service-cidr-finalizer';
/** the field manager of the status apply, upstream's controller name */
export const FIELD_MANAGER = 'service-cidr-controller';
export const READY = 'Ready';
export const READY_MESSAGE = 'Kubernetes Service CIDR is ready';
export const TERMINATING_REASON = 'Terminating';
export const TERMINATING_MESSAGE = 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR';
/** How long after its deletion began a ServiceCIDR keeps its finalizer, so every API server's allocator has stopped using it. */
export const DELETION_GRACE_MS = 10_000;

/** The IPAddress labels that say the API server's ClusterIP allocator made it, and for which family. */
export const LABEL_MANAGED_BY = 'ipaddress.kubernetes.io/managed-by';
export const LABEL_IP_FAMILY = 'ipaddress.kubernetes.io/ip-family';
export const IP_ALLOCATOR = 'ipallocator.k8s.io';

/** One condition as the controller compares it (upstream compares status, reason and message). */
export interface ConditionView {
  status: string;
  reason: string;
  message: string;
}

/** A ServiceCIDR as the controller reads it. */
export interface ServiceCidrView {
  name: string;
  uid: string;
  resourceVersion: string;
  cidrs: string[];
  /** RFC 3339; set once its deletion began */
  deletionTimestamp?: string;
  /** it carries networking.k8s.io/service-cidr-finalizer */
  finalized: boolean;
  /** its Ready condition, if any */
  ready?: ConditionView;
}

/** What the containment questions need of every ServiceCIDR. */
export interface CidrEntry {
  name: string;
  cidrs: string[];
}

/** An IPAddress as the deletion check reads it: its name is the address. */
export interface IpAddressView {
  name: string;
  labels: Record<string, string>;
}

export const READY_CONDITION: ConditionView = { status: 'True', reason: '', message: READY_MESSAGE };
export const TERMINATING_CONDITION: ConditionView = { status: 'False', reason: TERMINATING_REASON, message: TERMINATING_MESSAGE };

export function sameCondition(a: ConditionView | undefined, b: ConditionView): boolean {
  return !!a && a.status === b.status && a.reason === b.reason && a.message === b.message;
}

/** Only addresses the API server's allocator made concern the controller. */
export function allocatedByApiServer(ip: IpAddressView): boolean {
  return ip.labels[LABEL_MANAGED_BY] === IP_ALLOCATOR;
}

const prefixes = (cidrs: readonly string[]): Prefix[] => cidrs.map(parsePrefix).filter((p): p is Prefix => p !== undefined);

/** ContainsAddress: the ServiceCIDRs one of whose prefixes holds the address (one entry per matching prefix). */
export function containingServiceCidrs(all: readonly CidrEntry[], addr: Addr): string[] {
  const out: string[] = [];
  for (const c of all) for (const p of prefixes(c.cidrs)) if (serviceCidrContainsIp(p, addr)) out.push(c.name);
  return out;
}

/** The ServiceCIDRs an allocated IPAddress may block or unblock (upstream's containingServiceCIDRs). */
export function serviceCidrsOfIp(all: readonly CidrEntry[], ip: IpAddressView): string[] {
  if (!allocatedByApiServer(ip)) return [];
  const addr = parseAddr(ip.name);
  return addr ? [...new Set(containingServiceCidrs(all, addr))] : [];
}

/** OverlapsPrefix over each of a ServiceCIDR's prefixes: the ServiceCIDRs (itself included) whose state a new one may change. */
export function overlappingServiceCidrs(all: readonly CidrEntry[], cidr: CidrEntry): string[] {
  const out = new Set<string>();
  for (const p of prefixes(cidr.cidrs)) {
    for (const c of all) if (prefixes(c.cidrs).some((q) => prefixesOverlap(q, p))) out.add(c.name);
  }
  return [...out];
}

/** ContainsPrefix: the ServiceCIDRs (one entry per matching prefix) with a prefix that holds this one whole. */
export function serviceCidrsContainingPrefix(all: readonly CidrEntry[], prefix: Prefix): string[] {
  const out: string[] = [];
  for (const c of all) for (const q of prefixes(c.cidrs)) if (prefixContainsPrefix(q, prefix)) out.push(c.name);
  return out;
}

export type DeletionCheck =
  /** every prefix lies in another ServiceCIDR as well: nothing can be orphaned */
  | { canDelete: true; why: 'covered'; coveredBy: string[] }
  /** no allocated IPAddress lies in this ServiceCIDR alone */
  | { canDelete: true; why: 'no-orphans' }
  /** this address was allocated from it and lies in no other ServiceCIDR */
  | { canDelete: false; blockingIp: string };

/**
 * canDeleteCIDR. First: is each of its prefixes contained in some ServiceCIDR other than itself
 * (any, ready or being deleted alike, as upstream)? Then the deletion orphans nothing. Otherwise
 * every allocated IPAddress of each prefix's family is looked up: one whose only ServiceCIDR is
 * this one blocks the deletion. A prefix that does not parse takes no part, as upstream skips it.
 */
export function checkDeletion(self: CidrEntry, all: readonly CidrEntry[], ips: readonly IpAddressView[]): DeletionCheck {
  let covered = true;
  const coveredBy = new Set<string>();
  for (const cidr of self.cidrs) {
    const p = parsePrefix(cidr);
    if (!p) continue;
    const holders = serviceCidrsContainingPrefix(all, p);
    if (holders.length === 0 || (holders.length === 1 && holders[0] === self.name)) covered = false;
    for (const h of holders) if (h !== self.name) coveredBy.add(h);
  }
  if (covered) return { canDelete: true, why: 'covered', coveredBy: [...coveredBy].sort() };

  for (const cidr of self.cidrs) {
    const family = familyLabelOf(cidr);
    for (const ip of ips) {
      if (!allocatedByApiServer(ip) || (ip.labels[LABEL_IP_FAMILY] ?? '') !== family) continue;
      const addr = parseAddr(ip.name);
      if (!addr) continue;
      const holders = containingServiceCidrs(all, addr);
      if (holders.length === 1 && holders[0] === self.name) return { canDelete: false, blockingIp: ip.name };
    }
  }
  return { canDelete: true, why: 'no-orphans' };
}

/**
 * What a ServiceCIDR needs, from its own object alone: `finalize` while it is being deleted and
 * still holds the finalizer (the deletion check decides), `ready` while it is not being deleted
 * and lacks the finalizer or the Ready condition upstream writes, `none` otherwise.
 */
export type ServiceCidrNeed = 'finalize' | 'ready' | 'none';

export function serviceCidrNeed(v: ServiceCidrView): ServiceCidrNeed {
  if (v.deletionTimestamp) return v.finalized ? 'finalize' : 'none';
  if (!v.finalized || !sameCondition(v.ready, READY_CONDITION)) return 'ready';
  return 'none';
}

/** What the controller does next with a ServiceCIDR being deleted, once the deletion check has answered. */
export type FinalizeStep =
  | { kind: 'mark-terminating' }
  | { kind: 'blocked' }
  | { kind: 'wait'; ms: number }
  | { kind: 'remove-finalizer' };

/**
 * Blocked: Ready=False with reason Terminating, written once (then the IPAddress or ServiceCIDR
 * event that may unblock it starts the next look). Unblocked: the finalizer goes once the grace
 * period after its deletionTimestamp has passed, and not before; the condition is left as it is.
 */
export function finalizeStep(v: ServiceCidrView, check: DeletionCheck, nowMs: number): FinalizeStep {
  if (!check.canDelete) return sameCondition(v.ready, TERMINATING_CONDITION) ? { kind: 'blocked' } : { kind: 'mark-terminating' };
  const since = v.deletionTimestamp ? Date.parse(v.deletionTimestamp) : NaN;
  const left = Number.isFinite(since) ? since + DELETION_GRACE_MS - nowMs : 0;
  return left > 0 ? { kind: 'wait', ms: left } : { kind: 'remove-finalizer' };
}
