import type { Logger } from 'pino';
import { endpointsDigest, slicePortKey } from '../../workflows/endpointslicemirroring/logic';
import {
  DesiredSlice,
  EndpointAddressView,
  EndpointSubsetView,
  EndpointsPortView,
  EndpointsView,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MIRRORING_EVENT_SOURCE,
  MIRRORING_MANAGER,
  MirroringObservation,
  MirroringWarning,
  MirroringWrite,
  SliceEcho,
  SliceEndpoint,
  SlicePort,
  SliceSummary,
} from '../../workflows/endpointslicemirroring/types';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { heartbeat } from '../kube/heartbeat';

export interface MirroringActivityDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

export interface ObserveMirroringRequest {
  namespace: string;
  name: string;
}

export interface ApplyMirroringRequest {
  namespace: string;
  endpointsName: string;
  endpointsUid?: string;
  /** the slices the plan was made from: any other slice of ours found at create time is a retry's */
  knownSlices: string[];
  writes: MirroringWrite[];
  warnings: MirroringWarning[];
  summary: string;
}

export type ApplyMirroringResult = { ok: boolean; reason?: string; written: SliceEcho[] };

interface EndpointsObject extends KubeObject {
  subsets?: Array<{ addresses?: RawAddress[]; notReadyAddresses?: RawAddress[]; ports?: EndpointsPortView[] }>;
}
interface RawAddress { ip: string; hostname?: string; nodeName?: string; targetRef?: EndpointAddressView['targetRef'] }
interface SliceObject extends KubeObject {
  addressType?: string;
  ports?: SlicePort[] | null;
  endpoints?: SliceEndpoint[] | null;
}

const SLICES = (ns: string) => resourcePath(RESOURCES.endpointSlices, ns);
const MIRRORED_SELECTOR = (name: string) =>
  encodeURIComponent(`${LABEL_SERVICE_NAME}=${name},${LABEL_MANAGED_BY}=${MIRRORING_MANAGER}`);


function address(a: RawAddress): EndpointAddressView {
  return {
    ip: a.ip,
    ...(a.hostname ? { hostname: a.hostname } : {}),
    ...(a.nodeName !== undefined && a.nodeName !== null ? { nodeName: a.nodeName } : {}),
    ...(a.targetRef ? { targetRef: a.targetRef } : {}),
  };
}

export function endpointsView(o: EndpointsObject): EndpointsView {
  const m = o.metadata ?? {};
  const subsets: EndpointSubsetView[] = (o.subsets ?? []).map((s) => ({
    addresses: (s.addresses ?? []).map(address),
    notReadyAddresses: (s.notReadyAddresses ?? []).map(address),
    ports: (s.ports ?? []).map((p) => ({
      ...(p.name !== undefined ? { name: p.name } : {}),
      port: p.port,
      ...(p.protocol !== undefined ? { protocol: p.protocol } : {}),
      ...(p.appProtocol !== undefined && p.appProtocol !== null ? { appProtocol: p.appProtocol } : {}),
    })),
  }));
  return {
    namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '', resourceVersion: m.resourceVersion ?? '',
    labels: m.labels ?? {}, annotations: m.annotations ?? {},
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    subsets,
  };
}

export function sliceSummary(o: SliceObject): SliceSummary {
  const m = o.metadata ?? {};
  const endpoints = o.endpoints ?? [];
  return {
    name: m.name ?? '', uid: m.uid ?? '', resourceVersion: m.resourceVersion ?? '',
    addressType: o.addressType ?? '',
    ports: (o.ports ?? []).map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== null && v !== undefined)) as SlicePort),
    labels: m.labels ?? {}, annotations: m.annotations ?? {},
    ...(m.ownerReferences?.find((r) => r.controller) ? { ownerUid: m.ownerReferences.find((r) => r.controller)!.uid } : {}),
    endpointCount: endpoints.length,
    endpointsDigest: endpointsDigest(endpoints.map((e) => ({ ...e, conditions: e.conditions ?? {} }))),
  };
}

/** The object upstream writes: a fresh slice, every time, with nothing carried over from the old one. */
function sliceBody(namespace: string, s: DesiredSlice, meta: { name?: string; generateName?: string; resourceVersion?: string }) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...meta,
      namespace,
      labels: s.labels,
      ...(Object.keys(s.annotations).length ? { annotations: s.annotations } : {}),
      ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: s.owner.name, uid: s.owner.uid, controller: true, blockOwnerDeletion: true }],
    },
    addressType: s.addressType,
    endpoints: s.endpoints,
    ports: s.ports,
  };
}

/** The Service/Endpoints reads and slice writes of the mirroring controller. */
export function createMirroringActivities(deps: MirroringActivityDeps) {
  const { rest } = deps;
  const log = deps.logger.child({ controller: 'endpointslicemirroring' });

  async function getOrNone<T>(path: string): Promise<T | undefined> {
    try {
      return (await rest.request<T>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  async function listMirrored(namespace: string, name: string): Promise<SliceObject[]> {
    const r = await rest.request<{ items?: SliceObject[] }>('GET', `${SLICES(namespace)}?labelSelector=${MIRRORED_SELECTOR(name)}`);
    return r.body.items ?? [];
  }

  return {
    async observeMirroring(req: ObserveMirroringRequest): Promise<MirroringObservation> {
      return apiCall(async () => {
        const [ep, svc, slices] = await Promise.all([
          getOrNone<EndpointsObject>(resourcePath(RESOURCES.endpoints, req.namespace, req.name)),
          getOrNone<KubeObject>(resourcePath(RESOURCES.services, req.namespace, req.name)),
          listMirrored(req.namespace, req.name),
        ]);
        const selector = (svc?.spec as { selector?: Record<string, string> | null } | undefined)?.selector;
        return {
          ...(svc ? { service: { uid: svc.metadata?.uid ?? '', resourceVersion: svc.metadata?.resourceVersion ?? '', hasSelector: !!selector && Object.keys(selector).length > 0 } } : {}),
          ...(ep ? { endpoints: endpointsView(ep) } : {}),
          slices: slices.map(sliceSummary),
        };
      });
    },

    async applyMirroring(req: ApplyMirroringRequest): Promise<ApplyMirroringResult> {
      return apiCall(async () => {
        const written: SliceEcho[] = [];
        const target = { apiVersion: 'v1', kind: 'Endpoints', namespace: req.namespace, name: req.endpointsName, uid: req.endpointsUid ?? '' };
        for (const w of req.warnings) deps.recordEvent(MIRRORING_EVENT_SOURCE, target, 'Warning', w.reason, w.message);
        const base = SLICES(req.namespace);
        const known = new Set(req.knownSlices);
        const stop = (reason: string) => {
          log.info({ key: `${req.namespace}/${req.endpointsName}`, reason, written: written.length }, 'mirroring stopped');
          return { ok: false, reason, written };
        };

        for (const w of req.writes) {
          heartbeat();
          switch (w.type) {
            case 'createSlice': {
              // An earlier attempt of this very activity may have created it: find it before creating.
              const mine = (await listMirrored(req.namespace, req.endpointsName)).map(sliceSummary)
                .find((s) => !known.has(s.name) && s.ownerUid === w.slice.owner.uid && slicePortKey(s.addressType, s.ports) === w.key);
              if (mine) {
                known.add(mine.name);
                // rewrite it with the desired content: only a retried create ever gets here
                try {
                  const r = await rest.request<KubeObject>('PUT', `${base}/${encodeURIComponent(mine.name)}`,
                    { body: sliceBody(req.namespace, w.slice, { name: mine.name, resourceVersion: mine.resourceVersion }) });
                  written.push({ name: mine.name, resourceVersion: r.body.metadata?.resourceVersion ?? '' });
                } catch (e) {
                  if (isStatus(e, 404, 409)) return stop(`slice ${mine.name} changed since it was read`);
                  throw e;
                }
                continue;
              }
              try {
                const r = await rest.request<KubeObject>('POST', base, { body: sliceBody(req.namespace, w.slice, { generateName: `${req.endpointsName}-` }) });
                const name = r.body.metadata?.name ?? '';
                known.add(name);
                written.push({ name, resourceVersion: r.body.metadata?.resourceVersion ?? '' });
                log.info({ key: `${req.namespace}/${req.endpointsName}`, slice: name, endpoints: w.slice.endpoints.length }, 'created mirrored slice');
              } catch (e) {
                // a terminating namespace refuses new objects for good: upstream drops the item
                if (isStatus(e, 403) && /being terminated/.test(e.serverMessage)) return { ok: true, written };
                throw e;
              }
              break;
            }
            case 'updateSlice': {
              try {
                const r = await rest.request<KubeObject>('PUT', `${base}/${encodeURIComponent(w.name)}`,
                  { body: sliceBody(req.namespace, w.slice, { name: w.name, resourceVersion: w.resourceVersion }) });
                written.push({ name: w.name, resourceVersion: r.body.metadata?.resourceVersion ?? '' });
                log.info({ key: `${req.namespace}/${req.endpointsName}`, slice: w.name, reason: w.reason }, 'updated mirrored slice');
              } catch (e) {
                if (isStatus(e, 404, 409)) return stop(`slice ${w.name} changed since it was read`);
                throw e;
              }
              break;
            }
            case 'deleteSlice': {
              try {
                await rest.request('DELETE', `${base}/${encodeURIComponent(w.name)}`, { body: { preconditions: { uid: w.uid } } });
                log.info({ key: `${req.namespace}/${req.endpointsName}`, slice: w.name, reason: w.reason }, 'deleted mirrored slice');
              } catch (e) {
                // gone already, or the name now holds another object: either way ours is gone
                if (!isStatus(e, 404, 409)) throw e;
              }
              written.push({ name: w.name, resourceVersion: '', deleted: true });
              break;
            }
          }
        }
        return { ok: true, written };
      });
    },
  };
}

export type MirroringActivities = ReturnType<typeof createMirroringActivities>;
