/** The metav1 / core vocabulary every controller shares: selectors, owner references, pod templates. */
import type { V1OwnerReference } from '@kubernetes/client-node';

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/**
 * metav1.LabelSelector; a ReplicationController's map selector becomes { matchLabels }. Our own
 * type rather than client-node's, whose operator is any string: selector evaluation handles
 * exactly upstream's four operators.
 */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** metav1.OwnerReference: client-node's model fits the JSON exactly. */
export type OwnerRef = V1OwnerReference;

/** A pod template as the controllers copy it: the spec is passed through, never interpreted here. */
export interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] };
  spec: Record<string, unknown>;
}

/**
 * A pod to create, as plain JSON for the API server: the workload's template with its labels, a
 * fixed name and the workload as controller. `M` adds metadata fields a controller sets besides.
 */
export type ControlledPodManifest<M extends object = Record<never, never>> = {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences: OwnerRef[];
  } & M;
  spec: Record<string, unknown>;
};
