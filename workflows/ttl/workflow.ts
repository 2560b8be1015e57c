import { proxyActivities } from '@temporalio/workflow';
import type { TtlActivities } from '../../activities/ttl/activities';
import { API_BATCHES } from '../runtime/activity-options';
import { DEFAULT_TUNING, LoopTuning, ReconcileResult, runObjectLoop } from '../runtime/object-loop';
import { CONTROLLER, annotationSays, nextStep, ttlOfStep } from './logic';

/**
 * What the watch sends: the number of nodes whenever it changes, and each node's TTL annotation
 * when the node appears or the annotation changes (null: the node has none).
 */
export interface TtlEvent {
  count?: number;
  nodes?: Array<[string, string | null]>;
  nodesGone?: string[];
}

export interface TtlWorkflowInput {
  tuning?: Partial<LoopTuning>;
  /** carried across continue-as-new */
  state?: TtlState;
}

export interface TtlState {
  step: number;
  count: number;
  nodes: Array<[string, string | null]>;
}

/** One TTL controller per deployment (the step depends on every node); the task queue names the deployment. */
export function ttlWorkflowId(taskQueue: string): string {
  return `${CONTROLLER}/${taskQueue}`;
}

export function mergeTtlEvents(earlier: TtlEvent, later: TtlEvent): TtlEvent {
  const nodes = new Map<string, string | null>(earlier.nodes ?? []);
  const gone = new Set<string>(earlier.nodesGone ?? []);
  for (const [n, v] of later.nodes ?? []) {
    nodes.set(n, v);
    gone.delete(n);
  }
  for (const n of later.nodesGone ?? []) {
    nodes.delete(n);
    gone.add(n);
  }
  const count = later.count ?? earlier.count;
  return { ...(count !== undefined ? { count } : {}), ...(nodes.size ? { nodes: [...nodes] } : {}), ...(gone.size ? { nodesGone: [...gone] } : {}) };
}

const io = proxyActivities<TtlActivities>(API_BATCHES);

/** nodes per activity: short enough to heartbeat through and retry whole */
const PATCH_BATCH = 100;

/**
 * The cluster's TTL step, kept across restarts (upstream's is rebuilt from a count that starts at
 * zero), and every node's annotation brought to it: a node that appears or whose annotation is
 * edited at once, and all of them when the step changes.
 */
export async function ttlWorkflow(input: TtlWorkflowInput): Promise<void> {
  const tuning: LoopTuning = { ...DEFAULT_TUNING, ...input.tuning };
  let step = input.state?.step ?? 0;
  let count = input.state?.count ?? 0;
  const nodes = new Map<string, string | null>(input.state?.nodes ?? []);

  async function reconcile(): Promise<ReconcileResult> {
    const ttlSeconds = ttlOfStep(step);
    const stale = [...nodes].filter(([, v]) => !annotationSays(v, ttlSeconds)).map(([n]) => n).sort();
    for (let i = 0; i < stale.length; i += PATCH_BATCH) {
      const batch = stale.slice(i, i + PATCH_BATCH);
      const r = await io.setNodeTtl({ nodes: batch, ttlSeconds, reason: `the cluster has ${count} nodes` });
      for (const n of r.patched) nodes.set(n, String(ttlSeconds));
      for (const n of r.gone) nodes.delete(n);
    }
    return {};
  }

  await runObjectLoop<TtlEvent>({
    controller: CONTROLLER,
    tuning,
    apply(e) {
      for (const [n, v] of e.nodes ?? []) nodes.set(n, v);
      for (const n of e.nodesGone ?? []) nodes.delete(n);
      if (e.count !== undefined) {
        count = e.count;
        step = nextStep(step, count);
      }
    },
    reconcile,
    describe: () => ({ nodes: count, ttlSeconds: ttlOfStep(step), step }),
    continueAsNewArgs: () => [{ tuning: input.tuning, state: { step, count, nodes: [...nodes] } } satisfies TtlWorkflowInput],
  });
}
