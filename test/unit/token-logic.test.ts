import { tokenSecretWorkflow } from '../../workflows/serviceaccount-token/workflow';
import { createHash } from 'node:crypto';
import { SERVICE_ACCOUNTS_PATH, TOKEN_SECRETS_PATH, tokenRoutes } from '../../activities/serviceaccount-token/routes';
import type { Signaller, Target } from '../../activities/informers/signaller';
import type { KubeObject } from '../../activities/kube/projections';
import { belongsTo, caCurrentFor, decideTokenSecret, neededFill, needsFill, secretNeedsSync } from '../../workflows/serviceaccount-token/logic';
import type { ServiceAccountLookup, TokenObservation, TokenSecretState, TokenSecretView } from '../../workflows/serviceaccount-token/types';
import { mergeTokenSecretEvents, tokenSecretWorkflowId, type TokenSecretEvent } from '../../workflows/serviceaccount-token/workflow';

// ---------------------------------------------------------------------------------------------
// fixtures

function state(over: Partial<TokenSecretState> = {}): TokenSecretState {
  return {
    uid: 's-uid',
    resourceVersion: '42',
    serviceAccountName: 'builder',
    serviceAccountUid: 'sa-uid',
    hasToken: true,
    hasNamespace: true,
    caCurrent: true,
    deleting: false,
    ...over,
  };
}

const EXISTS: ServiceAccountLookup = { state: 'exists', name: 'builder', uid: 'sa-uid', resourceVersion: '7', referencesSecret: false };
const ABSENT: ServiceAccountLookup = { state: 'absent' };

function obs(secret: TokenSecretState | undefined, serviceAccount: ServiceAccountLookup = EXISTS, replacedByUid?: string): TokenObservation {
  return { ...(secret ? { secret } : {}), ...(replacedByUid ? { replacedByUid } : {}), serviceAccount };
}

function view(over: Partial<TokenSecretView> = {}): TokenSecretView {
  return {
    namespace: 'team-a', name: 'builder-token', uid: 's-uid', resourceVersion: '1',
    serviceAccountName: 'builder', serviceAccountUid: 'sa-uid',
    hasToken: true, hasNamespace: true, ...over,
  };
}

// ---------------------------------------------------------------------------------------------
// what a Secret lacks

describe('neededFill / caCurrentFor / belongsTo', () => {
  it('follows upstream secretUpdateNeeded: empty token, empty namespace, ca.crt not the root CA', () => {
    expect(neededFill({ hasToken: true, hasNamespace: true, caCurrent: true })).toEqual({ token: false, ca: false, namespace: false });
    expect(neededFill({ hasToken: false, hasNamespace: false, caCurrent: false })).toEqual({ token: true, ca: true, namespace: true });
    expect(needsFill({ token: false, ca: false, namespace: false })).toBe(false);
    expect(needsFill({ token: false, ca: true, namespace: false })).toBe(true);
  });

  it('a CA is current when none is configured, or when the hashes are equal', () => {
    expect(caCurrentFor(undefined, undefined)).toBe(true);
    expect(caCurrentFor('abc', undefined)).toBe(true);
    expect(caCurrentFor('abc', 'abc')).toBe(true);
    expect(caCurrentFor(undefined, 'abc')).toBe(false);
    expect(caCurrentFor('old', 'abc')).toBe(false);
  });

  it('a Secret belongs to an account by name, and by UID when it carries one', () => {
    expect(belongsTo({ serviceAccountName: 'a' }, { name: 'a', uid: 'u1' })).toBe(true);
    expect(belongsTo({ serviceAccountName: 'a', serviceAccountUid: 'u1' }, { name: 'a', uid: 'u1' })).toBe(true);
    expect(belongsTo({ serviceAccountName: 'a', serviceAccountUid: 'u0' }, { name: 'a', uid: 'u1' })).toBe(false);
    expect(belongsTo({ serviceAccountName: 'b' }, { name: 'a', uid: 'u1' })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// the decision

describe('decideTokenSecret', () => {
  it('does nothing for a complete Secret of an existing account', () => {
    expect(decideTokenSecret(obs(state()), 'team-a/builder-token')).toMatchObject({ type: 'nothing' });
  });

  it('fills exactly what is missing, for the live account, at the version read', () => {
    const a = decideTokenSecret(obs(state({ hasToken: false, caCurrent: false })), 'team-a/builder-token');
    expect(a).toEqual({
      type: 'fill',
      fill: { token: true, ca: true, namespace: false },
      serviceAccount: { name: 'builder', uid: 'sa-uid' },
      resourceVersion: '42',
      reason: 'token Secret team-a/builder-token lacks a token, the root CA for ServiceAccount builder',
    });
    expect(decideTokenSecret(obs(state({ hasNamespace: false })), 'x')).toMatchObject({ type: 'fill', fill: { token: false, ca: false, namespace: true } });
  });

  it('fills a Secret without the UID annotation with the live account UID (upstream sets both annotations)', () => {
    const a = decideTokenSecret(obs(state({ serviceAccountUid: undefined, hasToken: false }), { ...EXISTS, uid: 'live-uid' }), 'x');
    expect(a).toMatchObject({ type: 'fill', serviceAccount: { name: 'builder', uid: 'live-uid' } });
  });

  it('deletes a Secret whose account is absent (404 or another UID)', () => {
    const a = decideTokenSecret(obs(state(), ABSENT), 'team-a/builder-token');
    expect(a).toEqual({ type: 'delete', reason: 'ServiceAccount builder with UID sa-uid does not exist: delete token Secret team-a/builder-token' });
    // even one that still lacks data: there is no account to mint for
    expect(decideTokenSecret(obs(state({ hasToken: false, serviceAccountUid: undefined }), ABSENT), 'x')).toMatchObject({
      type: 'delete', reason: expect.stringContaining('ServiceAccount builder does not exist'),
    });
  });

  it('leaves a Secret of an absent account alone while it is already being deleted', () => {
    expect(decideTokenSecret(obs(state({ deleting: true }), ABSENT), 'x')).toMatchObject({ type: 'nothing' });
  });

  it('still fills a Secret being deleted when its account exists, as upstream does', () => {
    expect(decideTokenSecret(obs(state({ deleting: true, hasToken: false })), 'x')).toMatchObject({ type: 'fill' });
  });

  it('ignores a Secret that names no account', () => {
    expect(decideTokenSecret(obs(state({ serviceAccountName: '' }), { state: 'unknown' }), 'x')).toMatchObject({ type: 'nothing' });
  });

  it('once the Secret is gone: removes it from the account that still lists it, else finishes', () => {
    expect(decideTokenSecret(obs(undefined, { ...EXISTS, referencesSecret: true }), 'team-a/builder-token')).toEqual({
      type: 'removeReference',
      serviceAccount: { name: 'builder', uid: 'sa-uid' },
      reason: "token Secret team-a/builder-token is gone: remove it from ServiceAccount builder's secrets",
    });
    expect(decideTokenSecret(obs(undefined, EXISTS), 'x')).toMatchObject({ type: 'finish' });
    expect(decideTokenSecret(obs(undefined, ABSENT), 'x')).toMatchObject({ type: 'finish' });
    expect(decideTokenSecret(obs(undefined, { state: 'unknown' }, 'new-uid'), 'x')).toMatchObject({ type: 'finish' });
  });
});

// ---------------------------------------------------------------------------------------------
// routing

describe('secretNeedsSync', () => {
  it('wakes a workflow for missing data at once, for a missing account only once accounts are listed', () => {
    expect(secretNeedsSync(view(), undefined, { uid: 'sa-uid' })).toBe(false);
    expect(secretNeedsSync(view({ hasToken: false }), undefined, 'unsynced')).toBe(true);
    expect(secretNeedsSync(view(), undefined, 'unsynced')).toBe(false);
    expect(secretNeedsSync(view(), undefined, 'missing')).toBe(true);
    expect(secretNeedsSync(view(), undefined, { uid: 'other' })).toBe(true);
    expect(secretNeedsSync(view({ serviceAccountUid: undefined }), undefined, { uid: 'other' })).toBe(false);
  });

  it('compares ca.crt by hash with the configured root CA', () => {
    expect(secretNeedsSync(view({ caSha256: 'aa' }), 'aa', { uid: 'sa-uid' })).toBe(false);
    expect(secretNeedsSync(view({ caSha256: 'bb' }), 'aa', { uid: 'sa-uid' })).toBe(true);
    expect(secretNeedsSync(view(), 'aa', { uid: 'sa-uid' })).toBe(true);
  });

  it('ignores a Secret that names no account', () => {
    expect(secretNeedsSync(view({ serviceAccountName: '', hasToken: false }), undefined, 'missing')).toBe(false);
  });
});

describe('events', () => {
  it('workflow IDs are controller/namespace/name', () => {
    expect(tokenSecretWorkflowId('team-a', 'builder-token')).toBe('serviceaccount-token/team-a/builder-token');
  });

  it('merging keeps the latest view and every deletion seen', () => {
    const a: TokenSecretEvent = { secret: view({ resourceVersion: '1' }), serviceAccountDeleted: { name: 'builder', uid: 'sa-uid' } };
    const b: TokenSecretEvent = { secretDeletedUid: 's-uid' };
    expect(mergeTokenSecretEvents(a, b)).toEqual({ secret: a.secret, secretDeletedUid: 's-uid', serviceAccountDeleted: { name: 'builder', uid: 'sa-uid' } });
    expect(mergeTokenSecretEvents(a, { secret: view({ resourceVersion: '2' }) }).secret?.resourceVersion).toBe('2');
  });
});

describe('tokenRoutes', () => {
  interface Queued { target: Target; event: TokenSecretEvent }
  function harness(rootCaSha256?: string) {
    const queued: Queued[] = [];
    const signaller = {
      queue: (target: Target, event: TokenSecretEvent) => queued.push({ target, event }),
    } as unknown as Signaller;
    const family = tokenRoutes({ controllers: ['serviceaccount-token'], tuning: { resyncMs: 1000 } }, signaller, { rootCaSha256 });
    if (!family) throw new Error('family expected');
    return {
      queued,
      family,
      accounts: family.handlers.get(SERVICE_ACCOUNTS_PATH)!,
      secrets: family.handlers.get(TOKEN_SECRETS_PATH)!,
      drain: () => queued.splice(0, queued.length),
    };
  }
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  function account(name: string, uid: string, namespace = 'team-a'): KubeObject {
    return { metadata: { namespace, name, uid, resourceVersion: '1' } };
  }
  function secret(name: string, uid: string, data: Record<string, string>, annotations: Record<string, string> = { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'sa-uid' }): KubeObject & { data?: Record<string, string> } {
    return { metadata: { namespace: 'team-a', name, uid, resourceVersion: '5', annotations }, data };
  }
  const complete = () => ({ token: b64('a.b.c'), namespace: b64('team-a'), 'ca.crt': b64('CA') });

  it('is enabled only with the controller, watches accounts metadata-only and token Secrets only', () => {
    const signaller = { queue: () => undefined } as unknown as Signaller;
    expect(tokenRoutes({ controllers: ['replicaset'] }, signaller)).toBeUndefined();
    const h = harness();
    expect([...h.family.handlers.keys()]).toEqual(['/api/v1/serviceaccounts', '/api/v1/secrets?fieldSelector=type%3Dkubernetes.io%2Fservice-account-token']);
    expect(h.family.metadataOnly).toEqual(new Set([SERVICE_ACCOUNTS_PATH]));
  });

  it('drops Secret data at once and sends only booleans and the CA hash', () => {
    const caHash = createHash('sha256').update('CA').digest('hex');
    const h = harness(caHash);
    const s = secret('builder-token', 's-uid', { 'ca.crt': b64('CA') });
    h.secrets.relisted([s]);
    expect(s.data).toBeUndefined();
    const [q] = h.drain();
    expect(q.target).toMatchObject({ controller: 'serviceaccount-token', workflow: tokenSecretWorkflow, kind: 'Secret', namespace: 'team-a', name: 'builder-token', uid: 's-uid', workflowId: 'serviceaccount-token/team-a/builder-token' });
    expect(q.target.args).toEqual({ namespace: 'team-a', name: 'builder-token', uid: 's-uid', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', tuning: { resyncMs: 1000 } });
    expect(q.event).toEqual({ secret: { namespace: 'team-a', name: 'builder-token', uid: 's-uid', resourceVersion: '5', serviceAccountName: 'builder', serviceAccountUid: 'sa-uid', hasToken: false, hasNamespace: false, caSha256: caHash } });
    expect(JSON.stringify(q)).not.toContain(b64('CA'));
  });

  it('a complete Secret costs nothing; a stale CA wakes it', () => {
    const h = harness(createHash('sha256').update('CA').digest('hex'));
    h.accounts.relisted([account('builder', 'sa-uid')]);
    h.secrets.relisted([secret('ok', 'u1', complete())]);
    expect(h.drain()).toHaveLength(0);
    h.secrets.event('MODIFIED', secret('ok', 'u1', { ...complete(), 'ca.crt': b64('OLD') }));
    expect(h.drain().map((q) => q.target.name)).toEqual(['ok']);
  });

  it('judges accounts missing only after they are listed, then judges every Secret once', () => {
    const h = harness();
    h.secrets.relisted([secret('orphan', 'u1', complete()), secret('fine', 'u2', complete())]);
    expect(h.drain()).toHaveLength(0);
    h.accounts.relisted([account('builder', 'sa-uid')]);
    expect(h.drain()).toHaveLength(0);

    h.secrets.event('ADDED', secret('other', 'u3', complete(), { 'kubernetes.io/service-account.name': 'ghost' }));
    h.secrets.event('ADDED', secret('wrong-uid', 'u4', complete(), { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'old' }));
    expect(h.drain().map((q) => q.target.name)).toEqual(['other', 'wrong-uid']);

    const late = harness();
    late.secrets.relisted([secret('orphan', 'u1', complete(), { 'kubernetes.io/service-account.name': 'ghost' })]);
    expect(late.drain()).toHaveLength(0);
    late.accounts.relisted([]);
    expect(late.drain().map((q) => q.target.name)).toEqual(['orphan']);
  });

  it('a deleted ServiceAccount wakes the Secrets that belong to it, and only those', () => {
    const h = harness();
    h.accounts.relisted([account('builder', 'sa-uid'), account('builder', 'sa-b', 'team-b')]);
    h.secrets.relisted([
      secret('mine', 'u1', complete()),
      secret('mine-no-uid', 'u2', complete(), { 'kubernetes.io/service-account.name': 'builder' }),
      secret('older', 'u3', complete(), { 'kubernetes.io/service-account.name': 'builder', 'kubernetes.io/service-account.uid': 'older' }),
      secret('someone-else', 'u4', complete(), { 'kubernetes.io/service-account.name': 'deployer' }),
    ]);
    h.drain(); // 'older' and 'someone-else' have no account
    h.accounts.event('DELETED', account('builder', 'sa-uid'));
    const woken = h.drain();
    expect(woken.map((q) => q.target.name)).toEqual(['mine', 'mine-no-uid']);
    expect(woken[0].event).toEqual({ serviceAccountDeleted: { name: 'builder', uid: 'sa-uid' } });
  });

  it('an account missing from a relist, or replaced under its name, counts as deleted', () => {
    const h = harness();
    h.accounts.relisted([account('builder', 'sa-uid')]);
    h.secrets.relisted([secret('mine', 'u1', complete())]);
    h.accounts.event('MODIFIED', account('builder', 'sa-new'));
    expect(h.drain().map((q) => q.event)).toEqual([{ serviceAccountDeleted: { name: 'builder', uid: 'sa-uid' } }]);
    h.accounts.relisted([]);
    expect(h.drain()).toHaveLength(0); // 'mine' names sa-uid, not sa-new
  });

  it('a deleted Secret wakes its workflow to clean up and end, with the account it named', () => {
    const h = harness();
    h.accounts.relisted([account('builder', 'sa-uid')]);
    h.secrets.relisted([secret('a', 'u1', complete()), secret('b', 'u2', complete())]);
    h.secrets.event('DELETED', secret('a', 'u1', complete()));
    h.secrets.relisted([]);
    const woken = h.drain();
    expect(woken.map((q) => [q.target.name, q.event])).toEqual([['a', { secretDeletedUid: 'u1' }], ['b', { secretDeletedUid: 'u2' }]]);
    expect(woken[0].target.args).toMatchObject({ serviceAccountName: 'builder', serviceAccountUid: 'sa-uid' });
    expect(h.family.sizes()).toEqual({ tokenSecrets: 0, serviceAccounts: 1 });
  });
});
