import { durationFlag, flagValue, stringFlag, type FlagValues, type StringFlag } from '../../workers/flags';
import type { SigningFiles } from '../../workflows/csrsigning/logic';

/*
 * The signer's flags, named and worded as upstream's. The file flags are plain strings, as
 * upstream's: a missing file stops the manager when the signer starts (the descriptor's
 * precondition), and the combinations are checked with the other flags (exit 2).
 */

const CERT_HELP = (what: string) => `Filename containing a PEM-encoded X509 CA certificate used to issue ${what}`;
const KEY_HELP = (what: string) => `Filename containing a PEM-encoded RSA or ECDSA private key used to sign ${what}`;
const SPECIFIC = '  If specified, --cluster-signing-{cert,key}-file must not be set.';

const pair = (name: string, signer: string): [StringFlag, StringFlag] => [
  stringFlag(`cluster-signing-${name}-cert-file`, '', `${CERT_HELP(`certificates for the ${signer} signer`)}.${SPECIFIC}`),
  stringFlag(`cluster-signing-${name}-key-file`, '', `${KEY_HELP(`certificates for the ${signer} signer`)}.${SPECIFIC}`),
];

export const CLUSTER_SIGNING_CERT_FILE = stringFlag('cluster-signing-cert-file', '',
  `${CERT_HELP('cluster-scoped certificates')}.  If specified, no more specific --cluster-signing-* flag may be specified.`);
export const CLUSTER_SIGNING_KEY_FILE = stringFlag('cluster-signing-key-file', '',
  `${KEY_HELP('cluster-scoped certificates')}.  If specified, no more specific --cluster-signing-* flag may be specified.`);
export const KUBELET_SERVING_FILES = pair('kubelet-serving', 'kubernetes.io/kubelet-serving');
export const KUBELET_CLIENT_FILES = pair('kubelet-client', 'kubernetes.io/kube-apiserver-client-kubelet');
export const KUBE_APISERVER_CLIENT_FILES = pair('kube-apiserver-client', 'kubernetes.io/kube-apiserver-client');
export const LEGACY_UNKNOWN_FILES = pair('legacy-unknown', 'kubernetes.io/legacy-unknown');
export const CLUSTER_SIGNING_DURATION = durationFlag('cluster-signing-duration', '8760h0m0s',
  'The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs by setting spec.expirationSeconds.');

export const CSR_SIGNING_FLAGS = [
  CLUSTER_SIGNING_CERT_FILE, CLUSTER_SIGNING_KEY_FILE,
  ...KUBELET_SERVING_FILES, ...KUBELET_CLIENT_FILES, ...KUBE_APISERVER_CLIENT_FILES, ...LEGACY_UNKNOWN_FILES,
  CLUSTER_SIGNING_DURATION,
] as const;

const files = (flags: FlagValues | undefined, [cert, key]: [StringFlag, StringFlag]) => ({ certFile: flagValue(flags, cert), keyFile: flagValue(flags, key) });

export function signingFilesOf(flags: FlagValues | undefined): SigningFiles {
  return {
    certFile: flagValue(flags, CLUSTER_SIGNING_CERT_FILE),
    keyFile: flagValue(flags, CLUSTER_SIGNING_KEY_FILE),
    kubeletServing: files(flags, KUBELET_SERVING_FILES),
    kubeletClient: files(flags, KUBELET_CLIENT_FILES),
    kubeApiServerClient: files(flags, KUBE_APISERVER_CLIENT_FILES),
    legacyUnknown: files(flags, LEGACY_UNKNOWN_FILES),
  };
}

/** --cluster-signing-duration in milliseconds. */
export const signingDurationMs = (flags: FlagValues | undefined): number => flagValue(flags, CLUSTER_SIGNING_DURATION);
