import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/projections';
import { normalizeContent, normalizeString } from '../../workflows/shadow/compare';
import type { ShadowEntry, ShadowSide, ShadowWriteKind } from '../../workflows/shadow/types';

/*
 * A write as the shadow ledger compares it, built the same way from either side's object: ours
 * from the dry run's answer (the object as our write would have left it), theirs from the object
 * the watch saw after the cluster's manager wrote it.
 */

type Meta = NonNullable<KubeObject['metadata']>;
type Obj = KubeObject & Record<string, unknown>;

/** Secret values never leave the process: a Secret's data is compared by the SHA-256 of each value. */
function digested(data: unknown): unknown {
  if (!data || typeof data !== 'object') return data;
  return Object.fromEntries(Object.entries(data as Record<string, string>).map(([k, v]) => [k, v ? createHash('sha256').update(Buffer.from(v, 'base64')).digest('hex') : '']));
}

/** What a write to the object itself decides: its labels, annotations, owners, finalizers, and every field beside metadata and status (spec, data, subsets, ...). */
function mainContent(resource: string, o: Obj): Record<string, unknown> {
  const m: Meta = o.metadata ?? {};
  const out: Record<string, unknown> = {
    metadata: { labels: m.labels, annotations: m.annotations, ownerReferences: m.ownerReferences, finalizers: m.finalizers },
  };
  for (const [k, v] of Object.entries(o)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata' || k === 'status') continue;
    out[k] = resource === 'secrets' && (k === 'data' || k === 'stringData') ? digested(v) : v;
  }
  return out;
}

function eventContent(o: Obj): Record<string, unknown> {
  const io = (o.involvedObject ?? {}) as { kind?: string; name?: string; namespace?: string; fieldPath?: string };
  return { type: o.type, reason: o.reason, message: o.message, involvedObject: { kind: io.kind, name: io.name, namespace: io.namespace, fieldPath: io.fieldPath } };
}

/** The fields a write decided, normalized (times and generated names masked). */
export function contentOf(kind: ShadowWriteKind, resource: string, subresource: string | undefined, o: Obj): Record<string, unknown> | undefined {
  if (kind === 'delete' || kind === 'deletecollection') return undefined;
  if (kind === 'event') return normalizeContent(eventContent(o));
  if (o.kind === 'PartialObjectMetadata') return normalizeContent({ metadata: mainContent(resource, o).metadata });
  return normalizeContent(subresource === 'status' ? { status: o.status } : mainContent(resource, o));
}

const controllerOwner = (o: KubeObject) => o.metadata?.ownerReferences?.find((r) => r.controller);

/**
 * What a write is matched on (see ShadowEntry.target): an Event by what it is about and its
 * reason; a create of an owned object under a generated name by its owner; else the name.
 */
export function targetOf(kind: ShadowWriteKind, o: Obj | undefined, name: string | undefined): string {
  if (kind === 'deletecollection') return '*';
  if (kind === 'event' && o) {
    const io = (o.involvedObject ?? {}) as { kind?: string; name?: string };
    return `${io.kind ?? ''}/${normalizeString(io.name ?? '')}:${String(o.reason ?? '')}`;
  }
  const own = name ?? o?.metadata?.name ?? '';
  const owner = o && controllerOwner(o);
  // a generated name (a pod's random tail) differs between two managers; a derived one (a
  // ReplicaSet's template hash, a CronJob's Job's schedule time) is the same on both
  if (kind === 'create' && owner && normalizeString(own) !== own) return `owner:${owner.uid}`;
  return own;
}

export interface WriteShape {
  kind: ShadowWriteKind;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** One side's write of `o` as a ledger entry. */
export function entryOf(side: ShadowSide, at: number, w: WriteShape, o: Obj | undefined, extra: Partial<ShadowEntry> = {}): ShadowEntry {
  const name = w.name ?? o?.metadata?.name;
  const owner = o && controllerOwner(o);
  const content = o ? contentOf(w.kind, w.resource, w.subresource, o) : undefined;
  const component = w.kind === 'event' && o ? ((o.source as { component?: string } | undefined)?.component ?? (o.reportingComponent as string | undefined)) : undefined;
  return {
    side,
    at,
    kind: w.kind,
    resource: w.resource,
    ...(w.subresource ? { subresource: w.subresource } : {}),
    ...(w.namespace ? { namespace: w.namespace } : {}),
    target: targetOf(w.kind, o, name),
    ...(name ? { name } : {}),
    ...(content ? { content } : {}),
    ...(o?.kind === 'PartialObjectMetadata' ? { metadataOnly: true } : {}),
    ...(o?.kind && o.kind !== 'PartialObjectMetadata' ? { objectKind: o.kind } : {}),
    ...(owner?.kind ? { ownerKind: owner.kind } : {}),
    ...(owner?.name ? { ownerName: owner.name } : {}),
    ...(o?.metadata?.uid && w.kind !== 'event' ? { uid: o.metadata.uid } : {}),
    ...(owner?.uid ? { ownerUid: owner.uid } : {}),
    ...(w.kind === 'event' && o ? { about: (o.involvedObject as { name?: string } | undefined)?.name } : {}),
    ...(component ? { component } : {}),
    ...extra,
  };
}
