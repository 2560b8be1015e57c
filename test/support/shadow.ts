import { readState, stackTemporal } from '../../starter/local/stack';
import { temporalTlsArgs } from '../../starter/local/temporal-topology';
import { formatShadowReport } from '../../starter/shadow/report';
import { SHADOW_TASK_QUEUE_SUFFIX } from '../../workflows/runtime/workflow-ids';
import { shadowLedgerWorkflowId } from '../../workflows/shadow/ledger';
import type { ShadowReport } from '../../workflows/shadow/types';
import { runCli } from './cli';
import { eventually, uniqueName } from './cluster';
import { type ManagerProcess, startManagerProcess } from './manager';
import { TEST_DATA_DIR } from './stack';

/** A --shadow deployment of ours on the test stack: its replicas, its ledger, its report. */
export interface ShadowDeployment {
  /** the --task-queue it was started with */
  queue: string;
  ledgerId: string;
  replicas: ManagerProcess[];
  /** the replicas not killed */
  alive(): ManagerProcess[];
  /** `temporal-kcm shadow report --json`, as a user runs it */
  report(): Promise<ShadowReport>;
  /** the report once nothing is left to settle (the ledger's horizon after the last write) */
  settledReport(): Promise<ShadowReport>;
  stop(): Promise<void>;
}

/**
 * Starts `replicas` shadow replicas of `controllers` on a fresh task queue. The window is short
 * (1 s, so entries settle 6 s after the last write) to keep the suite fast.
 */
export async function startShadow(name: string, controllers: string, o: { replicas?: number; args?: readonly string[] } = {}): Promise<ShadowDeployment> {
  const queue = uniqueName(name);
  const args = ['--shadow', '--shadow-window', '1s', '--kube-api-qps', '200', '--kube-api-burst', '400', ...(o.args ?? [])];
  const replicas = await Promise.all(Array.from({ length: o.replicas ?? 1 }, () => startManagerProcess(queue, args, { controllers })));
  const report = async () => {
    const t = stackTemporal(readState(TEST_DATA_DIR)!);
    const r = await runCli(['shadow', 'report', '--json', '--task-queue', queue, '--temporal-address', t.address, ...temporalTlsArgs(t.tls)]);
    if (r.code !== 0) throw new Error(`shadow report exited ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as ShadowReport;
  };
  const alive = () => replicas.filter((m) => m.child.exitCode === null && m.child.signalCode === null);
  return {
    queue,
    ledgerId: shadowLedgerWorkflowId(queue + SHADOW_TASK_QUEUE_SUFFIX),
    replicas,
    alive,
    report,
    async settledReport() {
      let last: ShadowReport | undefined;
      await eventually('shadow ledger settled', async () => {
        last = await report();
        return last.pending.ours + last.pending.theirs === 0;
      }, 60_000, 1000);
      // the report a user would read, in the test's output
      process.stderr.write(`${formatShadowReport(queue, last!)}\n`);
      return last!;
    },
    async stop() {
      for (const m of alive()) await m.kill();
    },
  };
}

/** Everything the ledger compared, over every controller. */
export function comparedIn(r: ShadowReport | undefined): number {
  return (r?.rows ?? []).reduce((n, x) => n + x.compared, 0);
}

/** The report's row of a controller. */
export function rowOf(r: ShadowReport, controller: string) {
  return r.rows.find((x) => x.controller === controller);
}
