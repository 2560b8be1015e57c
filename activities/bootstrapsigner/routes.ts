import {
  CONFIGMAP_NAME,
  CONFIGMAP_NAMESPACE,
  CONTROLLER,
  SIGNER_DATA_KEYS,
  isClusterInfo,
  isSignerSecret,
} from '../../workflows/bootstrapsigner/logic';
import {
  bootstrapSignerWorkflow,
  bootstrapSignerWorkflowId,
  mergeBootstrapSignerEvents,
  type BootstrapSignerEvent,
  type BootstrapSignerWorkflowInput,
} from '../../workflows/bootstrapsigner/workflow';
import type { RouteContext } from '../../workers/descriptor';
import type { RouteFamily } from '../informers/family';
import type { FieldMask } from '../informers/fields';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';

type CachedSecret = KubeObject & { type?: string; data?: Record<string, string> };

/** What the signer's watch reads of a ConfigMap: its name and resourceVersion (the pass reads the data itself). */
export const SIGNER_CONFIGMAP_FIELDS: FieldMask = { metadata: true };

/** What it reads of a Secret: its type and the digests of the values a signature depends on. */
export const SIGNER_SECRET_FIELDS: FieldMask = {
  metadata: true,
  type: true,
  data: Object.fromEntries(SIGNER_DATA_KEYS.map((k) => [k, true])),
};

/** The watch's view of a Secret: whether it is a bootstrap token in kube-system, and what a signature depends on. */
export function cachedSignerSecret(o: KubeObject): { namespace: string; name: string; mine: boolean; fingerprint: string } {
  const s = o as CachedSecret;
  const m = s.metadata ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    mine: isSignerSecret(m.namespace ?? '', s.type),
    // the cache keeps the SHA-256 of each value ('' when empty), never the value
    fingerprint: [m.uid ?? '', ...SIGNER_DATA_KEYS.map((k) => s.data?.[k] ?? '')].join('|'),
  };
}

/**
 * Routes of the bootstrap signer, as upstream's two filtered informers poke its one work item:
 * cluster-info added or updated (its deletion pokes nothing), and a bootstrap token Secret in
 * kube-system added, deleted, or updated in a value a signature depends on (upstream pokes on
 * every update; one that changes nothing signed would find nothing to do). Every event goes to the
 * deployment's one signer workflow.
 */
export function bootstrapSignerRoutes({ input, signaller, cache, baseTaskQueue }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const queue = (event: BootstrapSignerEvent) => {
    const args: BootstrapSignerWorkflowInput = { tuning: input.tuning };
    signaller.queue({
      controller: CONTROLLER, workflow: bootstrapSignerWorkflow, kind: 'ConfigMap', namespace: CONFIGMAP_NAMESPACE, name: CONFIGMAP_NAME,
      uid: '', args, workflowId: bootstrapSignerWorkflowId(baseTaskQueue),
    }, event, mergeBootstrapSignerEvents);
  };

  cache.watch(RESOURCES.configMaps, SIGNER_CONFIGMAP_FIELDS, {
    onEvent(ev) {
      if (ev.type === 'deleted') return;
      const m = ev.obj.metadata ?? {};
      if (!isClusterInfo(m.namespace ?? '', m.name ?? '')) return;
      queue({ configMapRv: m.resourceVersion ?? '', ...(ev.source !== 'watch' ? { listed: true } : {}) });
    },
  });

  cache.watch(RESOURCES.secrets, SIGNER_SECRET_FIELDS, {
    onEvent(ev) {
      const now = cachedSignerSecret(ev.type === 'deleted' ? ev.old : ev.obj);
      if (ev.type === 'updated' && ev.source === 'watch') {
        const before = cachedSignerSecret(ev.old);
        if (!now.mine && !before.mine) return;
        if (now.mine && before.mine && now.fingerprint === before.fingerprint) return;
      } else if (!now.mine) {
        return;
      }
      queue({ secrets: [now.name], ...(ev.source !== 'watch' ? { listed: true } : {}) });
    },
  });

  return {};
}
