import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as v8 from 'node:v8';
import { Worker as NodeWorker } from 'node:worker_threads';
import { CompiledWorkerOptions, Worker, WorkerOptions } from '@temporalio/worker';
import { ThreadedVMWorkflowCreator, WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';

/*
 * One workflow thread for every worker of this process.
 *
 * Each controller has its own task queue, so its own Worker, and the SDK gives every Worker a
 * worker thread of its own with the whole workflow bundle loaded into it: measured at ~38 MiB a
 * worker (1 worker 173 MiB RSS, 18 workers 851 MiB). The workflows of all controllers ran in one
 * thread before per-controller queues, and nothing in them needs more, so the workers share one:
 * the SDK builds a Worker's workflow runner in the static `createWorkflowCreator`, and this
 * subclass hands every worker the same runner, destroyed when the last worker is done with it.
 * The runner checks activity names against what was registered, so it is told every name that
 * any of the workers registers. Should an SDK version drop that hook, each worker gets its own
 * thread again (correct, only bigger), and the manager logs it.
 *
 * The thread is started here rather than by the SDK so that one SDK feature can be left off: for
 * Temporal's stack-trace query (the Web UI's "Stack Trace" tab) the SDK installs a V8 promise hook
 * that captures and formats a source-mapped stack trace for every promise a workflow creates.
 * Profiled in the restart benchmark that was about a quarter of the workflow thread's CPU; the
 * `state` query and `why` answer what that tab would. `--workflow-stack-traces` turns it back on.
 */

/** The hook's own parameter and result types, as the SDK declares them (not all are exported by name). */
type CreateCreator = (typeof Worker)['createWorkflowCreator'];
type Creator = Awaited<ReturnType<CreateCreator>>;
type Bundle = Parameters<CreateCreator>[0];
type SdkLogger = Parameters<CreateCreator>[2];

const hook = (Worker as unknown as { createWorkflowCreator?: CreateCreator }).createWorkflowCreator;

export const sharingSupported = typeof hook === 'function';

let shared: { creator: Promise<Creator>; users: number } | undefined;
let activityNames: ReadonlySet<string> = new Set();
let stackTraces = false;
/** the workflow threads this module started, for heap snapshots */
const threads = new Set<NodeWorker>();

/**
 * The SDK's own workflow thread, with the promise hook of its stack-trace collection never set (the
 * SDK then answers the stack-trace query with "not enabled"). Only that hook: `v8.promiseHooks`
 * itself must stay, since AsyncLocalStorage, which cancellation scopes run on, needs it.
 */
function threadSource(): string {
  const sdk = (m: string) => JSON.stringify(require.resolve(`@temporalio/worker/lib/workflow/${m}`));
  return `
    require(${sdk('vm-shared')}).globalHandlers.setPromiseHook = () => undefined;
    require(${sdk('workflow-worker-thread')});
  `;
}

/**
 * The same for workflows run in this thread: replay workers run them here (the SDK's debug mode),
 * so a benchmark of replays pays what a replica's workflow thread pays, not the hook's cost too.
 */
export function skipStackTraceHookInThisThread(): void {
  (require('@temporalio/worker/lib/workflow/vm-shared') as { globalHandlers: { setPromiseHook: () => void } }).globalHandlers.setPromiseHook = () => undefined;
}

/** The SDK's threaded workflow runner (as its own `ThreadedVMWorkflowCreator.create` makes it), on threads of threadSource(). */
async function startThreads(bundle: Bundle, compiledOptions: CompiledWorkerOptions, logger: SdkLogger, names: ReadonlySet<string>): Promise<Creator> {
  const clients = Array.from({ length: Math.max(1, compiledOptions.workflowThreadPoolSize) }, () => {
    const thread = new NodeWorker(threadSource(), { eval: true });
    threads.add(thread);
    thread.once('exit', () => threads.delete(thread));
    return new WorkerThreadClient(thread, logger, compiledOptions.patchActivationCallback);
  });
  await Promise.all(clients.map((client) => client.send({
    type: 'init',
    workflowBundle: bundle,
    isolateExecutionTimeoutMs: compiledOptions.isolateExecutionTimeoutMs,
    reuseV8Context: compiledOptions.reuseV8Context ?? true,
    registeredActivityNames: new Set(names),
    hasPatchActivationCallback: compiledOptions.patchActivationCallback !== undefined,
  })));
  return new ThreadedVMWorkflowCreator(clients);
}

type ParsedBundle = ReturnType<(typeof Worker)['getOrCreateBundle']>;
/** the bundle as the SDK parsed it for this process's first worker, by what it was parsed from */
let parsed: { from: string; bundle: ParsedBundle } | undefined;

class SharedThreadWorker extends Worker {
  /*
   * The SDK reads and parses the workflow bundle in every Worker.create: the 2.8 MiB file read, its
   * inline source map cut out and decoded, the script compiled and run once in a scratch context
   * (for debuggers). A controller's worker is one of up to forty in a manager, and they share one
   * workflow thread that loads the bundle once; they share its parse too (a start's CPU profile
   * put about 0.1 s in it per worker).
   */
  protected static override getOrCreateBundle(compiledOptions: CompiledWorkerOptions, logger: SdkLogger): ParsedBundle {
    const option = compiledOptions.workflowBundle;
    const from = option && ('codePath' in option ? option.codePath : 'code' in option ? option.code : undefined);
    if (typeof from !== 'string') return super.getOrCreateBundle(compiledOptions, logger);
    if (parsed?.from !== from) {
      const mine = { from, bundle: super.getOrCreateBundle(compiledOptions, logger) };
      parsed = mine;
      // a failed read is tried again by the next worker
      mine.bundle.catch(() => { if (parsed === mine) parsed = undefined; });
    }
    return parsed.bundle;
  }

  protected static override async createWorkflowCreator(bundle: Bundle, compiledOptions: CompiledWorkerOptions, logger: SdkLogger): Promise<Creator> {
    if (!shared) {
      // only the names matter to the runner; the functions run on each worker's own activity side
      const all = new Map(compiledOptions.activities);
      const sample = [...compiledOptions.activities.values()][0];
      for (const n of activityNames) if (!all.has(n) && sample) all.set(n, sample);
      const creator = stackTraces || compiledOptions.debugMode
        ? hook!.call(Worker, bundle, { ...compiledOptions, activities: all }, logger)
        : startThreads(bundle, compiledOptions, logger, new Set(all.keys()));
      shared = { creator, users: 0 };
    }
    const mine = shared;
    mine.users++;
    const creator = await mine.creator;
    return {
      createWorkflow: (options) => creator.createWorkflow(options),
      // the last worker to stop ends the thread
      destroy: async () => {
        if (--mine.users > 0) return;
        if (shared === mine) shared = undefined;
        await creator.destroy();
      },
    };
  }
}

/**
 * Creates a worker whose workflows run on the process's shared workflow thread. `allActivityNames`
 * is every activity name any worker of this process registers (the first worker creates the thread);
 * `workflowStackTraces` keeps the SDK's stack-trace collection (see above).
 */
export function createSharedThreadWorker(options: WorkerOptions, allActivityNames: ReadonlySet<string>, workflowStackTraces = false): Promise<Worker> {
  activityNames = allActivityNames;
  stackTraces = workflowStackTraces;
  return sharingSupported ? SharedThreadWorker.create(options) : Worker.create(options);
}

/**
 * Writes a V8 heap snapshot of the main thread and of each workflow thread started here into
 * `dir` (`<stamp>-main.heapsnapshot`, `<stamp>-workflows-<i>.heapsnapshot`) and returns their
 * paths. The workflow threads hold every cached workflow run, which is where a replica's memory
 * grows with its objects; Node's own --heapsnapshot-signal sees only the main thread.
 */
export async function writeHeapSnapshots(dir: string): Promise<string[]> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const written = [v8.writeHeapSnapshot(path.join(dir, `${stamp}-main.heapsnapshot`))];
  let i = 0;
  for (const thread of threads) {
    const file = path.join(dir, `${stamp}-workflows-${i++}.heapsnapshot`);
    await pipeline(await thread.getHeapSnapshot(), fs.createWriteStream(file));
    written.push(file);
  }
  return written;
}
