/*
 * A daemon pod as upstream's syncNodes makes it: the template with the daemon tolerations and the
 * revision hash label (CreatePodTemplate), pinned to its node by node affinity, controlled by the
 * DaemonSet. Its name is deterministic (see podName in ../replicaset/logic), so a create retried
 * after a crash finds the pod it made instead of making a second one on the node.
 */
import { REVISION_HASH_LABEL } from '../common/controller-history';
import type { ControlledPodManifest, OwnerRef } from '../common/meta';
import { TEMPLATE_GENERATION_LABEL, daemonPodTolerations, pinnedAffinity, type DaemonPodSpecView } from './predicates';
import type { DaemonSetView } from './types';

export type DaemonPodManifest = ControlledPodManifest;

export function daemonSetControllerRef(ds: Pick<DaemonSetView, 'name' | 'uid'>): OwnerRef {
  return { apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.name, uid: ds.uid, controller: true, blockOwnerDeletion: true };
}

export function daemonPodManifest(ds: Pick<DaemonSetView, 'namespace' | 'name' | 'uid' | 'template' | 'templateGeneration'>, hash: string, name: string, node: string): DaemonPodManifest {
  const meta = ds.template.metadata ?? {};
  const spec = JSON.parse(JSON.stringify(ds.template.spec ?? {})) as Record<string, unknown> & DaemonPodSpecView;
  spec.tolerations = daemonPodTolerations(spec.tolerations, !!spec.hostNetwork);
  spec.affinity = pinnedAffinity(spec.affinity, node);
  const labels: Record<string, string> = { ...(meta.labels ?? {}) };
  if (ds.templateGeneration !== undefined) labels[TEMPLATE_GENERATION_LABEL] = ds.templateGeneration;
  if (hash) labels[REVISION_HASH_LABEL] = hash;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ds.namespace,
      labels,
      ...(meta.annotations && Object.keys(meta.annotations).length ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers?.length ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [daemonSetControllerRef(ds)],
    },
    spec,
  };
}
