import type { Logger } from 'pino';
import { heartbeat } from '../kube/heartbeat';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import type { FieldMask } from '../informers/fields';
import {
  DISRUPTION_MESSAGE,
  DISRUPTION_REASON,
  EVENT_COMPONENT,
  EVENT_REASON,
  EvictionPodView,
  TaintView,
  TolerationView,
  noExecuteTaints,
  podKey,
  sameTaints,
  sameTolerations,
} from '../../workflows/taint-eviction/logic';

type PodObject = KubeObject & {
  spec?: { nodeName?: string; tolerations?: TolerationView[] | null };
  status?: { conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string; observedGeneration?: number }> };
};
type NodeObject = KubeObject & { spec?: { taints?: TaintView[] | null } };

/** What the routes read of a pod: where it is bound and what it tolerates. */
export const EVICTION_POD_FIELDS: FieldMask = { metadata: true, spec: { nodeName: true, tolerations: true } };
/** What the routes read of a node: its taints. */
export const EVICTION_NODE_FIELDS: FieldMask = { metadata: true, spec: { taints: true } };

export function evictionPodView(o: KubeObject): EvictionPodView {
  const p = o as PodObject;
  return {
    namespace: p.metadata?.namespace ?? '',
    name: p.metadata?.name ?? '',
    uid: p.metadata?.uid ?? '',
    tolerations: (p.spec?.tolerations ?? []).map((t) => ({
      ...(t.key ? { key: t.key } : {}),
      ...(t.operator ? { operator: t.operator } : {}),
      ...(t.value ? { value: t.value } : {}),
      ...(t.effect ? { effect: t.effect } : {}),
      ...(typeof t.tolerationSeconds === 'number' ? { tolerationSeconds: t.tolerationSeconds } : {}),
    })),
  };
}

export const podNodeName = (o: KubeObject) => (o as PodObject).spec?.nodeName ?? '';
export const nodeNoExecuteTaints = (o: KubeObject) => noExecuteTaints((o as NodeObject).spec?.taints ?? []);

export interface EvictPodsRequest {
  node: string;
  /** the node's NoExecute taints as the workflow decided on them */
  taints: TaintView[];
  pods: Array<EvictionPodView & { scheduledAt: string }>;
  /** why, in words, for the history */
  reason: string;
}

export interface EvictPodsResult {
  /** `<namespace>/<name>` of pods deleted, or already gone */
  done: string[];
  /** pods whose tolerations (or identity) changed since the decision: decided again, not deleted */
  changed?: EvictionPodView[];
  /** the node's NoExecute taints when they differ from the request's: nothing was deleted */
  taints?: TaintView[];
  nodeGone?: boolean;
}

export interface RecordEvictionsCancelledRequest {
  node: string;
  pods: string[];
  reason: string;
}

export interface TaintEvictionDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}


/** An Event on a pod by name, as upstream's taint manager refers to it (no UID). */
const podRef = (key: string) => {
  const [namespace, name] = key.split('/');
  return { apiVersion: 'v1', kind: 'Pod', namespace, name, uid: '' };
};

/**
 * The taint eviction controller's I/O. A deletion first checks, live, that the node still has the
 * taints and the pod the tolerations it was decided on (a watch event may still be on its way),
 * then records the Event, marks the pod with the DisruptionTarget condition and deletes it.
 */
export function createTaintEvictionActivities(deps: TaintEvictionDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'taint-eviction' });

  return {
    async evictPods(req: EvictPodsRequest): Promise<EvictPodsResult> {
      return apiCall(async () => {
        let node: NodeObject;
        try {
          node = (await rest.request<NodeObject>('GET', resourcePath(RESOURCES.nodes, undefined, req.node))).body;
        } catch (e) {
          if (isStatus(e, 404)) return { done: [], nodeGone: true };
          throw e;
        }
        const live = nodeNoExecuteTaints(node);
        if (!sameTaints(live, req.taints)) return { done: [], taints: live };

        const done: string[] = [];
        const changed: EvictionPodView[] = [];
        for (const want of req.pods) {
          const key = podKey(want);
          const path = resourcePath(RESOURCES.pods, want.namespace, want.name);
          deps.recordEvent(EVENT_COMPONENT, podRef(key), 'Normal', EVENT_REASON, `Marking for deletion Pod ${key}`);
          let pod: PodObject;
          try {
            pod = (await rest.request<PodObject>('GET', path)).body;
          } catch (e) {
            if (isStatus(e, 404)) {
              done.push(key);
              continue;
            }
            throw e;
          }
          const view = evictionPodView(pod);
          if (pod.spec?.nodeName !== req.node) {
            // the name now holds a pod bound elsewhere: not this node's to evict
            done.push(key);
            continue;
          }
          if (view.uid !== want.uid || !sameTolerations(view.tolerations, want.tolerations)) {
            changed.push(view);
            continue;
          }
          const gen = pod.metadata?.generation ?? 0;
          const old = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
          const same = old?.status === 'True' && old.reason === DISRUPTION_REASON && old.message === DISRUPTION_MESSAGE && (old.observedGeneration ?? 0) === gen;
          if (!same) {
            await rest.request('PATCH', `${path}/status`, {
              contentType: 'application/strategic-merge-patch+json',
              body: {
                metadata: { uid: view.uid },
                status: { conditions: [{
                  type: 'DisruptionTarget', status: 'True', reason: DISRUPTION_REASON, message: DISRUPTION_MESSAGE,
                  lastTransitionTime: old?.status === 'True' ? (old as { lastTransitionTime?: string }).lastTransitionTime : new Date().toISOString(),
                  ...(gen ? { observedGeneration: gen } : {}),
                }] },
              },
            }).catch((e: unknown) => {
              if (!isStatus(e, 404)) throw e;
            });
          }
          try {
            await rest.request('DELETE', path, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: view.uid } } });
          } catch (e) {
            if (!isStatus(e, 404, 409)) throw e;
          }
          log.info({ pod: key, node: req.node, scheduledAt: want.scheduledAt, taints: req.taints.map((t) => t.key) }, 'deleted pod for NoExecute taint');
          done.push(key);
          heartbeat({ done: done.length });
        }
        return { done, ...(changed.length ? { changed } : {}) };
      });
    },

    /** Upstream's cancel Events: a countdown ended without a deletion. */
    async recordEvictionsCancelled(req: RecordEvictionsCancelledRequest): Promise<void> {
      for (const key of req.pods) {
        deps.recordEvent(EVENT_COMPONENT, podRef(key), 'Normal', EVENT_REASON, `Cancelling deletion of Pod ${key}`);
        log.info({ pod: key, node: req.node }, 'cancelled deletion of pod');
      }
    },
  };
}

export type TaintEvictionActivities = ReturnType<typeof createTaintEvictionActivities>;
