import { resourceListsEqual } from '../../workflows/common/quantity';
import type { QuotaObjectKind, QuotaSpecLike, ResourceMap } from '../../workflows/resourcequota/types';
import { trackedKinds } from '../../workflows/resourcequota/usage';
import type { ResourceQuotaEvent, ResourceQuotaWorkflowInput } from '../../workflows/resourcequota/workflow';
import { mergeResourceQuotaEvents, resourceQuotaWorkflowId } from '../../workflows/resourcequota/workflow';
import type { KubeObject } from '../kube/projections';
import type { InformerInput, RouteFamily } from '../informers/family';
import type { Handler } from '../informers/reflector';
import { SetIndex } from '../informers/set-index';
import type { Signaller } from '../informers/signaller';
import { durationFlag, flagGiven } from '../../workers/flags';
import { resourceQuotaWorkflow } from '../../workflows/resourcequota/workflow';

export const RESOURCE_QUOTA_SYNC_PERIOD = durationFlag('resource-quota-sync-period', '5m', 'how often every resource quota is recounted in full');

export const RESOURCE_QUOTAS_PATH = '/api/v1/resourcequotas';

/** The kinds whose changes move usage, by the path watched for them (metadata only: the namespace is all that is read). */
const OBJECT_PATHS: ReadonlyArray<[QuotaObjectKind, string]> = [
  ['pods', '/api/v1/pods'],
  ['services', '/api/v1/services'],
  ['persistentvolumeclaims', '/api/v1/persistentvolumeclaims'],
  ['configmaps', '/api/v1/configmaps'],
  ['secrets', '/api/v1/secrets'],
  ['replicationcontrollers', '/api/v1/replicationcontrollers'],
];

/** Kinds that only count: an update to one cannot change any usage, only its creation or deletion can. */
const COUNT_ONLY = new Set<QuotaObjectKind>(['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas']);

interface QuotaEntry {
  namespace: string;
  name: string;
  uid: string;
  tracks: Set<QuotaObjectKind>;
  /** spec as JSON: any change to hard, scopes or scope selector calls for a full recount */
  spec: string;
  /** status.hard already mirrors spec.hard */
  hardSynced: boolean;
}

type QuotaObject = KubeObject & { spec?: QuotaSpecLike; status?: { hard?: ResourceMap } };

function entryOf(o: QuotaObject): QuotaEntry {
  const m = o.metadata ?? {};
  const spec = o.spec ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    tracks: new Set(trackedKinds(Object.keys(spec.hard ?? {}))),
    spec: JSON.stringify({ hard: spec.hard ?? {}, scopes: spec.scopes ?? [], scopeSelector: spec.scopeSelector ?? null }),
    hardSynced: resourceListsEqual(spec.hard, o.status?.hard),
  };
}

/**
 * Routes of the resourcequota controller, after upstream's: a quota is recounted in full when it
 * appears, when its spec changes, or when its status no longer mirrors its spec (but not for the
 * status writes of quota admission, which would otherwise echo every charge back as a recount);
 * a change to a pod, service or claim, or the creation or deletion of a counted object, nudges
 * the quotas of that namespace that track the kind to recount what it feeds. Every workflow also
 * recounts everything each --resource-quota-sync-period, which covers count/<resource> of kinds
 * not watched here.
 */
export function quotaRoutes(input: InformerInput, signaller: Signaller): RouteFamily | undefined {
  if (!input.controllers.includes('resourcequota')) return undefined;
  const quotas = new Map<string, QuotaEntry>(); // by UID
  const byNamespace = new SetIndex<string, string>();
  const syncMs = flagGiven(input.flags, RESOURCE_QUOTA_SYNC_PERIOD);

  const queue = (q: QuotaEntry, event: ResourceQuotaEvent) => {
    const args: ResourceQuotaWorkflowInput = {
      namespace: q.namespace, name: q.name, uid: q.uid, tuning: input.tuning,
      ...(syncMs ? { syncMs } : {}),
    };
    signaller.queue({ controller: 'resourcequota', workflow: resourceQuotaWorkflow, kind: 'ResourceQuota', namespace: q.namespace,
      name: q.name, uid: q.uid, args, workflowId: resourceQuotaWorkflowId(q.namespace, q.name) }, event, mergeResourceQuotaEvents);
  };

  /** nudge every quota of `ns` (every namespace when undefined) that tracks `kind` */
  const nudge = (kind: QuotaObjectKind, ns: string | undefined, exceptUid?: string) => {
    const uids = ns === undefined ? [...quotas.keys()] : [...byNamespace.get(ns)];
    for (const uid of uids) {
      const q = quotas.get(uid);
      if (q && uid !== exceptUid && q.tracks.has(kind)) queue(q, { kinds: [kind] });
    }
  };

  const put = (q: QuotaEntry) => {
    quotas.set(q.uid, q);
    byNamespace.add(q.namespace, q.uid);
  };

  const drop = (q: QuotaEntry) => {
    quotas.delete(q.uid);
    byNamespace.delete(q.namespace, q.uid);
  };

  const quotaHandler: Handler = {
    relisted(objects) {
      // after a start, a failover or a 410, anything may have been missed: recount every quota
      const seen = new Set<string>();
      for (const o of objects) {
        const q = entryOf(o as QuotaObject);
        seen.add(q.uid);
        put(q);
        queue(q, { all: true });
      }
      for (const q of [...quotas.values()]) {
        if (seen.has(q.uid)) continue;
        drop(q);
        queue(q, { deletedUid: q.uid });
      }
    },
    event(type, o) {
      const q = entryOf(o as QuotaObject);
      const before = quotas.get(q.uid);
      if (type === 'DELETED') {
        drop(before ?? q);
        queue(q, { deletedUid: q.uid });
        nudge('resourcequotas', q.namespace);
        return;
      }
      put(q);
      if (!before) {
        queue(q, { all: true });
        if (type === 'ADDED') nudge('resourcequotas', q.namespace, q.uid);
      } else if (before.spec !== q.spec || !q.hardSynced) {
        queue(q, { all: true });
      }
    },
  };

  const objectHandler = (kind: QuotaObjectKind): Handler => ({
    relisted() {
      if (quotas.size) nudge(kind, undefined);
    },
    event(type, o) {
      if (type === 'MODIFIED' && COUNT_ONLY.has(kind)) return;
      const ns = o.metadata?.namespace;
      if (ns) nudge(kind, ns);
    },
  });

  return {
    handlers: new Map<string, Handler>([[RESOURCE_QUOTAS_PATH, quotaHandler], ...OBJECT_PATHS.map(([k, p]) => [p, objectHandler(k)] as [string, Handler])]),
    metadataOnly: new Set(OBJECT_PATHS.map(([, p]) => p)),
    sizes: () => ({ resourceQuotas: quotas.size }),
  };
}
