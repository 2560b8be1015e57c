import { KubeRest } from '../../activities/kube/rest';
import { createDeployment, deploymentComplete, listDeployments } from '../lib/workloads';
import { waitFor } from '../lib/util';

/** Run `fn` over `items`, `width` at a time. */
export async function inParallel<T>(items: T[], width: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

export const fleetNames = (count: number) => Array.from({ length: count }, (_, i) => `d${String(i).padStart(4, '0')}`);

/** Many Deployments at once, waited for until all are complete. */
export async function createFleet(rest: KubeRest, ns: string, count: number, replicas: number): Promise<void> {
  await inParallel(fleetNames(count), 10, (name) => createDeployment(rest, ns, name, replicas));
  await waitFor(`${count} Deployments complete`, async () => {
    const ds = await listDeployments(rest, ns);
    return ds.length === count && ds.every(deploymentComplete);
  }, 300_000 + count * replicas * 500, 1000);
}
