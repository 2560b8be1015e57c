import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { readPid } from '../../starter/local/processes';
import { ComponentName, adminKubeConfig } from '../../starter/local/stack';
import { runCli } from '../support/cli';

/**
 * A second stack of its own (own data dir, own ports) so that crashing and stopping it cannot
 * disturb the shared stack the other end-to-end tests use.
 */
const PARTS: ComponentName[] = ['etcd', 'temporal', 'kube-apiserver', 'kube-scheduler', 'kwok', 'metrics-standin'];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tkcm-lifecycle-'));

function pids(): number[] {
  return PARTS.map((p) => readPid(dataDir, p)?.pid).filter((p): p is number => p !== undefined);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** Every live process whose command line mentions our data dir: the stack's parts, nothing else. */
function processesUsingDataDir(): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(dataDir) && alive(Number(entry)) && Number(entry) !== process.pid) out.push(Number(entry));
    } catch { /* exited meanwhile */ }
  }
  return out;
}

afterAll(async () => {
  await runCli(['local', 'down', '--purge', '--data-dir', dataDir]);
});

describe('temporal-kcm local up | status | env | down', () => {
  test('env when the stack is down: a clear error, exit 1', async () => {
    const r = await runCli(['local', 'env', '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not running');
    expect(r.stderr).toContain('local up');
    expect(r.stdout).toBe('');
  });

  test('a port already in use: a clear error naming it, and nothing left running', async () => {
    const blocker = net.createServer();
    await new Promise<void>((res) => blocker.listen(0, '127.0.0.1', () => res()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const r = await runCli(['local', 'up', '--data-dir', dataDir, '--apiserver-port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port}`);
      expect(r.stderr).toContain('already in use');
      expect(pids().filter(alive)).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  test('a bad flag: usage and exit 2', async () => {
    const r = await runCli(['local', 'up', '--data-dir', dataDir, '--nodes', 'many']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: temporal-kcm local up');
  });

  let configMapUid: string | undefined;

  test('up starts every part healthy; a second up is a no-op that keeps them', async () => {
    const first = await runCli(['local', 'up', '--data-dir', dataDir, '--nodes', '2']);
    expect(first.stderr + first.stdout).not.toContain('error');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Temporal Web UI http:\/\/127\.0\.0\.1:\d+/);
    const before = pids();
    expect(before).toHaveLength(6);

    const st = await runCli(['local', 'status', '--data-dir', dataDir]);
    expect(st.code).toBe(0);
    for (const p of PARTS) expect(st.stdout).toMatch(new RegExp(`^${p}\\s+healthy`, 'm'));

    const again = await runCli(['local', 'up', '--data-dir', dataDir]);
    expect(again.code).toBe(0);
    expect(pids()).toEqual(before);

    const env = await runCli(['local', 'env', '--data-dir', dataDir]);
    expect(env.code).toBe(0);
    expect(env.stdout).toContain(`export KUBECONFIG=${path.join(dataDir, 'admin.kubeconfig')}`);
    expect(env.stdout).toMatch(/^export TEMPORAL_ADDRESS=127\.0\.0\.1:\d+$/m);

    const core = adminKubeConfig(dataDir).makeApiClient(k8s.CoreV1Api);
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'survives-crash' }, data: { a: '1' } } });
    configMapUid = cm.metadata?.uid;
    expect(configMapUid).toBeDefined();
  });

  test('after a crash (every part SIGKILLed, pid files left behind) up recovers on the same data', async () => {
    for (const pid of pids()) process.kill(pid, 'SIGKILL');
    for (const pid of pids()) while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
    const st = await runCli(['local', 'status', '--data-dir', dataDir]);
    expect(st.code).toBe(1);
    expect(st.stdout).toMatch(/^kube-apiserver\s+stopped/m);

    const r = await runCli(['local', 'up', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    const core = adminKubeConfig(dataDir).makeApiClient(k8s.CoreV1Api);
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'survives-crash' });
    expect(cm.metadata?.uid).toBe(configMapUid);
    const nodes = await core.listNode();
    expect(nodes.items.map((n) => n.metadata?.name).sort()).toEqual(['kwok-node-0', 'kwok-node-1']);
    // the metrics stand-in came back with the rest: its APIServices answer through the aggregator
    const custom = adminKubeConfig(dataDir).makeApiClient(k8s.CustomObjectsApi);
    const nm = (await custom.listClusterCustomObject({ group: 'metrics.k8s.io', version: 'v1beta1', plural: 'nodes' })) as { items: Array<{ metadata: { name: string } }> };
    expect(nm.items.map((n) => n.metadata.name)).toEqual(['kwok-node-0', 'kwok-node-1']);
  });

  test('down stops exactly its processes: a stranger behind a recycled pid file survives', async () => {
    const running = pids();
    expect(running.every(alive)).toBe(true);
    // A process of someone else's whose pid ended up in a pid file (as after a reboot).
    const stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
    const schedulerPidFile = path.join(dataDir, 'run', 'kube-scheduler.pid');
    const realScheduler = readPid(dataDir, 'kube-scheduler')!;
    process.kill(realScheduler.pid, 'SIGKILL');
    while (alive(realScheduler.pid)) await new Promise((r) => setTimeout(r, 50));
    fs.writeFileSync(schedulerPidFile, JSON.stringify({ ...realScheduler, pid: stranger.pid }));
    try {
      const r = await runCli(['local', 'down', '--data-dir', dataDir]);
      expect(r.code).toBe(0);
      expect(alive(stranger.pid!)).toBe(true);
      for (const pid of running) expect(alive(pid)).toBe(false);
      expect(processesUsingDataDir()).toEqual([]);
      const st = await runCli(['local', 'status', '--data-dir', dataDir]);
      for (const p of PARTS) expect(st.stdout).toMatch(new RegExp(`^${p}\\s+stopped`, 'm'));
      const env = await runCli(['local', 'env', '--data-dir', dataDir]);
      expect(env.code).toBe(1);
    } finally {
      stranger.kill('SIGKILL');
    }
  });
});

describe('building binaries', () => {
  test('a missing Go toolchain, when a binary must be built, is a clear error', async () => {
    const emptyCache = fs.mkdtempSync(path.join(os.tmpdir(), 'tkcm-cache-'));
    const r = await runCli(['local', 'build'], {
      HOME: process.env.HOME,
      PATH: path.dirname(process.execPath),
      TEMPORAL_KCM_CACHE_DIR: emptyCache,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Go toolchain (`go`) is not on PATH');
    expect(r.stderr).toContain('KUBE_APISERVER_BIN');
    fs.rmSync(emptyCache, { recursive: true, force: true });
  });

  test('a binary named by its env var is used instead of building', async () => {
    const emptyCache = fs.mkdtempSync(path.join(os.tmpdir(), 'tkcm-cache-'));
    const fake = path.join(emptyCache, 'my-etcd');
    fs.writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 });
    const env = { HOME: process.env.HOME, PATH: path.dirname(process.execPath), TEMPORAL_KCM_CACHE_DIR: emptyCache, ETCD_BIN: fake };
    const r = await runCli(['local', 'build'], env);
    // etcd resolves from ETCD_BIN; the rest still needs Go, which this PATH lacks
    expect(r.stderr).toContain(`using etcd from ETCD_BIN: ${fake}`);
    expect(r.stderr).not.toMatch(/building etcd/);
    fs.rmSync(emptyCache, { recursive: true, force: true });
  });
});
