/*
 * A StatefulSet's identities, storage and claim ownership, as upstream's stateful_set_utils.go
 * defines them: pods named `<set>-<ordinal>` with their hostname, subdomain and identity labels,
 * claims named `<template>-<set>-<ordinal>`, and which owner references the retention policy puts
 * on a claim. Pure functions, for workflow and activity code alike.
 */
import { REVISION_HASH_LABEL } from '../common/controller-history';
import type { ControlledPodManifest, OwnerRef } from '../common/meta';
import { parseTime } from '../replicaset/logic';
import type { ClaimTemplate, StatefulClaimView, StatefulPodView, StatefulSetView } from './types';

export const CONTROLLER = 'statefulset';
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
export { REVISION_HASH_LABEL };

const MAX_INT32 = 2 ** 31 - 1;

/** getParentNameAndOrdinal: `<parent>-<digits>`; ordinal -1 when the name has no ordinal (or one beyond int32). */
export function parentAndOrdinal(name: string): { parent: string; ordinal: number } {
  const m = /^(.*)-([0-9]+)$/s.exec(name);
  if (!m) return { parent: '', ordinal: -1 };
  const n = Number(m[2]);
  return { parent: m[1], ordinal: Number.isSafeInteger(n) && n <= MAX_INT32 ? n : -1 };
}

export const ordinalOf = (name: string) => parentAndOrdinal(name).ordinal;
export const startOrdinal = (set: Pick<StatefulSetView, 'ordinalsStart'>) => set.ordinalsStart;
export const endOrdinal = (set: Pick<StatefulSetView, 'ordinalsStart' | 'replicas'>) => set.ordinalsStart + set.replicas - 1;
export function inOrdinalRange(name: string, set: Pick<StatefulSetView, 'ordinalsStart' | 'replicas'>): boolean {
  const o = ordinalOf(name);
  return o >= startOrdinal(set) && o <= endOrdinal(set);
}
export const statefulPodName = (setName: string, ordinal: number) => `${setName}-${ordinal}`;
export const claimName = (templateName: string, setName: string, ordinal: number) => `${templateName}-${setName}-${ordinal}`;
export const isMemberOf = (set: Pick<StatefulSetView, 'name'>, podName: string) => parentAndOrdinal(podName).parent === set.name;

/** the names of the set's claim templates, in spec order */
export const templateNames = (set: Pick<StatefulSetView, 'volumeClaimTemplates'>) => set.volumeClaimTemplates.map((t) => t.metadata?.name ?? '');

/** identityMatches: the pod's name, namespace and pod-name label are its ordinal's. */
export function identityMatches(set: Pick<StatefulSetView, 'name' | 'namespace'>, pod: Pick<StatefulPodView, 'name' | 'namespace' | 'labels'>): boolean {
  const { parent, ordinal } = parentAndOrdinal(pod.name);
  return ordinal >= 0 && parent === set.name && pod.name === statefulPodName(set.name, ordinal) && pod.namespace === set.namespace && pod.labels[POD_NAME_LABEL] === pod.name;
}

/** storageMatches: every claim template has its volume, naming this ordinal's claim. */
export function storageMatches(set: Pick<StatefulSetView, 'name' | 'volumeClaimTemplates'>, pod: Pick<StatefulPodView, 'name' | 'volumes'>): boolean {
  const ordinal = ordinalOf(pod.name);
  if (ordinal < 0) return false;
  return templateNames(set).every((t) => pod.volumes[t] === claimName(t, set.name, ordinal));
}

export const isCreated = (p: Pick<StatefulPodView, 'phase'>) => p.phase !== '';
export const isPending = (p: Pick<StatefulPodView, 'phase'>) => p.phase === 'Pending';
export const isFailed = (p: Pick<StatefulPodView, 'phase'>) => p.phase === 'Failed';
export const isSucceeded = (p: Pick<StatefulPodView, 'phase'>) => p.phase === 'Succeeded';
export const isTerminating = (p: Pick<StatefulPodView, 'deleting'>) => p.deleting;
export const isRunningAndReady = (p: Pick<StatefulPodView, 'phase' | 'ready'>) => p.phase === 'Running' && p.ready;

/** podutil.IsPodAvailable: Ready, for at least minReadySeconds. */
export function isAvailable(p: Pick<StatefulPodView, 'ready' | 'readySince'>, minReadySeconds: number, nowMs: number): boolean {
  if (!p.ready) return false;
  if (minReadySeconds === 0) return true;
  const since = parseTime(p.readySince);
  return since !== undefined && since + minReadySeconds * 1000 <= nowMs;
}

export const isUnavailable = (p: StatefulPodView, minReadySeconds: number, nowMs: number) => !isAvailable(p, minReadySeconds, nowMs) || isTerminating(p);
export const podRevision = (p: Pick<StatefulPodView, 'labels'>) => p.labels[REVISION_HASH_LABEL] ?? '';
export const allowsBurst = (set: Pick<StatefulSetView, 'podManagementPolicy'>) => set.podManagementPolicy === 'Parallel';

export function setControllerRef(set: Pick<StatefulSetView, 'name' | 'uid'>): OwnerRef {
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', name: set.name, uid: set.uid, controller: true, blockOwnerDeletion: true };
}

export function podControllerRef(pod: { name: string; uid: string }): OwnerRef {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true, blockOwnerDeletion: true };
}

/** A pod as far as claim ownership goes: its name, and its UID once it exists. */
export interface ClaimPod {
  name: string;
  uid: string;
}

/** What the retention rules read of the set. */
export type RetentionSet = Pick<StatefulSetView, 'name' | 'uid' | 'retention' | 'ordinalsStart' | 'replicas'>;

const matchesSetRef = (r: OwnerRef, set: RetentionSet) => r.apiVersion === 'apps/v1' && r.kind === 'StatefulSet' && r.name === set.name;
const matchesPodRef = (r: OwnerRef, pod: ClaimPod) => r.apiVersion === 'v1' && r.kind === 'Pod' && r.name === pod.name;
const hasOwnerRef = (refs: readonly OwnerRef[], uid: string) => refs.some((r) => r.uid === uid);

/** hasStaleOwnerRef: the first reference naming the object carries another UID. */
export function hasStaleOwnerRef(refs: readonly OwnerRef[], match: (r: OwnerRef) => boolean, uid: string): boolean {
  const r = refs.find(match);
  return !!r && r.uid !== uid;
}

const bothRetain = (set: RetentionSet) => set.retention.whenScaled === 'Retain' && set.retention.whenDeleted === 'Retain';

/** hasUnexpectedController: another controller (or another incarnation of set or pod) controls the claim. */
export function hasUnexpectedController(refs: readonly OwnerRef[], set: RetentionSet, pod: ClaimPod): boolean {
  if (bothRetain(set)) return false;
  for (const r of refs) {
    if (matchesSetRef(r, set)) {
      if (r.uid !== set.uid) return true;
      continue;
    }
    if (matchesPodRef(r, pod)) {
      if (r.uid !== pod.uid) return true;
      continue;
    }
    if (r.controller) return true;
  }
  return false;
}

/** hasNonControllerOwner: set or pod owns the claim without being its controller. */
export function hasNonControllerOwner(refs: readonly OwnerRef[], set: RetentionSet, pod: ClaimPod): boolean {
  return refs.some((r) => (r.uid === set.uid || r.uid === pod.uid) && !r.controller);
}

/** isClaimOwnerUpToDate: the claim's references are what the retention policy wants for this pod. */
export function isClaimOwnerUpToDate(refs: readonly OwnerRef[], set: RetentionSet, pod: ClaimPod): boolean {
  if (hasStaleOwnerRef(refs, (r) => matchesSetRef(r, set), set.uid) || hasStaleOwnerRef(refs, (r) => matchesPodRef(r, pod), pod.uid)) return true;
  if (hasUnexpectedController(refs, set, pod)) return !(hasOwnerRef(refs, set.uid) || hasOwnerRef(refs, pod.uid));
  if (hasNonControllerOwner(refs, set, pod)) return false;
  const { whenScaled, whenDeleted } = set.retention;
  const scaledDown = !inOrdinalRange(pod.name, set);
  if (whenScaled === 'Delete' && whenDeleted === 'Delete') {
    return scaledDown !== hasOwnerRef(refs, set.uid) && scaledDown === hasOwnerRef(refs, pod.uid);
  }
  if (whenScaled === 'Delete') return !hasOwnerRef(refs, set.uid) && scaledDown === hasOwnerRef(refs, pod.uid);
  if (whenDeleted === 'Delete') return hasOwnerRef(refs, set.uid) && !hasOwnerRef(refs, pod.uid);
  return !hasOwnerRef(refs, set.uid) && !hasOwnerRef(refs, pod.uid);
}

/** updateClaimOwnerRefForSetAndPod: the claim's references as the retention policy wants them. */
export function claimOwnerRefsFor(refs: readonly OwnerRef[], set: RetentionSet, pod: ClaimPod): OwnerRef[] {
  const unexpected = hasUnexpectedController(refs, set, pod);
  let out = refs.filter((r) => !matchesSetRef(r, set) && !matchesPodRef(r, pod));
  if (unexpected) return out;
  const add = (ref: OwnerRef) => {
    if (!out.some((r) => r.uid === ref.uid)) out = [...out, ref];
  };
  const { whenScaled, whenDeleted } = set.retention;
  const scaledDown = !inOrdinalRange(pod.name, set);
  if (whenScaled === 'Delete') {
    if (scaledDown) add(podControllerRef(pod));
    else if (whenDeleted === 'Delete') add(setControllerRef(set));
  } else if (whenDeleted === 'Delete') {
    add(setControllerRef(set));
  }
  return out;
}

/** A claim as upstream's getPersistentVolumeClaims makes it for one ordinal. */
export interface ClaimManifest {
  apiVersion: 'v1';
  kind: 'PersistentVolumeClaim';
  metadata: { name: string; namespace: string; labels?: Record<string, string> } & Record<string, unknown>;
  spec: Record<string, unknown>;
}

/** getPersistentVolumeClaims: each template's claim for this ordinal, with the selector's match labels. */
export function claimManifests(set: Pick<StatefulSetView, 'name' | 'namespace' | 'volumeClaimTemplates' | 'selector'>, ordinal: number): ClaimManifest[] {
  return set.volumeClaimTemplates.map((t: ClaimTemplate) => {
    const copy = JSON.parse(JSON.stringify(t)) as ClaimTemplate;
    const meta = { ...(copy.metadata ?? {}) };
    const matchLabels = set.selector?.matchLabels ?? undefined;
    const labels = meta.labels ? { ...meta.labels, ...(matchLabels ?? {}) } : matchLabels ? { ...matchLabels } : undefined;
    const { status: _status, apiVersion: _v, kind: _k, ...rest } = copy;
    return {
      ...rest,
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { ...meta, name: claimName(meta.name ?? '', set.name, ordinal), namespace: set.namespace, ...(labels ? { labels } : {}) },
      spec: copy.spec ?? {},
    } as ClaimManifest;
  });
}

export type StatefulPodManifest = ControlledPodManifest<{ generateName: string }>;

/** updateStorage: a claim volume per template (in template order), then the template's other volumes. */
export function storageVolumes(set: Pick<StatefulSetView, 'name' | 'volumeClaimTemplates'>, ordinal: number, current: ReadonlyArray<{ name: string }>): Array<Record<string, unknown>> {
  const names = templateNames(set);
  return [
    ...names.map((n) => ({ name: n, persistentVolumeClaim: { claimName: claimName(n, set.name, ordinal) } })),
    ...current.filter((v) => !names.includes(v.name)),
  ];
}

/**
 * newStatefulSetPod with setPodRevision: the template (from the revision the ordinal gets), the
 * controller reference, name and generateName, hostname and subdomain, identity labels, claim
 * volumes and the revision label.
 */
export function statefulPodManifest(set: Pick<StatefulSetView, 'namespace' | 'name' | 'uid' | 'serviceName' | 'volumeClaimTemplates'>,
  template: Record<string, unknown>, revision: string, ordinal: number): StatefulPodManifest {
  const t = JSON.parse(JSON.stringify(template)) as { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] }; spec?: Record<string, unknown> };
  const meta = t.metadata ?? {};
  const name = statefulPodName(set.name, ordinal);
  const spec: Record<string, unknown> = { ...(t.spec ?? {}) };
  spec.hostname = name;
  if (set.serviceName) spec.subdomain = set.serviceName;
  else delete spec.subdomain;
  const volumes = storageVolumes(set, ordinal, (spec.volumes as Array<{ name: string }> | undefined) ?? []);
  if (volumes.length) spec.volumes = volumes;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${set.name}-`,
      namespace: set.namespace,
      labels: { ...(meta.labels ?? {}), [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [REVISION_HASH_LABEL]: revision },
      ...(meta.annotations && Object.keys(meta.annotations).length ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers?.length ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [setControllerRef(set)],
    },
    spec,
  };
}

/** The claims of one ordinal as observed, by template name (absent ones left out). */
export function claimsOf(set: Pick<StatefulSetView, 'name' | 'volumeClaimTemplates'>, ordinal: number, claims: ReadonlyMap<string, StatefulClaimView>): Array<{ template: string; name: string; claim?: StatefulClaimView }> {
  return templateNames(set).map((t) => {
    const name = claimName(t, set.name, ordinal);
    return { template: t, name, claim: claims.get(name) };
  });
}
