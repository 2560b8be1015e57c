import { AuditLog, type AuditEvent } from '../../bench/lib/audit';
import { auditLogPath } from '../../starter/local/stack';
import type { KubeRest } from '../../activities/kube/rest';
import { eventually } from './cluster';
import { controllerUid, listPods } from './kube';
import { metricValue, type ManagerProcess } from './manager';
import { TEST_DATA_DIR } from './stack';

/**
 * The fencing e2e tests' shared shape: a ReplicaSet of `replicas` made with the audit log marked, a
 * fault put on the replica creating its pods mid-batch (the test's own part), then the outcome once
 * another replica has finished the work: the namespace's audited requests, for chaos's
 * staleAttemptWrites, and the faulted replica's refused createPods attempts.
 */
export interface FencedScale {
  /** pods the ReplicaSet owns and that are not being deleted */
  owned(): Promise<number>;
  /** waits for all `replicas` pods and 3 s more for late writes to reach the log */
  outcome(faulted: ManagerProcess): Promise<{ events: AuditEvent[]; fenced: number }>;
}

export async function scaleToFence(rest: KubeRest, ns: string, name: string, replicas: number): Promise<FencedScale> {
  const audit = new AuditLog(auditLogPath(TEST_DATA_DIR));
  audit.mark();
  const rs = (await rest.request<{ metadata: { uid: string } }>('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: {
    metadata: { name },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } } },
  } })).body;
  const owned = async () => (await listPods(rest, ns, `app=${name}`)).filter((p) => controllerUid(p) === rs.metadata.uid && !p.metadata.deletionTimestamp).length;
  return {
    owned,
    async outcome(faulted) {
      await eventually(`${replicas} pods`, async () => (await owned()) === replicas, 120_000, 200);
      await new Promise((r) => setTimeout(r, 3000));
      const fenced = metricValue(await faulted.metrics(), 'kcm_fenced_attempts_total', { activity: 'createPods' });
      return { events: audit.events().filter((e) => e.objectRef?.namespace === ns), fenced };
    },
  };
}
