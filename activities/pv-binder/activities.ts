import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import type { Logger } from 'pino';
import type { LocalReads } from '../informers/local-reads';
import type { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { heartbeating } from '../kube/heartbeat';
import type { FlagValues } from '../../workers/flags';
import { recyclerPod } from '../../workflows/pv-binder/recycler';
import { recyclerConfigs } from './recycler';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { updateGuarded, type Guard } from '../kube/update';
import { bindClaimToVolume, bindVolumeToClaim, claimReference, setClaimStatus, unbindVolume } from '../../workflows/pv-binder/bind';
import type { ClaimObservation } from '../../workflows/pv-binder/claim-sync';
import { claimClass, findBestMatch } from '../../workflows/pv-binder/match';
import { HOST_PATH_PLUGIN, migratedDriver } from '../../workflows/pv-binder/plugins';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_MIGRATED_TO,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  EVENT_COMPONENT,
  FINALIZER_IN_TREE_DELETION,
  type BinderEvent,
  type ClaimView,
  type ClassView,
  type PersistentVolumeClaimJson,
  type PersistentVolumeJson,
  type VolumePhase,
  type VolumeView,
} from '../../workflows/pv-binder/types';
import type { VolumeObservation } from '../../workflows/pv-binder/volume-sync';
import { BINDER_POD_FIELDS, CLAIM_FIELDS, CLASS_FIELDS, VOLUME_FIELDS, claimView, classView, newestDefaultClass, podClaimKeys, podTerminated, volumeView } from './projections';

export interface ClaimKey {
  namespace: string;
  name: string;
}

/** A claim as a write names it: where, which object, and the version the decision was made on. */
export interface ClaimGuard extends Guard {
  namespace: string;
  name: string;
}

export interface VolumeGuard extends Guard {
  name: string;
}

export interface ObserveRequest {
  /** read the API, not this replica's cache: a write just met a newer object */
  fresh?: boolean;
}

export interface BindRequest {
  claim: ClaimGuard;
  volume: VolumeGuard;
  reason: string;
}

export type WriteOutcome = { outcome: 'done' } | { outcome: 'conflict' | 'gone'; detail: string };

export interface ClaimPhaseRequest {
  claim: ClaimGuard;
  phase: 'Pending' | 'Lost';
  /** recorded before the write (Pending), or only when the phase changes (Lost) */
  events: BinderEvent[];
  eventsOnChange: boolean;
  reason: string;
}

export interface ClaimEventsRequest {
  claim: { namespace: string; name: string; uid: string };
  events: BinderEvent[];
  reason: string;
}

export interface AnnotateClaimRequest {
  claim: ClaimGuard;
  set: Record<string, string>;
  remove: string[];
  reason: string;
}

export interface AssignClassRequest {
  claim: ClaimGuard;
  className: string;
  reason: string;
}

export interface ExternalProvisioningRequest {
  claim: ClaimGuard;
  provisioner: string;
  reason: string;
}

export interface ProvisioningFailedRequest {
  claim: ClaimGuard;
  /** set the provisioner annotations first (upstream's setClaimProvisioner) */
  annotate?: string;
  /** drop the scheduler's selected node so it picks again */
  rescheduleNode: boolean;
  event: BinderEvent;
  reason: string;
}

export interface HostPathProvisionRequest {
  claim: ClaimGuard;
  cls: ClassView;
  volumeName: string;
  reason: string;
}

export interface AnnealVolumeRequest {
  volume: VolumeGuard;
  finalizers: string[];
  migratedTo?: string | null;
  reason: string;
}

export interface VolumePhaseRequest {
  volume: VolumeGuard;
  phase: VolumePhase;
  message: string;
  event?: BinderEvent;
  reason: string;
}

/** Events of one sync on the volume and, when given, on its claim. */
export interface VolumeEventsRequest {
  volume: { name: string; uid: string };
  claim?: { namespace: string; name: string; uid: string };
  volumeEvent: BinderEvent;
  claimEvent?: BinderEvent;
  reason: string;
}

export interface UnbindVolumeRequest {
  volume: VolumeGuard;
  /** recorded on the volume first (VolumeRecycled after a recycler pod succeeded) */
  event?: BinderEvent;
  reason: string;
}

/** A recycler pod the workflow waits for. */
export interface RecyclerPodRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface StartRecyclerRequest {
  volume: { name: string; uid: string };
  reason: string;
}

export type StartRecyclerResult =
  | { outcome: 'started'; pod: RecyclerPodRef }
  /** the volume is no longer released (or gone): nothing to recycle */
  | { outcome: 'skip'; detail: string }
  /** active pods still use the old claim: upstream waits (Normal VolumeFailedRecycle) */
  | { outcome: 'used'; pods: string[] }
  | { outcome: 'failed'; message: string };

export interface CheckRecyclerRequest {
  pod: RecyclerPodRef;
  volume: { name: string; uid: string };
  /** UIDs of the pod's Events already passed on to the volume */
  seen: string[];
}

export interface CheckRecyclerResult {
  state: 'running' | 'succeeded' | 'failed' | 'gone';
  message?: string;
  /** Events passed on by this call */
  forwarded: string[];
}

export interface DeleteVolumeRequest {
  volume: { name: string; uid: string };
  /** the host-path directory the deleter removes */
  path: string;
  reason: string;
}

export interface PvBinderDeps {
  rest: KubeRest;
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  local: LocalReads;
  flags: FlagValues;
}

const claimPath = (ns: string, name: string) => resourcePath(RESOURCES.persistentVolumeClaims, ns, name);
const volumePath = (name: string) => resourcePath(RESOURCES.persistentVolumes, undefined, name);
const classPath = (name: string) => resourcePath(RESOURCES.storageClasses, undefined, name);

const claimTarget = (c: { namespace: string; name: string; uid: string; resourceVersion?: string }): EventTarget =>
  ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: c.namespace, name: c.name, uid: c.uid, ...(c.resourceVersion ? { resourceVersion: c.resourceVersion } : {}) });
const volumeTarget = (v: { name: string; uid: string; resourceVersion?: string }): EventTarget =>
  ({ apiVersion: 'v1', kind: 'PersistentVolume', namespace: '', name: v.name, uid: v.uid, ...(v.resourceVersion ? { resourceVersion: v.resourceVersion } : {}) });

/** The persistent volume binder's I/O: observations for the pure syncs, and one guarded write each. */
export function createPvBinderActivities(deps: PvBinderDeps) {
  // a binding is a handful of calls: each one heartbeats, so a killed replica's bind is retried within seconds
  const rest = heartbeating(deps.rest);
  const reader = heartbeating(deps.reader);
  const { local } = deps;
  const log = deps.logger.child({ controller: 'persistentvolume-binder' });
  let loaded: ReturnType<typeof recyclerConfigs> | undefined;
  /** read once: the descriptor's precondition has already stopped the manager on a bad template */
  const recyclers = () => (loaded ??= recyclerConfigs(deps.flags));
  const claimEvent = (c: { namespace: string; name: string; uid: string; resourceVersion?: string }, e: BinderEvent) =>
    deps.recordEvent(EVENT_COMPONENT, claimTarget(c), e.type, e.reason, e.message);
  const volumeEvent = (v: { name: string; uid: string; resourceVersion?: string }, e: BinderEvent) =>
    deps.recordEvent(EVENT_COMPONENT, volumeTarget(v), e.type, e.reason, e.message);

  async function getOrUndefined<T>(path: string): Promise<T | undefined> {
    try {
      return (await reader.request<T>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  async function readClaim(ns: string, name: string, fresh: boolean): Promise<KubeObject | undefined> {
    return (!fresh && local.get(RESOURCES.persistentVolumeClaims, ns, name, CLAIM_FIELDS)) || getOrUndefined<KubeObject>(claimPath(ns, name));
  }

  async function readVolume(name: string, fresh: boolean): Promise<KubeObject | undefined> {
    return (!fresh && local.get(RESOURCES.persistentVolumes, '', name, VOLUME_FIELDS)) || getOrUndefined<KubeObject>(volumePath(name));
  }

  /** upstream's isVolumeReleased, on the API: bound to a claim that is gone, replaced, or bound to another volume */
  async function released(v: PersistentVolumeJson): Promise<boolean> {
    const ref = v.spec?.claimRef;
    if (!ref?.uid) return false;
    const c = await getOrUndefined<PersistentVolumeClaimJson>(claimPath(ref.namespace ?? '', ref.name ?? ''));
    return !(c && c.metadata?.uid === ref.uid && (!c.spec?.volumeName || c.spec.volumeName === v.metadata?.name));
  }

  async function allVolumes(fresh: boolean): Promise<VolumeView[]> {
    const cached = fresh ? undefined : local.list(RESOURCES.persistentVolumes, VOLUME_FIELDS);
    const items = cached ?? (await reader.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.persistentVolumes))).body.items ?? [];
    return items.map(volumeView);
  }

  async function allClasses(): Promise<ClassView[]> {
    const cached = local.list(RESOURCES.storageClasses, CLASS_FIELDS);
    const items = cached ?? (await reader.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.storageClasses))).body.items ?? [];
    return items.map(classView);
  }

  async function readClass(name: string): Promise<ClassView | undefined> {
    const cached = local.get(RESOURCES.storageClasses, '', name, CLASS_FIELDS);
    const o = cached ?? (await getOrUndefined<KubeObject>(classPath(name)));
    return o ? classView(o) : undefined;
  }

  /** upstream's findNonScheduledPodsByPVC: active pods using the claim with no node yet */
  async function nonScheduledPods(c: ClaimView): Promise<string[]> {
    const key = `${c.namespace}/${c.name}`;
    const uses = (o: KubeObject) => o.metadata?.namespace === c.namespace && podClaimKeys(o).includes(key);
    const pods = local.list(RESOURCES.pods, BINDER_POD_FIELDS, uses)
      ?? ((await reader.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.pods, c.namespace))).body.items ?? []).filter(uses);
    return pods.filter((p) => !podTerminated(p) && !(p.spec as { nodeName?: string } | undefined)?.nodeName)
      .map((p) => p.metadata?.name ?? '').sort();
  }

  /** A guarded update that reports a newer object or a gone one instead of failing. */
  async function guarded(path: string, guard: Guard, change: (o: KubeObject & Record<string, unknown>) => void, subresource?: 'status', base?: KubeObject):
    Promise<{ obj: KubeObject } | { outcome: 'conflict' | 'gone'; detail: string }> {
    try {
      return { obj: await updateGuarded(rest, path, guard, change, subresource, base) };
    } catch (e) {
      if (isStatus(e, 404)) return { outcome: 'gone', detail: `${path} is gone` };
      if (isStatus(e, 409)) return { outcome: 'conflict', detail: `${path} changed since it was read` };
      throw e;
    }
  }

  const guardOf = (o: KubeObject): Guard => ({ uid: o.metadata?.uid ?? '', resourceVersion: o.metadata?.resourceVersion ?? '' });

  async function annotateClaimObject(req: AnnotateClaimRequest): Promise<WriteOutcome & { obj?: KubeObject }> {
    const r = await guarded(claimPath(req.claim.namespace, req.claim.name), req.claim, (o) => {
      const ann: Record<string, string> = { ...o.metadata?.annotations };
      for (const k of req.remove) delete ann[k];
      Object.assign(ann, req.set);
      o.metadata = { ...o.metadata, annotations: ann };
    }, undefined, local.at(RESOURCES.persistentVolumeClaims, req.claim.namespace, req.claim.name, req.claim));
    if ('outcome' in r) return r;
    log.info({ claim: `${req.claim.namespace}/${req.claim.name}`, set: req.set, remove: req.remove, reason: req.reason }, 'annotated claim');
    return { outcome: 'done', obj: r.obj };
  }

  /** the provisioner annotations upstream's setClaimProvisioner writes (and the migration annotation with them) */
  function provisionerAnnotations(claim: ClaimView, provisioner: string): { set: Record<string, string>; remove: string[] } | undefined {
    if (claim.annotations[ANN_STORAGE_PROVISIONER] === provisioner) return undefined;
    const set: Record<string, string> = { [ANN_BETA_STORAGE_PROVISIONER]: provisioner, [ANN_STORAGE_PROVISIONER]: provisioner };
    const driver = migratedDriver(provisioner);
    const remove: string[] = [];
    if (driver) set[ANN_MIGRATED_TO] = driver;
    else if (claim.annotations[ANN_MIGRATED_TO]) remove.push(ANN_MIGRATED_TO);
    return { set, remove };
  }

  return {
    /** Everything upstream's syncClaim reads: the claim, its class, the volume it names or the best match, waiting pods. */
    async observeClaim(req: ClaimKey & ObserveRequest): Promise<ClaimObservation | undefined> {
      return apiCall(async () => {
        const o = await readClaim(req.namespace, req.name, !!req.fresh);
        if (!o) return undefined;
        const claim = claimView(o);
        const className = claimClass(claim);
        const cls = className ? await readClass(className) : undefined;
        const bindingModeError = cls && !cls.volumeBindingMode ? `VolumeBindingMode not set for StorageClass "${className}"` : undefined;
        const delay = cls?.volumeBindingMode === 'WaitForFirstConsumer';
        const obs: ClaimObservation = { claim, ...(cls ? { cls } : {}), nonScheduledPods: [], ...(bindingModeError ? { bindingModeError } : {}) };
        if (claim.volumeName) {
          const v = await readVolume(claim.volumeName, !!req.fresh);
          obs.named = v ? volumeView(v) : null;
        } else if (!bindingModeError) {
          const match = findBestMatch(claim, await allVolumes(!!req.fresh), delay);
          if (match) obs.match = match;
          else {
            const defaultClass = newestDefaultClass(await allClasses());
            if (defaultClass) obs.defaultClass = defaultClass;
            if (delay) obs.nonScheduledPods = await nonScheduledPods(claim);
          }
        }
        return obs;
      });
    },

    /**
     * Upstream's bind(): the volume points at the claim and is Bound, then the claim names the
     * volume, carries bind-completed and is Bound. Each step reads the object first and writes
     * only what is missing, so a retry after a crash finishes a half-made binding; a volume that
     * changed since it was chosen is a conflict, never overwritten: two claims cannot both take it.
     */
    async bindClaimAndVolume(req: BindRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const key = `${req.claim.namespace}/${req.claim.name}`;
        const claimObj = await getOrUndefined<PersistentVolumeClaimJson>(claimPath(req.claim.namespace, req.claim.name));
        if (!claimObj || claimObj.metadata?.uid !== req.claim.uid) return { outcome: 'gone', detail: `claim ${key} is gone` };
        let volume = await getOrUndefined<PersistentVolumeJson>(volumePath(req.volume.name));
        if (!volume || volume.metadata?.uid !== req.volume.uid) return { outcome: 'gone', detail: `volume ${req.volume.name} is gone` };

        const pv = structuredClone(volume);
        if (bindVolumeToClaim(pv, claimObj)) {
          // a volume edited since it was chosen may have been taken: decide again
          if (volume.metadata?.resourceVersion !== req.volume.resourceVersion) return { outcome: 'conflict', detail: `volume ${req.volume.name} changed since it was chosen` };
          const r = await guarded(volumePath(req.volume.name), req.volume, (o) => {
            o.spec = pv.spec as Record<string, unknown>;
            o.metadata = { ...o.metadata, annotations: pv.metadata?.annotations };
          }, undefined, volume as KubeObject);
          if ('outcome' in r) return r;
          volume = r.obj as PersistentVolumeJson;
          log.info({ claim: key, volume: req.volume.name, reason: req.reason }, 'claim bound to volume');
        }
        if (volume.status?.phase !== 'Bound') {
          const r = await guarded(volumePath(req.volume.name), guardOf(volume as KubeObject), (o) => {
            o.status = { ...(o.status as object), phase: 'Bound', message: '' };
          }, 'status', volume as KubeObject);
          if ('outcome' in r) return r;
          volume = r.obj as PersistentVolumeJson;
          log.info({ volume: req.volume.name, phase: 'Bound' }, 'volume entered phase');
        }

        let claim = claimObj;
        const edited = structuredClone(claim);
        if (bindClaimToVolume(edited, req.volume.name)) {
          if (claim.spec?.volumeName && claim.spec.volumeName !== req.volume.name) return { outcome: 'conflict', detail: `claim ${key} now names another volume` };
          const r = await guarded(claimPath(req.claim.namespace, req.claim.name), guardOf(claim as KubeObject), (o) => {
            o.spec = edited.spec as Record<string, unknown>;
            o.metadata = { ...o.metadata, annotations: edited.metadata?.annotations };
          }, undefined, claim as KubeObject);
          if ('outcome' in r) return r;
          claim = r.obj as PersistentVolumeClaimJson;
          log.info({ claim: key, volume: req.volume.name }, 'volume bound to claim');
        }
        const withStatus = structuredClone(claim);
        if (setClaimStatus(withStatus, 'Bound', volume)) {
          const r = await guarded(claimPath(req.claim.namespace, req.claim.name), guardOf(claim as KubeObject), (o) => {
            o.status = withStatus.status as Record<string, unknown>;
          }, 'status', claim as KubeObject);
          if ('outcome' in r) return r;
          log.info({ claim: key, phase: 'Bound' }, 'claim entered phase');
        }
        return { outcome: 'done' };
      });
    },

    /** updateClaimStatus without a volume (Pending), or updateClaimStatusWithEvent (Lost). */
    async setClaimPhase(req: ClaimPhaseRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const c = { ...req.claim };
        if (!req.eventsOnChange) for (const e of req.events) claimEvent(c, e);
        const base = local.at(RESOURCES.persistentVolumeClaims, c.namespace, c.name, c) ?? (await getOrUndefined<KubeObject>(claimPath(c.namespace, c.name)));
        if (!base || base.metadata?.uid !== c.uid) return { outcome: 'gone', detail: 'the claim is gone' };
        const edited = structuredClone(base) as PersistentVolumeClaimJson;
        if (!setClaimStatus(edited, req.phase)) return { outcome: 'done' };
        const r = await guarded(claimPath(c.namespace, c.name), c, (o) => {
          o.status = edited.status as Record<string, unknown>;
        }, 'status', base);
        if ('outcome' in r) return r;
        if (req.eventsOnChange) for (const e of req.events) claimEvent({ ...c, resourceVersion: r.obj.metadata?.resourceVersion }, e);
        log.info({ claim: `${c.namespace}/${c.name}`, phase: req.phase, reason: req.reason }, 'claim entered phase');
        return { outcome: 'done' };
      });
    },

    async recordClaimEvents(req: ClaimEventsRequest): Promise<void> {
      for (const e of req.events) claimEvent(req.claim, e);
    },

    /** upstream's assignDefaultStorageClass: a class-less claim gets the default class, retroactively. */
    async assignDefaultClass(req: AssignClassRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const r = await guarded(claimPath(req.claim.namespace, req.claim.name), req.claim, (o) => {
          o.spec = { ...(o.spec as object), storageClassName: req.className };
        }, undefined, local.at(RESOURCES.persistentVolumeClaims, req.claim.namespace, req.claim.name, req.claim));
        if ('outcome' in r) return r;
        log.info({ claim: `${req.claim.namespace}/${req.claim.name}`, storageClassName: req.className, reason: req.reason }, 'assigned the default storage class');
        return { outcome: 'done' };
      });
    },

    async annotateClaim(req: AnnotateClaimRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const r = await annotateClaimObject(req);
        return 'obj' in r ? { outcome: 'done' } : r;
      });
    },

    /** provisionClaimOperationExternal: annotate the claim for the provisioner, then say it waits for it. */
    async externalProvisioning(req: ExternalProvisioningRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const base = local.at(RESOURCES.persistentVolumeClaims, req.claim.namespace, req.claim.name, req.claim)
          ?? (await getOrUndefined<KubeObject>(claimPath(req.claim.namespace, req.claim.name)));
        if (!base || base.metadata?.uid !== req.claim.uid) return { outcome: 'gone', detail: 'the claim is gone' };
        let target = { ...req.claim };
        const change = provisionerAnnotations(claimView(base), req.provisioner);
        if (change) {
          try {
            const r = await annotateClaimObject({ claim: req.claim, ...change, reason: req.reason });
            if (r.outcome !== 'done') {
              claimEvent(req.claim, { type: 'Warning', reason: 'ProvisioningFailed', message: `Error saving claim: ${r.detail}` });
              return r;
            }
            target = { ...target, resourceVersion: r.obj!.metadata?.resourceVersion ?? '' };
          } catch (e) {
            claimEvent(req.claim, { type: 'Warning', reason: 'ProvisioningFailed', message: `Error saving claim: ${(e as Error).message}` });
            throw e;
          }
        }
        claimEvent(target, {
          type: 'Normal',
          reason: 'ExternalProvisioning',
          message: `Waiting for a volume to be created either by the external provisioner '${req.provisioner}' or manually by the system administrator. ` +
            'If volume creation is delayed, please verify that the provisioner is running and correctly registered.',
        });
        return { outcome: 'done' };
      });
    },

    /** A refused in-tree provisioning: the annotations it still sets, its Event, and the scheduler's node dropped. */
    async provisioningFailed(req: ProvisioningFailedRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        let guard: ClaimGuard = req.claim;
        if (req.annotate) {
          const base = local.at(RESOURCES.persistentVolumeClaims, req.claim.namespace, req.claim.name, req.claim)
            ?? (await getOrUndefined<KubeObject>(claimPath(req.claim.namespace, req.claim.name)));
          if (!base || base.metadata?.uid !== req.claim.uid) return { outcome: 'gone', detail: 'the claim is gone' };
          const change = provisionerAnnotations(claimView(base), req.annotate);
          if (change) {
            const r = await annotateClaimObject({ claim: req.claim, ...change, reason: req.reason });
            if (!('obj' in r)) return r;
            guard = { ...guard, resourceVersion: r.obj!.metadata?.resourceVersion ?? '' };
          }
        }
        claimEvent(guard, req.event);
        if (req.rescheduleNode) {
          const r = await annotateClaimObject({ claim: guard, set: {}, remove: [ANN_SELECTED_NODE], reason: 'provisioning failed on the selected node: the scheduler picks again' });
          if (!('obj' in r)) return r;
        }
        return { outcome: 'done' };
      });
    },

    /**
     * The in-tree host-path provisioner (--enable-hostpath-provisioner): a directory under
     * /tmp/hostpath_pv on the manager's host, and a volume pvc-<claim UID> bound to the claim.
     * Development and testing only, as upstream says of its own.
     */
    async provisionHostPath(req: HostPathProvisionRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const key = `${req.claim.namespace}/${req.claim.name}`;
        const base = await getOrUndefined<PersistentVolumeClaimJson>(claimPath(req.claim.namespace, req.claim.name));
        if (!base || base.metadata?.uid !== req.claim.uid) return { outcome: 'gone', detail: `claim ${key} is gone` };
        let claim = base;
        const change = provisionerAnnotations(claimView(base as KubeObject), HOST_PATH_PLUGIN);
        if (change) {
          const r = await annotateClaimObject({ claim: guardClaim(base), ...change, reason: req.reason });
          if (!('obj' in r)) return r;
          claim = r.obj as PersistentVolumeClaimJson;
        }
        if (await getOrUndefined<KubeObject>(volumePath(req.volumeName))) return { outcome: 'done' };
        const path = `/tmp/hostpath_pv/${randomUUID()}`;
        const reclaimPolicy = req.cls.reclaimPolicy ?? 'Delete';
        const pv: PersistentVolumeJson = {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: {
            name: req.volumeName,
            annotations: { 'kubernetes.io/createdby': 'hostpath-dynamic-provisioner', [ANN_BOUND_BY_CONTROLLER]: 'yes', [ANN_DYNAMICALLY_PROVISIONED]: HOST_PATH_PLUGIN },
            ...(reclaimPolicy === 'Delete' ? { finalizers: [FINALIZER_IN_TREE_DELETION] } : {}),
          },
          spec: {
            persistentVolumeReclaimPolicy: reclaimPolicy,
            accessModes: claim.spec?.accessModes?.length ? claim.spec.accessModes : ['ReadWriteOnce'],
            capacity: { storage: String(claim.spec?.resources?.requests?.storage ?? '0') },
            hostPath: { path },
            claimRef: claimReference(claim),
            storageClassName: claimClass(claimView(claim as KubeObject)),
          },
        };
        try {
          await fs.mkdir(path, { recursive: true, mode: 0o750 });
          await rest.request('POST', resourcePath(RESOURCES.persistentVolumes), { body: pv });
        } catch (e) {
          if (!isStatus(e, 409)) {
            claimEvent(guardClaim(claim), { type: 'Warning', reason: 'ProvisioningFailed', message: `Error creating provisioned PV object for claim ${key}: ${(e as Error).message}. Deleting the volume.` });
            await fs.rm(path, { recursive: true, force: true });
            throw e;
          }
        }
        log.info({ claim: key, volume: req.volumeName, path, reason: req.reason }, 'provisioned a host-path volume');
        claimEvent(guardClaim(claim), { type: 'Normal', reason: 'ProvisioningSucceeded', message: `Successfully provisioned volume ${req.volumeName} using ${HOST_PATH_PLUGIN}` });
        return { outcome: 'done' };
      });
    },

    /** Everything upstream's syncVolume reads: the volume and the claim its claimRef names, double-checked on the API. */
    async observeVolume(req: { name: string } & ObserveRequest): Promise<VolumeObservation | undefined> {
      return apiCall(async () => {
        const o = await readVolume(req.name, !!req.fresh);
        if (!o) return undefined;
        const volume = volumeView(o);
        const ref = volume.claimRef;
        if (!ref || ref.uid === '') return { volume };
        let c = req.fresh ? undefined : local.get(RESOURCES.persistentVolumeClaims, ref.namespace, ref.name, CLAIM_FIELDS);
        // a claim made by an external provisioner or binder may not be in the cache yet: ask the API before releasing anything
        const settledPhase = volume.phase === 'Released' || volume.phase === 'Failed';
        if ((!c && !settledPhase) || (c && c.metadata?.uid !== ref.uid) || req.fresh) c = await getOrUndefined<KubeObject>(claimPath(ref.namespace, ref.name));
        const claim = c && c.metadata?.uid === ref.uid ? claimView(c) : undefined;
        return { volume, ...(claim ? { claim } : {}) };
      });
    },

    async annealVolume(req: AnnealVolumeRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const r = await guarded(volumePath(req.volume.name), req.volume, (o) => {
          const ann: Record<string, string> = { ...o.metadata?.annotations };
          if (req.migratedTo === null) delete ann[ANN_MIGRATED_TO];
          else if (req.migratedTo !== undefined) ann[ANN_MIGRATED_TO] = req.migratedTo;
          o.metadata = { ...o.metadata, annotations: Object.keys(ann).length ? ann : undefined, finalizers: req.finalizers.length ? req.finalizers : undefined };
        }, undefined, local.at(RESOURCES.persistentVolumes, '', req.volume.name, req.volume));
        if ('outcome' in r) return r;
        log.info({ volume: req.volume.name, finalizers: req.finalizers, reason: req.reason }, 'annealed volume finalizers and annotations');
        return { outcome: 'done' };
      });
    },

    /** updateVolumePhase, with its Event when the phase changes (updateVolumePhaseWithEvent). */
    async setVolumePhase(req: VolumePhaseRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const r = await guarded(volumePath(req.volume.name), req.volume, (o) => {
          o.status = { ...(o.status as object), phase: req.phase, message: req.message };
        }, 'status', local.at(RESOURCES.persistentVolumes, '', req.volume.name, req.volume));
        if ('outcome' in r) return r;
        if (req.event) volumeEvent({ ...req.volume, resourceVersion: r.obj.metadata?.resourceVersion }, req.event);
        log.info({ volume: req.volume.name, phase: req.phase, reason: req.reason }, 'volume entered phase');
        return { outcome: 'done' };
      });
    },

    async volumeEvents(req: VolumeEventsRequest): Promise<void> {
      volumeEvent(req.volume, req.volumeEvent);
      if (req.claim && req.claimEvent) claimEvent(req.claim, req.claimEvent);
    },

    /** unbindVolume: the binding rolled back, then the volume is Available again. */
    async unbindVolume(req: UnbindVolumeRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        if (req.event) volumeEvent(req.volume, req.event);
        const r = await guarded(volumePath(req.volume.name), req.volume, (o) => unbindVolume(o as PersistentVolumeJson),
          undefined, local.at(RESOURCES.persistentVolumes, '', req.volume.name, req.volume));
        if ('outcome' in r) return r;
        log.info({ volume: req.volume.name, reason: req.reason }, 'rolled back the volume\'s binding');
        const s = await guarded(volumePath(req.volume.name), guardOf(r.obj), (o) => {
          o.status = { ...(o.status as object), phase: 'Available', message: '' };
        }, 'status', r.obj);
        return 'outcome' in s ? s : { outcome: 'done' };
      });
    },

    /**
     * recycleVolumeOperation's start: the volume read again and recycled only if still released
     * and no active pod uses its old claim (unless a new claim of that name exists), then the
     * recycler pod made. A pod already under the name is deleted and the attempt fails, as
     * upstream's does ("old recycler pod found, will retry later").
     */
    async startRecycler(req: StartRecyclerRequest): Promise<StartRecyclerResult> {
      return apiCall(async () => {
        const v = await getOrUndefined<PersistentVolumeJson>(volumePath(req.volume.name));
        if (!v || v.metadata?.uid !== req.volume.uid) return { outcome: 'skip', detail: 'the volume is gone' };
        if (!(await released(v))) return { outcome: 'skip', detail: 'the volume no longer needs recycling' };
        const ref = v.spec!.claimRef!;
        const key = `${ref.namespace}/${ref.name}`;
        const pods = ((await reader.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.pods, ref.namespace ?? ''))).body.items ?? [])
          .filter((p) => podClaimKeys(p).includes(key) && !podTerminated(p)).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).sort();
        const claimExists = !!(await getOrUndefined<KubeObject>(claimPath(ref.namespace ?? '', ref.name ?? '')));
        if (pods.length && !claimExists) return { outcome: 'used', pods };
        const view = volumeView(v as KubeObject);
        const cfg = view.nfs ? recyclers().nfs : recyclers().hostPath;
        const pod = recyclerPod(cfg.template, view, cfg.timing);
        const ns = pod.metadata!.namespace as string;
        const name = pod.metadata!.name as string;
        try {
          const made = (await rest.request<KubeObject>('POST', resourcePath(RESOURCES.pods, ns), { body: pod })).body;
          log.info({ volume: req.volume.name, pod: `${ns}/${name}`, reason: req.reason }, 'recycler pod created');
          return { outcome: 'started', pod: { namespace: ns, name, uid: made.metadata?.uid ?? '' } };
        } catch (e) {
          if (!isStatus(e, 409)) return { outcome: 'failed', message: `unexpected error creating recycler pod:  ${(e as Error).message}` };
          try {
            await rest.request('DELETE', resourcePath(RESOURCES.pods, ns, name));
          } catch (d) {
            if (!isStatus(d, 404)) return { outcome: 'failed', message: `failed to delete old recycler pod ${ns}/${name}: ${(d as Error).message}` };
          }
          return { outcome: 'failed', message: 'old recycler pod found, will retry later' };
        }
      });
    },

    /**
     * waitForPod, one look at a time: the recycler pod's new Events passed on to the volume as
     * RecyclerPod, and once it has succeeded or failed it is deleted.
     */
    async checkRecycler(req: CheckRecyclerRequest): Promise<CheckRecyclerResult> {
      return apiCall(async () => {
        const path = resourcePath(RESOURCES.pods, req.pod.namespace, req.pod.name);
        const selector = encodeURIComponent(`involvedObject.name=${req.pod.name},involvedObject.uid=${req.pod.uid}`);
        const events = (await reader.request<{ items: Array<{ metadata?: { uid?: string }; type?: string; message?: string }> }>(
          'GET', `${resourcePath(RESOURCES.events, req.pod.namespace)}?fieldSelector=${selector}`)).body.items ?? [];
        const seen = new Set(req.seen);
        const forwarded: string[] = [];
        for (const e of events) {
          const uid = e.metadata?.uid ?? '';
          if (!uid || seen.has(uid)) continue;
          forwarded.push(uid);
          volumeEvent(req.volume, { type: e.type === 'Warning' ? 'Warning' : 'Normal', reason: 'RecyclerPod', message: `Recycler pod: ${e.message ?? ''}` });
        }
        const pod = await getOrUndefined<{ metadata?: { uid?: string }; status?: { phase?: string; message?: string } }>(path);
        if (!pod || pod.metadata?.uid !== req.pod.uid) return { state: 'gone', message: 'recycler pod was deleted', forwarded };
        const phase = pod.status?.phase;
        if (phase !== 'Succeeded' && phase !== 'Failed') return { state: 'running', forwarded };
        try {
          await rest.request('DELETE', path, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: req.pod.uid } } });
        } catch (e) {
          if (!isStatus(e, 404, 409)) throw e;
        }
        log.info({ volume: req.volume.name, pod: `${req.pod.namespace}/${req.pod.name}`, phase }, 'recycler pod finished');
        return phase === 'Succeeded'
          ? { state: 'succeeded', forwarded }
          : { state: 'failed', message: pod.status?.message || 'pod failed, pod.Status.Message unknown', forwarded };
      });
    },

    /**
     * deleteVolumeOperation with the host-path deleter: the volume is read again and deleted only
     * if it is still released (its claim gone, replaced, or bound elsewhere); the directory goes
     * first, then the in-tree finalizer, then the volume, under a UID precondition.
     */
    async deleteReleasedVolume(req: DeleteVolumeRequest): Promise<WriteOutcome> {
      return apiCall(async () => {
        const v = await getOrUndefined<PersistentVolumeJson>(volumePath(req.volume.name));
        if (!v || v.metadata?.uid !== req.volume.uid) return { outcome: 'gone', detail: 'the volume is gone' };
        if (!(await released(v))) return { outcome: 'conflict', detail: 'the volume is no longer released' };
        await fs.rm(req.path, { recursive: true, force: true });
        log.info({ volume: req.volume.name, path: req.path, reason: req.reason }, 'volume deleted');
        let current: KubeObject = v as KubeObject;
        if ((v.metadata?.finalizers ?? []).includes(FINALIZER_IN_TREE_DELETION)) {
          const r = await guarded(volumePath(req.volume.name), guardOf(current), (o) => {
            const rest2 = (o.metadata?.finalizers ?? []).filter((f) => f !== FINALIZER_IN_TREE_DELETION);
            o.metadata = { ...o.metadata, finalizers: rest2.length ? rest2 : undefined };
          }, undefined, current);
          if ('outcome' in r) return r;
          current = r.obj;
        }
        try {
          await rest.request('DELETE', volumePath(req.volume.name), { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: req.volume.uid } } });
        } catch (e) {
          if (!isStatus(e, 404, 409)) throw e;
        }
        return { outcome: 'done' };
      });
    },
  };
}

function guardClaim(c: PersistentVolumeClaimJson): ClaimGuard {
  return { namespace: c.metadata?.namespace ?? '', name: c.metadata?.name ?? '', uid: c.metadata?.uid ?? '', resourceVersion: c.metadata?.resourceVersion ?? '' };
}

export type PvBinderActivities = ReturnType<typeof createPvBinderActivities>;
