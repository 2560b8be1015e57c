import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { KubeTarget } from './metrics/kube';
import { nodesTainted } from './nodes';
import { repoRoot } from './paths';
import { informerWorkflowId } from '../../workflows/informer';
import { nodeLifecycleWorkflowId } from '../../workflows/node-lifecycle/workflow';
import { TEMPORAL_CHANNEL_ARGS, type TemporalTarget, loadTemporalTls } from '../run-options';
import { temporalTlsArgs } from './temporal-topology';

/** The task queue of the node lifecycle controller `local up` runs while it waits for its nodes. */
export const BOOT_TASK_QUEUE = 'temporal-kcm-local-up';

const NOT_READY = 'node.kubernetes.io/not-ready';

/** Stack nodes still carrying the taint the TaintNodesByCondition admission plugin gives every new node. */
const taintedNodes = (t: KubeTarget) => nodesTainted(t, NOT_READY, 'NoSchedule');

/**
 * New nodes come up tainted not-ready (the apiserver's TaintNodesByCondition admission plugin),
 * and only a node lifecycle controller takes the taint off once they are Ready, as in any real
 * cluster. So that the stack schedules pods before any controller manager of the user's runs (a
 * test's manager may run only the controllers it tests), `local up` runs this project's own node
 * lifecycle controller, on a task queue of its own, until its nodes are untainted, then stops it
 * and ends its workflows.
 */
export async function liftBootTaints(o: { kube: KubeTarget; dataDir: string; temporal: TemporalTarget; timeoutMs: number; log: (l: string) => void }): Promise<void> {
  if ((await taintedNodes(o.kube)).length === 0) return;
  const logFile = path.join(o.dataDir, 'logs', 'node-lifecycle-boot.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [
    path.join(repoRoot, 'bin', 'temporal-kcm.js'), 'run',
    // as kubeadm runs the manager: its own identity, the controller as its ServiceAccount
    '--kubeconfig', path.join(o.dataDir, 'kube-controller-manager.kubeconfig'),
    '--use-service-account-credentials',
    '--temporal-address', o.temporal.address,
    '--temporal-namespace', o.temporal.namespace,
    ...temporalTlsArgs(o.temporal.tls),
    '--task-queue', BOOT_TASK_QUEUE,
    '--controllers', 'node-lifecycle-controller',
    '--secure-port', '0',
    '--leader-elect=false',
  ], { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const deadline = Date.now() + o.timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the node lifecycle controller exited with ${child.exitCode}; see ${logFile}`);
      const left = await taintedNodes(o.kube);
      if (left.length === 0) break;
      if (Date.now() > deadline) throw new Error(`nodes still tainted ${NOT_READY} (${left.join(', ')}); see ${logFile}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    o.log('nodes untainted by the node lifecycle controller');
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await endBootWorkflows(o.temporal);
  }
}

/** The boot controller's workflows would otherwise stay open, with no worker, on their own task queue. */
async function endBootWorkflows(target: TemporalTarget): Promise<void> {
  const { Client, Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: target.address, tls: target.tls ? loadTemporalTls(target.tls) : undefined, channelArgs: TEMPORAL_CHANNEL_ARGS });
  try {
    const client = new Client({ connection, namespace: target.namespace });
    for (const id of [nodeLifecycleWorkflowId(BOOT_TASK_QUEUE), informerWorkflowId(BOOT_TASK_QUEUE, ['nodelifecycle'])]) {
      await client.workflow.getHandle(id).terminate('local up: nodes untainted').catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}
