import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as nodePath from 'node:path';
import { Worker } from 'node:worker_threads';
import { parse as parseYaml } from 'yaml';

/**
 * What KubeRest needs of a cluster's configuration: the server and, per request, TLS material and
 * auth headers. @kubernetes/client-node's KubeConfig has this shape (tests and the local stack
 * pass one); the manager passes a ResolvedKubeconfig.
 */
export interface ClusterAccess {
  getCurrentCluster(): { server: string } | null;
  applyToHTTPSOptions(opts: https.RequestOptions): Promise<void>;
  /** credentials that can go stale (exec plugins, token files): fetched again after a 401 */
  refresh?(): Promise<void>;
}

/** A kubeconfig's current context, resolved to plain data: what applyToHTTPSOptions would set. */
export interface ResolvedCredentials {
  server: string;
  /** the cluster's CA as the kubeconfig names it (data or file), for the root-CA publisher */
  clusterCa?: string;
  ca?: string;
  cert?: string;
  key?: string;
  passphrase?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
  headers: Record<string, string>;
}

/*
 * The resolution runs in a short-lived worker thread. Loading @kubernetes/client-node costs the
 * process about 70 MiB of memory for good (its config module pulls in every generated API model),
 * and the manager only needs the resolved credentials; the thread's heap is returned when it ends
 * (measured: 72 MiB loaded in-process, 23 MiB left after the thread exits). The library still does
 * all the resolving (contexts, in-cluster config, exec plugins, auth providers), so nothing of
 * kubeconfig's semantics is re-implemented here.
 */
const RESOLVER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
(async () => {
  const k8s = require(workerData.library);
  const kc = new k8s.KubeConfig();
  // a list (KUBECONFIG=a:b) is merged as client-node merges $KUBECONFIG
  if (workerData.inCluster) kc.loadFromCluster();
  else if (workerData.path && !workerData.path.includes(require('node:path').delimiter)) kc.loadFromFile(workerData.path);
  else {
    if (workerData.path) process.env.KUBECONFIG = workerData.path;
    kc.loadFromDefault();
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster || !cluster.server) throw new Error('kubeconfig has no current cluster server');
  const opts = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const text = (v) => (v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
  const clusterCa = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : cluster.caFile ? fs.readFileSync(cluster.caFile, 'utf8') : undefined;
  const headers = {};
  for (const [k, v] of Object.entries(opts.headers || {})) if (v !== undefined) headers[k] = String(v);
  parentPort.postMessage({ ok: {
    server: cluster.server, clusterCa, ca: text(opts.ca), cert: text(opts.cert), key: text(opts.key), passphrase: text(opts.passphrase),
    rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername, headers,
  } });
})().catch((e) => parentPort.postMessage({ error: e && e.message ? e.message : String(e) }));
`;

/**
 * Resolves a kubeconfig: the file given (or a list of them, merged), else $KUBECONFIG,
 * ~/.kube/config or the in-cluster configuration, as client-node's loadFromDefault; with
 * `inCluster`, the pod's service account alone (what the secure port's delegated authentication
 * falls back to, which must not pick up a user's ~/.kube/config). A single file of the common
 * shape is read here (see resolveSimpleKubeconfig); everything else goes to the library's thread.
 */
export function resolveKubeconfig(path?: string, inCluster = false): Promise<ResolvedCredentials> {
  if (path && !path.includes(nodePath.delimiter) && !fs.existsSync(path)) return Promise.reject(new Error(`kubeconfig ${path} not found`));
  const simple = !inCluster && path && !path.includes(nodePath.delimiter) ? resolveSimpleKubeconfig(path) : undefined;
  return simple ? Promise.resolve(simple) : resolveWithLibrary(path, inCluster);
}

type YamlMap = Record<string, unknown>;
const isMap = (v: unknown): v is YamlMap => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyStrings = (m: YamlMap, allowed: ReadonlySet<string>) => Object.entries(m).every(([k, v]) => allowed.has(k) && typeof v === 'string');
/** what the fast path reads of a cluster and of a user: any other field (a proxy, TLS options, plugins, impersonation) is the library's */
const SIMPLE_CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data']);
const SIMPLE_USER_FIELDS = new Set(['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'token']);

/**
 * The credentials of a kubeconfig file of the shape kubeadm writes for the manager (and `local up`
 * for its stack), resolved as client-node resolves it, without loading the library: that costs a
 * manager's start 0.7 s of CPU in its thread, about a fifth of the whole start. The current
 * context's cluster may hold only a server and a CA (data or file) and its user only a client
 * certificate and key (data or file) or a token; file paths are relative to the kubeconfig's
 * directory. Anything else, or any entry client-node would refuse, gives undefined and the library
 * decides. test/unit/kubeconfig.test.ts holds the two to the same answers.
 */
export function resolveSimpleKubeconfig(file: string): ResolvedCredentials | undefined {
  let doc: unknown;
  try {
    doc = parseYaml(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isMap(doc)) return undefined;
  const entries = (key: string, body: string): Array<{ name: string; body: YamlMap }> | undefined => {
    const list = doc[key] ?? [];
    if (!Array.isArray(list)) return undefined;
    const out = list.map((e: unknown) => (isMap(e) && typeof e.name === 'string' && e.name && isMap(e[body]) ? { name: e.name, body: e[body] as YamlMap } : undefined));
    return out.every((e) => e !== undefined) ? (out as Array<{ name: string; body: YamlMap }>) : undefined;
  };
  const clusters = entries('clusters', 'cluster');
  const users = entries('users', 'user');
  const contexts = entries('contexts', 'context');
  const current = doc['current-context'];
  if (!clusters || !users || !contexts || typeof current !== 'string' || clusters.some((c) => typeof c.body.server !== 'string' || !c.body.server)
    || contexts.some((c) => typeof c.body.cluster !== 'string' || !c.body.cluster)) return undefined;
  const context = contexts.find((c) => c.name === current)?.body;
  const cluster = clusters.find((c) => c.name === context?.cluster)?.body;
  const user = users.find((u) => u.name === context?.user)?.body;
  if (!cluster || !user || !onlyStrings(cluster, SIMPLE_CLUSTER_FIELDS) || !onlyStrings(user, SIMPLE_USER_FIELDS)) return undefined;
  // the two libraries disagree on which of a file and data wins: let client-node say
  const both = (a: string, b: string, m: YamlMap) => a in m && b in m;
  if (both('certificate-authority', 'certificate-authority-data', cluster) || both('client-certificate', 'client-certificate-data', user)
    || both('client-key', 'client-key-data', user)) return undefined;
  const dir = nodePath.dirname(file);
  const read = (m: YamlMap, fileKey: string, dataKey: string): string | undefined => {
    const f = m[fileKey] as string | undefined;
    const d = m[dataKey] as string | undefined;
    if (f) return fs.readFileSync(nodePath.isAbsolute(f) ? f : nodePath.join(dir, f), 'utf8');
    return d ? Buffer.from(d, 'base64').toString('utf8') : undefined;
  };
  const token = user.token as string | undefined;
  try {
    const ca = read(cluster, 'certificate-authority', 'certificate-authority-data');
    return {
      server: (cluster.server as string).replace(/\/$/, ''),
      clusterCa: ca,
      ca,
      cert: read(user, 'client-certificate', 'client-certificate-data'),
      key: read(user, 'client-key', 'client-key-data'),
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    };
  } catch {
    // a file named that cannot be read: the library's error says so
    return undefined;
  }
}

/** Resolves a kubeconfig with client-node, in a throwaway thread (see RESOLVER). */
export function resolveWithLibrary(path?: string, inCluster = false): Promise<ResolvedCredentials> {
  return new Promise((resolve, reject) => {
    // resolved here: an eval'd thread resolves modules from the working directory, not from this package
    const w = new Worker(RESOLVER, { eval: true, workerData: { path, inCluster, library: require.resolve('@kubernetes/client-node') } });
    w.once('message', (m: { ok?: ResolvedCredentials; error?: string }) => {
      void w.terminate();
      if (m.ok) resolve(m.ok);
      else reject(new Error(`kubeconfig: ${m.error}`));
    });
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`kubeconfig resolver exited with code ${code}`)));
  });
}

/** A resolved kubeconfig as KubeRest's ClusterAccess; a 401 resolves it again (a rotated token, an expired exec credential). */
export class ResolvedKubeconfig implements ClusterAccess {
  private refreshing?: Promise<void>;

  private constructor(private creds: ResolvedCredentials, private readonly path?: string, private readonly master?: string, private readonly inCluster = false) {}

  static async load(path?: string, master?: string): Promise<ResolvedKubeconfig> {
    return new ResolvedKubeconfig(await resolveKubeconfig(path), path, master);
  }

  /** The pod's own service account and the cluster's address from its environment. */
  static async loadInCluster(): Promise<ResolvedKubeconfig> {
    return new ResolvedKubeconfig(await resolveKubeconfig(undefined, true), undefined, undefined, true);
  }

  /** The cluster's CA as the kubeconfig names it. */
  get clusterCa(): string | undefined {
    return this.creds.clusterCa;
  }

  getCurrentCluster(): { server: string } {
    return { server: this.master || this.creds.server };
  }

  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    const c = this.creds;
    if (c.ca !== undefined) opts.ca = c.ca;
    if (c.cert !== undefined) opts.cert = c.cert;
    if (c.key !== undefined) opts.key = c.key;
    if (c.passphrase !== undefined) opts.passphrase = c.passphrase;
    if (c.rejectUnauthorized !== undefined) opts.rejectUnauthorized = c.rejectUnauthorized;
    if (c.servername !== undefined) opts.servername = c.servername;
    opts.headers = { ...opts.headers, ...c.headers };
  }

  /** One resolution at a time: every request that met the 401 waits for the same one. */
  refresh(): Promise<void> {
    this.refreshing ??= resolveKubeconfig(this.path, this.inCluster)
      .then((c) => { this.creds = c; })
      .finally(() => { this.refreshing = undefined; });
    return this.refreshing;
  }
}
