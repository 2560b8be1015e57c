/**
 * Upstream's legacy service account token cleaner, as pure decisions. Once a day (and at start) it
 * looks at every auto-generated legacy token Secret (type kubernetes.io/service-account-token)
 * that its ServiceAccount still lists, that no pod in its namespace uses, that was created more
 * than the clean-up period ago and not used (label kubernetes.io/legacy-token-last-used, a UTC
 * date) within it: the first time it labels the Secret kubernetes.io/legacy-token-invalid-since
 * with today's date, and once that date too is older than the period, it deletes the Secret.
 * Nothing happens until the API server has tracked token use for at least the period (the
 * `since` date in kube-system/kube-apiserver-legacy-service-account-token-tracking, plus a day).
 */

export const CONTROLLER = 'legacy-service-account-token-cleaner';
export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const LAST_USED_LABEL = 'kubernetes.io/legacy-token-last-used';
export const INVALID_SINCE_LABEL = 'kubernetes.io/legacy-token-invalid-since';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
export const TRACKING_CONFIGMAP = 'kube-apiserver-legacy-service-account-token-tracking';
export const TRACKING_KEY = 'since';
/** upstream's DefaultCleanerSyncInterval: the pass runs once a day */
export const SYNC_INTERVAL_MS = 24 * 3600_000;
const DAY_MS = 24 * 3600_000;

/** Go's "2006-01-02" layout of a UTC time. */
export function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Go's time.Parse("2006-01-02", s): the UTC midnight of that date; undefined where Go fails. */
export function parseDate(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return undefined;
  const [year, month, day] = m.slice(1).map(Number);
  if (month < 1 || month > 12 || day < 1) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  // a day past the month's end rolls over in JS; Go rejects it
  if (d.getUTCDate() !== day) return undefined;
  return d.getTime();
}

/**
 * Upstream's latestPossibleTrackedSinceTime: the day after the tracking ConfigMap's `since` date
 * (token use may have gone unrecorded on that day); an error when the key is missing or unparseable.
 */
export function trackedSince(since: string | undefined): { ok: true; atMs: number } | { ok: false; error: string } {
  if (since === undefined) return { ok: false, error: 'configMap does not have since label' };
  const t = parseDate(since);
  if (t === undefined) return { ok: false, error: `error parsing trackedSince time: ${since}` };
  return { ok: true, atMs: t + DAY_MS };
}

/** Whether a pass may look at tokens at all: token use has been tracked for the whole period. */
export function trackedLongEnough(trackedSinceMs: number, nowMs: number, periodMs: number): boolean {
  return !(nowMs < trackedSinceMs + periodMs);
}

/** What the cleaner reads of a token Secret: metadata only, never its data. */
export interface LegacyTokenView {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** RFC 3339 */
  creationTimestamp: string;
  deleting: boolean;
  serviceAccountName?: string;
  serviceAccountUid?: string;
  lastUsed?: string;
  /** the invalid-since label as found, even when it does not parse */
  invalidSince?: string;
}

/** A ServiceAccount as the cleaner reads it. */
export interface AccountView {
  uid: string;
  /** the names in its `secrets` list */
  secrets: string[];
}

/** The dates a pass compares with, taken once per pass as upstream does. */
export interface PassClock {
  nowMs: number;
  /** tokens created on or after this (RFC 3339 compare by ms) are kept */
  preserveCreatedOnOrAfterMs: number;
  /** a last-used or invalid-since date on or after this is recent: kept */
  preserveUsedOnOrAfter: string;
  /** the date an invalid-since label gets */
  today: string;
}

export function passClock(nowMs: number, periodMs: number): PassClock {
  return {
    nowMs,
    preserveCreatedOnOrAfterMs: nowMs - periodMs,
    preserveUsedOnOrAfter: formatDate(nowMs - periodMs),
    today: formatDate(nowMs),
  };
}

export type Screen =
  | { kind: 'skip'; why: 'recently created' | 'being deleted' | 'recently used' | 'unparseable last-used' }
  | { kind: 'candidate' };

/** The checks upstream makes on the Secret alone, before it looks up the account and the pods. */
export function screenToken(s: LegacyTokenView, clock: PassClock): Screen {
  const created = Date.parse(s.creationTimestamp);
  if (!(created < clock.preserveCreatedOnOrAfterMs)) return { kind: 'skip', why: 'recently created' };
  if (s.deleting) return { kind: 'skip', why: 'being deleted' };
  if (s.lastUsed !== undefined) {
    if (parseDate(s.lastUsed) === undefined) return { kind: 'skip', why: 'unparseable last-used' };
    if (s.lastUsed >= clock.preserveUsedOnOrAfter) return { kind: 'skip', why: 'recently used' };
  }
  return { kind: 'candidate' };
}

/**
 * Upstream's getServiceAccount: the account the annotation names, when it exists and its UID
 * matches the UID annotation (an absent UID annotation matches any).
 */
export function owningAccount(s: LegacyTokenView, account: AccountView | undefined): AccountView | undefined {
  if (!s.serviceAccountName || !account) return undefined;
  if (!s.serviceAccountUid || s.serviceAccountUid === account.uid) return account;
  return undefined;
}

export type LegacyTokenAction =
  | { kind: 'label'; namespace: string; name: string; uid: string; invalidSince: string }
  | { kind: 'delete'; namespace: string; name: string; uid: string; resourceVersion: string; lastUsed?: string; invalidSince: string; serviceAccountName: string };

export type LegacyTokenDecision =
  | { kind: 'skip'; why: string }
  | { kind: 'act'; action: LegacyTokenAction };

/**
 * The rest of upstream's evaluation of one candidate: kept unless its account lists it and no pod
 * of the namespace uses it; then labelled invalid today when it has no parseable invalid-since
 * date, kept while that date is recent, and deleted (at this resourceVersion) once it is not.
 */
export function decideLegacyToken(s: LegacyTokenView, account: AccountView | undefined, mounted: boolean, clock: PassClock): LegacyTokenDecision {
  const screen = screenToken(s, clock);
  if (screen.kind === 'skip') return { kind: 'skip', why: screen.why };
  const sa = owningAccount(s, account);
  if (!sa || !sa.secrets.includes(s.name)) return { kind: 'skip', why: 'not referenced by its service account' };
  if (mounted) return { kind: 'skip', why: 'used by a pod' };
  if (s.invalidSince === undefined || parseDate(s.invalidSince) === undefined) {
    return { kind: 'act', action: { kind: 'label', namespace: s.namespace, name: s.name, uid: s.uid, invalidSince: clock.today } };
  }
  if (s.invalidSince >= clock.preserveUsedOnOrAfter) return { kind: 'skip', why: 'recently invalidated' };
  return {
    kind: 'act',
    action: {
      kind: 'delete', namespace: s.namespace, name: s.name, uid: s.uid, resourceVersion: s.resourceVersion,
      ...(s.lastUsed !== undefined ? { lastUsed: s.lastUsed } : {}), invalidSince: s.invalidSince, serviceAccountName: s.serviceAccountName ?? '',
    },
  };
}

/** The pod fields upstream's VisitPodSecretNames reads. */
export interface PodSecretRefs {
  spec?: {
    imagePullSecrets?: Array<{ name?: string }> | null;
    containers?: ContainerSecretRefs[] | null;
    initContainers?: ContainerSecretRefs[] | null;
    ephemeralContainers?: ContainerSecretRefs[] | null;
    volumes?: VolumeSecretRefs[] | null;
  };
}

interface NameRef {
  name?: string;
}

export interface ContainerSecretRefs {
  envFrom?: Array<{ secretRef?: NameRef | null }> | null;
  env?: Array<{ valueFrom?: { secretKeyRef?: NameRef | null } | null }> | null;
}

export interface VolumeSecretRefs {
  azureFile?: { secretName?: string } | null;
  cephfs?: { secretRef?: NameRef | null } | null;
  cinder?: { secretRef?: NameRef | null } | null;
  flexVolume?: { secretRef?: NameRef | null } | null;
  projected?: { sources?: Array<{ secret?: NameRef | null }> | null } | null;
  rbd?: { secretRef?: NameRef | null } | null;
  secret?: { secretName?: string } | null;
  scaleIO?: { secretRef?: NameRef | null } | null;
  iscsi?: { secretRef?: NameRef | null } | null;
  storageos?: { secretRef?: NameRef | null } | null;
  csi?: { nodePublishSecretRef?: NameRef | null } | null;
}

/**
 * Upstream's VisitPodSecretNames: image pull secrets, every container's env and envFrom secret
 * references, and each volume's secret (the first volume source set decides, in upstream's order).
 */
export function podSecretNames(pod: PodSecretRefs): Set<string> {
  const out = new Set<string>();
  const add = (n: string | undefined) => {
    if (n) out.add(n);
  };
  const spec = pod.spec ?? {};
  for (const r of spec.imagePullSecrets ?? []) add(r.name);
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])]) {
    for (const e of c.envFrom ?? []) add(e.secretRef?.name);
    for (const e of c.env ?? []) add(e.valueFrom?.secretKeyRef?.name);
  }
  for (const v of spec.volumes ?? []) {
    if (v.azureFile) add(v.azureFile.secretName);
    else if (v.cephfs) add(v.cephfs.secretRef?.name);
    else if (v.cinder) add(v.cinder.secretRef?.name);
    else if (v.flexVolume) add(v.flexVolume.secretRef?.name);
    else if (v.projected) for (const s of v.projected.sources ?? []) add(s.secret?.name);
    else if (v.rbd) add(v.rbd.secretRef?.name);
    else if (v.secret) add(v.secret.secretName);
    else if (v.scaleIO) add(v.scaleIO.secretRef?.name);
    else if (v.iscsi) add(v.iscsi.secretRef?.name);
    else if (v.storageos) add(v.storageos.secretRef?.name);
    else if (v.csi) add(v.csi.nodePublishSecretRef?.name);
  }
  return out;
}
