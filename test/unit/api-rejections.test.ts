import { clientOfUserAgent, userAgentFor } from '../../activities/kube/rest';
import { authorizerRefusalIn, refusedByAuthorizer } from '../../workflows/runtime/api-rejections';

describe('a call the authorizer refused', () => {
  const refusal = 'pods "web-0" is forbidden: User "system:kube-controller-manager" cannot create resource "pods" in API group "" in the namespace "a"';

  it('is found in a failure\'s text, thrown or returned, in the server\'s words', () => {
    expect(authorizerRefusalIn(`createPods: POST /api/v1/namespaces/a/pods: 403 ${refusal}`)).toBe(refusal);
    expect(authorizerRefusalIn(`Create Pod web-0 in StatefulSet web failed error: ${refusal}; Create Pod web-1 failed`)).toBe(refusal);
    const list = 'statefulsets.apps is forbidden: User "system:kube-controller-manager" cannot list resource "statefulsets" in API group "apps" in the namespace "a"';
    expect(authorizerRefusalIn(`observeStatefulSet: GET /apis/apps/v1/namespaces/a/statefulsets: 403 ${list}`)).toBe(list);
    expect(refusedByAuthorizer(403, refusal)).toBe(true);
  });

  it('is not an exceeded quota, a webhook\'s denial, or another status', () => {
    const quota = 'pods "web-0" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0';
    expect(authorizerRefusalIn(quota)).toBeUndefined();
    expect(refusedByAuthorizer(403, quota)).toBe(false);
    expect(refusedByAuthorizer(403, 'admission webhook "deny.example.com" denied the request')).toBe(false);
    expect(refusedByAuthorizer(422, refusal)).toBe(false);
  });

  it('is counted by the client its User-Agent names', () => {
    expect(clientOfUserAgent(userAgentFor('system:serviceaccount:kube-system:statefulset-controller'))).toBe('system:serviceaccount:kube-system:statefulset-controller');
    expect(clientOfUserAgent(userAgentFor('shared-informers'))).toBe('shared-informers');
    expect(clientOfUserAgent(userAgentFor())).toBe('temporal-kcm');
  });
});
