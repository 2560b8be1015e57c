import { DefaultLogger, LogLevel as TemporalLogLevel, Runtime, type TelemetryOptions } from '@temporalio/worker';
import { sdkMetrics } from '../workers/sdk-metrics';
import type { Logger } from 'pino';
import { startManager } from '../workers/manager';
import { writeHeapSnapshots } from '../workers/shared-workflow-threads';
import { createLogger } from '../workers/logger';
import { createMetrics } from '../workers/metrics';
import { UPSTREAM_REQUIRED_GATES, gatesOff } from '../workers/feature-gates';
import { descriptorOf, notImplemented } from '../workers/registry';
import { startHealthServer } from './health-server';
import { prepareSecureServing } from './secure-serving/setup';
import type { RunOptions } from './run-options';
import { controllerOfWorkflowId } from '../workflows/runtime/workflow-ids';
import { klogTextDestination } from '../workers/klog-text';

const TEMPORAL_LEVEL: Record<string, TemporalLogLevel> = {
  trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR',
};

/** What the SDK says of every worker at start and stop (the informer's worker has no workflows by design). */
const ROUTINE_SDK_LINES = ['Worker state changed', 'No Nexus services registered', 'No workflows registered', 'No activities registered'];

/** Route the SDK's and workflows' own log lines (workflow `log.*`) into our pino stream. */
function installRuntimeLogger(logger: Logger, level: string, telemetryOptions?: TelemetryOptions): void {
  const sdk = logger.child({ component: 'temporal' });
  Runtime.install({
    ...(telemetryOptions ? { telemetryOptions } : {}),
    // the SDK's default list adds SIGUSR2 (nodemon's restart signal): here it asks for heap snapshots
    // (--heap-snapshot-dir) and must not stop the workers
    shutdownSignals: ['SIGINT', 'SIGTERM', 'SIGQUIT'],
    logger: new DefaultLogger(TEMPORAL_LEVEL[level] ?? 'INFO', (entry) => {
      const meta = { ...entry.meta };
      // workflow IDs are <controller>/<namespace>/<name>: the controller and object key every line carries
      const id = typeof meta.workflowId === 'string' ? meta.workflowId : undefined;
      const fields = id ? { ...meta, controller: controllerOfWorkflowId(id), key: id.split('/').slice(1).join('/') } : meta;
      const msg = entry.message;
      // each controller's worker reports its start and stop; that is a dozen lines per replica, so debug
      if (ROUTINE_SDK_LINES.some((r) => msg.startsWith(r))) {
        sdk.debug(fields, msg);
        return;
      }
      switch (entry.level) {
        case 'TRACE': case 'DEBUG': sdk.debug(fields, msg); break;
        case 'INFO': sdk.info(fields, msg); break;
        case 'WARN': sdk.warn(fields, msg); break;
        default: sdk.error(fields, msg);
      }
    }),
  });
}

/** `temporal-kcm run`: serve health/metrics, run a worker replica until SIGINT/SIGTERM. */
export async function runManager(opts: RunOptions): Promise<void> {
  const logger = createLogger(opts.logLevel, opts.logFormat === 'text' ? klogTextDestination() : undefined);
  // the SDK's metrics are served on /metrics, so only when there is one
  const sdk = opts.securePort > 0 ? await sdkMetrics() : undefined;
  installRuntimeLogger(logger, opts.logLevel, sdk?.telemetry);
  if (opts.leaderElectWarning) logger.warn(opts.leaderElectWarning);
  // upstream's flags without an option of ours: what each did (or could not do) here
  for (const f of opts.upstreamFlags) {
    if (f.kind === 'not yet') logger.warn({ flag: f.flag, value: f.value }, `upstream flag not honoured: ${f.reason}`);
    else logger.info({ flag: f.flag, value: f.value }, f.kind === 'honoured' ? `upstream flag: ${f.reason}` : `upstream flag has no effect here: ${f.reason}`);
  }
  for (const w of opts.featureGateWarnings) logger.warn(w);
  if (Object.keys(opts.featureGates).length) logger.info({ featureGates: opts.featureGates }, 'feature gates set');
  // upstream skips a controller whose required feature gate is off, and says so
  const gated = new Set<string>();
  for (const c of [...opts.enabledControllers].sort()) {
    const required = descriptorOf(c)?.requiredFeatureGates ?? UPSTREAM_REQUIRED_GATES[c];
    if (gatesOff(opts.controllerFlags, required).length === 0) continue;
    gated.add(c);
    logger.info({ controller: c, requiredFeatureGates: required }, 'Controller is disabled by a feature gate');
  }
  const missing = notImplemented([...opts.enabledControllers].filter((c) => !gated.has(c)));
  if (missing.length) logger.info({ controllers: missing }, 'enabled but not implemented in this build; not started');

  const metrics = createMetrics();
  let manager: Awaited<ReturnType<typeof startManager>> | undefined;
  /** why the start waits (Temporal unreachable), for /readyz */
  let waitingFor: string | undefined;
  // a stop asked for while the start still waits for Temporal ends the wait
  const aborting = new AbortController();
  let stop: ((signal: string) => Promise<void>) | undefined;
  const onSignal = (signal: string) => {
    if (stop) return void stop(signal);
    logger.info({ signal }, 'shutting down');
    aborting.abort();
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  // The serving certificate (two RSA keys when self-signed, a few hundred ms of the thread pool)
  // is made while the manager connects and creates its workers: a replica is ready that much sooner.
  const serving = opts.securePort > 0
    ? prepareSecureServing(opts.secureServing, opts.bindAddress, logger).then((s) => startHealthServer({
        bindAddress: opts.bindAddress,
        port: opts.securePort,
        metrics,
        ...(sdk ? { moreMetrics: sdk.read } : {}),
        logger,
        readiness: () => manager?.readiness() ?? { ready: false, reason: waitingFor ?? 'starting' },
        serving: s,
      }))
    : Promise.resolve(undefined);
  const starting = startManager(opts, logger, metrics, { signal: aborting.signal, waiting: (why) => { waitingFor = why; } });
  // handled below, once the port is up; until then a failure must not count as unhandled
  starting.catch(() => undefined);
  // a bad certificate or a taken port is reported at once, not after the manager's start
  const health = await serving.catch((e: unknown) => {
    starting.then((m) => m.shutdown(), () => undefined);
    throw e;
  });
  manager = await starting.catch(async (e: unknown) => {
    await health?.close();
    if (aborting.signal.aborted) return undefined;
    throw e;
  });
  if (!manager) {
    logger.info('stopped');
    // a connect attempt still in flight must not hold the exit until its deadline
    setTimeout(() => process.exit(0), 0).unref();
    return;
  }
  stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await manager?.shutdown();
    await health?.close();
  };
  // asked to stop after Temporal was reached but before the workers were up
  if (aborting.signal.aborted) void manager.shutdown();
  const heapDir = opts.heapSnapshotDir;
  if (heapDir) {
    process.on('SIGUSR2', () => {
      logger.info({ dir: heapDir }, 'writing heap snapshots');
      writeHeapSnapshots(heapDir).then(
        (files) => logger.info({ files }, 'heap snapshots written'),
        (e: unknown) => logger.error({ err: String(e) }, 'heap snapshots failed'),
      );
    });
  }
  await manager.running;
  await health?.close();
  logger.info('stopped');
}
