import { parseResourcePath, type ResourcePathParts } from './resources';
import { ApiError, type KubeRest, type RequestOptions, type RestResponse } from './rest';

/*
 * What the manager may read with its own identity.
 *
 * kubeadm runs kube-controller-manager as `system:kube-controller-manager`, whose bootstrap
 * ClusterRole grants list and watch on every resource but get on only a few (namespaces, secrets,
 * serviceaccounts, configmaps; the leader-election Lease by name): upstream's controllers read
 * through shared informer caches and never GET with it. Our activities read what the cache does not
 * hold from the API, so the reads made with the manager's identity go through `listOnly`: a single
 * object becomes a LIST of its collection with a `metadata.name` field selector, which every
 * resource serves and the role allows, and which answers as a GET would (the object, or 404).
 */

/**
 * The request a read of `path` becomes under the manager's identity: a collection list is sent as
 * is; one object is its collection listed with a name field selector. Anything else (a write, a
 * subresource) is not the manager's to make, and throws: that is a bug in the caller, not an API
 * error to retry.
 */
export function managerReadOf(method: string, path: string): { path: string; single?: ResourcePathParts } {
  if (method !== 'GET') throw new Error(`the manager's own client only reads (list, watch): ${method} ${path} must use the controller's client`);
  const p = parseResourcePath(path);
  if (!p || p.name === undefined) return { path };
  if (p.subresource !== undefined) throw new Error(`the manager's own client cannot get a subresource (${path}): use the controller's client`);
  const ns = p.namespace !== undefined ? `/namespaces/${encodeURIComponent(p.namespace)}` : '';
  const selector = `fieldSelector=${encodeURIComponent(`metadata.name=${p.name}`)}`;
  return { path: `${p.groupVersion}${ns}/${p.resource}?${p.query ? `${p.query}&` : ''}${selector}`, single: p };
}

interface ObjectList {
  kind?: string;
  apiVersion?: string;
  items?: Array<Record<string, unknown>>;
}

/**
 * The manager's client made to read within upstream's `system:kube-controller-manager` role (see
 * above). A list item carries no kind or apiVersion, so the one object gets them from the list, as
 * a GET would have given them.
 */
export function listOnly(rest: KubeRest): KubeRest {
  const reading = Object.create(rest) as KubeRest;
  reading.request = async <T>(method: string, path: string, ro?: RequestOptions): Promise<RestResponse<T>> => {
    const read = managerReadOf(method, path);
    if (!read.single) return rest.request<T>(method, read.path, ro);
    const r = await rest.request<ObjectList>('GET', read.path, ro);
    const item = r.body?.items?.[0];
    if (!item) {
      const what = read.single.group ? `${read.single.resource}.${read.single.group}` : read.single.resource;
      const message = `${what} "${read.single.name}" not found`;
      throw new ApiError(404, 'NotFound', `GET ${path}: 404 ${message}`, undefined, message);
    }
    const kind = r.body.kind?.replace(/List$/, '');
    return { status: r.status, body: { ...(kind ? { kind } : {}), ...(r.body.apiVersion ? { apiVersion: r.body.apiVersion } : {}), ...item } as T };
  };
  return reading;
}
