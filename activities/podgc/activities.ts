import type { Logger } from 'pino';
import { pool } from '../../workflows/runtime/pool';
import { heartbeat } from '../kube/heartbeat';
import { failedStatusPatch, selectPodsForGc } from '../../workflows/podgc/logic';
import {
  DEFAULT_MAX_TARGETS,
  DISRUPTION_TARGET,
  DisruptionCondition,
  OUT_OF_SERVICE_TAINT,
  PodGcNodeView,
  PodGcPodView,
  PodGcReason,
  PodGcSelection,
  PodGcTarget,
} from '../../workflows/podgc/types';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

type PodObject = KubeObject & {
  spec?: { nodeName?: string };
  status?: { phase?: string; reason?: string; conditions?: Array<{ type?: string; status?: string; lastTransitionTime?: string }> };
};

type NodeObject = KubeObject & {
  spec?: { taints?: Array<{ key?: string }> };
  status?: { conditions?: Array<{ type?: string; status?: string }> };
};

export function podGcPodView(o: KubeObject): PodGcPodView {
  const p = o as PodObject;
  const m = p.metadata ?? {};
  const dt = p.status?.conditions?.find((c) => c.type === DISRUPTION_TARGET);
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    phase: p.status?.phase ?? '',
    ...(p.status?.reason ? { reason: p.status.reason } : {}),
    nodeName: p.spec?.nodeName ?? '',
    creationTimestamp: m.creationTimestamp ?? '',
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    generation: m.generation ?? 0,
    ...(dt ? { disruptionTarget: { status: dt.status ?? '', ...(dt.lastTransitionTime ? { lastTransitionTime: dt.lastTransitionTime } : {}) } } : {}),
  };
}

export function podGcNodeView(o: KubeObject): PodGcNodeView {
  const n = o as NodeObject;
  return {
    name: n.metadata?.name ?? '',
    // upstream's IsNodeReady: the first Ready condition decides; none means not ready
    ready: n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
    outOfService: (n.spec?.taints ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT),
  };
}

export interface ListPodGcCandidatesRequest {
  terminatedPodThreshold: number;
  dueNodes: string[];
  maxTargets?: number;
}

export interface PodGcListing extends PodGcSelection {
  podCount: number;
  nodeCount: number;
}

export interface CheckNodesRequest {
  names: string[];
}

export interface CheckNodesResult {
  /** a live GET answered 404 */
  gone: string[];
  /** it exists after all */
  present: string[];
  /** the GET failed otherwise; upstream lets such a node come back through a new quarantine */
  unknown: string[];
}

export interface DeletePodsRequest {
  reason: PodGcReason;
  pods: PodGcTarget[];
  /** the DisruptionTarget condition added when a pod still running is marked Failed (orphans only, as upstream) */
  condition?: DisruptionCondition;
}

export interface DeletePodsResult {
  deleted: number;
  /** already gone (404) */
  gone: number;
  /** the name now holds another pod (UID precondition failed): left alone */
  replaced: number;
  /** refused for other reasons (the first few), as upstream logs and moves on */
  failed: Array<{ pod: string; error: string }>;
  failedCount: number;
}

export interface PodGcDeps {
  rest: KubeRest;
  logger: Logger;
  /** upstream's pod GC records no events; accepted so the manager's deps fit */
  recordEvent?: RecordEvent;
}



const DELETE_CONCURRENCY = 8;
const LIST_PAGE = 500;
const FAILURES_REPORTED = 10;

/**
 * The pod garbage collector's I/O. Listing reads every pod and node, page by page, but only the
 * selected targets leave the activity; deletes are forced (grace 0) as upstream's are, with a UID
 * precondition our guarantees add, and pods still running are marked Failed first.
 */
export function createPodGcActivities(deps: PodGcDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'podgc' });

  async function listAll(path: string, each: (o: KubeObject) => void): Promise<number> {
    let cont = '';
    let count = 0;
    do {
      const page = await rest.request<{ items: KubeObject[] | null; metadata: { continue?: string } }>(
        'GET', `${path}?limit=${LIST_PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      for (const o of page.body.items ?? []) {
        each(o);
        count++;
      }
      cont = page.body.metadata.continue ?? '';
      heartbeat({ path, count });
    } while (cont);
    return count;
  }

  return {
    /** One gc pass's selection over the live pod and node lists. */
    async listPodGcCandidates(req: ListPodGcCandidatesRequest): Promise<PodGcListing> {
      return apiCall(async () => {
        const nodes: PodGcNodeView[] = [];
        await listAll(resourcePath(RESOURCES.nodes), (o) => nodes.push(podGcNodeView(o)));
        const pods: PodGcPodView[] = [];
        await listAll(resourcePath(RESOURCES.pods), (o) => pods.push(podGcPodView(o)));
        const sel = selectPodsForGc(pods, nodes, {
          terminatedPodThreshold: req.terminatedPodThreshold,
          dueNodes: req.dueNodes,
          maxTargets: req.maxTargets ?? DEFAULT_MAX_TARGETS,
        });
        if (sel.terminated.length) {
          log.info({ numPods: sel.terminated.length, terminated: sel.terminatedCount, threshold: req.terminatedPodThreshold }, 'garbage collecting terminated pods');
        }
        return { ...sel, podCount: pods.length, nodeCount: nodes.length };
      });
    },

    /** Whether nodes the list lacks are really gone, by a live GET each (upstream's checkIfNodeExists). */
    async podGcCheckNodes(req: CheckNodesRequest): Promise<CheckNodesResult> {
      const out: CheckNodesResult = { gone: [], present: [], unknown: [] };
      for (const name of req.names) {
        try {
          await rest.request('GET', resourcePath(RESOURCES.nodes, undefined, name));
          out.present.push(name);
        } catch (e) {
          if (isStatus(e, 404)) out.gone.push(name);
          else {
            log.warn({ node: name, err: String(e) }, 'error while getting node');
            out.unknown.push(name);
          }
        }
        heartbeat({ checked: name });
      }
      return out;
    },

    /**
     * Force-deletes pods, as upstream's markFailedAndDeletePod: a pod not yet Succeeded or Failed
     * first gets phase Failed (and, for orphans, a DisruptionTarget condition), because no kubelet
     * may be left to say how it ended. A transient API error fails the batch for a retry; going
     * over it again is harmless, as pods already gone answer 404.
     */
    async podGcDeletePods(req: DeletePodsRequest): Promise<DeletePodsResult> {
      return apiCall(async () => {
        const out: DeletePodsResult = { deleted: 0, gone: 0, replaced: 0, failed: [], failedCount: 0 };
        const fail = (key: string, e: unknown) => {
          out.failedCount++;
          if (out.failed.length < FAILURES_REPORTED) out.failed.push({ pod: key, error: e instanceof ApiError ? e.serverMessage : String(e) });
          log.warn({ pod: key, reason: req.reason, err: String(e) }, 'failed to delete pod');
        };
        await pool(req.pods, DELETE_CONCURRENCY, async (t) => {
          const key = `${t.namespace}/${t.name}`;
          const path = resourcePath(RESOURCES.pods, t.namespace, t.name);
          log.info({ pod: key, reason: req.reason, phase: t.phase }, 'PodGC is force deleting Pod');
          try {
            const patch = failedStatusPatch(t, req.condition, new Date().toISOString());
            if (patch) {
              await rest.request('PATCH', `${path}/status`, { body: patch, contentType: 'application/strategic-merge-patch+json' });
              heartbeat({ patched: key });
            }
            await rest.request('DELETE', path, {
              body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: t.uid } },
            });
            heartbeat({ deleted: key });
            out.deleted++;
          } catch (e) {
            if (isStatus(e, 404)) out.gone++;
            else if (isStatus(e, 409)) out.replaced++;
            else if (e instanceof ApiError && !e.transient) fail(key, e);
            else throw e;
          }
        });
        return out;
      });
    },
  };
}

export type PodGcActivities = ReturnType<typeof createPodGcActivities>;
