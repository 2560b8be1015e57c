/**
 * What `temporal-kcm why` may show of a value it found in a workflow history. Histories carry whole
 * payloads, Secret data and tokens included, so every value on its way to the output goes through here:
 * keys that name credentials or Secret bytes, token-like strings and long opaque blobs become placeholders,
 * UIDs are shortened, and everything is clipped to one short line.
 */

/** No value longer than this reaches the output; long opaque strings are not shown at all. */
export const MAX_VALUE_CHARS = 200;
const FIELD_CHARS = 60;
const SUMMARY_CHARS = 160;

const SENSITIVE_KEY = /token|password|passwd|credential|bearer|private|^data$|^stringData$/i;
const TOKEN_LIKE = /eyJ[\w-]{8,}\.[\w-]{8,}|-----BEGIN|\bBearer\s+\S{8,}/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function clip(text: string, max = MAX_VALUE_CHARS): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** A string fit for display, or a placeholder when it could be a credential or an opaque blob. */
export function safeString(value: string, key = '', max = FIELD_CHARS): string {
  if (SENSITIVE_KEY.test(key) || TOKEN_LIKE.test(value)) return '<redacted>';
  // a UID is recognisable by its first block; the header carries the object's full UID
  if (UUID.test(value)) return `${value.slice(0, 8)}…`;
  if (value.length > 100 && !/\s/.test(value)) return `<${value.length} chars>`;
  return clip(value, max);
}

/** A decoded JSON object (not an array): the only kind of value the summaries walk into. */
export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Scalar fields that tell one version of an object from another in a signal or write. */
const REF_FIELDS = ['replicas', 'parallelism', 'completions', 'phase', 'generation', 'resourceVersion'] as const;
const REF_LABEL: Record<string, string> = { resourceVersion: 'rv', generation: 'gen' };

/** `web-6f987 replicas=2 rv=11256`, for anything that looks like a Kubernetes object or ref. */
function describeRef(v: Obj): string {
  const parts: string[] = [];
  if (typeof v.type === 'string') parts.push(safeString(v.type));
  if (typeof v.name === 'string') parts.push(safeString(v.name));
  else if (typeof v.resource === 'string') parts.push(`${typeof v.group === 'string' && v.group ? `${v.group}/` : ''}${safeString(v.resource)}`);
  else if (typeof v.uid === 'string') parts.push(`uid ${v.uid.slice(0, 8)}`);
  for (const f of REF_FIELDS) {
    const x = v[f];
    if (typeof x === 'number' || (typeof x === 'string' && x !== '')) parts.push(`${REF_LABEL[f] ?? f}=${safeString(String(x), f, 24)}`);
  }
  if (v.suspend === true) parts.push('suspended');
  if (typeof v.deletionTimestamp === 'string') parts.push('deleting');
  if (typeof v.message === 'string') parts.push(safeString(v.message, 'message', 80));
  return parts.join(' ');
}

const looksLikeRef = (v: Obj) => ['name', 'uid', 'type', 'resource'].some((k) => typeof v[k] === 'string');

function itemLabel(item: unknown): string | undefined {
  if (typeof item === 'string') return UUID.test(item) ? undefined : safeString(item, '', 40);
  if (isObj(item)) {
    if (typeof item.name === 'string') return safeString(item.name, '', 40);
    if (isObj(item.pod) && typeof item.pod.name === 'string') return safeString(item.pod.name, '', 40);
  }
  return undefined;
}

/** `pods 3 (a, b, c)`: the count always, a few names when the items have names. */
function describeList(key: string, items: unknown[]): string {
  const labels = items.slice(0, 3).map(itemLabel);
  const named = labels.every((l) => l !== undefined) && items.length > 0;
  let text = `${key} ${items.length}`;
  if (named) text += ` (${labels.join(', ')}${items.length > 3 ? ', …' : ''})`;
  // a per-item write failure is the answer to "why" more often than not: show the first one
  const firstError = items.find((i) => isObj(i) && typeof i.message === 'string') as Obj | undefined;
  if (firstError) text += `: ${safeString(String(firstError.message), 'message', 100)}`;
  return text;
}

/** `status{replicas=4, readyReplicas=3, conditions 2}`: a plain nested object, its first few fields. */
function describeNested(key: string, v: Obj): string {
  const shown: string[] = [];
  const entries = Object.entries(v).filter(([, x]) => x !== undefined && x !== null);
  for (const [k, x] of entries.slice(0, 5)) {
    if (typeof x === 'number' || typeof x === 'boolean') shown.push(`${k}=${x}`);
    else if (typeof x === 'string') shown.push(`${k}=${safeString(x, k, 30)}`);
    else if (Array.isArray(x)) shown.push(`${k} ${x.length}`);
    else shown.push(k);
  }
  return `${key}{${shown.join(', ')}${entries.length > 5 ? ', …' : ''}}`;
}

/** `owner churn rv=7064 replicas=1, podsDeleted 3, relist`, at most SUMMARY_CHARS long. */
export function summarizeFields(value: unknown, hideWhenTrue: ReadonlySet<string> = new Set()): string {
  if (value === undefined || value === null) return '';
  if (!isObj(value)) {
    if (Array.isArray(value)) return describeList('items', value);
    return typeof value === 'string' ? safeString(value) : String(value);
  }
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if ((v === true && hideWhenTrue.has(k)) || v === undefined || v === null) continue;
    if (Array.isArray(v)) {
      if (v.length === 0 && /^(failed|errors|skipped|gone|unknown)$/.test(k)) continue;
      parts.push(describeList(k, v));
    } else if (typeof v === 'boolean') parts.push(v ? k : `${k}=false`);
    else if (typeof v === 'number') parts.push(`${k}=${v}`);
    else if (typeof v === 'string') {
      if (v !== '') parts.push(`${k}=${safeString(v, k)}`);
    }
    else if (isObj(v)) {
      if (looksLikeRef(v)) parts.push(`${k} ${describeRef(v)}`.trimEnd());
      else if (Object.keys(v).length) parts.push(describeNested(k, v));
    }
  }
  return clip(parts.join(', '), SUMMARY_CHARS);
}
