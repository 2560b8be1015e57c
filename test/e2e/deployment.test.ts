import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { ensureBinaries } from '../../starter/local/binaries';
import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { PodObject, cleanNamespace, controllerUid, listPods, testRest } from '../support/kube';
import { TEST_DATA_DIR } from '../support/stack';
import type { KubeObject } from '../../activities/kube/projections';
import { deploymentView } from '../../activities/deployment/projections';
import { podTemplateHash } from '../../workflows/deployment/util';

/** The deployment controller judged the way users judge it: through kubectl. */
const rest = testRest(testClusterAccess());
let kubectlBin: string;
let manager: ManagerProcess;
let ns: string;

interface Condition { type: string; status: string; reason?: string; message?: string }
type Obj = KubeObject & { status?: Record<string, unknown> & { conditions?: Condition[] } };

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(kubectlBin, ['--kubeconfig', path.join(TEST_DATA_DIR, 'admin.kubeconfig'), '-n', ns, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function ok(...args: string[]): Promise<string> {
  const r = await kubectl(...args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const deployment = async (name: string) => (await rest.request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`)).body;
const condition = (o: Obj, type: string) => o.status?.conditions?.find((c) => c.type === type);

async function replicaSetsOf(name: string): Promise<Obj[]> {
  const d = await deployment(name);
  const all = (await rest.request<{ items: Obj[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items;
  return all.filter((rs) => controllerUid(rs) === d.metadata?.uid);
}

const image = (o: Obj) => ((o.spec?.template as { spec?: { containers?: Array<{ image?: string }> } } | undefined)?.spec?.containers?.[0]?.image);

const taskQueue = uniqueName('deploy-e2e');
const managerArgs = ['--controllers', 'replicaset,deployment', '--kube-api-qps', '200', '--kube-api-burst', '400'];

beforeAll(async () => {
  kubectlBin = (await ensureBinaries(['kubectl'])).kubectl;
  ns = await freshNamespace(testClusterAccess(), 'deploy');
  manager = await startManagerProcess(taskQueue, managerArgs);
});

afterAll(async () => {
  await manager?.kill();
  if (ns) {
    await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {} }).catch(() => undefined);
    await cleanNamespace(rest, ns);
  }
});

// creating, scaling, rolling, pausing, undoing, restarting and history cleanup are compared field
// by field with upstream in deployment-vs-upstream.test.ts; what is here is what that cannot show
describe('deployment controller through kubectl', () => {
  test('Recreate: every old pod is gone before a new one is created', async () => {
    await ok('create', 'deployment', 'batch', '--image=registry.invalid/batch:1', '--replicas=4');
    await rest.request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/batch`, {
      body: { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } }, contentType: 'application/merge-patch+json',
    });
    await ok('rollout', 'status', 'deployment/batch', '--timeout=90s');
    await ok('set', 'image', 'deployment/batch', 'batch=registry.invalid/batch:2');
    let overlap = false;
    let sawNew = false;
    await eventually('recreate rollout done', async () => {
      const pods: PodObject[] = (await listPods(rest, ns, 'app=batch')).filter((p) => !['Succeeded', 'Failed'].includes(String(p.status?.phase)));
      const imgs = pods.map((p) => ((p.spec as { containers: Array<{ image: string }> }).containers[0].image));
      const hasOld = imgs.includes('registry.invalid/batch:1');
      const hasNew = imgs.includes('registry.invalid/batch:2');
      if (hasOld && hasNew) overlap = true;
      if (hasNew) sawNew = true;
      const d = await deployment('batch');
      return sawNew && !hasOld && d.status?.updatedReplicas === 4 && d.status?.availableReplicas === 4;
    }, 90_000, 50);
    expect(overlap).toBe(false);
  });

  test('progressDeadlineSeconds: a rollout that cannot progress gets ProgressDeadlineExceeded and ReplicaFailure', async () => {
    await ok('create', 'deployment', 'stuck', '--image=registry.invalid/stuck:1', '--replicas=2');
    await rest.request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/stuck`, {
      body: { spec: { progressDeadlineSeconds: 5, template: { spec: { serviceAccountName: 'does-not-exist' } } } },
      contentType: 'application/merge-patch+json',
    });
    const d = await eventually('ProgressDeadlineExceeded', async () => {
      const o = await deployment('stuck');
      return condition(o, 'Progressing')?.reason === 'ProgressDeadlineExceeded' ? o : undefined;
    }, 60_000);
    expect(condition(d, 'Progressing')?.status).toBe('False');
    expect(condition(d, 'ReplicaFailure')?.status).toBe('True');
    const r = await kubectl('rollout', 'status', 'deployment/stuck', '--timeout=10s');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/exceeded its progress deadline/);
  });

  test('a hash collision bumps status.collisionCount and the new ReplicaSet gets another name', async () => {
    const dep = { metadata: { name: 'clash' }, spec: { replicas: 1, paused: true, selector: { matchLabels: { app: 'clash' } },
      template: { metadata: { labels: { app: 'clash' } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/clash:1' }] } } } };
    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: dep });
    const stored = await eventually('paused deployment observed', async () => {
      const d = await deployment('clash');
      return d.status?.observedGeneration === d.metadata?.generation ? d : undefined;
    });
    expect(await replicaSetsOf('clash')).toHaveLength(0);
    // the name the controller will use: upstream's pod-template-hash of the template (new runs use it)
    const taken = `clash-${podTemplateHash(deploymentView(stored).template, undefined, true)}`;
    // someone else's ReplicaSet under the name the controller is about to use
    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
      metadata: { name: taken }, spec: { replicas: 0, selector: { matchLabels: { other: 'x' } },
        template: { metadata: { labels: { other: 'x' } }, spec: { containers: [{ name: 'x', image: 'registry.invalid/other:1' }] } } } } });
    await ok('rollout', 'resume', 'deployment/clash');
    await ok('rollout', 'status', 'deployment/clash', '--timeout=90s');
    const d = await deployment('clash');
    expect(d.status?.collisionCount).toBe(1);
    const rss = await replicaSetsOf('clash');
    expect(rss).toHaveLength(1);
    expect(rss[0].metadata?.name).not.toBe(taken);
    const foreign = (await rest.request<Obj>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/${taken}`)).body;
    expect(foreign.metadata?.ownerReferences ?? []).toEqual([]);
  });

  test('a Deployment deleted and recreated under its name while no manager ran is served by a new run', async () => {
    await ok('create', 'deployment', 'again', '--image=registry.invalid/again:1', '--replicas=2');
    await ok('rollout', 'status', 'deployment/again', '--timeout=60s');
    const before = (await deployment('again')).metadata!.uid;
    await manager.kill();
    await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/again`);
    await ok('create', 'deployment', 'again', '--image=registry.invalid/again:2', '--replicas=3');
    // the running workflow still holds the old UID: it must hand over to a new run, not retry forever
    manager = await startManagerProcess(taskQueue, managerArgs);
    await ok('rollout', 'status', 'deployment/again', '--timeout=60s');
    const d = await deployment('again');
    expect(d.metadata!.uid).not.toBe(before);
    const owned = await replicaSetsOf('again');
    expect(owned).toHaveLength(1);
    expect(image(owned[0])).toBe('registry.invalid/again:2');
    expect(d.status?.readyReplicas).toBe(3);
  });
});
