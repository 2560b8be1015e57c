import * as fs from 'node:fs';
import * as os from 'node:os';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { InjectedSinks, NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createDeploymentActivities } from '../activities/deployment/activities';
import { createGcActivities } from '../activities/gc/activities';
import { createInformerActivities } from '../activities/informers';
import { createAggregationActivities } from '../activities/clusterrole-aggregation/activities';
import { RecordEvent, createEventRecorder } from '../activities/kube/events';
import { controllerClients } from '../activities/kube/service-account-credentials';
import { createRootCaActivities } from '../activities/root-ca-cert-publisher/activities';
import { createServiceAccountActivities } from '../activities/serviceaccount/activities';
import { createTokenActivities, tokenControllerConfigError } from '../activities/serviceaccount-token/activities';
import { createResourceQuotaActivities } from '../activities/resourcequota/activities';
import { createNamespaceActivities } from '../activities/namespace/activities';
import { createMirroringActivities } from '../activities/endpointslicemirroring/activities';
import { createEndpointsActivities } from '../activities/endpoints/activities';
import { createEndpointSliceActivities } from '../activities/endpointslice/activities';
import { createCronJobActivities } from '../activities/cronjob/activities';
import { createJobActivities } from '../activities/job/activities';
import { createTtlAfterFinishedActivities } from '../activities/ttl-after-finished/activities';
import { createPodGcActivities } from '../activities/podgc/activities';
import { OBJECT_EVENT_SIGNAL } from '../workflows/runtime/object-loop';
import { PodGcEvent, PodGcWorkflowInput, podGcWorkflowId } from '../workflows/podgc/workflow';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE } from '../workflows/search-attributes';
import { KubeRest } from '../activities/kube/rest';
import { TokenBucket } from '../activities/kube/token-bucket';
import { createReplicaActivities } from '../activities/replicaset/activities';
import { WORKFLOWS_ENTRY, freshPrebuiltBundle } from './workflow-bundle';
import { configureInformersSignal, informerWorkflowId, InformerWorkflowInput } from '../workflows/informer';
import type { KcmSinks } from '../workflows/runtime/sinks';
import type { RunOptions } from '../starter/run-options';
import { ConcurrentSyncsController, FIXED_SYNCS, loadTemporalTls } from '../starter/run-options';
import { IMPLEMENTED_CONTROLLERS, ImplementedController, implementedOf } from './controllers';
import { Metrics, resourceOfPath } from './metrics';
import { ensureSearchAttributes } from './search-attributes';

export interface Manager {
  worker: Worker;
  /** resolves when the worker has stopped */
  running: Promise<void>;
  ready(): boolean;
  shutdown(): Promise<void>;
}

function kubeConfig(opts: RunOptions): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  return kc;
}

/** Count failures per activity name, so `kcm_activity_errors_total` shows what keeps failing. */
function instrument<T extends Record<string, (...args: never[]) => Promise<unknown>>>(acts: T, metrics: Metrics): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(acts)) {
    out[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (e) {
        const reason = (e as { type?: string }).type ?? (e as Error).name ?? 'Error';
        metrics.activityErrorsTotal.inc({ activity: name, reason });
        throw e;
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
export function rootCaOf(opts: RunOptions, kc: k8s.KubeConfig): string | undefined {
  if (opts.rootCaFile) return fs.readFileSync(opts.rootCaFile, 'utf8');
  const cluster = kc.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, 'base64').toString('utf8');
  if (cluster?.caFile) return fs.readFileSync(cluster.caFile, 'utf8');
  return undefined;
}

/** Controllers that cannot run as configured are left out with a reason, as upstream skips them at start. */
function runnable(opts: RunOptions, rootCa: string | undefined, logger: Logger): ImplementedController[] {
  return implementedOf(opts.enabledControllers).filter((c) => {
    let why: string | undefined;
    if (c === 'serviceaccount-token-controller') {
      const problem = tokenControllerConfigError(tokenOptions(opts, rootCa));
      // an unusable key or CA file stops the manager, as it stops upstream; no key just leaves the controller out
      if (problem?.fatal) throw new Error(problem.message);
      why = problem?.message;
    } else if (c === 'root-ca-certificate-publisher-controller' && !rootCa) {
      why = 'no --root-ca-file given and the kubeconfig names no CA';
    }
    if (why) logger.warn({ controller: c }, `controller not started: ${why}`);
    return !why;
  });
}

/**
 * podgc is one periodic workflow, not one per object, so no watch event starts it: every replica
 * starts it if none has and hands it this replica's threshold, which a restarted deployment with a
 * changed flag thereby applies to the run already going.
 */
async function startPodGc(client: Client, opts: RunOptions, tuning: InformerWorkflowInput['tuning']): Promise<void> {
  const settings = { terminatedPodThreshold: opts.terminatedPodGcThreshold };
  const args: PodGcWorkflowInput = { ...settings, tuning };
  const event: PodGcEvent = { settings };
  await client.workflow.signalWithStart('podGcWorkflow', {
    workflowId: podGcWorkflowId(opts.taskQueue),
    taskQueue: opts.taskQueue,
    args: [args],
    signal: OBJECT_EVENT_SIGNAL,
    signalArgs: [event],
    staticSummary: `pod garbage collector (threshold ${opts.terminatedPodGcThreshold})`,
    typedSearchAttributes: [
      { key: SA_CONTROLLER, value: IMPLEMENTED_CONTROLLERS['pod-garbage-collector-controller'].short },
      { key: SA_KIND, value: 'Pod' },
      { key: SA_NAMESPACE, value: '' },
      { key: SA_NAME, value: '' },
    ],
  });
}

const tokenOptions = (opts: RunOptions, rootCa: string | undefined) => ({
  privateKeyFile: opts.serviceAccountPrivateKeyFile,
  ...(opts.rootCaFile ? { rootCaFile: opts.rootCaFile } : { kubeconfigCa: rootCa }),
});

export async function startManager(opts: RunOptions, logger: Logger, metrics: Metrics): Promise<Manager> {
  const kc = kubeConfig(opts);
  const rootCa = rootCaOf(opts, kc);
  const controllers = runnable(opts, rootCa, logger);
  const shortNames = controllers.map((c) => IMPLEMENTED_CONTROLLERS[c].short);
  const rest = new KubeRest(kc, new TokenBucket(opts.kubeApiQps, opts.kubeApiBurst), (verb, path, status) => {
    const resource = resourceOfPath(path);
    metrics.apiRequestsTotal.inc({ verb, resource, code: status ? String(status) : '<error>' });
  }, opts.master);
  // each controller's client: its own ServiceAccount with --use-service-account-credentials, else ours
  const clientOf = controllerClients(rest, opts.useServiceAccountCredentials, opts.kubeApiQps, opts.kubeApiBurst, logger);
  const clientFor = (c: ImplementedController) => {
    const sa = IMPLEMENTED_CONTROLLERS[c].serviceAccount;
    return sa ? clientOf(sa) : rest;
  };

  const tls = opts.temporalTls ? loadTemporalTls(opts.temporalTls) : undefined;
  const connection = await Connection.connect({ address: opts.temporalAddress, tls });
  const client = new Client({ connection, namespace: opts.temporalNamespace });
  await ensureSearchAttributes(connection, opts.temporalNamespace);
  const nativeConnection = await NativeConnection.connect({ address: opts.temporalAddress, tls });
  const instance = `${os.hostname()}-${process.pid}`;
  // events are written by the controller that reports them, with its rights
  const recorders = new Map<KubeRest, RecordEvent>();
  const depsFor = (c: ImplementedController) => {
    const r = clientFor(c);
    if (!recorders.has(r)) recorders.set(r, createEventRecorder(r, instance, logger));
    return { rest: r, logger, recordEvent: recorders.get(r)! };
  };

  const activities = instrument(
    {
      ...createReplicaActivities({ logger, clientFor: (kind) => depsFor(kind === 'ReplicaSet' ? 'replicaset-controller' : 'replicationcontroller-controller') }),
      ...createDeploymentActivities(depsFor('deployment-controller')),
      ...createGcActivities(depsFor('garbage-collector-controller')),
      ...createServiceAccountActivities(depsFor('serviceaccount-controller')),
      ...createRootCaActivities({ ...depsFor('root-ca-certificate-publisher-controller'), reader: rest, rootCa: rootCa ?? '' }),
      ...createAggregationActivities(depsFor('clusterrole-aggregation-controller')),
      ...createTokenActivities({ ...depsFor('serviceaccount-token-controller'), ...tokenOptions(opts, rootCa) }),
      ...createResourceQuotaActivities(depsFor('resourcequota-controller')),
      ...createNamespaceActivities(depsFor('namespace-controller')),
      ...createMirroringActivities(depsFor('endpointslice-mirroring-controller')),
      ...createEndpointsActivities(depsFor('endpoints-controller')),
      ...createEndpointSliceActivities(depsFor('endpointslice-controller')),
      ...createCronJobActivities(depsFor('cronjob-controller')),
      ...createJobActivities(depsFor('job-controller')),
      ...createTtlAfterFinishedActivities(depsFor('ttl-after-finished-controller')),
      ...createPodGcActivities(depsFor('pod-garbage-collector-controller')),
      ...createInformerActivities({
        rest,
        client,
        taskQueue: opts.taskQueue,
        logger,
        rootCa,
        onWatchEvent: (resource, type) => metrics.watchEventsTotal.inc({ resource, type }),
        onSignalSent: (controller) => metrics.signalsSentTotal.inc({ controller }),
      }),
    },
    metrics,
  );

  const sinks: InjectedSinks<KcmSinks> = {
    kcm: {
      reconciled: {
        fn: (info, controller, outcome, durationMs) => {
          metrics.reconcilesTotal.inc({ controller, result: outcome });
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
    },
  };

  // concurrent-*-syncs bound how many objects reconcile at once; +1 for the informer activity
  const syncs = controllers.reduce((n, c) => n + (c in opts.concurrentSyncs ? opts.concurrentSyncs[c as ConcurrentSyncsController] : FIXED_SYNCS[c] ?? 1), 0);
  const prebuilt = freshPrebuiltBundle();
  if (!prebuilt) logger.info('no fresh prebuilt workflow bundle (npm run build writes one); bundling the workflows now');
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: opts.temporalNamespace,
    taskQueue: opts.taskQueue,
    ...(prebuilt ? { workflowBundle: { codePath: prebuilt } } : { workflowsPath: WORKFLOWS_ENTRY }),
    activities,
    sinks,
    identity: instance,
    maxConcurrentActivityTaskExecutions: Math.max(2, syncs + 1),
    maxConcurrentWorkflowTaskExecutions: Math.max(2, syncs),
    // a dead replica's sticky workflow tasks move to the shared queue quickly
    stickyQueueScheduleToStartTimeout: '2s',
  });

  const running = worker.run();
  const input: InformerWorkflowInput = {
    controllers: shortNames,
    heartbeatTimeoutMs: opts.informerHeartbeatTimeoutMs,
    tuning: {
      resyncMs: opts.minResyncPeriodMs > 0 ? opts.minResyncPeriodMs : 365 * 24 * 3600_000,
      backoffBaseMs: opts.resyncBackoffBaseMs,
      backoffMaxMs: opts.resyncBackoffMaxMs,
      maxHistoryEvents: opts.maxHistoryEvents,
    },
    settings: {
      namespaceSyncMs: opts.namespaceSyncPeriodMs,
      resourceQuotaSyncMs: opts.resourceQuotaSyncPeriodMs,
      maxEndpointsPerSlice: opts.maxEndpointsPerSlice,
      mirroringMaxEndpointsPerSubset: opts.mirroringMaxEndpointsPerSubset,
    },
  };
  // start it if no replica has, and hand it this replica's configuration either way
  await client.workflow.signalWithStart('informerWorkflow', {
    workflowId: informerWorkflowId(opts.taskQueue),
    taskQueue: opts.taskQueue,
    args: [input],
    signal: configureInformersSignal,
    signalArgs: [input],
  });
  if (controllers.includes('pod-garbage-collector-controller')) await startPodGc(client, opts, input.tuning);
  logger.info({ controllers: shortNames, taskQueue: opts.taskQueue, temporal: opts.temporalAddress }, 'controller manager started');

  return {
    worker,
    running,
    ready: () => worker.getState() === 'RUNNING',
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await nativeConnection.close();
      await connection.close();
    },
  };
}
