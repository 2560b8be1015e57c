import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { statefulSetRoutes } from '../../activities/statefulset/routes';
import type { StatefulSetEvent } from '../../workflows/statefulset/types';
import { statefulSetWorkflow } from '../../workflows/statefulset/workflow';
import { routeHarness } from '../support/routes';

const harness = () => routeHarness<StatefulSetEvent>(statefulSetRoutes, { controllers: ['statefulset'], tuning: { resyncMs: 7 } });

const sts = (name: string, o: { rv?: string; generation?: number; replicas?: number; ready?: number } = {}): KubeObject => ({
  metadata: { namespace: 'ns', name, uid: `u-${name}`, resourceVersion: o.rv ?? '1', generation: o.generation ?? 1 },
  spec: { replicas: o.replicas ?? 3, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c' }] } } },
  status: { replicas: 0, readyReplicas: o.ready ?? 0 },
} as unknown as KubeObject);

const pod = (name: string, o: { owner?: string; labels?: Record<string, string>; rv?: string; ready?: string; annotations?: Record<string, string> } = {}): KubeObject => ({
  metadata: {
    namespace: 'ns', name, uid: `p-${name}`, resourceVersion: o.rv ?? '1', labels: o.labels ?? { app: 'web' }, annotations: o.annotations ?? {},
    ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: o.owner, uid: `u-${o.owner}`, controller: true }] } : {}),
  },
  spec: {},
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: o.ready ?? 'True' }] },
} as unknown as KubeObject);

const listAll = (h: ReturnType<typeof harness>['h'], objs: { sets?: KubeObject[]; pods?: KubeObject[] }) => {
  h(RESOURCES.pods).relisted(objs.pods ?? [], '1');
  h(RESOURCES.statefulSets).relisted(objs.sets ?? [], '1');
};

describe('statefulset routes', () => {
  test('once listed, every StatefulSet is nudged on its own workflow', () => {
    const { sent, h } = harness();
    listAll(h, { sets: [sts('web'), sts('db')] });
    expect(sent.map((s) => s.target.workflowId).sort()).toEqual(['statefulset/ns/db', 'statefulset/ns/web']);
    expect(sent[0].target).toMatchObject({ controller: 'statefulset', workflow: statefulSetWorkflow, kind: 'StatefulSet' });
  });

  test('a spec change nudges the set; a status-only change does not; a deletion says so', () => {
    const { sent, h } = harness();
    listAll(h, { sets: [sts('web')] });
    sent.length = 0;
    h(RESOURCES.statefulSets).event('MODIFIED', sts('web', { rv: '2', ready: 2 }));
    expect(sent).toEqual([]);
    h(RESOURCES.statefulSets).event('MODIFIED', sts('web', { rv: '3', ready: 2, generation: 2, replicas: 5 }));
    expect(sent).toHaveLength(1);
    h(RESOURCES.statefulSets).event('DELETED', sts('web', { rv: '4' }));
    expect(sent[1].event).toMatchObject({ gone: true, uid: 'u-web' });
  });

  test('a pod goes to its controller, an orphan to the sets it could belong to by selector and name', () => {
    const { sent, h } = harness();
    listAll(h, { sets: [sts('web'), sts('db')] });
    sent.length = 0;
    h(RESOURCES.pods).event('ADDED', pod('web-0', { owner: 'web' }));
    h(RESOURCES.pods).event('ADDED', pod('web-1'));
    h(RESOURCES.pods).event('ADDED', pod('other-0'));
    h(RESOURCES.pods).event('ADDED', pod('db-0', { labels: { app: 'web' } }));
    expect(sent.map((s) => s.target.workflowId)).toEqual(['statefulset/ns/web', 'statefulset/ns/web']);
  });

  test('a pod change nothing decides on is dropped; readiness is not', () => {
    const { sent, h } = harness();
    listAll(h, { sets: [sts('web')], pods: [pod('web-0', { owner: 'web' })] });
    sent.length = 0;
    h(RESOURCES.pods).event('MODIFIED', pod('web-0', { owner: 'web', rv: '2', annotations: { a: 'b' } }));
    expect(sent).toEqual([]);
    h(RESOURCES.pods).event('MODIFIED', pod('web-0', { owner: 'web', rv: '3', ready: 'False' }));
    expect(sent).toHaveLength(1);
  });
});
