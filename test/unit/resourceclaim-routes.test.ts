import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { resourceClaimRoutes } from '../../activities/resourceclaim/routes';
import type { ResourceClaimNudge } from '../../workflows/resourceclaim/workflow';
import { routeHarness } from '../support/routes';

const PODS = RESOURCES.pods;
const CLAIMS = RESOURCES.resourceClaims;

const pod = (name: string, o: { rv?: string; uid?: string; node?: string; phase?: string; recorded?: string; user?: boolean } = {}): KubeObject => ({
  metadata: { namespace: 'ns', name, uid: o.uid ?? `u-${name}`, resourceVersion: o.rv ?? '1' },
  spec: { nodeName: o.node, resourceClaims: [o.user ? { name: 'gpu', resourceClaimName: 'shared' } : { name: 'gpu', resourceClaimTemplateName: 't' }] },
  status: { phase: o.phase ?? 'Pending', ...(o.recorded ? { resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: o.recorded }] } : {}) },
} as unknown as KubeObject);

const claim = (name: string, o: { rv?: string; owner?: string; reservedFor?: string[] } = {}): KubeObject => ({
  metadata: { namespace: 'ns', name, uid: `c-${name}`, resourceVersion: o.rv ?? '1', finalizers: ['resource.kubernetes.io/delete-protection'],
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: o.owner, uid: `u-${o.owner}`, controller: true }],
      annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpu' } } : {}) },
  status: { allocation: { devices: {} }, reservedFor: (o.reservedFor ?? []).map((p) => ({ resource: 'pods', name: p, uid: `u-${p}` })) },
} as unknown as KubeObject);

describe('resourceclaim routes', () => {
  test('off unless enabled', () => {
    expect(routeHarness(resourceClaimRoutes, { controllers: ['ttl'] }).family).toBeUndefined();
  });

  test('a pod whose template claim is not generated goes to resourceclaim/<ns>/pods/<pod>; a generated, reserved one sends nothing', () => {
    const { sent, h } = routeHarness<ResourceClaimNudge>(resourceClaimRoutes, { controllers: ['resourceclaim'] });
    h(CLAIMS).relisted([claim('b-gpu-xxxxx', { owner: 'b', reservedFor: ['b'] })], '1');
    h(PODS).relisted([pod('a'), pod('b', { node: 'n', phase: 'Running', recorded: 'b-gpu-xxxxx' })], '1');
    expect(sent.map((s) => [s.target.workflowId, s.event.reason])).toEqual([['resourceclaim/ns/pods/a', 'must create ResourceClaim from template']]);
  });

  test('a pod that completes or goes sends its claims; a claim of a finished pod is to be released and deleted', () => {
    const { sent, h } = routeHarness<ResourceClaimNudge>(resourceClaimRoutes, { controllers: ['resourceclaim'] });
    h(CLAIMS).relisted([claim('b-gpu-xxxxx', { owner: 'b', reservedFor: ['b'] }), claim('shared', { reservedFor: ['u'] })], '1');
    h(PODS).relisted([pod('b', { node: 'n', phase: 'Running', recorded: 'b-gpu-xxxxx' }), pod('u', { node: 'n', phase: 'Running', user: true })], '1');
    expect(sent).toEqual([]);
    h(PODS).event('MODIFIED', pod('b', { rv: '2', node: 'n', phase: 'Succeeded', recorded: 'b-gpu-xxxxx' }));
    h(PODS).event('DELETED', pod('u', { rv: '3', node: 'n', phase: 'Running', user: true }));
    expect(sent.map((s) => [s.target.workflowId, s.event.reason])).toEqual([
      ['resourceclaim/ns/resourceclaims/b-gpu-xxxxx', 'generated for a pod that will not run'],
      ['resourceclaim/ns/resourceclaims/shared', 'reserved for a pod that is gone or done'],
    ]);
  });

  test('a claim reserved for a pod the cache does not have is looked at', () => {
    const { sent, h } = routeHarness<ResourceClaimNudge>(resourceClaimRoutes, { controllers: ['resourceclaim'] });
    h(PODS).relisted([], '1');
    h(CLAIMS).relisted([claim('shared', { reservedFor: ['ghost'] })], '1');
    expect(sent.map((s) => s.target.workflowId)).toEqual(['resourceclaim/ns/resourceclaims/shared']);
  });
});
