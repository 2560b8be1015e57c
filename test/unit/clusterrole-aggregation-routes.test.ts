import { CLUSTER_ROLE_FIELDS, aggregationRoutes, roleOf } from '../../activities/clusterrole-aggregation/routes';
import pino from 'pino';
import { InformerCache } from '../../activities/informers/cache';
import { prune } from '../../activities/informers/fields';
import type { Signaller, Target } from '../../activities/informers/signaller';
import type { KubeRest } from '../../activities/kube/rest';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';
import type { PolicyRule } from '../../workflows/clusterrole-aggregation/logic';
import { clusterRoleAggregationWorkflow, type AggregationEvent } from '../../workflows/clusterrole-aggregation/workflow';
import { routeHarness } from '../support/routes';

const ROLES = RESOURCES.clusterRoles;
const harness = () => routeHarness<AggregationEvent>(aggregationRoutes, { controllers: ['clusterrole-aggregation'], tuning: { resyncMs: 1000 } });

const READ: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
const WRITE: PolicyRule = { verbs: ['create'], apiGroups: [''], resources: ['pods'] };
const AGG = { 'rbac.example.com/aggregate-to-view': 'true' };

const role = (name: string, o: { labels?: Record<string, string>; rules?: PolicyRule[]; aggregates?: boolean; rv?: string } = {}): KubeObject => ({
  metadata: { name, uid: `cr-${name}`, resourceVersion: o.rv ?? '1', ...(o.labels ? { labels: o.labels } : {}) },
  ...(o.rules ? { rules: o.rules } : {}),
  ...(o.aggregates ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: AGG }] } } : {}),
} as KubeObject);

describe('clusterrole-aggregation routes', () => {
  test('only with the controller enabled; every ClusterRole', () => {
    expect(routeHarness(aggregationRoutes, { controllers: ['job'] }).family).toBeUndefined();
    const { cache, family } = harness();
    expect(family).toEqual({});
    expect(cache.paths).toEqual([resourcePath(ROLES)]);
  });

  test('after the list, an aggregated role whose rules differ from its sources\' is signalled with those sources; a current one is not', () => {
    const { sent, h } = harness();
    h(ROLES).relisted([
      role('view', { aggregates: true }),
      role('current', { aggregates: true, rules: [READ] }),
      role('reader', { labels: AGG, rules: [READ] }),
      role('plain', { rules: [WRITE] }),
    ], '1');
    // 'current' picks up 'reader' too, and holds exactly its rules
    expect(sent.map((s) => s.target.workflowId)).toEqual(['clusterrole-aggregation/view']);
    expect(sent[0].target).toMatchObject({ controller: 'clusterrole-aggregation', workflow: clusterRoleAggregationWorkflow, kind: 'ClusterRole', namespace: '', name: 'view', uid: 'cr-view',
      args: { name: 'view', tuning: { resyncMs: 1000 } } });
    expect(sent[0].event).toEqual({ uid: 'cr-view', selectors: [{ matchLabels: AGG }], rules: [], sources: [{ name: 'reader', labels: AGG, rules: [READ] }] });
    expect(sent[0].urgent).toBe(false);
  });

  test('any watched change checks every aggregated role again: a new source, a changed one, a deleted one', () => {
    const { sent, h } = harness();
    h(ROLES).relisted([role('view', { aggregates: true, rules: [READ] }), role('reader', { labels: AGG, rules: [READ] })], '1');
    expect(sent).toHaveLength(0);
    h(ROLES).event('ADDED', role('writer', { labels: AGG, rules: [WRITE], rv: '2' }));
    expect(sent.map((s) => s.event.sources.map((r) => r.name))).toEqual([['reader', 'writer']]);
    sent.length = 0;
    h(ROLES).event('MODIFIED', role('view', { aggregates: true, rules: [READ, WRITE], rv: '3' }));
    expect(sent).toHaveLength(0);
    h(ROLES).event('DELETED', role('writer', { labels: AGG, rules: [WRITE], rv: '4' }));
    expect(sent.map((s) => [s.id, s.event.rules, s.event.sources.map((r) => r.name)])).toEqual([['/view', [READ, WRITE], ['reader']]]);
  });

  test('a relist is checked once, as a whole', () => {
    const { sent, h } = harness();
    h(ROLES).relisted([role('view', { aggregates: true }), role('edit', { aggregates: true }), role('reader', { labels: AGG, rules: [READ] })], '1');
    sent.length = 0;
    h(ROLES).relisted([role('view', { aggregates: true }), role('reader', { labels: AGG, rules: [READ] })], '2');
    expect(sent.map((s) => s.id)).toEqual(['/view']);
  });

  test('registered on a store another controller already listed, it checks that list at once', () => {
    const cache = new InformerCache({} as KubeRest, pino({ level: 'silent' }));
    cache.watch(ROLES, CLUSTER_ROLE_FIELDS).replace([role('view', { aggregates: true }), role('reader', { labels: AGG, rules: [READ] })], '1');
    const sent: string[] = [];
    const signaller = { queue: (t: Target) => sent.push(t.workflowId ?? '') } as unknown as Signaller;
    aggregationRoutes({ input: { controllers: ['clusterrole-aggregation'] }, signaller, cache, baseTaskQueue: 'q' });
    expect(sent).toEqual(['clusterrole-aggregation/view']);
  });

  test('roleOf reads nothing CLUSTER_ROLE_FIELDS drops; a rule without selectors still aggregates', () => {
    const rich = {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole',
      metadata: { name: 'view', uid: 'u', resourceVersion: '3', labels: AGG, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
      rules: [READ, { verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: AGG }, { matchExpressions: [{ key: 'k', operator: 'Exists' }] }] },
    } as unknown as KubeObject;
    expect(roleOf(prune(rich, CLUSTER_ROLE_FIELDS) as KubeObject)).toEqual(roleOf(rich));
    const empty = { metadata: { name: 'e' }, aggregationRule: {} } as unknown as KubeObject;
    expect(roleOf(prune(empty, CLUSTER_ROLE_FIELDS) as KubeObject)).toEqual({ name: 'e', uid: '', labels: {}, rules: [], selectors: [] });
  });
});
