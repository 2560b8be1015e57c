import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DefaultLogger, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { TemporalTarget, addTemporalOptions, resolveTemporalTarget, withTemporalClient } from '../operate/connection';
import { USAGE_EXIT_CODE } from '../operate/usage';
import { ReplayReport, coreMessage, defaultWorkflowsPath, fetchHistory, loadHistoryFile, replayHistory, workflowIdOf } from './replay';

export interface ReplayCommandOptions {
  runId?: string;
  historyFile?: string;
  workflows?: string;
  json?: boolean;
  verbose?: boolean;
}

const print = (line: string) => process.stdout.write(line + '\n');

/**
 * `temporal-kcm replay`: replays a workflow's history against the code of this build, so a change
 * can be checked against real runs before it is deployed (guarantee 2). Exit 0 when it fits,
 * 1 when it diverges, 2 on usage errors.
 */
export function addReplayCommand(program: Command): void {
  const cmd = addTemporalOptions(program
    .command('replay')
    .description('replay a workflow history against this build\'s workflow code and show where it diverges')
    .argument('[workflow-id]', 'fetch the history of this workflow from Temporal (e.g. replicaset/default/web)')
    .option('--run-id <id>', 'which run of <workflow-id> (default: the latest)')
    .option('--history-file <file>', 'replay this JSON history instead (`temporal workflow show -o json`, or the Web UI\'s Download)'))
    .addOption(new Option('--workflows <path>', 'module exporting the workflow functions to replay against [advanced]').default(undefined, "this build's workflows"))
    .option('--json', 'print the report as JSON')
    .option('-v, --verbose', 'show the bundler\'s and the replay worker\'s logs');

  cmd.action(async (workflowId: string | undefined, opts: ReplayCommandOptions) => {
    const usage = (message: string): never => cmd.error(`error: ${message}`, { exitCode: USAGE_EXIT_CODE, code: 'temporal-kcm.invalidArgument' });
    if ((workflowId === undefined) === (opts.historyFile === undefined)) usage('give exactly one of <workflow-id> and --history-file');
    if (opts.runId !== undefined && workflowId === undefined) usage('--run-id needs <workflow-id>');
    let target: TemporalTarget | undefined;
    try {
      target = resolveTemporalTarget(cmd);
    } catch (e) {
      if (e instanceof InvalidArgumentError) usage(e.message);
      throw e;
    }
    if (opts.workflows !== undefined && !fs.existsSync(opts.workflows)) usage(`--workflows: ${opts.workflows} does not exist`);

    quietRuntime(opts.verbose === true);
    const history = opts.historyFile !== undefined ? loadHistoryFile(opts.historyFile) : await withTemporalClient(target as TemporalTarget, (client) => fetchHistory(client, workflowId as string, opts.runId));
    // without one in the file, any stable ID will do: our workflows only use it in logs and metrics
    const id = workflowId ?? workflowIdOf(history) ?? `replay/${path.basename(opts.historyFile ?? 'history')}`;
    const report = await replayHistory({
      history,
      workflowId: id,
      workflowsPath: opts.workflows ?? defaultWorkflowsPath(),
      ...(opts.verbose ? { logger: new DefaultLogger('INFO') } : {}),
    });
    for (const line of formatReport(report, id, opts.json === true)) print(line);
    if (!report.ok) process.exitCode = 1;
  });
}

/**
 * The replay worker logs its lifecycle at INFO and core logs each failed task at WARN; for a
 * command whose output is the verdict, only errors belong on stderr.
 */
function quietRuntime(verbose: boolean): void {
  if (verbose) return;
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
    });
  } catch {
    // already installed by someone in this process: keep theirs
  }
}

/** The lines the command prints for a report. */
export function formatReport(report: ReplayReport, workflowId: string, json: boolean): string[] {
  if (json) return [JSON.stringify({ workflowId, ...report }, null, 2)];
  if (report.ok) return [`replay OK: ${report.workflowType} ${workflowId}, ${report.events} events`];
  const lines = [`replay FAILED: ${report.workflowType} ${workflowId}, ${report.events} events`];
  if (report.divergedAt) {
    const d = report.divergedAt;
    lines.push(`diverged at event ${d.eventId} (${d.eventType}): ${d.detail}`);
  }
  lines.push(`error: ${coreMessage(report.error)}`);
  if (report.taskEvents?.length) {
    lines.push('first failing workflow task, as the history recorded it:');
    for (const e of report.taskEvents) lines.push(`  ${String(e.eventId).padStart(6)}  ${e.eventType.padEnd(36)} ${e.summary}`);
  }
  return lines;
}
