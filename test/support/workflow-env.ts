import { Context } from '@temporalio/activity';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, InjectedSinks, Runtime, Worker } from '@temporalio/worker';
import { locateBinary } from '../../starter/local/binaries';
import { KCM_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import type { KcmSinks } from '../../workflows/runtime/sinks';
import { STATE_QUERY, type LoopState } from '../../workflows/runtime/object-loop';
import { DATA_CONVERTER } from '../../workers/payload-codec';
import { noopSinks } from '../../starter/replay/replay';
import { isProjectWorkflows, projectWorkflowBundle } from './shared-workflow-bundle';

/** Sinks that drop what workflows report: the tests read state through queries and histories. */
export const SILENT_SINKS: InjectedSinks<KcmSinks> = noopSinks;

export interface WorkflowEnv {
  env: TestWorkflowEnvironment;
  stop(): Promise<void>;
}

/**
 * The Temporal dev server of the temporal CLI binary the local stack builds (no time skipping
 * there), with this project's search attributes, and one worker on `taskQueue` running the
 * workflows of `workflowsPath` with in-process `activities`.
 */
export async function startWorkflowEnv(o: { taskQueue: string; workflowsPath: string; activities: object }): Promise<WorkflowEnv> {
  const temporalCli = locateBinary('temporal');
  if (!temporalCli) {
    // npm test builds the stack (this binary among it) before any test; test:unit leaves test/workflow out without it
    throw new Error('test/workflow needs the temporal CLI binary (TEMPORAL_BIN, the build cache, or PATH): `node bin/temporal-kcm.js local build` builds it');
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalCli.path }, searchAttributes: [...KCM_SEARCH_ATTRIBUTES] },
    client: { dataConverter: DATA_CONVERTER },
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: o.taskQueue,
    ...(isProjectWorkflows(o.workflowsPath) ? { workflowBundle: await projectWorkflowBundle() } : { workflowsPath: o.workflowsPath }),
    activities: o.activities,
    sinks: SILENT_SINKS,
    dataConverter: DATA_CONVERTER,
  });
  const running = worker.run();
  return {
    env,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await env.teardown();
    },
  };
}

/** Polls `probe` every 50 ms until it gives a value (not undefined or false). */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * One environment for a test file: started before its first test, stopped after its last. Tests
 * call the returned function for it.
 */
export function workflowEnvPerSuite(o: Parameters<typeof startWorkflowEnv>[0]): () => TestWorkflowEnvironment {
  let stack: WorkflowEnv | undefined;
  beforeAll(async () => {
    stack = await startWorkflowEnv(o);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });
  return () => {
    if (!stack) throw new Error('the workflow environment did not start');
    return stack.env;
  };
}

/** Once an object loop has made `reconciles` reconciles and holds no unread signal. */
export function settledAfter(h: WorkflowHandle, reconciles: number): Promise<LoopState> {
  return eventually(`reconcile ${reconciles}`, async () => {
    const s = await h.query<LoopState>(STATE_QUERY);
    return s.reconciles >= reconciles && s.pendingSignals === 0 ? s : undefined;
  });
}

/**
 * Activities of these names that record each call (`describe(type, request)`, by workflow ID) and
 * never answer: a test reads what a run asks first. A terminated run's activities hear no
 * cancellation, so the worker that runs them needs a short shutdownGraceTime, whose cancel ends them.
 */
export function recordingStubs(types: readonly string[], calls: Map<string, string[]>, describe: (type: string, request: unknown) => string = (t) => t): Record<string, (req: unknown) => Promise<never>> {
  return Object.fromEntries(types.map((type) => [type, async (req: unknown): Promise<never> => {
    const id = Context.current().info.workflowExecution?.workflowId ?? '';
    calls.set(id, [...(calls.get(id) ?? []), describe(type, req)]);
    await Context.current().cancelled;
    throw new Error('cancelled');
  }]));
}
