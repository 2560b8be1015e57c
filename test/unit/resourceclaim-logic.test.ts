import {
  CLAIM_FINALIZER,
  POD_CLAIM_ANNOTATION,
  claimNameOf,
  claimsToReserve,
  entryStep,
  findGenerated,
  generateNameFor,
  generatedClaim,
  isPodDone,
  planClaim,
  planWrites,
  podNeedsClaims,
  podNeedsWork,
  templateRefusal,
  type ClaimPodView,
  type ClaimView,
} from '../../workflows/resourceclaim/logic';
import { claimPodView, claimView, templateView, PODS_BY_RESOURCE_CLAIM } from '../../activities/resourceclaim/projections';

const pod = (over: Partial<ClaimPodView> = {}): ClaimPodView => ({
  namespace: 'ns', name: 'p', uid: 'pod-uid', deleting: false, nodeName: '', phase: 'Pending',
  claims: [{ name: 'gpu', resourceClaimTemplateName: 't' }], statuses: {}, ...over,
});

const claim = (over: Partial<ClaimView> = {}): ClaimView => ({
  namespace: 'ns', name: 'p-gpu-abcde', uid: 'claim-uid', resourceVersion: '7', deleting: false,
  controllerPods: [{ name: 'p', uid: 'pod-uid' }], podClaimName: 'gpu', reservedFor: [], allocated: false, finalizer: false, ...over,
});

const lookupOf = (...cs: ClaimView[]) => (n: string) => cs.find((c) => c.name === n);

describe('claimNameOf (resourceclaim.Name)', () => {
  it('names a claim by its entry or by the status, or says it is not created or not needed', () => {
    expect(claimNameOf(pod(), { name: 'a', resourceClaimName: 'shared' })).toEqual({ kind: 'name', name: 'shared', checkOwner: false });
    expect(claimNameOf(pod(), { name: 'gpu', resourceClaimTemplateName: 't' })).toEqual({ kind: 'notCreated' });
    expect(claimNameOf(pod({ statuses: { gpu: 'p-gpu-x' } }), { name: 'gpu', resourceClaimTemplateName: 't' })).toEqual({ kind: 'name', name: 'p-gpu-x', checkOwner: true });
    expect(claimNameOf(pod({ statuses: { gpu: null } }), { name: 'gpu', resourceClaimTemplateName: 't' })).toEqual({ kind: 'notNeeded' });
    expect(claimNameOf(pod(), { name: 'x' })).toMatchObject({ kind: 'unsupported', message: 'pod "ns/p", spec.resourceClaim "x": none of the supported fields are set' });
  });
});

describe('pod decisions', () => {
  it('podNeedsClaims and isPodDone follow upstream', () => {
    expect(podNeedsClaims(pod(), true)).toEqual({ needs: false, reason: 'pod got removed' });
    expect(podNeedsClaims(pod({ phase: 'Succeeded' }), false).needs).toBe(false);
    expect(podNeedsClaims(pod({ deleting: true }), false)).toEqual({ needs: false, reason: 'pod got deleted before scheduling' });
    expect(podNeedsClaims(pod({ deleting: true, nodeName: 'n' }), false).needs).toBe(true);
    expect(isPodDone(pod({ phase: 'Failed', nodeName: 'n' }))).toBe(true);
    expect(isPodDone(pod({ deleting: true, nodeName: 'n', phase: 'Running' }))).toBe(false);
    expect(isPodDone(pod({ deleting: true }))).toBe(true);
  });

  it('podNeedsWork: a claim to generate, a user claim missing, a foreign claim, a claim to reserve', () => {
    expect(podNeedsWork(pod(), lookupOf())).toMatchObject({ needs: true, reason: 'must create ResourceClaim from template' });
    expect(podNeedsWork(pod({ deleting: true }), lookupOf()).needs).toBe(false);
    // a finished pod whose claim was deleted gets no new one
    expect(podNeedsWork(pod({ phase: 'Succeeded', nodeName: 'n', statuses: { gpu: 'p-gpu-abcde' } }), lookupOf())).toEqual({ needs: false, reason: 'pod has terminated' });
    // recorded but deleted since: generate again
    expect(podNeedsWork(pod({ statuses: { gpu: 'p-gpu-abcde' } }), lookupOf()).needs).toBe(true);
    expect(podNeedsWork(pod({ statuses: { gpu: 'p-gpu-abcde' } }), lookupOf(claim())).needs).toBe(false);
    expect(podNeedsWork(pod({ claims: [{ name: 'a', resourceClaimName: 'shared' }] }), lookupOf()))
      .toEqual({ needs: false, reason: 'claim is missing and must be created by user' });
    const foreign = claim({ controllerPods: [{ name: 'other', uid: 'other-uid' }] });
    expect(podNeedsWork(pod({ statuses: { gpu: foreign.name } }), lookupOf(foreign)).reason).toBe('ResourceClaim ns/p-gpu-abcde was not created for pod ns/p (pod is not owner)');
    const scheduled = pod({ nodeName: 'n', statuses: { gpu: 'p-gpu-abcde' } });
    expect(podNeedsWork(scheduled, lookupOf(claim({ allocated: true }))).needs).toBe(true);
    expect(podNeedsWork(scheduled, lookupOf(claim({ allocated: true, reservedFor: [{ resource: 'pods', name: 'p', uid: 'pod-uid' }] }))).needs).toBe(false);
  });

  it('entryStep: generate unless the recorded claim is there and the pod\'s', () => {
    const e = { name: 'gpu', resourceClaimTemplateName: 't' };
    expect(entryStep(pod(), e, lookupOf())).toEqual({ kind: 'generate', entry: e, template: 't' });
    expect(entryStep(pod({ statuses: { gpu: 'p-gpu-abcde' } }), e, lookupOf(claim()))).toEqual({ kind: 'skip' });
    expect(entryStep(pod({ statuses: { gpu: 'p-gpu-abcde' } }), e, lookupOf(claim({ controllerPods: [] }))).kind).toBe('generate');
    expect(entryStep(pod(), { name: 'u', resourceClaimName: 'x' }, lookupOf())).toEqual({ kind: 'skip' });
    expect(entryStep(pod(), { name: 'x' }, lookupOf()).kind).toBe('error');
  });

  it('findGenerated: the pod\'s claim with the entry annotation, and no other', () => {
    const mine = claim();
    const otherEntry = claim({ name: 'b', podClaimName: 'other' });
    const notOwned = claim({ name: 'c', controllerPods: [{ name: 'p', uid: 'old-uid' }] });
    const noAnnotation = claim({ name: 'd', podClaimName: undefined });
    expect(findGenerated('pod-uid', 'gpu', [otherEntry, notOwned, noAnnotation, mine])).toBe(mine);
    expect(findGenerated('pod-uid', 'gpu', [otherEntry, notOwned, noAnnotation])).toBeUndefined();
  });

  it('claimsToReserve: allocated claims of a scheduled pod not reserved for it', () => {
    const p = pod({ nodeName: 'n', statuses: { gpu: 'p-gpu-abcde' } });
    expect(claimsToReserve(p, lookupOf(claim({ allocated: true })))).toEqual({ reserve: ['p-gpu-abcde'] });
    expect(claimsToReserve(pod({ statuses: { gpu: 'p-gpu-abcde' } }), lookupOf(claim({ allocated: true })))).toEqual({ reserve: [] });
    expect(claimsToReserve(p, lookupOf(claim()))).toEqual({ reserve: [] });
  });
});

describe('the generated claim', () => {
  it('is named <pod>-<entry>- and cut in proportion past 57 characters', () => {
    expect(generateNameFor('web-0', 'gpu')).toBe('web-0-gpu-');
    const long = generateNameFor('p'.repeat(60), 'c'.repeat(20));
    expect(long).toBe(`${'p'.repeat(41)}-${'c'.repeat(13)}`);
    expect(long.length).toBeLessThanOrEqual(57);
  });

  it('copies the template\'s labels, annotations and spec, adds the entry annotation, and is controlled by the pod', () => {
    const c = generatedClaim({ name: 'p', uid: 'pod-uid' }, 'gpu', { labels: { a: 'b' }, annotations: { x: 'y' }, spec: { devices: { requests: [] } } });
    expect(c).toEqual({
      apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim',
      metadata: {
        generateName: 'p-gpu-',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'pod-uid', controller: true }],
        annotations: { x: 'y', [POD_CLAIM_ANNOTATION]: 'gpu' },
        labels: { a: 'b' },
      },
      spec: { devices: { requests: [] } },
    });
  });

  it('is refused for admin access or a prioritized list with the gate off', () => {
    const admin = { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'c', adminAccess: true } }] } };
    const prio = { devices: { requests: [{ name: 'r', firstAvailable: [{ name: 's', deviceClassName: 'c' }] }] } };
    const on = { adminAccess: true, prioritizedList: true };
    expect(templateRefusal(admin, on)).toBe('');
    expect(templateRefusal(admin, { ...on, adminAccess: false })).toBe('admin access is requested, but the feature is disabled');
    expect(templateRefusal(prio, { ...on, prioritizedList: false })).toBe('template includes a prioritized list of subrequests, but the feature is disabled');
  });
});

describe('planClaim (syncClaim)', () => {
  const live = { uid: 'pod-uid', phase: 'Running', deleting: false, nodeName: 'n' };
  const r = (name: string, uid: string) => ({ resource: 'pods', name, uid });

  it('does nothing while every reservation is of a pod that may run', () => {
    const c = claim({ reservedFor: [r('p', 'pod-uid')], allocated: true, finalizer: true });
    const plan = planClaim(c, { 'pod-uid': 'active' }, live);
    expect(planWrites(plan)).toBe(false);
  });

  it('drops a done pod\'s reservation, keeps the allocation while others use it', () => {
    const c = claim({ controllerPods: [], reservedFor: [r('a', 'ua'), r('b', 'ub')], allocated: true, finalizer: true });
    expect(planClaim(c, { ua: 'done', ub: 'active' }, undefined)).toEqual({
      status: { reservedFor: [r('b', 'ub')], clearAllocation: false }, removeFinalizer: false, delete: false,
    });
  });

  it('the last reservation leaving deallocates and removes the finalizer; a user claim stays', () => {
    const c = claim({ controllerPods: [], reservedFor: [r('a', 'ua')], allocated: true, finalizer: true });
    expect(planClaim(c, { ua: 'gone' }, undefined)).toEqual({ status: { reservedFor: [], clearAllocation: true }, removeFinalizer: true, delete: false });
    expect(planClaim(c, { ua: 'replaced' }, undefined).status?.clearAllocation).toBe(true);
  });

  it('without the finalizer the allocation is left as it is', () => {
    const c = claim({ controllerPods: [], reservedFor: [r('a', 'ua')], allocated: true, finalizer: false });
    expect(planClaim(c, { ua: 'gone' }, undefined)).toEqual({ status: { reservedFor: [], clearAllocation: false }, removeFinalizer: false, delete: false });
  });

  it('a generated claim of a finished pod is released and deleted', () => {
    const c = claim({ reservedFor: [r('p', 'pod-uid')], allocated: true, finalizer: true });
    expect(planClaim(c, { 'pod-uid': 'done' }, { ...live, phase: 'Succeeded' }))
      .toEqual({ status: { reservedFor: [], clearAllocation: true }, removeFinalizer: true, delete: true });
  });

  it('a generated claim whose pod is not known is left to the garbage collector; a replaced pod\'s is deleted', () => {
    expect(planClaim(claim(), {}, undefined)).toEqual({ removeFinalizer: false, delete: false });
    expect(planClaim(claim(), {}, { ...live, uid: 'new' }).delete).toBe(true);
    expect(planClaim(claim(), {}, live).delete).toBe(false);
  });

  it('a deleted, unused claim loses its allocation and finalizer', () => {
    const c = claim({ controllerPods: [], deleting: true, allocated: true, finalizer: true });
    expect(planClaim(c, {}, undefined)).toEqual({ clearAllocationOnly: true, removeFinalizer: true, delete: false });
    expect(planClaim({ ...c, allocated: false }, {}, undefined)).toEqual({ clearAllocationOnly: false, removeFinalizer: true, delete: false });
  });

  it('a reservation that is not a pod stops the sync', () => {
    const c = claim({ reservedFor: [{ apiGroup: 'example.com', resource: 'things', name: 'x', uid: 'u' }] });
    expect(planClaim(c, {}, live).unsupported).toMatch(/^unsupported ReservedFor entry/);
  });
});

describe('projections', () => {
  it('read a pod, a claim and a template', () => {
    const p = claimPodView({
      metadata: { namespace: 'ns', name: 'p', uid: 'u' },
      spec: { nodeName: 'n', resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 't' }, { name: 's', resourceClaimName: 'shared' }] },
      status: { phase: 'Running', resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'p-gpu-x' }] },
    });
    expect(p).toEqual({ namespace: 'ns', name: 'p', uid: 'u', deleting: false, nodeName: 'n', phase: 'Running',
      claims: [{ name: 'gpu', resourceClaimTemplateName: 't' }, { name: 's', resourceClaimName: 'shared' }], statuses: { gpu: 'p-gpu-x' } });
    expect(PODS_BY_RESOURCE_CLAIM.keys({ metadata: { namespace: 'ns', name: 'p' }, spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 't' }, { name: 's', resourceClaimName: 'shared' }] },
      status: { resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'p-gpu-x' }] } })).toEqual(['ns/p-gpu-x', 'ns/shared']);
    const c = claimView({
      metadata: { namespace: 'ns', name: 'c', uid: 'cu', resourceVersion: '3', finalizers: [CLAIM_FINALIZER], annotations: { [POD_CLAIM_ANNOTATION]: 'gpu' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u', controller: true }, { apiVersion: 'v1', kind: 'Pod', name: 'q', uid: 'v' }] },
      status: { allocation: { devices: {} }, reservedFor: [{ resource: 'pods', name: 'p', uid: 'u' }] },
    });
    expect(c).toEqual({ namespace: 'ns', name: 'c', uid: 'cu', resourceVersion: '3', deleting: false, controllerPods: [{ name: 'p', uid: 'u' }],
      podClaimName: 'gpu', reservedFor: [{ resource: 'pods', name: 'p', uid: 'u' }], allocated: true, finalizer: true });
    expect(templateView({ spec: { metadata: { labels: { a: 'b' } }, spec: { devices: {} } } })).toEqual({ labels: { a: 'b' }, spec: { devices: {} } });
  });
});
