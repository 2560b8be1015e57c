import { Command, InvalidArgumentError, Option } from 'commander';
import { WorkflowNotFoundError } from '@temporalio/client';
import { parseGoDuration } from '../../workflows/common/duration';
import { SHADOW_TASK_QUEUE_SUFFIX } from '../../workflows/runtime/workflow-ids';
import { shadowLedgerWorkflowId, shadowReportQuery } from '../../workflows/shadow/ledger';
import { SHADOW_OUTCOMES, type FieldDifference, type ShadowFinding, type ShadowReport } from '../../workflows/shadow/types';
import { addTemporalOptions, resolveTemporalTarget, withTemporalClient } from '../operate/connection';
import { OperateError } from '../operate/errors';
import { withUsageErrors } from '../operate/usage';
import { RUN_DEFAULTS } from '../run-options';

const print = (line: string) => process.stdout.write(line + '\n');

const percent = (x: number | undefined) => (x === undefined ? '-' : `${(100 * x).toFixed(1)}%`);
const seconds = (ms: number) => `${ms / 1000}s`;
const shown = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));

function where(f: ShadowFinding): string {
  const res = f.subresource ? `${f.resource}/${f.subresource}` : f.resource;
  const obj = f.kind === 'event' ? f.target : f.name ?? f.target;
  return `${f.kind} ${res} ${f.namespace ? `${f.namespace}/` : ''}${obj}`;
}

function differenceLine(d: FieldDifference): string {
  return `${d.path}: ours ${shown(d.ours)}, theirs ${shown(d.theirs)}`;
}

/** The report as a table of counts per controller, then each shape of finding with one example. */
export function formatShadowReport(ledger: string, r: ShadowReport): string {
  const lines = [
    `shadow ledger ${ledger}`,
    `from ${r.from} to ${r.to}; window ${seconds(r.settings.windowMs)}, horizon ${seconds(r.settings.horizonMs)}; not yet settled: ${r.pending.ours} ours, ${r.pending.theirs} theirs`,
    `not compared: ${r.unattributed} writes of theirs by controllers this shadow does not run; ${r.afterRefusal} Warning Events of ours that only followed a dry run refused as stale; ${r.repeats} proposals of ours repeating their previous one (a shadow's write never lands)`,
    '',
  ];
  const head = ['CONTROLLER', ...SHADOW_OUTCOMES.map((o) => o.toUpperCase()), 'AGREEMENT'];
  const rows = r.rows.map((x) => [x.controller, ...SHADOW_OUTCOMES.map((o) => String(x.counts[o])), percent(x.agreement)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  lines.push(line(head));
  for (const row of rows) lines.push(line(row));
  if (!rows.length) lines.push('(nothing compared yet)');
  if (r.findings.length) {
    lines.push('', `differences, newest first${r.findingsTruncated ? ' (older ones in the period were not kept)' : ''}:`);
    for (const { count, example: f } of r.findings) {
      lines.push(`  ${count}x ${f.outcome}  ${f.controller}  ${where(f)}  at ${new Date(f.at).toISOString()}`);
      for (const d of f.differences ?? []) lines.push(`      ${differenceLine(d)}`);
      if (f.ours?.reason || f.ours?.workflowId) lines.push(`      ours: ${[f.ours.reason && `reason "${f.ours.reason}"`, f.ours.workflowId && `workflow ${f.ours.workflowId}`].filter(Boolean).join(', ')}`);
    }
  }
  return lines.join('\n');
}

function durationArg(value: string): number {
  try {
    const ms = parseGoDuration(value);
    if (ms <= 0) throw new Error('not positive');
    return ms;
  } catch {
    throw new InvalidArgumentError(`must be a positive duration such as 30m, 2h or 168h, got "${value}"`);
  }
}

/** `shadow report`: what a --shadow deployment's ledger has compared, as a table or JSON. */
export function addShadowCommands(program: Command): void {
  const shadow = program.command('shadow').description('a --shadow deployment: what it would have done, set beside what the cluster\'s own kube-controller-manager did');
  const report = addTemporalOptions(
    shadow
      .command('report')
      .description('agreement per controller, and every kind of difference with its fields, from the shadow ledger')
      .addOption(new Option('--since <duration>', 'only the last this long (e.g. 30m, 24h); default: everything the ledger kept (8 days)').argParser(durationArg))
      .option('--json', 'print JSON')
      .addOption(new Option('--task-queue <name>', 'the --task-queue the shadow replicas were started with (without the shadow suffix)').default(RUN_DEFAULTS.taskQueue).env('TEMPORAL_KCM_TASK_QUEUE')),
  );
  report.action(withUsageErrors(report, async (opts: { since?: number; json?: boolean; taskQueue: string }) => {
    const queue = opts.taskQueue.endsWith(SHADOW_TASK_QUEUE_SUFFIX) ? opts.taskQueue : opts.taskQueue + SHADOW_TASK_QUEUE_SUFFIX;
    const id = shadowLedgerWorkflowId(queue);
    await withTemporalClient(resolveTemporalTarget(report), async (client) => {
      let r: ShadowReport;
      try {
        r = await client.workflow.getHandle(id).query(shadowReportQuery, opts.since === undefined ? {} : { sinceMs: Date.now() - opts.since });
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw new OperateError(`no shadow ledger ${id}: has a \`temporal-kcm run --shadow --task-queue ${opts.taskQueue}\` replica run and seen a write yet?`);
        throw new OperateError(`${id}: the report query got no answer (${(e as Error).message}); is a \`temporal-kcm run --shadow\` replica up on its task queue?`);
      }
      print(opts.json ? JSON.stringify({ ledger: id, ...r }, null, 2) : formatShadowReport(id, r));
    });
  }));
}
