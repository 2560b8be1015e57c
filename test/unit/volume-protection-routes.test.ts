import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { ephemeralVolumeRoutes } from '../../activities/ephemeral-volume/routes';
import { pvProtectionRoutes } from '../../activities/pv-protection/routes';
import { pvcProtectionRoutes } from '../../activities/pvc-protection/routes';
import { vacProtectionRoutes } from '../../activities/vac-protection/routes';
import type { EphemeralVolumeEvent } from '../../workflows/ephemeral-volume/workflow';
import { ephemeralVolumeWorkflow } from '../../workflows/ephemeral-volume/workflow';
import type { PvProtectionEvent } from '../../workflows/pv-protection/workflow';
import type { PvcProtectionEvent } from '../../workflows/pvc-protection/workflow';
import { pvcProtectionWorkflow } from '../../workflows/pvc-protection/workflow';
import type { VacProtectionEvent } from '../../workflows/vac-protection/workflow';
import { routeHarness } from '../support/routes';

const PODS = RESOURCES.pods;
const PVCS = RESOURCES.persistentVolumeClaims;
const PVS = RESOURCES.persistentVolumes;
const VACS = RESOURCES.volumeAttributesClasses;
const DELETED = '2026-03-01T12:00:00Z';

const claim = (name: string, o: { rv?: string; deleting?: boolean; finalizer?: boolean; owner?: string; vac?: string; currentVac?: string } = {}): KubeObject => ({
  metadata: {
    namespace: 'a', name, uid: `c-${name}`, resourceVersion: o.rv ?? '1',
    ...(o.deleting ? { deletionTimestamp: DELETED } : {}),
    ...(o.finalizer === false ? {} : { finalizers: ['kubernetes.io/pvc-protection'] }),
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: o.owner, controller: true }] } : {}),
  },
  spec: { ...(o.vac ? { volumeAttributesClassName: o.vac } : {}) },
  status: { ...(o.currentVac ? { currentVolumeAttributesClassName: o.currentVac } : {}) },
});

const pod = (name: string, o: { claims?: string[]; ephemeral?: string[]; node?: string; phase?: string; rv?: string; uid?: string; deleting?: boolean } = {}): KubeObject => ({
  metadata: { namespace: 'a', name, uid: o.uid ?? `p-${name}`, resourceVersion: o.rv ?? '1', ...(o.deleting ? { deletionTimestamp: DELETED } : {}) },
  spec: {
    ...(o.node === '' ? {} : { nodeName: o.node ?? 'n1' }),
    containers: [{ name: 'c' }],
    volumes: [
      ...(o.claims ?? []).map((c) => ({ name: `v-${c}`, persistentVolumeClaim: { claimName: c } })),
      ...(o.ephemeral ?? []).map((v) => ({ name: v, ephemeral: { volumeClaimTemplate: { metadata: { labels: { v } }, spec: { accessModes: ['ReadWriteOnce'] } } } })),
    ],
  },
  status: { phase: o.phase ?? 'Running' },
});

describe('pvc-protection routes', () => {
  const harness = () => routeHarness<PvcProtectionEvent>(pvcProtectionRoutes, { controllers: ['pvc-protection'], tuning: { resyncMs: 7 } });
  const ids = (sent: Array<{ id: string }>) => sent.map((s) => s.id);

  test('nothing is judged until claims and pods are both listed; then only claims with a write due go out', () => {
    const { sent, h } = harness();
    h(PVCS).relisted([claim('plain'), claim('bare', { finalizer: false }), claim('used', { deleting: true }), claim('free', { deleting: true })], '5');
    expect(sent).toEqual([]);
    h(PODS).relisted([pod('p', { claims: ['used'] })], '6');
    expect(ids(sent).sort()).toEqual(['a/bare', 'a/free']);
    expect(sent.find((s) => s.id === 'a/free')!.target).toEqual({
      controller: 'pvc-protection', workflow: pvcProtectionWorkflow, kind: 'PersistentVolumeClaim', namespace: 'a', name: 'free', uid: 'c-free',
      args: { namespace: 'a', name: 'free', uid: 'c-free', tuning: { resyncMs: 7 } }, workflowId: 'pvc-protection/a/free',
    });
    expect(sent.find((s) => s.id === 'a/free')!.event).toEqual({
      pvc: { namespace: 'a', name: 'free', uid: 'c-free', resourceVersion: '1', deleting: true, protected: true },
    });
  });

  test('a claim deleted while a running pod uses it stays in the watch; the pod\'s deletion sends it', () => {
    const { sent, h } = harness();
    h(PVCS).relisted([claim('data')], '1');
    h(PODS).relisted([pod('p', { claims: ['data'] })], '1');
    h(PVCS).event('MODIFIED', claim('data', { deleting: true, rv: '2' }));
    expect(sent).toEqual([]);
    // a status change of the running pod frees nothing and is dropped
    h(PODS).event('MODIFIED', pod('p', { claims: ['data'], rv: '3' }));
    expect(sent).toEqual([]);
    h(PODS).event('DELETED', pod('p', { claims: ['data'], rv: '4' }));
    expect(ids(sent)).toEqual(['a/data']);
  });

  test('a pod that finished still holds its claim (upstream counts it); unscheduled pods never do', () => {
    const { sent, h } = harness();
    h(PVCS).relisted([claim('data', { deleting: true }), claim('other', { deleting: true })], '1');
    h(PODS).relisted([pod('done', { claims: ['data'], phase: 'Succeeded' }), pod('waiting', { claims: ['other'], node: '' })], '1');
    expect(ids(sent)).toEqual(['a/other']);
    sent.length = 0;
    // the finished pod's update is let through (terminated) but the claim is still used by it
    h(PODS).event('MODIFIED', pod('done', { claims: ['data'], phase: 'Succeeded', rv: '2' }));
    expect(sent).toEqual([]);
  });

  test('an ephemeral claim is held only by the pod that controls it', () => {
    const { sent, h } = harness();
    h(PODS).relisted([pod('p', { ephemeral: ['s'] })], '1');
    h(PVCS).relisted([claim('p-s', { deleting: true, owner: 'p-p' }), claim('q-s', { deleting: true, owner: 'p-p' })], '1');
    expect(ids(sent)).toEqual(['a/q-s']);
    sent.length = 0;
    h(PVCS).relisted([claim('p-s', { deleting: true, owner: 'someone' })], '2');
    expect(ids(sent)).toEqual(['a/p-s']);
  });

  test('a claim being deleted without the finalizer, and deletions of claims, send nothing', () => {
    const { sent, h } = harness();
    h(PVCS).relisted([], '1');
    h(PODS).relisted([], '1');
    h(PVCS).event('ADDED', claim('gone', { deleting: true, finalizer: false }));
    h(PVCS).event('DELETED', claim('gone', { deleting: true, finalizer: false }));
    expect(sent).toEqual([]);
  });
});

describe('pv-protection routes', () => {
  const pv = (name: string, phase: string, o: { deleting?: boolean; finalizer?: boolean } = {}): KubeObject => ({
    metadata: { name, uid: `v-${name}`, resourceVersion: '1', ...(o.deleting ? { deletionTimestamp: DELETED } : {}),
      ...(o.finalizer === false ? {} : { finalizers: ['kubernetes.io/pv-protection'] }) },
    spec: {}, status: { phase },
  });

  test('a Bound volume being deleted waits for its status to change; one without the finalizer gets it', () => {
    const { sent, h } = routeHarness<PvProtectionEvent>(pvProtectionRoutes, { controllers: ['pv-protection'] });
    h(PVS).relisted([pv('bound', 'Bound', { deleting: true }), pv('new', 'Available', { finalizer: false }), pv('kept', 'Bound')], '1');
    expect(sent.map((s) => [s.id, s.target.workflowId])).toEqual([['/new', 'pv-protection/new']]);
    sent.length = 0;
    h(PVS).event('MODIFIED', pv('bound', 'Released', { deleting: true }));
    expect(sent.map((s) => s.event.pv)).toEqual([{ namespace: '', name: 'bound', uid: 'v-bound', resourceVersion: '1', deleting: true, protected: true, phase: 'Released' }]);
  });
});

describe('vac-protection routes', () => {
  const vac = (name: string, o: { deleting?: boolean; finalizer?: boolean } = {}): KubeObject => ({
    metadata: { name, uid: `vac-${name}`, resourceVersion: '1', ...(o.deleting ? { deletionTimestamp: DELETED } : {}),
      ...(o.finalizer === false ? {} : { finalizers: ['kubernetes.io/vac-protection'] }) },
  });
  const pv = (name: string, cls?: string): KubeObject => ({ metadata: { name, uid: `v-${name}`, resourceVersion: '1' }, spec: cls ? { volumeAttributesClassName: cls } : {} });

  test('a class in use by a claim or a volume is kept; the claim or volume letting go of it sends it', () => {
    const { sent, h } = routeHarness<VacProtectionEvent>(vacProtectionRoutes, { controllers: ['vac-protection'] });
    h(VACS).relisted([vac('gold', { deleting: true }), vac('silver', { deleting: true }), vac('new', { finalizer: false })], '1');
    h(PVCS).relisted([claim('c', { vac: 'gold', currentVac: 'gold' })], '1');
    expect(sent).toEqual([]);
    h(PVS).relisted([pv('v', 'silver')], '1');
    expect(sent.map((s) => s.id)).toEqual(['/new']);
    sent.length = 0;
    // the claim moves on to another class (its spec; the current class stays): gold is still named
    h(PVCS).event('MODIFIED', claim('c', { vac: 'platinum', currentVac: 'gold', rv: '2' }));
    expect(sent).toEqual([]);
    h(PVCS).event('MODIFIED', claim('c', { vac: 'platinum', currentVac: 'platinum', rv: '3' }));
    expect(sent.map((s) => [s.target.workflowId, s.event.inUse])).toEqual([['vac-protection/gold', false]]);
    sent.length = 0;
    h(PVS).event('DELETED', pv('v', 'silver'));
    expect(sent.map((s) => s.target.workflowId)).toEqual(['vac-protection/silver']);
  });
});

describe('ephemeral-volume routes', () => {
  const harness = () => routeHarness<EphemeralVolumeEvent>(ephemeralVolumeRoutes, { controllers: ['ephemeral-volume'], tuning: { resyncMs: 7 } });

  test('after both lists, pods whose ephemeral claims are missing or foreign go out with what the watch knows of each', () => {
    const { sent, h } = harness();
    h(PODS).relisted([pod('fine', { ephemeral: ['s'] }), pod('missing', { ephemeral: ['s', 't'] }), pod('foreign', { ephemeral: ['s'] }),
      pod('plain', { claims: ['data'] }), pod('leaving', { ephemeral: ['s'], deleting: true })], '1');
    expect(sent).toEqual([]);
    h(PVCS).relisted([claim('fine-s', { owner: 'p-fine' }), claim('missing-s', { owner: 'p-missing' }), claim('foreign-s', { owner: 'someone' })], '1');
    expect(sent.map((s) => [s.id, s.event.claims])).toEqual([
      ['a/missing', { 'missing-s': { uid: 'c-missing-s', controllerUid: 'p-missing' }, 'missing-t': null }],
      ['a/foreign', { 'foreign-s': { uid: 'c-foreign-s', controllerUid: 'someone' } }],
    ]);
    expect(sent[0].target).toEqual({
      controller: 'ephemeral-volume', workflow: ephemeralVolumeWorkflow, kind: 'Pod', namespace: 'a', name: 'missing', uid: 'p-missing',
      args: { namespace: 'a', name: 'missing', uid: 'p-missing', tuning: { resyncMs: 7 } }, workflowId: 'ephemeral-volume/a/missing',
    });
    expect(sent[0].event.pod.volumes.map((v) => [v.name, v.claim, v.template])).toEqual([
      ['s', 'missing-s', { metadata: { labels: { v: 's' } }, spec: { accessModes: ['ReadWriteOnce'] } }],
      ['t', 'missing-t', { metadata: { labels: { v: 't' } }, spec: { accessModes: ['ReadWriteOnce'] } }],
    ]);
  });

  test('a new pod goes out; its updates do not; a deleted claim sends the pods that name it', () => {
    const { sent, h } = harness();
    h(PODS).relisted([], '1');
    h(PVCS).relisted([], '1');
    h(PODS).event('ADDED', pod('p', { ephemeral: ['s'] }));
    expect(sent.map((s) => s.id)).toEqual(['a/p']);
    sent.length = 0;
    h(PVCS).event('ADDED', claim('p-s', { owner: 'p-p' }));
    h(PODS).event('MODIFIED', pod('p', { ephemeral: ['s'], rv: '2' }));
    expect(sent).toEqual([]);
    h(PVCS).event('DELETED', claim('p-s', { owner: 'p-p' }));
    expect(sent.map((s) => [s.id, s.event.claims])).toEqual([['a/p', { 'p-s': null }]]);
  });
});
