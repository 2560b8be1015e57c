import type { DeploymentObservation } from '../../workflows/deployment/cache';
import type { Logger } from 'pino';
import { newerVersion } from '../../workflows/common/resource-version';
import { selectorMatches } from '../../workflows/common/selector';
import type { DeploymentAction, DeploymentRef, DeploymentView, ReplicaSetView } from '../../workflows/deployment/types';
import type { OwnerRef } from '../../workflows/common/meta';
import { fitObservation } from './fit';
import { deploymentView, replicaSetView } from './projections';
import type { RecordEvent } from '../kube/events';
import type { LocalReads } from '../informers/local-reads';
import { apiCall, isStatus } from '../kube/failures';
import { updateGuarded, withoutEmpty } from '../kube/update';
import { adoptBy, patchOwnerReferences, releaseFrom } from '../kube/ownership';
import type { KubeObject } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { heartbeat } from '../kube/heartbeat';

export interface DeploymentKey {
  namespace: string;
  name: string;
}

export type { DeploymentObservation } from '../../workflows/deployment/cache';

export interface OwnedRef {
  name: string;
  uid: string;
}

export interface DeploymentWrite {
  deployment: DeploymentRef;
  action: DeploymentAction;
  /** for scale actions: the replica count before, for the event text */
  fromReplicas?: number;
}

export type WriteResult =
  | { ok: true; resourceVersion?: string }
  | { ok: false; reason: 'Conflict' | 'NotFound' | 'Rejected'; message: string }
  /** the ReplicaSet's name is taken; the workflow decides whether it is ours or a hash collision */
  | { ok: false; reason: 'AlreadyExists'; message: string; existing: ReplicaSetView };

export interface DeploymentActivityDeps {
  rest: KubeRest;
  recordEvent: RecordEvent;
  logger: Logger;
  /** this replica's informer cache, when it runs here */
  local?: LocalReads;
}

const COMPONENT = 'deployment-controller';
const deployPath = (ns: string, name?: string) => resourcePath(RESOURCES.deployments, ns, name);
const rsPath = (ns: string, name?: string) => resourcePath(RESOURCES.replicaSets, ns, name);


function ownerRef(d: DeploymentRef): OwnerRef {
  return { apiVersion: 'apps/v1', kind: 'Deployment', name: d.name, uid: d.uid, controller: true, blockOwnerDeletion: true };
}

async function listAll(rest: KubeRest, path: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let cont = '';
  do {
    const page = await rest.request<{ items: KubeObject[]; metadata: { continue?: string } }>('GET', `${path}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    items.push(...page.body.items);
    cont = page.body.metadata.continue ?? '';
    heartbeat();
  } while (cont);
  return items;
}

/** The I/O of the deployment controller; every write is guarded (UID, resourceVersion) and safe to run twice. */
export function createDeploymentActivities(deps: DeploymentActivityDeps) {
  const { rest } = deps;

  const event = (d: DeploymentRef, type: 'Normal' | 'Warning', reason: string, message: string) =>
    deps.recordEvent(COMPONENT, { apiVersion: 'apps/v1', kind: 'Deployment', namespace: d.namespace, name: d.name, uid: d.uid, resourceVersion: d.resourceVersion }, type, reason, message);

  const guarded = async (fn: () => Promise<string | void>): Promise<WriteResult> => {
    try {
      const resourceVersion = await fn();
      return resourceVersion ? { ok: true, resourceVersion } : { ok: true };
    } catch (e) {
      if (isStatus(e, 409)) return { ok: false, reason: 'Conflict', message: (e as Error).message };
      if (isStatus(e, 404)) return { ok: false, reason: 'NotFound', message: (e as Error).message };
      if (isStatus(e, 400, 403, 422)) return { ok: false, reason: 'Rejected', message: (e as Error).message };
      throw e;
    }
  };

  return {
    /** The Deployment, its ReplicaSets and their pod counts, read from the API (not a cache). */
    async observeDeployment(key: DeploymentKey): Promise<DeploymentObservation> {
      return apiCall(async () => {
        let deployment: DeploymentView;
        try {
          deployment = deploymentView((await rest.request<KubeObject>('GET', deployPath(key.namespace, key.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return { replicaSets: [], activePodsByReplicaSet: {} };
          throw e;
        }
        const replicaSets = (await listAll(rest, rsPath(key.namespace))).map(replicaSetView).filter((rs) => {
          const ref = controllerRef(rs.ownerReferences);
          return ref ? ref.uid === deployment.uid : selectorMatches(deployment.selector, rs.labels);
        });
        const activePodsByReplicaSet: Record<string, number> = {};
        if (deployment.strategy.type === 'Recreate') {
          const rsUids = new Set(replicaSets.map((r) => r.uid));
          for (const p of await listAll(rest, resourcePath(RESOURCES.pods, key.namespace))) {
            const ref = controllerRef(p.metadata?.ownerReferences);
            const phase = (p.status as { phase?: string } | undefined)?.phase;
            if (ref && rsUids.has(ref.uid) && phase !== 'Succeeded' && phase !== 'Failed') {
              activePodsByReplicaSet[ref.uid] = (activePodsByReplicaSet[ref.uid] ?? 0) + 1;
            }
          }
        }
        // dated by the newest object read, not by the list: a list's version is the whole store's
        // revision, which a cache watching only ReplicaSets reaches at their next change or bookmark
        const newestReplicaSet = replicaSets.reduce((v, rs) => (newerVersion(rs.resourceVersion, v) ? rs.resourceVersion : v), '0');
        return fitObservation({ deployment, replicaSets, activePodsByReplicaSet, versions: { deployments: deployment.resourceVersion, replicaSets: newestReplicaSet } });
      });
    },

    async adoptReplicaSets(req: { deployment: DeploymentRef; replicaSets: OwnedRef[] }): Promise<{ changed: number }> {
      return apiCall(async () => {
        const fresh = deploymentView((await rest.request<KubeObject>('GET', deployPath(req.deployment.namespace, req.deployment.name))).body);
        if (fresh.uid !== req.deployment.uid || fresh.deletionTimestamp) return { changed: 0 };
        let changed = 0;
        for (const rs of req.replicaSets) {
          if ('patched' in (await patchOwnerReferences(rest, rsPath(req.deployment.namespace, rs.name), rs.uid, adoptBy(ownerRef(req.deployment))))) changed++;
        }
        return { changed };
      });
    },

    async releaseReplicaSets(req: { deployment: DeploymentRef; replicaSets: OwnedRef[] }): Promise<{ changed: number }> {
      return apiCall(async () => {
        let changed = 0;
        for (const rs of req.replicaSets) {
          if ('patched' in (await patchOwnerReferences(rest, rsPath(req.deployment.namespace, rs.name), rs.uid, releaseFrom(req.deployment.uid)))) changed++;
        }
        return { changed };
      });
    },

    /** One write of a plan. Conflicts and collisions are results, not errors: the workflow re-observes. */
    async applyDeploymentAction(req: DeploymentWrite): Promise<WriteResult> {
      const { deployment: d, action: a } = req;
      const ns = d.namespace;
      const log = deps.logger.child({ controller: 'deployment', key: `${ns}/${d.name}` });
      return apiCall(async () => {
        let result: WriteResult;
        switch (a.type) {
          case 'createReplicaSet': {
            const body = {
              apiVersion: 'apps/v1', kind: 'ReplicaSet',
              metadata: { name: a.name, namespace: ns, labels: a.labels, annotations: a.annotations, ownerReferences: a.ownerReferences },
              spec: { replicas: a.replicas, minReadySeconds: a.minReadySeconds, selector: a.selector, template: a.template },
            };
            try {
              const created = await rest.request<KubeObject>('POST', rsPath(ns), { body });
              const rv = created.body.metadata?.resourceVersion;
              result = rv ? { ok: true, resourceVersion: rv } : { ok: true };
              if (a.replicas > 0) event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${a.name} from 0 to ${a.replicas}`);
            } catch (e) {
              if (!isStatus(e, 409)) throw e;
              // ours from an earlier attempt of this very write, or someone else's: the workflow decides
              const existing = replicaSetView((await rest.request<KubeObject>('GET', rsPath(ns, a.name))).body);
              result = { ok: false, reason: 'AlreadyExists', message: `replica set ${a.name} already exists`, existing };
            }
            break;
          }
          case 'scaleReplicaSet':
          case 'updateReplicaSetAnnotations':
            result = await guarded(async () => {
              const patchedRs = await rest.request<KubeObject>('PATCH', rsPath(ns, a.name), {
                body: {
                  metadata: { uid: a.uid, resourceVersion: a.resourceVersion, annotations: a.annotations },
                  spec: {
                    ...(a.type === 'scaleReplicaSet' ? { replicas: a.replicas } : {}),
                    ...(a.minReadySeconds !== undefined ? { minReadySeconds: a.minReadySeconds } : {}),
                  },
                },
                contentType: 'application/merge-patch+json',
              });
              return patchedRs.body.metadata?.resourceVersion;
            });
            if (result.ok && a.type === 'scaleReplicaSet' && req.fromReplicas !== undefined && req.fromReplicas !== a.replicas) {
              const dir = a.replicas > req.fromReplicas ? 'up' : 'down';
              event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${dir} replica set ${a.name} from ${req.fromReplicas} to ${a.replicas}`);
            }
            break;
          case 'deleteReplicaSet':
            result = await guarded(async () => {
              try {
                await rest.request('DELETE', rsPath(ns, a.name), { body: { preconditions: { uid: a.uid }, propagationPolicy: 'Background' } });
              } catch (e) {
                if (!isStatus(e, 404, 409)) throw e; // already gone, or another object now has the name
              }
            });
            break;
          case 'updateDeploymentAnnotations':
            result = await guarded(async () => {
              const r = await updateGuarded(rest, deployPath(ns, d.name), d, (o) => {
                o.metadata = { ...o.metadata, annotations: { ...o.metadata?.annotations, ...a.annotations } };
              }, undefined, deps.local?.at(RESOURCES.deployments, ns, d.name, d));
              return r.metadata?.resourceVersion;
            });
            break;
          case 'updateDeploymentStatus':
            result = await guarded(async () => {
              const r = await updateGuarded(rest, deployPath(ns, d.name), d, (o) => {
                o.status = withoutEmpty({ ...a.status, conditions: a.status.conditions.length ? a.status.conditions : undefined });
              }, 'status', deps.local?.at(RESOURCES.deployments, ns, d.name, d));
              return r.metadata?.resourceVersion;
            });
            break;
        }
        heartbeat();
        log.info({ action: a.type, reason: a.reason, ok: result.ok, ...(result.ok ? {} : { failure: result.reason }) }, 'deployment write');
        return result;
      });
    },
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
