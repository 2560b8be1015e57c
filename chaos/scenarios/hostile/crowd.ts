import { waitFor } from '../../../bench/lib/util';
import type { ChaosContext, ChaosMode } from '../types';
import { eventReasons, get, list, post, type HostileItem, type Meta } from './item';

/**
 * One Service selecting 5,000 pods (1,100 quick: still past the Endpoints limit). Upstream's
 * Endpoints hold at most 1,000 addresses and say so in the over-capacity annotation; the
 * EndpointSlices hold every pod, 100 to a slice.
 */
const size = (mode: ChaosMode) => (mode === 'full' ? 5_000 : 1_100);
const NAME = 'crowd';
const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface Pod { metadata: Meta; status?: { podIP?: string; conditions?: Array<{ type: string; status: string }> } }
interface Node { metadata: Meta; spec?: { unschedulable?: boolean; taints?: Array<{ effect: string }> }; status?: { conditions?: Array<{ type: string; status: string }> } }

/** Nodes a pod may be put on directly: Ready, schedulable, without a NoSchedule or NoExecute taint. */
async function openNodes(ctx: ChaosContext): Promise<string[]> {
  const nodes = await list<Node>(ctx, '/api/v1/nodes');
  return nodes.filter((n) => !n.spec?.unschedulable && !(n.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule')
    && (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).map((n) => n.metadata.name).sort();
}
interface Address { ip: string }
interface Endpoints { metadata: Meta; subsets?: Array<{ addresses?: Address[]; notReadyAddresses?: Address[] }> }
interface Slice { metadata: Meta; endpoints?: Array<{ conditions?: { ready?: boolean } }> | null }

const podName = (i: number) => `crowd-${String(i).padStart(4, '0')}`;
const addresses = (e: Endpoints | undefined) => (e?.subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
const slices = (ctx: ChaosContext) => list<Slice>(ctx, `/apis/discovery.k8s.io/v1/namespaces/${ctx.ns}/endpointslices?labelSelector=${encodeURIComponent(`${SERVICE_NAME_LABEL}=${NAME}`)}`);
const endpointsIn = (ss: Slice[]) => ss.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0);

export const crowdedService: HostileItem = {
  slug: 'crowded-service',
  what: 'one Service selecting 5,000 pods (1,100 quick)',
  controllers: ['endpoint', 'endpointslice'],

  async prepare(ctx) {
    const n = size(ctx.mode);
    const indexes = Array.from({ length: n }, (_, i) => i);
    // put on the nodes directly, round robin: the entry is about endpoints, and the scheduler's
    // 50 binds a second would add half a minute per thousand pods to every pass
    const nodes = await openNodes(ctx);
    if (!nodes.length) throw new Error('no Ready, untainted node to put the crowd on');
    // a few writers at once: thousands of pods one by one would take minutes
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let i = indexes.shift(); i !== undefined; i = indexes.shift()) {
        await post(ctx, `/api/v1/namespaces/${ctx.ns}/pods`, {
          metadata: { name: podName(i), labels: { app: NAME } },
          spec: { nodeName: nodes[i % nodes.length], terminationGracePeriodSeconds: 0,
            containers: [{ name: 'app', image: 'registry.invalid/crowd:1', ports: [{ name: 'http', containerPort: 8080 }] }] },
        });
      }
    }));
    await waitFor(`${n} crowd pods ready`, async () => {
      const pods = await list<Pod>(ctx, `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${NAME}`);
      return pods.filter((p) => p.status?.podIP && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length === n;
    }, 600_000, 2_000);
  },

  async act(ctx) {
    await post(ctx, `/api/v1/namespaces/${ctx.ns}/services`, { metadata: { name: NAME }, spec: { selector: { app: NAME }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });
  },

  async settled(ctx) {
    const e = await get<Endpoints>(ctx, `/api/v1/namespaces/${ctx.ns}/endpoints/${NAME}`);
    return addresses(e) === 1000 && endpointsIn(await slices(ctx)) === size(ctx.mode);
  },

  async view(ctx) {
    const e = await get<Endpoints>(ctx, `/api/v1/namespaces/${ctx.ns}/endpoints/${NAME}`);
    const ss = await slices(ctx);
    return {
      endpoints: e && { addresses: addresses(e), overCapacity: e.metadata.annotations?.[OVER_CAPACITY] ?? null },
      slices: { count: ss.length, endpoints: endpointsIn(ss), ready: ss.reduce((n, s) => n + (s.endpoints ?? []).filter((x) => x.conditions?.ready).length, 0), largest: Math.max(0, ...ss.map((s) => s.endpoints?.length ?? 0)) },
      serviceWarnings: await eventReasons(ctx, ctx.ns, 'Service', NAME, 'Warning'),
    };
  },
  // no cleanup of its own: cleanNamespace deletes every pod of the scenario's namespace and waits until they are gone
};
