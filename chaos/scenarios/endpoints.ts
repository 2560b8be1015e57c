import type { AuditEvent } from '../../bench/lib/audit';
import { cleanNamespace } from '../../bench/lib/stack';
import { sleep, waitFor } from '../../bench/lib/util';
import { ApiError } from '../../activities/kube/rest';
import { CONTROLLER_USER_PREFIX } from '../checks';
import type { ChaosContext, ChaosMode, ChaosScenario } from './types';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
/** both managers' default --max-endpoints-per-slice */
const MAX_PER_SLICE = 100;
/**
 * Every pod lingers this long once deleted with a grace period (kwok's termination delay), so the
 * few the churn leaves terminating are still there, terminating, when the end state is read. The
 * churn's own deletions pass gracePeriodSeconds 0 and are gone at once.
 */
const LINGER_MS = 600_000;

/** One Service of the scenario, as the harness makes it. */
export interface ServiceSpec {
  name: string;
  selector: Record<string, string>;
  headless?: boolean;
  publishNotReadyAddresses?: boolean;
  labels?: Record<string, string>;
}

/**
 * `web` selects every pod; `web-all` the same pods, headless and publishing not-ready addresses
 * (terminating and unready pods show differently there); `gone` is deleted halfway through the
 * churn (its Endpoints by the endpoints controller, its slices by the garbage collector through
 * their owner reference); `late` is created then, selecting half the pods.
 */
export const SERVICES: Record<'web' | 'all' | 'gone' | 'late', ServiceSpec> = {
  web: { name: 'web', selector: { app: 'web' }, labels: { tier: 'front' } },
  all: { name: 'web-all', selector: { app: 'web' }, headless: true, publishNotReadyAddresses: true },
  gone: { name: 'gone', selector: { app: 'web' } },
  late: { name: 'late', selector: { app: 'web', half: 'a' } },
};

const podName = (i: number) => `web-${String(i).padStart(3, '0')}`;
const podIndex = (name: string) => Number(name.slice(4));

/** What one round of the churn does; readiness is given as the value to write, not as a toggle. */
export interface ChurnRound {
  /** deleted with gracePeriodSeconds 0 and created again under the same name (a new UID and IP) */
  recreate: string[];
  /** readiness written to pods that kwok already runs */
  flip: Array<{ pod: string; ready: boolean }>;
}

export interface ChurnPlan {
  pods: string[];
  rounds: ChurnRound[];
  /** after this round `gone` is deleted and `late` created */
  switchAfter: number;
  /** deleted with a grace period after the last round: they end terminating */
  terminate: string[];
  pauseMs: number;
}

/** Where each pod ends: its readiness (Ready condition), and whether it is terminating. */
export interface PodWant {
  ready: boolean;
  terminating: boolean;
}

/**
 * The churn, the same for upstream and ours (no randomness: both end in the same state). Each
 * round recreates about one pod in `rounds` (every pod once over the run) and writes readiness to
 * about a quarter of the others, the opposite of what it was; a pod recreated comes back Ready
 * (kwok's running stage), so it is left alone in its own round. A few pods, spread over the
 * range, are deleted at the end and stay terminating.
 */
export function churnPlan(mode: ChaosMode): ChurnPlan {
  const p = mode === 'full' ? { pods: 250, rounds: 12, terminate: 6, pauseMs: 4_000 } : { pods: 60, rounds: 8, terminate: 3, pauseMs: 3_000 };
  const pods = Array.from({ length: p.pods }, (_, i) => podName(i));
  const ready = new Map(pods.map((n) => [n, true]));
  const rounds: ChurnRound[] = [];
  for (let r = 0; r < p.rounds; r++) {
    const recreate = pods.filter((_, i) => i % p.rounds === r);
    for (const n of recreate) ready.set(n, true);
    const flip = pods.filter((n, i) => (i + r) % 4 === 0 && !recreate.includes(n)).map((n) => ({ pod: n, ready: !ready.get(n) }));
    for (const f of flip) ready.set(f.pod, f.ready);
    rounds.push({ recreate, flip });
  }
  const step = Math.floor(p.pods / p.terminate);
  const terminate = Array.from({ length: p.terminate }, (_, k) => podName(k * step + 1));
  return { pods, rounds, switchAfter: Math.floor(p.rounds / 2), terminate, pauseMs: p.pauseMs };
}

/** Each pod's end state as the plan leaves it. */
export function plannedEnd(plan: ChurnPlan): Map<string, PodWant> {
  const out = new Map(plan.pods.map((n): [string, PodWant] => [n, { ready: true, terminating: false }]));
  for (const r of plan.rounds) {
    for (const n of r.recreate) out.set(n, { ready: true, terminating: false });
    for (const f of r.flip) out.set(f.pod, { ready: f.ready, terminating: false });
  }
  for (const n of plan.terminate) out.set(n, { ...out.get(n)!, terminating: true });
  return out;
}

// What the checks read of the objects.
interface Condition { type: string; status: string }
export interface PodObj {
  metadata: { name: string; uid?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: { phase?: string; podIP?: string; conditions?: Condition[] };
}
export interface ServiceObj {
  metadata: { name: string; uid?: string; labels?: Record<string, string> };
  spec?: { selector?: Record<string, string>; clusterIP?: string; publishNotReadyAddresses?: boolean };
}
interface ObjectRef { kind?: string; name?: string; namespace?: string; uid?: string }
interface Address { ip: string; hostname?: string; nodeName?: string; targetRef?: ObjectRef }
interface Port { name?: string; port?: number; protocol?: string; appProtocol?: string }
export interface EndpointsObj {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  subsets?: Array<{ addresses?: Address[]; notReadyAddresses?: Address[]; ports?: Port[] }>;
}
interface OwnerRef { kind?: string; name?: string; uid?: string; controller?: boolean; blockOwnerDeletion?: boolean }
export interface SliceObj {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: OwnerRef[] };
  addressType?: string;
  endpoints?: Array<{ addresses?: string[]; hostname?: string; nodeName?: string; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean }; targetRef?: ObjectRef }> | null;
  ports?: Port[] | null;
}
/** Everything the scenario's checks read, in one namespace. */
export interface World {
  pods: PodObj[];
  services: ServiceObj[];
  endpoints: EndpointsObj[];
  slices: SliceObj[];
}

/** What the cluster should hold at a moment: each pod's state, and which Services exist. */
export interface Expectation {
  pods: Map<string, PodWant>;
  services: string[];
  absent: string[];
}

const isReady = (p: PodObj) => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const isTerminal = (p: PodObj) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const selects = (s: ServiceObj, p: PodObj) => {
  const sel = s.spec?.selector;
  return !!sel && Object.keys(sel).length > 0 && Object.entries(sel).every(([k, v]) => p.metadata.labels?.[k] === v);
};

/** A few of a list's items in a violation, so one broken run does not print 250 lines. */
function listed(what: string, items: string[]): string[] {
  if (!items.length) return [];
  const shown = items.slice(0, 5).join('; ');
  return [`${what}: ${items.length} (${shown}${items.length > 5 ? '; ...' : ''})`];
}

/**
 * The Endpoints a Service should have, as upstream's endpoints controller builds them: a pod with
 * an IP that has not finished, and not terminating unless the Service publishes not-ready
 * addresses; Ready (or published anyway) under addresses, otherwise under notReadyAddresses.
 * Each entry is "<ip> <pod>".
 */
export function wantedEndpoints(svc: ServiceObj, pods: PodObj[]): { ready: string[]; notReady: string[] } {
  const publish = svc.spec?.publishNotReadyAddresses === true;
  const out = { ready: [] as string[], notReady: [] as string[] };
  for (const p of pods) {
    if (!selects(svc, p) || !p.status?.podIP || isTerminal(p)) continue;
    if (p.metadata.deletionTimestamp && !publish) continue;
    (publish || isReady(p) ? out.ready : out.notReady).push(`${p.status.podIP} ${p.metadata.name}`);
  }
  return { ready: out.ready.sort(), notReady: out.notReady.sort() };
}

/** One endpoint of a slice as the checks compare it. */
const endpointKey = (ip: string, pod: string | undefined, c: { ready?: boolean; serving?: boolean; terminating?: boolean } | undefined) =>
  `${ip} ${pod ?? '?'} ready=${c?.ready === true} serving=${c?.serving === true} terminating=${c?.terminating === true}`;

/**
 * The endpoints a Service's EndpointSlices should hold, as upstream's endpointslice controller
 * builds them: every pod with an IP that has not finished, terminating ones included; serving is
 * the pod's readiness, ready is serving and not terminating, or true when the Service publishes
 * not-ready addresses.
 */
export function wantedSliceEndpoints(svc: ServiceObj, pods: PodObj[]): string[] {
  const publish = svc.spec?.publishNotReadyAddresses === true;
  return pods.filter((p) => selects(svc, p) && !!p.status?.podIP && !isTerminal(p)).map((p) => {
    const serving = isReady(p);
    const terminating = !!p.metadata.deletionTimestamp;
    return endpointKey(p.status!.podIP!, p.metadata.name, { ready: publish || (serving && !terminating), serving, terminating });
  }).sort();
}

function setDiff(what: string, want: string[], got: string[]): string[] {
  const w = new Set(want);
  const g = new Set(got);
  return [
    ...listed(`${what}: missing`, want.filter((x) => !g.has(x))),
    ...listed(`${what}: not wanted`, got.filter((x) => !w.has(x))),
  ];
}

function podProblems(want: Map<string, PodWant>, pods: PodObj[]): string[] {
  const byName = new Map(pods.map((p) => [p.metadata.name, p]));
  const off: string[] = [];
  for (const [name, w] of want) {
    const p = byName.get(name);
    if (!p) off.push(`${name} missing`);
    else if (!p.status?.podIP) off.push(`${name} has no IP yet`);
    else if (isReady(p) !== w.ready) off.push(`${name} ${w.ready ? 'not Ready' : 'Ready'}`);
    else if (!!p.metadata.deletionTimestamp !== w.terminating) off.push(`${name} ${w.terminating ? 'not terminating' : 'terminating'}`);
  }
  off.push(...pods.filter((p) => !want.has(p.metadata.name)).map((p) => `${p.metadata.name} not in the plan`));
  return listed('pods not as the churn left them', off);
}

/**
 * Everything that keeps the namespace from the state `want` asks for, or breaks what must always
 * hold: pods as planned; each Service's Endpoints and EndpointSlices showing exactly its pods as
 * upstream's controllers would; no address twice across a Service's slices, no slice over the
 * per-slice limit, no empty slice beside slices with endpoints (upstream deletes a slice emptied
 * and keeps a placeholder only when there are no endpoints at all); every slice owned by the
 * existing Service it is labelled for; no Endpoints or slice left for a Service that is gone.
 * Empty when the state holds.
 */
export function endStateProblems(want: Expectation, w: World): string[] {
  const out = podProblems(want.pods, w.pods);
  const services = new Map(w.services.map((s) => [s.metadata.name, s]));
  for (const n of want.services) if (!services.has(n)) out.push(`Service ${n} missing`);
  for (const n of want.absent) if (services.has(n)) out.push(`Service ${n} still there`);
  const uids = new Set(w.services.map((s) => s.metadata.uid));

  for (const svc of w.services) {
    if (!svc.spec?.selector) continue;
    const name = svc.metadata.name;
    const ep = w.endpoints.find((e) => e.metadata.name === name);
    const wantEp = wantedEndpoints(svc, w.pods);
    if (!ep) out.push(`Endpoints ${name} missing`);
    else {
      const shown = (k: 'addresses' | 'notReadyAddresses') => (ep.subsets ?? []).flatMap((s) => (s[k] ?? []).map((a) => `${a.ip} ${a.targetRef?.name ?? '?'}`)).sort();
      out.push(...setDiff(`Endpoints ${name} addresses`, wantEp.ready, shown('addresses')));
      out.push(...setDiff(`Endpoints ${name} notReadyAddresses`, wantEp.notReady, shown('notReadyAddresses')));
    }

    const slices = w.slices.filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name);
    const flat = slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => (e.addresses ?? []).map((ip) => ({ ip, key: endpointKey(ip, e.targetRef?.name, e.conditions) }))));
    const wantSlices = wantedSliceEndpoints(svc, w.pods);
    out.push(...setDiff(`EndpointSlices of ${name}`, wantSlices, flat.map((f) => f.key)));
    const seen = new Map<string, number>();
    for (const f of flat) seen.set(f.ip, (seen.get(f.ip) ?? 0) + 1);
    out.push(...listed(`addresses in more than one endpoint of ${name}'s slices`, [...seen].filter(([, c]) => c > 1).map(([ip, c]) => `${ip} x${c}`)));
    out.push(...listed(`slices of ${name} over ${MAX_PER_SLICE} endpoints`, slices.filter((s) => (s.endpoints ?? []).length > MAX_PER_SLICE).map((s) => `${s.metadata.name}: ${(s.endpoints ?? []).length}`)));
    if (wantSlices.length) out.push(...listed(`empty slices of ${name} beside endpoints`, slices.filter((s) => !(s.endpoints ?? []).length).map((s) => s.metadata.name)));
    if (!slices.length) out.push(`no EndpointSlice for ${name}`);
  }

  for (const e of w.endpoints) if (!services.has(e.metadata.name)) out.push(`Endpoints ${e.metadata.name} left for a Service that does not exist`);
  for (const s of w.slices) {
    const svcName = s.metadata.labels?.[SERVICE_NAME_LABEL];
    const owners = (s.metadata.ownerReferences ?? []).filter((o) => o.controller);
    const svc = svcName === undefined ? undefined : services.get(svcName);
    if (!svc) out.push(`EndpointSlice ${s.metadata.name} for Service ${svcName ?? '(no label)'}, which does not exist`);
    if (!owners.some((o) => o.kind === 'Service' && uids.has(o.uid))) out.push(`EndpointSlice ${s.metadata.name} owned by no existing Service (orphan)`);
    else if (svc && !owners.some((o) => o.uid === svc.metadata.uid && o.name === svcName)) out.push(`EndpointSlice ${s.metadata.name} labelled for ${svcName} but owned by another Service`);
  }
  return out;
}

/**
 * Writes of the deleted Service's Endpoints after its deletion, from the audit log (in order): a
 * controller that wrote them back would leave a zombie the end state may not show if it later
 * deleted it again.
 */
export function endpointsWrittenAfterDelete(audit: AuditEvent[], ns: string, service: string): number {
  const deletedAt = audit.findIndex((e) => e.verb === 'delete' && e.objectRef?.resource === 'services' && e.objectRef.namespace === ns
    && e.objectRef.name === service && e.responseStatus?.code === 200);
  if (deletedAt < 0) return 0;
  return audit.slice(deletedAt + 1).filter((e) => (e.verb === 'create' || e.verb === 'update' || e.verb === 'patch')
    && e.objectRef?.resource === 'endpoints' && e.objectRef.namespace === ns && e.objectRef.name === service
    && e.user.username.startsWith(CONTROLLER_USER_PREFIX) && (e.responseStatus?.code === 200 || e.responseStatus?.code === 201)).length;
}

const strip = (o: Record<string, string> | undefined) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => k !== TRIGGER_TIME).sort(([a], [b]) => a.localeCompare(b)));
const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

/**
 * What a user sees, without what differs between any two runs: pod names stand for the addresses
 * (kwok hands out IPs in its own order), and node names and trigger times are left out. Slices are
 * shown by their shape and all their endpoints together: which endpoints share a slice, and so how
 * many slices a Service has, follows the order upstream's reconciler pops endpoints off a set and
 * which slices a sync happens to touch, so it is not compared (the per-slice limit and "no empty
 * slice" are checked as invariants instead).
 */
export function outcomeOf(w: World): unknown {
  // which node a pod runs on is the scheduler's pick; that the address names one is the controller's
  const names = (as: Address[] | undefined) => (as ?? []).map((a) => `${a.targetRef?.name ?? '?'}${a.nodeName ? '' : ' (no nodeName)'}`).sort();
  return {
    services: w.services.map((s) => s.metadata.name).sort(),
    endpoints: w.endpoints.map((e) => ({
      name: e.metadata.name, labels: strip(e.metadata.labels), annotations: strip(e.metadata.annotations),
      subsets: (e.subsets ?? []).map((s) => ({ addresses: names(s.addresses), notReadyAddresses: names(s.notReadyAddresses), ports: s.ports })),
    })).sort((a, b) => a.name.localeCompare(b.name)),
    slices: [...new Set(w.slices.map((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] ?? '?'))].sort().map((service) => {
      const mine = w.slices.filter((s) => (s.metadata.labels?.[SERVICE_NAME_LABEL] ?? '?') === service);
      return {
        service,
        shapes: [...new Set(mine.map((s) => JSON.stringify({
          labels: strip(s.metadata.labels), annotations: strip(s.metadata.annotations), addressType: s.addressType, ports: s.ports ?? null,
          owners: (s.metadata.ownerReferences ?? []).map((o) => ({ kind: o.kind, name: o.name, controller: o.controller, blockOwnerDeletion: o.blockOwnerDeletion })),
        })))].sort(),
        endpoints: mine.flatMap((s) => (s.endpoints ?? []).map((e) => ({ pod: e.targetRef?.name, kind: e.targetRef?.kind, hostname: e.hostname, nodeName: e.nodeName ? 'set' : undefined, addresses: (e.addresses ?? []).length, conditions: e.conditions })))
          .sort(byText),
      };
    }),
  };
}

const servicePath = (ctx: ChaosContext) => `/api/v1/namespaces/${ctx.ns}/services`;
const podsPath = (ctx: ChaosContext) => `/api/v1/namespaces/${ctx.ns}/pods`;

async function readWorld(ctx: ChaosContext): Promise<World> {
  const list = async <T>(p: string) => (await ctx.rest.request<{ items: T[] | null }>('GET', p)).body.items ?? [];
  const [pods, services, endpoints, slices] = await Promise.all([
    list<PodObj>(`${podsPath(ctx)}?labelSelector=app%3Dweb`),
    list<ServiceObj>(servicePath(ctx)),
    list<EndpointsObj>(`/api/v1/namespaces/${ctx.ns}/endpoints`),
    list<SliceObj>(`/apis/discovery.k8s.io/v1/namespaces/${ctx.ns}/endpointslices`),
  ]);
  return { pods, services, endpoints, slices };
}

const serviceBody = (s: ServiceSpec) => ({
  metadata: { name: s.name, ...(s.labels ? { labels: s.labels } : {}) },
  spec: {
    selector: s.selector, ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    ...(s.headless ? { clusterIP: 'None' } : {}), ...(s.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
  },
});

const podBody = (name: string) => ({
  metadata: {
    name, labels: { app: 'web', half: podIndex(name) % 2 ? 'b' : 'a' },
    annotations: { 'kwok.temporal-kcm.dev/termination-delay-ms': String(LINGER_MS) },
  },
  spec: {
    containers: [{ name: 'app', image: 'registry.invalid/web:1', ports: [{ name: 'http', containerPort: 8080 }] }],
    terminationGracePeriodSeconds: 30,
  },
});

/** `fn` over `items`, `width` at a time: a round's writes together, without a burst of hundreds. */
async function inBatches<T>(items: T[], width: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

/** A readiness probe turning, as a kubelet reports it (see bench/scenarios/storm.ts, setReady). */
function setReady(ctx: ChaosContext, pod: string, ready: boolean) {
  const now = new Date().toISOString();
  const status = ready ? 'True' : 'False';
  return ctx.rest.request('PATCH', `${podsPath(ctx)}/${pod}/status`, {
    body: { status: { conditions: [{ type: 'ContainersReady', status, lastTransitionTime: now }, { type: 'Ready', status, lastTransitionTime: now }] } },
    contentType: 'application/strategic-merge-patch+json',
  });
}

/** Deleted at once and made again under the name; a create racing the delete's last step is tried again. */
async function recreate(ctx: ChaosContext, pod: string): Promise<void> {
  await ctx.rest.request('DELETE', `${podsPath(ctx)}/${pod}`, { body: { gracePeriodSeconds: 0 } }).catch((e: unknown) => {
    if (!(e instanceof ApiError && e.status === 404)) throw e;
  });
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.rest.request('POST', podsPath(ctx), { body: podBody(pod) });
      return;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409) || attempt >= 50) throw e;
      await sleep(200);
    }
  }
}

/** Every pod of the plan there with an IP: kwok has run the ones made last, and their readiness is theirs to set. */
async function allRunning(ctx: ChaosContext, plan: ChurnPlan): Promise<void> {
  await waitFor('the churned pods running', async () => {
    const pods = (await readWorld(ctx)).pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.podIP);
    return plan.pods.every((n) => pods.some((p) => p.metadata.name === n));
  }, 120_000, 250);
}

const startState = (plan: ChurnPlan): Expectation => ({
  pods: new Map(plan.pods.map((n) => [n, { ready: true, terminating: false }])),
  services: [SERVICES.web.name, SERVICES.all.name, SERVICES.gone.name],
  absent: [SERVICES.late.name],
});
const endState = (plan: ChurnPlan): Expectation => ({
  pods: plannedEnd(plan),
  services: [SERVICES.web.name, SERVICES.all.name, SERVICES.late.name],
  absent: [SERVICES.gone.name],
});

/**
 * 250 pods (60 quick) behind three Services, churned while the replicas die: each round recreates
 * some pods (new UID, new IP) and turns the readiness of a quarter of the others; halfway one
 * Service is deleted and another created; at the end a few pods are deleted and stay terminating.
 * Exact at the end: each Service's Endpoints and EndpointSlices show exactly its pods, ready, not
 * ready and terminating as upstream's controllers show them, no address twice, no slice or
 * Endpoints for the deleted Service, no slice without its Service.
 */
export const endpointsScenario: ChaosScenario = {
  slug: 'endpoints',
  title: (mode) => `a ${churnPlan(mode).pods.length}-pod endpoints churn`,
  // the garbage collector removes the deleted Service's slices (they are not the endpointslice controller's to delete)
  controllers: ['endpoint', 'endpointslice', 'garbagecollector'],

  async prepare(ctx) {
    const plan = churnPlan(ctx.mode);
    for (const s of [SERVICES.web, SERVICES.all, SERVICES.gone]) await ctx.rest.request('POST', servicePath(ctx), { body: serviceBody(s) });
    await inBatches(plan.pods, 25, (n) => ctx.rest.request('POST', podsPath(ctx), { body: podBody(n) }));
    const want = startState(plan);
    let last: string[] = [];
    await waitFor('every pod Ready in the Endpoints and EndpointSlices', async () => {
      last = endStateProblems(want, await readWorld(ctx));
      return last.length === 0;
    }, 300_000, 500).catch((e: unknown) => { throw new Error(`${String(e)}; still: ${last.join(' | ')}`); });
  },

  async act(ctx) {
    const plan = churnPlan(ctx.mode);
    for (const [r, round] of plan.rounds.entries()) {
      await allRunning(ctx, plan);
      await inBatches(round.recreate, 10, (n) => recreate(ctx, n));
      await inBatches(round.flip, 10, (f) => setReady(ctx, f.pod, f.ready));
      if (r === plan.switchAfter) {
        await ctx.rest.request('DELETE', `${servicePath(ctx)}/${SERVICES.gone.name}`);
        await ctx.rest.request('POST', servicePath(ctx), { body: serviceBody(SERVICES.late) });
      }
      await sleep(plan.pauseMs);
    }
    await allRunning(ctx, plan);
    await inBatches(plan.terminate, 10, (n) => ctx.rest.request('DELETE', `${podsPath(ctx)}/${n}`));
  },

  converged: async (ctx) => endStateProblems(endState(churnPlan(ctx.mode)), await readWorld(ctx)).length === 0,

  outcome: async (ctx) => outcomeOf(await readWorld(ctx)),

  async violations(ctx, audit) {
    const out = endStateProblems(endState(churnPlan(ctx.mode)), await readWorld(ctx));
    const zombie = endpointsWrittenAfterDelete(audit, ctx.ns, SERVICES.gone.name);
    if (zombie) out.push(`Endpoints ${SERVICES.gone.name} written ${zombie} times after its Service was deleted`);
    return out;
  },

  async cleanup(ctx) {
    // the terminating pods would otherwise linger for kwok's delay
    await ctx.rest.request('DELETE', podsPath(ctx), { body: { gracePeriodSeconds: 0 } }).catch(() => undefined);
    await cleanNamespace(ctx.rest, ctx.ns);
  },
};
