import {
  FINALIZER_ESTIMATE_SECONDS,
  classifyContent,
  decidePass,
  discoveryFailureMessage,
  graceRemainingMs,
  gracefulEstimateSeconds,
  gvrString,
  isEmptied,
  isFinalized,
  maxPodGraceSeconds,
  mergeConditions,
  namespaceConditions,
  nextStatus,
  planPass,
  requeueAfterEstimateMs,
  resourceKey,
  summarizePass,
  withoutOurFinalizer,
} from '../../workflows/namespace/logic';
import type {
  ContentObservation,
  ContentOutcome,
  NamespaceCondition,
  NamespacedDiscovery,
  NamespacedResource,
} from '../../workflows/namespace/types';
import { type AggregatedList, namespacedFromAggregatedDiscovery } from '../../activities/namespace/activities';

// ---------------------------------------------------------------------------------------------
// fixtures

const DELETED_AT = '2026-01-01T00:00:00Z';
const T0 = Date.parse(DELETED_AT);

function res(group: string, resource: string, opts: Partial<NamespacedResource> = {}): NamespacedResource {
  return { group, version: group ? 'v1' : 'v1', resource, kind: resource, list: true, deleteCollection: true, ...opts };
}

const PODS = res('', 'pods');
const CONFIGMAPS = res('', 'configmaps');
const DEPLOYMENTS = res('apps', 'deployments');
const WIDGETS = res('example.com', 'widgets', { version: 'v1beta1' });

function obs(resource: NamespacedResource, o: Partial<ContentObservation> = {}): ContentObservation {
  return { resource, method: 'deletecollection', remaining: 0, finalizers: {}, ...o };
}

function discovery(resources: NamespacedResource[], o: Partial<NamespacedDiscovery> = {}): NamespacedDiscovery {
  return { resources, failedGroups: [], unparsable: [], ...o };
}

const byType = (cs: NamespaceCondition[], type: string) => cs.find((c) => c.type === type);

// ---------------------------------------------------------------------------------------------

describe('identity', () => {
  it('names resources by resource.group, core ones bare', () => {
    expect(resourceKey(PODS)).toBe('pods');
    expect(resourceKey(DEPLOYMENTS)).toBe('deployments.apps');
  });
  it('prints a GVR the way Go does', () => {
    expect(gvrString(CONFIGMAPS)).toBe('/v1, Resource=configmaps');
    expect(gvrString(WIDGETS)).toBe('example.com/v1beta1, Resource=widgets');
  });
});

describe('namespace state', () => {
  it('is finalized only once spec.finalizers is empty, whoever holds it', () => {
    expect(isFinalized({ finalizers: [] })).toBe(true);
    expect(isFinalized({ finalizers: ['example.com/keep'] })).toBe(false);
  });
  it('drops only our finalizer, deduplicated and sorted', () => {
    expect(withoutOurFinalizer(['kubernetes', 'z/b', 'a/c', 'z/b'])).toEqual(['a/c', 'z/b']);
    expect(withoutOurFinalizer(['kubernetes'])).toEqual([]);
  });
  it('waits out the deletion grace period from the deletion timestamp', () => {
    expect(graceRemainingMs(DELETED_AT, T0 + 2000, 5000)).toBe(3000);
    expect(graceRemainingMs(DELETED_AT, T0 + 9000, 5000)).toBe(0);
    expect(graceRemainingMs(undefined, T0, 5000)).toBe(0);
  });
});

describe('the wait for graceful pods', () => {
  it('takes the longest grace period of pods that are not terminal', () => {
    expect(maxPodGraceSeconds([
      { phase: 'Running', terminationGracePeriodSeconds: 30 },
      { phase: 'Succeeded', terminationGracePeriodSeconds: 600 },
      { phase: 'Failed', terminationGracePeriodSeconds: 500 },
      { phase: 'Pending', terminationGracePeriodSeconds: 45 },
      { phase: 'Running', terminationGracePeriodSeconds: null },
    ])).toBe(45);
    expect(maxPodGraceSeconds([])).toBe(0);
  });
  it('owes nothing once the namespace has been terminating that long', () => {
    expect(gracefulEstimateSeconds(30, DELETED_AT, T0 + 10_000)).toBe(30);
    expect(gracefulEstimateSeconds(30, DELETED_AT, T0 + 30_000)).toBe(0);
    expect(gracefulEstimateSeconds(0, DELETED_AT, T0)).toBe(0);
  });
  it('looks again after half the estimate plus a second', () => {
    expect(requeueAfterEstimateMs(30)).toBe(16_000);
    expect(requeueAfterEstimateMs(15)).toBe(8_000);
    expect(requeueAfterEstimateMs(1)).toBe(1_000);
  });
});

describe('classifyContent', () => {
  it('an empty resource is emptied', () => {
    const o = classifyContent('ns1', obs(CONFIGMAPS), DELETED_AT, T0 + 10_000);
    expect(o).toEqual({ remaining: 0, finalizers: {}, estimateSeconds: 0 });
    expect(isEmptied(o)).toBe(true);
  });
  it('pods within their grace period are waited for', () => {
    const o = classifyContent('ns1', obs(PODS, { remaining: 3, podGraceSeconds: 30 }), DELETED_AT, T0 + 10_000);
    expect(o).toEqual({ remaining: 3, finalizers: {}, estimateSeconds: 30 });
    expect(isEmptied(o)).toBe(false);
  });
  it('items held by finalizers get the fixed allowance', () => {
    const o = classifyContent('ns1', obs(WIDGETS, { remaining: 2, finalizers: { 'example.com/cleanup': 2 } }), DELETED_AT, T0 + 10_000);
    expect(o).toEqual({ remaining: 2, finalizers: { 'example.com/cleanup': 2 }, estimateSeconds: FINALIZER_ESTIMATE_SECONDS });
  });
  it('items that remain with nothing to explain them are an error in upstream words', () => {
    const o = classifyContent('ns1', obs(PODS, { remaining: 1, podGraceSeconds: 30 }), DELETED_AT, T0 + 60_000);
    expect(o.error).toBe('unexpected items still remain in namespace: ns1 for gvr: /v1, Resource=pods');
    expect(o.remaining).toBe(1);
  });
  it('an API failure is the outcome, not an exception', () => {
    const o = classifyContent('ns1', obs(DEPLOYMENTS, { error: 'the server is currently unable to handle the request' }), DELETED_AT, T0);
    expect(o).toEqual({ remaining: 0, finalizers: {}, estimateSeconds: 0, error: 'the server is currently unable to handle the request' });
    expect(isEmptied(o)).toBe(false);
  });
});

describe('planPass: resuming from progress', () => {
  it('deletes core pods first, then by name', () => {
    const plan = planPass([WIDGETS, DEPLOYMENTS, CONFIGMAPS, PODS], new Set());
    expect(plan.toDelete.map(resourceKey)).toEqual(['pods', 'configmaps', 'deployments.apps', 'widgets.example.com']);
    expect(plan.toVerify).toEqual([]);
  });
  it('skips what an earlier run emptied, and verifies it instead', () => {
    const plan = planPass([WIDGETS, DEPLOYMENTS, CONFIGMAPS, PODS], new Set(['configmaps', 'deployments.apps']));
    expect(plan.toDelete.map(resourceKey)).toEqual(['pods', 'widgets.example.com']);
    expect(plan.toVerify.map(resourceKey)).toEqual(['configmaps', 'deployments.apps']);
  });
  it('does not verify a resource it cannot list', () => {
    const unlistable = res('x.io', 'things', { list: false });
    const plan = planPass([unlistable], new Set(['things.x.io']));
    expect(plan.toVerify).toEqual([]);
    expect(plan.toDelete).toEqual([]);
  });
  it('a new resource (a CRD created meanwhile) is deleted even when the rest is done', () => {
    const plan = planPass([CONFIGMAPS, WIDGETS], new Set(['configmaps']));
    expect(plan.toDelete.map(resourceKey)).toEqual(['widgets.example.com']);
  });
  it('a restart in the middle continues with the resources not yet emptied', () => {
    const all = [PODS, CONFIGMAPS, DEPLOYMENTS, WIDGETS];
    const emptied = new Set<string>();
    const outcomes = new Map<string, ContentOutcome>();
    // first run: configmaps and deployments are emptied, then the worker dies
    for (const r of planPass(all, emptied).toDelete.slice(1, 3)) {
      const o = classifyContent('ns1', obs(r), DELETED_AT, T0 + 10_000);
      outcomes.set(resourceKey(r), o);
      if (isEmptied(o)) emptied.add(resourceKey(r));
    }
    // the next run gets only what was carried (continue-as-new input or replayed state)
    const resumed = planPass(all, new Set([...emptied]));
    expect(resumed.toDelete.map(resourceKey)).toEqual(['pods', 'widgets.example.com']);
  });
});

describe('summarizePass and decidePass', () => {
  const d = discovery([PODS, CONFIGMAPS, WIDGETS]);

  it('finalizes when every resource is empty, counting earlier ones as empty', () => {
    const outcomes = new Map<string, ContentOutcome>([['pods', { remaining: 0, finalizers: {}, estimateSeconds: 0 }]]);
    const s = summarizePass(d, outcomes, new Set(['pods', 'configmaps', 'widgets.example.com']));
    expect(decidePass(s)).toEqual({ kind: 'finalize' });
  });
  it('waits for the longest estimate while content is going', () => {
    const outcomes = new Map<string, ContentOutcome>([
      ['pods', { remaining: 2, finalizers: {}, estimateSeconds: 30 }],
      ['widgets.example.com', { remaining: 1, finalizers: { 'example.com/cleanup': 1 }, estimateSeconds: 15 }],
    ]);
    const s = summarizePass(d, outcomes, new Set(['configmaps']));
    expect(s.estimateSeconds).toBe(30);
    expect(s.remainingByResource).toEqual({ 'pods.': 2, 'widgets.example.com': 1 });
    expect(s.remainingByFinalizer).toEqual({ 'example.com/cleanup': 1 });
    expect(decidePass(s)).toEqual({ kind: 'wait', afterMs: 16_000 });
  });
  it('an error wins over waiting', () => {
    const outcomes = new Map<string, ContentOutcome>([
      ['pods', { remaining: 2, finalizers: {}, estimateSeconds: 30 }],
      ['configmaps', { remaining: 0, finalizers: {}, estimateSeconds: 0, error: 'forbidden' }],
    ]);
    const s = summarizePass(d, outcomes, new Set(['widgets.example.com']));
    expect(s.contentErrors).toEqual(['forbidden']);
    expect(decidePass(s)).toEqual({ kind: 'retry' });
  });
  it('a discovery failure for one group keeps the finalizer but not the rest from being deleted', () => {
    const partial = discovery([PODS, CONFIGMAPS], { failedGroups: [{ groupVersion: 'metrics.k8s.io/v1beta1', message: 'stale GroupVersion discovery: metrics.k8s.io/v1beta1' }] });
    const s = summarizePass(partial, new Map(), new Set(['pods', 'configmaps']));
    expect(s.discoveryFailed).toBe(true);
    expect(decidePass(s)).toEqual({ kind: 'retry' });
    expect(planPass(partial.resources, new Set()).toDelete.length).toBe(2);
  });
  it('ignores outcomes of resources discovery no longer serves', () => {
    const outcomes = new Map<string, ContentOutcome>([['gone.example.com', { remaining: 5, finalizers: {}, estimateSeconds: 0, error: 'x' }]]);
    const s = summarizePass(discovery([CONFIGMAPS]), outcomes, new Set(['configmaps']));
    expect(decidePass(s)).toEqual({ kind: 'finalize' });
  });
});

describe('namespaceConditions', () => {
  it('all clear: five False conditions with upstream reasons and messages', () => {
    const d = discovery([CONFIGMAPS]);
    const cs = namespaceConditions(d, summarizePass(d, new Map(), new Set(['configmaps'])));
    expect(cs).toEqual([
      { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
      { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
      { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
      { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
      { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
    ]);
  });

  it('reports discovery failures per group, sorted, with their count', () => {
    const d = discovery([], { failedGroups: [
      { groupVersion: 'metrics.k8s.io/v1beta1', message: 'stale GroupVersion discovery: metrics.k8s.io/v1beta1' },
      { groupVersion: 'custom.metrics.k8s.io/v1beta2', message: 'stale GroupVersion discovery: custom.metrics.k8s.io/v1beta2' },
    ] });
    const c = byType(namespaceConditions(d, summarizePass(d, new Map(), new Set())), 'NamespaceDeletionDiscoveryFailure');
    expect(c).toEqual({
      type: 'NamespaceDeletionDiscoveryFailure', status: 'True', reason: 'DiscoveryFailed',
      message: 'Discovery failed for some groups, 2 failing: unable to retrieve the complete list of server APIs: '
        + 'custom.metrics.k8s.io/v1beta2: stale GroupVersion discovery: custom.metrics.k8s.io/v1beta2, '
        + 'metrics.k8s.io/v1beta1: stale GroupVersion discovery: metrics.k8s.io/v1beta1',
    });
  });

  it('a total discovery failure carries the error as it is', () => {
    const d = discovery([], { failure: 'the server is currently unable to handle the request' });
    expect(discoveryFailureMessage(d)).toBe('the server is currently unable to handle the request');
  });

  it('reports a group version that cannot be parsed', () => {
    const d = discovery([], { unparsable: ['a/b/c'] });
    const c = byType(namespaceConditions(d, summarizePass(d, new Map(), new Set())), 'NamespaceDeletionGroupVersionParsingFailure');
    expect(c).toMatchObject({ status: 'True', reason: 'GroupVersionParsingFailed', message: 'unexpected GroupVersion string: a/b/c' });
  });

  it('reports remaining content, finalizers and content failures as upstream words them', () => {
    const d = discovery([PODS, CONFIGMAPS, WIDGETS, DEPLOYMENTS]);
    const outcomes = new Map<string, ContentOutcome>([
      ['pods', { remaining: 2, finalizers: {}, estimateSeconds: 30 }],
      ['widgets.example.com', { remaining: 3, finalizers: { 'example.com/b': 3, 'example.com/a': 1 }, estimateSeconds: 15 }],
      ['configmaps', classifyContent('ns1', obs(CONFIGMAPS, { remaining: 1 }), DELETED_AT, T0 + 60_000)],
      ['deployments.apps', { remaining: 0, finalizers: {}, estimateSeconds: 0, error: 'deployments.apps is forbidden' }],
    ]);
    const cs = namespaceConditions(d, summarizePass(d, outcomes, new Set()));
    expect(byType(cs, 'NamespaceContentRemaining')).toEqual({
      type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances, widgets.example.com has 3 resource instances',
    });
    expect(byType(cs, 'NamespaceFinalizersRemaining')).toEqual({
      type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/a in 1 resource instances, example.com/b in 3 resource instances',
    });
    expect(byType(cs, 'NamespaceDeletionContentFailure')).toEqual({
      type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed',
      message: 'Failed to delete all resource types, 2 remaining: deployments.apps is forbidden, unexpected items still remain in namespace: ns1 for gvr: /v1, Resource=configmaps',
    });
    expect(byType(cs, 'NamespaceDeletionDiscoveryFailure')?.status).toBe('False');
  });
});

describe('mergeConditions and nextStatus', () => {
  const NOW = '2026-01-01T00:01:00Z';
  const d = discovery([CONFIGMAPS]);
  const clear = namespaceConditions(d, summarizePass(d, new Map(), new Set(['configmaps'])));

  it('appends missing types in order and keeps conditions of other types', () => {
    const other: NamespaceCondition = { type: 'example.com/Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' };
    const { conditions, changed } = mergeConditions([other], clear, NOW);
    expect(changed).toBe(true);
    expect(conditions[0]).toEqual(other);
    expect(conditions.slice(1).map((c) => c.type)).toEqual(clear.map((c) => c.type));
    expect(conditions.slice(1).every((c) => c.lastTransitionTime === NOW)).toBe(true);
  });

  it('moves the transition time only when the status flips', () => {
    const stored = mergeConditions([], clear, '2026-01-01T00:00:10Z').conditions;
    const remaining = clear.map((c) => (c.type === 'NamespaceContentRemaining'
      ? { ...c, status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: pods. has 1 resource instances' } : c));
    const once = mergeConditions(stored, remaining, NOW);
    expect(once.changed).toBe(true);
    expect(byType(once.conditions, 'NamespaceContentRemaining')?.lastTransitionTime).toBe(NOW);
    expect(byType(once.conditions, 'NamespaceDeletionDiscoveryFailure')?.lastTransitionTime).toBe('2026-01-01T00:00:10Z');

    const fewer = remaining.map((c) => (c.type === 'NamespaceContentRemaining' ? { ...c, message: 'Some resources are remaining: pods. has 2 resource instances' } : c));
    const twice = mergeConditions(once.conditions, fewer, '2026-01-01T00:02:00Z');
    expect(twice.changed).toBe(true);
    expect(byType(twice.conditions, 'NamespaceContentRemaining')?.lastTransitionTime).toBe(NOW);
  });

  it('writes nothing when phase and conditions already say it all', () => {
    const stored = mergeConditions([], clear, NOW).conditions;
    expect(nextStatus({ phase: 'Terminating', conditions: stored }, clear, T0)).toBeUndefined();
  });

  it('sets phase Terminating when it is not yet', () => {
    const stored = mergeConditions([], clear, NOW).conditions;
    expect(nextStatus({ phase: 'Active', conditions: stored }, clear, T0)).toEqual({ phase: 'Terminating', conditions: stored });
  });

  it('stamps transition times in whole seconds', () => {
    const next = nextStatus({ conditions: [] }, clear, T0 + 1234);
    expect(next?.conditions[0].lastTransitionTime).toBe('2026-01-01T00:00:01Z');
  });
});

describe('aggregated discovery', () => {
  const list = (items: NonNullable<AggregatedList['items']>): AggregatedList => ({ kind: 'APIGroupDiscoveryList', items });
  const r = (resource: string, scope: string, verbs: string[]) => ({ resource, responseKind: { kind: resource }, scope, verbs });
  const all = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

  it('keeps namespaced deletable resources at the preferred version, and reports stale versions', () => {
    const d = namespacedFromAggregatedDiscovery([
      list([{ metadata: { name: '' }, versions: [{ version: 'v1', freshness: 'Current', resources: [
        r('pods', 'Namespaced', all), r('nodes', 'Cluster', all), r('bindings', 'Namespaced', ['create']),
        r('events', 'Namespaced', ['create', 'delete', 'get', 'list']),
      ] }] }]),
      list([
        { metadata: { name: 'example.com' }, versions: [
          { version: 'v2', freshness: 'Current', resources: [r('widgets', 'Namespaced', all)] },
          { version: 'v1', freshness: 'Current', resources: [r('widgets', 'Namespaced', all), r('gadgets', 'Namespaced', all)] },
        ] },
        { metadata: { name: 'metrics.k8s.io' }, versions: [{ version: 'v1beta1', freshness: 'Stale' }] },
      ]),
    ]);
    expect(d.resources.map((x) => `${x.group}/${x.version}/${x.resource}:${x.deleteCollection}`).sort()).toEqual([
      '/v1/events:false', '/v1/pods:true', 'example.com/v1/gadgets:true', 'example.com/v2/widgets:true',
    ]);
    expect(d.failedGroups).toEqual([{ groupVersion: 'metrics.k8s.io/v1beta1', message: 'stale GroupVersion discovery: metrics.k8s.io/v1beta1' }]);
  });
});
