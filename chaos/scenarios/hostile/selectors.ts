import { deploymentComplete, type WorkloadStatus } from '../../../bench/lib/workloads';
import { exactly } from '../../checks';
import type { ChaosContext } from '../types';
import { conditionsView, get, list, podTemplate, post, type Condition, type HostileItem, type Meta } from './item';

/**
 * Two ReplicaSets with one selector, and two Deployments with one selector and one template (so
 * even their ReplicaSets' pod-template-hash labels are equal). Upstream keeps them apart by the
 * controller reference alone: each owner counts only the pods (ReplicaSets) it controls, and each
 * reaches its own replicas.
 */
const RS = [{ name: 'overlap-rs-a', replicas: 3 }, { name: 'overlap-rs-b', replicas: 2 }];
const DEPLOYMENTS = [{ name: 'overlap-deploy-a', replicas: 2 }, { name: 'overlap-deploy-b', replicas: 3 }];
const RS_APP = 'overlap-rs';
const DEPLOY_APP = 'overlap-deploy';

type Workload = WorkloadStatus & { metadata: Meta; status?: WorkloadStatus['status'] & { conditions?: Condition[] } };
interface Pod { metadata: Meta }

const rsPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/replicasets`;
const deployPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;
const podsOf = (ctx: ChaosContext, app: string) => list<Pod>(ctx, `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${app}`).then((ps) => ps.filter((p) => !p.metadata.deletionTimestamp));
const controllerUid = (m: Meta) => (m.ownerReferences ?? []).find((r) => r.controller)?.uid;

async function read(ctx: ChaosContext) {
  const [rss, deployments, rsPods, deployPods] = await Promise.all([
    list<Workload>(ctx, rsPath(ctx.ns)), list<Workload>(ctx, deployPath(ctx.ns)), podsOf(ctx, RS_APP), podsOf(ctx, DEPLOY_APP),
  ]);
  return { rss, deployments, rsPods, deployPods };
}

export const overlappingSelectors: HostileItem = {
  slug: 'overlapping-selectors',
  what: 'two ReplicaSets with one selector; two Deployments with one selector and one template',
  controllers: ['replicaset', 'deployment'],

  async act(ctx) {
    for (const r of RS) {
      await post(ctx, rsPath(ctx.ns), { metadata: { name: r.name }, spec: { replicas: r.replicas, selector: { matchLabels: { app: RS_APP } }, template: podTemplate({ app: RS_APP }) } });
    }
    for (const d of DEPLOYMENTS) {
      await post(ctx, deployPath(ctx.ns), { metadata: { name: d.name }, spec: { replicas: d.replicas, selector: { matchLabels: { app: DEPLOY_APP } }, template: podTemplate({ app: DEPLOY_APP }) } });
    }
  },

  async settled(ctx) {
    const w = await read(ctx);
    const rsDone = RS.every((r) => {
      const rs = w.rss.find((x) => x.metadata.name === r.name);
      return rs && (rs.status?.observedGeneration ?? 0) >= (rs.metadata.generation ?? 0) && rs.status?.readyReplicas === r.replicas
        && w.rsPods.filter((p) => controllerUid(p.metadata) === rs.metadata.uid).length === r.replicas;
    });
    return rsDone && DEPLOYMENTS.every((d) => {
      const dep = w.deployments.find((x) => x.metadata.name === d.name);
      return dep !== undefined && deploymentComplete(dep);
    });
  },

  async view(ctx) {
    const w = await read(ctx);
    const owned = (uid: string, pods: Pod[]) => pods.filter((p) => controllerUid(p.metadata) === uid).length;
    return {
      replicaSets: RS.map((r) => w.rss.find((x) => x.metadata.name === r.name)).map((rs) => rs && {
        name: rs.metadata.name, replicas: rs.status?.replicas, ready: rs.status?.readyReplicas, available: rs.status?.availableReplicas,
        ownedPods: owned(rs.metadata.uid, w.rsPods), conditions: conditionsView(rs.status?.conditions),
      }),
      deployments: DEPLOYMENTS.map((d) => w.deployments.find((x) => x.metadata.name === d.name)).map((dep) => dep && {
        name: dep.metadata.name, replicas: dep.status?.replicas, updated: dep.status?.updatedReplicas, available: dep.status?.availableReplicas,
        conditions: conditionsView(dep.status?.conditions),
        replicaSets: w.rss.filter((rs) => controllerUid(rs.metadata) === dep.metadata.uid).map((rs) => ({ replicas: rs.spec.replicas, ownedPods: owned(rs.metadata.uid, w.deployPods) })),
      }),
    };
  },

  async violations(ctx) {
    const w = await read(ctx);
    const out = [
      ...exactly(`pods of app=${RS_APP}`, RS.reduce((n, r) => n + r.replicas, 0), w.rsPods.length),
      ...exactly(`pods of app=${DEPLOY_APP}`, DEPLOYMENTS.reduce((n, d) => n + d.replicas, 0), w.deployPods.length),
      ...exactly('pods without a controller (orphans)', 0, [...w.rsPods, ...w.deployPods].filter((p) => !controllerUid(p.metadata)).length),
    ];
    for (const d of DEPLOYMENTS) {
      const dep = await get<Workload>(ctx, `${deployPath(ctx.ns)}/${d.name}`);
      out.push(...exactly(`ReplicaSets controlled by ${d.name}`, 1, w.rss.filter((rs) => dep && controllerUid(rs.metadata) === dep.metadata.uid).length));
    }
    return out;
  },
};
