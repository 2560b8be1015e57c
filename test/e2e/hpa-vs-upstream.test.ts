import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { ApiError } from '../../activities/kube/rest';
import { eventually, freshNamespace, settledRead, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { cleanNamespace, mergePatch, testRest, getIfExists } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The horizontal-pod-autoscaler compared with upstream kube-controller-manager v1.35.4 on the same
 * stack, both with --horizontal-pod-autoscaler-sync-period=5s. Pod usage comes from the stack's
 * metrics stand-in (the `metrics.temporal-kcm.io/cpu` pod annotation). Under each manager, in a
 * namespace of its own, with the deployment and replicaset controllers beside it:
 *  - `web`: a Deployment of 2 pods requesting 100m and using 150m, an HPA (max 6, CPU 50%) with a
 *    30 s scale-down window: it goes to 6 at once (the default scale-up rules allow it);
 *  - `plain`: the same without `behavior`: upstream's max(2x, 4) limit takes it to 4, then 6;
 *  - `scalable`: a custom resource with a scale subresource over two bare pods: its spec.replicas
 *    goes to 6;
 *  - `worker`: one pod and three metrics from the stand-in's custom and external APIs (Pods, an
 *    Object on its Deployment, External from a ConfigMap): the largest proposal wins each sync,
 *    up to its max of 4;
 *  - `quiet`: a Deployment whose pod reports no usage (FailedGetResourceMetric);
 *  - `nowhere`: an HPA whose Deployment does not exist (FailedGetScale).
 * Then web's pods drop to 20m: the window holds the scale-down (to 3) until the recommendations of
 * 6 are 30 s old. Ours is killed with kill -9 20 s into the window and a new replica takes over:
 * the window, kept in the workflow, still ends on upstream's timeline — a replica that had
 * forgotten it (as upstream's restart does) would start a fresh 30 s window after the kill.
 * Each HPA's status (conditions, currentMetrics, replicas), its Events and the targets' replicas
 * must equal upstream's, field by field.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const CONTROLLERS = 'horizontal-pod-autoscaler-controller,deployment-controller,replicaset-controller';
// CPU samples of pods a few seconds old would be skipped for five minutes: both managers count them at once
const HPA_ARGS = ['--horizontal-pod-autoscaler-sync-period=5s', '--horizontal-pod-autoscaler-cpu-initialization-period=1s'];
const USAGE = 'metrics.temporal-kcm.io/cpu';
const GROUP = 'hpa-e2e.temporal-kcm.dev';
const CRD = `scalables.${GROUP}`;
const KILL_INTO_WINDOW_MS = 20_000;

type Condition = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string };
type Hpa = { metadata: { uid: string }; status?: { currentReplicas?: number; desiredReplicas?: number; lastScaleTime?: string; currentMetrics?: unknown[] | null; conditions?: Condition[] } };
type Event = { type: string; reason: string; message: string; count?: number; involvedObject: { kind: string; name: string } };

const upstream = new UpstreamKcm('hpa');
let ours: ManagerProcess | undefined;
const namespaces: string[] = [];

const hpaPath = (ns: string, name = '') => `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers${name ? `/${name}` : ''}`;
const deployPath = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
const scalablePath = (ns: string, name = '') => `/apis/${GROUP}/v1/namespaces/${ns}/scalables${name ? `/${name}` : ''}`;

const getOr = <T>(p: string) => getIfExists<T>(rest, p);

async function deployment(ns: string, name: string, replicas = 2, annotations: Record<string, string> = { [USAGE]: '150m' }, own: Record<string, string> = {}): Promise<void> {
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, annotations: own },
    spec: {
      replicas, selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } }] },
      },
    },
  } });
}

const CPU_50 = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }];

async function hpa(ns: string, name: string, target: { apiVersion: string; kind: string; name: string }, behavior?: unknown,
  metrics: unknown[] = CPU_50, maxReplicas = 6): Promise<void> {
  await rest.request('POST', hpaPath(ns), { body: {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name },
    spec: { scaleTargetRef: target, minReplicas: 1, maxReplicas, metrics, ...(behavior ? { behavior } : {}) },
  } });
}

/** `worker`'s three metrics: per pod (20 each, 10 wanted), on its Deployment (150, 100 wanted), external (30, 10 a pod wanted). */
const WORKER_METRICS = [
  { type: 'Pods', pods: { metric: { name: 'requests-per-second' }, target: { type: 'AverageValue', averageValue: '10' } } },
  { type: 'Object', object: { describedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'worker' }, metric: { name: 'latency' }, target: { type: 'Value', value: '100' } } },
  { type: 'External', external: { metric: { name: 'queue-depth' }, target: { type: 'AverageValue', averageValue: '10' } } },
];

/** The custom resource's scale: two bare pods it "owns" by selector, status written by the test as its controller would. */
async function scalable(ns: string): Promise<void> {
  await rest.request('POST', scalablePath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Scalable', metadata: { name: 'scalable' }, spec: { replicas: 2 } } });
  await mergePatch(rest, `${scalablePath(ns, 'scalable')}/status`, { status: { replicas: 2, selector: 'app=scalable' } });
  for (const i of [0, 1]) {
    await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
      metadata: { name: `scalable-${i}`, labels: { app: 'scalable' }, annotations: { [USAGE]: '150m' } },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } }] },
    } });
  }
}

const replicasOf = async (p: string) => (await getOr<{ spec?: { replicas?: number } }>(p))?.spec?.replicas;
const statusOf = async (ns: string, name: string) => (await getOr<Hpa>(hpaPath(ns, name)))?.status;
const condition = (s: Hpa['status'], type: string) => s?.conditions?.find((c) => c.type === type);

/** What a user sees of the HPAs and their targets: times left out (they differ by run), Events by HPA. */
async function snapshot(ns: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items
    .filter((e) => e.involvedObject.kind === 'HorizontalPodAutoscaler');
  for (const name of ['web', 'plain', 'scalable', 'worker', 'quiet', 'nowhere']) {
    const s = await statusOf(ns, name);
    out[`hpa ${name}`] = {
      currentReplicas: s?.currentReplicas ?? 0,
      desiredReplicas: s?.desiredReplicas ?? 0,
      scaled: !!s?.lastScaleTime,
      currentMetrics: s?.currentMetrics ?? null,
      conditions: (s?.conditions ?? []).map(({ lastTransitionTime, ...c }) => ({ ...c, dated: !!lastTransitionTime })),
    };
    out[`events ${name}`] = [...new Set(events.filter((e) => e.involvedObject.name === name).map((e) => `${e.type} ${e.reason}: ${e.message}`))].sort();
  }
  out['deployment web'] = await replicasOf(deployPath(ns, 'web'));
  out['deployment plain'] = await replicasOf(deployPath(ns, 'plain'));
  out['deployment worker'] = await replicasOf(deployPath(ns, 'worker'));
  out['scalable'] = await replicasOf(scalablePath(ns, 'scalable'));
  return out;
}

interface Run {
  up: Record<string, unknown>;
  down: Record<string, unknown>;
  /** ms from web's pods dropping to 20m until its Deployment was scaled to 3 */
  heldMs: number;
}

async function scenario(prefix: string, start: () => Promise<void>, intoWindow: () => Promise<void>): Promise<Run> {
  const ns = await freshNamespace(kc, `hpa-${prefix}`);
  namespaces.push(ns);
  await start();
  await deployment(ns, 'web');
  await deployment(ns, 'plain');
  await scalable(ns);
  await deployment(ns, 'worker', 1, { 'custom.metrics.temporal-kcm.io/requests-per-second': '20' }, { 'custom.metrics.temporal-kcm.io/latency': '150' });
  await deployment(ns, 'quiet', 1, {});
  await rest.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: 'temporal-kcm-external-metrics' }, data: { 'queue-depth': '30' } } });
  // the HPAs come once their pods run and report, so the first sync (one period after) sees them all
  await eventually('the eight pods running', async () => {
    const pods = (await rest.request<{ items: Array<{ status?: { phase?: string } }> }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
    return pods.length === 8 && pods.every((p) => p.status?.phase === 'Running');
  }, 30_000, 200);
  await hpa(ns, 'web', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, { scaleDown: { stabilizationWindowSeconds: 30 } });
  await hpa(ns, 'plain', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'plain' });
  await hpa(ns, 'scalable', { apiVersion: `${GROUP}/v1`, kind: 'Scalable', name: 'scalable' }, { scaleDown: { stabilizationWindowSeconds: 30 } });
  await hpa(ns, 'worker', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'worker' }, undefined, WORKER_METRICS, 4);
  await hpa(ns, 'quiet', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'quiet' });
  await hpa(ns, 'nowhere', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'missing' });

  // settled at 6: a sync after the rescale found the 6 pods (with metrics) and was held at
  // maxReplicas; the custom resource's two pods ask for 6 exactly
  await eventually('web, plain and scalable at 6, worker at 4', async () => {
    for (const [name, n] of [['web', 6], ['plain', 6], ['worker', 4]] as const) {
      const s = await statusOf(ns, name);
      if (s?.currentReplicas !== n || condition(s, 'ScalingLimited')?.reason !== 'TooManyReplicas') return false;
    }
    const s = await statusOf(ns, 'scalable');
    if (s?.currentReplicas !== 6 || condition(s, 'AbleToScale')?.reason !== 'ReadyForNewScale') return false;
    if (condition(await statusOf(ns, 'quiet'), 'ScalingActive')?.reason !== 'FailedGetResourceMetric') return false;
    return condition(await statusOf(ns, 'nowhere'), 'AbleToScale')?.reason === 'FailedGetScale';
  }, 60_000, 250);
  // upstream's recorder sends Events in the background, after the status write they describe: wait
  // for the Event of each HPA's last rescale and failure, then read once nothing changes
  const reasons = (events: Event[], name: string) => events.filter((e) => e.involvedObject.name === name).map((e) => `${e.reason}: ${e.message}`);
  await eventually('each HPA\'s Event for what its status shows', async () => {
    const events = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items;
    const rescaledTo = (name: string, n: number) => reasons(events, name).some((r) => r.startsWith(`SuccessfulRescale: New size: ${n};`));
    return rescaledTo('web', 6) && rescaledTo('plain', 6) && rescaledTo('scalable', 6) && rescaledTo('worker', 4)
      && reasons(events, 'quiet').some((r) => r.startsWith('FailedGetResourceMetric:'))
      && reasons(events, 'nowhere').some((r) => r.startsWith('FailedGetScale:'));
  }, 15_000, 100);
  const up = await settledRead('the HPAs and their Events at 6', () => snapshot(ns), 15_000);

  const pods = (await rest.request<{ items: Array<{ metadata: { name: string } }> }>('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).body.items;
  for (const p of pods) await mergePatch(rest, `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`, { metadata: { annotations: { [USAGE]: '20m' } } });
  const lowAt = Date.now();
  const inWindow = new Promise<void>((r) => setTimeout(r, KILL_INTO_WINDOW_MS)).then(intoWindow);
  await eventually('web scaled down to 3', async () => (await replicasOf(deployPath(ns, 'web'))) === 3, 60_000, 100);
  const heldMs = Date.now() - lowAt;
  await inWindow;
  // upstream's recorder sends Events in the background: its status may land before its Event
  await eventually('web\'s status and Event after the scale-down', async () => (await statusOf(ns, 'web'))?.desiredReplicas === 3
    && (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items
      .some((e) => e.involvedObject.name === 'web' && e.reason === 'SuccessfulRescale' && e.message.startsWith('New size: 3;')), 15_000, 100);
  const down = await settledRead('the HPAs and their Events at 3', () => snapshot(ns), 15_000);
  return { up, down, heldMs };
}

beforeAll(async () => {
  await rest.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: {
    metadata: { name: CRD },
    spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'scalables', singular: 'scalable', kind: 'Scalable', listKind: 'ScalableList' },
      versions: [{ name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: {
          spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
          status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
        } } },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } } }] },
  } }).catch((e: unknown) => {
    if (!(e instanceof ApiError && e.status === 409)) throw e;
  });
  await eventually('scalables served', async () => {
    const r = await rest.request<{ resources: Array<{ name: string }> }>('GET', `/apis/${GROUP}/v1`).catch(() => undefined);
    return r?.body.resources.some((x) => x.name === 'scalables/scale');
  }, 30_000);
  // the stand-in answers for the resource metrics API before either manager starts
  await eventually('the metrics API served', async () => (await rest.request('GET', '/apis/metrics.k8s.io/v1beta1').catch(() => undefined)) !== undefined, 30_000);
});

afterAll(async () => {
  await upstream.stop();
  await ours?.kill();
  for (const ns of namespaces) {
    await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`).catch(() => undefined);
    await cleanNamespace(rest, ns);
    await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  }
  await rest.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`).catch(() => undefined);
});

test('scale-up, a 30 s scale-down window and their status, Events and targets as upstream; the window survives a kill -9', async () => {
  const theirs = await scenario(uniqueName('up'), async () => {
    await upstream.start(CONTROLLERS, ['--use-service-account-credentials', ...HPA_ARGS]);
  }, async () => undefined);
  await upstream.stop();

  const taskQueue = uniqueName('hpa-e2e');
  let killedAt = 0;
  const ARGS = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s', ...HPA_ARGS];
  const mine = await scenario(uniqueName('ours'), async () => {
    ours = await startManagerProcess(taskQueue, ARGS, { controllers: CONTROLLERS });
  }, async () => {
    await ours!.kill('SIGKILL');
    killedAt = Date.now();
    ours = await startManagerProcess(taskQueue, ARGS, { controllers: CONTROLLERS });
  });
  const ns = namespaces[namespaces.length - 1];

  // the window is in the workflow's state: the state query shows the recommendations it holds
  const connection = await testTemporalConnection();
  let state: { view?: { recommendations?: string[]; rescales?: number } } = {};
  try {
    const client = new Client({ connection });
    state = await client.workflow.getHandle(`hpa/${ns}/web`).query('state');
  } finally {
    await connection.close();
  }
  await ours?.kill();
  ours = undefined;

  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'hpa-vs-upstream.json'), JSON.stringify({ theirs, ours: mine, killedAt, state }, null, 1));

  const reason = 'cpu resource utilization (percentage of request) above target';
  expect(theirs.up).toMatchObject({
    'deployment web': 6, 'deployment plain': 6, scalable: 6,
    'events web': [`Normal SuccessfulRescale: New size: 6; reason: ${reason}`],
    'events plain': [`Normal SuccessfulRescale: New size: 4; reason: ${reason}`, `Normal SuccessfulRescale: New size: 6; reason: ${reason}`],
    'deployment worker': 4,
    'hpa nowhere': { conditions: [{ type: 'AbleToScale', status: 'False', reason: 'FailedGetScale',
      message: 'the HPA controller was unable to get the target\'s current scale: deployments.apps "missing" not found', dated: true }] },
    'events nowhere': ['Warning FailedGetScale: deployments.apps "missing" not found'],
    'events quiet': [
      'Warning FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
      'Warning FailedGetResourceMetric: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    ],
  });
  expect(theirs.up['hpa web']).toMatchObject({
    currentReplicas: 6, desiredReplicas: 6, scaled: true,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 150, averageValue: '150m' } } }],
  });
  expect(theirs.down).toMatchObject({
    'deployment web': 3,
    'events web': [`Normal SuccessfulRescale: New size: 3; reason: All metrics below target`, `Normal SuccessfulRescale: New size: 6; reason: ${reason}`],
    'hpa web': { desiredReplicas: 3, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 20, averageValue: '20m' } } }] },
  });
  // worker: the external metric asks for 3 first, then the per-pod one for more than the 4 allowed
  expect(theirs.up['events worker']).toHaveLength(2);
  expect((theirs.up['hpa worker'] as { currentMetrics: Array<{ type: string }> }).currentMetrics.map((m) => m.type)).toEqual(['Pods', 'Object', 'External']);
  expect(mine.up).toEqual(theirs.up);
  expect(mine.down).toEqual(theirs.down);

  // upstream's timeline: the last recommendation of 6 came at most one period before the drop,
  // and the first sync 30 s after it scales down
  expect(theirs.heldMs).toBeGreaterThan(24_000);
  expect(theirs.heldMs).toBeLessThan(37_000);
  // ours on the same timeline, give or take one period (and the failover's pause of a couple of
  // seconds); a lost window would have held until at least 30 s after the kill, 50 s after the drop
  expect(mine.heldMs).toBeGreaterThan(24_000);
  expect(mine.heldMs).toBeLessThan(41_000);
  expect(Math.abs(mine.heldMs - theirs.heldMs)).toBeLessThan(11_000);
  expect(state.view?.rescales).toBeGreaterThanOrEqual(1);
  expect(state.view?.recommendations?.length).toBeGreaterThan(0);
}, 300_000);
