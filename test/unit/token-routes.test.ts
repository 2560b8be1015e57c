import { createHash } from 'node:crypto';
import { metadataOnly, prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES, resourcePath } from '../../activities/kube/resources';
import { TOKEN_ACCOUNT_FIELDS, TOKEN_SECRET_FIELDS, secretView, tokenRoutes } from '../../activities/serviceaccount-token/routes';
import { tokenSecretWorkflow, type TokenSecretEvent } from '../../workflows/serviceaccount-token/workflow';
import { routeHarness } from '../support/routes';

const SA = RESOURCES.serviceAccounts;
const SECRETS = RESOURCES.secrets;
const TOKEN_TYPE = 'kubernetes.io/service-account-token';
const OWNED = { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'sa-uid' };

const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function harness(rootCa?: string) {
  return routeHarness<TokenSecretEvent>(tokenRoutes, { controllers: ['serviceaccount-token'], tuning: { resyncMs: 1000 } }, { rootCa });
}
const account = (name: string, uid: string, namespace = 'team-a'): KubeObject => ({ metadata: { namespace, name, uid, resourceVersion: '1' } });
/** a Secret as the API serves it: base64 data, which the cache turns into digests before anything sees it */
const secret = (name: string, uid: string, data: Record<string, string>, annotations: Record<string, string> = OWNED, o: { type?: string; ns?: string } = {}): KubeObject =>
  ({ metadata: { namespace: o.ns ?? 'team-a', name, uid, resourceVersion: '5', annotations }, type: o.type ?? TOKEN_TYPE, data } as KubeObject);
const opaque = { type: 'Opaque' };
const complete = () => ({ token: b64('a.b.c'), namespace: b64('team-a'), 'ca.crt': b64('CA') });

describe('token routes: what they watch', () => {
  test('only with the controller enabled; all accounts (metadata only) and all Secrets, no field selector', () => {
    expect(routeHarness(tokenRoutes, { controllers: ['replicaset'] }).family).toBeUndefined();
    const { cache } = harness();
    expect(cache.paths.sort()).toEqual([resourcePath(SECRETS), resourcePath(SA)].sort());
    expect(metadataOnly(TOKEN_ACCOUNT_FIELDS)).toBe(true);
  });

  test('the store keeps only digests of Secret data; a workflow gets booleans and the CA digest', () => {
    const { sent, h, cache } = harness('CA');
    h(SECRETS).relisted([secret('builder-token', 's-uid', { 'ca.crt': b64('CA'), token: '' })], '5');
    const held = [...cache.store(SECRETS)!.list()];
    expect(JSON.stringify(held)).not.toContain(b64('CA'));
    expect((held[0] as { data?: Record<string, string> }).data).toEqual({ 'ca.crt': sha('CA'), token: '' });
    expect(sent).toHaveLength(1);
    const [q] = sent;
    expect(q.target).toMatchObject({ controller: 'serviceaccount-token', workflow: tokenSecretWorkflow, kind: 'Secret', namespace: 'team-a', name: 'builder-token', uid: 's-uid', workflowId: 'serviceaccount-token/team-a/builder-token' });
    expect(q.target.args).toEqual({ namespace: 'team-a', name: 'builder-token', uid: 's-uid', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', tuning: { resyncMs: 1000 } });
    expect(q.event).toEqual({ secret: { namespace: 'team-a', name: 'builder-token', uid: 's-uid', resourceVersion: '5', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', hasToken: false, hasNamespace: false, caSha256: sha('CA') } });
    expect(q.urgent).toBe(false);
    expect(JSON.stringify(q)).not.toContain(b64('CA'));
  });

  test('Secrets of other types are never looked at: not listed, added, changed nor deleted', () => {
    const { sent, h } = harness();
    h(SA).relisted([], '1');
    h(SECRETS).relisted([secret('plain', 'u1', {}, OWNED, opaque)], '2');
    h(SECRETS).event('ADDED', secret('plain2', 'u2', {}, OWNED, opaque));
    h(SECRETS).event('MODIFIED', secret('plain2', 'u2', { x: b64('y') }, OWNED, opaque));
    h(SECRETS).event('DELETED', secret('plain2', 'u2', {}, OWNED, opaque));
    h(SA).event('DELETED', account('builder', 'sa-uid'));
    expect(sent).toHaveLength(0);
  });
});

describe('token routes: which Secrets wake their workflow', () => {
  test('a complete Secret costs nothing; a stale CA wakes it', () => {
    const { sent, h } = harness('CA');
    h(SA).relisted([account('builder', 'sa-uid')], '1');
    h(SECRETS).relisted([secret('ok', 'u1', complete())], '2');
    expect(sent).toHaveLength(0);
    h(SECRETS).event('MODIFIED', secret('ok', 'u1', { ...complete(), 'ca.crt': b64('OLD') }));
    expect(sent.map((q) => [q.id, q.event.secret?.caSha256])).toEqual([['team-a/ok', sha('OLD')]]);
  });

  test('without a configured CA any ca.crt will do', () => {
    const { sent, h } = harness();
    h(SA).relisted([account('builder', 'sa-uid')], '1');
    h(SECRETS).relisted([secret('ok', 'u1', { ...complete(), 'ca.crt': b64('OTHER') })], '2');
    expect(sent).toHaveLength(0);
  });

  test('accounts are judged missing only once listed, and then every token Secret is judged once', () => {
    const { sent, h } = harness();
    h(SECRETS).relisted([secret('orphan', 'u1', complete(), { 'kubernetes.io/service-account.name': 'ghost' }), secret('fine', 'u2', complete())], '1');
    expect(sent).toHaveLength(0);
    h(SA).relisted([account('builder', 'sa-uid')], '2');
    expect(sent.map((q) => q.id)).toEqual(['team-a/orphan']);
    sent.length = 0;
    h(SA).relisted([account('builder', 'sa-uid')], '3');
    expect(sent).toHaveLength(0); // a later relist of the accounts judges no Secret again

    h(SECRETS).event('ADDED', secret('other', 'u3', complete(), { 'kubernetes.io/service-account.name': 'ghost' }));
    h(SECRETS).event('ADDED', secret('wrong-uid', 'u4', complete(), { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'old' }));
    h(SECRETS).event('ADDED', secret('no-uid', 'u5', complete(), { 'kubernetes.io/service-account.name': 'builder' }));
    expect(sent.map((q) => q.id)).toEqual(['team-a/other', 'team-a/wrong-uid']);
  });

  test('a relist of the Secrets judges each again, as upstream\'s resync does', () => {
    const { sent, h } = harness();
    h(SA).relisted([], '1');
    h(SECRETS).relisted([secret('orphan', 'u1', complete())], '2');
    h(SECRETS).relisted([secret('orphan', 'u1', complete())], '3');
    expect(sent.map((q) => q.id)).toEqual(['team-a/orphan', 'team-a/orphan']);
  });
});

describe('token routes: deletions', () => {
  test('a deleted ServiceAccount wakes the Secrets that belong to it, and only those', () => {
    const { sent, h } = harness();
    h(SA).relisted([account('builder', 'sa-uid'), account('builder', 'sa-b', 'team-b')], '1');
    h(SECRETS).relisted([
      secret('mine', 'u1', complete()),
      secret('mine-no-uid', 'u2', complete(), { 'kubernetes.io/service-account.name': 'builder' }),
      secret('older', 'u3', complete(), { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'older' }),
      secret('someone-else', 'u4', complete(), { 'kubernetes.io/service-account.name': 'deployer' }),
      secret('elsewhere', 'u5', complete(), OWNED, { ns: 'team-b' }),
    ], '2');
    sent.length = 0; // 'older', 'someone-else' and 'elsewhere' have no account
    h(SA).event('DELETED', account('builder', 'sa-uid'));
    expect(sent.map((q) => q.id)).toEqual(['team-a/mine', 'team-a/mine-no-uid']);
    expect(sent[0].event).toEqual({ serviceAccountDeleted: { name: 'builder', uid: 'sa-uid' } });
  });

  test('an account replaced under its name during a watch gap counts as deleted; one missing from a relist too', () => {
    const { sent, h } = harness();
    h(SA).relisted([account('builder', 'sa-uid')], '1');
    h(SECRETS).relisted([secret('mine', 'u1', complete())], '2');
    h(SA).relisted([account('builder', 'sa-new')], '3');
    expect(sent.map((q) => q.event)).toEqual([{ serviceAccountDeleted: { name: 'builder', uid: 'sa-uid' } }]);
    sent.length = 0;
    h(SA).relisted([], '4');
    expect(sent).toHaveLength(0); // 'mine' names sa-uid, not sa-new
  });

  test('a deleted Secret (by the watch or missing from a relist) wakes its workflow to clean up and end, with the account it named', () => {
    const { sent, h } = harness();
    h(SA).relisted([account('builder', 'sa-uid')], '1');
    h(SECRETS).relisted([secret('a', 'u1', complete()), secret('b', 'u2', complete())], '2');
    h(SECRETS).event('DELETED', secret('a', 'u1', complete()));
    h(SECRETS).relisted([], '3');
    expect(sent.map((q) => [q.id, q.event])).toEqual([['team-a/a', { secretDeletedUid: 'u1' }], ['team-a/b', { secretDeletedUid: 'u2' }]]);
    expect(sent[0].target.args).toMatchObject({ serviceAccountName: 'builder', serviceAccountUid: 'sa-uid' });
  });
});

describe('token routes: masks', () => {
  test('secretView reads nothing TOKEN_SECRET_FIELDS drops', () => {
    // as the store holds it: data values are already digests
    const rich = {
      apiVersion: 'v1', kind: 'Secret', type: TOKEN_TYPE, immutable: false,
      metadata: {
        namespace: 'team-a', name: 's', uid: 'u', resourceVersion: '9', deletionTimestamp: '2026-01-01T00:00:00Z', labels: { a: 'b' },
        annotations: { ...OWNED, other: 'x' }, finalizers: ['f'],
      },
      data: { token: sha('t'), namespace: sha('team-a'), 'ca.crt': sha('CA'), extra: '' },
    } as unknown as KubeObject;
    const full = secretView(rich);
    expect(full).toMatchObject({ hasToken: true, hasNamespace: true, caSha256: sha('CA'), deleting: true, serviceAccountUid: 'sa-uid' });
    expect(secretView(prune(rich, TOKEN_SECRET_FIELDS) as KubeObject)).toEqual(full);
  });

  test('an empty value is not there: no token, no namespace, no CA', () => {
    const v = secretView({ metadata: { name: 's' }, data: { token: '', namespace: '', 'ca.crt': '' } } as unknown as KubeObject);
    expect(v).toMatchObject({ hasToken: false, hasNamespace: false });
    expect(v.caSha256).toBeUndefined();
  });
});
