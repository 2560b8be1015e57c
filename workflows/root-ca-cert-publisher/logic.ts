export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
export const ROOT_CA_KEY = 'ca.crt';
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
/** Our own words for what upstream's description annotation says: what the bundle is for, and its limits. */
export const ROOT_CA_DESCRIPTION =
  'CA bundle for verifying the kube-apiserver when reaching it through in-cluster endpoints (the kubernetes Service, ' +
  'kubernetes.default.svc); using it for anything else is not guaranteed to work across Kubernetes distributions.';

/** What a decision needs of the ConfigMap: no bytes, only a digest of the bundle it holds. */
export interface RootCaConfigMapView {
  resourceVersion: string;
  /** sha256 hex of data['ca.crt'] */
  caSha256?: string;
  dataKeys: string[];
  hasDescription: boolean;
}

export type RootCaWrite = 'create' | 'update';

/**
 * Upstream's rule: an active namespace needs the ConfigMap holding exactly the root CA under
 * ca.crt and nothing else, with a non-empty description annotation.
 */
export function rootCaWriteNeeded(active: boolean, cm: RootCaConfigMapView | undefined, wantSha256: string): RootCaWrite | undefined {
  if (!active) return undefined;
  if (!cm) return 'create';
  const exact = cm.caSha256 === wantSha256 && cm.dataKeys.length === 1 && cm.dataKeys[0] === ROOT_CA_KEY;
  return exact && cm.hasDescription ? undefined : 'update';
}
