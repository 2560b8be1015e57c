import { log, proxyActivities } from '@temporalio/workflow';
import type { TaintEvictionActivities } from '../../activities/taint-eviction/activities';
import { API_BATCHES } from '../runtime/activity-options';
import { type CarriedSignals, DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import {
  CONTROLLER,
  EvictionPodView,
  ScheduledEviction,
  TaintView,
  dueEvictions,
  nextFireAt,
  planPod,
  podKey,
} from './logic';

/**
 * What the watch sends a node's workflow. With `node`, the node's NoExecute taints changed (or a
 * list saw them): every pod bound to it comes along and is looked at again, as upstream's node
 * handler does. Without it, pods bound to the tainted node were added, changed their tolerations,
 * or went away, as upstream's pod handler sees them.
 */
export interface TaintEvictionEvent {
  node?: { uid: string; taints: TaintView[]; pods: EvictionPodView[] };
  nodeGone?: boolean;
  pods?: EvictionPodView[];
  /** `<namespace>/<name>` of pods deleted */
  podsDeleted?: string[];
  /** the sender's clock when the watch saw this (ms since the epoch); see `now` in the workflow */
  at?: number;
}

export interface TaintEvictionWorkflowInput extends CarriedSignals<TaintEvictionEvent> {
  node: string;
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new */
  state?: TaintEvictionState;
}

/** Everything the run knows, JSON-plain so continue-as-new carries it. */
export interface TaintEvictionState {
  taints: TaintView[];
  pods: EvictionPodView[];
  /** countdowns by `<namespace>/<name>` */
  scheduled: Array<[string, ScheduledEviction]>;
}

export function taintEvictionWorkflowId(node: string): string {
  return `${CONTROLLER}/${node}`;
}

/** Folds two events into one, `later` winning; a node event resets the pod set, so pod news before it is dropped. */
export function mergeTaintEvictionEvents(earlier: TaintEvictionEvent, later: TaintEvictionEvent): TaintEvictionEvent {
  const at = Math.max(earlier.at ?? 0, later.at ?? 0) || undefined;
  const stamped = (e: TaintEvictionEvent): TaintEvictionEvent => (at ? { ...e, at } : e);
  return stamped(mergeUnstamped(earlier, later));
}

function mergeUnstamped(earlier: TaintEvictionEvent, later: TaintEvictionEvent): TaintEvictionEvent {
  if (later.nodeGone) return { nodeGone: true };
  if (later.node) return { node: later.node };
  const base: TaintEvictionEvent = earlier.nodeGone ? {} : earlier;
  const pods = new Map<string, EvictionPodView>();
  const deleted = new Set<string>(base.podsDeleted ?? []);
  for (const p of base.node?.pods ?? []) pods.set(podKey(p), p);
  for (const p of base.pods ?? []) pods.set(podKey(p), p);
  for (const p of later.pods ?? []) {
    pods.set(podKey(p), p);
    deleted.delete(podKey(p));
  }
  for (const k of later.podsDeleted ?? []) {
    pods.delete(k);
    deleted.add(k);
  }
  if (base.node) return { node: { ...base.node, pods: [...pods.values()] }, ...(deleted.size ? { podsDeleted: [...deleted] } : {}) };
  return { ...(pods.size ? { pods: [...pods.values()] } : {}), ...(deleted.size ? { podsDeleted: [...deleted] } : {}) };
}

const io = proxyActivities<TaintEvictionActivities>(API_BATCHES);

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One node's NoExecute taints and the pods bound to it: pods that do not tolerate the taints are
 * deleted at once, pods that tolerate them for a while are deleted when their tolerationSeconds
 * run out, on a durable timer, so a manager restarted in the middle neither forgets a countdown
 * nor starts it over. The run ends once the node has no NoExecute taint and no countdown runs.
 */
export async function taintEvictionWorkflow(input: TaintEvictionWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  const node = input.node;
  let taints: TaintView[] = input.state?.taints ?? [];
  const pods = new Map<string, EvictionPodView>((input.state?.pods ?? []).map((p) => [podKey(p), p]));
  const scheduled = new Map<string, ScheduledEviction>(input.state?.scheduled ?? []);
  /** the pods to look at again in the next reconcile (all of them after a node event) */
  const dirty = new Set<string>();
  let allDirty = input.state === undefined;
  let nodeGone = false;
  /** countdowns cancelled since the last reconcile, whose Events are still to be recorded */
  const cancelled = new Set<string>();

  /**
   * Workflow time, but never behind the newest event's own stamp nor the due time of the timer
   * that woke the run. A replica that takes over a run (whose last task timed out on a dead
   * replica, or that it simply had not cached) was seen to get the first new task with workflow
   * time still at the previous task's (Temporal TS SDK 1.x): a countdown was then re-timed 20 s
   * late. The stamp is part of the signal and the due time part of the run's own decisions, so
   * replay sees the same values.
   */
  let clockFloor = 0;
  const now = () => Math.max(Date.now(), clockFloor);

  const cancel = (key: string) => {
    if (scheduled.delete(key)) cancelled.add(key);
  };

  function apply(e: TaintEvictionEvent): void {
    if (e.at && e.at > clockFloor) clockFloor = e.at;
    if (e.nodeGone) {
      nodeGone = true;
      return;
    }
    if (e.node) {
      taints = e.node.taints;
      pods.clear();
      for (const p of e.node.pods) pods.set(podKey(p), p);
      // a pod the node's list lacks is gone (or bound elsewhere): its countdown ends with it
      for (const k of [...scheduled.keys()]) if (!pods.has(k)) cancel(k);
      allDirty = true;
    }
    for (const p of e.pods ?? []) {
      pods.set(podKey(p), p);
      dirty.add(podKey(p));
    }
    for (const k of e.podsDeleted ?? []) {
      pods.delete(k);
      dirty.delete(k);
      cancel(k);
    }
  }

  /** Upstream's node and pod handlers: each pod looked at again gets its plan. */
  function plan(nowMs: number): void {
    const keys = allDirty ? [...pods.keys()] : [...dirty];
    allDirty = false;
    dirty.clear();
    for (const k of keys) {
      const p = pods.get(k);
      if (!p) continue;
      const d = planPod(taints, p, scheduled.get(k), nowMs);
      if (d.cancel) cancel(k);
      if (d.schedule) scheduled.set(k, d.schedule);
    }
  }

  async function reconcile(): Promise<ReconcileResult> {
    if (nodeGone) return { finished: true };
    plan(now());
    if (cancelled.size) {
      const keys = [...cancelled].sort();
      cancelled.clear();
      await io.recordEvictionsCancelled({ node, pods: keys, reason: 'the pod now tolerates the node\'s NoExecute taints, or they were removed' });
    }

    const due = dueEvictions(scheduled, now());
    if (due.length) {
      const r = await io.evictPods({
        node,
        taints,
        pods: due.map((k) => {
          const p = pods.get(k)!;
          return { namespace: p.namespace, name: p.name, uid: p.uid, tolerations: p.tolerations, scheduledAt: iso(scheduled.get(k)!.createdAtMs) };
        }),
        reason: 'the pod does not tolerate the node\'s NoExecute taints, or its tolerationSeconds ran out',
      });
      if (r.nodeGone) return { finished: true };
      if (r.taints) {
        // the node's taints changed since the watch said: decide again on what it has now
        log.info('node taints changed since the last event; deciding again', { node, taints: r.taints.map((t) => t.key) });
        taints = r.taints;
        allDirty = true;
        return { requeueAfterMs: 0 };
      }
      for (const k of r.done) scheduled.delete(k);
      for (const p of r.changed ?? []) {
        pods.set(podKey(p), p);
        dirty.add(podKey(p));
      }
      if (r.changed?.length) return { requeueAfterMs: 0 };
    }

    if (taints.length === 0 && scheduled.size === 0) return { finished: true };
    const next = nextFireAt(scheduled);
    return next === undefined ? {} : { requeueAfterMs: Math.max(0, next - now()) };
  }

  await runObjectLoop<TaintEvictionEvent>({
    controller: CONTROLLER,
    tuning,
    apply,
    reconcile,
    // pod and node news live only in signals: those pending at the history ceiling go to the next run
    carries: input,
    onWake: (dueAt) => {
      if (dueAt > clockFloor) clockFloor = dueAt;
    },
    describe: () => ({
      node,
      taints: taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`),
      pods: pods.size,
      countdowns: [...scheduled].map(([k, s]) => `${k} at ${iso(s.fireAtMs)}`).sort(),
    }),
    continueAsNewArgs: () => [{
      node,
      tuning: input.tuning,
      state: { taints, pods: [...pods.values()], scheduled: [...scheduled] },
    } satisfies TaintEvictionWorkflowInput],
  });
}
