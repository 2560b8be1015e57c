import { aggregateRules, sameRules, sourcesOf, ClusterRoleView } from '../../workflows/clusterrole-aggregation/logic';
import { rootCaWriteNeeded } from '../../workflows/root-ca-cert-publisher/logic';
import { missingServiceAccounts } from '../../workflows/serviceaccount/logic';

describe('missingServiceAccounts', () => {
  test('an active namespace without default lacks it; with it, nothing', () => {
    expect(missingServiceAccounts(true, [])).toEqual(['default']);
    expect(missingServiceAccounts(true, ['default', 'other'])).toEqual([]);
  });
  test('a terminating namespace is owed nothing', () => {
    expect(missingServiceAccounts(false, [])).toEqual([]);
  });
});

describe('rootCaWriteNeeded', () => {
  const good = { resourceVersion: '1', caSha256: 'abc', dataKeys: ['ca.crt'], hasDescription: true };
  test('missing: create; exact: nothing', () => {
    expect(rootCaWriteNeeded(true, undefined, 'abc')).toBe('create');
    expect(rootCaWriteNeeded(true, good, 'abc')).toBeUndefined();
  });
  test('another bundle, an extra key, or no description: update', () => {
    expect(rootCaWriteNeeded(true, { ...good, caSha256: 'def' }, 'abc')).toBe('update');
    expect(rootCaWriteNeeded(true, { ...good, dataKeys: ['ca.crt', 'x'] }, 'abc')).toBe('update');
    expect(rootCaWriteNeeded(true, { ...good, caSha256: undefined, dataKeys: [] }, 'abc')).toBe('update');
    expect(rootCaWriteNeeded(true, { ...good, hasDescription: false }, 'abc')).toBe('update');
  });
  test('inactive namespaces get nothing', () => {
    expect(rootCaWriteNeeded(false, undefined, 'abc')).toBeUndefined();
  });
});

describe('aggregateRules', () => {
  const get = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const list = { verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] };
  const watch = { verbs: ['watch'], apiGroups: [''], resources: ['secrets'] };
  const roles: ClusterRoleView[] = [
    { name: 'zeta', labels: { agg: 'x' }, rules: [watch, get] },
    { name: 'alpha', labels: { agg: 'x' }, rules: [get] },
    { name: 'mid', labels: { other: 'y' }, rules: [list] },
    { name: 'self', labels: { agg: 'x' }, rules: [list] },
  ];
  test('matching roles in name order, each rule once, the role itself left out', () => {
    expect(aggregateRules('self', [{ matchLabels: { agg: 'x' } }], roles)).toEqual([get, watch]);
  });
  test('selectors in their order, a rule already taken by an earlier selector not repeated', () => {
    const want = aggregateRules('self', [{ matchLabels: { other: 'y' } }, { matchLabels: { agg: 'x' } }], roles);
    expect(want).toEqual([list, get, watch]);
    expect(sourcesOf('self', [{ matchLabels: { other: 'y' } }, { matchLabels: { agg: 'x' } }], roles).map((r) => r.name).sort()).toEqual(['alpha', 'mid', 'zeta']);
  });
  test('no match: no rules', () => {
    expect(aggregateRules('self', [{ matchLabels: { none: 'z' } }], roles)).toEqual([]);
  });
  test('absent and empty lists are the same rule; order of rules matters', () => {
    expect(sameRules([{ verbs: ['get'], resourceNames: [] }], [{ verbs: ['get'] }])).toBe(true);
    expect(sameRules([get, list], [list, get])).toBe(false);
    expect(sameRules([get], [{ ...get, verbs: ['get', 'list'] }])).toBe(false);
  });
});
