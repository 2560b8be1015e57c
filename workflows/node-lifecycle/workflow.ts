import { log, proxyActivities } from '@temporalio/workflow';
import type { MarkNodeUnknownResult, NodeLifecycleActivities } from '../../activities/node-lifecycle/activities';
import { API_BATCHES, API_WRITES } from '../runtime/activity-options';
import { pool } from '../runtime/pool';
import { type CarriedSignals, DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  type BucketLook,
  CONTROLLER,
  ConditionStatus,
  NODE_UPDATE_WORKERS,
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  ZoneState,
  handleDisruption,
  newBucket,
  nextTokenAt,
  swapBucket,
  tryAccept,
  zoneLabel,
} from './logic';
import type { NodeLifecycleEvent, NodeLifecycleSettings, NodeLifecycleState, NodeReport, PodOnNode, ZoneQueue } from './types';
import { isPatched } from '../runtime/patches';

export interface NodeLifecycleWorkflowInput extends CarriedSignals<NodeLifecycleEvent> {
  settings: NodeLifecycleSettings;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new */
  state?: NodeLifecycleState;
}

/**
 * One node lifecycle controller per deployment (zone states and eviction rates depend on every
 * node); the task queue names the deployment, as it does podgc's.
 */
export function nodeLifecycleWorkflowId(taskQueue: string): string {
  return `${CONTROLLER}/${taskQueue}`;
}

export function mergeNodeLifecycleEvents(earlier: NodeLifecycleEvent, later: NodeLifecycleEvent): NodeLifecycleEvent {
  const nodes: Record<string, NodeReport> = { ...earlier.nodes };
  const gone: Record<string, string> = { ...earlier.nodesGone };
  for (const [n, r] of Object.entries(later.nodes ?? {})) {
    nodes[n] = r;
    // gone and back: the new node's report stands, and the old one's removal too
  }
  for (const [n, uid] of Object.entries(later.nodesGone ?? {})) {
    delete nodes[n];
    gone[n] = uid;
  }
  const pods = new Map<string, PodOnNode>();
  for (const p of [...(earlier.pods ?? []), ...(later.pods ?? [])]) pods.set(`${p.namespace}/${p.name}`, p);
  const settings = later.settings ?? earlier.settings;
  return {
    ...(Object.keys(nodes).length ? { nodes } : {}),
    ...(Object.keys(gone).length ? { nodesGone: gone } : {}),
    ...(pods.size ? { pods: [...pods.values()] } : {}),
    ...(settings ? { settings } : {}),
  };
}

const io = proxyActivities<NodeLifecycleActivities>(API_WRITES);
const batches = proxyActivities<NodeLifecycleActivities>(API_BATCHES);

const NO_EXECUTE = 'NoExecute';

/**
 * The node lifecycle controller: one workflow for the cluster, because a zone's state and its
 * eviction rate are decisions over all of the zone's nodes, and two replicas must never take
 * them twice. The informer judges each kubelet's silence (it sees the heartbeats) and reports
 * what changed; this run writes a silent node's conditions Unknown, marks its pods not ready,
 * keeps each zone's state, and taints unhealthy nodes NoExecute at the zone's rate, so that the
 * taint eviction controller moves their pods. Its zone states, queues and rate buckets are
 * durable: a failover neither forgets a queued node nor hands out a burst of evictions.
 */
export async function nodeLifecycleWorkflow(input: NodeLifecycleWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let settings = input.settings;
  const nodes = new Map<string, NodeReport>(Object.entries(input.state?.nodes ?? {}));
  let zoneStates: Record<string, ZoneState> = { ...input.state?.zoneStates };
  const queues = new Map<string, ZoneQueue>(Object.entries(input.state?.queues ?? {}));
  const retry = new Set<string>(input.state?.retry ?? []);
  let probeFloorMs = input.state?.probeFloorMs;

  const incoming = new Map<string, NodeReport>();
  const gone = new Map<string, string>();
  const pods = new Map<string, PodOnNode>();

  const grace = (r: NodeReport) => (r.ready === undefined ? settings.startupGraceMs : settings.monitorGraceMs);
  /** silent as the informer judged it, and past a fresh grace period after full disruption ended */
  const silent = (r: NodeReport, now: number) => r.stale && (probeFloorMs === undefined || now > Math.max(r.probeAtMs, probeFloorMs) + grace(r));

  const queueOf = (zone: string): ZoneQueue => {
    let q = queues.get(zone);
    if (!q) {
      q = { waiting: [], members: [], bucket: newBucket(settings.evictionRate, Date.now()) };
      queues.set(zone, q);
    }
    return q;
  };
  const dequeue = (name: string, zone: string) => {
    const q = queues.get(zone);
    if (!q) return;
    q.waiting = q.waiting.filter((n) => n !== name);
    q.members = q.members.filter((n) => n !== name);
  };

  async function changeTaints(name: string, r: NodeReport, add: string | undefined, remove: string[], reason: string): Promise<void> {
    await io.changeNodeTaints({
      node: name,
      ...(add ? { add: [{ key: add, effect: NO_EXECUTE }] } : {}),
      remove: remove.map((key) => ({ key, effect: NO_EXECUTE })),
      reason,
    });
    // the watch confirms it shortly; until then the report says what was written
    if (add === TAINT_NOT_READY || remove.includes(TAINT_NOT_READY)) r.notReadyTaint = add === TAINT_NOT_READY;
    if (add === TAINT_UNREACHABLE || remove.includes(TAINT_UNREACHABLE)) r.unreachableTaint = add === TAINT_UNREACHABLE;
  }

  /** upstream's markNodeAsReachable: both NoExecute taints off, and off the zone's queue */
  async function markReachable(name: string, r: NodeReport, reason: string): Promise<void> {
    if (r.unreachableTaint || r.notReadyTaint) await changeTaints(name, r, undefined, [TAINT_UNREACHABLE, TAINT_NOT_READY], reason);
    dequeue(name, r.zone);
  }

  /** upstream's processTaintBaseEviction */
  async function taintByReadiness(name: string, r: NodeReport, current: ConditionStatus): Promise<void> {
    if (current === 'True') {
      await markReachable(name, r, 'the node is Ready');
      return;
    }
    const [wanted, opposite, tainted, oppositeTainted] = current === 'False'
      ? [TAINT_NOT_READY, TAINT_UNREACHABLE, r.notReadyTaint, r.unreachableTaint]
      : [TAINT_UNREACHABLE, TAINT_NOT_READY, r.unreachableTaint, r.notReadyTaint];
    if (oppositeTainted) {
      // already tainted NoExecute for the other reason: swapped at once, no new eviction spent
      await changeTaints(name, r, wanted, [opposite], `the node's Ready condition is ${current}`);
      return;
    }
    const q = queueOf(r.zone);
    if (!tainted) {
      q.waiting = q.waiting.filter((n) => n !== name);
      q.members = q.members.filter((n) => n !== name);
    }
    if (!q.members.includes(name)) {
      q.members.push(name);
      q.waiting.push(name);
    }
  }

  async function nodeEvent(name: string, uid: string, reason: string, message: string): Promise<void> {
    await io.recordNodeEvent({ node: name, uid, type: 'Normal', reason, message });
  }

  async function reconcile(): Promise<ReconcileResult> {
    const now = Date.now();

    for (const [name, uid] of gone) {
      const r = nodes.get(name);
      if (!r || (uid && r.uid !== uid)) continue;
      await nodeEvent(name, r.uid, 'RemovingNode', `Node ${name} event: Removing Node ${name} from Controller`);
      nodes.delete(name);
      dequeue(name, r.zone);
      retry.delete(name);
    }
    gone.clear();

    const added: string[] = [];
    for (const [name, r] of incoming) {
      if (!nodes.has(name)) added.push(name);
      nodes.set(name, r);
    }
    incoming.clear();
    // Runs recorded before this change took the nodes one at a time, and replay so.
    const workers = isPatched('node-health-in-parallel') ? NODE_UPDATE_WORKERS : 1;
    const register = async (name: string) => {
      const r = nodes.get(name)!;
      queueOf(r.zone);
      if (!(r.zone in zoneStates)) zoneStates[r.zone] = 'Initial';
      await nodeEvent(name, r.uid, 'RegisteredNode', `Node ${name} event: Registered Node ${name} in Controller`);
      await markReachable(name, r, 'a node new to the controller starts without NoExecute taints');
    };
    await pool(added.sort(), workers, register);

    // upstream's monitorNodeHealth: first the silent nodes' conditions, then each node's taints,
    // Event and pods. Upstream's eight workers take the nodes in parallel; so do ours, or a zone of
    // a few hundred silent nodes would be judged (and its evictions paced) minutes late.
    const names = [...nodes.keys()].sort();
    const observed = new Map(names.map((n) => [n, nodes.get(n)!.ready]));
    const vanished = new Set<string>();
    const unknownRequest = (name: string) => {
      const r = nodes.get(name)!;
      const reason = `no heartbeat or lease renewal for ${Math.round((now - r.probeAtMs) / 1000)}s`;
      return { node: name, uid: r.uid, ...(r.heartbeat ? { heartbeat: r.heartbeat } : {}), reason };
    };
    const judged = (name: string, outcome: MarkNodeUnknownResult['outcome']) => {
      if (outcome === 'gone' || outcome === 'kubelet-posted') vanished.add(name);
      else nodes.get(name)!.ready = 'Unknown';
    };
    const markUnknown = async (name: string) => judged(name, (await io.markNodeUnknown(unknownRequest(name))).outcome);
    const readyByZone: Record<string, Array<ConditionStatus | undefined>> = {};
    // NodeNotReady Events the pass sends without waiting for each (upstream's recorder sends them
    // in the background): each was a round trip that held the node's worker, and a pass that
    // judged a zone lasted seconds, its later nodes' graces running out meanwhile. Each settles
    // to its error, or undefined, so none is left rejected unheard.
    const eventsSent: Array<Promise<unknown>> = [];
    const followUp = async (name: string) => {
      const r = nodes.get(name)!;
      const current = r.ready;
      if (!r.excluded) (readyByZone[r.zone] ??= []).push(current);
      if (current === undefined) {
        retry.delete(name);
        return;
      }
      // before any await: a zone's tainting queue keeps the nodes' order
      await taintByReadiness(name, r, current);
      const wentNotReady = current !== 'True' && observed.get(name) === 'True';
      if (wentNotReady) {
        const sent = nodeEvent(name, r.uid, 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        // runs before waited for each
        if (workers > 1 && isPatched('node-events-in-background')) eventsSent.push(sent.then(() => undefined, (e: unknown) => e ?? new Error('NodeNotReady Event failed')));
        else await sent;
      }
      // a node known to have no pods has none to mark: its pass costs no pod list (runs whose
      // reports never said replay as they ran, listing every node's pods)
      if ((wentNotReady || (retry.has(name) && observed.get(name) !== 'True')) && r.hasPods !== false) {
        try {
          await batches.markPodsNotReady({ node: name, reason: `node ${name} is ${current === 'Unknown' ? 'unreachable' : 'not ready'}` });
        } catch (e) {
          log.warn('could not mark all pods not ready; trying again', { node: name, error: String(e) });
          retry.add(name);
          return;
        }
      }
      retry.delete(name);
    };
    if (workers === 1) {
      // the order of writes before this change: each node's status, then its follow-up
      for (const name of names) {
        const r = nodes.get(name)!;
        if (silent(r, now) && r.ready !== 'Unknown') await markUnknown(name);
        if (!vanished.has(name)) await followUp(name);
      }
    } else {
      const toJudge = names.filter((n) => silent(nodes.get(n)!, now) && nodes.get(n)!.ready !== 'Unknown');
      // one activity for the pass's silent nodes, eight at a time inside it, as upstream's workers;
      // an activity apiece cost a workflow round trip each, and under load a zone was judged one
      // node after another, seconds late. Runs before wrote them an activity apiece.
      if (toJudge.length && isPatched('node-unknown-in-one-call')) {
        const reason = `${toJudge.length} nodes silent past the grace period`;
        const { outcomes } = await batches.markNodesUnknown({ nodes: toJudge.map(unknownRequest), reason });
        for (const name of toJudge) judged(name, outcomes[name]);
      } else {
        await pool(toJudge, workers, markUnknown);
      }
      await pool(names.filter((n) => !vanished.has(n)), workers, followUp);
      const eventFailure = (await Promise.all(eventsSent)).find((e) => e !== undefined);
      if (eventFailure !== undefined) throw eventFailure;
    }

    // upstream's handleDisruption
    const d = handleDisruption(zoneStates, readyByZone, settings);
    for (const c of d.changed) log.info('zone changed state', { zone: zoneLabel(c.zone), from: c.from, to: c.to });
    if (d.enterMasterDisruption) {
      log.warn('every node is not Ready: entering master disruption mode, no node is tainted NoExecute');
      for (const name of [...nodes.keys()].sort()) await markReachable(name, nodes.get(name)!, 'every zone is fully disrupted');
    }
    if (d.exitMasterDisruption) {
      log.info('some nodes are Ready again: leaving master disruption mode, every node gets a fresh grace period');
      probeFloorMs = now;
    }
    for (const [zone, qps] of Object.entries(d.rates)) {
      const q = queueOf(zone);
      q.bucket = swapBucket(q.bucket, qps, now);
    }
    zoneStates = d.zoneStates;

    // upstream's doNoExecuteTaintingPass: each zone's queue at its zone's rate
    for (const [zone, q] of [...queues].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const tried = new Set<string>();
      const first: BucketLook = q.draining === true ? 'draining' : 'idle';
      // after a write, what the wake granted is kept and the write's own time adds one token at
      // most: a write held up by a failover must not be followed by a second's worth at once
      const later: BucketLook = isPatched('eviction-burst-per-wake') ? 'continuing' : first;
      let look: BucketLook = first;
      while (q.waiting.length) {
        const name = q.waiting[0];
        if (tried.has(name)) break;
        const t = tryAccept(q.bucket, Date.now(), look);
        look = later;
        q.bucket = t.bucket;
        if (!t.ok) break;
        const res = await io.taintNoExecute({ node: name, reason: `zone ${zoneLabel(zone)} is ${zoneStates[zone] ?? 'Initial'}; its rate allows one more node` });
        q.waiting.shift();
        if (res.outcome === 'no-condition') {
          tried.add(name);
          q.waiting.push(name);
          continue;
        }
        const r = nodes.get(name);
        if (r && res.outcome === 'tainted') {
          const want = r.ready === 'False' ? TAINT_NOT_READY : TAINT_UNREACHABLE;
          r.notReadyTaint = want === TAINT_NOT_READY;
          r.unreachableTaint = want === TAINT_UNREACHABLE;
        }
      }
      q.draining = q.waiting.length > 0;
    }

    // upstream's doNoScheduleTaintingPass and label reconcile, for the nodes the informer found out of line
    const outOfLine = [...nodes].filter(([, r]) => r.noScheduleOutOfSync || r.labelsOutOfSync).map(([n]) => n).sort();
    if (outOfLine.length) {
      await batches.syncNodeTaintsAndLabels({ nodes: outOfLine, reason: 'NoSchedule taints or beta labels disagree with the node\'s conditions and labels' });
      for (const n of outOfLine) {
        const r = nodes.get(n)!;
        r.noScheduleOutOfSync = false;
        r.labelsOutOfSync = false;
      }
    }

    // upstream's pod handler: a pod bound to a node that is not Ready is not Ready either
    const byNode = new Map<string, PodOnNode[]>();
    for (const p of pods.values()) {
      const r = nodes.get(p.node);
      if (!r || r.ready === undefined || r.ready === 'True') continue;
      byNode.set(p.node, [...(byNode.get(p.node) ?? []), p]);
    }
    pods.clear();
    for (const [node, list] of byNode) {
      await batches.markPodsNotReady({ node, pods: list.map((p) => ({ namespace: p.namespace, name: p.name })), reason: `bound to node ${node}, which is not Ready` });
    }

    return wakeUp(Date.now());
  }

  /** The next time something is due with no event: a token for a waiting node, or a grace period after full disruption. */
  function wakeUp(now: number): ReconcileResult {
    let next: number | undefined;
    const at = (t: number | undefined) => {
      if (t !== undefined && (next === undefined || t < next)) next = t;
    };
    for (const q of queues.values()) if (q.waiting.length) at(nextTokenAt(q.bucket, now));
    if (probeFloorMs !== undefined) {
      for (const r of nodes.values()) {
        if (!r.stale || r.ready === 'Unknown') continue;
        const due = Math.max(r.probeAtMs, probeFloorMs) + grace(r) + 1;
        if (due > now) at(due);
      }
    }
    return next === undefined ? {} : { requeueAfterMs: Math.max(0, next - now) };
  }

  await runObjectLoop<NodeLifecycleEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      if (e.settings) settings = e.settings;
      for (const [n, uid] of Object.entries(e.nodesGone ?? {})) {
        incoming.delete(n);
        gone.set(n, uid);
      }
      for (const [n, r] of Object.entries(e.nodes ?? {})) {
        const wasGone = gone.get(n);
        // gone, then back under a new UID: the removal happens first, then the newcomer registers
        if (wasGone !== undefined && wasGone === r.uid) gone.delete(n);
        incoming.set(n, r);
      }
      for (const p of e.pods ?? []) pods.set(`${p.namespace}/${p.name}`, p);
    },
    reconcile,
    // every node's heartbeats come as signals, so under a busy cluster a turn with none pending may
    // never come: those pending at the history ceiling go to the next run
    carries: input,
    describe: () => ({
      nodes: nodes.size,
      silent: [...nodes].filter(([, r]) => r.stale).map(([n]) => n).sort(),
      notReady: [...nodes].filter(([, r]) => r.ready !== 'True').map(([n]) => n).sort(),
      zones: Object.entries(zoneStates).map(([z, s]) => `${zoneLabel(z)}=${s}`).sort(),
      waiting: [...queues].filter(([, q]) => q.waiting.length).map(([z, q]) => `${zoneLabel(z)}: ${q.waiting.join(',')}`).sort(),
    }),
    continueAsNewArgs: () => [{
      settings,
      tuning: input.tuning,
      state: { nodes: Object.fromEntries(nodes), zoneStates, queues: Object.fromEntries(queues), retry: [...retry], ...(probeFloorMs !== undefined ? { probeFloorMs } : {}) },
    } satisfies NodeLifecycleWorkflowInput],
  });
}
