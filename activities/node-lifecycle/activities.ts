import type { Logger } from 'pino';
import { pool } from '../../workflows/runtime/pool';
import { heartbeat } from '../kube/heartbeat';
import type { FieldMask } from '../informers/fields';
import type { EventType, RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { changeNodeTaints, type Taint } from '../kube/taints';
import {
  EVENT_COMPONENT,
  NODE_UPDATE_WORKERS,
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  labelsToReconcile,
  noScheduleDiff,
} from '../../workflows/node-lifecycle/logic';

type Condition = { type: string; status: string; reason?: string; message?: string; lastHeartbeatTime?: string; lastTransitionTime?: string };
export type NodeObject = KubeObject & {
  spec?: { taints?: Taint[] | null; unschedulable?: boolean };
  status?: { conditions?: Condition[] | null };
};
type PodObject = KubeObject & {
  spec?: { nodeName?: string };
  status?: { conditions?: Array<Condition & { observedGeneration?: number }> | null };
};

/** What the routes read of a node. */
export const LIFECYCLE_NODE_FIELDS: FieldMask = {
  metadata: true,
  spec: { taints: true, unschedulable: true },
  status: { conditions: { type: true, status: true, lastHeartbeatTime: true, lastTransitionTime: true } },
};
/** What the routes read of a Lease: when it was renewed. */
export const LIFECYCLE_LEASE_FIELDS: FieldMask = { metadata: true, spec: { renewTime: true } };
/** What the routes read of a pod: where it is bound and whether it is Ready. */
export const LIFECYCLE_POD_FIELDS: FieldMask = { metadata: true, spec: { nodeName: true }, status: { conditions: { type: true, status: true } } };

/** The conditions a silent node has set to Unknown (upstream's list; NetworkUnavailable is the network plugin's). */
const MONITORED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];

/**
 * Upstream's rewrite of a silent node's status: every monitored condition Unknown, those never
 * posted added. Returns whether the Ready condition changed, which is when upstream writes.
 */
export function unknownStatus(node: NodeObject, nowIso: string): { conditions: Condition[]; readyChanged: boolean } {
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  const readyBefore = JSON.stringify(conditions.find((c) => c.type === 'Ready') ?? null);
  for (const type of MONITORED_CONDITIONS) {
    const c = conditions.find((x) => x.type === type);
    if (!c) {
      conditions.push({ type, status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.',
        lastHeartbeatTime: node.metadata?.creationTimestamp, lastTransitionTime: nowIso });
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = 'NodeStatusUnknown';
      c.message = 'Kubelet stopped posting node status.';
      c.lastTransitionTime = nowIso;
    }
  }
  return { conditions, readyChanged: JSON.stringify(conditions.find((c) => c.type === 'Ready') ?? null) !== readyBefore };
}

export interface MarkNodeUnknownRequest {
  node: string;
  uid: string;
  /** the Ready heartbeat the silence was judged on: a kubelet that posted since is not silent */
  heartbeat?: string;
  reason: string;
}

export interface MarkNodeUnknownResult {
  outcome: 'written' | 'unchanged' | 'kubelet-posted' | 'gone';
}

export interface MarkNodesUnknownRequest {
  nodes: MarkNodeUnknownRequest[];
  /** why this pass judges them, for the history */
  reason: string;
}

export interface MarkNodesUnknownResult {
  /** by node name */
  outcomes: Record<string, MarkNodeUnknownResult['outcome']>;
}

export interface NodeEventRequest {
  node: string;
  uid: string;
  type: EventType;
  reason: string;
  message: string;
}

export interface MarkPodsNotReadyRequest {
  node: string;
  /** only these pods (upstream's pod handler); all pods bound to the node when absent */
  pods?: Array<{ namespace: string; name: string }>;
  reason: string;
}

export interface ChangeTaintsRequest {
  node: string;
  add?: Array<{ key: string; effect: string }>;
  remove?: Array<{ key: string; effect: string }>;
  reason: string;
}

export interface TaintNoExecuteResult {
  /** tainted (or found healthy, or gone): off the queue; `no-condition`: tried again later */
  outcome: 'tainted' | 'healthy' | 'gone' | 'no-condition';
}

export interface NodeLifecycleDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

/** upstream retries a node status write this many times, reading the node again each time */
const STATUS_RETRIES = 5;


const nodePath = (name: string) => resourcePath(RESOURCES.nodes, undefined, name);
const readyOf = (n: NodeObject) => n.status?.conditions?.find((c) => c.type === 'Ready');

/** The node lifecycle controller's I/O: node status, node taints and labels, pods' Ready condition, Events. */
export function createNodeLifecycleActivities(deps: NodeLifecycleDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'nodelifecycle' });

  async function getNode(name: string): Promise<NodeObject | undefined> {
    try {
      return (await rest.request<NodeObject>('GET', nodePath(name))).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  /**
   * Upstream's MarkPodsNotReady: every pod is tried, and the NodeNotReady Event is recorded after
   * each status write that did not find the pod gone, whether it succeeded or not (a conflict with
   * the eviction controller's own write to the pod, for one). A failure fails the whole call once
   * the rest are done, so the node is tried again next pass, as upstream's nodesToRetry, and a pod
   * that stayed Ready gets its Event again then: as upstream counts it.
   */
  async function markPods(node: string, pods: PodObject[]): Promise<number> {
    let marked = 0;
    const failed: unknown[] = [];
    for (const pod of pods) {
      if (pod.spec?.nodeName !== node) continue;
      const conditions = pod.status?.conditions ?? [];
      const ready = conditions.find((c) => c.type === 'Ready');
      if (!ready || ready.status === 'False') continue;
      const now = new Date().toISOString();
      const updated = { ...pod, status: { ...pod.status, conditions: conditions.map((c) => (c === ready ? { ...c, status: 'False', lastTransitionTime: now } : c)) } };
      const path = resourcePath(RESOURCES.pods, pod.metadata?.namespace, pod.metadata?.name);
      try {
        await rest.request('PUT', `${path}/status`, { body: updated });
        marked++;
      } catch (e) {
        if (isStatus(e, 404)) continue;
        log.info({ node, pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, err: String(e) }, 'could not set the pod not ready');
        failed.push(e);
      }
      deps.recordEvent(EVENT_COMPONENT, { apiVersion: 'v1', kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '',
        uid: pod.metadata?.uid ?? '', resourceVersion: pod.metadata?.resourceVersion }, 'Warning', 'NodeNotReady', 'Node is not ready');
      heartbeat({ marked });
    }
    if (failed.length) throw failed[0];
    return marked;
  }

  /** A silent node's conditions set to Unknown, as upstream's tryUpdateNodeHealth writes them. */
  async function markOneUnknown(req: MarkNodeUnknownRequest): Promise<MarkNodeUnknownResult> {
    for (let attempt = 0; ; attempt++) {
      const node = await getNode(req.node);
      if (!node || node.metadata?.uid !== req.uid) return { outcome: 'gone' };
      const ready = readyOf(node);
      if (req.heartbeat !== undefined && ready?.lastHeartbeatTime !== req.heartbeat) return { outcome: 'kubelet-posted' };
      const { conditions, readyChanged } = unknownStatus(node, new Date().toISOString());
      if (!readyChanged) return { outcome: 'unchanged' };
      try {
        await rest.request('PUT', `${nodePath(req.node)}/status`, { body: { ...node, status: { ...node.status, conditions } } });
        log.info({ node: req.node, reason: req.reason }, 'node status set to Unknown: kubelet stopped posting node status');
        return { outcome: 'written' };
      } catch (e) {
        if (isStatus(e, 404)) return { outcome: 'gone' };
        if (!isStatus(e, 409) || attempt + 1 >= STATUS_RETRIES) throw e;
      }
    }
  }

  return {
    async markNodeUnknown(req: MarkNodeUnknownRequest): Promise<MarkNodeUnknownResult> {
      return apiCall(() => markOneUnknown(req));
    },

    /**
     * Every silent node of a monitor pass set Unknown in one activity, upstream's eight workers'
     * worth at a time: an activity apiece cost each node a round trip through the workflow, and
     * under load a zone's nodes were judged one after another, seconds late.
     */
    async markNodesUnknown(req: MarkNodesUnknownRequest): Promise<MarkNodesUnknownResult> {
      return apiCall(async () => {
        const outcomes: MarkNodesUnknownResult['outcomes'] = {};
        await pool(req.nodes, NODE_UPDATE_WORKERS, async (n) => {
          outcomes[n.node] = (await markOneUnknown(n)).outcome;
          heartbeat({ judged: Object.keys(outcomes).length });
        });
        return { outcomes };
      });
    },

    /** Pods' Ready condition set False, with upstream's Warning Event on each. */
    async markPodsNotReady(req: MarkPodsNotReadyRequest): Promise<{ marked: number }> {
      return apiCall(async () => {
        let pods: PodObject[];
        if (req.pods) {
          pods = [];
          for (const p of req.pods) {
            try {
              pods.push((await rest.request<PodObject>('GET', resourcePath(RESOURCES.pods, p.namespace, p.name))).body);
            } catch (e) {
              if (!isStatus(e, 404)) throw e;
            }
          }
        } else {
          const q = `fieldSelector=${encodeURIComponent(`spec.nodeName=${req.node}`)}`;
          pods = (await rest.request<{ items: PodObject[] }>('GET', `${resourcePath(RESOURCES.pods)}?${q}`)).body.items ?? [];
        }
        const marked = await markPods(req.node, pods);
        if (marked) log.info({ node: req.node, marked, reason: req.reason }, 'marked pods not ready');
        return { marked };
      });
    },

    async recordNodeEvent(req: NodeEventRequest): Promise<void> {
      deps.recordEvent(EVENT_COMPONENT, { apiVersion: 'v1', kind: 'Node', namespace: '', name: req.node, uid: req.uid }, req.type, req.reason, req.message);
    },

    /** Taints added and removed in one read-modify-write (upstream's SwapNodeControllerTaint and RemoveTaintOffNode). */
    async changeNodeTaints(req: ChangeTaintsRequest): Promise<{ gone: boolean }> {
      return apiCall(async () => {
        const ok = await changeNodeTaints(rest, req.node, { add: req.add, remove: req.remove });
        if (ok) log.info({ node: req.node, add: req.add?.map((t) => `${t.key}:${t.effect}`), remove: req.remove?.map((t) => `${t.key}:${t.effect}`), reason: req.reason }, 'changed node taints');
        return { gone: !ok };
      });
    },

    /** One node off a zone's tainting queue: the NoExecute taint its Ready condition calls for, as it is now. */
    async taintNoExecute(req: { node: string; reason: string }): Promise<TaintNoExecuteResult> {
      return apiCall(async () => {
        const node = await getNode(req.node);
        if (!node) return { outcome: 'gone' };
        const ready = readyOf(node);
        if (!ready) return { outcome: 'no-condition' };
        const [add, remove] = ready.status === 'False' ? [TAINT_NOT_READY, TAINT_UNREACHABLE] : ready.status === 'Unknown' ? [TAINT_UNREACHABLE, TAINT_NOT_READY] : [];
        if (!add) return { outcome: 'healthy' };
        const ok = await changeNodeTaints(rest, req.node, { add: [{ key: add, effect: 'NoExecute' }], remove: [{ key: remove!, effect: 'NoExecute' }] });
        if (ok) log.info({ node: req.node, taint: `${add}:NoExecute`, reason: req.reason }, 'tainted node NoExecute');
        return { outcome: ok ? 'tainted' : 'gone' };
      });
    },

    /** The NoSchedule condition taints and the beta labels brought in line with each node, as it is now. */
    async syncNodeTaintsAndLabels(req: { nodes: string[]; reason: string }): Promise<void> {
      return apiCall(async () => {
        let synced = 0;
        await pool(req.nodes, NODE_UPDATE_WORKERS, async (name) => {
          const node = await getNode(name);
          if (!node) return;
          const diff = noScheduleDiff(node.status?.conditions ?? [], node.spec?.unschedulable === true, node.spec?.taints ?? []);
          if (diff.add.length || diff.remove.length) {
            await changeNodeTaints(rest, name, diff);
            log.info({ node: name, add: diff.add.map((t) => t.key), remove: diff.remove.map((t) => t.key), reason: req.reason }, 'changed node NoSchedule taints');
          }
          const labels = labelsToReconcile(node.metadata?.labels);
          if (Object.keys(labels).length) {
            await rest.request('PATCH', nodePath(name), { contentType: 'application/strategic-merge-patch+json', body: { metadata: { labels } } })
              .catch((e: unknown) => {
                if (!isStatus(e, 404)) throw e;
              });
          }
          heartbeat({ synced: ++synced });
        });
      });
    },
  };
}

export type NodeLifecycleActivities = ReturnType<typeof createNodeLifecycleActivities>;
