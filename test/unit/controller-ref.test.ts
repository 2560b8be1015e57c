import { type Claimant, type ClaimCandidate, claimAll, claimDecision, controllerRef } from '../../workflows/common/controller-ref';
import type { OwnerRef } from '../../workflows/common/meta';

const OWNER: Claimant = { namespace: 'ns', uid: 'owner-uid', selector: { matchLabels: { app: 'web' } } };
const DELETING: Claimant = { ...OWNER, deletionTimestamp: '2025-06-01T12:00:00Z' };

function ref(uid: string, controller = true): OwnerRef {
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: uid, uid, controller, blockOwnerDeletion: true };
}

function obj(o: Partial<ClaimCandidate> = {}): ClaimCandidate {
  return { namespace: 'ns', labels: { app: 'web' }, ownerReferences: [], ...o };
}

describe('controllerRef', () => {
  test('the reference marked controller, never a plain owner', () => {
    expect(controllerRef(undefined)).toBeUndefined();
    expect(controllerRef([ref('a', false)])).toBeUndefined();
    expect(controllerRef([ref('a', false), ref('b')])?.uid).toBe('b');
  });
});

describe('claimDecision, the rules of upstream\'s controller ref manager', () => {
  test('ours and matching: owned, even while the owner is being deleted', () => {
    expect(claimDecision(OWNER, obj({ ownerReferences: [ref('owner-uid')] }))).toBe('owned');
    expect(claimDecision(DELETING, obj({ ownerReferences: [ref('owner-uid')] }))).toBe('owned');
  });

  test('ours and no longer matching: released, unless the owner is being deleted', () => {
    const stray = obj({ labels: { app: 'other' }, ownerReferences: [ref('owner-uid')] });
    expect(claimDecision(OWNER, stray)).toBe('release');
    expect(claimDecision(DELETING, stray)).toBe('ignore');
  });

  test('controlled by someone else: ignored whatever its labels; a plain owner reference does not count', () => {
    expect(claimDecision(OWNER, obj({ ownerReferences: [ref('other')] }))).toBe('ignore');
    expect(claimDecision(OWNER, obj({ ownerReferences: [ref('owner-uid', false)] }))).toBe('adopt');
  });

  test('an orphan is adopted only if it matches and neither side is being deleted', () => {
    expect(claimDecision(OWNER, obj())).toBe('adopt');
    expect(claimDecision(OWNER, obj({ labels: { app: 'other' } }))).toBe('ignore');
    expect(claimDecision(OWNER, obj({ labels: undefined }))).toBe('ignore');
    expect(claimDecision(DELETING, obj())).toBe('ignore');
    expect(claimDecision(OWNER, obj({ deletionTimestamp: '2025-06-01T12:00:00Z' }))).toBe('ignore');
  });

  test('objects of another namespace are never claimed', () => {
    expect(claimDecision(OWNER, obj({ namespace: 'elsewhere' }))).toBe('ignore');
    expect(claimDecision(OWNER, obj({ namespace: 'elsewhere', ownerReferences: [ref('owner-uid')] }))).toBe('ignore');
  });

  test('claimAll sorts candidates and leaves the ignored out', () => {
    const mine = obj({ ownerReferences: [ref('owner-uid')] });
    const orphan = obj();
    const stray = obj({ labels: {}, ownerReferences: [ref('owner-uid')] });
    const theirs = obj({ ownerReferences: [ref('other')] });
    expect(claimAll(OWNER, [mine, orphan, stray, theirs])).toEqual({ owned: [mine], adopt: [orphan], release: [stray] });
  });
});
