import { apiRejectionOf } from '../../workflows/runtime/api-rejections';
import { forbiddenCallOf } from '../../workers/manager';

const refused = (status: number, message: string) => ({ type: 'ApiRejected', details: [{ status, reason: status === 403 ? 'Forbidden' : 'Invalid' }], message });

describe('a reconcile refused by the API server', () => {
  it('is found under the activity failure the workflow sees', () => {
    const message = 'GET /apis/apps/v1/namespaces/a/statefulsets?fieldSelector=metadata.name%3Dweb: 403 statefulsets.apps is forbidden: User "system:kube-controller-manager" cannot list resource "statefulsets"';
    const err = { message: 'Activity task failed', activityType: 'observeStatefulSet', cause: refused(403, message) };
    expect(apiRejectionOf(err)).toEqual({ status: 403, reason: 'Forbidden', message });
    expect(forbiddenCallOf(refused(403, message))).toEqual({ verb: 'GET', path: '/apis/apps/v1/namespaces/a/statefulsets?fieldSelector=metadata.name%3Dweb' });
  });

  it('is not a transient failure, another status, or a plain error', () => {
    expect(apiRejectionOf({ cause: { type: 'ApiTransient', details: [{ status: 503 }], message: 'x' } })).toBeUndefined();
    expect(apiRejectionOf(new Error('boom'))).toBeUndefined();
    expect(apiRejectionOf({ cause: refused(422, 'PUT /x: 422 invalid') })?.status).toBe(422);
    expect(forbiddenCallOf(refused(422, 'PUT /x: 422 invalid'))).toBeUndefined();
    expect(forbiddenCallOf(new Error('GET /x: 403 no'))).toBeUndefined();
  });
});
