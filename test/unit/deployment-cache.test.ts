import { floorAfterRead, floorAfterWrite, newerSnapshot, snapshotServes, type DeploymentObservation } from '../../workflows/deployment/cache';
import type { DeploymentAction, DeploymentView, ReplicaSetView } from '../../workflows/deployment/types';

const snap = (deployments: string, replicaSets: string, rss: Array<Partial<ReplicaSetView>> = []): DeploymentObservation => ({
  deployment: { uid: 'd', resourceVersion: deployments } as DeploymentView,
  replicaSets: rss as ReplicaSetView[],
  activePodsByReplicaSet: {},
  versions: { deployments, replicaSets },
});
const scale: DeploymentAction = { type: 'scaleReplicaSet', name: 'r', uid: 'ru', resourceVersion: '1', replicas: 2, annotations: {}, reason: 'x' };
const status: DeploymentAction = { type: 'updateDeploymentStatus', status: {} as never, reason: 'x' };
const del: DeploymentAction = { type: 'deleteReplicaSet', name: 'old', uid: 'old-uid', reason: 'x' };

describe('read-your-writes: when a cache snapshot may replace an API read', () => {
  test('with nothing written, any complete snapshot serves; one without positions or a Deployment does not', () => {
    expect(snapshotServes(snap('5', '5'), {})).toBe(true);
    expect(snapshotServes({ ...snap('5', '5'), versions: undefined }, {})).toBe(false);
    expect(snapshotServes({ ...snap('5', '5'), deployment: undefined }, {})).toBe(false);
    expect(snapshotServes(undefined, {})).toBe(false);
  });

  test('after a write, only a snapshot whose store has seen its version serves', () => {
    let floor = floorAfterWrite({}, scale, { ok: true, resourceVersion: '100' });
    floor = floorAfterWrite(floor, status, { ok: true, resourceVersion: '101' });
    expect(snapshotServes(snap('101', '99'), floor)).toBe(false);
    expect(snapshotServes(snap('100', '100'), floor)).toBe(false);
    expect(snapshotServes(snap('101', '100'), floor)).toBe(true);
    // numerically, not as strings
    expect(snapshotServes(snap('1000', '999'), floorAfterWrite({}, scale, { ok: true, resourceVersion: '998' }))).toBe(true);
  });

  test('a deleted ReplicaSet must be gone (or terminating) from the snapshot', () => {
    const floor = floorAfterWrite({}, del, { ok: true });
    expect(snapshotServes(snap('5', '5', [{ uid: 'old-uid' }]), floor)).toBe(false);
    expect(snapshotServes(snap('5', '5', [{ uid: 'old-uid', deletionTimestamp: 't' }]), floor)).toBe(true);
    expect(snapshotServes(snap('5', '5', []), floor)).toBe(true);
  });

  test('a failed write, or one without a version, leaves only the API; an API read then sets the floor', () => {
    const failed = floorAfterWrite({}, scale, { ok: false });
    expect(snapshotServes(snap('999', '999'), failed)).toBe(false);
    expect(snapshotServes(snap('999', '999'), floorAfterWrite({}, scale, { ok: true }))).toBe(false);
    const read = floorAfterRead(failed, snap('50', '60'));
    expect(read).toEqual({ deployments: '50', replicaSets: '60' });
    expect(snapshotServes(snap('50', '59'), read)).toBe(false);
    expect(snapshotServes(snap('50', '60'), read)).toBe(true);
  });

  test('the newer of two snapshots is kept', () => {
    expect(newerSnapshot(snap('5', '9'), snap('5', '7')).versions).toEqual({ deployments: '5', replicaSets: '9' });
    expect(newerSnapshot(snap('5', '7'), snap('6', '7')).versions).toEqual({ deployments: '6', replicaSets: '7' });
    expect(newerSnapshot(undefined, snap('1', '1')).versions).toEqual({ deployments: '1', replicaSets: '1' });
  });
});
