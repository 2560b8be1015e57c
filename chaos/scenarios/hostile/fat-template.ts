import { deploymentComplete, type WorkloadStatus } from '../../../bench/lib/workloads';
import { exactly } from '../../checks';
import { conditionsView, get, list, podTemplate, post, type Condition, type HostileItem, type Meta } from './item';

/**
 * A Deployment whose pod template weighs a mebibyte. The API server refuses more than 256 KiB of
 * annotations on an object (the template's metadata included), so a 1 MiB annotation is not a
 * valid object: the template carries the largest annotation it accepts and the rest of the mebibyte
 * in an environment variable. Every ReplicaSet and pod made from it is as heavy; a controller that
 * carries whole objects through its workflows' histories would hit Temporal's payload limits.
 */
const NAME = 'fat-template';
const REPLICAS = 2;
const KiB = 1024;
/** 256 KiB of annotations less the key and some room for anything a controller adds */
const ANNOTATION_BYTES = 256 * KiB - 2 * KiB;
const ENV_BYTES = 1024 * KiB - ANNOTATION_BYTES;

type Deployment = WorkloadStatus & { metadata: Meta; status?: WorkloadStatus['status'] & { conditions?: Condition[] } };
const path = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;

export const fatTemplate: HostileItem = {
  slug: 'fat-template',
  what: 'a Deployment with a 1 MiB pod template (a 254 KiB annotation, the most the API server accepts, and a 770 KiB env value)',
  controllers: ['deployment', 'replicaset'],

  async act(ctx) {
    await post(ctx, path(ctx.ns), {
      metadata: { name: NAME },
      spec: {
        replicas: REPLICAS, selector: { matchLabels: { app: NAME } },
        template: podTemplate({ app: NAME }, { annotations: { 'hostile.example.com/ballast': 'a'.repeat(ANNOTATION_BYTES) }, env: [{ name: 'BALLAST', value: 'e'.repeat(ENV_BYTES) }] }),
      },
    });
  },

  async settled(ctx) {
    const d = await get<Deployment>(ctx, `${path(ctx.ns)}/${NAME}`);
    return d !== undefined && deploymentComplete(d);
  },

  async view(ctx) {
    const d = await get<Deployment>(ctx, `${path(ctx.ns)}/${NAME}`);
    return d && {
      replicas: d.status?.replicas, updated: d.status?.updatedReplicas, ready: d.status?.readyReplicas, available: d.status?.availableReplicas,
      conditions: conditionsView(d.status?.conditions),
    };
  },

  async violations(ctx) {
    const pods = await list<{ metadata: Meta }>(ctx, `/api/v1/namespaces/${ctx.ns}/pods?labelSelector=app%3D${NAME}`);
    return exactly(`pods of ${NAME}`, REPLICAS, pods.filter((p) => !p.metadata.deletionTimestamp).length);
  },
};
