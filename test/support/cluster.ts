import { randomBytes } from 'node:crypto';
import type * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import { Connection } from '@temporalio/client';
import type { ClusterAccess } from '../../activities/kube/kubeconfig';
import { KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import type { KubeTarget } from '../../starter/local/metrics/kube';
import { pkiPaths } from '../../starter/local/pki';
import { adminKubeConfig, adminTarget, readState, stackTemporal } from '../../starter/local/stack';
import { TEMPORAL_CHANNEL_ARGS, loadTemporalTls, type TemporalTarget } from '../../starter/run-options';
import { TEST_DATA_DIR } from './stack';

/**
 * The test stack's admin credentials (its CA and the admin client certificate), as KubeRest takes
 * them. Read from the stack's own files rather than through @kubernetes/client-node: loading that
 * library costs each jest test file 4 to 8 s of CPU (its ES modules go through babel and jest's
 * module registry, one file of ~970 at a time), and only a few tests use its API clients.
 */
export function testClusterAccess(): ClusterAccess {
  const { server, ca, cert, key } = testAdminTarget();
  return {
    getCurrentCluster: () => ({ server }),
    applyToHTTPSOptions: async (opts: https.RequestOptions) => {
      Object.assign(opts, { ca, cert, key });
    },
  };
}

/** The same credentials as the stack's own setup takes them (starter/local/nodes.ts, dra.ts). */
export function testAdminTarget(): KubeTarget {
  const state = readState(TEST_DATA_DIR);
  if (!state) throw new Error(`no local stack state in ${TEST_DATA_DIR}: did jest global setup run?`);
  return adminTarget({ ports: state.ports, pki: pkiPaths(TEST_DATA_DIR) });
}

/** The admin kubeconfig as @kubernetes/client-node's KubeConfig, for a test that uses the library's API clients. */
export function testClientNodeConfig(): k8s.KubeConfig {
  return adminKubeConfig(TEST_DATA_DIR);
}

function testTemporal(): TemporalTarget {
  const state = readState(TEST_DATA_DIR);
  if (!state) throw new Error(`no local stack state in ${TEST_DATA_DIR}: did jest global setup run?`);
  return stackTemporal(state);
}

export function temporalAddress(): string {
  return testTemporal().address;
}

/** A connection to the test stack's Temporal, with its client certificate when the stack's frontend requires one (`--temporal postgres`). */
export async function testTemporalConnection(): Promise<Connection> {
  const t = testTemporal();
  return Connection.connect({ address: t.address, channelArgs: TEMPORAL_CHANNEL_ARGS, ...(t.tls ? { tls: loadTemporalTls(t.tls) } : {}) });
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/**
 * A namespace of the test's own, with its `default` ServiceAccount created by the test: most
 * tests run only the controllers they exercise, not the serviceaccount controller, and the
 * ServiceAccount admission plugin rejects pods in a namespace without that account.
 */
export async function freshNamespace(access: ClusterAccess, prefix: string): Promise<string> {
  const rest = new KubeRest(access, new TokenBucket(0, 0));
  const name = uniqueName(`t-${prefix}`);
  await rest.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'temporal-kcm.dev/test': prefix } } } });
  await rest.request('POST', `/api/v1/namespaces/${name}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } });
  return name;
}

export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * What `read` gives once it stops changing: two equal reads (compared as JSON) `gapMs` apart, both
 * `ready` when that is given (a state the controller has not looked at yet can hold still too). The
 * answer is the JSON read back, so fields left undefined are absent, as in a comparison of output.
 */
export async function settledRead<T>(what: string, read: () => Promise<T>, timeoutMs: number, gapMs = 1500, ready: (v: T) => boolean = () => true): Promise<T> {
  const readJson = async () => {
    const v = await read();
    return ready(v) ? JSON.stringify(v) : undefined;
  };
  let prev = await readJson();
  return eventually(what, async () => {
    await new Promise((r) => setTimeout(r, gapMs));
    const cur = await readJson();
    const same = cur !== undefined && cur === prev;
    prev = cur;
    return same ? (JSON.parse(cur) as T) : undefined;
  }, timeoutMs, 0);
}
