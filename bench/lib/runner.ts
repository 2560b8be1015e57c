import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Sample, Scenario, ScenarioContext, Subject, Mode } from '../scenarios/types';
import { ManagedProcess, Setting, startManager } from './managers';
import { Window } from './measure';
import { BenchStack, cleanNamespace, freshNamespace } from './stack';
import { terminateQueue } from './temporal';
import { Log, sleep } from './util';

export interface RunRecord {
  scenario: number;
  slug: string;
  setting: Setting['name'];
  subject: Subject;
  /** the scale curve's size, when run for it */
  size?: number;
  rep: number;
  startedAt: string;
  sample?: Sample;
  error?: string;
}

/**
 * One scenario, one subject, one repetition, in a namespace and (ours) a task queue of its own;
 * afterwards the namespace is emptied while the managers still run (so our workflows see their
 * objects go and end), then every process the scenario started is stopped and what is left open
 * on its task queue is terminated.
 */
export interface RunExtras {
  cpuProfileDir?: string;
  /** the scale curve's parameters (ScenarioContext.size, replicaRounds) */
  size?: number;
  replicaRounds?: number[];
  /** more flags for every manager of ours this run starts */
  oursFlags?: string[];
  /** environment variables for every manager of ours this run starts */
  oursEnv?: Record<string, string>;
}

export async function runOnce(
  stack: BenchStack, temporal: Client, scenario: Scenario, subject: Subject, setting: Setting, mode: Mode, rep: number, log: Log,
  extras: RunExtras = {},
): Promise<RunRecord> {
  const { cpuProfileDir, size, replicaRounds, oursFlags, oursEnv } = extras;
  const startedAt = new Date().toISOString();
  const ns = await freshNamespace(stack.rest, `${scenario.slug}-${subject === 'upstream' ? 'up' : subject}`);
  const taskQueue = `bench-${scenario.slug}-${Date.now().toString(36)}`;
  const started: ManagedProcess[] = [];
  const ctx: ScenarioContext = {
    stack, subject, setting, mode, rep, ns, temporal, taskQueue, size, replicaRounds,
    log: (l) => log(`  [${scenario.slug}${size ? ` ${size}` : ''} ${subject} ${setting.name} #${rep}] ${l}`),
    startManager: async (o, index = 0) => {
      if (subject === 'client') throw new Error('the plain-client scenario starts no manager');
      const p = await startManager(stack, {
        impl: subject, controllers: o.controllers, setting, leaderElect: o.leaderElect, taskQueue: o.taskQueue ?? taskQueue, tag: `${scenario.slug}-${rep}`,
        cpuProfileDir: cpuProfileDir && path.join(cpuProfileDir, `${scenario.slug}-${setting.name}`),
        ...(o.cpuProfileName ? { cpuProfileName: o.cpuProfileName } : {}),
        ...(subject === 'ours' && oursFlags ? { extraFlags: oursFlags } : {}),
        ...(subject === 'ours' && oursEnv ? { env: oursEnv } : {}),
      }, index);
      started.push(p);
      return p;
    },
    openWindow: (managers) => Window.open({ stack, managers, temporal: subject === 'ours' ? { client: temporal, taskQueue } : undefined }),
  };
  const record: RunRecord = { scenario: scenario.id, slug: scenario.slug, setting: setting.name, subject, rep, startedAt, ...(size ? { size } : {}) };
  try {
    record.sample = await scenario.run(ctx);
    log(`  ${scenario.slug} ${subject} ${setting.name} #${rep}: ${Object.entries(record.sample).map(([k, v]) => `${k}=${round(v)}`).join(' ')}`);
  } catch (e) {
    record.error = (e as Error).message;
    log(`  ${scenario.slug} ${subject} ${setting.name} #${rep} FAILED: ${record.error}`);
  } finally {
    await cleanNamespace(stack.rest, ns).catch((e) => log(`  cleanup of ${ns}: ${String(e)}`));
    if (subject === 'ours' && started.some((p) => p.alive())) await sleep(2000);
    await Promise.all(started.map((p) => p.kill('SIGTERM')));
    if (subject === 'ours') await terminateQueue(temporal, taskQueue).catch((e) => log(`  terminating ${taskQueue}: ${String(e)}`));
  }
  return record;
}

const round = (v: number) => (Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 100) / 100);
