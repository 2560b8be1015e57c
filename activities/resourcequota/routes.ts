import type { QuotaObjectKind } from '../../workflows/resourcequota/types';
import type { ResourceQuotaEvent, ResourceQuotaWorkflowInput } from '../../workflows/resourcequota/workflow';
import { mergeResourceQuotaEvents, resourceQuotaWorkflowId } from '../../workflows/resourcequota/workflow';
import { RESOURCES, resourcePath, type ResourceType } from '../kube/resources';
import { collectionPath, groupResourceOf } from '../kube/discovery';
import type { RouteFamily } from '../informers/family';
import { BY_NAMESPACE } from '../informers/indexes';
import { QUOTA_ENTRY_FIELDS, QUOTA_OBJECT_FIELDS, quotaEntry, quotaObjectNamespace, type QuotaEntry } from './projections';
import type { RouteContext } from '../../workers/descriptor';
import { durationFlag, flagGiven } from '../../workers/flags';
import { resourceQuotaWorkflow } from '../../workflows/resourcequota/workflow';

export const RESOURCE_QUOTA_SYNC_PERIOD = durationFlag('resource-quota-sync-period', '5m', 'how often every resource quota is recounted in full');

/** The kinds whose changes move usage, by the resource watched for them. */
const OBJECT_RESOURCES: ReadonlyArray<[QuotaObjectKind, ResourceType]> = [
  ['pods', RESOURCES.pods],
  ['services', RESOURCES.services],
  ['persistentvolumeclaims', RESOURCES.persistentVolumeClaims],
  ['configmaps', RESOURCES.configMaps],
  ['secrets', RESOURCES.secrets],
  ['replicationcontrollers', RESOURCES.replicationControllers],
];

/** Kinds that only count: an update to one cannot change any usage, only its creation or deletion can. */
const COUNT_ONLY = new Set<QuotaObjectKind>(['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas']);

/**
 * Routes of the resourcequota controller, after upstream's: a quota is recounted in full when it
 * appears, when its spec changes, or when its status no longer mirrors its spec (but not for the
 * status writes of quota admission, which would otherwise echo every charge back as a recount);
 * a change to a pod, service or claim, or the creation or deletion of a counted object, nudges
 * the quotas of that namespace that track the kind to recount what it feeds. Like upstream's quota
 * monitors, every other resource discovery offers with create, list, watch and delete (CRDs
 * included, rediscovered as the collector's are) is watched metadata-only, and the creation or
 * deletion of one recounts the quotas of its namespace that count it (`count/<resource>.<group>`).
 * Every workflow also recounts everything each --resource-quota-sync-period.
 */
export function quotaRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('resourcequota')) return undefined;
  const syncMs = flagGiven(input.flags, RESOURCE_QUOTA_SYNC_PERIOD);

  const queue = (q: QuotaEntry, event: ResourceQuotaEvent) => {
    const args: ResourceQuotaWorkflowInput = {
      namespace: q.namespace, name: q.name, uid: q.uid, tuning: input.tuning,
      ...(syncMs ? { syncMs } : {}),
    };
    signaller.queue({ controller: 'resourcequota', workflow: resourceQuotaWorkflow, kind: 'ResourceQuota', namespace: q.namespace,
      name: q.name, uid: q.uid, args, workflowId: resourceQuotaWorkflowId(q.namespace, q.name) }, event, mergeResourceQuotaEvents);
  };

  const quotas = cache.watch(RESOURCES.resourceQuotas, QUOTA_ENTRY_FIELDS);
  quotas.addIndex(BY_NAMESPACE);

  /** queue `event` for every quota of `ns` (every namespace when undefined) that `concerns` picks */
  const queueQuotasOf = (ns: string | undefined, concerns: (q: QuotaEntry) => boolean, event: ResourceQuotaEvent) => {
    for (const o of ns === undefined ? [...quotas.list()] : quotas.byIndex(BY_NAMESPACE, ns)) {
      const q = quotaEntry(o);
      if (concerns(q)) queue(q, event);
    }
  };
  /** nudge every quota of `ns` (every namespace when undefined) that tracks `kind` */
  const nudge = (kind: QuotaObjectKind, ns: string | undefined, exceptUid?: string) =>
    queueQuotasOf(ns, (q) => q.uid !== exceptUid && q.tracks.has(kind), { kinds: [kind] });

  quotas.subscribe({
    onEvent(ev) {
      if (ev.type === 'deleted') {
        const q = quotaEntry(ev.old);
        queue(q, { deletedUid: q.uid });
        // the other quotas of its namespace may count quotas (after a relist every quota recounts anyway)
        if (ev.source === 'watch') nudge('resourcequotas', q.namespace);
        return;
      }
      const q = quotaEntry(ev.obj);
      if (ev.source !== 'watch') {
        // after a start, a failover or a 410, anything may have been missed: recount every quota
        queue(q, { all: true });
        return;
      }
      if (ev.type === 'added') {
        queue(q, { all: true });
        nudge('resourcequotas', q.namespace, q.uid);
        return;
      }
      const before = quotaEntry(ev.old);
      if (before.spec !== q.spec || !q.hardSynced) queue(q, { all: true });
    },
  });

  for (const [kind, resource] of OBJECT_RESOURCES) {
    cache.watch(resource, QUOTA_OBJECT_FIELDS, {
      onEvent(ev) {
        // a (re)list's objects are covered by one nudge of every quota once it is done
        if (ev.source !== 'watch') return;
        if (ev.type === 'updated' && COUNT_ONLY.has(kind)) return;
        const ns = quotaObjectNamespace(ev.type === 'deleted' ? ev.old : ev.obj);
        if (ns) nudge(kind, ns);
      },
      onListed() {
        if (quotas.size) nudge(kind, undefined);
      },
    });
  }

  // the resources followed above (and quotas themselves) are left to their own routes
  const monitored = new Set<string>([...OBJECT_RESOURCES.map(([, r]) => resourcePath(r)), resourcePath(RESOURCES.resourceQuotas)]);
  return {
    sizes: () => ({ quotaMonitors: monitored.size }),
    discover(resources) {
      for (const r of resources) {
        const path = collectionPath(r);
        if (!r.namespaced || !r.creatable || monitored.has(path)) continue;
        monitored.add(path);
        const countKey = `count/${groupResourceOf(r)}`;
        cache.watch(path, QUOTA_OBJECT_FIELDS, {
          onEvent(ev) {
            // only a creation or a deletion moves a count; a relist is covered by the periodic full recount
            if (ev.source !== 'watch' || ev.type === 'updated') return;
            const ns = quotaObjectNamespace(ev.type === 'deleted' ? ev.old : ev.obj);
            if (ns) queueQuotasOf(ns, (q) => q.countKeys.has(countKey), { all: true });
          },
        });
      }
    },
  };
}
