import { eventually, freshNamespace, testClusterAccess, uniqueName } from '../support/cluster';
import { startManagerProcess } from '../support/manager';
import { cleanNamespace, controllerUid, testRest } from '../support/kube';
import type { KubeObject } from '../../activities/kube/projections';

/**
 * An upgrade that enables another controller: the single watch was started by the old replicas,
 * with their controller list; the new replica's configuration must reach it.
 */
const rest = testRest(testClusterAccess());

test('a replica started with more controllers reconfigures the running watch', async () => {
  const ns = await freshNamespace(testClusterAccess(), 'reconfig');
  const taskQueue = uniqueName('reconfig');
  const old = await startManagerProcess(taskQueue, ['--controllers', 'replicaset']);
  try {
    await rest.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/web:1' }] } } } } });
    await new Promise((r) => setTimeout(r, 4000));
    const rss = async () => (await rest.request<{ items: KubeObject[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).body.items;
    expect(await rss()).toHaveLength(0); // nobody runs the deployment controller yet
    await old.kill();

    const upgraded = await startManagerProcess(taskQueue, ['--controllers', 'replicaset,deployment']);
    try {
      await eventually('deployment rolled out by the upgraded replica', async () => {
        const d = (await rest.request<KubeObject & { status?: { availableReplicas?: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).body;
        const owned = (await rss()).filter((rs) => controllerUid(rs) === d.metadata?.uid);
        return owned.length === 1 && d.status?.availableReplicas === 2;
      }, 60_000);
    } finally {
      await upgraded.kill();
    }
  } finally {
    await old.kill();
    await rest.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: {} }).catch(() => undefined);
    await cleanNamespace(rest, ns);
  }
});
