import { RESOURCES } from '../../activities/kube/resources';
import type { KubeObject } from '../../activities/kube/projections';
import { pvExpanderRoutes } from '../../activities/pv-expander/routes';
import { asksForMore, changedSince, planExpansion, wantsExpansionSync, type ExpansionClaim } from '../../workflows/pv-expander/logic';
import { routeHarness } from '../support/routes';

const claim = (over: Partial<ExpansionClaim> = {}): ExpansionClaim =>
  ({ namespace: 'a', name: 'data', uid: 'c1', phase: 'Bound', volumeName: 'pv', request: '2Gi', capacity: '1Gi', annotations: {}, ...over });

describe('persistentvolume-expander', () => {
  test('a bound claim is synced when listed, or when its request or capacity grows', () => {
    expect(wantsExpansionSync(undefined, claim())).toBe(true);
    expect(wantsExpansionSync(undefined, claim({ phase: 'Pending' }))).toBe(false);
    expect(wantsExpansionSync(claim({ request: '1Gi' }), claim())).toBe(true);
    expect(wantsExpansionSync(claim(), claim())).toBe(false);
    expect(asksForMore(claim({ request: '1024Mi' }))).toBe(false);
  });

  test('an unmigrated volume waits for an external controller; a migrated one for its CSI resizer', () => {
    const bound = { name: 'pv', claimRef: { namespace: 'a', uid: 'c1' }, annotations: {} };
    expect(planExpansion(claim(), bound)).toEqual({ kind: 'external', message: 'waiting for an external controller to expand this PVC' });
    expect(planExpansion(claim(), { ...bound, inTreePlugin: 'kubernetes.io/gce-pd' })).toEqual({
      kind: 'migrated', resizer: 'pd.csi.storage.gke.io', message: 'CSI migration enabled for kubernetes.io/gce-pd; waiting for external resizer to expand the pvc',
    });
    expect(planExpansion(claim({ request: '1Gi' }), bound)).toMatchObject({ kind: 'none' });
    expect(planExpansion(claim(), { ...bound, claimRef: { namespace: 'a', uid: 'other' } }))
      .toEqual({ kind: 'error', error: 'persistent Volume is not bound to PVC being updated : a/data' });
    expect(planExpansion(claim(), undefined)).toEqual({ kind: 'error', error: 'failed to get PV "pv"' });
  });

  test('routes start a workflow only for a claim that asks for more than it has', () => {
    const { sent, h } = routeHarness(pvExpanderRoutes, { controllers: ['persistentvolume-expander'], tuning: {} });
    const pvc = (name: string, request: string): KubeObject => ({ metadata: { namespace: 'a', name, uid: `u-${name}`, resourceVersion: '1' },
      spec: { volumeName: 'pv', resources: { requests: { storage: request } } }, status: { phase: 'Bound', capacity: { storage: '1Gi' } } } as unknown as KubeObject);
    h(RESOURCES.persistentVolumeClaims).relisted([pvc('same', '1Gi'), pvc('more', '3Gi')], '2');
    expect(sent.map((s) => s.target.workflowId)).toEqual(['persistentvolume-expander/a/more']);
    h(RESOURCES.persistentVolumeClaims).event('MODIFIED', pvc('same', '2Gi'));
    expect(sent.map((s) => s.target.workflowId)).toEqual(['persistentvolume-expander/a/more', 'persistentvolume-expander/a/same']);
  });
});

describe('a claim change sent again after a watch takeover', () => {
  it('is not newer than the one reported; a later change is', () => {
    expect(changedSince('1200', '1200')).toBe(false);
    expect(changedSince('1199', '1200')).toBe(false);
    expect(changedSince('1201', '1200')).toBe(true);
    expect(changedSince('99999999999999999999', '1200')).toBe(true);
    expect(changedSince('', '')).toBe(false);
    expect(changedSince('abc', 'abd')).toBe(true);
  });
});
