import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Our own registry rather than prom-client's global one: tests create several processes' worth of
 * metrics in one Node process, and other libraries may register on the global registry.
 */
export interface Metrics {
  readonly registry: Registry;
  /** result: "success", "error" or "requeue" (succeeded but asked to run again). */
  readonly reconcilesTotal: Counter<'controller' | 'result'>;
  readonly reconcileDurationSeconds: Histogram<'controller'>;
  /** type: the watch event type, ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  readonly watchEventsTotal: Counter<'resource' | 'type'>;
  /** Reflectors of the shared informer cache, by resource (`pods`, `replicasets.apps`): 1 each while the informer runs here. */
  readonly informerReflectors: Gauge<'resource'>;
  readonly informerListsTotal: Counter<'resource'>;
  /** outcome: `resumed` (listed at the last holder's position, no signals) or `expired` (listed afresh). */
  readonly informerResumesTotal: Counter<'resource' | 'outcome'>;
  /** Watches open now, by resource: at most one each. */
  readonly informerWatches: Gauge<'resource'>;
  readonly signalsSentTotal: Counter<'controller'>;
  /** Watch events those signals carried, merged. */
  readonly signalEventsSentTotal: Counter<'controller'>;
  /** Watch events a controller's signal gate held, each counted once. */
  readonly signalEventsHeldTotal: Counter<'controller'>;
  readonly signalsShrunkTotal: Counter<'controller'>;
  /** Objects whose held events went out when their hold ran out and the gate, asked again, said the workflow would act. */
  readonly signalHoldsExpiredTotal: Counter<'controller'>;
  readonly signalsReceivedTotal: Counter<'controller'>;
  /** Signals that found a reconcile already pending and were folded into it. */
  readonly signalsCoalescedTotal: Counter<'controller'>;
  /** Errors a controller's own workflow code threw, by controller and stage (event, reconcile). */
  readonly controllerThrowsTotal: Counter<'controller' | 'stage'>;
  readonly activityErrorsTotal: Counter<'activity' | 'reason'>;
  readonly fencedAttemptsTotal: Counter<'activity'>;
  /** API calls the authorizer refused (403; not quota or webhook denials), by client */
  readonly apiForbiddenTotal: Counter<'client' | 'verb' | 'resource'>;
  /** code: the HTTP status as a string, or "<error>" when no response came back. */
  readonly apiRequestsTotal: Counter<'verb' | 'resource' | 'code'>;
  readonly localReadsTotal: Counter<'result'>;
  /** --shadow: writes sent as dry runs instead; outcome is `proposed`, or `refused` when the dry run was */
  readonly shadowProposalsTotal: Counter<'controller' | 'verb' | 'resource' | 'outcome'>;
  /** --shadow: the ledger's comparisons of ours with the cluster manager's writes, by outcome (agree, late, differ, only-ours, only-theirs) */
  readonly shadowOutcomesTotal: Counter<'controller' | 'outcome'>;
  /**
   * Workflow runs each worker holds in memory now, by controller (`base` for the informer's queue),
   * read from the workers at scrape time: what `--max-cached-workflows` bounds.
   */
  readonly workflowCacheRuns: Gauge<'controller'>;
  /** where workflowCacheRuns reads from: the manager adds one function per worker */
  readonly workflowCaches: Map<string, () => number>;
}

/**
 * A reconcile here includes Temporal round trips (activity scheduling, API calls), so the buckets
 * reach further than client-go's workqueue histograms do.
 */
const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const workflowCaches = new Map<string, () => number>();
  return {
    registry,
    reconcilesTotal: new Counter({
      name: 'kcm_reconciles_total',
      help: 'Reconciles finished, by controller and result (success, error, requeue).',
      labelNames: ['controller', 'result'] as const,
      registers,
    }),
    reconcileDurationSeconds: new Histogram({
      name: 'kcm_reconcile_duration_seconds',
      help: 'Wall time of one reconcile, by controller.',
      labelNames: ['controller'] as const,
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    watchEventsTotal: new Counter({
      name: 'kcm_watch_events_total',
      help: 'Watch events received from the API server, by resource and event type.',
      labelNames: ['resource', 'type'] as const,
      registers,
    }),
    informerReflectors: new Gauge({
      name: 'kcm_informer_reflectors',
      help: 'List+watch loops of the shared informer cache, by resource; one per resource whatever the enabled controllers.',
      labelNames: ['resource'] as const,
      registers,
    }),
    informerListsTotal: new Counter({
      name: 'kcm_informer_lists_total',
      help: 'Complete lists made by the shared informer cache, by resource (one at start, then one per watch it could not resume).',
      labelNames: ['resource'] as const,
      registers,
    }),
    informerResumesTotal: new Counter({
      name: 'kcm_informer_resumes_total',
      help: 'Watches taken over from the last holder of the informer, by resource and outcome: resumed at its position, or expired (listed afresh, every object told).',
      labelNames: ['resource', 'outcome'] as const,
      registers,
    }),
    informerWatches: new Gauge({
      name: 'kcm_informer_watches',
      help: 'Watches the shared informer cache has open now, by resource.',
      labelNames: ['resource'] as const,
      registers,
    }),
    signalsSentTotal: new Counter({
      name: 'kcm_signals_sent_total',
      help: 'Signals sent to object workflows, by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
    signalEventsSentTotal: new Counter({
      name: 'kcm_signal_events_sent_total',
      help: 'Watch events carried by the signals sent to object workflows (several merge into one signal), by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
    signalEventsHeldTotal: new Counter({
      name: 'kcm_signal_events_held_total',
      help: "Watch events a controller's signal gate held because its workflow, reconciling on the informer cache, would write nothing; they go out merged with the object's next event that needs work, or when the gate, asked again each --max-signal-hold, says the workflow would now act. Each event is counted once.",
      labelNames: ['controller'] as const,
      registers,
    }),
    signalsShrunkTotal: new Counter({
      name: 'kcm_signals_shrunk_total',
      help: 'Signals whose events weighed more than a Temporal payload may, sent with their state cut down or left out (the workflow reads the rest from the API), by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
    signalHoldsExpiredTotal: new Counter({
      name: 'kcm_signal_holds_expired_total',
      help: "Objects whose held watch events went out when --max-signal-hold ran out and the gate, asked again, said the workflow would now act (what time alone changed, such as a wait for availability).",
      labelNames: ['controller'] as const,
      registers,
    }),
    signalsReceivedTotal: new Counter({
      name: 'kcm_signals_received_total',
      help: 'Signals received by object workflows, by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
    signalsCoalescedTotal: new Counter({
      name: 'kcm_signals_coalesced_total',
      help: 'Signals merged into a reconcile that another signal had already triggered, by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
    apiForbiddenTotal: new Counter({
      name: 'kcm_api_forbidden_total',
      help: 'API calls the authorizer refused (403), by the client refused (its User-Agent\'s name: a controller\'s ServiceAccount user, or the manager\'s own client): a right is missing.',
      labelNames: ['client', 'verb', 'resource'] as const,
      registers,
    }),
    controllerThrowsTotal: new Counter({
      name: 'kcm_controller_throws_total',
      help: 'Errors a controller\'s own workflow code threw (not a failed API call), by controller and stage (event: folding an event in; reconcile). Each is a backed-off retry of that object alone, with a ReconcileError Event on it.',
      labelNames: ['controller', 'stage'] as const,
      registers,
    }),
    activityErrorsTotal: new Counter({
      name: 'kcm_activity_errors_total',
      help: 'Activity attempts that failed, by activity and reason.',
      labelNames: ['activity', 'reason'] as const,
      registers,
    }),
    fencedAttemptsTotal: new Counter({
      name: 'kcm_fenced_attempts_total',
      help: 'Activity attempts that had writes refused because they may no longer be this replica\'s (cancelled, overdue heartbeat, near their limit, or Temporal unheard for most of their lease), by activity.',
      labelNames: ['activity'] as const,
      registers,
    }),
    apiRequestsTotal: new Counter({
      name: 'kcm_api_requests_total',
      help: 'Requests to the Kubernetes API server, by verb, resource and HTTP status code.',
      labelNames: ['verb', 'resource', 'code'] as const,
      registers,
    }),
    shadowProposalsTotal: new Counter({
      name: 'kcm_shadow_proposals_total',
      help: 'With --shadow, the writes each controller would have made (sent as server-side dry runs), by verb, resource and whether the dry run was refused.',
      labelNames: ['controller', 'verb', 'resource', 'outcome'] as const,
      registers,
    }),
    shadowOutcomesTotal: new Counter({
      name: 'kcm_shadow_outcomes_total',
      help: 'With --shadow, how the ledger compared each controller\'s proposals with the writes of the cluster\'s own manager: agree, late, differ, only-ours, only-theirs (counted on the replica that ran the ledger).',
      labelNames: ['controller', 'outcome'] as const,
      registers,
    }),
    localReadsTotal: new Counter({
      name: 'kcm_local_reads_total',
      help: 'Writes that asked for the informer cache\'s copy at their guarded version: hit (no API read) or miss (read first).',
      labelNames: ['result'] as const,
      registers,
    }),
    workflowCacheRuns: new Gauge({
      name: 'kcm_workflow_cache_runs',
      help: 'Workflow runs a controller\'s worker keeps in memory between their tasks (--max-cached-workflows bounds it), by controller.',
      labelNames: ['controller'] as const,
      registers,
      collect() {
        for (const [controller, count] of workflowCaches) this.set({ controller }, count());
      },
    }),
    workflowCaches,
  };
}

/**
 * The resource an API path is about, for metric labels: `/api/v1/namespaces/a/pods/x` is pods,
 * `/api/v1/namespaces/a` namespaces, `/apis/apps/v1/replicasets?watch=1` replicasets.
 */
export function resourceOfPath(path: string): string {
  const parts = path.replace(/\?.*$/, '').split('/').filter(Boolean);
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : [];
  if (rest[0] === 'namespaces' && rest.length >= 3) return rest[2];
  return rest[0] ?? 'other';
}
