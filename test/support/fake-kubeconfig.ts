import * as k8s from '@kubernetes/client-node';

/** A kubeconfig for a plain-HTTP server (the kube client wants skipTLSVerify for http:), for tests that fake http.request. */
export function fakeServerKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}
