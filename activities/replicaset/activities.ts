import type { Logger } from 'pino';
import { podFromTemplate } from '../../workflows/replicaset/logic';
import { selectorMatches } from '../../workflows/common/selector';
import type { PodSummary, ReplicaOwner, ReplicaOwnerKind, ReplicaStatus } from '../../workflows/replicaset/types';
import type { OwnerRef } from '../../workflows/common/meta';
import { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { KubeObject, REPLICA_OWNER_FIELDS, podSummary, replicaOwner } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import type { LocalReads } from '../informers/local-reads';
import { updateGuarded, withoutEmpty } from '../kube/update';
import { adoptBy, patchOwnerReferences, releaseFrom } from '../kube/ownership';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { heartbeat } from '../kube/heartbeat';
import { createOwnedPods, createOwnedPodsInBatches, deleteOwnedPods, type PodOwner, type PodWriteFailure } from '../kube/pod-writes';

export interface OwnerKey {
  kind: ReplicaOwnerKind;
  namespace: string;
  name: string;
}

export interface Observation {
  /** absent when the object no longer exists */
  owner?: ReplicaOwner;
  /** pods it controls, plus orphans its selector matches (adoption candidates) */
  pods: PodSummary[];
}

export interface PodRef {
  name: string;
  uid: string;
  resourceVersion?: string;
}

export type { PodWriteFailure };

export interface CreatePodsRequest {
  owner: ReplicaOwner;
  names: string[];
  /**
   * Slow-start batch sizes summing to the names: created one batch after another, stopping after
   * the first batch with a rejected create. Absent: every name at once (the workflow ran the
   * batches as one call each before patch `slow-start-in-one-call`).
   */
  batches?: number[];
  /** why, in words, for whoever reads the history */
  reason: string;
}

export interface CreatePodsResult {
  created: PodSummary[];
  failed: PodWriteFailure[];
  /** names of the batches not tried after a failed one */
  skipped?: string[];
}

export interface DeletePodsRequest {
  owner: ReplicaOwner;
  pods: PodRef[];
  reason: string;
}

export interface DeletePodsResult {
  deleted: string[];
  failed: PodWriteFailure[];
}

export interface OwnershipRequest {
  owner: ReplicaOwner;
  pods: PodRef[];
  reason: string;
}

export interface OwnershipResult {
  /** pods as they are after the patch */
  updated: PodSummary[];
  /** names left alone: gone, changed meanwhile (re-observe), or the owner is being deleted */
  skipped: string[];
}

export interface StatusUpdateRequest {
  owner: ReplicaOwner;
  status: ReplicaStatus;
}

export type StatusUpdateResult = { updated: true; resourceVersion: string } | { updated: false; reason: 'Conflict' | 'NotFound' };

/** Each kind's controller calls the API (and records events) with its own client. */
export interface ReplicaActivityDeps {
  clientFor(kind: ReplicaOwnerKind): { rest: KubeRest; recordEvent: RecordEvent };
  logger: Logger;
  /** this replica's informer cache, when it runs here */
  local?: LocalReads;
}

const CONTROLLER_OF: Record<ReplicaOwnerKind, string> = {
  ReplicaSet: 'replicaset-controller',
  ReplicationController: 'replication-controller',
};

const ownerResource = (kind: ReplicaOwnerKind) => (kind === 'ReplicaSet' ? RESOURCES.replicaSets : RESOURCES.replicationControllers);

export function ownerPath(kind: ReplicaOwnerKind, namespace: string, name?: string): string {
  return resourcePath(ownerResource(kind), namespace, name);
}

const podPath = (ns: string, name?: string) => resourcePath(RESOURCES.pods, ns, name);

function target(owner: ReplicaOwner): EventTarget {
  return { apiVersion: owner.apiVersion, kind: owner.kind, namespace: owner.namespace, name: owner.name, uid: owner.uid, resourceVersion: owner.resourceVersion };
}

/** controller and object key on every log line, as the workflow IDs spell them */
function logKey(owner: ReplicaOwner): { controller: string; key: string } {
  return { controller: owner.kind === 'ReplicaSet' ? 'replicaset' : 'replicationcontroller', key: `${owner.namespace}/${owner.name}` };
}

const podOwner = (owner: ReplicaOwner): PodOwner => ({ target: target(owner), component: CONTROLLER_OF[owner.kind] });

function ownerRefFor(owner: ReplicaOwner): OwnerRef {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true };
}


/** The I/O of the replicaset / replicationcontroller engine; every write is safe to run twice. */
export function createReplicaActivities(deps: ReplicaActivityDeps) {
  const rest = (kind: ReplicaOwnerKind) => deps.clientFor(kind).rest;
  const recordEvent = (kind: ReplicaOwnerKind): RecordEvent => deps.clientFor(kind).recordEvent;

  /** The owner as upstream's informer has it: from this replica's cache when it runs here, else read. */
  async function readOwner(key: OwnerKey): Promise<ReplicaOwner | undefined> {
    const cached = deps.local?.get(ownerResource(key.kind), key.namespace, key.name, REPLICA_OWNER_FIELDS);
    if (cached) return replicaOwner(key.kind, cached);
    try {
      const r = await rest(key.kind).request<KubeObject>('GET', ownerPath(key.kind, key.namespace, key.name));
      return replicaOwner(key.kind, r.body);
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  return {
    /** Re-read the owner and every pod relevant to it, straight from the API (not a cache). */
    async observeReplicaOwner(key: OwnerKey): Promise<Observation> {
      return apiCall(async () => {
        const owner = await readOwner(key);
        if (!owner) return { pods: [] };
        const items: KubeObject[] = [];
        let cont = '';
        do {
          // paged, with a heartbeat per page, so a huge namespace never looks like a dead worker
          const page = await rest(key.kind).request<{ items: KubeObject[]; metadata: { continue?: string } }>(
            'GET', `${podPath(key.namespace)}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
          items.push(...page.body.items);
          cont = page.body.metadata.continue ?? '';
          heartbeat();
        } while (cont);
        const pods = items.map(podSummary).filter((p) => {
          const ref = controllerRef(p.ownerReferences);
          return ref ? ref.uid === owner.uid : selectorMatches(owner.selector, p.labels);
        });
        return { owner, pods };
      });
    },

    /**
     * Create pods with the given (deterministic) names. A name that already exists and is ours
     * counts as created: that is this activity running a second time after a crash.
     */
    async createPods(req: CreatePodsRequest): Promise<CreatePodsResult> {
      const { owner } = req;
      const manifests = req.names.map((name) => podFromTemplate(owner, name));
      const r = req.batches
        ? await createOwnedPodsInBatches(rest(owner.kind), recordEvent(owner.kind), podOwner(owner), manifests, req.batches)
        : { ...await createOwnedPods(rest(owner.kind), recordEvent(owner.kind), podOwner(owner), manifests), skipped: [] };
      const created = r.created.map(podSummary);
      const { failed, skipped } = r;
      deps.logger.info({ ...logKey(owner), reason: req.reason, want: req.names.length, created: created.length, failed: failed.length, skipped: skipped.length, firstError: failed[0]?.message }, 'created pods');
      return { created, failed, ...(skipped.length ? { skipped } : {}) };
    },

    /** Delete pods by name with a UID precondition; already gone (or replaced) counts as deleted. */
    async deletePods(req: DeletePodsRequest): Promise<DeletePodsResult> {
      const { owner } = req;
      const { deleted, failed } = await deleteOwnedPods(rest(owner.kind), recordEvent(owner.kind), podOwner(owner), req.pods);
      deps.logger.info({ ...logKey(owner), reason: req.reason, want: req.pods.length, deleted: deleted.length, failed: failed.length, pods: req.pods.map((p) => p.name) }, 'deleted pods');
      return { deleted, failed };
    },

    /** Set this owner as controller of orphans its selector matches (checked against a fresh read of the owner). */
    async adoptPods(req: OwnershipRequest): Promise<OwnershipResult> {
      return apiCall(async () => {
        const fresh = await readOwner(req.owner);
        if (!fresh || fresh.uid !== req.owner.uid || fresh.deletionTimestamp) return { updated: [], skipped: req.pods.map((p) => p.name) };
        return patchPods(req, adoptBy(ownerRefFor(req.owner)));
      });
    },

    /** Drop this owner's controller reference from pods whose labels no longer match. */
    async releasePods(req: OwnershipRequest): Promise<OwnershipResult> {
      return apiCall(() => patchPods(req, releaseFrom(req.owner.uid)));
    },

    /** Write status through the status subresource, guarded by the resourceVersion it was computed from. */
    async updateReplicaOwnerStatus(req: StatusUpdateRequest): Promise<StatusUpdateResult> {
      return apiCall(async () => {
        const { owner, status } = req;
        try {
          const base = deps.local?.at(ownerResource(owner.kind), owner.namespace, owner.name, owner);
          const r = await updateGuarded(rest(owner.kind), ownerPath(owner.kind, owner.namespace, owner.name), owner, (o) => {
            o.status = withoutEmpty({ ...status, conditions: status.conditions.length ? status.conditions : undefined });
          }, 'status', base);
          return { updated: true, resourceVersion: r.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 409)) return { updated: false, reason: 'Conflict' };
          if (isStatus(e, 404)) return { updated: false, reason: 'NotFound' };
          throw e;
        }
      });
    },
  };

  async function patchPods(req: OwnershipRequest, change: (refs: OwnerRef[]) => OwnerRef[] | undefined): Promise<OwnershipResult> {
    const updated: PodSummary[] = [];
    const skipped: string[] = [];
    for (const p of req.pods) {
      const r = await patchOwnerReferences(rest(req.owner.kind), podPath(req.owner.namespace, p.name), p.uid, change);
      if ('patched' in r) updated.push(podSummary(r.patched));
      else skipped.push(p.name);
      heartbeat();
    }
    return { updated, skipped };
  }
}

export type ReplicaActivities = ReturnType<typeof createReplicaActivities>;
