import { ROOT_CA_CONFIGMAP, rootCaWriteNeeded } from '../../workflows/root-ca-cert-publisher/logic';
import type { RootCaEvent, RootCaWorkflowInput } from '../../workflows/root-ca-cert-publisher/workflow';
import { rootCaWorkflowId } from '../../workflows/root-ca-cert-publisher/workflow';
import { rootCaView, sha256Hex } from './activities';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import type { RouteFamily } from '../informers/family';
import type { FieldMask } from '../informers/fields';
import { NamespacePhases } from '../informers/namespace-phases';
import type { RouteContext } from '../../workers/descriptor';
import { rootCaWorkflow } from '../../workflows/root-ca-cert-publisher/workflow';

/**
 * What rootCaView reads of a ConfigMap: every data key (an extra one needs an update) and the
 * bundle. The store holds every ConfigMap, pruned to this; only kube-root-ca.crt is looked at.
 */
export const ROOT_CA_CONFIGMAP_FIELDS: FieldMask = { metadata: true, data: true };

const isRootCaMap = (o: KubeObject) => o.metadata?.name === ROOT_CA_CONFIGMAP;

/**
 * Routes of the root-ca-cert-publisher: an active namespace whose kube-root-ca.crt is missing or
 * differs from the root CA starts that namespace's publishing workflow, whether the namespace
 * was just created or the ConfigMap was edited or deleted.
 */
export function rootCaRoutes({ input, signaller, cache, rootCa }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes('root-ca-cert-publisher') || !rootCa) return undefined;
  const caSha256 = sha256Hex(rootCa);
  // registered before the namespaces, whose listener reads it; its own listener comes last (below)
  const configMaps = cache.watch(RESOURCES.configMaps, ROOT_CA_CONFIGMAP_FIELDS);

  const check = (ns: string, active: boolean) => {
    // until the ConfigMaps are listed every namespace would look as if it lacked one
    if (!configMaps.synced) return;
    const found = configMaps.getByName(ns, ROOT_CA_CONFIGMAP);
    const configMap = found && rootCaView(found);
    if (!rootCaWriteNeeded(active, configMap, caSha256)) return;
    const args: RootCaWorkflowInput = { namespace: ns, caSha256, tuning: input.tuning };
    const event: RootCaEvent = { active, ...(configMap ? { configMap } : {}) };
    signaller.queue({ controller: 'root-ca-cert-publisher', workflow: rootCaWorkflow, kind: 'Namespace', namespace: ns, name: ns, uid: '',
      args, workflowId: rootCaWorkflowId(ns) }, event, (_a, b) => b);
  };
  const phases = NamespacePhases.watch(cache, check);

  configMaps.subscribe({
    onEvent(ev) {
      // a (re)list is judged as a whole once it is in (below)
      if (ev.source !== 'watch') return;
      const o = ev.type === 'deleted' ? ev.old : ev.obj;
      if (!isRootCaMap(o)) return;
      const ns = o.metadata?.namespace ?? '';
      check(ns, phases.isActive(ns));
    },
    onListed() {
      for (const ns of [...phases.activeNamespaces()]) check(ns, true);
    },
  });

  return {};
}
