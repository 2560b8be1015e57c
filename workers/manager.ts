import * as fs from 'node:fs';
import * as os from 'node:os';
import { ResolvedKubeconfig } from '../activities/kube/kubeconfig';
import { Context } from '@temporalio/activity';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { DefaultLogger, InjectedSinks, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createInformerActivities } from '../activities/informers';
import { LocalReads } from '../activities/informers/local-reads';
import { RecordEvent, createEventRecorder } from '../activities/kube/events';
import { controllerClients } from '../activities/kube/service-account-credentials';
import { createFailureReporter, recordThrown } from '../activities/kube/failure-reports';
import { asCodeFailure } from '../activities/kube/failures';
import { kindOfPath } from '../activities/kube/resources';
import { listOnly } from '../activities/kube/manager-reads';
import { ContactClock, currentAttemptLease } from '../activities/kube/fence';
import { runningActivity } from '../activities/kube/running-activity';
import { type Proposal, shadowed } from '../activities/kube/shadow';
import { ShadowFeed } from '../activities/shadow/feed';
import { SA_KIND } from '../workflows/search-attributes';
import type { ShadowEntry } from '../workflows/shadow/types';
import { KubeRest, clientOfUserAgent, userAgentFor } from '../activities/kube/rest';
import { TokenBucket } from '../activities/kube/token-bucket';
import { WORKFLOWS_ENTRY, freshPrebuiltBundle } from './workflow-bundle';
import { configureInformersSignal, earlierInformerWorkflowIds, informerWorkflow, informerWorkflowId, InformerWorkflowInput } from '../workflows/informer';
import { controllerTaskQueue, informerTaskQueue } from '../workflows/runtime/task-queues';
import { shadowHorizonMs, shadowWorkflowIdPrefix } from '../workflows/runtime/workflow-ids';
import type { KcmSinks } from '../workflows/runtime/sinks';
import { LOCAL_ECHO_KEY, type LocalEcho } from '../workflows/runtime/local-io';
import { refusedByAuthorizer } from '../workflows/runtime/api-rejections';
import type { RunOptions } from '../starter/run-options';
import { loadTemporalTls } from '../starter/run-options';
import { ActivityMap, ControllerDeps, ControllerDescriptor, concurrencyOf } from './descriptor';
import { gatesOff } from './feature-gates';
import { CONTROLLERS, descriptorOf, implementedOf } from './registry';
import { Metrics, resourceOfPath } from './metrics';
import { TemporalContact, connectTemporal } from './temporal-connect';
import { cachedRunsFor } from './workflow-cache';
import { createSharedThreadWorker, sharingSupported } from './shared-workflow-threads';
import { DATA_CONVERTER } from './payload-codec';

function runningLocally(): boolean {
  try {
    return Context.current().info.isLocal;
  } catch {
    return false; // not inside an activity (unit tests call activities directly)
  }
}

export interface Manager {
  /** resolves when every worker has stopped */
  running: Promise<void>;
  /** workers running, and Temporal answering lately (/readyz) */
  readiness(): { ready: boolean; reason?: string };
  shutdown(): Promise<void>;
}


/** What the fence around each controller activity needs: see activities/kube/fence.ts. */
export interface Fencing {
  clock: ContactClock;
  /** this replica, as request User-Agents name it */
  replica: string;
  logger: Logger;
}

/**
 * Count failures per activity name, so `kcm_activity_errors_total` shows what keeps failing; a
 * local run hands back its input with its result, as its marker records no input
 * (workflows/runtime/local-io.ts says why); and with `fencing` (a controller's activities), each
 * attempt's writes go out only while it holds its lease, and a throw of the activity's own code
 * fails it for good.
 */
function instrument<T extends Record<string, (...args: never[]) => Promise<unknown>>>(acts: T, metrics: Metrics, fencing?: Fencing): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(acts)) {
    out[name] = async (...args: never[]) => {
      const lease = fencing ? currentAttemptLease(fencing.clock) : undefined;
      // a task the server just handed over is an answer from Temporal
      if (lease && !lease.info.isLocal) fencing!.clock.heard(lease.startedAt);
      if (lease) fencing!.clock.attemptStarted();
      try {
        // the input's reason goes with any write the activity makes under --shadow, and the lease
        // fences every write it makes
        const attempt = lease ? { lease, replica: fencing!.replica } : undefined;
        const result = await runningActivity.run({ input: args[0], ...(attempt ? { attempt } : {}) }, () => fn(...args));
        // a refused write the activity's code took for a passing failure: its result misses it
        if (lease?.refusedWrites) throw lease.failure();
        return runningLocally() ? ({ [LOCAL_ECHO_KEY]: true, input: args[0], result } satisfies LocalEcho) : result;
      } catch (e) {
        const fenced = lease?.refusedWrites ? lease.failure() : undefined;
        if (fenced) {
          metrics.fencedAttemptsTotal.inc({ activity: name });
          fencing!.logger.warn({ activity: name, workflowId: lease!.info.workflowId, attempt: lease!.info.attempt, why: lease!.lost },
            'activity attempt lost its lease: its writes were refused');
        }
        // a controller's activity whose own code threw fails for good at once (see asCodeFailure);
        // the informer's activities (no fencing) are retried as ever, for they must run again
        const codeFailure = fencing && !fenced ? asCodeFailure(e) : undefined;
        if (codeFailure) fencing!.logger.error({ activity: name, workflowId: lease?.info.workflowId, err: e }, 'an activity\'s own code threw: it fails without retries, and its object loop backs off');
        const failure = fenced ?? codeFailure ?? e;
        const reason = (failure as { type?: string }).type ?? (failure as Error).name ?? 'Error';
        metrics.activityErrorsTotal.inc({ activity: name, reason });
        throw failure;
      } finally {
        if (lease) fencing!.clock.attemptEnded();
      }
    };
  }
  return out as T;
}

/**
 * One replica of the controller manager: a Temporal worker on the shared task queue (any replica
 * runs any reconcile), plus a start of the fixed-ID informer workflow, which is a no-op when
 * another replica already started it.
 */
/**
 * The CA bundle to publish: --root-ca-file, else the kubeconfig's own CA for the API server, as
 * upstream falls back to its client configuration's CA data.
 */
/** How many runs a worker keeps cached, read when /metrics is scraped. */
function cachedRunsOf(worker: Worker): () => number {
  return () => worker.getStatus().numCachedWorkflows;
}

export function rootCaOf(opts: RunOptions, kc: Pick<ResolvedKubeconfig, 'clusterCa'>): string | undefined {
  if (opts.rootCaFile) return fs.readFileSync(opts.rootCaFile, 'utf8');
  return kc.clusterCa;
}

/** Controllers that cannot run as configured are left out with a reason, as upstream skips them at start. */
function runnable(opts: RunOptions, rootCa: string | undefined, logger: Logger): ControllerDescriptor[] {
  return implementedOf(opts.enabledControllers).filter((d) => {
    // disabled by a feature gate: said once at start (starter/run.ts), as upstream logs it
    if (gatesOff(opts.controllerFlags, d.requiredFeatureGates).length) return false;
    const problem = d.precondition?.({ flags: opts.controllerFlags, rootCa, rootCaFile: opts.rootCaFile });
    if (problem?.fatal) throw new Error(problem.message);
    if (problem) logger.warn({ controller: d.name }, `controller not started: ${problem.message}`);
    return !problem;
  });
}

/** What `run` hands the start: a way to stop a replica still waiting for Temporal, and to hear why it waits. */
export interface StartupHooks {
  signal?: AbortSignal;
  waiting?(why: string | undefined): void;
}

export async function startManager(opts: RunOptions, logger: Logger, metrics: Metrics, startup: StartupHooks = {}): Promise<Manager> {
  const kc = await ResolvedKubeconfig.load(opts.kubeconfig, opts.master);
  const rootCa = rootCaOf(opts, kc);
  const controllers = runnable(opts, rootCa, logger);
  const shortNames = controllers.map((d) => d.short);
  const rest = new KubeRest(kc, new TokenBucket(opts.kubeApiQps, opts.kubeApiBurst), (verb, path, status, refusal) => {
    const resource = resourceOfPath(path);
    metrics.apiRequestsTotal.inc({ verb, resource, code: status ? String(status) : '<error>' });
    // a right the manager or a controller's account lacks, by the client it refused
    if (refusal && refusedByAuthorizer(status, refusal.message)) metrics.apiForbiddenTotal.inc({ client: clientOfUserAgent(refusal.userAgent), verb, resource });
  }, opts.master);
  // each controller's client: its own ServiceAccount with --use-service-account-credentials, else ours
  const clientOf = controllerClients(rest, opts.useServiceAccountCredentials, opts.kubeApiQps, opts.kubeApiBurst, logger);

  const tls = opts.temporalTls ? loadTemporalTls(opts.temporalTls) : undefined;
  const { connection, native: nativeConnection } = await connectTemporal({
    address: opts.temporalAddress, namespace: opts.temporalNamespace, tls, logger, signal: startup.signal, waiting: startup.waiting,
  });
  const client = new Client({ connection, namespace: opts.temporalNamespace, dataConverter: DATA_CONVERTER });
  const instance = `${os.hostname()}-${process.pid}`;
  const fencing: Fencing = { clock: new ContactClock(), replica: instance, logger };
  const contact = new TemporalContact(connection, logger, opts.temporalAddress, fencing.clock);
  // from now: a worker may run activities as soon as it exists, and their fences need the answers
  contact.start();
  // events are written by the controller that reports them, with its rights
  const recorders = new Map<KubeRest, RecordEvent>();
  // a controller without a ServiceAccount still names itself in its User-Agent, as upstream's does
  const ownClients = new Map<string, KubeRest>();
  const ownClient = (name: string) => {
    if (!ownClients.has(name)) ownClients.set(name, rest.withUserAgent(userAgentFor(name), new TokenBucket(opts.kubeApiQps, opts.kubeApiBurst)));
    return ownClients.get(name)!;
  };
  // --shadow: each controller's writes become dry runs and proposals, under its own name, and go
  // to the deployment's ledger, as do the cluster manager's writes the watch sees
  const feed = opts.shadow ? new ShadowFeed(client, opts.taskQueue, { windowMs: opts.shadowWindowMs, horizonMs: shadowHorizonMs(opts.shadowWindowMs) }, logger) : undefined;
  feed?.start();
  const recordProposal = (p: Proposal, entry?: ShadowEntry) => {
    metrics.shadowProposalsTotal.inc({ controller: p.controller, verb: p.verb, resource: p.resource, outcome: p.refused ? 'refused' : 'proposed' });
    logger.info(p, 'shadow proposal');
    if (entry) feed?.add(entry);
  };
  /** per client, its shadow for each controller that uses it */
  const shadows = new Map<KubeRest, Map<string, KubeRest>>();
  const shadowOf = (r: KubeRest, controller: string): KubeRest => {
    if (!opts.shadow) return r;
    const of = shadows.get(r) ?? new Map<string, KubeRest>();
    shadows.set(r, of);
    if (!of.has(controller)) of.set(controller, shadowed(r, controller, recordProposal));
    return of.get(controller)!;
  };
  const workflowIdPrefix = opts.shadow ? shadowWorkflowIdPrefix(opts.taskQueue) : '';
  const depsOf = (name: string): ControllerDeps => {
    const d = descriptorOf(name);
    const own = d?.serviceAccount ? clientOf(d.serviceAccount, d.clientRate) : ownClient(d?.clientName ?? name);
    const r = shadowOf(own, d?.short ?? name);
    if (!recorders.has(r)) recorders.set(r, createEventRecorder(r, instance, logger));
    return { rest: r, logger, recordEvent: recorders.get(r)! };
  };
  // reads the cache cannot serve, within what upstream's system:kube-controller-manager role grants
  const managerReader = listOnly(rest);
  // this replica's informer cache, for activities, while the informer activity runs here
  const local = new LocalReads((hit) => metrics.localReadsTotal.inc({ result: hit ? 'hit' : 'miss' }));
  const activitiesOf = (d: ControllerDescriptor): ActivityMap => instrument({
    ...d.activities({ ...depsOf(d.name), reader: shadowOf(managerReader, d.short), depsOf, flags: opts.controllerFlags, rootCa, rootCaFile: opts.rootCaFile, local }),
    // what every object loop calls when its reconcile is refused or throws (workflows/runtime/object-loop.ts)
    ...createFailureReporter(d.name, depsOf(d.name)),
  }, metrics, fencing);

  const sinks: InjectedSinks<KcmSinks> = {
    kcm: {
      reconciled: {
        fn: (info, controller, outcome, durationMs) => {
          metrics.reconcilesTotal.inc({ controller, result: outcome });
          if (feed) {
            // the info crossed from the workflow thread as plain data: the typed attributes lost their
            // methods on the way, the plain record did not
            const kind = (info.searchAttributes as Record<string, unknown[] | undefined> | undefined)?.[SA_KIND.name]?.[0];
            feed.reconciled({ workflowId: info.workflowId, controller, ...(typeof kind === 'string' ? { kind } : {}), startedAt: Date.now() - durationMs });
          }
          metrics.reconcileDurationSeconds.observe({ controller }, durationMs / 1000);
          const key = info.workflowId.split('/').slice(1).join('/');
          const line = { controller, key, outcome, durationMs, runId: info.runId };
          if (outcome === 'error') logger.warn(line, 'reconcile failed; backing off');
          else logger.debug(line, 'reconciled');
        },
      },
      signals: {
        fn: (_info, controller, received, coalesced) => {
          metrics.signalsReceivedTotal.inc({ controller }, received);
          if (coalesced) metrics.signalsCoalescedTotal.inc({ controller }, coalesced);
        },
      },
      thrown: {
        fn: (_info, controller, stage) => metrics.controllerThrowsTotal.inc({ controller, stage }),
      },
      shadowOutcomes: {
        fn: (_info, controller, outcome, count) => metrics.shadowOutcomesTotal.inc({ controller, outcome }, count),
      },
    },
  };

  const prebuilt = freshPrebuiltBundle();
  if (!prebuilt) logger.info('no fresh prebuilt workflow bundle (npm run build writes one); bundling the workflows now');
  // bundled once for every worker of this replica, not once per worker
  const workflowBundle = prebuilt ? { codePath: prebuilt } : { code: (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_ENTRY, logger: quietBundlerLogger(logger) })).code };
  if (!sharingSupported) logger.warn('this Temporal SDK has no workflow-runner hook: each controller\'s worker gets a workflow thread of its own');
  const perController = controllers.map((d) => ({ d, activities: activitiesOf(d) }));
  // What workflows left on the base queue by a build before per-controller queues still call, until
  // they move to their controller's queue (runObjectLoop does that at its next turn).
  const legacyActivities: ActivityMap = Object.assign({}, ...perController.map((c) => c.activities));
  const informerActivities = instrument(createInformerActivities({
    // upstream's informers identify as <program>/shared-informers
    rest: rest.withUserAgent(userAgentFor('shared-informers'), new TokenBucket(opts.kubeApiQps, opts.kubeApiBurst)),
    client,
    taskQueue: opts.taskQueue,
    logger,
    rootCa,
    local,
    discoveryPeriodMs: opts.discoveryPeriodMs,
    workflowIdPrefix,
    ...(feed ? { shadow: feed } : {}),
    observer: {
      onReflector: (resource, running) => (running ? metrics.informerReflectors.inc({ resource }) : metrics.informerReflectors.dec({ resource })),
      onList: (resource) => metrics.informerListsTotal.inc({ resource }),
      onResume: (resource, resumed) => metrics.informerResumesTotal.inc({ resource, outcome: resumed ? 'resumed' : 'expired' }),
      onWatch: (resource, open) => (open ? metrics.informerWatches.inc({ resource }) : metrics.informerWatches.dec({ resource })),
      onWatchEvent: (resource, type) => metrics.watchEventsTotal.inc({ resource, type }),
      // a route that threw: counted as its controller's, and on the object, once per streak, as a
      // throw in its workflow is (the cache has logged it)
      onListenerThrow: (t) => {
        metrics.controllerThrowsTotal.inc({ controller: t.owner, stage: 'route' });
        const d = CONTROLLERS.find((c) => c.short === t.owner);
        const kind = kindOfPath(t.path);
        if (t.attempt !== 1 || !d || !kind || !t.obj) return;
        const m = t.obj.metadata ?? {};
        recordThrown(d.name, depsOf(d.name), {
          controller: t.owner, stage: 'route', object: { kind, namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' },
          message: t.error instanceof Error ? t.error.message : String(t.error),
        });
      },
    },
    onSignalSent: (controller, folded) => {
      metrics.signalsSentTotal.inc({ controller });
      metrics.signalEventsSentTotal.inc({ controller }, folded);
    },
    onEventsHeld: (controller, events) => metrics.signalEventsHeldTotal.inc({ controller }, events),
    onHoldExpired: (controller) => metrics.signalHoldsExpiredTotal.inc({ controller }),
    onShrunk: (controller) => metrics.signalsShrunkTotal.inc({ controller }),
    onRouteThrew: (controller) => metrics.controllerThrowsTotal.inc({ controller, stage: 'route' }),
    maxSignalHoldMs: opts.maxSignalHoldMs,
  }), metrics);
  const allActivityNames = new Set([...Object.keys(legacyActivities), ...Object.keys(informerActivities)]);
  const common = {
    connection: nativeConnection,
    namespace: opts.temporalNamespace,
    workflowBundle,
    sinks,
    identity: instance,
    dataConverter: DATA_CONVERTER,
    // a dead replica's sticky workflow tasks move to the shared queue quickly
    stickyQueueScheduleToStartTimeout: '2s',
    // A heartbeat leaves at most this long after the activity beats (by default 80% of its
    // timeout), so the server's view of an attempt lags this replica's by no more than a second:
    // the fence (activities/kube/fence.ts) can then trust a beat it made until most of the
    // heartbeat timeout has passed.
    maxHeartbeatThrottleInterval: '1 second',
  } as const;
  /** a worker's cache size and workflow task slots, from its cache size (undefined: the SDK's default) */
  const cacheOptions = (cached: number | undefined, slots: number) => ({
    ...(cached !== undefined ? { maxCachedWorkflows: cached } : {}),
    // a workflow task occupies a cache slot while it runs, so a cache smaller than the task slots
    // would leave slots idle (the SDK lowers them itself, with a warning per worker)
    maxConcurrentWorkflowTaskExecutions: cached ? Math.min(slots, cached) : slots,
  });

  // One worker per controller, on its own queue: --concurrent-X-syncs bounds that controller alone,
  // as upstream's workers per controller do, and a storm in one cannot queue another's reconciles.
  // Created at once: each creation waits on the server and the native core, not on this thread,
  // so a replica of every controller is ready in a fraction of the time one after another takes.
  const workers: Worker[] = await Promise.all(perController.map(async ({ d, activities }) => {
    const syncs = concurrencyOf(d, opts.controllerFlags);
    const w = await createSharedThreadWorker({
      ...common,
      taskQueue: controllerTaskQueue(opts.taskQueue, d.short),
      activities,
      maxConcurrentActivityTaskExecutions: Math.max(1, syncs),
      // a local activity runs under its workflow task: these bound that controller's API work as the activities' slots do
      maxConcurrentLocalActivityExecutions: Math.max(1, syncs),
      ...cacheOptions(cachedRunsFor(d, opts.maxCachedWorkflows), Math.max(2, syncs)),
    }, allActivityNames, opts.workflowStackTraces);
    metrics.workflowCaches.set(d.short, cachedRunsOf(w));
    return w;
  }));
  // The base queue: the informer workflows, and the migration of workflows started there before.
  workers.push(await createSharedThreadWorker({
    ...common,
    taskQueue: opts.taskQueue,
    activities: legacyActivities,
    maxConcurrentActivityTaskExecutions: 4,
    // the informer workflows and runs still moving off it: few, and woken rarely
    ...cacheOptions(cachedRunsFor({}, opts.maxCachedWorkflows), 2),
  }, allActivityNames, opts.workflowStackTraces));
  metrics.workflowCaches.set('base', cachedRunsOf(workers[workers.length - 1]));
  // The watch itself runs only on replicas of this exact set of controllers.
  const informerQueue = informerTaskQueue(opts.taskQueue, shortNames);
  workers.push(await Worker.create({
    connection: nativeConnection,
    namespace: opts.temporalNamespace,
    taskQueue: informerQueue,
    activities: informerActivities,
    identity: instance,
    dataConverter: DATA_CONVERTER,
    maxConcurrentActivityTaskExecutions: 1,
    // The SDK sends a heartbeat at most once per 80% of the timeout, which at the 3 s default left
    // 0.6 s for the send and the server's write: a replica busy starting every controller lost its
    // watch to its own heartbeat every few seconds. A third of the timeout leaves two thirds.
    maxHeartbeatThrottleInterval: Math.max(100, Math.floor(opts.informerHeartbeatTimeoutMs / 3)),
  }));

  const runs = workers.map((w) => w.run());
  const running = Promise.all(runs).then(() => undefined);
  const input: InformerWorkflowInput = {
    controllers: shortNames,
    heartbeatTimeoutMs: opts.informerHeartbeatTimeoutMs,
    activityTaskQueue: informerQueue,
    tuning: {
      resyncMs: opts.minResyncPeriodMs > 0 ? opts.minResyncPeriodMs : 365 * 24 * 3600_000,
      backoffBaseMs: opts.resyncBackoffBaseMs,
      backoffMaxMs: opts.resyncBackoffMaxMs,
      maxHistoryEvents: opts.maxHistoryEvents,
      idleHistoryEvents: opts.maxIdleHistoryEvents,
      settleMs: opts.settledContinueAsNewMs,
      maxRunAgeMs: opts.maxRunAgeMs,
    },
    flags: opts.controllerFlags,
  };
  // start it if no replica of this set has, and hand it this replica's configuration either way
  await client.workflow.signalWithStart(informerWorkflow, {
    workflowId: informerWorkflowId(opts.taskQueue, shortNames),
    taskQueue: opts.taskQueue,
    args: [input],
    signal: configureInformersSignal,
    signalArgs: [input],
    staticSummary: `informers of ${shortNames.join(', ') || 'no controller'}`,
  });
  await stopEarlierInformers(client, opts.taskQueue, shortNames, logger);
  for (const d of controllers) {
    await d.start?.({ client, taskQueue: controllerTaskQueue(opts.taskQueue, d.short), baseTaskQueue: opts.taskQueue, flags: opts.controllerFlags, tuning: input.tuning ?? {}, workflowIdPrefix });
  }
  logger.info({ controllers: shortNames, taskQueue: opts.taskQueue, temporal: opts.temporalAddress, ...(opts.shadow ? { shadow: true } : {}) },
    opts.shadow ? 'controller manager started in shadow mode: writes are dry runs, recorded as proposals' : 'controller manager started');

  return {
    running,
    readiness: () => {
      const stopped = workers.filter((w) => w.getState() !== 'RUNNING').length;
      if (stopped) return { ready: false, reason: `${stopped} of ${workers.length} workers not running` };
      const problem = contact.problem();
      return problem ? { ready: false, reason: problem } : { ready: true };
    },
    async shutdown() {
      contact.stop();
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running.catch(() => undefined);
      await feed?.stop();
      await nativeConnection.close();
      await connection.close();
    },
  };
}

/** webpack's report of the bundle is a screenful; one line at debug level says it happened. */
function quietBundlerLogger(logger: Logger): DefaultLogger {
  return new DefaultLogger('WARN', (entry) => logger.debug({ component: 'bundler' }, entry.message.split('\n')[0]));
}

/**
 * A build before per-set informers ran one informer for every controller under a fixed ID, and a
 * build before bounded set keys named a long set in full. Such an informer's watch duplicates the
 * new one, so the first replica of this build stops it; its replicas' workflows are served by the
 * new informers' signals all the same.
 */
async function stopEarlierInformers(client: Client, taskQueue: string, controllers: readonly string[], logger: Logger): Promise<void> {
  for (const id of earlierInformerWorkflowIds(taskQueue, controllers)) await stopInformer(client, id, logger);
}

async function stopInformer(client: Client, workflowId: string, logger: Logger): Promise<void> {
  try {
    const handle = client.workflow.getHandle(workflowId);
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return;
    await handle.terminate('replaced by the informer of this set of controllers under its current ID');
    logger.info({ workflowId: handle.workflowId }, 'stopped the informer of an earlier build');
  } catch (e) {
    if (!(e instanceof WorkflowNotFoundError)) logger.warn({ err: String(e) }, 'could not check for an earlier build\'s informer');
  }
}
