import type { KubeRest } from '../../activities/kube/rest';

/** A PersistentVolume with this annotation is refused by the stand-in attacher, with its value as the error. */
export const ATTACH_ERROR_ANNOTATION = 'e2e.temporal-kcm.dev/attach-error';

interface VolumeAttachment {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { source?: { persistentVolumeName?: string } };
  status?: { attached?: boolean; attachError?: { message?: string } };
}

/**
 * The stack's stand-in for a CSI driver's external-attacher, as kwok stands in for kubelets: every
 * VolumeAttachment it sees is marked attached through the status subresource, unless its
 * PersistentVolume carries ATTACH_ERROR_ANNOTATION, which it reports as the attach error. It keeps
 * no finalizer, so a deleted attachment is gone at once (a detach that always succeeds).
 */
export function startCsiAttacher(rest: KubeRest, everyMs = 250): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        const vas = (await rest.request<{ items: VolumeAttachment[] }>('GET', '/apis/storage.k8s.io/v1/volumeattachments')).body.items;
        for (const va of vas) {
          if (va.metadata.deletionTimestamp || va.status?.attached || va.status?.attachError) continue;
          const pv = va.spec.source?.persistentVolumeName;
          const refused = pv
            ? (await rest.request<{ metadata: { annotations?: Record<string, string> } }>('GET', `/api/v1/persistentvolumes/${pv}`).catch(() => undefined))?.body.metadata.annotations?.[ATTACH_ERROR_ANNOTATION]
            : undefined;
          const status = refused !== undefined ? { attached: false, attachError: { message: refused, time: new Date().toISOString() } } : { attached: true };
          await rest.request('PATCH', `/apis/storage.k8s.io/v1/volumeattachments/${va.metadata.name}/status`, {
            body: { status }, contentType: 'application/merge-patch+json',
          }).catch(() => undefined);
        }
      } catch {
        // the API server restarting or a list racing a delete: try again next round
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
