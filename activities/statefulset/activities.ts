import type { Logger } from 'pino';
import type { LocalReads } from '../informers/local-reads';
import type { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, asActivityFailure, isStatus } from '../kube/failures';
import { heartbeat } from '../kube/heartbeat';
import { claimableBy, listAll, patchOwners, postControllerRevision, revisionPath, revisionWriteActivities } from '../kube/controller-revisions';
import { adoptBy, releaseFrom } from '../kube/ownership';
import { createOwnedPods, deleteOwnedPods, type PodEventMessages, type PodOwner } from '../kube/pod-writes';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { updateGuarded } from '../kube/update';
import { CONTROLLER_REVISION_HASH_LABEL, hashRevisionData, revisionName } from '../../workflows/common/controller-history';
import type { OwnerRef } from '../../workflows/common/meta';
import { slowStartBatches } from '../../workflows/replicaset/logic';
import type { PodAction, SyncPlan } from '../../workflows/statefulset/control';
import type { StatefulClaimView, StatefulPodView, StatefulRevisionView, StatefulSetView } from '../../workflows/statefulset/types';
import {
  POD_INDEX_LABEL,
  POD_NAME_LABEL,
  claimOwnerRefsFor,
  claimsOf,
  hasUnexpectedController,
  isClaimOwnerUpToDate,
  ordinalOf,
  setControllerRef,
  storageVolumes,
  templateNames,
  type ClaimManifest,
} from '../../workflows/statefulset/utils';
import { statefulClaimView, statefulPodView, statefulRevisionView, statefulSetView } from './projections';

export const EVENT_COMPONENT = 'statefulset-controller';

export interface StatefulSetKey {
  namespace: string;
  name: string;
}

export interface StatefulSetObservation {
  set?: StatefulSetView;
  /** pods it controls, and orphans it may adopt (the selector matches) */
  pods: StatefulPodView[];
  revisions: StatefulRevisionView[];
  /** claims named after its templates */
  claims: StatefulClaimView[];
}

export interface StatefulSetRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface StatefulClaimRequest {
  set: StatefulSetRef;
  adoptPods: Array<{ name: string; uid: string }>;
  releasePods: Array<{ name: string; uid: string }>;
  adoptRevisions: Array<{ name: string; uid: string }>;
  reason: string;
}

export interface StatefulRevisionCreateRequest {
  set: StatefulSetRef & { annotations?: Record<string, string>; templateLabels?: Record<string, string> };
  /** the revision data as Go marshals it; sent byte for byte */
  data: string;
  revision: number;
  collisionCount: number;
  reason: string;
}

export interface StatefulRevisionCreateResult {
  revision: StatefulRevisionView;
  /** the collision count the name was found with (above the one given after a hash collision) */
  collisionCount: number;
}

export interface StatefulSyncRequest {
  /** the set the pods and claims are made from (the activity never reads it again) */
  set: Omit<StatefulSetView, 'status'>;
  /** the stages in upstream's order; with `burst` each runs in slow-start batches */
  stages: PodAction[][];
  burst: boolean;
  reason: string;
}

export interface StatefulSyncResult {
  /** how many actions went through */
  done: number;
  /** the first rejection, in words (the sync stops there) */
  failed?: string;
}

export interface StatefulStatusRequest {
  set: StatefulSetRef & { resourceVersion: string };
  status: SyncPlan['status'];
  reason: string;
}

export type StatefulStatusResult = { outcome: 'written'; resourceVersion: string } | { outcome: 'conflict' | 'gone' };

export interface StatefulSetDeps {
  rest: KubeRest;
  /** the manager's client, for what upstream reads through its informers */
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  local: LocalReads;
}

const setPath = (ns: string, name: string) => resourcePath(RESOURCES.statefulSets, ns, name);
const podPath = (ns: string, name?: string) => resourcePath(RESOURCES.pods, ns, name);
const claimPath = (ns: string, name?: string) => resourcePath(RESOURCES.persistentVolumeClaims, ns, name);
const target = (s: StatefulSetRef): EventTarget => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: s.namespace, name: s.name, uid: s.uid });

/** upstream's recordPodEvent wording (the verb title-cased): `<Verb> Pod <pod> in StatefulSet <set> successful|failed error: ...` */
export function podEventMessages(setName: string): PodEventMessages {
  return {
    created: (pod) => `Create Pod ${pod} in StatefulSet ${setName} successful`,
    createFailed: (pod, error) => `Create Pod ${pod} in StatefulSet ${setName} failed error: ${error}`,
    deleted: (pod) => `Delete Pod ${pod} in StatefulSet ${setName} successful`,
    deleteFailed: (pod, error) => `Delete Pod ${pod} in StatefulSet ${setName} failed error: ${error}`,
  };
}

/** An error in Go's words: an API rejection says the server's message. */
const errorText = (e: unknown) => (e instanceof ApiError ? e.serverMessage : e instanceof Error ? e.message : String(e));
/** utilerrors.NewAggregate's text */
const aggregate = (errs: string[]) => (errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);

/** An action that the API refused (not a passing trouble, which fails the activity for a retry). */
class Refused extends Error {}

/** The StatefulSet controller's I/O; every write is safe to run twice. */
export function createStatefulSetActivities(deps: StatefulSetDeps) {
  const { rest, reader } = deps;
  const log = deps.logger.child({ controller: 'statefulset' });
  const revisionWrites = revisionWriteActivities(rest, log, statefulRevisionView);

  const list = (path: string) => listAll(reader, path);

  async function getOrUndefined(path: string): Promise<KubeObject | undefined> {
    try {
      return (await rest.request<KubeObject>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  const event = (set: StatefulSetRef, type: 'Normal' | 'Warning', reason: string, message: string) => deps.recordEvent(EVENT_COMPONENT, target(set), type, reason, message);
  /** recordPodEvent for verbs other than create and delete */
  const podEvent = (set: StatefulSetRef, verb: string, pod: string, err?: string) => {
    const Verb = verb[0].toUpperCase() + verb.slice(1);
    if (err === undefined) event(set, 'Normal', `Successful${Verb}`, `${Verb} Pod ${pod} in StatefulSet ${set.name} successful`);
    else event(set, 'Warning', `Failed${Verb}`, `${Verb} Pod ${pod} in StatefulSet ${set.name} failed error: ${err}`);
  };

  /** createPersistentVolumeClaims: each missing claim made; a claim being deleted is an error. */
  async function createClaims(set: StatefulSyncRequest['set'], pod: string, claims: readonly ClaimManifest[]): Promise<string[]> {
    const errs: string[] = [];
    for (const c of claims) {
      const existing = await getOrUndefined(claimPath(set.namespace, c.metadata.name));
      heartbeat();
      if (existing) {
        if (existing.metadata?.deletionTimestamp) errs.push(`pvc ${c.metadata.name} is being deleted`);
        continue;
      }
      try {
        await rest.request('POST', claimPath(set.namespace), { body: c });
        event(set, 'Normal', 'SuccessfulCreate', `Create Claim ${c.metadata.name} Pod ${pod} in StatefulSet ${set.name} success`);
      } catch (e) {
        if (e instanceof ApiError && e.transient) throw asActivityFailure(e);
        errs.push(`failed to create PVC ${c.metadata.name}: ${errorText(e)}`);
        if (!isStatus(e, 409)) event(set, 'Warning', 'FailedCreate', `Create Claim ${c.metadata.name} for Pod ${pod} in StatefulSet ${set.name} failed error: ${errorText(e)}`);
      }
      heartbeat();
    }
    return errs;
  }

  /** UpdatePodClaimForRetentionPolicy: each claim of the pod gets the owners the policy wants. */
  async function fixClaimOwners(set: StatefulSyncRequest['set'], pod: { name: string; uid: string }): Promise<void> {
    for (const c of claimsOf(set, ordinalOf(pod.name), new Map())) {
      const path = claimPath(set.namespace, c.name);
      const claim = await getOrUndefined(path);
      heartbeat();
      if (!claim) continue;
      const refs = (claim.metadata?.ownerReferences ?? []) as OwnerRef[];
      if (hasUnexpectedController(refs, set, pod)) {
        event(set, 'Warning', 'ConflictingController', `PersistentVolumeClaim ${c.name} has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim`);
      }
      if (isClaimOwnerUpToDate(refs, set, pod)) continue;
      try {
        await updateGuarded(rest, path, { uid: claim.metadata?.uid ?? '', resourceVersion: claim.metadata?.resourceVersion ?? '' }, (o) => {
          o.metadata = { ...o.metadata, ownerReferences: claimOwnerRefsFor(refs, set, pod) };
        }, undefined, claim);
      } catch (e) {
        if (e instanceof ApiError && e.transient) throw asActivityFailure(e);
        throw new Refused(`could not update claim ${c.name} for delete policy ownerRefs: ${errorText(e)}`);
      }
      heartbeat();
    }
  }

  async function runAction(set: StatefulSyncRequest['set'], a: PodAction): Promise<void> {
    const ref = { namespace: set.namespace, name: set.name, uid: set.uid };
    const owner: PodOwner = { target: target(ref), component: EVENT_COMPONENT, messages: podEventMessages(set.name) };
    switch (a.type) {
      case 'delete': {
        const r = await deleteOwnedPods(rest, deps.recordEvent, owner, [a.pod]);
        if (r.failed.length) throw new Refused(r.failed[0].message);
        return;
      }
      case 'create': {
        const errs = await createClaims(set, a.pod.metadata.name, a.claims);
        if (errs.length) {
          podEvent(ref, 'create', a.pod.metadata.name, aggregate(errs));
          throw new Refused(aggregate(errs));
        }
        const r = await createOwnedPods(rest, deps.recordEvent, owner, [a.pod]);
        if (r.failed.length) throw new Refused(r.failed[0].message);
        const made = r.created[0];
        try {
          await fixClaimOwners(set, { name: a.pod.metadata.name, uid: made?.metadata?.uid ?? '' });
        } catch (e) {
          if (e instanceof Refused) podEvent(ref, 'update', a.pod.metadata.name, e.message);
          throw e;
        }
        return;
      }
      case 'createClaims': {
        const errs = await createClaims(set, a.pod.name, a.claims);
        if (errs.length) throw new Refused(aggregate(errs));
        try {
          await fixClaimOwners(set, a.pod);
        } catch (e) {
          if (e instanceof Refused) podEvent(ref, 'update', a.pod.name, e.message);
          throw e;
        }
        return;
      }
      case 'fixClaims':
        await fixClaimOwners(set, a.pod);
        return;
      case 'updatePod': {
        // UpdateStatefulPod: identity and storage put right, the claims' owners with them
        const path = podPath(set.namespace, a.pod.name);
        const pod = await getOrUndefined(path);
        if (!pod || pod.metadata?.uid !== a.pod.uid) return;
        const spec = (pod.spec ?? {}) as { volumes?: Array<{ name: string }> };
        const names = templateNames(set);
        const view = statefulPodView(pod);
        const storageOk = names.every((t) => view.volumes[t] === `${t}-${set.name}-${a.ordinal}`);
        if (!storageOk) {
          const errs = await createClaims(set, a.pod.name, a.claims);
          if (errs.length) {
            podEvent(ref, 'update', a.pod.name, aggregate(errs));
            throw new Refused(aggregate(errs));
          }
        }
        try {
          await fixClaimOwners(set, a.pod);
        } catch (e) {
          if (e instanceof Refused) podEvent(ref, 'update', a.pod.name, e.message);
          throw e;
        }
        const labels = { ...(pod.metadata?.labels ?? {}) };
        const identityOk = labels[POD_NAME_LABEL] === a.pod.name;
        if (identityOk && storageOk) return;
        labels[POD_NAME_LABEL] = a.pod.name;
        labels[POD_INDEX_LABEL] = String(a.ordinal);
        try {
          await updateGuarded(rest, path, { uid: a.pod.uid, resourceVersion: pod.metadata?.resourceVersion ?? '' }, (o) => {
            o.metadata = { ...o.metadata, labels };
            if (!storageOk) (o.spec as { volumes?: unknown }).volumes = storageVolumes(set, a.ordinal, spec.volumes ?? []);
          }, undefined, pod);
          podEvent(ref, 'update', a.pod.name);
        } catch (e) {
          if (e instanceof ApiError && e.transient) throw asActivityFailure(e);
          podEvent(ref, 'update', a.pod.name, errorText(e));
          throw new Refused(errorText(e));
        }
        return;
      }
    }
  }

  return {
    /** The StatefulSet, the pods and revisions it controls or may adopt, and the claims named after its templates. */
    async observeStatefulSet(key: StatefulSetKey): Promise<StatefulSetObservation> {
      return apiCall(async () => {
        let set: StatefulSetView;
        try {
          set = statefulSetView((await reader.request<KubeObject>('GET', setPath(key.namespace, key.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return { pods: [], revisions: [], claims: [] };
          throw e;
        }
        const claimable = claimableBy(set);
        const pods = (await list(podPath(key.namespace))).filter(claimable).map(statefulPodView);
        const revisions = (await list(revisionPath(key.namespace))).filter(claimable).map(statefulRevisionView);
        const prefixes = templateNames(set).map((t) => `${t}-${set.name}-`);
        const claims = prefixes.length
          ? (await list(claimPath(key.namespace))).filter((c) => prefixes.some((p) => (c.metadata?.name ?? '').startsWith(p))).map(statefulClaimView)
          : [];
        return { set, pods, revisions, claims };
      });
    },

    /** Adopts orphan pods and revisions (after a fresh read shows the set alive) and releases pods it no longer selects. */
    async claimStatefulObjects(req: StatefulClaimRequest): Promise<{ pods: StatefulPodView[]; revisions: StatefulRevisionView[] }> {
      return apiCall(async () => {
        const out = { pods: [] as StatefulPodView[], revisions: [] as StatefulRevisionView[] };
        let canAdopt = false;
        if (req.adoptPods.length + req.adoptRevisions.length) {
          const fresh = await getOrUndefined(setPath(req.set.namespace, req.set.name));
          canAdopt = !!fresh && fresh.metadata?.uid === req.set.uid && !fresh.metadata?.deletionTimestamp;
        }
        const ref = setControllerRef(req.set);
        const patch = (path: string, uid: string, change: Parameters<typeof patchOwners>[3]) => patchOwners(rest, path, uid, change);
        if (canAdopt) {
          for (const p of req.adoptPods) {
            const o = await patch(podPath(req.set.namespace, p.name), p.uid, adoptBy(ref));
            if (o) out.pods.push(statefulPodView(o));
          }
          for (const r of req.adoptRevisions) {
            const o = await patch(revisionPath(req.set.namespace, r.name), r.uid, adoptBy(ref));
            if (o) out.revisions.push(statefulRevisionView(o));
          }
        }
        for (const p of req.releasePods) {
          const o = await patch(podPath(req.set.namespace, p.name), p.uid, releaseFrom(req.set.uid));
          if (o) out.pods.push(statefulPodView(o));
        }
        log.info({ key: `${req.set.namespace}/${req.set.name}`, reason: req.reason, pods: out.pods.length, revisions: out.revisions.length }, 'claimed stateful objects');
        return out;
      });
    },

    /**
     * CreateControllerRevision: the revision under the name its hash gives; a name taken by other
     * data is a collision, tried again with the count one higher. One with the same data and owner
     * is ours from an earlier attempt.
     */
    async createStatefulRevision(req: StatefulRevisionCreateRequest): Promise<StatefulRevisionCreateResult> {
      return apiCall(async () => {
        let collisionCount = req.collisionCount;
        for (;;) {
          const hash = hashRevisionData(req.data, collisionCount);
          const name = revisionName(req.set.name, hash);
          const r = await postControllerRevision(rest, CONTROLLER_REVISION_HASH_LABEL, {
            namespace: req.set.namespace, name, hash, templateLabels: req.set.templateLabels, annotations: req.set.annotations,
            owner: setControllerRef(req.set), data: req.data, revision: req.revision,
          });
          if ('created' in r) {
            log.info({ key: `${req.set.namespace}/${req.set.name}`, revision: name, number: req.revision, reason: req.reason }, 'created revision');
            return { revision: statefulRevisionView(r.created), collisionCount };
          }
          const existing = statefulRevisionView(r.existing);
          if (existing.data === req.data) return { revision: existing, collisionCount };
          collisionCount++;
          heartbeat();
        }
      });
    },

    /** UpdateControllerRevision: an earlier revision with the set's template becomes the newest. */
    renumberStatefulRevision: revisionWrites.renumber,

    deleteStatefulRevisions: revisionWrites.remove,

    /**
     * The sync's pod and claim writes, stage by stage. OrderedReady sends one action at a time;
     * Parallel runs each stage in slow-start batches. The first refusal ends the sync, as an error
     * ends upstream's; a passing trouble fails the activity, whose retry is safe: pods and claims
     * have fixed names, and deletes carry the pod's UID.
     */
    async syncStatefulPods(req: StatefulSyncRequest): Promise<StatefulSyncResult> {
      return apiCall(async () => {
        let done = 0;
        const key = `${req.set.namespace}/${req.set.name}`;
        for (const stage of req.stages) {
          let pos = 0;
          const sizes = req.burst ? slowStartBatches(stage.length) : stage.map(() => 1);
          for (const size of sizes) {
            const batch = stage.slice(pos, pos + size);
            pos += size;
            const refused: string[] = [];
            await Promise.all(batch.map(async (a) => {
              try {
                await runAction(req.set, a);
                done++;
              } catch (e) {
                if (!(e instanceof Refused)) throw e;
                refused.push(`${a.type} ${'ordinal' in a ? a.ordinal : a.pod.name}: ${e.message}`);
              } finally {
                heartbeat();
              }
            }));
            if (refused.length) {
              log.warn({ key, reason: req.reason, done, refused }, 'stateful pod writes refused');
              return { done, failed: refused.join('; ') };
            }
          }
        }
        log.info({ key, reason: req.reason, done }, 'synced stateful pods');
        return { done };
      });
    },

    /** The status, replaced whole through the status subresource, guarded by the version it was computed from. */
    async updateStatefulSetStatus(req: StatefulStatusRequest): Promise<StatefulStatusResult> {
      return apiCall(async () => {
        const path = setPath(req.set.namespace, req.set.name);
        const guard = { uid: req.set.uid, resourceVersion: req.set.resourceVersion };
        try {
          const r = await updateGuarded(rest, path, guard, (o) => {
            o.status = { ...req.status };
          }, 'status', deps.local.at(RESOURCES.statefulSets, req.set.namespace, req.set.name, guard));
          log.info({ key: `${req.set.namespace}/${req.set.name}`, reason: req.reason }, 'updated statefulset status');
          return { outcome: 'written', resourceVersion: r.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (isStatus(e, 409)) return { outcome: 'conflict' };
          throw e;
        }
      });
    },
  };
}

export type StatefulSetActivities = ReturnType<typeof createStatefulSetActivities>;
