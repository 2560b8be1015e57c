import * as fs from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  caCertFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  user: string;
}

/** A self-contained kubeconfig (certs inlined) so it can be copied off the data dir and still work. */
export function renderKubeconfig(i: KubeconfigInput): string {
  const b64 = (f: string) => fs.readFileSync(f).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'temporal-kcm-local', cluster: { server: i.server, 'certificate-authority-data': b64(i.caCertFile) } }],
    users: [{ name: i.user, user: { 'client-certificate-data': b64(i.clientCertFile), 'client-key-data': b64(i.clientKeyFile) } }],
    contexts: [{ name: `${i.user}@temporal-kcm-local`, context: { cluster: 'temporal-kcm-local', user: i.user } }],
    'current-context': `${i.user}@temporal-kcm-local`,
    preferences: {},
  });
}
