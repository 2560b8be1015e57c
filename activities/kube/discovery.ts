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

/** One discovery round: what was found, and the group-versions whose own read failed this round. */
export interface DiscoveryRound {
  resources: ResourceInfo[];
  failedGroupVersions: string[];
}

/**
 * Every resource the API serves at its group's preferred version that supports list, watch and
 * delete (upstream: discovery.ServerPreferredResources filtered the same way). A group whose
 * discovery fails is left out of `resources` this round and named in `failedGroupVersions` (an
 * aggregated API that is down must not stop the rest; upstream's partial discovery error).
 */
export async function discoverRound(rest: KubeRest): Promise<DiscoveryRound> {
  const groupVersions = ['v1'];
  const apis = (await rest.request<{ groups: Array<{ preferredVersion?: { groupVersion: string } }> }>('GET', '/apis')).body;
  for (const g of apis.groups) if (g.preferredVersion) groupVersions.push(g.preferredVersion.groupVersion);
  const out: ResourceInfo[] = [];
  const failed: string[] = [];
  await Promise.all(groupVersions.map(async (gv) => {
    try {
      const list = (await rest.request<ApiResourceList>('GET', groupVersionPath(groupVersionOf(gv)))).body;
      for (const r of list.resources) {
        if (r.name.includes('/') || IGNORED.has(`${gv}/${r.name}`)) continue;
        if (!['list', 'watch', 'delete'].every((v) => r.verbs.includes(v))) continue;
        out.push({ apiVersion: gv, kind: r.kind, resource: r.name, namespaced: r.namespaced, creatable: r.verbs.includes('create') });
      }
    } catch {
      failed.push(gv);
    }
  }));
  return { resources: out.sort((a, b) => `${a.apiVersion}/${a.resource}`.localeCompare(`${b.apiVersion}/${b.resource}`)), failedGroupVersions: failed.sort() };
}

/** The resources of one discovery round; a group whose read failed is skipped until the next. */
export async function discoverResources(rest: KubeRest): Promise<ResourceInfo[]> {
  return (await discoverRound(rest)).resources;
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
  /** groups whose discovery read failed in the last round: a miss there is not an answer */
  private failedGroups = new Set<string>();
  private refreshedAt = 0;
  /** concurrent lookups during a refresh wait for it instead of answering from the old map */
  private refreshing?: Promise<void>;

  constructor(private readonly rest: KubeRest, private readonly minRefreshMs = 3000) {}

  async lookup(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    return this.find(() => this.byKind.get(`${apiVersion}/${kind}`), groupVersionOf(apiVersion).group, `${apiVersion} ${kind}`);
  }

  /**
   * group+kind -> the resource at the group's preferred version, whatever version the caller
   * named (upstream's RESTMappings(GroupKind), first mapping).
   */
  async lookupGroupKind(group: string, kind: string): Promise<ResourceInfo | undefined> {
    return this.find(() => [...this.byKind.values()].find((r) => r.kind === kind && groupVersionOf(r.apiVersion).group === group), group, `${kind}.${group}`);
  }

  /**
   * A kind is unknown only when discovery answered for its group: a round whose read of that group
   * failed (a 429, a dropped connection) keeps the group's kinds from the round before, and a miss
   * there throws, so the caller retries instead of taking "no such kind" for an answer (the
   * garbage collector would take an existing object for gone).
   */
  private async find(hit: () => ResourceInfo | undefined, group: string, what: string): Promise<ResourceInfo | undefined> {
    if (this.refreshing) await this.refreshing;
    if (!hit() && Date.now() - this.refreshedAt > this.minRefreshMs) {
      this.refreshedAt = Date.now();
      this.refreshing = discoverRound(this.rest)
        .then((round) => {
          const failed = new Set(round.failedGroupVersions.map((gv) => groupVersionOf(gv).group));
          const kept = [...this.byKind].filter(([, r]) => failed.has(groupVersionOf(r.apiVersion).group));
          this.byKind = new Map([...kept, ...round.resources.map((r) => [`${r.apiVersion}/${r.kind}`, r] as const)]);
          this.failedGroups = failed;
        })
        .finally(() => { this.refreshing = undefined; });
      await this.refreshing;
    }
    const found = hit();
    if (!found && this.failedGroups.has(group)) throw new DiscoveryIncompleteError(`${what}: discovery of group "${group || 'core'}" failed in its last round; not known yet`);
    return found;
  }
}

/** A lookup that discovery could not answer this round: retried, never taken as "no such kind". */
export class DiscoveryIncompleteError extends Error {}
