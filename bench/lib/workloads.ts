import { KubeRest } from '../../activities/kube/rest';

/** Objects the scenarios create: kwok runs their pods, so the image never needs to exist. */
const podTemplate = (app: string, image: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'app', image }], terminationGracePeriodSeconds: 0 },
});

export async function createReplicaSet(rest: KubeRest, ns: string, name: string, replicas: number): Promise<string> {
  const r = await rest.request<{ metadata: { uid: string } }>('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, {
    body: { metadata: { name }, spec: { replicas, selector: { matchLabels: { app: name } }, template: podTemplate(name, 'registry.invalid/app:1') } },
  });
  return r.body.metadata.uid;
}

export async function createDeployment(rest: KubeRest, ns: string, name: string, replicas: number): Promise<void> {
  await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
        template: podTemplate(name, 'registry.invalid/app:1'),
      },
    },
  });
}

export function mergePatch(rest: KubeRest, path: string, body: unknown) {
  return rest.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
}

export interface WorkloadStatus {
  metadata: { name: string; generation: number; uid: string };
  spec: { replicas: number };
  status?: {
    observedGeneration?: number; replicas?: number; readyReplicas?: number; availableReplicas?: number;
    updatedReplicas?: number; unavailableReplicas?: number;
  };
}

export async function getReplicaSet(rest: KubeRest, ns: string, name: string): Promise<WorkloadStatus> {
  return (await rest.request<WorkloadStatus>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/${name}`)).body;
}

export async function listDeployments(rest: KubeRest, ns: string): Promise<WorkloadStatus[]> {
  return (await rest.request<{ items: WorkloadStatus[] }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments`)).body.items;
}

export async function listReplicaSets(rest: KubeRest, ns: string): Promise<WorkloadStatus[]> {
  return (await rest.request<{ items: WorkloadStatus[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items;
}

/** A Deployment is done when its status describes the current spec, every replica updated and available. */
export function deploymentComplete(d: WorkloadStatus): boolean {
  const s = d.status ?? {};
  const n = d.spec.replicas;
  return (s.observedGeneration ?? 0) >= d.metadata.generation && s.updatedReplicas === n && (s.replicas ?? 0) === n
    && s.availableReplicas === n && !s.unavailableReplicas;
}

export function replicaSetSettled(rs: WorkloadStatus): boolean {
  const s = rs.status ?? {};
  return (s.observedGeneration ?? 0) >= rs.metadata.generation && (s.replicas ?? 0) === rs.spec.replicas && (s.readyReplicas ?? 0) === rs.spec.replicas;
}

/**
 * Proof that a freshly started manager reconciles: a one-pod ReplicaSet gets its pod, then goes.
 * Start-up (ours bundles workflow code; upstream syncs its informers) is not what a scenario times.
 */
export async function warmUp(rest: KubeRest, ns: string, timeoutMs = 120_000): Promise<void> {
  await createReplicaSet(rest, ns, 'warmup', 1);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rs = await getReplicaSet(rest, ns, 'warmup').catch(() => undefined);
    if (rs && (rs.status?.replicas ?? 0) >= 1) break;
    if (Date.now() > deadline) throw new Error('manager did not reconcile a one-pod ReplicaSet in time (warm-up)');
    await new Promise((r) => setTimeout(r, 200));
  }
  await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets/warmup`).catch(() => undefined);
  await rest.request('DELETE', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dwarmup`).catch(() => undefined);
}
