import type { Logger } from 'pino';
import {
  CONTROLLER,
  EVENT_COMPONENT,
  FAILED_CREATION,
  FIELD_MANAGER,
  CLAIM_FINALIZER,
  consumerFate,
  findGenerated,
  generatedClaim,
  isPodConsumer,
  namedClaims,
  templateRefusal,
  type ClaimPodView,
  type ClaimView,
  type ConsumerFate,
  type ConsumerRef,
} from '../../workflows/resourceclaim/logic';
import { featureEnabled } from '../../workers/feature-gates';
import type { FlagValues } from '../../workers/flags';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { claimPodView, claimView, templateView } from './projections';

export interface ObjectKeyRequest {
  namespace: string;
  name: string;
}

export interface ClaimPodObservation {
  /** absent when the pod is gone */
  pod?: ClaimPodView;
  /** each claim the pod's entries name, null when there is none under the name */
  claims: Record<string, ClaimView | null>;
}

export interface EnsureGeneratedClaimRequest {
  reason: string;
  namespace: string;
  pod: string;
  podUid: string;
  /** the pod's claim entry */
  entry: string;
  template: string;
}

/**
 * - `found`: a claim the pod controls carries the entry's annotation (created by an earlier try);
 * - `created`: this call created it;
 * - `failed`: upstream's error text for the entry (a missing template, a refused create).
 */
export type EnsureGeneratedClaimResult =
  | { outcome: 'found' | 'created'; claim: ClaimView }
  | { outcome: 'failed'; message: string };

export interface ApplyPodClaimStatusesRequest {
  reason: string;
  namespace: string;
  pod: string;
  statuses: Array<{ name: string; resourceClaimName: string }>;
}

export interface ReserveClaimRequest {
  reason: string;
  namespace: string;
  claim: string;
  pod: string;
  podUid: string;
}

export interface ClaimObservation {
  claim?: ClaimView;
  /** each pod entry of reservedFor by UID: what the API server has under its name */
  fates: Record<string, ConsumerFate>;
  /** the pod under the name of the claim's controller owner, if there is one */
  owner?: Pick<ClaimPodView, 'uid' | 'phase' | 'deleting' | 'nodeName'>;
}

export interface WriteClaimStatusRequest {
  reason: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  /** the reservations to keep (absent: left as they are) */
  reservedFor?: ConsumerRef[];
  clearAllocation: boolean;
}

export interface RemoveClaimFinalizerRequest {
  reason: string;
  namespace: string;
  name: string;
  resourceVersion: string;
}

export interface DeleteClaimRequest {
  reason: string;
  namespace: string;
  name: string;
  uid: string;
}

/** `written` with the claim's new version; `conflict` when it changed since it was read; `gone`. */
export type ClaimWriteResult = { outcome: 'written'; resourceVersion: string } | { outcome: 'conflict' | 'gone' };

export interface RecordClaimFailureRequest {
  namespace: string;
  pod: string;
  podUid: string;
  message: string;
}

export interface ResourceClaimDeps {
  rest: KubeRest;
  /** the manager's own client: templates are read as upstream reads them, through the shared informer (its role cannot get them) */
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  flags: FlagValues;
}

const podPath = (ns: string, name: string) => resourcePath(RESOURCES.pods, ns, name);
const claimPath = (ns: string, name?: string) => resourcePath(RESOURCES.resourceClaims, ns, name);
const templatePath = (ns: string, name: string) => resourcePath(RESOURCES.resourceClaimTemplates, ns, name);
const MERGE = 'application/merge-patch+json';

async function readOrUndefined(rest: KubeRest, path: string): Promise<KubeObject | undefined> {
  try {
    return (await rest.request<KubeObject>('GET', path)).body;
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    throw e;
  }
}

/** The resource claim controller's I/O: fresh reads, the claim create, the pod status apply, claim status writes, the delete. */
export function createResourceClaimActivities(deps: ResourceClaimDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });

  /** A merge patch carrying the version read: the API server refuses it with a conflict if the claim changed since. */
  async function patchClaim(ns: string, name: string, sub: '' | '/status', body: object): Promise<ClaimWriteResult> {
    try {
      const r = await deps.rest.request<KubeObject>('PATCH', `${claimPath(ns, name)}${sub}`, { contentType: MERGE, body });
      return { outcome: 'written', resourceVersion: r.body.metadata?.resourceVersion ?? '' };
    } catch (e) {
      if (isStatus(e, 409)) return { outcome: 'conflict' };
      if (isStatus(e, 404)) return { outcome: 'gone' };
      throw e;
    }
  }

  return {
    /** The pod and the claims its entries name, as the API server has them now. */
    async observeClaimPod(req: ObjectKeyRequest): Promise<ClaimPodObservation> {
      return apiCall(async () => {
        const o = await readOrUndefined(deps.rest, podPath(req.namespace, req.name));
        if (!o) return { claims: {} };
        const pod = claimPodView(o);
        const claims: Record<string, ClaimView | null> = {};
        for (const n of namedClaims(pod)) {
          if (!n) continue;
          const c = await readOrUndefined(deps.rest, claimPath(req.namespace, n));
          claims[n] = c ? claimView(c) : null;
        }
        return { pod, claims };
      });
    },

    /**
     * The entry's generated claim: one the pod controls with the entry's annotation if there is one
     * (read from the API server, not a cache, so a create whose replica died before it was recorded
     * is found and never made twice), else a new one from the template.
     */
    async ensureGeneratedClaim(req: EnsureGeneratedClaimRequest): Promise<EnsureGeneratedClaimResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.pod}`;
        const list = (await deps.rest.request<{ items?: KubeObject[] }>('GET', claimPath(req.namespace))).body.items ?? [];
        const there = findGenerated(req.podUid, req.entry, list.map(claimView));
        if (there) {
          log.info({ key, entry: req.entry, claim: there.name }, 'generated ResourceClaim already exists');
          return { outcome: 'found', claim: there };
        }
        let t: KubeObject | undefined;
        try {
          t = (await deps.reader.request<KubeObject>('GET', templatePath(req.namespace, req.template))).body;
        } catch (e) {
          if (e instanceof ApiError && !e.transient) return { outcome: 'failed', message: `resource claim template "${req.template}": ${e.serverMessage}` };
          throw e;
        }
        const template = templateView(t);
        const refusal = templateRefusal(template.spec, {
          adminAccess: featureEnabled(deps.flags, 'DRAAdminAccess'),
          prioritizedList: featureEnabled(deps.flags, 'DRAPrioritizedList'),
        });
        if (refusal) return { outcome: 'failed', message: refusal };
        const body = generatedClaim({ name: req.pod, uid: req.podUid }, req.entry, template);
        try {
          const r = await deps.rest.request<KubeObject>('POST', claimPath(req.namespace), { body });
          const claim = claimView(r.body);
          log.info({ key, entry: req.entry, claim: claim.name }, 'created ResourceClaim');
          return { outcome: 'created', claim };
        } catch (e) {
          if (e instanceof ApiError && !e.transient) {
            log.info({ key, entry: req.entry, status: e.status, message: e.serverMessage }, 'ResourceClaim create rejected');
            // upstream names the claim it tried to create, whose name is empty before the server generates it
            return { outcome: 'failed', message: `create ResourceClaim : ${e.serverMessage}` };
          }
          throw e;
        }
      });
    },

    /** status.resourceClaimStatuses by server-side apply, with upstream's field manager, forced. */
    async applyPodClaimStatuses(req: ApplyPodClaimStatusesRequest): Promise<{ outcome: 'applied' | 'gone' }> {
      return apiCall(async () => {
        const body = {
          apiVersion: 'v1', kind: 'Pod',
          metadata: { name: req.pod, namespace: req.namespace },
          status: { resourceClaimStatuses: req.statuses },
        };
        try {
          await deps.rest.request('PATCH', `${podPath(req.namespace, req.pod)}/status?fieldManager=${FIELD_MANAGER}&force=true`,
            { contentType: 'application/apply-patch+yaml', body });
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' as const };
          throw e;
        }
        log.info({ key: `${req.namespace}/${req.pod}`, claims: req.statuses.map((s) => s.name) }, 'recorded generated ResourceClaims in pod status');
        return { outcome: 'applied' as const };
      });
    },

    /** Adds the pod to an allocated claim's reservedFor (a pod scheduled without the scheduler's reservation). */
    async reserveClaimForPod(req: ReserveClaimRequest): Promise<ClaimWriteResult> {
      return apiCall(async () => {
        const o = await readOrUndefined(deps.rest, claimPath(req.namespace, req.claim));
        if (!o) return { outcome: 'gone' };
        const c = claimView(o);
        if (!c.allocated || c.reservedFor.some((r) => r.uid === req.podUid)) return { outcome: 'written', resourceVersion: c.resourceVersion };
        const reservedFor = [...c.reservedFor, { resource: 'pods', name: req.pod, uid: req.podUid }];
        const r = await patchClaim(req.namespace, req.claim, '/status', { metadata: { resourceVersion: c.resourceVersion }, status: { reservedFor } });
        if (r.outcome === 'written') log.info({ key: `${req.namespace}/${req.claim}`, pod: req.pod }, 'reserved ResourceClaim for pod');
        return r;
      });
    },

    /** The claim, the pods its reservations name and its owning pod, as the API server has them now. */
    async observeClaim(req: ObjectKeyRequest): Promise<ClaimObservation> {
      return apiCall(async () => {
        const o = await readOrUndefined(deps.rest, claimPath(req.namespace, req.name));
        if (!o) return { fates: {} };
        const claim = claimView(o);
        const fates: Record<string, ConsumerFate> = {};
        const podCache = new Map<string, ClaimPodView | undefined>();
        const podNamed = async (name: string) => {
          if (!podCache.has(name)) {
            const p = await readOrUndefined(deps.rest, podPath(req.namespace, name));
            podCache.set(name, p ? claimPodView(p) : undefined);
          }
          return podCache.get(name);
        };
        for (const r of claim.reservedFor) {
          if (isPodConsumer(r)) fates[r.uid] = consumerFate(r, await podNamed(r.name));
        }
        const ownerName = claim.controllerPods[0]?.name;
        const owner = ownerName ? await podNamed(ownerName) : undefined;
        return { claim, fates, ...(owner ? { owner: { uid: owner.uid, phase: owner.phase, deleting: owner.deleting, nodeName: owner.nodeName } } : {}) };
      });
    },

    /** The claim's status: reservations left and the allocation cleared, if the claim is still at the version read. */
    async writeClaimStatus(req: WriteClaimStatusRequest): Promise<ClaimWriteResult> {
      return apiCall(async () => {
        const status: Record<string, unknown> = {};
        if (req.reservedFor) status.reservedFor = req.reservedFor.length ? req.reservedFor : null;
        if (req.clearAllocation) status.allocation = null;
        const r = await patchClaim(req.namespace, req.name, '/status', { metadata: { resourceVersion: req.resourceVersion }, status });
        if (r.outcome === 'written') {
          log.info({ key: `${req.namespace}/${req.name}`, reservedFor: req.reservedFor?.map((x) => x.name), deallocated: req.clearAllocation }, 'updated ResourceClaim status');
        }
        return r;
      });
    },

    /** Drops the allocation finalizer, if the claim is still at the version read. */
    async removeClaimFinalizer(req: RemoveClaimFinalizerRequest): Promise<ClaimWriteResult> {
      return apiCall(async () => {
        const o = await readOrUndefined(deps.rest, claimPath(req.namespace, req.name));
        if (!o) return { outcome: 'gone' };
        if (o.metadata?.resourceVersion !== req.resourceVersion) return { outcome: 'conflict' };
        const finalizers = (o.metadata?.finalizers ?? []).filter((f) => f !== CLAIM_FINALIZER);
        const r = await patchClaim(req.namespace, req.name, '', { metadata: { resourceVersion: req.resourceVersion, finalizers: finalizers.length ? finalizers : null } });
        if (r.outcome === 'written') log.info({ key: `${req.namespace}/${req.name}` }, 'removed ResourceClaim finalizer');
        return r;
      });
    },

    /** Deletes a generated claim whose pod will not run (only the claim of that UID). */
    async deleteGeneratedClaim(req: DeleteClaimRequest): Promise<{ outcome: 'deleted' | 'gone' }> {
      return apiCall(async () => {
        try {
          await deps.rest.request('DELETE', claimPath(req.namespace, req.name), { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: req.uid } } });
        } catch (e) {
          if (isStatus(e, 404, 409)) return { outcome: 'gone' as const };
          throw e;
        }
        log.info({ key: `${req.namespace}/${req.name}` }, 'deleted unused generated ResourceClaim');
        return { outcome: 'deleted' as const };
      });
    },

    /** upstream's Warning on the pod when one of its entries fails. */
    async recordClaimFailure(req: RecordClaimFailureRequest): Promise<void> {
      deps.recordEvent(EVENT_COMPONENT, { apiVersion: 'v1', kind: 'Pod', namespace: req.namespace, name: req.pod, uid: req.podUid },
        'Warning', FAILED_CREATION, req.message);
    },
  };
}

export type ResourceClaimActivities = ReturnType<typeof createResourceClaimActivities>;
