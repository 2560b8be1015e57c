import { attachDetachRoutes } from '../../activities/attachdetach/routes';
import { attachmentName } from '../../activities/attachdetach/projections';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import type { AttachDetachEvent } from '../../workflows/attachdetach/types';
import { routeHarness } from '../support/routes';

const UNIQUE = 'kubernetes.io/csi/d.example.com^h1';
const ID = `attachdetach/${UNIQUE}`;

const harness = (flags = {}) => routeHarness<AttachDetachEvent>(attachDetachRoutes, { controllers: ['attachdetach'], tuning: {}, flags });

const node = (name: string, o: { managed?: boolean; reports?: string[]; inUse?: string[] } = {}): KubeObject => ({
  metadata: { name, uid: `n-${name}`, resourceVersion: '1', annotations: o.managed === false ? {} : { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
  spec: {},
  status: { conditions: [{ type: 'Ready', status: 'True' }], volumesAttached: (o.reports ?? []).map((n) => ({ name: n, devicePath: '' })), volumesInUse: o.inUse ?? [] },
} as unknown as KubeObject);
const pv = (): KubeObject => ({
  metadata: { name: 'pv1', uid: 'v1', resourceVersion: '1' },
  spec: { accessModes: ['ReadWriteOnce'], csi: { driver: 'd.example.com', volumeHandle: 'h1' }, claimRef: { namespace: 'ns', name: 'c1', uid: 'c-uid' } },
} as unknown as KubeObject);
const pvc = (): KubeObject => ({
  metadata: { namespace: 'ns', name: 'c1', uid: 'c-uid', resourceVersion: '1' }, spec: { volumeName: 'pv1' }, status: { phase: 'Bound' },
} as unknown as KubeObject);
const pod = (name: string, nodeName: string, extra: object = {}): KubeObject => ({
  metadata: { namespace: 'ns', name, uid: `p-${name}`, resourceVersion: '1' },
  spec: { nodeName, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c1' } }] },
  status: { phase: 'Running', ...extra },
} as unknown as KubeObject);
const va = (nodeName: string, attached: boolean): KubeObject => ({
  metadata: { name: attachmentName('h1', 'd.example.com', nodeName), uid: `va-${nodeName}`, resourceVersion: '1' },
  spec: { attacher: 'd.example.com', nodeName, source: { persistentVolumeName: 'pv1' } },
  status: { attached },
} as unknown as KubeObject);

function listAll(h: ReturnType<typeof harness>['h'], o: { nodes: KubeObject[]; pods: KubeObject[]; vas: KubeObject[] }) {
  h(RESOURCES.csiDrivers).relisted([], '1');
  h(RESOURCES.persistentVolumes).relisted([pv()], '1');
  h(RESOURCES.persistentVolumeClaims).relisted([pvc()], '1');
  h(RESOURCES.nodes).relisted(o.nodes, '1');
  h(RESOURCES.volumeAttachments).relisted(o.vas, '1');
  h(RESOURCES.pods).relisted(o.pods, '1');
}

describe('attachdetach routes', () => {
  test('a volume attached and reported where its pod runs starts nothing at a relist; one that is not goes to its workflow with its desired state', () => {
    const settled = harness();
    listAll(settled.h, { nodes: [node('n1', { reports: [UNIQUE] })], pods: [pod('a', 'n1')], vas: [va('n1', true)] });
    expect(settled.sent).toEqual([]);

    const { sent, h } = harness();
    listAll(h, { nodes: [node('n1'), node('n2', { managed: false })], pods: [pod('a', 'n1'), pod('b', 'n2')], vas: [] });
    expect(sent.map((s) => [s.target.workflowId, s.event])).toEqual([[ID, {
      volume: { uniqueName: UNIQUE, driver: 'd.example.com', handle: 'h1', pvName: 'pv1', multiAttach: false },
      // the pod on the node without the attach annotation does not count
      desired: [{ node: 'n1', pods: [{ namespace: 'ns', name: 'a', uid: 'p-a' }] }],
    }]]);
  });

  test('a finished pod takes the volume off its node\'s desired state, an unchanged one sends nothing, and the attacher\'s answer wakes the workflow', () => {
    const { sent, h } = harness();
    listAll(h, { nodes: [node('n1', { reports: [UNIQUE] })], pods: [pod('a', 'n1')], vas: [va('n1', true)] });
    h(RESOURCES.pods).event('MODIFIED', pod('a', 'n1', { phase: 'Succeeded' }));
    expect(sent.map((s) => s.event.desired)).toEqual([[]]);
    sent.length = 0;
    h(RESOURCES.pods).event('MODIFIED', pod('a', 'n1', { phase: 'Succeeded' }));
    expect(sent).toEqual([]);
    h(RESOURCES.volumeAttachments).event('MODIFIED', va('n1', false));
    expect(sent.map((s) => s.target.workflowId)).toEqual([ID]);
    // the end of a detach: nothing is wanted or left, but the workflow waiting for it is told
    sent.length = 0;
    h(RESOURCES.nodes).event('MODIFIED', node('n1'));
    sent.length = 0;
    h(RESOURCES.volumeAttachments).event('DELETED', va('n1', false));
    expect(sent.map((s) => [s.target.workflowId, s.event.desired])).toEqual([[ID, []]]);
  });

  test('the periodic sync sends, to be verified, an attachment a node reports without an attached VolumeAttachment', () => {
    const { sent, h, family } = harness({ 'attach-detach-reconcile-sync-period': 5000 });
    expect(family?.periodic?.everyMs).toBe(5000);
    listAll(h, { nodes: [node('n1', { reports: [UNIQUE] })], pods: [pod('a', 'n1')], vas: [va('n1', true)] });
    family!.periodic!.run(Date.now());
    expect(sent).toEqual([]);
    h(RESOURCES.volumeAttachments).event('DELETED', va('n1', true));
    sent.length = 0;
    family!.periodic!.run(Date.now());
    expect(sent.map((s) => [s.target.workflowId, s.event.verify])).toEqual([[ID, true]]);
    // turned off by the flag, or by a period under a second
    expect(harness({ 'disable-attach-detach-reconcile-sync': true }).family?.periodic).toBeUndefined();
    expect(harness({ 'attach-detach-reconcile-sync-period': 500 }).family?.periodic).toBeUndefined();
  });

  test('a driver that needs no attach: its volumes are wanted nowhere', () => {
    const { sent, h } = harness();
    h(RESOURCES.csiDrivers).relisted([{ metadata: { name: 'd.example.com', uid: 'd' }, spec: { attachRequired: false } } as unknown as KubeObject], '1');
    h(RESOURCES.persistentVolumes).relisted([pv()], '1');
    h(RESOURCES.persistentVolumeClaims).relisted([pvc()], '1');
    h(RESOURCES.nodes).relisted([node('n1')], '1');
    h(RESOURCES.volumeAttachments).relisted([], '1');
    h(RESOURCES.pods).relisted([pod('a', 'n1')], '1');
    expect(sent).toEqual([]);
  });
});
