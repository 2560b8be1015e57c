import { randomBytes } from 'node:crypto';
import { deploymentComplete, type WorkloadStatus } from '../../../bench/lib/workloads';
import { exactly } from '../../checks';
import type { ChaosContext } from '../types';
import { conditionsView, get, list, podTemplate, post, type Condition, type HostileItem, type Meta } from './item';

/**
 * A Deployment whose ReplicaSets weigh 11 MiB together, none of it compressible: ten old
 * ReplicaSets (orphans its selector adopts, as a Deployment's revision history would be) and its new
 * one, each with a template of random bytes near a mebibyte. Each object is well inside the API
 * server's limits, but a controller that carries the Deployment and its ReplicaSets as one value
 * through a Temporal payload passes the 2 MiB limit five times over, and no codec helps.
 */
const NAME = 'fat-revisions';
const OLD = 10;
const KiB = 1024;
/** random bytes in base64: 200 KiB of annotation (of the 256 KiB the template's metadata may hold) and 760 KiB of env */
const ANNOTATION_BYTES = 200 * KiB;
const ENV_BYTES = 760 * KiB;
const ballast = (bytes: number) => randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64').slice(0, bytes);
const fatTemplate = (labels: Record<string, string>) =>
  podTemplate(labels, { annotations: { 'hostile.example.com/ballast': ballast(ANNOTATION_BYTES) }, env: [{ name: 'BALLAST', value: ballast(ENV_BYTES) }] });

type Deployment = WorkloadStatus & { metadata: Meta; status?: WorkloadStatus['status'] & { conditions?: Condition[] } };
interface ReplicaSet { metadata: Meta; spec: { replicas?: number }; status?: { replicas?: number } }
const deployments = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;
const replicaSets = (ns: string) => `/apis/apps/v1/namespaces/${ns}/replicasets`;
const oldName = (i: number) => `${NAME}-old-${i}`;

async function ownedReplicaSets(ctx: ChaosContext, d: Deployment): Promise<ReplicaSet[]> {
  const all = await list<ReplicaSet>(ctx, `${replicaSets(ctx.ns)}?labelSelector=app%3D${NAME}`);
  return all.filter((rs) => rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid));
}

export const fatRevisions: HostileItem = {
  slug: 'fat-revisions',
  what: 'a Deployment with ten old ReplicaSets and a new one, each with a 1 MiB template of random bytes (11 MiB that no codec compresses)',
  controllers: ['deployment', 'replicaset'],

  async act(ctx) {
    for (let i = 0; i < OLD; i++) {
      const labels = { app: NAME, revision: `old-${i}` };
      await post(ctx, replicaSets(ctx.ns), { metadata: { name: oldName(i), labels }, spec: { replicas: 0, selector: { matchLabels: labels }, template: fatTemplate(labels) } });
    }
    await post(ctx, deployments(ctx.ns), {
      metadata: { name: NAME },
      spec: { replicas: 1, selector: { matchLabels: { app: NAME } }, template: fatTemplate({ app: NAME, revision: 'current' }) },
    });
  },

  async settled(ctx) {
    const d = await get<Deployment>(ctx, `${deployments(ctx.ns)}/${NAME}`);
    return d !== undefined && deploymentComplete(d) && (await ownedReplicaSets(ctx, d)).length === OLD + 1;
  },

  async view(ctx) {
    const d = await get<Deployment>(ctx, `${deployments(ctx.ns)}/${NAME}`);
    if (!d) return undefined;
    // the new ReplicaSet's name hashes its random template: it is shown by role, not by name
    const owned = (await ownedReplicaSets(ctx, d)).map((rs) => ({
      name: rs.metadata.name.startsWith(`${NAME}-old-`) ? rs.metadata.name : 'new',
      replicas: rs.spec.replicas, revision: rs.metadata.annotations?.['deployment.kubernetes.io/revision'],
    })).sort((a, b) => a.name.localeCompare(b.name));
    return {
      replicas: d.status?.replicas, updated: d.status?.updatedReplicas, available: d.status?.availableReplicas,
      revision: d.metadata.annotations?.['deployment.kubernetes.io/revision'], conditions: conditionsView(d.status?.conditions), owned,
    };
  },

  async violations(ctx) {
    const pods = await list<{ metadata: Meta }>(ctx, `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${NAME}`);
    return exactly(`pods of ${NAME}`, 1, pods.filter((p) => !p.metadata.deletionTimestamp).length);
  },
};
