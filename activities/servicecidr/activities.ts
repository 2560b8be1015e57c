import type { Logger } from 'pino';
import {
  CONTROLLER, FIELD_MANAGER, IP_ALLOCATOR, LABEL_MANAGED_BY, READY, SERVICE_CIDR_FINALIZER, checkDeletion,
  type ConditionView, type DeletionCheck, type IpAddressView, type ServiceCidrView,
} from '../../workflows/servicecidr/logic';
import type { FieldMask } from '../informers/fields';
import type { LocalReads } from '../informers/local-reads';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import { heartbeat } from '../kube/heartbeat';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, apiVersionOf, resourcePath } from '../kube/resources';

type Condition = { type?: string; status?: string; reason?: string; message?: string };
type ServiceCidrObject = KubeObject & { spec?: { cidrs?: string[] | null }; status?: { conditions?: Condition[] | null } };

/** What serviceCidrView reads: metadata (finalizers, deletion), the prefixes and the conditions' words. */
export const SERVICE_CIDR_FIELDS: FieldMask = {
  metadata: true,
  spec: { cidrs: true },
  status: { conditions: { type: true, status: true, reason: true, message: true } },
};

/** What ipAddressView reads of an IPAddress: its name (the address) and labels. */
export const IP_ADDRESS_FIELDS: FieldMask = { metadata: true };

export function serviceCidrView(o: KubeObject): ServiceCidrView {
  const c = o as ServiceCidrObject;
  const m = c.metadata ?? {};
  const ready = (c.status?.conditions ?? []).find((x) => x.type === READY);
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    cidrs: [...(c.spec?.cidrs ?? [])],
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    finalized: (m.finalizers ?? []).includes(SERVICE_CIDR_FINALIZER),
    ...(ready ? { ready: { status: ready.status ?? '', reason: ready.reason ?? '', message: ready.message ?? '' } } : {}),
  };
}

export function ipAddressView(o: KubeObject): IpAddressView {
  return { name: o.metadata?.name ?? '', labels: { ...(o.metadata?.labels ?? {}) } };
}

interface ServiceCidrRef {
  /** why, in words: first, so the Web UI shows it at the top */
  reason: string;
  name: string;
  /** the ServiceCIDR decided for; another under the name is never written */
  uid: string;
}

export type CheckServiceCidrDeletionRequest = ServiceCidrRef;

export type CheckServiceCidrDeletionResult =
  | { gone: true }
  | { gone: false; view: ServiceCidrView; check: DeletionCheck; ipAddresses: number; from: 'informer' | 'api' };

export interface ApplyServiceCidrConditionRequest extends ServiceCidrRef {
  condition: ConditionView;
}

/** `gone`: no such ServiceCIDR; `replaced`: the name holds another one (UID mismatch) */
export type ServiceCidrWriteOutcome = 'written' | 'gone' | 'replaced';

/** A write's outcome and, when written, the version it made (the watch's older views are then stale). */
export type ServiceCidrWriteResult = { outcome: 'written'; resourceVersion: string } | { outcome: 'gone' | 'replaced' };

export interface ServiceCidrDeps {
  rest: KubeRest;
  logger: Logger;
  local: LocalReads;
  recordEvent: RecordEvent;
}

const LIST_PAGE = 500;
const cidrPath = (name?: string) => resourcePath(RESOURCES.serviceCidrs, undefined, name);

/** The ServiceCIDR controller's I/O: the deletion check's reads, the finalizer patches and the status apply. */
export function createServiceCidrActivities(deps: ServiceCidrDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });

  async function listAll(path: string, selector?: string): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    let cont = '';
    do {
      const q = [`limit=${LIST_PAGE}`, ...(selector ? [`labelSelector=${encodeURIComponent(selector)}`] : []), ...(cont ? [`continue=${encodeURIComponent(cont)}`] : [])].join('&');
      const r = await deps.rest.request<{ items?: KubeObject[]; metadata?: { continue?: string } }>('GET', `${path}?${q}`);
      out.push(...(r.body.items ?? []));
      cont = r.body.metadata?.continue ?? '';
      heartbeat();
    } while (cont);
    return out;
  }

  /** A strategic merge patch of the finalizers, carrying the UID so that a newcomer under the name is refused (409). */
  async function patchFinalizer(req: ServiceCidrRef, add: boolean): Promise<ServiceCidrWriteResult> {
    const metadata = add
      ? { uid: req.uid, finalizers: [SERVICE_CIDR_FINALIZER] }
      : { uid: req.uid, '$deleteFromPrimitiveList/finalizers': [SERVICE_CIDR_FINALIZER] };
    let written: KubeObject;
    try {
      written = (await deps.rest.request<KubeObject>('PATCH', cidrPath(req.name), { contentType: 'application/strategic-merge-patch+json', body: { metadata } })).body;
    } catch (e) {
      if (isStatus(e, 404)) return { outcome: 'gone' };
      if (isStatus(e, 409)) return { outcome: 'replaced' };
      throw e;
    }
    log.info({ key: req.name, reason: req.reason }, add ? 'added protection finalizer to ServiceCIDR' : 'removed protection finalizer from ServiceCIDR');
    return { outcome: 'written', resourceVersion: written.metadata?.resourceVersion ?? '' };
  }

  return {
    /**
     * Upstream's canDeleteCIDR on the ServiceCIDR as it is now, with every ServiceCIDR and every
     * IPAddress the API server allocated: from this replica's informer when it runs here (upstream
     * asks its listers), else listed from the API.
     */
    async checkServiceCidrDeletion(req: CheckServiceCidrDeletionRequest): Promise<CheckServiceCidrDeletionResult> {
      return apiCall(async () => {
        const managed = (o: KubeObject) => o.metadata?.labels?.[LABEL_MANAGED_BY] === IP_ALLOCATOR;
        let cidrs = deps.local.list(RESOURCES.serviceCidrs, SERVICE_CIDR_FIELDS);
        let ips = cidrs ? deps.local.list(RESOURCES.ipAddresses, IP_ADDRESS_FIELDS, managed) : undefined;
        const from = cidrs && ips ? 'informer' : 'api';
        if (!cidrs || !ips) {
          cidrs = await listAll(cidrPath());
          ips = await listAll(resourcePath(RESOURCES.ipAddresses), `${LABEL_MANAGED_BY}=${IP_ALLOCATOR}`);
        }
        const views = cidrs.map(serviceCidrView);
        const self = views.find((v) => v.name === req.name);
        if (!self || self.uid !== req.uid) return { gone: true };
        const check = checkDeletion(self, views, ips.map(ipAddressView));
        if (check.canDelete) log.info({ key: req.name, why: check.why }, 'ServiceCIDR may be deleted: no IPAddress would be orphaned');
        else log.info({ key: req.name, ipAddress: check.blockingIp }, 'deleting ServiceCIDR blocked by IP address');
        return { gone: false, view: self, check, ipAddresses: ips.length, from };
      });
    },

    /** Adds networking.k8s.io/service-cidr-finalizer (a merge of the list: a retry that landed changes nothing). */
    async addServiceCidrFinalizer(req: ServiceCidrRef): Promise<ServiceCidrWriteResult> {
      return apiCall(async () => patchFinalizer(req, true));
    },

    /** Removes networking.k8s.io/service-cidr-finalizer, letting the deletion complete. */
    async removeServiceCidrFinalizer(req: ServiceCidrRef): Promise<ServiceCidrWriteResult> {
      return apiCall(async () => patchFinalizer(req, false));
    },

    /**
     * Sets the Ready condition with a server-side apply of the status as upstream's field manager,
     * forced, its transition time now. A Ready=True that cannot be written gets upstream's Warning Event.
     */
    async applyServiceCidrCondition(req: ApplyServiceCidrConditionRequest): Promise<ServiceCidrWriteResult> {
      return apiCall(async () => {
        const body = {
          apiVersion: apiVersionOf(RESOURCES.serviceCidrs), kind: RESOURCES.serviceCidrs.kind,
          metadata: { name: req.name },
          status: { conditions: [{ type: READY, ...req.condition, lastTransitionTime: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z') }] },
        };
        let written: KubeObject;
        try {
          written = (await deps.rest.request<KubeObject>('PATCH', `${cidrPath(req.name)}/status?fieldManager=${FIELD_MANAGER}&force=true`, { contentType: 'application/apply-patch+yaml', body })).body;
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' as const };
          // upstream records it on every failed sync of a ServiceCIDR that is not being deleted
          if (req.condition.status === 'True') {
            deps.recordEvent('service-cidr-controller', {
              apiVersion: apiVersionOf(RESOURCES.serviceCidrs), kind: RESOURCES.serviceCidrs.kind, namespace: '', name: req.name, uid: req.uid,
            }, 'Warning', 'KubernetesServiceCIDRError', 'The ServiceCIDR Status can not be set to Ready=True');
          }
          throw e;
        }
        log.info({ key: req.name, status: req.condition.status, conditionReason: req.condition.reason, reason: req.reason }, 'updated ServiceCIDR condition');
        return { outcome: 'written' as const, resourceVersion: written.metadata?.resourceVersion ?? '' };
      });
    },
  };
}

export type ServiceCidrActivities = ReturnType<typeof createServiceCidrActivities>;
