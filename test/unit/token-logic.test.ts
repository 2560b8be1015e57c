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
