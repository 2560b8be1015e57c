import type { PersistentVolumeClaimJson, PersistentVolumeJson } from '../../workflows/pv-binder/types';
import type { Logger } from 'pino';
import type { LocalReads } from '../informers/local-reads';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { ANN_RESIZER, EVENT_COMPONENT, MIGRATABLE_SOURCES, type ExpansionClaim, type ExpansionVolume } from '../../workflows/pv-expander/logic';
import { EXPANSION_CLAIM_FIELDS, expansionClaim } from './projections';

export interface ExpansionObservation {
  claim: ExpansionClaim;
  /** absent when it could not be read */
  volume?: ExpansionVolume;
}

export interface ReportExpansionRequest {
  claim: ExpansionClaim;
  message: string;
  /** the CSI resizer to name on the claim, for a migrated volume */
  resizer?: string;
  reason: string;
}

export interface PvExpanderDeps {
  rest: KubeRest;
  reader: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
  local: LocalReads;
}

function expansionVolume(v: PersistentVolumeJson): ExpansionVolume {
  const spec = (v.spec ?? {}) as Record<string, unknown>;
  const source = Object.keys(MIGRATABLE_SOURCES).find((k) => spec[k] != null);
  const ref = v.spec?.claimRef;
  return {
    name: v.metadata?.name ?? '',
    ...(ref ? { claimRef: { namespace: ref.namespace ?? '', uid: ref.uid ?? '' } } : {}),
    annotations: { ...v.metadata?.annotations },
    ...(source ? { inTreePlugin: MIGRATABLE_SOURCES[source] } : {}),
  };
}

/** The expand controller's I/O: the claim from the cache, its volume from the API (as upstream reads it), the Event. */
export function createPvExpanderActivities(deps: PvExpanderDeps) {
  const log = deps.logger.child({ controller: 'persistentvolume-expander' });
  return {
    async observeExpansion(req: { namespace: string; name: string }): Promise<ExpansionObservation | undefined> {
      return apiCall(async () => {
        let c = deps.local.get(RESOURCES.persistentVolumeClaims, req.namespace, req.name, EXPANSION_CLAIM_FIELDS);
        if (!c) {
          try {
            c = (await deps.reader.request<KubeObject>('GET', resourcePath(RESOURCES.persistentVolumeClaims, req.namespace, req.name))).body;
          } catch (e) {
            if (isStatus(e, 404)) return undefined;
            throw e;
          }
        }
        const claim = expansionClaim(c);
        try {
          const v = (await deps.reader.request<PersistentVolumeJson>('GET', resourcePath(RESOURCES.persistentVolumes, undefined, claim.volumeName))).body;
          return { claim, volume: expansionVolume(v) };
        } catch (e) {
          if (isStatus(e, 404)) return { claim };
          throw e;
        }
      });
    },

    /** The ExternalExpanding Event; for a migrated volume the resizer annotation first, through the status subresource as upstream patches it. */
    async reportExpansion(req: ReportExpansionRequest): Promise<void> {
      const c = req.claim;
      const target = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: c.namespace, name: c.name, uid: c.uid };
      deps.recordEvent(EVENT_COMPONENT, target, 'Normal', 'ExternalExpanding', req.message);
      if (req.resizer && c.annotations[ANN_RESIZER] !== req.resizer) {
        await apiCall(async () => {
          try {
            await deps.rest.request<PersistentVolumeClaimJson>('PATCH', `${resourcePath(RESOURCES.persistentVolumeClaims, c.namespace, c.name)}/status`, {
              body: { metadata: { uid: c.uid, annotations: { [ANN_RESIZER]: req.resizer } } }, contentType: 'application/strategic-merge-patch+json',
            });
          } catch (e) {
            deps.recordEvent(EVENT_COMPONENT, target, 'Warning', 'ExternalExpanding', `error setting resizer annotation to pvc ${c.namespace}/${c.name}, with error ${(e as Error).message}`);
            throw e;
          }
        });
      }
      log.info({ claim: `${c.namespace}/${c.name}`, request: c.request, capacity: c.capacity, resizer: req.resizer, reason: req.reason }, 'waiting for an external controller to expand the claim');
    },
  };
}

export type PvExpanderActivities = ReturnType<typeof createPvExpanderActivities>;
