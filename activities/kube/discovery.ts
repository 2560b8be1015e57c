import type { KubeRest } from './rest';
import { groupVersionPath, resourcePath } from './resources';

/** A resource the garbage collector (and the quota controller's monitors) watch and can delete. */
export interface ResourceInfo {
  apiVersion: string; // 'v1' or 'group/version'
  kind: string;
  resource: string;
  namespaced: boolean;
  /** it also serves create, as a resource quota's object counts require (upstream's GetQuotableResources) */
  creatable: boolean;
}

interface ApiResourceList {
  groupVersion: string;
  resources: Array<{ name: string; kind: string; namespaced: boolean; verbs: string[] }>;
}

/** `apps/v1` -> group `apps`, version `v1`; `v1` -> the core group. */
function groupVersionOf(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Upstream's collector ignores Events: they have no owners worth collecting and churn constantly. */
const IGNORED = new Set(['v1/events', 'events.k8s.io/v1/events']);

/**
 * Every resource the API serves at its group's preferred version that supports list, watch and
 * delete (upstream: discovery.ServerPreferredResources filtered the same way). A group whose
 * discovery fails is skipped this round (an aggregated API that is down must not stop the rest).
 */
export async function discoverResources(rest: KubeRest): Promise<ResourceInfo[]> {
  const groupVersions = ['v1'];
  const apis = (await rest.request<{ groups: Array<{ preferredVersion?: { groupVersion: string } }> }>('GET', '/apis')).body;
  for (const g of apis.groups) if (g.preferredVersion) groupVersions.push(g.preferredVersion.groupVersion);
  const out: ResourceInfo[] = [];
  await Promise.all(groupVersions.map(async (gv) => {
    try {
      const list = (await rest.request<ApiResourceList>('GET', groupVersionPath(groupVersionOf(gv)))).body;
      for (const r of list.resources) {
        if (r.name.includes('/') || IGNORED.has(`${gv}/${r.name}`)) continue;
        if (!['list', 'watch', 'delete'].every((v) => r.verbs.includes(v))) continue;
        out.push({ apiVersion: gv, kind: r.kind, resource: r.name, namespaced: r.namespaced, creatable: r.verbs.includes('create') });
      }
    } catch {
      /* skipped until the next discovery round */
    }
  }));
  return out.sort((a, b) => `${a.apiVersion}/${a.resource}`.localeCompare(`${b.apiVersion}/${b.resource}`));
}

/** `deployments.apps`, or `pods` for the core group: how resource quotas name a resource (`count/deployments.apps`). */
export function groupResourceOf(r: Pick<ResourceInfo, 'apiVersion' | 'resource'>): string {
  const { group } = groupVersionOf(r.apiVersion);
  return group ? `${r.resource}.${group}` : r.resource;
}

/**
 * A discovered resource's collection in one namespace, or in every namespace without one. Built by
 * resourcePath, so a resource RESOURCES also names gets the very path its routes watch, and the
 * shared cache keeps one store for both.
 */
export function collectionPath(r: Pick<ResourceInfo, 'apiVersion' | 'resource' | 'namespaced'>, namespace?: string): string {
  // resourcePath reads no kind; '' or no namespace means the collection across namespaces
  return resourcePath({ ...groupVersionOf(r.apiVersion), resource: r.resource, kind: '', namespaced: r.namespaced }, namespace || undefined);
}

/**
 * apiVersion+kind -> resource, from discovery, refreshed on a miss at most every few seconds so
 * a CRD created after start resolves soon after it is served.
 */
export class RestMapper {
  private byKind = new Map<string, ResourceInfo>();
  private refreshedAt = 0;
  /** concurrent lookups during a refresh wait for it instead of answering from the old map */
  private refreshing?: Promise<void>;

  constructor(private readonly rest: KubeRest, private readonly minRefreshMs = 3000) {}

  async lookup(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    return this.find(() => this.byKind.get(`${apiVersion}/${kind}`));
  }

  /**
   * group+kind -> the resource at the group's preferred version, whatever version the caller
   * named (upstream's RESTMappings(GroupKind), first mapping).
   */
  async lookupGroupKind(group: string, kind: string): Promise<ResourceInfo | undefined> {
    return this.find(() => [...this.byKind.values()].find((r) => r.kind === kind && groupVersionOf(r.apiVersion).group === group));
  }

  private async find(hit: () => ResourceInfo | undefined): Promise<ResourceInfo | undefined> {
    if (this.refreshing) await this.refreshing;
    if (!hit() && Date.now() - this.refreshedAt > this.minRefreshMs) {
      this.refreshedAt = Date.now();
      this.refreshing = discoverResources(this.rest)
        .then((all) => { this.byKind = new Map(all.map((r) => [`${r.apiVersion}/${r.kind}`, r])); })
        .finally(() => { this.refreshing = undefined; });
      await this.refreshing;
    }
    return hit();
  }
}
