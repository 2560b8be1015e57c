import type { Logger } from 'pino';
import { PV_PROTECTION_FINALIZER } from '../../workflows/common/storage-protection';
import { CONTROLLER } from '../../workflows/pv-protection/logic';
import type { LocalReads } from '../informers/local-reads';
import { apiCall } from '../kube/failures';
import { writeProtectionFinalizer, type ProtectionFinalizerOutcome } from '../kube/protection-finalizer';
import type { KubeRest } from '../kube/rest';
import { RESOURCES } from '../kube/resources';

export interface SetPvProtectionRequest {
  reason: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** add (true) or remove (false) kubernetes.io/pv-protection */
  present: boolean;
}

export interface PvProtectionDeps {
  rest: KubeRest;
  logger: Logger;
  local: LocalReads;
}

/** The PV protection controller's one write. */
export function createPvProtectionActivities(deps: PvProtectionDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });
  return {
    /** Adds or removes kubernetes.io/pv-protection on the volume at the version decided on. */
    async setPvProtection(req: SetPvProtectionRequest): Promise<{ outcome: ProtectionFinalizerOutcome }> {
      return apiCall(async () => {
        const outcome = await writeProtectionFinalizer(deps.rest, deps.local, RESOURCES.persistentVolumes,
          { ...req, namespace: '', finalizer: PV_PROTECTION_FINALIZER });
        if (outcome === 'written') log.info({ key: req.name, reason: req.reason }, req.present ? 'added protection finalizer to PV' : 'removed protection finalizer from PV');
        else log.info({ key: req.name, outcome, present: req.present }, 'protection finalizer not written');
        return { outcome };
      });
    },
  };
}

export type PvProtectionActivities = ReturnType<typeof createPvProtectionActivities>;
