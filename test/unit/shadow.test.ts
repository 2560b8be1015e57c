import { ApiError, type KubeRest, type RequestOptions } from '../../activities/kube/rest';
import { type Proposal, dryRunPath, shadowed, writeOf } from '../../activities/kube/shadow';
import { runningActivity } from '../../activities/kube/running-activity';
import { SHADOW_WORKFLOW_ID_PREFIX, controllerOfWorkflowId, shadowWorkflowIdPrefix, withoutShadowPrefix } from '../../workflows/runtime/workflow-ids';
import type { ShadowEntry } from '../../workflows/shadow/types';

describe('writeOf: what a request would write', () => {
  test.each([
    ['POST', '/api/v1/namespaces/ns/pods', { verb: 'create', resource: 'pods', namespace: 'ns' }],
    ['PUT', '/apis/apps/v1/namespaces/ns/replicasets/web-1/status', { verb: 'update', resource: 'replicasets', namespace: 'ns', name: 'web-1', subresource: 'status' }],
    ['PATCH', '/api/v1/nodes/n1?fieldManager=x', { verb: 'patch', resource: 'nodes', name: 'n1' }],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', { verb: 'delete', resource: 'pods', namespace: 'ns', name: 'p' }],
    ['DELETE', '/apis/batch/v1/namespaces/ns/jobs', { verb: 'deletecollection', resource: 'jobs', namespace: 'ns' }],
    // a namespace's own subresources are not a namespaced resource called "finalize"
    ['PUT', '/api/v1/namespaces/gone/finalize', { verb: 'update', resource: 'namespaces', name: 'gone', subresource: 'finalize' }],
    ['PUT', '/api/v1/namespaces/gone/status', { verb: 'update', resource: 'namespaces', name: 'gone', subresource: 'status' }],
    ['DELETE', '/api/v1/namespaces/gone', { verb: 'delete', resource: 'namespaces', name: 'gone' }],
    ['POST', '/api/v1/namespaces/ns/events', { verb: 'create', resource: 'events', namespace: 'ns' }],
  ])('%s %s', (method, path, want) => {
    expect(writeOf(method, path)).toEqual(want);
  });

  test('reads are not writes', () => {
    expect(writeOf('GET', '/api/v1/namespaces/ns/pods')).toBeUndefined();
    expect(writeOf('get', '/api/v1/pods?watch=1')).toBeUndefined();
  });

  test('the dry run is one more query parameter', () => {
    expect(dryRunPath('/api/v1/namespaces/ns/pods')).toBe('/api/v1/namespaces/ns/pods?dryRun=All');
    expect(dryRunPath('/api/v1/nodes/n1?fieldManager=x')).toBe('/api/v1/nodes/n1?fieldManager=x&dryRun=All');
  });
});

/** A client that answers what it is asked, and remembers the paths: the wrapper's own logic, no server. */
function answering(answer: (method: string, path: string) => unknown): { rest: KubeRest; paths: string[] } {
  const paths: string[] = [];
  const rest = {
    request: async (method: string, path: string, _ro?: RequestOptions) => {
      paths.push(`${method} ${path}`);
      return { status: 200, body: answer(method, path) };
    },
  } as unknown as KubeRest;
  return { rest, paths };
}

describe('shadowed', () => {
  test('reads go as they are; writes go as dry runs and become proposals, with the reason of the activity making them', async () => {
    const { rest, paths } = answering((m) => (m === 'POST' ? { metadata: { name: 'web-abcde' } } : { items: [] }));
    const proposals: Proposal[] = [];
    const shadow = shadowed(rest, 'replicaset', (p) => proposals.push(p));
    await shadow.request('GET', '/api/v1/namespaces/ns/pods');
    await runningActivity.run({ input: { reason: 'too few replicas: 2 of 3' } }, () =>
      shadow.request('POST', '/api/v1/namespaces/ns/pods', { body: { metadata: { generateName: 'web-' } } }));
    await shadow.request('DELETE', '/api/v1/namespaces/ns/pods/p');
    expect(paths).toEqual(['GET /api/v1/namespaces/ns/pods', 'POST /api/v1/namespaces/ns/pods?dryRun=All', 'DELETE /api/v1/namespaces/ns/pods/p?dryRun=All']);
    expect(proposals).toEqual([
      { controller: 'replicaset', verb: 'create', resource: 'pods', namespace: 'ns', name: 'web-abcde', reason: 'too few replicas: 2 of 3' },
      { controller: 'replicaset', verb: 'delete', resource: 'pods', namespace: 'ns', name: 'p' },
    ]);
  });

  test('a dry run the server refuses is a refused proposal, and the activity sees the refusal as it would the write\'s', async () => {
    const rest = { request: async () => { throw new ApiError(422, 'Invalid', 'POST: 422 bad template'); } } as unknown as KubeRest;
    const proposals: Proposal[] = [];
    const shadow = shadowed(rest, 'replicaset', (p) => proposals.push(p));
    await expect(shadow.request('POST', '/api/v1/namespaces/ns/pods', { body: {} })).rejects.toThrow('bad template');
    expect(proposals).toEqual([{ controller: 'replicaset', verb: 'create', resource: 'pods', namespace: 'ns', refused: { status: 422, reason: 'Invalid' } }]);
  });

  test('a Warning Event on an object whose dry run was just refused as stale is marked as its consequence', async () => {
    let refuse = true;
    const rest = {
      request: async (method: string, path: string, ro?: RequestOptions) => {
        if (path.startsWith('/api/v1/namespaces/ns/endpoints/web') && refuse) throw new ApiError(409, 'Conflict', 'the object has been modified');
        return { status: 201, body: ro?.body };
      },
    } as unknown as KubeRest;
    const entries: Array<ShadowEntry | undefined> = [];
    const shadow = shadowed(rest, 'endpoint', (_p, e) => entries.push(e));
    const event = (type: string, name: string) => ({ body: {
      metadata: { name: `${name}.1`, namespace: 'ns' }, type, reason: 'FailedToUpdateEndpoint', message: 'x', involvedObject: { kind: 'Endpoints', namespace: 'ns', name },
    } });
    await expect(shadow.request('PUT', '/api/v1/namespaces/ns/endpoints/web', { body: {} })).rejects.toThrow('modified');
    await shadow.request('POST', '/api/v1/namespaces/ns/events', event('Warning', 'web'));
    await shadow.request('POST', '/api/v1/namespaces/ns/events', event('Normal', 'web'));
    await shadow.request('POST', '/api/v1/namespaces/ns/events', event('Warning', 'other'));
    const events = entries.filter((e) => e?.kind === 'event');
    expect(events.map((e) => [e?.content?.type, e?.target, !!e?.afterRefusal])).toEqual([
      ['Warning', 'Endpoints/web:FailedToUpdateEndpoint', true],
      ['Normal', 'Endpoints/web:FailedToUpdateEndpoint', false],
      ['Warning', 'Endpoints/other:FailedToUpdateEndpoint', false],
    ]);
  });

  test('a delete refused as NotFound is still ours\' delete, for the ledger to meet with the deletion seen; another 404 is not', async () => {
    const rest = { request: async () => { throw new ApiError(404, 'NotFound', 'not found'); } } as unknown as KubeRest;
    const entries: Array<ShadowEntry | undefined> = [];
    const shadow = shadowed(rest, 'garbagecollector', (_p, e) => entries.push(e));
    await expect(shadow.request('DELETE', '/apis/apps/v1/namespaces/ns/replicasets/web-1', { body: { preconditions: { uid: 'u' } } })).rejects.toThrow('not found');
    await expect(shadow.request('PATCH', '/api/v1/namespaces/ns/pods/p', { body: {} })).rejects.toThrow('not found');
    expect(entries.map((e) => e && [e.kind, e.resource, e.target, e.fromRequest])).toEqual([['delete', 'replicasets', 'web-1', true], undefined]);
  });

  test('a connection failure proposes nothing: the activity retries it', async () => {
    const rest = { request: async () => { throw new ApiError(0, 'ConnectionError', 'refused'); } } as unknown as KubeRest;
    const proposals: Proposal[] = [];
    await expect(shadowed(rest, 'job', (p) => proposals.push(p)).request('PUT', '/apis/batch/v1/namespaces/ns/jobs/j/status')).rejects.toThrow('refused');
    expect(proposals).toEqual([]);
  });
});

test('a shadow workflow ID still names its controller', () => {
  expect(controllerOfWorkflowId('replicaset/ns/web')).toBe('replicaset');
  expect(controllerOfWorkflowId(`${SHADOW_WORKFLOW_ID_PREFIX}replicaset/ns/web`)).toBe('replicaset');
  const prefix = shadowWorkflowIdPrefix('kcm-prod-shadow');
  expect(prefix).toMatch(/^shadow:[0-9a-f]{8}:$/);
  expect(shadowWorkflowIdPrefix('kcm-canary-shadow')).not.toBe(prefix);
  expect(controllerOfWorkflowId(`${prefix}replicaset/ns/web`)).toBe('replicaset');
  expect(withoutShadowPrefix(`${prefix}replicaset/ns/web`)).toBe('replicaset/ns/web');
});
