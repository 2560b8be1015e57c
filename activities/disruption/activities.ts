import type { Logger } from 'pino';
import type { LocalReads } from '../informers/local-reads';
import type { EventTarget, EventType, RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, groupVersionPath, resourcePath, type ResourceType } from '../kube/resources';
import { updateGuarded } from '../kube/update';
import { selectorMatches } from '../../workflows/common/selector';
import { formatTime } from '../../workflows/replicaset/logic';
import { DISRUPTION_TARGET, EVENT_COMPONENT, staleConditionWaitMs } from '../../workflows/disruption/logic';
import type { ControllerRefView, PdbPodView, PdbStatus, PdbView } from '../../workflows/disruption/types';
import { SCALE_FIELDS, disruptionTargetView, pdbPodView, pdbView } from './projections';
import { expectedScale, groupOf, type Workload, type WorkloadKind, type WorkloadLookup } from './scale';

export interface ObserveBudgetRequest {
  namespace: string;
  name: string;
}

export interface BudgetObservation {
  /** absent when the budget is gone */
  pdb?: PdbView;
  pods: PdbPodView[];
}

export interface ControllerScaleRequest {
  namespace: string;
  pods: PdbPodView[];
  reason: string;
}

/** An Event of the budget's sync: on the budget itself, or on one of its pods. */
export interface BudgetEvent {
  pod?: { name: string; uid: string };
  type: EventType;
  reason: string;
  message: string;
}

export interface WriteBudgetStatusRequest {
  namespace: string;
  name: string;
  uid: string;
  /** the version the status was computed from: a newer budget means decide again, never overwrite */
  resourceVersion: string;
  status: PdbStatus;
  /** Events of the same sync, recorded first as upstream's sync records them */
  events: BudgetEvent[];
  reason: string;
}

export type WriteBudgetStatusResult = { outcome: 'written'; resourceVersion: string } | { outcome: 'conflict' | 'gone' };

export interface RecordBudgetEventsRequest {
  namespace: string;
  pdb: string;
  pdbUid: string;
  events: BudgetEvent[];
}

export interface ClearStaleDisruptionTargetRequest {
  namespace: string;
  name: string;
  uid: string;
  reason: string;
}

export interface DisruptionDeps {
  /** the controller's own client: status writes, scale subresources, Events */
  rest: KubeRest;
  /**
   * the manager's client, for what upstream reads through its shared informers: the controller's
   * role grants no read of pods
   */
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  local: LocalReads;
}

const WORKLOADS: Record<WorkloadKind, ResourceType> = {
  ReplicationController: RESOURCES.replicationControllers,
  ReplicaSet: RESOURCES.replicaSets,
  Deployment: RESOURCES.deployments,
  StatefulSet: RESOURCES.statefulSets,
};

const pdbPath = (ns: string, name: string) => resourcePath(RESOURCES.podDisruptionBudgets, ns, name);
const podPath = (ns: string, name: string) => resourcePath(RESOURCES.pods, ns, name);

function workload(o: KubeObject): Workload {
  const ref = o.metadata?.ownerReferences?.find((r) => r.controller === true);
  const replicas = (o.spec as { replicas?: number } | undefined)?.replicas;
  return {
    uid: o.metadata?.uid ?? '',
    // every built-in workload defaults spec.replicas to 1
    replicas: typeof replicas === 'number' ? replicas : 1,
    ...(ref ? { controllerRef: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid } } : {}),
  };
}

interface ApiResourceList {
  resources: Array<{ name: string; kind: string; group?: string; version?: string }>;
}

/** the API versions a scale subresource may be served in, as upstream's scale client knows them */
const SCALE_VERSIONS = new Set(['autoscaling/v1', 'extensions/v1beta1', 'apps/v1beta1', 'apps/v1beta2']);

/** The disruption controller's I/O: budget reads and status writes, the scale lookups, the stale-condition reset. */
export function createDisruptionActivities(deps: DisruptionDeps) {
  const { rest, reader } = deps;
  const log = deps.logger.child({ controller: 'disruption' });

  const lookup: WorkloadLookup = {
    async get(kind, namespace, name) {
      const r = WORKLOADS[kind];
      const cached = deps.local.get(r, namespace, name, SCALE_FIELDS);
      if (cached) return workload(cached);
      try {
        return workload((await reader.request<KubeObject>('GET', resourcePath(r, namespace, name))).body);
      } catch (e) {
        if (isStatus(e, 404)) return undefined;
        throw e;
      }
    },
    async scale(ref: ControllerRefView, namespace: string) {
      const group = groupOf(ref.apiVersion);
      const version = ref.apiVersion.slice(ref.apiVersion.indexOf('/') + 1);
      let list: ApiResourceList;
      try {
        list = (await rest.request<ApiResourceList>('GET', groupVersionPath({ group, version }))).body;
      } catch (e) {
        if (isStatus(e, 404)) throw new Error(`no matches for kind ${JSON.stringify(ref.kind)} in version ${JSON.stringify(ref.apiVersion)}`);
        throw e;
      }
      const resource = list.resources.find((x) => x.kind === ref.kind && !x.name.includes('/'));
      if (!resource) throw new Error(`no matches for kind ${JSON.stringify(ref.kind)} in version ${JSON.stringify(ref.apiVersion)}`);
      const groupResource = group ? `${resource.name}.${group}` : resource.name;
      try {
        const s = (await rest.request<{ metadata?: { uid?: string }; spec?: { replicas?: number } }>('GET',
          `${groupVersionPath({ group, version })}/namespaces/${encodeURIComponent(namespace)}/${resource.name}/${encodeURIComponent(ref.name)}/scale`)).body;
        return { uid: s.metadata?.uid ?? '', replicas: s.spec?.replicas ?? 0 };
      } catch (e) {
        if (!isStatus(e, 404)) throw e;
        // not found: either no such object, or a kind without a scale subresource
        const sub = list.resources.find((x) => x.name === `${resource.name}/scale`);
        const servesScale = !!sub && sub.kind === 'Scale' && SCALE_VERSIONS.has(`${sub.group ?? group}/${sub.version ?? version}`);
        if (!servesScale) throw new Error(`${groupResource} does not implement the scale subresource`);
        return undefined;
      }
    },
  };

  const target = (namespace: string, e: BudgetEvent, pdb: { name: string; uid: string }): EventTarget =>
    e.pod
      ? { apiVersion: 'v1', kind: 'Pod', namespace, name: e.pod.name, uid: e.pod.uid }
      : { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', namespace, name: pdb.name, uid: pdb.uid };

  const record = (namespace: string, pdb: { name: string; uid: string }, events: readonly BudgetEvent[]) => {
    for (const e of events) deps.recordEvent(EVENT_COMPONENT, target(namespace, e, pdb), e.type, e.reason, e.message);
  };

  return {
    /** The budget and the pods its selector matches, read from the API (a run that lost its view). */
    async observeBudget(req: ObserveBudgetRequest): Promise<BudgetObservation> {
      return apiCall(async () => {
        let pdb: PdbView;
        try {
          pdb = pdbView((await reader.request<KubeObject>('GET', pdbPath(req.namespace, req.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return { pods: [] };
          throw e;
        }
        const items = (await reader.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.pods, req.namespace))).body.items ?? [];
        const pods = items.filter((p) => selectorMatches(pdb.selector, p.metadata?.labels)).map(pdbPodView);
        return { pdb, pods };
      });
    },

    /** The summed scale of the pods' controllers, or why it cannot be known. */
    async controllerScale(req: ControllerScaleRequest): Promise<{ expectedCount: number } | { error: string }> {
      return apiCall(async () => {
        return expectedScale(req.namespace, req.pods, lookup);
      });
    },

    async recordBudgetEvents(req: RecordBudgetEventsRequest): Promise<void> {
      record(req.namespace, { name: req.pdb, uid: req.pdbUid }, req.events);
    },

    /** The budget's status, through the status subresource, guarded by the version it was computed from. */
    async writeBudgetStatus(req: WriteBudgetStatusRequest): Promise<WriteBudgetStatusResult> {
      record(req.namespace, req, req.events);
      return apiCall(async () => {
        const path = pdbPath(req.namespace, req.name);
        const guard = { uid: req.uid, resourceVersion: req.resourceVersion };
        try {
          const r = await updateGuarded(rest, path, guard, (o) => {
            o.status = { ...req.status };
          }, 'status', deps.local.at(RESOURCES.podDisruptionBudgets, req.namespace, req.name, guard));
          log.info({ pdb: `${req.namespace}/${req.name}`, disruptionsAllowed: req.status.disruptionsAllowed, currentHealthy: req.status.currentHealthy,
            desiredHealthy: req.status.desiredHealthy, expectedPods: req.status.expectedPods, reason: req.reason }, 'wrote budget status');
          return { outcome: 'written', resourceVersion: r.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (isStatus(e, 409)) return { outcome: 'conflict' };
          throw e;
        }
      });
    },

    /**
     * Sets a stale DisruptionTarget condition False, after reading the pod live: a pod deleted,
     * finished or unmarked meanwhile is left alone, and one marked again later waits its turn.
     */
    async clearStaleDisruptionTarget(req: ClearStaleDisruptionTargetRequest): Promise<{ waitMs?: number }> {
      return apiCall(async () => {
        const path = podPath(req.namespace, req.name);
        let pod: KubeObject & { status?: { conditions?: Array<Record<string, unknown>> } };
        try {
          pod = (await reader.request<KubeObject>('GET', path)).body;
        } catch (e) {
          if (isStatus(e, 404)) return {};
          throw e;
        }
        if (pod.metadata?.uid !== req.uid) return {};
        const wait = staleConditionWaitMs(disruptionTargetView(pod), Date.now());
        if (wait === undefined) return {};
        if (wait > 0) return { waitMs: wait };
        const generation = pod.metadata?.generation ?? 0;
        try {
          await updateGuarded(rest, path, { uid: req.uid, resourceVersion: pod.metadata?.resourceVersion ?? '' }, (o) => {
            const st = (o.status ?? {}) as { conditions?: Array<Record<string, unknown>> };
            st.conditions = (st.conditions ?? []).map((c) => (c.type === DISRUPTION_TARGET
              ? { type: DISRUPTION_TARGET, status: 'False', lastProbeTime: null, lastTransitionTime: formatTime(Date.now()), ...(generation ? { observedGeneration: generation } : {}) }
              : c));
            o.status = st;
          }, 'status', pod);
        } catch (e) {
          // changed meanwhile: the watch brings the pod back if it is still marked
          if (isStatus(e, 404, 409)) return {};
          throw e;
        }
        log.info({ pod: `${req.namespace}/${req.name}`, reason: req.reason }, 'reset stale DisruptionTarget condition to False');
        return {};
      });
    },
  };
}

export type DisruptionActivities = ReturnType<typeof createDisruptionActivities>;
