import { deploymentRoutes, shrinkDeploymentEvent } from '../../activities/deployment/routes';
import { deploymentView, replicaSetView } from '../../activities/deployment/projections';
import { SIGNAL_BUDGET_BYTES } from '../../activities/informers/signaller';
import { DEPLOYMENT_ROUTING_FIELDS, OWNED_ROUTING_FIELDS, deploymentRouting, ownedRouting } from '../../activities/deployment/projections';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { jobRoutes } from '../../activities/job/routes';
import { replicaRoutes } from '../../activities/replicaset/routes';
import type { RouteFactory } from '../../workers/descriptor';
import type { DeploymentEvent } from '../../workflows/deployment/workflow';
import { deploymentWorkflow } from '../../workflows/deployment/workflow';
import { routeHarness, type Sent } from '../support/routes';

const DEPLOYMENTS = RESOURCES.deployments;
const RS = RESOURCES.replicaSets;
const PODS = RESOURCES.pods;

const harness = (factory: RouteFactory = deploymentRoutes, controllers = ['deployment']) =>
  routeHarness<DeploymentEvent>(factory, { controllers, tuning: { resyncMs: 7 } });

const deployment = (name: string, app: string, o: { ns?: string; rv?: string; generation?: number; recreate?: boolean } = {}): KubeObject =>
  ({
    metadata: { namespace: o.ns ?? 'a', name, uid: `d-${name}`, resourceVersion: o.rv ?? '1', generation: o.generation ?? 1 },
    spec: { replicas: 3, selector: { matchLabels: { app } }, strategy: { type: o.recreate ? 'Recreate' : 'RollingUpdate' }, template: { spec: {} } },
    status: { replicas: 3 },
  } as KubeObject);

const replicaSet = (name: string, labels: Record<string, string>, o: { owner?: string; ns?: string; rv?: string } = {}): KubeObject =>
  ({
    metadata: {
      namespace: o.ns ?? 'a', name, uid: `rs-${name}`, resourceVersion: o.rv ?? '1', labels,
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: o.owner, uid: `d-${o.owner}`, controller: true }] } : {}),
    },
    spec: { replicas: 1, selector: { matchLabels: labels } },
  } as KubeObject);

const pod = (name: string, rs: string | undefined, rv = '1'): KubeObject =>
  ({
    metadata: {
      namespace: 'a', name, uid: `p-${name}`, resourceVersion: rv,
      ...(rs ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: `rs-${rs}`, controller: true }] } : {}),
    },
    status: { phase: 'Running' },
  } as unknown as KubeObject);

/** what was sent, but for the cache snapshot (tested on its own below) */
const brief = (s: Sent<DeploymentEvent>) => {
  const { snapshot: _snapshot, ...event } = s.event;
  return { id: s.id, event, urgent: s.urgent };
};

describe('deployment routes: a Deployment to itself', () => {
  test('once Deployments, ReplicaSets and pods have listed, each Deployment is sent `relist`; one vanished by a later relist is sent its deletion', () => {
    const { sent, h } = harness();
    h(DEPLOYMENTS).relisted([deployment('web', 'web'), deployment('db', 'db')], '10');
    h(RS).relisted([], '10');
    expect(sent).toHaveLength(0);
    h(PODS).relisted([], '10');
    expect(sent.map(brief)).toEqual([
      { id: 'a/web', event: { relist: true }, urgent: false },
      { id: 'a/db', event: { relist: true }, urgent: false },
    ]);
    expect(sent[0].target).toEqual({
      controller: 'deployment', workflow: deploymentWorkflow, kind: 'Deployment', namespace: 'a', name: 'web', uid: 'd-web',
      args: { namespace: 'a', name: 'web', uid: 'd-web', tuning: { resyncMs: 7 } }, shrink: shrinkDeploymentEvent,
    });
    sent.length = 0;
    h(DEPLOYMENTS).relisted([deployment('web', 'web'), deployment('new', 'new')], '20');
    expect(sent.map(brief)).toEqual([
      { id: 'a/web', event: { relist: true }, urgent: false },
      { id: 'a/new', event: { relist: true }, urgent: false },
      { id: 'a/db', event: { deletedUid: 'd-db' }, urgent: false },
    ]);
  });

  test('a new Deployment or a new generation is urgent; a status write is not; a deletion sends its UID', () => {
    const { sent, h } = harness();
    h(DEPLOYMENTS).relisted([], '1');
    h(DEPLOYMENTS).event('ADDED', deployment('web', 'web', { rv: '2' }));
    h(DEPLOYMENTS).event('MODIFIED', { ...deployment('web', 'web', { rv: '3' }), status: { replicas: 1 } } as KubeObject);
    h(DEPLOYMENTS).event('MODIFIED', deployment('web', 'web', { rv: '4', generation: 2 }));
    h(DEPLOYMENTS).event('DELETED', deployment('web', 'web', { rv: '5', generation: 2 }));
    expect(sent.map(brief)).toEqual([
      { id: 'a/web', event: { changed: true }, urgent: true },
      { id: 'a/web', event: { changed: true }, urgent: false },
      { id: 'a/web', event: { changed: true }, urgent: true },
      { id: 'a/web', event: { deletedUid: 'd-web' }, urgent: false },
    ]);
  });
});

describe('deployment routes: a ReplicaSet to its Deployments', () => {
  const listed = () => {
    const t = harness();
    t.h(DEPLOYMENTS).relisted([
      deployment('web', 'web'), deployment('web2', 'web'), deployment('db', 'db'), deployment('far', 'web', { ns: 'b' }),
    ], '1');
    t.h(RS).relisted([replicaSet('web-1', { app: 'web' }, { owner: 'web' }), replicaSet('loose', { app: 'web' })], '2');
    t.sent.length = 0;
    return t;
  };

  test('the first list of ReplicaSets sends nothing (the Deployments relist anyway)', () => {
    const { sent, h } = harness();
    h(DEPLOYMENTS).relisted([deployment('web', 'web')], '1');
    sent.length = 0;
    h(RS).relisted([replicaSet('web-1', { app: 'web' }, { owner: 'web' })], '2');
    expect(sent).toEqual([]);
  });

  test('an owned ReplicaSet goes to its controller only; an orphan to every Deployment of its namespace whose selector matches', () => {
    const { sent, h } = listed();
    h(RS).event('MODIFIED', replicaSet('web-1', { app: 'web' }, { owner: 'web', rv: '3' }));
    expect(sent.map(brief)).toEqual([{ id: 'a/web', event: { changed: true }, urgent: false }]);
    sent.length = 0;
    h(RS).event('ADDED', replicaSet('stray', { app: 'web' }, { rv: '4' }));
    expect(sent.map((s) => s.id).sort()).toEqual(['a/web', 'a/web2']);
    sent.length = 0;
    h(RS).event('ADDED', replicaSet('unknown-owner', { app: 'web' }, { owner: 'gone', rv: '5' }));
    expect(sent).toEqual([]);
  });

  test('an update goes to the Deployments of both its old and new state; a deletion to its last', () => {
    const { sent, h } = listed();
    // adopted by db: web2 and web matched it as an orphan, db controls it now
    h(RS).event('MODIFIED', replicaSet('loose', { app: 'web' }, { owner: 'db', rv: '3' }));
    expect(sent.map((s) => s.id).sort()).toEqual(['a/db', 'a/web', 'a/web2']);
    expect(sent.every((s) => s.event.changed && !s.urgent)).toBe(true);
    sent.length = 0;
    h(RS).event('DELETED', replicaSet('loose', { app: 'web' }, { owner: 'db', rv: '4' }));
    expect(sent.map(brief)).toEqual([{ id: 'a/db', event: { changed: true }, urgent: false }]);
  });

  test('a later ReplicaSet relist sends what changed, appeared or vanished during the gap, nothing for the rest', () => {
    const { sent, h } = harness();
    h(DEPLOYMENTS).relisted([deployment('web', 'web'), deployment('db', 'db'), deployment('api', 'api')], '1');
    h(RS).relisted([
      replicaSet('web-1', { app: 'web' }, { owner: 'web' }), replicaSet('db-1', { app: 'db' }, { owner: 'db' }), replicaSet('api-1', { app: 'api' }, { owner: 'api' }),
    ], '2');
    sent.length = 0;
    h(RS).relisted([
      replicaSet('web-1', { app: 'web' }, { owner: 'web' }),
      replicaSet('db-1', { app: 'db' }, { owner: 'db', rv: '9' }),
      replicaSet('fresh', { app: 'web' }),
    ], '10');
    expect(sent.map(brief)).toEqual([
      { id: 'a/db', event: { changed: true }, urgent: false },
      { id: 'a/web', event: { changed: true }, urgent: false },
      { id: 'a/api', event: { changed: true }, urgent: false },
    ]);
  });
});

describe('deployment routes: a deleted pod to its Recreate Deployment', () => {
  const listed = () => {
    const t = harness();
    t.h(DEPLOYMENTS).relisted([deployment('re', 're', { recreate: true }), deployment('roll', 'roll')], '1');
    t.h(RS).relisted([replicaSet('re-1', { app: 're' }, { owner: 're' }), replicaSet('roll-1', { app: 'roll' }, { owner: 'roll' }), replicaSet('loose', { app: 're' })], '2');
    t.h(PODS).relisted([pod('r1', 're-1'), pod('r2', 're-1'), pod('o1', 'roll-1'), pod('l1', 'loose'), pod('bare', undefined)], '3');
    t.sent.length = 0;
    return t;
  };

  test('only deletions of pods of a Recreate Deployment\'s ReplicaSets wake it', () => {
    const { sent, h } = listed();
    h(PODS).event('ADDED', pod('r3', 're-1', '4'));
    h(PODS).event('MODIFIED', pod('r1', 're-1', '5'));
    h(PODS).event('DELETED', pod('o1', 'roll-1', '6'));
    h(PODS).event('DELETED', pod('l1', 'loose', '7'));
    h(PODS).event('DELETED', pod('bare', undefined, '8'));
    expect(sent).toEqual([]);
    h(PODS).event('DELETED', pod('r1', 're-1', '9'));
    expect(sent.map(brief)).toEqual([{ id: 'a/re', event: { changed: true }, urgent: false }]);
  });

  test('a deletion missed in a watch gap comes with the pods\' relist', () => {
    const { sent, h } = listed();
    h(PODS).relisted([pod('r1', 're-1', '10'), pod('o1', 'roll-1'), pod('l1', 'loose'), pod('bare', undefined), pod('new', 're-1', '11')], '12');
    expect(sent.map(brief)).toEqual([{ id: 'a/re', event: { changed: true }, urgent: false }]);
  });
});

describe('deployment routes: shared stores', () => {
  /** one feed of every resource, as the reflectors would send it */
  const feed = (h: ReturnType<typeof harness>['h']) => {
    h(PODS).relisted([pod('r1', 're-1'), pod('r2', 're-1')], '1');
    h(RS).relisted([replicaSet('re-1', { app: 're' }, { owner: 're' })], '2');
    h(DEPLOYMENTS).relisted([deployment('re', 're', { recreate: true })], '3');
    h(RS).event('MODIFIED', { ...replicaSet('re-1', { app: 're' }, { owner: 're', rv: '4' }), status: { replicas: 2 } } as KubeObject);
    h(DEPLOYMENTS).event('MODIFIED', deployment('re', 're', { recreate: true, rv: '5', generation: 2 }));
    h(PODS).event('DELETED', pod('r1', 're-1', '6'));
    h(RS).event('DELETED', replicaSet('re-1', { app: 're' }, { owner: 're', rv: '7' }));
    h(DEPLOYMENTS).event('DELETED', deployment('re', 're', { recreate: true, rv: '8', generation: 2 }));
  };

  test('the Deployments are sent the same whether or not the replicaset and job controllers read the same stores', () => {
    const alone = harness();
    feed(alone.h);
    const shared = harness((ctx) => {
      replicaRoutes(ctx);
      jobRoutes(ctx);
      return deploymentRoutes(ctx);
    }, ['deployment', 'replicaset', 'job']);
    feed(shared.h);
    expect(shared.sent.filter((s) => s.target.controller === 'deployment')).toEqual(alone.sent);
    expect(alone.sent).toHaveLength(6);
  });
});

describe('deployment routes: field masks keep what the projections read', () => {
  test('deploymentRouting', () => {
    const rich = {
      ...deployment('web', 'web', { recreate: true, generation: 4 }),
      metadata: { ...deployment('web', 'web').metadata, generation: 4, labels: { x: 'y' } },
      spec: {
        replicas: 3, paused: true, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
        strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
      },
    } as KubeObject;
    const pruned = prune(rich, DEPLOYMENT_ROUTING_FIELDS) as KubeObject;
    expect(pruned.spec?.template).toBeUndefined();
    expect(deploymentRouting(pruned)).toEqual(deploymentRouting(rich));
    expect(deploymentRouting(rich)).toMatchObject({ generation: 4, recreate: true });
  });

  test('ownedRouting (of a ReplicaSet and of a pod)', () => {
    for (const rich of [
      { ...replicaSet('web-1', { app: 'web' }, { owner: 'web' }), status: { replicas: 1 } } as KubeObject,
      { ...pod('p', 're-1'), metadata: { ...pod('p', 're-1').metadata, labels: { app: 're' } }, spec: { nodeName: 'n' } } as KubeObject,
    ]) {
      const pruned = prune(rich, OWNED_ROUTING_FIELDS) as KubeObject;
      expect(pruned.spec).toBeUndefined();
      expect(ownedRouting(pruned)).toEqual(ownedRouting(rich));
      expect(ownedRouting(rich).controllerUid).toBeDefined();
    }
  });
});

describe('deployment routes: the cache snapshot a Deployment plans from', () => {
  test('its ReplicaSets (owned, and orphans it may adopt), the stores\' positions, and for Recreate its active pods per ReplicaSet', () => {
    const { sent, h } = harness();
    h(DEPLOYMENTS).relisted([deployment('web', 'web', { recreate: true, rv: '5' })], '12');
    h(RS).relisted([
      replicaSet('web-1', { app: 'web' }, { owner: 'web', rv: '6' }),
      replicaSet('stray', { app: 'web' }),
      replicaSet('other', { app: 'db' }),
      replicaSet('taken', { app: 'web' }, { owner: 'db' }),
    ], '14');
    const done = pod('done', 'web-1');
    (done.status as { phase: string }).phase = 'Succeeded';
    h(PODS).relisted([pod('p1', 'web-1'), pod('p2', 'web-1'), done, pod('x', 'other')], '15');
    const snap = sent[0].event.snapshot!;
    expect(snap.deployment).toMatchObject({ uid: 'd-web', resourceVersion: '5', replicas: 3, strategy: { type: 'Recreate' } });
    expect(snap.replicaSets.map((r) => r.name).sort()).toEqual(['stray', 'web-1']);
    expect(snap.activePodsByReplicaSet).toEqual({ 'rs-web-1': 2 });
    expect(snap.versions).toEqual({ deployments: '12', replicaSets: '14' });
    // a watch event carries the snapshot as of that event
    h(RS).event('MODIFIED', replicaSet('web-1', { app: 'web' }, { owner: 'web', rv: '20' }));
    expect(sent[1].event.snapshot!.versions).toEqual({ deployments: '12', replicaSets: '20' });
    expect(sent[1].event.snapshot!.replicaSets.find((r) => r.name === 'web-1')!.resourceVersion).toBe('20');
  });

  test('none for a deletion, and no pod counts for a rolling Deployment', () => {
    const { sent, h } = harness();
    h(DEPLOYMENTS).relisted([deployment('web', 'web')], '1');
    h(RS).relisted([], '1');
    h(PODS).relisted([pod('p1', 'web-1')], '1');
    expect(sent[0].event.snapshot!.activePodsByReplicaSet).toEqual({});
    h(DEPLOYMENTS).event('DELETED', deployment('web', 'web', { rv: '2' }));
    expect(sent[1].event).toEqual({ deletedUid: 'd-web' });
  });
});

describe('a Deployment event too large for a payload, shrunk at its send', () => {
  const ballast = (n: number) => 'x'.repeat(n);
  const withTemplate = (o: KubeObject, bytes: number): KubeObject => ({ ...o, spec: { ...o.spec, template: { metadata: { annotations: { b: ballast(bytes) } }, spec: {} } } });
  const d = deploymentView(withTemplate(deployment('web', 'web'), 1024));
  const rs = (i: number) => replicaSetView(withTemplate(replicaSet(`web-${i}`, { app: 'web' }, { owner: 'web' }), 400 * 1024));
  const big = (dep = d): DeploymentEvent => ({ changed: true, snapshot: { deployment: dep, replicaSets: [0, 1, 2, 3, 4].map(rs), activePodsByReplicaSet: {} } });

  test('its ReplicaSets heavy: the snapshot fitted, each template left out and said whether it is the Deployment\'s', () => {
    const out = shrinkDeploymentEvent(big());
    expect(Buffer.byteLength(JSON.stringify(big()))).toBeGreaterThan(SIGNAL_BUDGET_BYTES);
    expect(out.snapshot?.replicaSets.map((r) => r.templateMatches)).toEqual([false, false, false, false, false]);
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(SIGNAL_BUDGET_BYTES);
  });

  test('the Deployment itself past the budget: no snapshot, a look again (the workflow reads the API)', () => {
    const heavy = deploymentView(withTemplate(deployment('web', 'web'), SIGNAL_BUDGET_BYTES));
    expect(shrinkDeploymentEvent(big(heavy))).toEqual({ changed: true, lookAgain: true });
  });
});
