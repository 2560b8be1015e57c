import { ManagedProcess, leaseHolder } from '../lib/managers';
import { PodWatch } from '../lib/pods';
import { informerHolderPid } from '../lib/temporal';
import { createReplicaSet, getReplicaSet, replicaSetSettled, warmUp } from '../lib/workloads';
import { sleep, waitFor } from '../lib/util';
import { RUN_DEFAULTS } from '../../starter/run-options';
import { Mode, Scenario, ScenarioContext } from './types';

const size = (mode: Mode) => ({ full: 10, quick: 5, smoke: 3 })[mode];

/** Delete one pod; ms until the watch shows a pod created after the delete. */
async function replaceOne(ctx: ScenarioContext, watch: PodWatch): Promise<number> {
  const victim = watch.live('web')[0];
  if (!victim) throw new Error('no live pod to delete');
  const t0 = Date.now();
  await ctx.stack.rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}/pods/${victim.name}`, { body: { preconditions: { uid: victim.uid }, gracePeriodSeconds: 0 } });
  const at = await watch.until('replacement pod', () => watch.seenSince(t0, 'web').some((p) => p.uid !== victim.uid), 180_000);
  return Math.min(at, ...watch.seenSince(t0, 'web').map((p) => p.seenAt)) - t0;
}

/**
 * Upstream: the first instance is started alone until it holds the Lease, so the leader is known
 * without reading logs (the Lease's holderIdentity is host_uuid, not a pid). Ours: the replica
 * running the informer activity, from the informer workflow's pending activity.
 */
async function startPair(ctx: ScenarioContext): Promise<ManagedProcess[]> {
  const controllers = ['replicaset'];
  if (ctx.subject === 'upstream') {
    await ctx.stack.rest.request('DELETE', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager').catch(() => undefined);
    const a = await ctx.startManager({ controllers, leaderElect: true }, 0);
    await waitFor('upstream leader holds the Lease', () => leaseHolder(ctx.stack), 60_000, 200);
    return [a, await ctx.startManager({ controllers, leaderElect: true }, 1)];
  }
  return Promise.all([ctx.startManager({ controllers }, 0), ctx.startManager({ controllers }, 1)]);
}

async function worker(ctx: ScenarioContext, procs: ManagedProcess[], leader: ManagedProcess | undefined): Promise<ManagedProcess> {
  if (ctx.subject === 'upstream') return leader!;
  const pid = await waitFor('a replica running the informer activity', async () => {
    const p = await informerHolderPid(ctx.temporal, ctx.taskQueue).catch(() => undefined);
    return procs.some((x) => x.pid === p && x.alive()) ? p : undefined;
  }, 60_000, 250);
  return procs.find((x) => x.pid === pid)!;
}

export const failover: Scenario = {
  id: 4,
  slug: 'failover',
  title: 'Failover',
  method: (mode) => `Two instances (upstream: --leader-elect=true on the kube-system/kube-controller-manager Lease, default ` +
    `15 s lease; ours: two \`run\` replicas on one task queue, default --informer-heartbeat-timeout ${RUN_DEFAULTS.informerHeartbeatTimeout}), a settled ` +
    `${size(mode)}-replica ReplicaSet. (a) kill -9 of the instance not doing the work (upstream: the standby; ours: ` +
    'the replica without the watch), then a pod deleted: ms until its replacement appears. A third instance is started, ' +
    'then (b) kill -9 of the instance doing the work (upstream: the Lease holder; ours: the replica running the informer ' +
    'activity), a pod deleted at once: ms until its replacement appears. Controllers: replicaset.',
  settings: () => ['default'],
  reps: (mode) => ({ full: 3, quick: 1, smoke: 1 })[mode],
  subjects: ['upstream', 'ours'],
  metrics: [
    { key: 'otherKillMs', label: '(a) kill -9 the idle instance, delete a pod: replaced after', unit: 'ms' },
    { key: 'workerKillMs', label: '(b) kill -9 the working instance, delete a pod: replaced after', unit: 'ms' },
  ],
  async run(ctx) {
    const { rest } = ctx.stack;
    const procs = await startPair(ctx);
    const leader = ctx.subject === 'upstream' ? procs[0] : undefined;
    await warmUp(rest, ctx.ns);
    await createReplicaSet(rest, ctx.ns, 'web', size(ctx.mode));
    await waitFor('ReplicaSet settled', async () => replicaSetSettled(await getReplicaSet(rest, ctx.ns, 'web')), 120_000, 250);
    const watch = await PodWatch.start(ctx.stack, ctx.ns);
    try {
      const busy = await worker(ctx, procs, leader);
      const idle = procs.find((p) => p !== busy)!;
      await idle.kill('SIGKILL');
      ctx.log(`killed idle pid ${idle.pid} (working: ${busy.pid})`);
      const otherKillMs = await replaceOne(ctx, watch);

      const third = await ctx.startManager({ controllers: ['replicaset'], leaderElect: ctx.subject === 'upstream' }, 2);
      procs.push(third);
      await sleep(2000);
      const busyNow = await worker(ctx, procs, leader);
      await busyNow.kill('SIGKILL');
      ctx.log(`killed working pid ${busyNow.pid}; pid ${third.pid} remains`);
      const workerKillMs = await replaceOne(ctx, watch);
      return { otherKillMs, workerKillMs };
    } finally {
      watch.stop();
    }
  },
};
