import { ROOT_CA_CONFIGMAP, RootCaConfigMapView, rootCaWriteNeeded } from '../../workflows/root-ca-cert-publisher/logic';
import type { RootCaEvent, RootCaWorkflowInput } from '../../workflows/root-ca-cert-publisher/workflow';
import { rootCaWorkflowId } from '../../workflows/root-ca-cert-publisher/workflow';
import { rootCaView, sha256Hex } from './activities';
import type { InformerInput, RouteFamily } from '../informers/family';
import { NAMESPACES_PATH, NamespacePhases } from '../informers/namespace-phases';
import type { Handler } from '../informers/reflector';
import type { Signaller } from '../informers/signaller';
import { rootCaWorkflow } from '../../workflows/root-ca-cert-publisher/workflow';

/** Only the one ConfigMap name matters, so only it is watched. */
export const ROOT_CA_CONFIGMAPS_PATH = `/api/v1/configmaps?fieldSelector=${encodeURIComponent(`metadata.name=${ROOT_CA_CONFIGMAP}`)}`;

/**
 * Routes of the root-ca-cert-publisher: an active namespace whose kube-root-ca.crt is missing or
 * differs from the root CA starts that namespace's publishing workflow, whether the namespace
 * was just created or the ConfigMap was edited or deleted.
 */
export function rootCaRoutes(input: InformerInput, signaller: Signaller, rootCa: string | undefined): RouteFamily | undefined {
  if (!input.controllers.includes('root-ca-cert-publisher') || !rootCa) return undefined;
  const caSha256 = sha256Hex(rootCa);
  const maps = new Map<string, RootCaConfigMapView>();
  let mapsListed = false;

  const check = (ns: string) => {
    if (!mapsListed) return;
    const active = phases.isActive(ns);
    const configMap = maps.get(ns);
    if (!rootCaWriteNeeded(active, configMap, caSha256)) return;
    const args: RootCaWorkflowInput = { namespace: ns, caSha256, tuning: input.tuning };
    const event: RootCaEvent = { active, ...(configMap ? { configMap } : {}) };
    signaller.queue({ controller: 'root-ca-cert-publisher', workflow: rootCaWorkflow, kind: 'Namespace', namespace: ns, name: ns, uid: '',
      args, workflowId: rootCaWorkflowId(ns) }, event, (_a, b) => b);
  };
  const phases = new NamespacePhases((ns) => check(ns));

  const configMaps: Handler = {
    relisted(objects) {
      maps.clear();
      for (const o of objects) maps.set(o.metadata?.namespace ?? '', rootCaView(o));
      mapsListed = true;
      for (const ns of [...phases.activeNamespaces()]) check(ns);
    },
    event(type, o) {
      const ns = o.metadata?.namespace ?? '';
      if (type === 'DELETED') maps.delete(ns);
      else maps.set(ns, rootCaView(o));
      check(ns);
    },
  };

  return {
    handlers: new Map<string, Handler>([[NAMESPACES_PATH, phases.handler], [ROOT_CA_CONFIGMAPS_PATH, configMaps]]),
    sizes: () => ({ rootCaConfigMaps: maps.size }),
  };
}
