import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { LoopState, PAUSE_SIGNAL, PauseRequest, RESUME_SIGNAL, STATE_QUERY } from '../../workflows/runtime/object-loop';
import { addTemporalOptions, resolveTemporalTarget, withTemporalClient } from './connection';
import { ObjectRef, WorkflowRef, describeObject, listObjectWorkflows, parseObjectRef } from './objects';
import { withUsageErrors } from './usage';
import { OperateError } from './errors';

const print = (line: string) => process.stdout.write(line + '\n');


interface ObjectCommandOptions {
  uid?: string;
  controller?: string;
  json?: boolean;
  reason?: string;
}

function objectCommand(program: Command, name: string, description: string): Command {
  return addTemporalOptions(
    program
      .command(name)
      .description(description)
      .argument('<kind>', 'the object kind: ReplicaSet, rs, deployment, job, cronjob, svc, ns, ...')
      .argument('<object>', '<namespace>/<name>, or <name> for a cluster-scoped kind')
      .option('--uid <uid>', 'only the workflows of the object with this UID')
      .option('--controller <name>', 'only this controller\'s workflow (short name: replicaset, job, endpoint, ...)'),
  );
}

async function running(client: Client, o: ObjectRef): Promise<WorkflowRef[]> {
  const found = await listObjectWorkflows(client, o, { running: true });
  if (!found.length) throw new OperateError(`no running workflow reconciles ${describeObject(o)}${o.controller ? ` for controller ${o.controller}` : ''}`);
  return found;
}

function formatState(w: WorkflowRef, s: LoopState): string {
  const lines = [`${s.controller}  ${w.workflowId}  run ${s.runId}`];
  lines.push(`  ${s.paused ? `PAUSED since ${s.paused.since}${s.paused.reason ? ` (${s.paused.reason})` : ''}` : 'reconciling'}; ${s.reconciles} reconciles this run, ${s.pendingSignals} events pending, history ${s.historyLength} events${s.historyBytes ? ` (${Math.ceil(s.historyBytes / 1024)} KiB)` : ''}`);
  if (s.lastReconcile) lines.push(`  last reconcile ${s.lastReconcile.at}: ${s.lastReconcile.outcome} in ${s.lastReconcile.durationMs} ms`);
  if (s.lastError) lines.push(`  ! failing (${s.consecutiveFailures} in a row) since ${s.lastError.at}: ${s.lastError.message}`);
  if (s.nextWakeAt) lines.push(`  next reconcile without events: ${s.nextWakeAt}`);
  for (const [k, v] of Object.entries(s.view ?? {})) if (v !== undefined) lines.push(`  ${k}: ${Array.isArray(v) ? v.join(', ') || '-' : String(v)}`);
  return lines.join('\n');
}

/** `state`, `pause` and `resume`: the operator's handle on one object's reconciliation. */
export function addOperateCommands(program: Command): void {
  const state = objectCommand(program, 'state', 'what the workflows reconciling an object currently believe (the `state` query)')
    .option('--json', 'print JSON');
  state.action(withUsageErrors(state, async (kind: string, object: string, opts: ObjectCommandOptions) => {
    const o = parseObjectRef(kind, object, { uid: opts.uid, controller: opts.controller });
    await withTemporalClient(resolveTemporalTarget(state), async (client) => {
      const out: Array<{ workflow: WorkflowRef; state: LoopState }> = [];
      for (const w of await running(client, o)) {
        let st: LoopState;
        try {
          st = await client.workflow.getHandle(w.workflowId, w.runId).query<LoopState>(STATE_QUERY);
        } catch (e) {
          // a query is answered by a worker: none is polling when no replica of this deployment runs
          throw new OperateError(`${w.workflowId}: the state query got no answer (${(e as Error).message}); is a \`temporal-kcm run\` replica up on its task queue?`);
        }
        out.push({ workflow: w, state: st });
      }
      if (opts.json) print(JSON.stringify(out, null, 2));
      else print(out.map((x) => formatState(x.workflow, x.state)).join('\n\n'));
    });
  }));

  const pause = objectCommand(program, 'pause', 'stop reconciling an object (its events are kept and applied on resume)')
    .option('--reason <text>', 'why, shown by `state` and in the Web UI memo');
  pause.action(withUsageErrors(pause, async (kind: string, object: string, opts: ObjectCommandOptions) => {
    const o = parseObjectRef(kind, object, { uid: opts.uid, controller: opts.controller });
    const req: PauseRequest = opts.reason ? { reason: opts.reason } : {};
    await withTemporalClient(resolveTemporalTarget(pause), async (client) => {
      for (const w of await running(client, o)) {
        await client.workflow.getHandle(w.workflowId).signal(PAUSE_SIGNAL, req);
        print(`paused ${w.workflowId}`);
      }
    });
  }));

  const resume = objectCommand(program, 'resume', 'reconcile a paused object again, catching up with every change made meanwhile');
  resume.action(withUsageErrors(resume, async (kind: string, object: string, opts: ObjectCommandOptions) => {
    const o = parseObjectRef(kind, object, { uid: opts.uid, controller: opts.controller });
    await withTemporalClient(resolveTemporalTarget(resume), async (client) => {
      for (const w of await running(client, o)) {
        await client.workflow.getHandle(w.workflowId).signal(RESUME_SIGNAL);
        print(`resumed ${w.workflowId}`);
      }
    });
  }));
}
