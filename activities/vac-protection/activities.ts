import type { Logger } from 'pino';
import { VAC_PROTECTION_FINALIZER } from '../../workflows/common/storage-protection';
import { CONTROLLER } from '../../workflows/vac-protection/logic';
import type { LocalReads } from '../informers/local-reads';
import { apiCall } from '../kube/failures';
import { writeProtectionFinalizer, type ProtectionFinalizerOutcome } from '../kube/protection-finalizer';
import type { KubeRest } from '../kube/rest';
import { RESOURCES } from '../kube/resources';

export interface SetVacProtectionRequest {
  reason: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** add (true) or remove (false) kubernetes.io/vac-protection */
  present: boolean;
}

export interface VacProtectionDeps {
  rest: KubeRest;
  logger: Logger;
  local: LocalReads;
}

/** The VolumeAttributesClass protection controller's one write. */
export function createVacProtectionActivities(deps: VacProtectionDeps) {
  const log = deps.logger.child({ controller: CONTROLLER });
  return {
    /** Adds or removes kubernetes.io/vac-protection on the class at the version decided on. */
    async setVacProtection(req: SetVacProtectionRequest): Promise<{ outcome: ProtectionFinalizerOutcome }> {
      return apiCall(async () => {
        const outcome = await writeProtectionFinalizer(deps.rest, deps.local, RESOURCES.volumeAttributesClasses,
          { ...req, namespace: '', finalizer: VAC_PROTECTION_FINALIZER });
        if (outcome === 'written') log.info({ key: req.name, reason: req.reason }, req.present ? 'added protection finalizer to VAC' : 'removed protection finalizer from VAC');
        else log.info({ key: req.name, outcome, present: req.present }, 'protection finalizer not written');
        return { outcome };
      });
    },
  };
}

export type VacProtectionActivities = ReturnType<typeof createVacProtectionActivities>;
