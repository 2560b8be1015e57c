/**
 * Side-by-side benchmark: upstream kube-controller-manager vs temporal-kcm, same local stack,
 * same run, one at a time. For each: scale a ReplicaSet 0 -> N (until N pods are Ready and the
 * status says so), then N -> 0, and sample the controller manager's memory and CPU meanwhile.
 *
 *   npm run bench            (env BENCH_REPLICAS=500 BENCH_ROUNDS=3 BENCH_QPS=100)
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeRest } from '../activities/kube/rest';
import { TokenBucket } from '../activities/kube/token-bucket';
import { ensureBinaries } from '../starter/local/binaries';
import { repoRoot } from '../starter/local/paths';
import { adminKubeConfig, down, up } from '../starter/local/stack';

const N = Number(process.env.BENCH_REPLICAS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QPS = Number(process.env.BENCH_QPS ?? 100);
const DATA_DIR = path.resolve(process.env.TEMPORAL_KCM_BENCH_DATA_DIR ?? path.join(repoRoot, '.local', 'bench-stack'));

interface Sample { upMs: number; downMs: number; peakRssMiB: number; cpuSeconds: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

function cpuTicks(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime, fields 14 and 15 of stat
  } catch { return 0; }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function scenario(rest: KubeRest, proc: ChildProcess, label: string, round: number): Promise<Sample> {
  const ns = `bench-${label}-${round}-${Date.now() % 100000}`;
  await rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  await rest.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'default' } } });
  const rsPath = `/apis/apps/v1/namespaces/${ns}/replicasets/web`;
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
    body: {
      metadata: { name: 'web' },
      spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'registry.invalid/a:1' }] } } },
    },
  });
  const status = async () => (await rest.request<{ status?: { replicas?: number; readyReplicas?: number }; metadata: { generation: number } }>('GET', rsPath)).body;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(proc.pid!))), 100);
  const cpu0 = cpuTicks(proc.pid!);
  const patch = (replicas: number) => rest.request('PATCH', rsPath, { body: { spec: { replicas } }, contentType: 'application/merge-patch+json' });
  const t0 = Date.now();
  await patch(N);
  await waitFor(`${label}: ${N} ready`, async () => (await status()).status?.readyReplicas === N);
  const upMs = Date.now() - t0;
  const t1 = Date.now();
  await patch(0);
  await waitFor(`${label}: scaled to 0`, async () => {
    const s = await status();
    const pods = (await rest.request<{ items: Array<{ metadata: { deletionTimestamp?: string } }> }>('GET', `/api/v1/namespaces/${ns}/pods`)).body.items;
    return (s.status?.replicas ?? 0) === 0 && pods.filter((p) => !p.metadata.deletionTimestamp).length === 0;
  });
  const downMs = Date.now() - t1;
  clearInterval(sampler);
  const cpuSeconds = (cpuTicks(proc.pid!) - cpu0) / 100;
  await rest.request('DELETE', rsPath).catch(() => undefined);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods`).catch(() => undefined);
  return { upMs, downMs, peakRssMiB: peak / 1024, cpuSeconds };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  const state = await up({ dataDir: DATA_DIR, nodes: 3, log: (l) => process.stderr.write(`[stack] ${l}\n`) });
  const kubeconfig = path.join(DATA_DIR, 'admin.kubeconfig');
  const rest = new KubeRest(adminKubeConfig(DATA_DIR), new TokenBucket(0, 0));
  const bins = await ensureBinaries(['kube-controller-manager']);
  const taskQueue = `bench-${Date.now()}`;
  const logs = path.join(DATA_DIR, 'logs');

  const impls: Array<{ label: string; start: () => ChildProcess }> = [
    {
      label: 'upstream',
      start: () => spawn(bins['kube-controller-manager'], [
        `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`,
        '--controllers=replicaset', '--leader-elect=false', '--secure-port=0',
        `--kube-api-qps=${QPS}`, `--kube-api-burst=${QPS * 2}`, '--concurrent-replicaset-syncs=5',
      ], { stdio: ['ignore', fs.openSync(path.join(logs, 'bench-upstream-kcm.log'), 'a'), fs.openSync(path.join(logs, 'bench-upstream-kcm.log'), 'a')] }),
    },
    {
      label: 'temporal-kcm',
      start: () => spawn(process.execPath, [path.join(repoRoot, 'bin', 'temporal-kcm.js'), 'run',
        '--kubeconfig', kubeconfig, '--temporal-address', `127.0.0.1:${state.ports.temporal}`, '--task-queue', taskQueue,
        '--controllers', 'replicaset', '--leader-elect=false', '--secure-port', '0',
        '--kube-api-qps', String(QPS), '--kube-api-burst', String(QPS * 2), '--concurrent-replicaset-syncs', '5', '--log-level', 'warn',
      ], { stdio: ['ignore', fs.openSync(path.join(logs, 'bench-temporal-kcm.log'), 'a'), fs.openSync(path.join(logs, 'bench-temporal-kcm.log'), 'a')] }),
    },
  ];

  const results: Record<string, Sample[]> = {};
  for (const impl of impls) {
    const proc = impl.start();
    await sleep(8000); // start-up (temporal-kcm bundles its workflows) is not what we measure
    results[impl.label] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const s = await scenario(rest, proc, impl.label, r);
      process.stderr.write(`${impl.label} round ${r}: up ${s.upMs} ms, down ${s.downMs} ms, peak RSS ${s.peakRssMiB.toFixed(0)} MiB, CPU ${s.cpuSeconds.toFixed(1)} s\n`);
      results[impl.label].push(s);
    }
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }

  const row = (label: string) => {
    const xs = results[label];
    return { up: median(xs.map((x) => x.upMs)), down: median(xs.map((x) => x.downMs)), rss: Math.max(...xs.map((x) => x.peakRssMiB)), cpu: median(xs.map((x) => x.cpuSeconds)) };
  };
  const u = row('upstream');
  const t = row('temporal-kcm');
  const lines = [
    `ReplicaSet 0 -> ${N} -> 0, ${ROUNDS} rounds (medians; RSS = peak), --kube-api-qps ${QPS}`,
    '',
    '| metric | upstream KCM | temporal-kcm | ratio (temporal-kcm / upstream) |',
    '| --- | --- | --- | --- |',
    `| scale up to ${N} Ready | ${(u.up / 1000).toFixed(1)} s | ${(t.up / 1000).toFixed(1)} s | ${(t.up / u.up).toFixed(2)} |`,
    `| scale down to 0 | ${(u.down / 1000).toFixed(1)} s | ${(t.down / 1000).toFixed(1)} s | ${(t.down / u.down).toFixed(2)} |`,
    `| controller manager CPU per round | ${u.cpu.toFixed(1)} s | ${t.cpu.toFixed(1)} s | ${(t.cpu / u.cpu).toFixed(2)} |`,
    `| controller manager peak RSS | ${u.rss.toFixed(0)} MiB | ${t.rss.toFixed(0)} MiB | ${(t.rss / u.rss).toFixed(2)} |`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  fs.mkdirSync(path.join(repoRoot, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(repoRoot, 'bench', 'results', 'replicaset-scale.json'), JSON.stringify({ N, ROUNDS, QPS, results, at: new Date().toISOString() }, null, 2) + '\n');
  if (process.env.BENCH_KEEP_STACK !== '1') await down(DATA_DIR, { log: () => undefined });
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
