import type * as K8s from '@kubernetes/client-node';

/**
 * @kubernetes/client-node, loaded on first use. Loading it costs a process about 70 MiB for good,
 * and `temporal-kcm run` shares this CLI's modules without ever needing it (it resolves its
 * kubeconfig in a throwaway thread: activities/kube/kubeconfig.ts); only the local-stack commands
 * and the tests load it.
 */
export function clientNode(): typeof K8s {
  return require('@kubernetes/client-node') as typeof K8s;
}
