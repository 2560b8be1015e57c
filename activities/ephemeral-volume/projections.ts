import { controllerRef } from '../../workflows/common/controller-ref';
import { volumeClaims, type ClaimState, type ClaimTemplate, type EphemeralPodView } from '../../workflows/ephemeral-volume/logic';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';

/**
 * What ephemeralPodView reads of a pod: its volumes, ephemeral ones whole (their claim template
 * is copied into the claim), and the pod-PVC index's claim names.
 */
export const EPHEMERAL_POD_FIELDS: FieldMask = {
  metadata: true,
  spec: { volumes: { name: true, persistentVolumeClaim: { claimName: true }, ephemeral: true } },
};

/** What claimState reads of a claim: its controller owner. */
export const EPHEMERAL_PVC_FIELDS: FieldMask = { metadata: true };

type PodObject = KubeObject & {
  spec?: { volumes?: Array<{ name: string; ephemeral?: { volumeClaimTemplate?: { metadata?: ClaimTemplate['metadata'] & Record<string, unknown>; spec?: Record<string, unknown> } } | null }> | null };
};

export function ephemeralPodView(o: KubeObject): EphemeralPodView {
  const p = o as PodObject;
  const m = p.metadata ?? {};
  const name = m.name ?? '';
  const volumes = (p.spec?.volumes ?? []).filter((v) => !!v.ephemeral).map((v) => {
    const t = v.ephemeral?.volumeClaimTemplate;
    const template: ClaimTemplate = {
      ...(t?.metadata?.labels || t?.metadata?.annotations ? { metadata: {
        ...(t.metadata.labels ? { labels: t.metadata.labels } : {}),
        ...(t.metadata.annotations ? { annotations: t.metadata.annotations } : {}),
      } } : {}),
      spec: t?.spec ?? {},
    };
    return { name: v.name, template };
  });
  return { namespace: m.namespace ?? '', name, uid: m.uid ?? '', deleting: !!m.deletionTimestamp, volumes: volumeClaims(name, volumes) };
}

export function claimState(o: KubeObject): ClaimState {
  const ref = controllerRef(o.metadata?.ownerReferences);
  return { uid: o.metadata?.uid ?? '', ...(ref ? { controllerUid: ref.uid } : {}) };
}
