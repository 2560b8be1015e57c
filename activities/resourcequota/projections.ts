import { resourceListsEqual } from '../../workflows/common/quantity';
import type { QuotaObjectKind, QuotaSpecLike, ResourceMap } from '../../workflows/resourcequota/types';
import { trackedKinds } from '../../workflows/resourcequota/usage';
import type { KubeObject } from '../kube/projections';
import { METADATA, type FieldMask } from '../informers/fields';

/** A ResourceQuota as the routes compare it. */
export interface QuotaEntry {
  namespace: string;
  name: string;
  uid: string;
  /** the kinds whose changes can move its usage */
  tracks: Set<QuotaObjectKind>;
  /** its object counts (`count/<resource>[.<group>]`), which any kind a namespace holds may feed */
  countKeys: Set<string>;
  /** spec as JSON: any change to hard, scopes or scope selector calls for a full recount */
  spec: string;
  /** status.hard already mirrors spec.hard */
  hardSynced: boolean;
}

type QuotaObject = KubeObject & { spec?: QuotaSpecLike; status?: { hard?: ResourceMap } };

/** What quotaEntry reads of a ResourceQuota: not status.used, which quota admission rewrites on every charge. */
export const QUOTA_ENTRY_FIELDS: FieldMask = { metadata: true, spec: { hard: true, scopes: true, scopeSelector: true }, status: { hard: true } };

export function quotaEntry(o: KubeObject): QuotaEntry {
  const q = o as QuotaObject;
  const m = q.metadata ?? {};
  const spec = q.spec ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    tracks: new Set(trackedKinds(Object.keys(spec.hard ?? {}))),
    countKeys: new Set(Object.keys(spec.hard ?? {}).filter((k) => k.startsWith('count/'))),
    spec: JSON.stringify({ hard: spec.hard ?? {}, scopes: spec.scopes ?? [], scopeSelector: spec.scopeSelector ?? null }),
    hardSynced: resourceListsEqual(spec.hard, q.status?.hard),
  };
}

/**
 * What the routes read of the objects a quota counts: only the namespace, to find the quotas to
 * nudge (the recount lists the namespace itself). Metadata only, so a kind no other controller
 * reads in full (configmaps, secrets, claims) is watched as PartialObjectMetadata.
 */
export const QUOTA_OBJECT_FIELDS: FieldMask = METADATA;

/** The namespace whose quotas a change to a counted object concerns ('' for none). */
export const quotaObjectNamespace = (o: KubeObject): string => o.metadata?.namespace ?? '';
