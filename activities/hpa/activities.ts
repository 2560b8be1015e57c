import type { V1Pod, V2CrossVersionObjectReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { parseSelectorString, requirementsMatch } from '../../workflows/common/label-selector-string';
import { checkSelector, needsMetrics, type HpaSpecView, type HpaStatusView, type RescaleOutcome, type SelectorCheck } from '../../workflows/hpa/logic';
import { computeReplicasForMetrics, type MetricReading, type MetricsProposal } from '../../workflows/hpa/metric-status';
import { hpaPodFromPod } from '../../workflows/hpa/projections';
import { tolerancesFor } from '../../workflows/hpa/replica-calculator';
import type { HpaConfig, HpaEvent } from '../../workflows/hpa/types';
import type { FlagValues } from '../../workers/flags';
import { RestMapper } from '../kube/discovery';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { clientErrorText, readMetric } from './metrics';
import { hpaConfigOf, syncPeriodMs } from './settings';

export const EVENT_COMPONENT = 'horizontal-pod-autoscaler';

export interface HpaKey {
  namespace: string;
  name: string;
}

/** The HPA as one sync reads it. */
export interface HpaView {
  uid: string;
  spec: HpaSpecView & { scaleTargetRef: V2CrossVersionObjectReference };
  status?: HpaStatusView;
}

/** The target's scale subresource, or upstream's error text for why it could not be read. */
export type ScaleRead =
  | { ok: true; groupResource: string; path: string; replicas: number; statusReplicas: number; selector: string }
  | { ok: false; error: string };

export interface HpaObservation {
  /** absent when the HPA is gone */
  hpa?: HpaView;
  config: HpaConfig;
  syncPeriodMs: number;
  scale?: ScaleRead;
  /**
   * When the replica count lies in [min, max], what the metrics propose (computed here from the
   * pods and readings, which are many and would bloat the history; the window and policies,
   * which need the history, are the workflow's) — or the selector check that failed first.
   */
  selector?: SelectorCheck;
  metrics?: MetricsProposal;
}

export interface RescaleRequest {
  reason: string;
  namespace: string;
  hpa: string;
  scalePath: string;
  groupResource: string;
  desiredReplicas: number;
}

export interface FinishSyncRequest extends HpaKey {
  reason: string;
  /** the HPA the sync read: a different one under the name since is not written to */
  uid: string;
  status: HpaStatusView;
  /** recorded on the HPA before the status is written */
  events: HpaEvent[];
}

export type FinishSyncResult = { outcome: 'written' | 'unchanged' | 'gone' } | { outcome: 'failed'; error: string };

export interface HpaDeps {
  rest: KubeRest;
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  flags: FlagValues;
}

interface ScaleJson {
  metadata?: { resourceVersion?: string };
  spec?: { replicas?: number };
  status?: { replicas?: number; selector?: string };
}

/** schema.ParseGroupVersion's checks: '' or one slash at most. */
function groupOfApiVersion(apiVersion: string | undefined): { group: string } | { error: string } {
  const v = apiVersion ?? '';
  if (v === '' || v === '/') return { group: '' };
  const parts = v.split('/');
  if (parts.length === 1) return { group: '' };
  if (parts.length === 2) return { group: parts[0] };
  return { error: `unexpected GroupVersion string: ${v}` };
}

/** A JSON value with object keys sorted and empty lists, nulls and undefined dropped: equal statuses print equal. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined || x === null || (Array.isArray(x) && x.length === 0)) continue;
      out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

export function sameStatus(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a ?? {})) === JSON.stringify(canonical(b ?? {}));
}

/** An autoscaling/v2 HPA as the API serves it (times stay RFC 3339 strings, as the status is written back). */
interface HpaJson {
  metadata?: { uid?: string };
  spec: HpaView['spec'];
  status?: HpaStatusView;
}

function hpaView(o: HpaJson): HpaView {
  const view: HpaView = { uid: o.metadata?.uid ?? '', spec: o.spec };
  if (o.status) view.status = o.status;
  return view;
}

/** The horizontal-pod-autoscaler's I/O: one read of everything a sync decides on, the scale update, the status write. */
export function createHpaActivities(deps: HpaDeps) {
  const { rest, reader } = deps;
  const log = deps.logger.child({ controller: 'hpa' });
  const mapper = new RestMapper(reader);
  const hpaPath = (namespace: string, name?: string) => resourcePath(RESOURCES.horizontalPodAutoscalers, namespace, name);

  async function readScale(namespace: string, ref: V2CrossVersionObjectReference): Promise<ScaleRead> {
    const gv = groupOfApiVersion(ref.apiVersion);
    if ('error' in gv) return { ok: false, error: gv.error };
    const info = await mapper.lookupGroupKind(gv.group, ref.kind);
    if (!info) return { ok: false, error: `no matches for kind ${JSON.stringify(ref.kind)} in group ${JSON.stringify(gv.group)}` };
    const groupResource = gv.group ? `${info.resource}.${gv.group}` : info.resource;
    const base = info.apiVersion.includes('/') ? `/apis/${info.apiVersion}` : `/api/${info.apiVersion}`;
    const path = `${base}/namespaces/${encodeURIComponent(namespace)}/${info.resource}/${encodeURIComponent(ref.name)}/scale`;
    try {
      const s = (await rest.request<ScaleJson>('GET', path)).body;
      return { ok: true, groupResource, path, replicas: s.spec?.replicas ?? 0, statusReplicas: s.status?.replicas ?? 0, selector: s.status?.selector ?? '' };
    } catch (e) {
      if (e instanceof ApiError && e.transient) throw e;
      return { ok: false, error: clientErrorText(e, 'get', groupResource) };
    }
  }

  /** "namespace/name" of the other HPAs whose target's selector picks one of `pods` (upstream's hpaSelectors). */
  async function otherHpasSelecting(namespace: string, self: string, pods: readonly V1Pod[]): Promise<string[]> {
    if (pods.length === 0) return [];
    const items = (await reader.request<{ items?: KubeObject[] }>('GET', hpaPath(namespace))).body.items ?? [];
    const out: string[] = [];
    for (const o of items) {
      const name = o.metadata?.name ?? '';
      if (name === self) continue;
      const ref = (o.spec as { scaleTargetRef?: V2CrossVersionObjectReference } | undefined)?.scaleTargetRef;
      if (!ref) continue;
      const s = await readScale(namespace, ref);
      if (!s.ok || !s.selector) continue;
      const parsed = parseSelectorString(s.selector);
      if (!parsed.ok) continue;
      if (pods.some((p) => requirementsMatch(parsed.requirements, p.metadata?.labels))) out.push(`${namespace}/${name}`);
    }
    return out;
  }

  return {
    /**
     * Everything one sync decides on, read in upstream's order: the HPA, its target's scale, and,
     * when the replica count lies within [min, max], the selector checks (present, parseable, its
     * pods picked by no other HPA) and each metric, reduced to the metrics' proposal by the pure
     * calculator. Reads only: whether and how far to scale is the workflow's decision.
     */
    async observeHpa(req: HpaKey): Promise<HpaObservation> {
      return apiCall(async () => {
        const config = hpaConfigOf(deps.flags);
        const out: HpaObservation = { config, syncPeriodMs: syncPeriodMs(deps.flags) };
        let obj: HpaJson;
        try {
          obj = (await reader.request<HpaJson>('GET', hpaPath(req.namespace, req.name))).body;
        } catch (e) {
          if (isStatus(e, 404)) return out;
          throw e;
        }
        const hpa = hpaView(obj);
        out.hpa = hpa;
        const scale = await readScale(req.namespace, hpa.spec.scaleTargetRef);
        out.scale = scale;
        if (!scale.ok || !needsMetrics(hpa.spec, scale.replicas)) return out;

        const self = `${req.namespace}/${req.name}`;
        const parsed = scale.selector ? parseSelectorString(scale.selector) : undefined;
        let check = checkSelector(scale.selector || undefined, parsed && !parsed.ok ? parsed.error : undefined, [], self);
        if (!check.ok || !parsed?.ok) {
          out.selector = check;
          return out;
        }
        const q = `?labelSelector=${encodeURIComponent(scale.selector)}`;
        const pods = ((await reader.request<{ items?: V1Pod[] }>('GET', `${resourcePath(RESOURCES.pods, req.namespace)}${q}`)).body.items ?? [])
          .filter((p) => requirementsMatch(parsed.requirements, p.metadata?.labels));
        check = checkSelector(scale.selector, undefined, await otherHpasSelecting(req.namespace, req.name, pods), self);
        if (!check.ok) {
          out.selector = check;
          return out;
        }
        const specs = hpa.spec.metrics ?? [];
        const readings: MetricReading[] = [];
        for (const spec of specs) readings.push(await readMetric(rest, mapper, req.namespace, scale.selector, spec));
        out.metrics = computeReplicasForMetrics(specs, readings, {
          namespace: req.namespace,
          specReplicas: scale.replicas,
          statusReplicas: scale.statusReplicas,
          pods: pods.map(hpaPodFromPod),
          tolerances: tolerancesFor(hpa.spec.behavior, config),
          config,
          nowMs: Date.now(),
        });
        return out;
      });
    },

    /** Set the target's replicas through its scale subresource, re-reading it on a conflict (upstream's RetryOnConflict, 5 tries). */
    async rescaleHpaTarget(req: RescaleRequest): Promise<RescaleOutcome> {
      return apiCall(async () => {
        let last = '';
        for (let attempt = 0; attempt < 5; attempt++) {
          let scale: ScaleJson & Record<string, unknown>;
          try {
            scale = (await rest.request<ScaleJson & Record<string, unknown>>('GET', req.scalePath)).body;
          } catch (e) {
            if (e instanceof ApiError && e.transient) throw e;
            return { ok: false, error: clientErrorText(e, 'get', req.groupResource) };
          }
          try {
            await rest.request('PUT', req.scalePath, { body: { ...scale, spec: { ...scale.spec, replicas: req.desiredReplicas } } });
            log.info({ key: `${req.namespace}/${req.hpa}`, target: req.scalePath, from: scale.spec?.replicas ?? 0, to: req.desiredReplicas, reason: req.reason }, 'rescaled');
            return { ok: true };
          } catch (e) {
            if (e instanceof ApiError && e.transient) throw e;
            last = clientErrorText(e, 'put', req.groupResource);
            if (!isStatus(e, 409)) return { ok: false, error: last };
          }
        }
        return { ok: false, error: last };
      });
    },

    /**
     * Record the sync's Events, then write the status when it differs from what the HPA has
     * (upstream's updateStatusIfNeeded); the write carries the version just read, so a retry
     * after a replica died finds its own status there and writes nothing.
     */
    async finishHpaSync(req: FinishSyncRequest): Promise<FinishSyncResult> {
      return apiCall(async () => {
        const target = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace: req.namespace, name: req.name, uid: req.uid };
        for (const e of req.events) deps.recordEvent(EVENT_COMPONENT, target, e.type, e.reason, e.message);
        let obj: KubeObject;
        try {
          obj = (await reader.request<KubeObject>('GET', hpaPath(req.namespace, req.name))).body;
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          throw e;
        }
        if (obj.metadata?.uid !== req.uid) return { outcome: 'gone' };
        if (sameStatus(obj.status, req.status)) return { outcome: 'unchanged' };
        try {
          await rest.request('PUT', `${hpaPath(req.namespace, req.name)}/status`, { body: { ...obj, status: req.status } });
          return { outcome: 'written' };
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (e instanceof ApiError && e.transient) throw e;
          const msg = clientErrorText(e, 'put', 'horizontalpodautoscalers.autoscaling');
          deps.recordEvent(EVENT_COMPONENT, target, 'Warning', 'FailedUpdateStatus', msg);
          return { outcome: 'failed', error: `failed to update status for ${req.name}: ${msg}` };
        }
      });
    },
  };
}

export type HpaActivities = ReturnType<typeof createHpaActivities>;
