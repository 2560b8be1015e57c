import type { KubeObject } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import type { StoreIndex } from './store';

const namespaceOf = (o: KubeObject) => o.metadata?.namespace ?? '';

/** Objects by namespace. */
export const BY_NAMESPACE: StoreIndex = { name: 'namespace', keys: (o) => [namespaceOf(o)] };

/** Objects by the UID of their controller (upstream's controller_ref_manager looks pods up this way). */
export const BY_CONTROLLER_UID: StoreIndex = {
  name: 'controller-uid',
  keys: (o) => {
    const ref = controllerRef(o.metadata?.ownerReferences);
    return ref ? [ref.uid] : [];
  },
};

/** Objects with no controller, by namespace: what a selector-based owner may adopt. */
export const ORPHANS_BY_NAMESPACE: StoreIndex = {
  name: 'orphans-by-namespace',
  keys: (o) => (controllerRef(o.metadata?.ownerReferences) ? [] : [namespaceOf(o)]),
};

/** Pods by the node they are bound to (upstream's spec.nodeName index). */
export const PODS_BY_NODE: StoreIndex = {
  name: 'node-name',
  keys: (o) => {
    const node = (o.spec as { nodeName?: string } | undefined)?.nodeName;
    return node ? [node] : [];
  },
};
