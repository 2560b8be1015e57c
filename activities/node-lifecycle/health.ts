/**
 * When this informer last heard from each node's kubelet: upstream's nodeHealthMap, the part of
 * node health that is an observation rather than a decision. A kubelet is heard when its Ready
 * condition's heartbeat changes or its Lease is renewed, and the time is this process's clock
 * when the change arrives, never the kubelet's own timestamps, so a node whose clock is off is
 * judged like any other. Kept in the informer, in memory, as upstream keeps it: a replica that
 * takes the watch over starts every node's grace period afresh, as a restarted upstream does.
 */

export interface ObservedNode {
  name: string;
  /** ms since the epoch */
  creationMs: number;
  ready?: { heartbeat?: string; transition?: string };
}

interface Health {
  probeAtMs: number;
  /** the Ready condition as last seen; undefined when the node had none */
  ready?: { heartbeat?: string; transition?: string };
  seen: boolean;
  /** the Lease's renewTime as last seen, ms since the epoch */
  leaseRenewMs?: number;
}

export interface GracePeriods {
  /** --node-monitor-grace-period, ms */
  monitorMs: number;
  /** --node-startup-grace-period, ms */
  startupMs: number;
}

export class NodeHealthTracker {
  private readonly nodes = new Map<string, Health>();

  /** A node as its watch event shows it. */
  observeNode(n: ObservedNode, nowMs: number): void {
    const h = this.nodes.get(n.name);
    if (!n.ready) {
      // no Ready condition yet: the startup grace period runs from the node's creation
      if (!h) this.nodes.set(n.name, { probeAtMs: n.creationMs, seen: true });
      else this.nodes.set(n.name, { ...h, ready: undefined, seen: true });
      return;
    }
    if (!h || !h.seen || !h.ready || h.ready.heartbeat !== n.ready.heartbeat) {
      // first sight, a Ready condition that appeared, or a new heartbeat: heard now
      this.nodes.set(n.name, { ...h, probeAtMs: nowMs, ready: { ...n.ready }, seen: true });
      return;
    }
    this.nodes.set(n.name, { ...h, ready: { ...n.ready } });
  }

  /** A renewal of the node's Lease (kube-node-lease/<node>). */
  observeLease(name: string, renewMs: number | undefined, nowMs: number): void {
    if (renewMs === undefined) return;
    const h = this.nodes.get(name);
    if (h?.leaseRenewMs !== undefined && h.leaseRenewMs >= renewMs) return;
    // a Lease seen before its node counts once the node is: kept, with the node unseen
    this.nodes.set(name, h ? { ...h, leaseRenewMs: renewMs, probeAtMs: h.seen ? nowMs : h.probeAtMs } : { probeAtMs: nowMs, leaseRenewMs: renewMs, seen: false });
  }

  forget(name: string): void {
    this.nodes.delete(name);
  }

  /** When the kubelet was last heard from; undefined for a node not seen yet. */
  probeAt(name: string): number | undefined {
    const h = this.nodes.get(name);
    return h?.seen ? h.probeAtMs : undefined;
  }

  /** Silent past its grace period: the startup one while the node has no Ready condition. */
  stale(name: string, nowMs: number, grace: GracePeriods): boolean {
    const h = this.nodes.get(name);
    if (!h?.seen) return false;
    return nowMs > h.probeAtMs + (h.ready ? grace.monitorMs : grace.startupMs);
  }

  get size(): number {
    return this.nodes.size;
  }
}
