/**
 * `temporal-kcm why <kind> <namespace>/<name>`: an object's reconcile timeline, read from the
 * histories of every controller workflow that handled it.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { OperateError } from '../operate/errors';
import { addTemporalOptions, resolveTemporalTarget, withTemporalClient } from '../operate/connection';
import { describeObject, parseObjectRef } from '../operate/objects';
import { withUsageErrors } from '../operate/usage';
import { DEFAULT_RUN_LIMIT, fetchObjectRuns } from './fetch';
import { formatTimeline } from './format';
import { buildTimeline } from './timeline';

function intArg(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

interface WhyOptions {
  uid?: string;
  controller?: string;
  json?: boolean;
  limit: number;
  color?: boolean;
}

export function addWhyCommand(program: Command): void {
  const cmd = addTemporalOptions(
    program
      .command('why')
      .description("show an object's reconcile timeline from its workflow histories: what each controller saw, decided and wrote, and what it waits for")
      .argument('<kind>', 'object kind: ReplicaSet, rs, deployment, job, ...')
      .argument('<object>', '<namespace>/<name>, or <name> for a cluster-scoped kind')
      .option('--uid <uid>', 'only the object with this UID (a name can be reused by later objects)')
      .option('--controller <name>', 'only this controller (e.g. job, ttl-after-finished)')
      .option('--json', 'print the timeline as JSON')
      .addOption(new Option('--limit <n>', 'most recent workflow runs to read').argParser(intArg(1, 1000)).default(DEFAULT_RUN_LIMIT))
      .option('--no-color', 'no ANSI colors (default: colors on a terminal unless NO_COLOR is set)'),
  );

  cmd.action(withUsageErrors(cmd, async (kind: string, object: string, opts: WhyOptions) => {
    const o = parseObjectRef(kind, object, { uid: opts.uid, controller: opts.controller });
    const target = resolveTemporalTarget(cmd);
    const runs = await withTemporalClient(target, (client) => fetchObjectRuns(client, o, { limit: opts.limit }));
    if (!runs.length) {
      throw new OperateError(
        `no workflow found for ${describeObject(o)}${o.uid ? ` with uid ${o.uid}` : ''}${o.controller ? ` in controller ${o.controller}` : ''} ` +
          `(Temporal ${target.address}, namespace ${target.namespace}); is a controller that handles ${o.kind} enabled, and has it seen the object?`,
      );
    }
    const timeline = buildTimeline(runs);
    if (opts.json) process.stdout.write(JSON.stringify(timeline, null, 2) + '\n');
    else {
      const color = opts.color !== false && process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
      process.stdout.write(formatTimeline(timeline, { color, now: Date.now() }));
    }
  }));
}
