import { execFile } from 'node:child_process';
import * as path from 'node:path';
import type { KubeObject } from '../../activities/kube/projections';
import { ensureBinaries } from '../../starter/local/binaries';
import { eventually, freshNamespace, settledRead, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { AuditLog, isDryRun, writesOfOurControllers } from '../support/audit';
import { metricValue, pidWorkingOn, startManagerProcess } from '../support/manager';
import { PodObject, cleanNamespace, controllerUid, listPods, mergePatch, testRest } from '../support/kube';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';
import { comparedIn, rowOf, startShadow } from '../support/shadow';
import type { ShadowReport } from '../../workflows/shadow/types';
import { Client, Connection } from '@temporalio/client';

/**
 * The same kubectl sequence against upstream kube-controller-manager and against temporal-kcm,
 * on the same stack, one after the other; after every step the observable state must be equal
 * (ReplicaSet names and pod-template-hash labels included; pod names and times aside).
 */
const rest = testRest(testClusterAccess());
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

async function snapshot(ns: string): Promise<{ observed: boolean; podsByImage: Record<string, number>; [field: string]: unknown }> {
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

/**
 * The state once it stops changing (two equal snapshots a second apart, both with the status
 * describing the current spec, as the StatefulSet comparison reads it).
 */
function settled(ns: string): Promise<unknown> {
  return settledRead('state settled', () => snapshot(ns), 120_000, 1000, (s) => s.observed);
}

const image = (v: string) => `web=registry.invalid/web:${v}`;

/** The scripted sequence; returns the settled state after each step. */
async function runSequence(ns: string, afterStep?: (step: string) => Promise<void>): Promise<Array<{ step: string; state: unknown }>> {
  const out: Array<{ step: string; state: unknown }> = [];
  const step = async (name: string, fn: () => Promise<unknown>, rollout = true) => {
    await fn();
    if (rollout) await kubectl(ns, 'rollout', 'status', 'deployment/web', '--timeout=120s');
    out.push({ step: name, state: await settled(ns) });
    await afterStep?.(name);
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
    await eventually('v3 rollout under way', async () => (await snapshot(ns)).podsByImage['registry.invalid/web:3'] >= 1, 60_000, 50);
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

/** The controllers a shadow of ours judges in upstream's pass: the sequence's, and those of its neighbours. */
const SHADOWED = 'replicaset,deployment,job,cronjob,endpoint,endpointslice,garbagecollector';

/**
 * What shares the namespace with the Deployment in upstream's pass, for the shadow to judge too: a
 * Service over its pods (Endpoints, EndpointSlices), a Job of two quick pods, a CronJob every minute.
 */
async function createNeighbours(ns: string): Promise<void> {
  const quick = { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/job:1', command: ['/bin/sh', '-c', 'sleep 1'] }] };
  await rest.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } } });
  await rest.request('POST', `/apis/batch/v1/namespaces/${ns}/jobs`, { body: { metadata: { name: 'once' }, spec: { completions: 2, parallelism: 2, template: { spec: quick } } } });
  await rest.request('POST', `/apis/batch/v1/namespaces/${ns}/cronjobs`, {
    body: { metadata: { name: 'tick' }, spec: { schedule: '* * * * *', successfulJobsHistoryLimit: 1, jobTemplate: { spec: { template: { spec: quick } } } } },
  });
}

async function cleanup(ns: string): Promise<void> {
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {} }).catch(() => undefined);
  await cleanNamespace(rest, ns);
}

const upstream = new UpstreamKcm('compare');

/** kcm_shadow_proposals_total per controller, and over every resource but Events (the stack's audit policy leaves Events out) */
function proposalsIn(metrics: string): Record<'deployment' | 'replicaset' | 'audited', number> {
  const of = (labels: Record<string, string>) => metricValue(metrics, 'kcm_shadow_proposals_total', labels);
  return { deployment: of({ controller: 'deployment' }), replicaset: of({ controller: 'replicaset' }), audited: of({}) - of({ resource: 'events' }) };
}

let connection: Connection;
let temporal: Client;

beforeAll(async () => {
  connection = await testTemporalConnection();
  temporal = new Client({ connection });
});

afterAll(async () => {
  await upstream.stop();
  await connection?.close();
});

test('kubectl create, scale, rolling image change, rollover, pause/resume, undo, restart, Recreate, history cleanup: same state as upstream after every step', async () => {
  kubectlBin = (await ensureBinaries(['kubectl'])).kubectl;

  // upstream first, every controller, the only one writing. Beside it a --shadow deployment of ours
  // (two replicas) of the controllers the sequence exercises, which decides on the same objects and
  // sends its writes as dry runs only; and a second one whose replicaset controller has a planted
  // difference: its DeploymentReplicaSetTerminatingReplicas gate is off, so its ReplicaSet status
  // leaves status.terminatingReplicas out.
  const upNs = await freshNamespace(testClusterAccess(), 'vs-upstream');
  const [shadow, planted] = await Promise.all([
    startShadow('vs-upstream', SHADOWED, { replicas: 2 }),
    startShadow('vs-planted', 'replicaset', { args: ['--feature-gates', 'DeploymentReplicaSetTerminatingReplicas=false'] }),
  ]);
  const audit = new AuditLog();
  audit.mark();
  await upstream.start('*', ['--kube-api-qps=200', '--kube-api-burst=400']);
  await createNeighbours(upNs);
  // kill -9 the shadow replica running the ledger once it has work, the rest of the sequence on the other
  let atKill: ShadowReport | undefined;
  const theirs = await runSequence(upNs, async (step) => {
    if (step !== 'image change') return;
    const holder = await pidWorkingOn(temporal, shadow.ledgerId);
    await (shadow.replicas.find((m) => m.pid === holder) ?? shadow.replicas[0]).kill('SIGKILL');
    atKill = await shadow.report();
  });
  // the garbage collector's turn: the Deployment, deleted in the foreground, waits for its
  // ReplicaSets and pods to go, and then the collector takes its finalizer off (a write both
  // collectors decide whoever deletes the dependents first; a background delete leaves the
  // collector only deletes, which carry no manager, to be compared by a race)
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${upNs}/deployments/web`, { body: { propagationPolicy: 'Foreground' } });
  await eventually('the ReplicaSets, pods and Deployment collected', async () => (await listPods(rest, upNs, 'app=web')).length === 0
    && (await rest.request<{ items: unknown[] }>('GET', `/apis/apps/v1/namespaces/${upNs}/replicasets`)).body.items.length === 0
    && (await rest.request<{ items: unknown[] }>('GET', `/apis/apps/v1/namespaces/${upNs}/deployments`)).body.items.length === 0, 60_000, 250);
  await upstream.stop();
  // the CronJob fires on the minute, which the pass may not have crossed
  const cronFired = !!(await rest.request<{ status?: { lastScheduleTime?: string } }>('GET', `/apis/batch/v1/namespaces/${upNs}/cronjobs/tick`)).body.status?.lastScheduleTime;
  const [survivor] = shadow.alive();
  const proposed = await settledRead('shadow proposals settled', async () => proposalsIn(await survivor.metrics()), 30_000);
  const report = await shadow.settledReport();
  const plantedReport = await planted.settledReport();
  await shadow.stop();
  await planted.stop();
  // no CronJob may go on firing for the managers of the files after this one
  for (const r of ['/apis/batch/v1/namespaces/NS/cronjobs', '/apis/batch/v1/namespaces/NS/jobs', '/api/v1/namespaces/NS/services/web']) {
    await rest.request('DELETE', r.replace('NS', upNs), { body: { propagationPolicy: 'Background' } }).catch(() => undefined);
  }
  await cleanup(upNs);
  // every write the shadows' controllers sent was a dry run
  const shadowWrites = writesOfOurControllers(audit.events());
  expect(shadowWrites.filter((e) => !isDryRun(e)).map((e) => `${e.verb} ${e.requestURI}`)).toEqual([]);
  expect(proposed.deployment).toBeGreaterThan(0);
  expect(proposed.replicaset).toBeGreaterThan(0);
  expect(shadowWrites.length).toBeGreaterThanOrEqual(proposed.audited);

  // the ledger compared every exercised controller's writes with upstream's, through the kill of a replica
  expect(comparedIn(report)).toBeGreaterThan(comparedIn(atKill));
  for (const c of SHADOWED.split(',').filter((x) => x !== 'cronjob' || cronFired)) {
    expect({ controller: c, compared: (rowOf(report, c)?.compared ?? 0) > 0 }).toEqual({ controller: c, compared: true });
  }
  expect(rowOf(report, 'deployment')!.agreement).toBeGreaterThanOrEqual(0.6);
  expect(rowOf(report, 'replicaset')!.agreement).toBeGreaterThanOrEqual(0.6);
  // the planted difference is found, naming its field; the unplanted shadow never lacks the field
  const lacksTerminating = (r: ShadowReport) => r.findings.filter(({ example: f }) => f.outcome === 'differ' && f.controller === 'replicaset'
    && (f.differences ?? []).some((d) => d.path === 'status.terminatingReplicas' && d.ours === undefined && d.theirs !== undefined));
  expect(lacksTerminating(plantedReport).length).toBeGreaterThan(0);
  expect(lacksTerminating(report)).toEqual([]);

  // then ours
  const ourNs = await freshNamespace(testClusterAccess(), 'vs-ours');
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
