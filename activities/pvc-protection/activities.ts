import type { Logger } from 'pino';
import { PVC_PROTECTION_FINALIZER } from '../../workflows/common/storage-protection';
import { CONTROLLER, podUsingPvc, type PvcView } from '../../workflows/pvc-protection/logic';
import type { LocalReads } from '../informers/local-reads';
import { heartbeat } from '../kube/heartbeat';
import { apiCall } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { writeProtectionFinalizer, type ProtectionFinalizerOutcome } from '../kube/protection-finalizer';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { pvcPodView } from './projections';

export interface FindPodUsingPvcRequest {
  reason: string;
  pvc: PvcView;
}

export interface FindPodUsingPvcResult {
  /** the first pod by name that uses the claim; absent: none does */
  pod?: string;
  /** how many pods the live list returned */
  listed: number;
}

export interface SetPvcProtectionRequest {
  reason: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** add (true) or remove (false) kubernetes.io/pvc-protection */
  present: boolean;
}

export interface PvcProtectionDeps {
  rest: KubeRest;
  logger: Logger;
  local: LocalReads;
}

const LIST_PAGE = 500;

/** The PVC protection controller's I/O: the live pod list upstream's askAPIServer makes, and the finalizer write. */
export function createPvcProtectionActivities(deps: PvcProtectionDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });
  return {
    /**
     * Lists the claim's namespace's pods from the API server (not the watch, which may not have
     * seen a pod created a moment ago) and says whether any of them uses the claim, by upstream's
     * podUsesPVC. Only asked once the watch found no pod using it.
     */
    async findPodUsingPvc(req: FindPodUsingPvcRequest): Promise<FindPodUsingPvcResult> {
      return apiCall(async () => {
        const key = `${req.pvc.namespace}/${req.pvc.name}`;
        const pods = [];
        let cont = '';
        do {
          const q = `?limit=${LIST_PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
          const r = await deps.rest.request<{ items: KubeObject[]; metadata?: { continue?: string } }>('GET', `${resourcePath(RESOURCES.pods, req.pvc.namespace)}${q}`);
          for (const o of r.body.items ?? []) pods.push(pvcPodView(o));
          cont = r.body.metadata?.continue ?? '';
          heartbeat();
        } while (cont);
        const user = podUsingPvc(pods, req.pvc);
        if (user) log.info({ key, pod: user.name }, 'keeping PVC because it is being used');
        else log.info({ key, listed: pods.length }, 'PVC is unused');
        return { ...(user ? { pod: user.name } : {}), listed: pods.length };
      });
    },

    /** Adds or removes kubernetes.io/pvc-protection on the claim at the version decided on. */
    async setPvcProtection(req: SetPvcProtectionRequest): Promise<{ outcome: ProtectionFinalizerOutcome }> {
      return apiCall(async () => {
        const outcome = await writeProtectionFinalizer(deps.rest, deps.local, RESOURCES.persistentVolumeClaims, { ...req, finalizer: PVC_PROTECTION_FINALIZER });
        const key = `${req.namespace}/${req.name}`;
        if (outcome === 'written') log.info({ key, reason: req.reason }, req.present ? 'added protection finalizer to PVC' : 'removed protection finalizer from PVC');
        else log.info({ key, outcome, present: req.present }, 'protection finalizer not written');
        return { outcome };
      });
    },
  };
}

export type PvcProtectionActivities = ReturnType<typeof createPvcProtectionActivities>;
