import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE, SA_UID } from '../../workflows/search-attributes';
import { smokeWorkflow } from '../support/workflows/smoke';
import { eventually, freshNamespace, temporalAddress, testClientNodeConfig, uniqueName } from '../support/cluster';

const kc = testClientNodeConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);

function podManifest(name: string, extra: Partial<k8s.V1ObjectMeta> = {}): k8s.V1Pod {
  return {
    metadata: { name, ...extra },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }], terminationGracePeriodSeconds: 1 },
  };
}

const condition = (p: k8s.V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;

describe('local stack: kube-apiserver, kube-scheduler and kwok nodes', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await freshNamespace(kc, 'smoke');
  });

  test('three Ready kwok nodes across zones, heartbeating through Leases', async () => {
    const nodes = await core.listNode({ labelSelector: 'temporal-kcm.dev/local-node=true' });
    expect(nodes.items).toHaveLength(3);
    for (const n of nodes.items) {
      expect(n.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    expect(new Set(nodes.items.map((n) => n.metadata?.labels?.['topology.kubernetes.io/zone'])).size).toBe(3);
    const coord = kc.makeApiClient(k8s.CoordinationV1Api);
    const leases = await coord.listNamespacedLease({ namespace: 'kube-node-lease' });
    const leaseNames = new Set(leases.items.map((l) => l.metadata?.name));
    for (const n of nodes.items) expect(leaseNames.has(n.metadata!.name!)).toBe(true);
  });

  test('RBAC is on, with the bootstrap controller roles a real cluster has', async () => {
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    const role = await rbac.readClusterRole({ name: 'system:controller:replicaset-controller' });
    expect(role.rules?.some((r) => r.resources?.includes('pods') && r.verbs.includes('create'))).toBe(true);
    // the scheduler's identity may not do what only admins can
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const review = await authz.createSubjectAccessReview({
      body: { spec: { user: 'system:kube-scheduler', resourceAttributes: { verb: 'delete', resource: 'namespaces' } } },
    });
    expect(review.status?.allowed).toBe(false);
  });

  test('a pod is bound by kube-scheduler, then made Running and Ready by kwok', async () => {
    await core.createNamespacedPod({ namespace: ns, body: podManifest('web') });
    const pod = await eventually('pod Running and Ready', async () => {
      const p = await core.readNamespacedPod({ namespace: ns, name: 'web' });
      return p.status?.phase === 'Running' && condition(p, 'Ready') === 'True' ? p : undefined;
    });
    expect(pod.spec?.nodeName).toMatch(/^kwok-node-\d+$/);
    expect(condition(pod, 'PodScheduled')).toBe('True');
    expect(pod.status?.podIP).toMatch(/^10\.244\./);
    expect(pod.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  });

  test('kwok stages: a Job-owned pod succeeds, a pod labelled to fail fails with its exit code', async () => {
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: 'not-a-real-job', uid: randomUUID(), controller: true };
    await core.createNamespacedPod({ namespace: ns, body: podManifest('job-pod', { ownerReferences: [owner] }) });
    await core.createNamespacedPod({
      namespace: ns,
      body: podManifest('failing', {
        labels: { 'kwok.temporal-kcm.dev/outcome': 'fail' },
        annotations: { 'kwok.temporal-kcm.dev/exit-code': '3' },
      }),
    });
    await core.createNamespacedPod({
      namespace: ns,
      body: podManifest('job-pod-kept-running', { ownerReferences: [owner], labels: { 'kwok.temporal-kcm.dev/outcome': 'run' } }),
    });
    const succeeded = await eventually('Job-owned pod Succeeded', async () => {
      const p = await core.readNamespacedPod({ namespace: ns, name: 'job-pod' });
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    expect(succeeded.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    const failed = await eventually('labelled pod Failed', async () => {
      const p = await core.readNamespacedPod({ namespace: ns, name: 'failing' });
      return p.status?.phase === 'Failed' ? p : undefined;
    });
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(3);
    const running = await core.readNamespacedPod({ namespace: ns, name: 'job-pod-kept-running' });
    expect(running.status?.phase).toBe('Running');
  });

  test('a deleted pod goes away as if its kubelet finished terminating it', async () => {
    await core.createNamespacedPod({ namespace: ns, body: podManifest('short-lived') });
    await eventually('pod Running', async () =>
      (await core.readNamespacedPod({ namespace: ns, name: 'short-lived' })).status?.phase === 'Running');
    await core.deleteNamespacedPod({ namespace: ns, name: 'short-lived' });
    await eventually('pod gone', async () => {
      const list = await core.listNamespacedPod({ namespace: ns, fieldSelector: 'metadata.name=short-lived' });
      return list.items.length === 0;
    });
  });
});

describe('local stack: Temporal dev server', () => {
  test('a real Worker runs a workflow, which is then found by the custom search attributes', async () => {
    const address = temporalAddress();
    const taskQueue = uniqueName('smoke');
    const name = uniqueName('web');
    const uid = randomUUID();
    const connection = await Connection.connect({ address });
    const client = new Client({ connection, namespace: 'default' });
    const nativeConnection = await NativeConnection.connect({ address });
    try {
      const worker = await Worker.create({
        connection: nativeConnection,
        namespace: 'default',
        taskQueue,
        workflowsPath: require.resolve('../support/workflows/smoke'),
      });
      const handle = await client.workflow.start(smokeWorkflow, {
        taskQueue,
        workflowId: `smoke/${name}`,
        args: [name],
        typedSearchAttributes: [
          { key: SA_CONTROLLER, value: 'smoke' },
          { key: SA_KIND, value: 'Pod' },
          { key: SA_NAMESPACE, value: 'default' },
          { key: SA_NAME, value: name },
          { key: SA_UID, value: uid },
        ],
      });
      const result = await worker.runUntil(handle.result());
      expect(result).toBe(`reconciled ${name} in smoke/${name}`);

      const found = await eventually('workflow visible by KcmUid', async () => {
        const ids: string[] = [];
        for await (const wf of client.workflow.list({ query: `KcmUid = '${uid}' AND KcmController = 'smoke'` })) ids.push(wf.workflowId);
        return ids.length ? ids : undefined;
      }, 30_000);
      expect(found).toEqual([`smoke/${name}`]);
      // and nothing else matches a uid that was never used
      const none: string[] = [];
      for await (const wf of client.workflow.list({ query: `KcmUid = '${randomUUID()}'` })) none.push(wf.workflowId);
      expect(none).toEqual([]);
    } finally {
      await nativeConnection.close();
      await connection.close();
    }
  });
});
