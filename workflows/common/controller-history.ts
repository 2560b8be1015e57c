/*
 * ControllerRevision history, as upstream's pkg/controller/history and the DaemonSet and
 * StatefulSet controllers keep it: a revision is a snapshot of the workload's template under a
 * name made from a hash, numbered one past the newest; `kubectl rollout history` lists them and
 * `kubectl rollout undo` applies one's data as a patch. Pure functions, for workflow code.
 */
import { fnv132Bytes, safeEncodeString } from './hash';
import type { LabelSelector, OwnerRef, PodTemplate } from './meta';
import { utf8Bytes } from './utf8';

/** the label upstream's history library puts on a revision: the hash its name ends in */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
/** the label DaemonSets and StatefulSets put on their revisions and pods (apps/v1 DefaultDaemonSetUniqueLabelKey) */
export const REVISION_HASH_LABEL = 'controller-revision-hash';

/**
 * a revision's name: `<prefix>-<hash>`, the prefix cut at 223 bytes so the name stays within 253
 * (object names are ASCII, so bytes and characters agree)
 */
export function revisionName(prefix: string, hash: string): string {
  return `${prefix.slice(0, 223)}-${hash}`;
}

/**
 * history.HashControllerRevision: FNV-1 (32 bits) over the revision's raw data, then the decimal
 * text of `probe` (a collision count) when given, spelled in the generated-name alphabet.
 */
export function hashRevisionData(raw: string, probe?: number | null): string {
  const bytes = utf8Bytes(raw);
  if (probe !== undefined && probe !== null) bytes.push(...utf8Bytes(String(probe)));
  return safeEncodeString(String(fnv132Bytes(bytes)));
}

/** Go's encoding/json escapes: HTML-sensitive characters and the line separators included. */
const GO_ESCAPES: Record<string, string> = {
  '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f',
  '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029',
};

function goString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const e = GO_ESCAPES[ch];
    if (e) out += e;
    else if (ch < ' ') out += `\\u00${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's string order: by UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  const x = utf8Bytes(a);
  const y = utf8Bytes(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/**
 * encoding/json's Marshal of a value decoded into interface{}: objects with sorted keys, no
 * spaces, Go's string escapes, numbers as float64 prints them. Revision data is compared byte by
 * byte, so it must be this exact text.
 */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  // float64 as Go prints it: JavaScript's shortest form, exponent below 1e-6 and from 1e21, agrees
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort(byteOrder).map((k) => `${goString(k)}:${goJson(o[k])}`).join(',')}}`;
}

/**
 * The data of a DaemonSet's or StatefulSet's revision (both controllers' getPatch): a strategic
 * merge patch that replaces the workload's template with this one. `template` is spec.template as
 * the API serves it.
 */
export function templateRevisionData(template: Record<string, unknown>): string {
  return goJson({ spec: { template: { ...template, $patch: 'replace' } } });
}

/** The DaemonSet's revision data (the daemon controller's getPatch). */
export const daemonSetRevisionData = templateRevisionData;
/** The StatefulSet's revision data (the statefulset controller's getPatch). */
export const statefulSetRevisionData = templateRevisionData;

/**
 * The template a revision holds (the inverse of templateRevisionData), as ApplyRevision yields it:
 * the patch replaces the template whole. Undefined when the data is not such a patch.
 */
export function revisionTemplate(data: string): Record<string, unknown> | undefined {
  try {
    const t = (JSON.parse(data) as { spec?: { template?: Record<string, unknown> } }).spec?.template;
    if (!t || typeof t !== 'object') return undefined;
    const { $patch: _replace, ...template } = t;
    return template;
  } catch {
    return undefined;
  }
}

/** What the history functions read of a ControllerRevision. */
export interface RevisionView {
  name: string;
  revision: number;
  creationTimestamp?: string;
  /** its data as Go would marshal it (goJson of the object the API returns) */
  data: string;
}

/** What the DaemonSet and StatefulSet controllers read of a ControllerRevision they own or may adopt. */
export interface ControllerRevisionView extends RevisionView {
  uid: string;
  labels: Record<string, string>;
  controllerRef?: OwnerRef;
}

/** What the DaemonSet and StatefulSet views share: a workload that keeps ControllerRevision history. */
export interface RevisionedWorkloadView {
  namespace: string;
  name: string;
  uid: string;
  annotations?: Record<string, string>;
  resourceVersion: string;
  generation: number;
  deleting: boolean;
  selector: LabelSelector | null;
  /** spec.template as the API serves it: revision data and hashes are made from exactly this */
  template: PodTemplate & Record<string, unknown>;
  revisionHistoryLimit: number;
  minReadySeconds: number;
}

/** Upstream's byRevision order: by revision, then creation time, then name. */
export function sortRevisions<T extends RevisionView>(revisions: readonly T[]): T[] {
  return [...revisions].sort((a, b) => a.revision - b.revision
    || Date.parse(a.creationTimestamp ?? '') - Date.parse(b.creationTimestamp ?? '') || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The number a new revision takes: one past the newest (1 for the first). */
export function nextRevision(revisions: readonly RevisionView[]): number {
  return revisions.reduce((m, r) => Math.max(m, r.revision), 0) + 1;
}

/** The revisions whose data equals `data`, in the order given (history.FindEqualRevisions). */
export function equalRevisions<T extends RevisionView>(revisions: readonly T[], data: string): T[] {
  return revisions.filter((r) => r.data === data);
}
