import { ApiError, type KubeRest } from '../../activities/kube/rest';
import { readinessLag } from '../lib/endpoints';
import type { PodReadiness } from '../lib/endpoints';
import type { ResourceUse } from '../lib/measure';
import { PodWatch } from '../lib/pods';
import { percentile } from '../lib/stats';
import { createReplicaSet, getReplicaSet, replicaSetSettled, warmUp } from '../lib/workloads';
import { sleep, waitFor } from '../lib/util';
import { inParallel } from './fleet';
import { RESOURCE_METRICS, resourceSample } from './types';
import type { MetricDef, Mode, Sample, Scenario } from './types';
import type { Client } from '@temporalio/client';
import { reactionStages, timedHistory } from '../lib/temporal';
import type { ReactionStages } from '../lib/temporal';

const size = (mode: Mode) => ({
  full: { services: 20, podsPerService: 5, changes: 2000, replicas: 20, calmDeletes: 100 },
  quick: { services: 10, podsPerService: 4, changes: 400, replicas: 10, calmDeletes: 20 },
  smoke: { services: 4, podsPerService: 2, changes: 40, replicas: 3, calmDeletes: 3 },
})[mode];

/**
 * Readiness PATCHes the storm keeps in flight: enough to keep a two-core stack's API server busy
 * (the storm goes as fast as the stack allows), few enough that one request is not queued behind
 * a long line of the benchmark's own.
 */
const IN_FLIGHT = 5;
/** Failed readiness PATCHes tolerated over one storm before the run is called failed. */
const MAX_PATCH_ERRORS = 50;
/** How long the Endpoints and EndpointSlices may take to show the storm's last state. */
const CATCH_UP_TIMEOUT_MS = 300_000;
const REPLACEMENT_TIMEOUT_MS = 120_000;

const STAGES: Array<[keyof ReactionStages, string]> = [
  ['toSignal', 'DELETE -> signal in the ReplicaSet workflow\'s history'],
  ['toTask', 'signal -> workflow task started'],
  ['toActivity', 'workflow task started -> createPods scheduled'],
  ['activityQueue', 'createPods scheduled -> started'],
  ['activityToSeen', 'createPods started -> replacement seen'],
];
const STAGE_METRICS: MetricDef[] = STAGES.flatMap(([key, label]) => [
  { key: `calm_${key}P99Ms`, label: `${label}, no storm, p99`, unit: 'ms' as const, only: 'ours' as const },
  { key: `storm_${key}P99Ms`, label: `${label}, during the storm, p99`, unit: 'ms' as const, only: 'ours' as const },
]);

/** p99 of each stage of the replacements, calm and storm, from the ReplicaSet workflow's history. */
async function stageSample(client: Client, workflowId: string, timed: Array<{ t0: number; seenAt: number; storm: boolean }>): Promise<Sample> {
  const events = await timedHistory(client, workflowId);
  const out: Sample = {};
  for (const storm of [false, true]) {
    const split = timed.filter((t) => t.storm === storm).map((t) => reactionStages(events, t.t0, t.seenAt, 'createPods')).filter((x): x is ReactionStages => !!x);
    if (!split.length) continue;
    for (const [key] of STAGES) out[`${storm ? 'storm' : 'calm'}_${key}P99Ms`] = percentile(split.map((x) => x[key]), 99);
  }
  return out;
}

const serviceName = (s: number) => `storm-${String(s).padStart(2, '0')}`;

/**
 * A pod as kwok runs it, selected by one Service. No owner: the storm is meant for the endpoints
 * controllers, and the ReplicaSet controller ignores pods that no ReplicaSet selects.
 */
const stormPod = (service: string, name: string) => ({
  metadata: { name, labels: { app: service } },
  spec: {
    containers: [{ name: 'app', image: 'registry.invalid/app:1', ports: [{ name: 'http', containerPort: 8080 }] }],
    terminationGracePeriodSeconds: 0,
  },
});

/**
 * One readiness change, as a kubelet reports a readiness probe turning: ContainersReady and Ready
 * in the pod's status subresource. kwok plays its "running" stage only on pods without a podIP,
 * so it never writes these conditions back (the endpoints e2e test relies on the same). A
 * readiness gate would not do here: with no kubelet, nothing recomputes Ready from a gate, and
 * the endpoints controllers read Ready.
 */
function setReady(rest: KubeRest, ns: string, pod: string, ready: boolean) {
  const now = new Date().toISOString();
  const status = ready ? 'True' : 'False';
  return rest.request('PATCH', `/api/v1/namespaces/${ns}/pods/${pod}/status`, {
    body: { status: { conditions: [{ type: 'ContainersReady', status, lastTransitionTime: now }, { type: 'Ready', status, lastTransitionTime: now }] } },
    contentType: 'application/strategic-merge-patch+json',
  });
}

interface StormResult {
  changes: number;
  ms: number;
  /** every storm pod's readiness once the storm is over */
  final: PodReadiness[];
}

/**
 * `total` readiness changes, IN_FLIGHT at a time, each worker flipping only pods of its own (so no
 * pod is patched twice at once), pod by pod round the Services. A failed PATCH is sent again with
 * the same readiness and counted once it succeeds.
 */
async function readinessStorm(rest: KubeRest, ns: string, pods: PodReadiness[], total: number, stopped: () => boolean): Promise<StormResult> {
  const state = pods.map((p) => ({ ...p }));
  const width = Math.min(IN_FLIGHT, state.length);
  let claimed = 0;
  let made = 0;
  let errors = 0;
  let failed = false;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: width }, async (_, w) => {
    const mine = state.filter((_p, i) => i % width === w);
    for (let k = 0; claimed < total; k++) {
      claimed++;
      const p = mine[k % mine.length];
      const want = !p.ready;
      for (;;) {
        if (stopped() || failed) throw new Error('storm stopped');
        try {
          await setReady(rest, ns, p.pod, want);
          break;
        } catch (e) {
          if (++errors > MAX_PATCH_ERRORS) {
            failed = true; // the other workers stop too
            throw new Error(`more than ${MAX_PATCH_ERRORS} readiness PATCHes failed; last: ${String(e)}`);
          }
          await sleep(100);
        }
      }
      p.ready = want;
      made++;
    }
  }));
  return { changes: made, ms: Date.now() - t0, final: state };
}

/** Until the Endpoints and EndpointSlices of every storm Service show each pod's readiness as wanted. */
async function endpointsShow(rest: KubeRest, ns: string, want: PodReadiness[], timeoutMs: number, stopped: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (stopped()) throw new Error('stopped waiting for the endpoints');
    try {
      const lag = await readinessLag(rest, ns, want);
      if (!lag.endpoints && !lag.slices) return;
      last = `${lag.endpoints} pods wrong in Endpoints, ${lag.slices} in EndpointSlices`;
    } catch (e) {
      last = String(e); // the API server may be busy: not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for the endpoints to show every pod's readiness (${last})`);
    await sleep(250);
  }
}

export const storm: Scenario = {
  id: 8,
  slug: 'storm',
  title: 'Pod replacement during a readiness storm',
  method: (mode) => {
    const s = size(mode);
    const pods = s.services * s.podsPerService;
    return `${s.services} Services, each selecting ${s.podsPerService} pods of its own (${pods} pods, created directly: no owner, so the storm ` +
      'falls on the endpoints controllers and the ReplicaSet controller only sees pods no ReplicaSet selects), ' +
      `and apart from them a ${s.replicas}-replica ReplicaSet \`web\` that no Service selects; all settled, the Endpoints and ` +
      'EndpointSlices showing every pod Ready. **No storm:** ' +
      `${s.calmDeletes} \`web\` pods deleted one at a time, each after the previous one was replaced; latency from the DELETE ` +
      'call to the pod watch showing the replacement, as in scenario 2. **Storm:** the benchmark client flips the readiness ' +
      `of the Services' pods, round the Services, with ${IN_FLIGHT} requests in flight (as fast as the stack allows), until ` +
      `${s.changes} changes are made; a change is one PATCH of the pod's status subresource setting ContainersReady and Ready to ` +
      'the opposite of what they were, as a kubelet reports a readiness probe turning (kwok leaves them alone once the pod runs). ' +
      'Meanwhile `web` pods are deleted one at a time again, from the storm\'s first change until the Endpoints and ' +
      'EndpointSlices of every Service show each pod\'s final readiness, and timed the same way. Storm duration is from the ' +
      'first change sent to the last one answered; catch-up from then until the Endpoints and EndpointSlices show it (polled ' +
      'every 250 ms). "storm p99 / no-storm p99" is of one repetition, in percent; the issue asks for at most 120. p50/p99 are ' +
      'nearest-rank over the deletions of one repetition. CPU/RSS/API/Temporal figures cover the storm phase only (the API ' +
      `count includes the storm's own PATCHes, the same for both). Controllers: replicaset, endpoint, endpointslice.`;
  },
  settings: () => ['default'],
  // one repetition takes minutes at full size
  reps: () => 1,
  subjects: ['upstream', 'ours'],
  metrics: [
    { key: 'calmP50Ms', label: 'delete -> replacement, no storm, p50', unit: 'ms' },
    { key: 'calmP99Ms', label: 'delete -> replacement, no storm, p99', unit: 'ms' },
    { key: 'calmMaxMs', label: 'delete -> replacement, no storm, max', unit: 'ms' },
    { key: 'stormP50Ms', label: 'delete -> replacement, during the storm, p50', unit: 'ms' },
    { key: 'stormP99Ms', label: 'delete -> replacement, during the storm, p99', unit: 'ms' },
    { key: 'stormMaxMs', label: 'delete -> replacement, during the storm, max', unit: 'ms' },
    { key: 'stormOverCalmP99Pct', label: 'storm p99 / no-storm p99, % (goal: at most 120)', unit: 'count', noRatio: true },
    { key: 'stormDeletes', label: 'deletions timed during the storm', unit: 'count', noRatio: true },
    { key: 'readinessChanges', label: 'readiness changes made', unit: 'count', noRatio: true },
    { key: 'stormMs', label: 'storm duration (first change sent to last answered)', unit: 'ms' },
    { key: 'catchUpMs', label: 'last change -> Endpoints and EndpointSlices show it all', unit: 'ms' },
    ...STAGE_METRICS,
    ...RESOURCE_METRICS,
  ],
  async run(ctx) {
    const s = size(ctx.mode);
    const { rest } = ctx.stack;
    const { ns } = ctx;
    const m = await ctx.startManager({ controllers: ['replicaset', 'endpoint', 'endpointslice'] });
    await warmUp(rest, ns);

    // pod i is replica floor(i / services) of Service i % services, so consecutive pods belong to different Services
    const pods: PodReadiness[] = Array.from({ length: s.services * s.podsPerService }, (_, i) => {
      const service = serviceName(i % s.services);
      return { service, pod: `${service}-${Math.floor(i / s.services)}`, ready: true };
    });
    const services = Array.from({ length: s.services }, (_, i) => serviceName(i));
    try {
      await inParallel(services, 10, (name) => rest.request('POST', `/api/v1/namespaces/${ns}/services`, {
        body: { metadata: { name }, spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
      }));
      await inParallel(pods, 10, (p) => rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: stormPod(p.service, p.pod) }));
      await createReplicaSet(rest, ns, 'web', s.replicas);
      const setupTimeout = 120_000 + (pods.length + s.replicas) * 1000;
      await waitFor('ReplicaSet web settled', async () => replicaSetSettled(await getReplicaSet(rest, ns, 'web')), setupTimeout, 250);
      await endpointsShow(rest, ns, pods, setupTimeout);

      const watch = await PodWatch.start(ctx.stack, ns);
      try {
        /** Delete one live `web` pod and time until the watch shows its replacement. */
        const timed: Array<{ t0: number; seenAt: number; storm: boolean }> = [];
        let inStorm = false;
        const replaceOne = async (what: string): Promise<number> => {
          let victim: { uid: string; name: string } | undefined;
          let t0 = 0;
          // a pod the watch still shows may already be gone (its deletion event not read yet): take the next
          for (let attempt = 0; !victim; attempt++) {
            const candidate = watch.live('web')[0];
            if (!candidate) throw new Error('no live web pod to delete');
            t0 = Date.now();
            try {
              await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods/${candidate.name}`, {
                body: { preconditions: { uid: candidate.uid }, gracePeriodSeconds: 0 },
              });
              victim = candidate;
            } catch (e) {
              if (!(e instanceof ApiError && (e.status === 404 || e.status === 409)) || attempt >= 20) throw e;
              watch.pods.delete(candidate.uid);
            }
          }
          const gone = victim;
          const at = await watch.until(what, () => watch.seenSince(t0, 'web').some((p) => p.uid !== gone.uid), REPLACEMENT_TIMEOUT_MS);
          const seenAt = Math.min(at, ...watch.seenSince(t0, 'web').map((p) => p.seenAt));
          timed.push({ t0, seenAt, storm: inStorm });
          return seenAt - t0;
        };

        const calm: number[] = [];
        for (let i = 0; i < s.calmDeletes; i++) calm.push(await replaceOne(`replacement ${i + 1} (no storm)`));

        const window = await ctx.openWindow(() => [m]);
        let use: ResourceUse | undefined;
        let done: StormResult & { catchUpMs: number };
        const during: number[] = [];
        try {
          let stop = false;
          const stopped = () => stop;
          const phase = (async () => {
            const result = await readinessStorm(rest, ns, pods, s.changes, stopped);
            const t = Date.now();
            await endpointsShow(rest, ns, result.final, CATCH_UP_TIMEOUT_MS, stopped);
            return { ...result, catchUpMs: Date.now() - t };
          })();
          let over = false;
          inStorm = true;
          phase.then(() => { over = true; }, () => { over = true; });
          try {
            // the first deletion goes out with the storm's first changes; none starts once the endpoints have caught up
            while (!over) during.push(await replaceOne(`replacement ${during.length + 1} during the storm`));
          } finally {
            stop = !over;
            await phase.catch(() => undefined);
          }
          done = await phase;
          use = await window.close();
        } finally {
          // a failed run stops its samplers too
          if (!use) await window.close().catch(() => undefined);
        }
        const calmP99 = percentile(calm, 99);
        const stormP99 = percentile(during, 99);
        ctx.log(`no storm: ${calm.length} deletions; storm: ${done.changes} changes in ${done.ms} ms, caught up ${done.catchUpMs} ms later, ${during.length} deletions`);
        const stages = ctx.subject === 'ours' ? await stageSample(ctx.temporal, `replicaset/${ns}/web`, timed) : {};
        return {
          ...stages,
          calmP50Ms: percentile(calm, 50), calmP99Ms: calmP99, calmMaxMs: Math.max(...calm),
          stormP50Ms: percentile(during, 50), stormP99Ms: stormP99, stormMaxMs: Math.max(...during),
          stormOverCalmP99Pct: (stormP99 / calmP99) * 100,
          stormDeletes: during.length,
          readinessChanges: done.changes,
          stormMs: done.ms,
          catchUpMs: done.catchUpMs,
          ...resourceSample(use),
        };
      } finally {
        watch.stop();
      }
    } finally {
      // Services first, while the managers still run, so their endpoints go the ordinary way; the
      // runner then empties the namespace of pods and workloads
      await inParallel(services, 10, (name) => rest.request('DELETE', `/api/v1/namespaces/${ns}/services/${name}`).catch(() => undefined));
      await sleep(1000);
      await rest.request('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { body: {} }).catch(() => undefined);
    }
  },
};
