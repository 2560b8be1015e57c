import type { ClusterAccess } from '../../activities/kube/kubeconfig';

/**
 * KubeRest's access to a plain-HTTP test server: no TLS, no credentials. Written out rather than
 * made with @kubernetes/client-node's KubeConfig, whose load costs a jest test file several
 * seconds of CPU (about 970 babel-transformed modules).
 */
export function plainHttpAccess(server = 'http://127.0.0.1:1'): ClusterAccess {
  return { getCurrentCluster: () => ({ server }), applyToHTTPSOptions: async () => undefined };
}
