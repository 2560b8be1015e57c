import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { KubeObject } from '../../activities/kube/projections';
import { ensureBinaries } from '../../starter/local/binaries';
import { eventually, freshNamespace, settledRead, testKubeConfig, uniqueName } from '../support/cluster';
import { AuditLog } from '../support/audit';
import { metricValue, startManagerProcess } from '../support/manager';
import { PodObject, cleanNamespace, controllerUid, listPods, mergePatch, testRest } from '../support/kube';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The same kubectl sequence against upstream kube-controller-manager and against temporal-kcm,
 * on the same stack, one after the other; after every step the observable state must be equal
 * (ReplicaSet names and pod-template-hash labels included; pod names and times aside).
 */
const rest = testRest(testKubeConfig());
const kubeconfig = path.join(TEST_DATA_DIR, 'admin.kubeconfig');
let kubectlBin: string;

type Obj = KubeObject & { status?: Record<string, unknown> & { conditions?: Array<{ type: string; status: string; reason?: string }> } };

function kubectl(ns: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlBin, ['--kubeconfig', kubeconfig, '-n', ns, ...args], { timeout: 150_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout));
  });
}

const imageOf = (t: unknown) => (t as { spec?: { containers?: Array<{ image?: string }> } } | undefined)?.spec?.containers?.[0]?.image;

async function snapshot(ns: string): Promise<unknown> {
  const d = (await rest.request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).body;
  const rss = (await rest.request<{ items: Obj[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items
    .filter((rs) => controllerUid(rs) === d.metadata?.uid)
    .map((rs) => {
      const a = rs.metadata?.annotations ?? {};
      const st = rs.status ?? {};
      return {
        revision: Number(a['deployment.kubernetes.io/revision']),
        revisionHistory: a['deployment.kubernetes.io/revision-history'] ?? '',
        desired: a['deployment.kubernetes.io/desired-replicas'],
        max: a['deployment.kubernetes.io/max-replicas'],
        replicas: (rs.spec as { replicas: number }).replicas,
        ready: st.readyReplicas ?? 0,
        image: imageOf(rs.spec?.template),
        // upstream's pod-template-hash, which names the ReplicaSet; a restart's template carries the
        // time of the restart, so its hash differs run to run
        hash: (rs.spec?.template as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']
          ? 'restarted' : rs.metadata?.labels?.['pod-template-hash'],
        named: rs.metadata?.name === `web-${rs.metadata?.labels?.['pod-template-hash']}`,
      };
    })
    .sort((a, b) => a.revision - b.revision);
  const pods: PodObject[] = (await listPods(rest, ns, 'app=web')).filter((p) => !p.metadata.deletionTimestamp);
  const podsByImage: Record<string, number> = {};
  for (const p of pods) podsByImage[imageOf(p) ?? '?'] = (podsByImage[imageOf(p) ?? '?'] ?? 0) + 1;
  const s = d.status ?? {};
  return {
    revision: d.metadata?.annotations?.['deployment.kubernetes.io/revision'],
    observed: s.observedGeneration === d.metadata?.generation,
    status: { replicas: s.replicas ?? 0, updated: s.updatedReplicas ?? 0, ready: s.readyReplicas ?? 0, available: s.availableReplicas ?? 0, unavailable: s.unavailableReplicas ?? 0 },
    conditions: (s.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })).sort((a, b) => a.type.localeCompare(b.type)),
    replicaSets: rss,
    podsByImage,
  };
}

/** The state once it stops changing (two equal snapshots a second apart, as the StatefulSet comparison reads it). */
function settled(ns: string): Promise<unknown> {
  return settledRead('state settled', () => snapshot(ns), 120_000, 1000);
}

const image = (v: string) => `web=registry.invalid/web:${v}`;

/** The scripted sequence; returns the settled state after each step. */
async function runSequence(ns: string): Promise<Array<{ step: string; state: unknown }>> {
  const out: Array<{ step: string; state: unknown }> = [];
  const step = async (name: string, fn: () => Promise<unknown>, rollout = true) => {
    await fn();
    if (rollout) await kubectl(ns, 'rollout', 'status', 'deployment/web', '--timeout=120s');
    out.push({ step: name, state: await settled(ns) });
  };
  await step('create', () => kubectl(ns, 'create', 'deployment', 'web', '--image=registry.invalid/web:1', '--replicas=3'));
  await step('scale', () => kubectl(ns, 'scale', 'deployment/web', '--replicas=5'));
  await step('image change', () => kubectl(ns, 'set', 'image', 'deployment/web', image('2')));
  // slow the rollout down so that a second change lands in the middle of the first
  await step('slow strategy', () => mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/deployments/web`, {
    spec: { minReadySeconds: 2, strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
  }));
  await step('rollover', async () => {
    await kubectl(ns, 'set', 'image', 'deployment/web', image('3'));
    await eventually('v3 rollout under way', async () => ((await snapshot(ns)) as { podsByImage: Record<string, number> }).podsByImage['registry.invalid/web:3'] >= 1, 60_000, 50);
    await kubectl(ns, 'set', 'image', 'deployment/web', image('4'));
  });
  await step('fast strategy', () => mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/deployments/web`, {
    spec: { minReadySeconds: 0, strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } },
  }));
  await step('pause, change, scale', async () => {
    await kubectl(ns, 'rollout', 'pause', 'deployment/web');
    await kubectl(ns, 'set', 'image', 'deployment/web', image('5'));
    await kubectl(ns, 'scale', 'deployment/web', '--replicas=6');
  }, false);
  await step('resume', () => kubectl(ns, 'rollout', 'resume', 'deployment/web'));
  await step('undo', () => kubectl(ns, 'rollout', 'undo', 'deployment/web'));
  await step('restart', () => kubectl(ns, 'rollout', 'restart', 'deployment/web'));
  await step('recreate', async () => {
    await mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/deployments/web`, { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } });
    await kubectl(ns, 'set', 'image', 'deployment/web', image('6'));
  });
  await step('revisionHistoryLimit', () => mergePatch(rest, `/apis/apps/v1/namespaces/${ns}/deployments/web`, { spec: { revisionHistoryLimit: 2 } }), false);
  return out;
}

async function cleanup(ns: string): Promise<void> {
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {} }).catch(() => undefined);
  await cleanNamespace(rest, ns);
}

const upstream = new UpstreamKcm('compare');

/** A controller's client of ours names it after our User-Agent (the test's own client does not). */
const CONTROLLER_AGENT = /^temporal-kcm\/\S+ \([^)]*\) temporal-kcm\/./;
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** kcm_shadow_proposals_total per controller, and over every resource but Events (the stack's audit policy leaves Events out) */
function proposalsIn(metrics: string): Record<'deployment' | 'replicaset' | 'audited', number> {
  const of = (labels: Record<string, string>) => metricValue(metrics, 'kcm_shadow_proposals_total', labels);
  return { deployment: of({ controller: 'deployment' }), replicaset: of({ controller: 'replicaset' }), audited: of({}) - of({ resource: 'events' }) };
}

afterAll(async () => {
  await upstream.stop();
});

test('kubectl create, scale, rolling image change, rollover, pause/resume, undo, restart, Recreate, history cleanup: same state as upstream after every step', async () => {
  kubectlBin = (await ensureBinaries(['kubectl'])).kubectl;

  // upstream first, the only one writing; beside it a --shadow replica of ours, which decides on
  // the same objects and sends its writes as dry runs only
  const upNs = await freshNamespace(testKubeConfig(), 'vs-upstream');
  const shadow = await startManagerProcess(uniqueName('vs-upstream'), ['--shadow', '--kube-api-qps', '200', '--kube-api-burst', '400'], { controllers: 'replicaset,deployment' });
  const audit = new AuditLog();
  audit.mark();
  await upstream.start('replicaset,deployment', ['--kube-api-qps=200', '--kube-api-burst=400']);
  const theirs = await runSequence(upNs);
  await upstream.stop();
  const proposed = await settledRead('shadow proposals settled', async () => proposalsIn(await shadow.metrics()), 30_000);
  await shadow.kill();
  await cleanup(upNs);
  // every write the shadow's controllers sent was a dry run, and each is a proposal it counted
  const shadowWrites = audit.events().filter((e) => CONTROLLER_AGENT.test(e.userAgent ?? '') && WRITE_VERBS.has(e.verb));
  expect(shadowWrites.filter((e) => !/[?&]dryRun=All(&|$)/.test(e.requestURI ?? '')).map((e) => `${e.verb} ${e.requestURI}`)).toEqual([]);
  expect(proposed.deployment).toBeGreaterThan(0);
  expect(proposed.replicaset).toBeGreaterThan(0);
  expect(shadowWrites.length).toBeGreaterThanOrEqual(proposed.audited);

  // then ours
  const ourNs = await freshNamespace(testKubeConfig(), 'vs-ours');
  const manager = await startManagerProcess(uniqueName('vs-upstream'), ['--controllers', 'replicaset,deployment', '--kube-api-qps', '200', '--kube-api-burst', '400']);
  try {
    const ours = await runSequence(ourNs);
    for (let i = 0; i < theirs.length; i++) {
      expect({ step: ours[i].step, state: ours[i].state }).toEqual({ step: theirs[i].step, state: theirs[i].state });
    }
  } finally {
    await manager.kill();
    await cleanup(ourNs);
  }
});
