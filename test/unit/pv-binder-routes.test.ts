import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { pvBinderRoutes } from '../../activities/pv-binder/routes';
import type { ClaimEvent, VolumeEvent } from '../../workflows/pv-binder/types';
import { routeHarness } from '../support/routes';

const harness = () => routeHarness<ClaimEvent | VolumeEvent>(pvBinderRoutes, { controllers: ['persistentvolume-binder'], tuning: {} });

const pvc = (name: string, o: { volume?: string; phase?: string; completed?: boolean; uid?: string } = {}): KubeObject => ({
  metadata: { namespace: 'a', name, uid: o.uid ?? `c-${name}`, resourceVersion: '1', ...(o.completed ? { annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual', ...(o.volume ? { volumeName: o.volume } : {}) },
  status: { phase: o.phase ?? 'Pending' },
} as unknown as KubeObject);

const pv = (name: string, o: { claim?: string; claimUid?: string; phase?: string } = {}): KubeObject => ({
  metadata: { name, uid: `v-${name}`, resourceVersion: '1' },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: '/tmp/x' },
    ...(o.claim ? { claimRef: { namespace: 'a', name: o.claim, uid: o.claimUid ?? `c-${o.claim}` } } : {}) },
  status: { phase: o.phase ?? 'Available' },
} as unknown as KubeObject);

const ids = (sent: Array<{ target: { workflowId?: string } }>) => sent.map((s) => s.target.workflowId ?? '').sort();

describe('persistentvolume-binder routes', () => {
  test('a relist of a settled cluster starts nothing; unsettled claims and volumes go to their own workflows', () => {
    const { sent, h } = harness();
    h(RESOURCES.persistentVolumes).relisted([pv('bound', { claim: 'done', phase: 'Bound' }), pv('free'), pv('new', { phase: 'Pending' })], '5');
    h(RESOURCES.persistentVolumeClaims).relisted([pvc('done', { volume: 'bound', phase: 'Bound', completed: true }), pvc('waiting')], '5');
    expect(ids(sent)).toEqual(['persistentvolume-binder/claims/a/waiting', 'persistentvolume-binder/volumes/new']);
  });

  test('a deleted claim wakes its volume, a deleted volume its claim', () => {
    const { sent, h } = harness();
    h(RESOURCES.persistentVolumes).relisted([pv('bound', { claim: 'done', phase: 'Bound' })], '5');
    h(RESOURCES.persistentVolumeClaims).relisted([pvc('done', { volume: 'bound', phase: 'Bound', completed: true })], '5');
    sent.length = 0;
    h(RESOURCES.persistentVolumeClaims).event('DELETED', pvc('done', { volume: 'bound', phase: 'Bound', completed: true }));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([['persistentvolume-binder/volumes/bound', expect.objectContaining({ nudge: true })]]);
    sent.length = 0;
    h(RESOURCES.persistentVolumeClaims).event('ADDED', pvc('done', { volume: 'bound', phase: 'Bound', completed: true, uid: 'c-done' }));
    sent.length = 0;
    h(RESOURCES.persistentVolumes).event('DELETED', pv('bound', { claim: 'done', phase: 'Bound' }));
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([['persistentvolume-binder/claims/a/done', expect.objectContaining({ nudge: true })]]);
  });

  test('a volume an external provisioner made for a claim wakes the claim, as upstream\'s volume sync queues it', () => {
    const { sent, h } = harness();
    h(RESOURCES.persistentVolumes).relisted([], '5');
    h(RESOURCES.persistentVolumeClaims).relisted([pvc('ext')], '5');
    sent.length = 0;
    h(RESOURCES.persistentVolumes).event('ADDED', pv('made', { claim: 'ext', phase: 'Pending' }));
    expect(ids(sent)).toEqual(['persistentvolume-binder/claims/a/ext', 'persistentvolume-binder/volumes/made']);
  });

  test('settings come from the flags into every workflow\'s input', () => {
    const { sent, h } = routeHarness<ClaimEvent>(pvBinderRoutes, {
      controllers: ['persistentvolume-binder'], tuning: {}, flags: { 'pvclaimbinder-sync-period': 3000, 'enable-hostpath-provisioner': true },
    });
    h(RESOURCES.persistentVolumeClaims).relisted([pvc('x')], '5');
    // nothing is judged until the volumes are listed too
    expect(sent).toEqual([]);
    h(RESOURCES.persistentVolumes).relisted([], '5');
    expect(sent[0].target.args).toEqual((expect.objectContaining({ settings: { syncPeriodMs: 3000, dynamicProvisioning: true, hostPathProvisioner: true } })));
  });
});
