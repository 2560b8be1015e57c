import type { Logger } from 'pino';
import { CONTROLLER, EVENT_COMPONENT, FAILED_BINDING, claimFor, type ClaimTemplate, type Claims, type EphemeralPodView } from '../../workflows/ephemeral-volume/logic';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { claimState, ephemeralPodView } from './projections';

export interface ObserveEphemeralPodRequest {
  namespace: string;
  name: string;
}

export interface EphemeralPodObservation {
  /** absent when the pod is gone */
  pod?: EphemeralPodView;
  claims: Claims;
}

export interface CreateEphemeralClaimRequest {
  reason: string;
  namespace: string;
  pod: string;
  podUid: string;
  volume: string;
  claim: string;
  template: ClaimTemplate;
}

/**
 * - `created`: this call created it;
 * - `exists`: it was there already and the pod controls it (a retried create that had landed);
 * - `rejected`: the API refused it (a foreign claim under the name, an invalid template, a quota):
 *   `message` is the server's, as upstream puts it in its Event.
 */
export type CreateEphemeralClaimResult =
  | { outcome: 'created' | 'exists'; uid: string }
  | { outcome: 'rejected'; message: string };

export interface RecordEphemeralVolumeFailureRequest {
  namespace: string;
  pod: string;
  podUid: string;
  message: string;
}

export interface EphemeralVolumeDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

const podPath = (ns: string, name: string) => resourcePath(RESOURCES.pods, ns, name);
const claimPath = (ns: string, name?: string) => resourcePath(RESOURCES.persistentVolumeClaims, ns, name);

async function readOrUndefined(rest: KubeRest, path: string): Promise<KubeObject | undefined> {
  try {
    return (await rest.request<KubeObject>('GET', path)).body;
  } catch (e) {
    if (isStatus(e, 404)) return undefined;
    throw e;
  }
}

/** The ephemeral volume controller's I/O: a fresh look at a pod and its claims, the create, and the Event. */
export function createEphemeralVolumeActivities(deps: EphemeralVolumeDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });
  return {
    /** The pod and each of its ephemeral volumes' claims as the API server has them now (after a failed sync). */
    async observeEphemeralPod(req: ObserveEphemeralPodRequest): Promise<EphemeralPodObservation> {
      return apiCall(async () => {
        const o = await readOrUndefined(deps.rest, podPath(req.namespace, req.name));
        if (!o) return { claims: {} };
        const pod = ephemeralPodView(o);
        const claims: Claims = {};
        for (const v of pod.volumes) {
          const c = await readOrUndefined(deps.rest, claimPath(req.namespace, v.claim));
          claims[v.claim] = c ? claimState(c) : null;
        }
        return { pod, claims };
      });
    },

    /**
     * Creates the volume's claim, controlled by the pod. AlreadyExists is the pod's own claim when
     * the pod controls what is there (this create, retried after its replica died); anything else
     * there is reported as upstream reports its failed create.
     */
    async createEphemeralClaim(req: CreateEphemeralClaimRequest): Promise<CreateEphemeralClaimResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.claim}`;
        const body = claimFor({ name: req.pod, uid: req.podUid }, { name: req.volume, claim: req.claim, template: req.template });
        try {
          const r = await deps.rest.request<KubeObject>('POST', claimPath(req.namespace), { body });
          log.info({ key, pod: `${req.namespace}/${req.pod}`, volume: req.volume }, 'created PVC for ephemeral volume');
          return { outcome: 'created', uid: r.body.metadata?.uid ?? '' };
        } catch (e) {
          if (isStatus(e, 409)) {
            const there = await readOrUndefined(deps.rest, claimPath(req.namespace, req.claim));
            const state = there && claimState(there);
            if (state?.controllerUid === req.podUid) {
              log.info({ key, pod: `${req.namespace}/${req.pod}` }, 'PVC for ephemeral volume already created (a retried create)');
              return { outcome: 'exists', uid: state.uid };
            }
            log.info({ key, pod: `${req.namespace}/${req.pod}` }, 'a PVC the pod does not own holds the name');
            return { outcome: 'rejected', message: e.serverMessage };
          }
          if (e instanceof ApiError && !e.transient) {
            log.info({ key, status: e.status, message: e.serverMessage }, 'PVC create rejected');
            return { outcome: 'rejected', message: e.serverMessage };
          }
          throw e;
        }
      });
    },

    /** The Warning Event upstream records on the pod for a volume whose sync failed. */
    async recordEphemeralVolumeFailure(req: RecordEphemeralVolumeFailureRequest): Promise<void> {
      deps.recordEvent(EVENT_COMPONENT, { apiVersion: 'v1', kind: 'Pod', namespace: req.namespace, name: req.pod, uid: req.podUid },
        'Warning', FAILED_BINDING, req.message);
    },
  };
}

export type EphemeralVolumeActivities = ReturnType<typeof createEphemeralVolumeActivities>;
