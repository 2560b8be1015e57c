import { DiscoveryIncompleteError, RestMapper, discoverRound } from '../../activities/kube/discovery';
import { ApiError, type KubeRest } from '../../activities/kube/rest';

const VERBS = ['create', 'delete', 'get', 'list', 'watch'];

/** An API that serves the core group and apps/v1, and refuses the paths in `failing` with a 429. */
function api(failing: Set<string>) {
  const served: Record<string, unknown> = {
    '/apis': { groups: [{ preferredVersion: { groupVersion: 'apps/v1' } }] },
    '/api/v1': { groupVersion: 'v1', resources: [{ name: 'pods', kind: 'Pod', namespaced: true, verbs: VERBS }, { name: 'pods/status', kind: 'Pod', namespaced: true, verbs: ['get'] }] },
    '/apis/apps/v1': { groupVersion: 'apps/v1', resources: [{ name: 'replicasets', kind: 'ReplicaSet', namespaced: true, verbs: VERBS }] },
  };
  const rest = {
    async request(_method: string, path: string) {
      if (failing.has(path)) throw new ApiError(429, 'TooManyRequests', `GET ${path}: 429`, 1);
      if (!(path in served)) throw new ApiError(404, 'NotFound', `GET ${path}: 404`);
      return { status: 200, body: served[path] };
    },
  } as unknown as KubeRest;
  return rest;
}

describe('discovery under a failing group', () => {
  test('a round names the group-versions whose read failed, and leaves their resources out', async () => {
    const round = await discoverRound(api(new Set(['/apis/apps/v1'])));
    expect(round.failedGroupVersions).toEqual(['apps/v1']);
    expect(round.resources.map((r) => `${r.apiVersion} ${r.kind}`)).toEqual(['v1 Pod']);
  });

  test('a kind of a group whose discovery failed is not "unknown": the lookup throws, to be retried', async () => {
    const failing = new Set(['/apis/apps/v1']);
    const mapper = new RestMapper(api(failing), -1);
    await expect(mapper.lookup('apps/v1', 'ReplicaSet')).rejects.toBeInstanceOf(DiscoveryIncompleteError);
    // a group that answered still says what it does not serve
    expect(await mapper.lookup('v1', 'Pod')).toMatchObject({ resource: 'pods' });
    expect(await mapper.lookup('v1', 'Widget')).toBeUndefined();
    failing.clear();
    expect(await mapper.lookupGroupKind('apps', 'ReplicaSet')).toMatchObject({ resource: 'replicasets', apiVersion: 'apps/v1' });
  });

  test('a group known from an earlier round keeps its kinds through a round where its read fails', async () => {
    const failing = new Set<string>();
    const mapper = new RestMapper(api(failing), -1);
    expect(await mapper.lookup('apps/v1', 'ReplicaSet')).toMatchObject({ resource: 'replicasets' });
    failing.add('/apis/apps/v1');
    // a miss elsewhere refreshes the map while apps/v1 fails: ReplicaSet stays known
    expect(await mapper.lookup('v1', 'Widget')).toBeUndefined();
    expect(await mapper.lookup('apps/v1', 'ReplicaSet')).toMatchObject({ resource: 'replicasets' });
  });
});
