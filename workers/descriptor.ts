import type { Client } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { Logger } from 'pino';
import type { InformerCache } from '../activities/informers/cache';
import type { InformerInput, RouteFamily } from '../activities/informers/family';
import type { SignalGate, Signaller } from '../activities/informers/signaller';
import type { RecordEvent } from '../activities/kube/events';
import type { LocalReads } from '../activities/informers/local-reads';
import type { KubeRest } from '../activities/kube/rest';
import type { ClientRateScale } from '../activities/kube/service-account-credentials';
import type { LoopTuning } from '../workflows/runtime/object-loop';
import type { GateName } from './feature-gates';
import { flagValue, type FlagSpec, type FlagValues, type IntFlag } from './flags';

/*
 * Everything the manager needs to know about one controller. A controller is its descriptor plus
 * workflows/<name>/ and activities/<name>/; the manager, the informer, `run`'s flags and `--help`
 * all iterate over workers/registry.ts and know no controller by name.
 */

// eslint-style escape hatch avoided on purpose: activities take typed requests, so `never[]`
// accepts every activity function without widening any of them to `any`.
export type ActivityFunction = (...args: never[]) => Promise<unknown>;
export type ActivityMap = Record<string, ActivityFunction>;

/** What one controller's activities call the API server with. */
export interface ControllerDeps {
  /** the controller's own client: its ServiceAccount under --use-service-account-credentials */
  rest: KubeRest;
  logger: Logger;
  /** Events written with the controller's rights, as its own recorder writes them upstream */
  recordEvent: RecordEvent;
}

export interface ActivityContext extends ControllerDeps {
  /**
   * the manager's own client, for reads upstream makes through its shared informers: it lists and
   * watches only (a single object is listed by name), as upstream's system:kube-controller-manager
   * role allows (activities/kube/manager-reads.ts)
   */
  reader: KubeRest;
  /** another controller's deps, for one engine serving two controllers (ReplicaSet and ReplicationController) */
  depsOf(controller: string): ControllerDeps;
  /** this replica's resolved flags (every controller's, by flag name) */
  flags: FlagValues;
  /** --root-ca-file as given (the path), for controllers that validate the file themselves */
  rootCaFile?: string;
  /** the CA bundle to publish: --root-ca-file's content, else the kubeconfig's CA */
  rootCa?: string;
  /** objects from this replica's informer cache, when it runs here (else the API must be read) */
  local: LocalReads;
}

/** What a route family is built from, inside the informer activity. */
export interface RouteContext {
  input: InformerInput;
  signaller: Signaller;
  /** the manager's one informer per resource: routes register what they read and listen */
  cache: InformerCache;
  /** the CA bundle the token and root-CA routes compare against */
  rootCa?: string;
  /** --task-queue: what IDs of a deployment's singleton workflows are named after */
  baseTaskQueue: string;
}

/**
 * Registers the routes of the controllers in `ctx.input.controllers` it serves with the shared
 * cache, or returns undefined when none is enabled. Controllers sharing one engine name the same
 * factory; the informer calls each distinct factory once.
 */
export type RouteFactory = (ctx: RouteContext) => RouteFamily | undefined;

/**
 * Builds a controller's signal gate on the shared cache its routes registered with (see
 * SignalGate). A controller without one has every event sent.
 */
export type SignalGateFactory = (ctx: RouteContext) => SignalGate;

/** What a precondition check sees. */
export interface PreconditionContext {
  flags: FlagValues;
  rootCa?: string;
  rootCaFile?: string;
}

/** What a start hook gets: run once per replica start, after the workers poll. */
export interface StartContext {
  client: Client;
  /** the controller's own task queue */
  taskQueue: string;
  /** --task-queue: what IDs of singleton workflows are named after, as they were before per-controller queues */
  baseTaskQueue: string;
  flags: FlagValues;
  tuning: Partial<LoopTuning>;
  /** put before the ID of every workflow it starts, as the informer's signals put it (--shadow) */
  workflowIdPrefix: string;
}

/** A precondition that failed: `fatal` stops the manager (as upstream exits), otherwise the controller is left out. */
export interface NotRunnable {
  fatal: boolean;
  message: string;
}

export interface ControllerDescriptor {
  /** upstream's canonical --controllers name, e.g. `job-controller` (aliases live in starter/controller-names.ts) */
  name: string;
  /** the first segment of its workflow IDs, the KcmController search attribute and its task queue's suffix */
  short: string;
  /** the kube-system ServiceAccount whose system:controller:* role bounds it; none: the manager's own credentials */
  serviceAccount?: string;
  /** without a ServiceAccount: the name its client adds to the User-Agent, as upstream's client builder names it */
  clientName?: string;
  /** its client's rate limit as multiples of --kube-api-qps and --kube-api-burst, where upstream raises it */
  clientRate?: ClientRateScale;
  /** its `--concurrent-*-syncs` flag, or the fixed number of workers upstream gives it */
  concurrency: IntFlag | number;
  /** its other flags, in --help order */
  flags?: readonly FlagSpec[];
  /** problems with a combination of its flags (each a line); any stops `run` with usage and exit code 2 */
  validateFlags?(flags: FlagValues): string[];
  /** the workflow types its task queue runs (every one must be exported from workflows/index.ts) */
  workflows: readonly Workflow[];
  activities(ctx: ActivityContext): ActivityMap;
  routes?: RouteFactory;
  /**
   * Which of its events need no workflow task yet: the workflow's own decision, run on the cache.
   * It must only err toward sending; a property test holds it to the workflow's reconcile.
   */
  signalGate?: SignalGateFactory;
  /**
   * Every one of its runs wakes on a period of its own (a sync period, a schedule), not only on
   * watch events: its worker keeps all its runs cached unless --max-cached-workflows says
   * otherwise, since an evicted run would be replayed at every period (workers/workflow-cache.ts).
   */
  periodicRuns?: boolean;
  /** upstream's requiredFeatureGates: with any of them off (--feature-gates) it is disabled by its gate, as upstream skips it */
  requiredFeatureGates?: readonly GateName[];
  /** why it cannot run as configured; it is then left out, as upstream skips it at start */
  precondition?(ctx: PreconditionContext): NotRunnable | undefined;
  /** work that no watch event starts (podgc's singleton workflow) */
  start?(ctx: StartContext): Promise<void>;
}

/** The number of reconciles it may run at once in one replica. */
export function concurrencyOf(d: ControllerDescriptor, flags: FlagValues): number {
  return typeof d.concurrency === 'number' ? d.concurrency : flagValue(flags, d.concurrency);
}
