import pino from 'pino';
import { createEndpointsActivities } from '../../activities/endpoints/activities';
import { ApiError, type KubeRest } from '../../activities/kube/rest';
import { MANAGED_BY, MANAGED_BY_LABEL, type EndpointsWrite } from '../../workflows/endpoints/logic';

/** An API server holding at most one Service `web` and its Endpoints, recording every call. */
function fakeApi(o: { service: boolean; endpoints?: Record<string, unknown> }) {
  const calls: string[] = [];
  const rest = {
    request: async (method: string, path: string) => {
      calls.push(`${method} ${path}`);
      if (path === '/api/v1/namespaces/ns/services/web') {
        if (!o.service) throw new ApiError(404, 'NotFound', 'services "web" not found');
        return { status: 200, body: { metadata: { name: 'web', namespace: 'ns', uid: 's1' } } };
      }
      if (path === '/api/v1/namespaces/ns/endpoints/web' && method === 'GET') {
        if (!o.endpoints) throw new ApiError(404, 'NotFound', 'endpoints "web" not found');
        return { status: 200, body: o.endpoints };
      }
      if (path === '/api/v1/namespaces/ns/endpoints' && method === 'POST') return { status: 201, body: {} };
      if (path === '/api/v1/namespaces/ns/endpoints/web' && method === 'PUT') return { status: 200, body: {} };
      throw new Error(`unexpected ${method} ${path}`);
    },
  } as unknown as KubeRest;
  return { rest, calls };
}

const write: EndpointsWrite = {
  namespace: 'ns', name: 'web', serviceLabels: {}, labels: { [MANAGED_BY_LABEL]: MANAGED_BY },
  subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
  overCapacity: false,
};
const io = (rest: KubeRest) => createEndpointsActivities({ rest, logger: pino({ level: 'silent' }), recordEvent: () => undefined });

describe('the endpoints controller\'s write', () => {
  test('no Endpoints for a Service that is gone: the API server removed them with it, and the view that asked for them is stale', async () => {
    const api = fakeApi({ service: false });
    expect(await io(api.rest).syncEndpoints(write)).toEqual({ outcome: 'skipped', message: 'the Service is gone' });
    expect(api.calls.filter((c) => !c.startsWith('GET'))).toEqual([]);
  });

  test('created when the Service is there', async () => {
    const api = fakeApi({ service: true });
    expect(await io(api.rest).syncEndpoints(write)).toEqual({ outcome: 'created' });
    expect(api.calls).toEqual(['GET /api/v1/namespaces/ns/endpoints/web', 'GET /api/v1/namespaces/ns/services/web', 'POST /api/v1/namespaces/ns/endpoints']);
  });

  test('an update of existing Endpoints costs no read of the Service', async () => {
    const api = fakeApi({ service: false, endpoints: { metadata: { name: 'web', namespace: 'ns', uid: 'e1', resourceVersion: '5', labels: { [MANAGED_BY_LABEL]: MANAGED_BY } }, subsets: [] } });
    expect(await io(api.rest).syncEndpoints(write)).toEqual({ outcome: 'updated' });
    expect(api.calls).toEqual(['GET /api/v1/namespaces/ns/endpoints/web', 'PUT /api/v1/namespaces/ns/endpoints/web']);
  });
});
