import type { Logger } from 'pino';
import type { LocalReads } from '../informers/local-reads';
import type { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { heartbeat } from '../kube/heartbeat';
import { claimableBy, listAll, patchOwners, postControllerRevision, revisionPath, revisionWriteActivities, type RevisionWriteRequest } from '../kube/controller-revisions';
import { adoptBy, releaseFrom } from '../kube/ownership';
import { createOwnedPods, deleteOwnedPods, type PodOwner, type PodWriteFailure } from '../kube/pod-writes';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { updateGuarded, withoutEmpty } from '../kube/update';
import { REVISION_HASH_LABEL } from '../../workflows/common/controller-history';
import type { DaemonEvent, DaemonStatusCounts } from '../../workflows/daemonset/plan';
import { nodeShouldRunDaemonPod } from '../../workflows/daemonset/predicates';
import { daemonPodManifest, daemonSetControllerRef } from '../../workflows/daemonset/pods';
import type { DaemonPodView, DaemonRevisionView, DaemonSetView, NodeVerdict } from '../../workflows/daemonset/types';
import { daemonNodeView, daemonPodSpec, daemonPodView, daemonSetView, revisionView } from './projections';

export const EVENT_COMPONENT = 'daemonset-controller';

export interface DaemonSetKey {
  namespace: string;
  name: string;
}

export interface DaemonSetObservation {
  ds?: DaemonSetView;
  verdicts: Record<string, NodeVerdict>;
  pods: DaemonPodView[];
  revisions: DaemonRevisionView[];
}

/** The DaemonSet a write is for, as its Events and owner references name it. */
export interface DaemonSetRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface ClaimRequest {
  ds: DaemonSetRef;
  adoptPods: Array<{ name: string; uid: string }>;
  releasePods: Array<{ name: string; uid: string }>;
  adoptRevisions: Array<{ name: string; uid: string }>;
  releaseRevisions: Array<{ name: string; uid: string }>;
  reason: string;
}

export interface ClaimResult {
  pods: DaemonPodView[];
  revisions: DaemonRevisionView[];
}

export interface CreateRevisionRequest {
  ds: DaemonSetRef & { annotations?: Record<string, string>; templateLabels?: Record<string, string> };
  name: string;
  hash: string;
  revision: number;
  /** the revision data as Go marshals it; sent byte for byte */
  data: string;
  reason: string;
}

export type CreateRevisionResult = { outcome: 'created' | 'existed'; revision: DaemonRevisionView } | { outcome: 'collision' };

export interface BumpCollisionRequest {
  ds: DaemonSetRef;
  /** the collisionCount the clashing hash was made with */
  seen?: number;
  reason: string;
}

export interface RelabelPodsRequest {
  namespace: string;
  pods: Array<{ name: string; uid: string }>;
  hash: string;
  reason: string;
}

export interface CreateDaemonPodsRequest {
  ds: Pick<DaemonSetView, 'namespace' | 'name' | 'uid' | 'template' | 'templateGeneration'>;
  hash: string;
  pods: Array<{ name: string; node: string }>;
  reason: string;
}

export interface DeleteDaemonPodsRequest {
  ds: DaemonSetRef;
  pods: Array<{ name: string; uid: string }>;
  reason: string;
}

export interface DaemonStatusRequest {
  ds: DaemonSetRef & { resourceVersion: string };
  counts: DaemonStatusCounts;
  /** set when this sync processed the DaemonSet's current generation */
  observedGeneration?: number;
  reason: string;
}

export type DaemonStatusResult = { outcome: 'written'; resourceVersion: string } | { outcome: 'conflict' | 'gone' };

export interface DaemonEventsRequest {
  ds: DaemonSetRef;
  events: DaemonEvent[];
}

export interface DaemonSetDeps {
  rest: KubeRest;
  /** the manager's client, for what upstream reads through its informers */
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  local: LocalReads;
}

const dsPath = (ns: string, name: string) => resourcePath(RESOURCES.daemonSets, ns, name);
const podPath = (ns: string, name?: string) => resourcePath(RESOURCES.pods, ns, name);
const target = (ds: DaemonSetRef): EventTarget => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: ds.namespace, name: ds.name, uid: ds.uid });

/** The DaemonSet controller's I/O; every write is safe to run twice. */
export function createDaemonSetActivities(deps: DaemonSetDeps) {
  const { rest, reader } = deps;
  const log = deps.logger.child({ controller: 'daemonset' });
  const revisionWrites = revisionWriteActivities(rest, log, revisionView);
  const owner = (ds: DaemonSetRef): PodOwner => ({ target: target(ds), component: EVENT_COMPONENT });

  const list = (path: string) => listAll(reader, path);

  async function freshDaemonSet(ds: DaemonSetRef): Promise<DaemonSetView | undefined> {
    try {
      const d = daemonSetView((await rest.request<KubeObject>('GET', dsPath(ds.namespace, ds.name))).body);
      return d.uid === ds.uid ? d : undefined;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  return {
    /** The DaemonSet, every node's verdict, and its pods and revisions (owned, or orphans it may adopt), read from the API. */
    async observeDaemonSet(key: DaemonSetKey): Promise<DaemonSetObservation> {
      return apiCall(async () => {
        let ds: DaemonSetView;
        try {
          ds = daemonSetView((await reader.request<KubeObject>('GET', dsPath(key.namespace, key.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return { verdicts: {}, pods: [], revisions: [] };
          throw e;
        }
        const claimable = claimableBy(ds);
        const nodes = await list(resourcePath(RESOURCES.nodes));
        const verdicts = Object.fromEntries(nodes.map((n) => [n.metadata?.name ?? '', nodeShouldRunDaemonPod(daemonNodeView(n), daemonPodSpec(ds))]));
        const pods = (await list(podPath(key.namespace))).filter(claimable).map(daemonPodView);
        const revisions = (await list(revisionPath(key.namespace))).filter(claimable).map(revisionView);
        return { ds, verdicts, pods, revisions };
      });
    },

    /** Adopts orphans (after a fresh read shows the DaemonSet alive) and releases what its selector dropped. */
    async claimDaemonObjects(req: ClaimRequest): Promise<ClaimResult> {
      return apiCall(async () => {
        const out: ClaimResult = { pods: [], revisions: [] };
        const adopting = req.adoptPods.length + req.adoptRevisions.length > 0;
        const alive = adopting ? await freshDaemonSet(req.ds) : undefined;
        const canAdopt = !!alive && !alive.deleting;
        const ref = daemonSetControllerRef(req.ds);
        const patch = (path: string, uid: string, change: Parameters<typeof patchOwners>[3]) => patchOwners(rest, path, uid, change);
        for (const [list, adopt] of [[req.adoptPods, true], [req.releasePods, false]] as const) {
          if (adopt && !canAdopt) continue;
          for (const p of list) {
            const o = await patch(podPath(req.ds.namespace, p.name), p.uid, adopt ? adoptBy(ref) : releaseFrom(req.ds.uid));
            if (o) out.pods.push(daemonPodView(o));
          }
        }
        for (const [list, adopt] of [[req.adoptRevisions, true], [req.releaseRevisions, false]] as const) {
          if (adopt && !canAdopt) continue;
          for (const r of list) {
            const o = await patch(revisionPath(req.ds.namespace, r.name), r.uid, adopt ? adoptBy(ref) : releaseFrom(req.ds.uid));
            if (o) out.revisions.push(revisionView(o));
          }
        }
        log.info({ key: `${req.ds.namespace}/${req.ds.name}`, reason: req.reason, pods: out.pods.length, revisions: out.revisions.length }, 'claimed daemon objects');
        return out;
      });
    },

    /**
     * Creates the revision of the current template. One that exists under the name with the same
     * data is ours from an earlier attempt; with other data it is a hash collision.
     */
    async createRevision(req: CreateRevisionRequest): Promise<CreateRevisionResult> {
      return apiCall(async () => {
        const r = await postControllerRevision(rest, REVISION_HASH_LABEL, {
          namespace: req.ds.namespace, name: req.name, hash: req.hash, templateLabels: req.ds.templateLabels, annotations: req.ds.annotations,
          owner: daemonSetControllerRef(req.ds), data: req.data, revision: req.revision,
        });
        if ('created' in r) {
          log.info({ key: `${req.ds.namespace}/${req.ds.name}`, revision: req.name, number: req.revision, reason: req.reason }, 'created revision');
          return { outcome: 'created', revision: revisionView(r.created) };
        }
        const existing = revisionView(r.existing);
        if (existing.data === req.data && existing.controllerRef?.uid === req.ds.uid) return { outcome: 'existed', revision: existing };
        return { outcome: 'collision' };
      });
    },

    /** A hash collision: the DaemonSet's collisionCount goes up by one, unless it already moved since the hash was made. */
    async bumpCollisionCount(req: BumpCollisionRequest): Promise<{ collisionCount?: number }> {
      return apiCall(async () => {
        const path = dsPath(req.ds.namespace, req.ds.name);
        const current = (await rest.request<KubeObject & { status?: { collisionCount?: number } }>('GET', path)).body;
        if (current.metadata?.uid !== req.ds.uid) return {};
        const seen = current.status?.collisionCount;
        if (seen !== req.seen) return { collisionCount: seen };
        const next = (seen ?? 0) + 1;
        await updateGuarded(rest, path, { uid: req.ds.uid, resourceVersion: current.metadata?.resourceVersion ?? '' }, (o) => {
          o.status = { ...(o.status ?? {}), collisionCount: next };
        }, 'status', current);
        log.info({ key: `${req.ds.namespace}/${req.ds.name}`, collisionCount: next, reason: req.reason }, 'bumped collision count');
        return { collisionCount: next };
      });
    },

    /** Revisions without the hash label get their own name as its value, as upstream labels them. */
    async labelRevisions(req: RevisionWriteRequest): Promise<DaemonRevisionView[]> {
      return apiCall(async () => {
        const out: DaemonRevisionView[] = [];
        for (const name of req.names) {
          const r = await rest.request<KubeObject>('PATCH', revisionPath(req.namespace, name), {
            contentType: 'application/merge-patch+json', body: { metadata: { labels: { [REVISION_HASH_LABEL]: name } } },
          }).catch((e: unknown) => {
            if (isStatus(e, 404)) return undefined;
            throw e;
          });
          if (r) out.push(revisionView(r.body));
        }
        return out;
      });
    },

    renumberRevision: revisionWrites.renumber,

    deleteRevisions: revisionWrites.remove,

    /** Pods of duplicate current revisions take the kept revision's hash (upstream's dedupCurHistories). */
    async relabelPods(req: RelabelPodsRequest): Promise<void> {
      return apiCall(async () => {
        for (const p of req.pods) {
          await rest.request('PATCH', podPath(req.namespace, p.name), {
            contentType: 'application/merge-patch+json', body: { metadata: { uid: p.uid, labels: { [REVISION_HASH_LABEL]: req.hash } } },
          }).catch((e: unknown) => {
            if (!isStatus(e, 404, 409)) throw e;
          });
          heartbeat();
        }
      });
    },

    async createDaemonPods(req: CreateDaemonPodsRequest): Promise<{ created: DaemonPodView[]; failed: PodWriteFailure[] }> {
      const manifests = req.pods.map((p) => daemonPodManifest(req.ds, req.hash, p.name, p.node));
      const r = await createOwnedPods(rest, deps.recordEvent, owner(req.ds), manifests);
      log.info({ key: `${req.ds.namespace}/${req.ds.name}`, reason: req.reason, nodes: req.pods.map((p) => p.node), created: r.created.length, failed: r.failed.length, firstError: r.failed[0]?.message }, 'created daemon pods');
      return { created: r.created.map(daemonPodView), failed: r.failed };
    },

    async deleteDaemonPods(req: DeleteDaemonPodsRequest): Promise<{ deleted: string[]; failed: PodWriteFailure[] }> {
      const r = await deleteOwnedPods(rest, deps.recordEvent, owner(req.ds), req.pods);
      log.info({ key: `${req.ds.namespace}/${req.ds.name}`, reason: req.reason, pods: req.pods.map((p) => p.name), deleted: r.deleted.length, failed: r.failed.length }, 'deleted daemon pods');
      return r;
    },

    /** The status counts, through the status subresource, guarded by the version they were computed from. */
    async updateDaemonSetStatus(req: DaemonStatusRequest): Promise<DaemonStatusResult> {
      return apiCall(async () => {
        const path = dsPath(req.ds.namespace, req.ds.name);
        const guard = { uid: req.ds.uid, resourceVersion: req.ds.resourceVersion };
        try {
          const r = await updateGuarded(rest, path, guard, (o) => {
            const st = (o.status ?? {}) as Record<string, unknown>;
            o.status = withoutEmpty({ ...st, ...req.counts, ...(req.observedGeneration !== undefined ? { observedGeneration: req.observedGeneration } : {}) });
          }, 'status', deps.local.at(RESOURCES.daemonSets, req.ds.namespace, req.ds.name, guard));
          return { outcome: 'written', resourceVersion: r.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (isStatus(e, 409)) return { outcome: 'conflict' };
          throw e;
        }
      });
    },

    async recordDaemonSetEvents(req: DaemonEventsRequest): Promise<void> {
      for (const e of req.events) deps.recordEvent(EVENT_COMPONENT, target(req.ds), e.type, e.reason, e.message);
    },
  };
}

export type DaemonSetActivities = ReturnType<typeof createDaemonSetActivities>;
