import * as k8s from '@kubernetes/client-node';
import type { V1CertificateSigningRequest, V1CertificateSigningRequestCondition } from '@kubernetes/client-node';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { execFileSync } from 'node:child_process';
import { X509Certificate, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiError, KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { ensureBinaries } from '../../starter/local/binaries';
import { pkiPaths } from '../../starter/local/pki';
import { auditLogPath } from '../../starter/local/stack';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import { eventually, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest, getIfExists } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { firstRun } from '../support/runs';
import { TEST_DATA_DIR } from '../support/stack';
import { makeCsr } from '../support/x509';
import { UpstreamKcm } from '../support/upstream';

/**
 * csrapproving and csrsigning compared with upstream kube-controller-manager v1.35.4 on the same
 * stack, both signing with the cluster CA: a kubelet's TLS bootstrap end to end (a client CSR made
 * as a bootstrap token, approved after upstream's SubjectAccessReview, issued, and the certificate
 * then authenticating as system:node:<name>), its renewal made as the node, a kubelet-serving CSR
 * left pending, a kube-apiserver-client CSR approved by hand and issued, and one with bad usages
 * failed. Each manager runs the scenario on its own CSR name prefix, one after the other; what a
 * user sees (conditions, subject, issuer, extensions, lifetime) must be the same. Ours runs as two
 * replicas, one killed with kill -9 while a batch of CSRs is being signed: each CSR's certificate is
 * written exactly once (the audit log counts the writes). The CA key may appear in no history and
 * no log of ours.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const pki = pkiPaths(TEST_DATA_DIR);
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const SIGNING = [`--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`];
const BATCH = 12;

const tokenId = randomBytes(3).toString('hex');
const tokenSecret = randomBytes(8).toString('hex');
const TOKEN_SECRET = `/api/v1/namespaces/kube-system/secrets/bootstrap-token-${tokenId}`;
/** kubeadm's bindings, made by the test (a kubeadm cluster has them) */
const BINDINGS: Array<[string, string, string]> = [
  ['e2e-csr-kubelet-bootstrap', 'system:node-bootstrapper', 'system:bootstrappers'],
  ['e2e-csr-node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', 'system:bootstrappers'],
  ['e2e-csr-node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes'],
];

const upstream = new UpstreamKcm('csrsigning');
const managers: ManagerProcess[] = [];
const made: string[] = [];

/** A client of the test cluster as another user: a bearer token, or a client certificate. */
function restAs(user: { token: string } | { certPem: string; keyPem: string }): KubeRest {
  const cluster = kc.getCurrentCluster()!;
  const u = new k8s.KubeConfig();
  u.loadFromOptions({
    clusters: [{ name: 'c', server: cluster.server, caFile: pki.caCert, skipTLSVerify: false }],
    users: [{ name: 'u', ...('token' in user ? { token: user.token } : { certData: Buffer.from(user.certPem).toString('base64'), keyData: Buffer.from(user.keyPem).toString('base64') }) }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return new KubeRest(u, new TokenBucket(0, 0));
}

const get = <T>(p: string) => getIfExists<T>(rest, p);

interface CsrSpec {
  name: string;
  signerName: string;
  cn: string;
  o?: string[];
  dnsNames?: string[];
  usages: string[];
  expirationSeconds?: number;
}

async function createCsr(client: KubeRest, s: CsrSpec): Promise<{ keyPem: string }> {
  const { csrPem, keyPem } = makeCsr({ cn: s.cn, o: s.o, dnsNames: s.dnsNames });
  await client.request('POST', CSRS, {
    body: {
      apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: s.name },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: s.signerName, usages: s.usages,
        ...(s.expirationSeconds ? { expirationSeconds: s.expirationSeconds } : {}) },
    },
  });
  made.push(s.name);
  return { keyPem };
}

async function approveByHand(name: string): Promise<void> {
  const csr = (await rest.request<V1CertificateSigningRequest>('GET', `${CSRS}/${name}`)).body;
  csr.status = { ...csr.status, conditions: [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'E2E', message: 'approved by the test' }] };
  await rest.request('PUT', `${CSRS}/${name}/approval`, { body: csr });
}

const csrOf = (name: string) => get<V1CertificateSigningRequest>(`${CSRS}/${name}`);

async function until(name: string, what: string, ok: (c: V1CertificateSigningRequest) => boolean, timeoutMs = 30_000): Promise<V1CertificateSigningRequest> {
  return eventually(`${name}: ${what}`, async () => {
    const c = await csrOf(name);
    return c && ok(c) ? c : undefined;
  }, timeoutMs, 100);
}

const issued = (c: V1CertificateSigningRequest) => !!c.status?.certificate;
const hasCondition = (type: string) => (c: V1CertificateSigningRequest) => (c.status?.conditions ?? []).some((x) => x.type === type);

/** What a user sees of a CSR, with the run's prefix taken out: conditions (no times) and the certificate's shape. */
function view(c: V1CertificateSigningRequest, prefix: string): Record<string, unknown> {
  const strip = (s: string) => s.split(prefix).join('<p>');
  const conditions = (c.status?.conditions ?? []).map((x: V1CertificateSigningRequestCondition) => ({ type: x.type, status: x.status, reason: x.reason, message: x.message }));
  if (!c.status?.certificate) return { conditions, certificate: null };
  const pemText = Buffer.from(c.status.certificate, 'base64').toString();
  const x = new X509Certificate(pemText);
  const der = AsnConvert.parse(x.raw, Certificate);
  const tbs = der.tbsCertificate;
  return {
    conditions,
    certificate: {
      pemBlocks: (pemText.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length,
      subject: strip(x.subject),
      issuer: x.issuer,
      version: tbs.version,
      signatureAlgorithm: der.signatureAlgorithm.algorithm,
      // every extension byte for byte: key usage, extended key usage, basic constraints, authority key id
      extensions: (tbs.extensions ?? []).map((e) => `${e.extnID}${e.critical ? ' critical' : ''} ${Buffer.from(e.extnValue.buffer).toString('hex')}`),
      lifetimeSeconds: (tbs.validity.notAfter.getTime().getTime() - tbs.validity.notBefore.getTime().getTime()) / 1000,
      serialBits: Buffer.from(tbs.serialNumber).length * 8 <= 136,
      verifiesWithClusterCa: x.verify(new X509Certificate(fs.readFileSync(pki.caCert)).publicKey),
    },
  };
}

type Result = Record<string, unknown>;

/**
 * The scenario under one manager. `midBatch` runs right after the batch of hand-approved CSRs is
 * approved (ours: kill -9 of a replica).
 */
async function scenario(prefix: string, midBatch: () => Promise<void>): Promise<Result> {
  const out: Result = {};
  const node = `${prefix}-n1`;
  const asToken = restAs({ token: `${tokenId}.${tokenSecret}` });

  // the kubelet's bootstrap: its client CSR, and a serving CSR the approver leaves alone
  const client = await createCsr(asToken, {
    name: `${prefix}-node`, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', cn: `system:node:${node}`, o: ['system:nodes'],
    usages: ['digital signature', 'client auth'],
  });
  await createCsr(asToken, {
    name: `${prefix}-serving`, signerName: 'kubernetes.io/kubelet-serving', cn: `system:node:${node}`, o: ['system:nodes'],
    dnsNames: [`${node}.example`], usages: ['digital signature', 'server auth'],
  });
  const nodeCsr = await until(`${prefix}-node`, 'approved and issued', issued);
  expect(nodeCsr.spec.username).toBe(`system:bootstrap:${tokenId}`);
  out.node = view(nodeCsr, prefix);
  const certPem = Buffer.from(nodeCsr.status!.certificate!, 'base64').toString();

  // the certificate authenticates as the node
  const asNode = restAs({ certPem, keyPem: client.keyPem });
  const review = (await asNode.request<{ status?: { userInfo?: { username?: string; groups?: string[] } } }>('POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })).body;
  out.whoami = { username: (review.status?.userInfo?.username ?? '').split(prefix).join('<p>'), groups: [...(review.status?.userInfo?.groups ?? [])].sort() };
  // and as a user sees it: `kubectl auth whoami` with the certificate and key in a kubeconfig
  const cluster = kc.getCurrentCluster()!;
  const nodeKubeconfig = path.join(TEST_DATA_DIR, `${prefix}-node.kubeconfig`);
  fs.writeFileSync(nodeKubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'node',
    clusters: [{ name: 'local', cluster: { server: cluster.server, 'certificate-authority-data': fs.readFileSync(pki.caCert).toString('base64') } }],
    users: [{ name: 'node', user: { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(client.keyPem).toString('base64') } }],
    contexts: [{ name: 'node', context: { cluster: 'local', user: 'node' } }],
  }), { mode: 0o600 });
  try {
    const kubectl = (await ensureBinaries(['kubectl'])).kubectl;
    const who = JSON.parse(execFileSync(kubectl, ['--kubeconfig', nodeKubeconfig, 'auth', 'whoami', '-o', 'json']).toString()) as { status?: { userInfo?: { username?: string } } };
    out.kubectlWhoami = (who.status?.userInfo?.username ?? '').split(prefix).join('<p>');
  } finally {
    fs.rmSync(nodeKubeconfig, { force: true });
  }

  // its renewal, made as the node: approved as selfnodeclient
  await createCsr(asNode, {
    name: `${prefix}-renew`, signerName: 'kubernetes.io/kube-apiserver-client-kubelet', cn: `system:node:${node}`, o: ['system:nodes'],
    usages: ['digital signature', 'key encipherment', 'client auth'],
  });
  out.renewal = view(await until(`${prefix}-renew`, 'approved and issued', issued), prefix);

  // a kube-apiserver-client CSR approved by hand (a shorter lifetime asked for), and one with bad usages
  await createCsr(rest, { name: `${prefix}-client`, signerName: 'kubernetes.io/kube-apiserver-client', cn: 'e2e-user', o: ['e2e'],
    usages: ['digital signature', 'key encipherment', 'client auth'], expirationSeconds: 3600 });
  await createCsr(rest, { name: `${prefix}-bad`, signerName: 'kubernetes.io/kube-apiserver-client', cn: 'e2e-user',
    usages: ['digital signature', 'server auth'] });
  await approveByHand(`${prefix}-client`);
  await approveByHand(`${prefix}-bad`);
  out.client = view(await until(`${prefix}-client`, 'issued', issued), prefix);
  out.bad = view(await until(`${prefix}-bad`, 'failed', hasCondition('Failed')), prefix);

  // a batch approved at once (ours: a replica killed while signing it)
  const batch = Array.from({ length: BATCH }, (_, i) => `${prefix}-batch-${i}`);
  for (const name of batch) {
    await createCsr(rest, { name, signerName: 'kubernetes.io/kube-apiserver-client', cn: 'e2e-batch', usages: ['digital signature', 'client auth'] });
  }
  await Promise.all(batch.map(approveByHand));
  await midBatch();
  const batchViews = [];
  for (const name of batch) batchViews.push(view(await until(name, 'issued', issued, 45_000), prefix));
  out.batch = batchViews.map((v) => JSON.stringify(v)).filter((v, i, all) => all.indexOf(v) === i).map((v) => JSON.parse(v) as unknown);

  // the serving CSR: still pending, after everything else was handled
  out.serving = view((await csrOf(`${prefix}-serving`))!, prefix);
  return out;
}

/** Successful writes of each CSR's status by the certificate controller, from the apiserver's audit log. */
function statusWrites(names: string[], since: number): Map<string, number> {
  const text = fs.readFileSync(auditLogPath(TEST_DATA_DIR)).subarray(since).toString('utf8');
  const out = new Map(names.map((n) => [n, 0]));
  for (const line of text.split('\n')) {
    if (!line.includes('certificatesigningrequests')) continue;
    let e: { stage?: string; verb?: string; objectRef?: { resource?: string; subresource?: string; name?: string }; responseStatus?: { code?: number } };
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    const n = e.objectRef?.name ?? '';
    if (e.stage === 'ResponseComplete' && e.verb === 'update' && e.objectRef?.subresource === 'status' && out.has(n) && (e.responseStatus?.code ?? 0) < 300) {
      out.set(n, out.get(n)! + 1);
    }
  }
  return out;
}

beforeAll(async () => {
  const inAnHour = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await rest.request('POST', '/api/v1/namespaces/kube-system/secrets', {
    body: {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: `bootstrap-token-${tokenId}` }, type: 'bootstrap.kubernetes.io/token',
      stringData: { 'token-id': tokenId, 'token-secret': tokenSecret, 'usage-bootstrap-authentication': 'true', expiration: inAnHour,
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' },
    },
  });
  for (const [name, role, group] of BINDINGS) {
    await rest.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }] },
    }).catch((e) => {
      if (!(e instanceof ApiError && e.status === 409)) throw e;
    });
  }
});

afterAll(async () => {
  await upstream.stop();
  await Promise.all(managers.map((m) => m.kill()));
  for (const n of made) await rest.request('DELETE', `${CSRS}/${n}`).catch(() => undefined);
  for (const [name] of BINDINGS) await rest.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`).catch(() => undefined);
  await rest.request('DELETE', TOKEN_SECRET).catch(() => undefined);
});

test('TLS bootstrap: kubelet CSRs approved and signed as upstream does, across a kill -9 mid-signing; the CA key in no history or log', async () => {
  const started = Date.now();

  // upstream
  await upstream.start('csrapproving,csrsigning', ['--use-service-account-credentials', ...SIGNING]);
  const upPrefix = uniqueName('e2e-csr-up');
  const theirs = await scenario(upPrefix, async () => undefined);
  await upstream.stop();
  const upstreamDone = Date.now();

  // ours: two replicas; one killed while the batch is signed
  const auditFrom = fs.statSync(auditLogPath(TEST_DATA_DIR)).size;
  const taskQueue = uniqueName('csrsigning-e2e');
  const args = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s', ...SIGNING];
  const [a, b] = await Promise.all([
    startManagerProcess(taskQueue, args, { controllers: 'csrapproving,csrsigning' }),
    startManagerProcess(taskQueue, args, { controllers: 'csrapproving,csrsigning' }),
  ]);
  managers.push(a, b);
  const ourPrefix = uniqueName('e2e-csr-ours');
  // the replica doing the signing so far (its workflows' tasks stick to it) is the one killed, at once
  let killed: ManagerProcess | undefined;
  let killedHadIssued = -1;
  const ours = await scenario(ourPrefix, async () => {
    killed = [a, b].find((m) => fs.readFileSync(m.logFile, 'utf8').includes('issued certificate')) ?? a;
    // mid-signing: as soon as the first certificate of the batch is written, the others in flight
    await eventually('a first batch certificate', async () => {
      const list = (await rest.request<{ items: V1CertificateSigningRequest[] }>('GET', CSRS)).body.items;
      return list.some((c) => c.metadata?.name?.startsWith(`${ourPrefix}-batch-`) && issued(c)) || undefined;
    }, 20_000, 5);
    await killed.kill('SIGKILL');
    killedHadIssued = (fs.readFileSync(killed.logFile, 'utf8').match(new RegExp(`"csr":"${ourPrefix}-batch-\\d+"[^\\n]*issued certificate`, 'g')) ?? []).length;
  });
  const oursDone = Date.now();

  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'csrsigning-vs-upstream.json'), JSON.stringify({ theirs, ours }, null, 1));
  const survivor = killed === a ? b : a;
  const survivorIssued = (fs.readFileSync(survivor.logFile, 'utf8').match(new RegExp(`"csr":"${ourPrefix}-batch-\\d+"[^\\n]*issued certificate`, 'g')) ?? []).length;
  process.stderr.write(`csr approving/signing: upstream scenario ${upstreamDone - started} ms, ours ${oursDone - upstreamDone} ms; `
    + `batch of ${BATCH}: ${killedHadIssued} issued by the killed replica before the kill, ${survivorIssued} by the survivor\n`);

  // what upstream does, as the issue asks
  expect(theirs.node).toMatchObject({
    conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving kubelet client certificate after SubjectAccessReview.' }],
    certificate: { subject: 'O=system:nodes\nCN=system:node:<p>-n1', issuer: 'CN=temporal-kcm-local-ca', lifetimeSeconds: 8760 * 3600, verifiesWithClusterCa: true },
  });
  expect(theirs.whoami).toEqual({ username: 'system:node:<p>-n1', groups: ['system:authenticated', 'system:nodes'] });
  expect(theirs.kubectlWhoami).toBe('system:node:<p>-n1');
  expect(theirs.renewal).toMatchObject({ conditions: [{ reason: 'AutoApproved', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' }] });
  expect(theirs.client).toMatchObject({ certificate: { lifetimeSeconds: 3600 + 300 } });
  expect(theirs.bad).toMatchObject({ conditions: [{ type: 'Approved' }, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: 'invalid usage for client certificate: server auth' }], certificate: null });
  expect(theirs.serving).toEqual({ conditions: [], certificate: null });
  expect((theirs.batch as unknown[]).length).toBe(1);

  // ours: the same, field by field
  expect(Object.keys(ours)).toEqual(Object.keys(theirs));
  for (const k of Object.keys(theirs)) expect([k, ours[k]]).toEqual([k, theirs[k]]);

  // one certificate per CSR: each batch CSR's status written once, by the certificate controller, across the kill
  const batch = Array.from({ length: BATCH }, (_, i) => `${ourPrefix}-batch-${i}`);
  const writes = statusWrites(batch, auditFrom);
  for (const n of batch) expect([n, writes.get(n)]).toEqual([n, 1]);

  // no byte of the CA key in any history of ours (payloads decoded) or in either replica's log
  const keyPem = fs.readFileSync(pki.caKey, 'utf8');
  const keyBody = keyPem.split('\n').filter((l) => l && !l.startsWith('-----'));
  const needles = [keyBody.join(''), ...keyBody.filter((l) => l.length >= 40), Buffer.from(keyPem).toString('base64').slice(0, 60)];
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    let signing = 0;
    let alreadyIssued = 0;
    for await (const wf of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
      const json = historyToJSON(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory());
      const decoded = [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8')).join('\n');
      const flat = (json + decoded).replace(/\\n|\s/g, '');
      for (const n of needles) expect([wf.workflowId, flat.includes(n.replace(/\s/g, ''))]).toEqual([wf.workflowId, false]);
      if (wf.workflowId.startsWith(`csrsigning/${ourPrefix}-batch-`)) alreadyIssued += (decoded.match(/"outcome":"already-issued"/g) ?? []).length;
      if (wf.workflowId.startsWith('csrsigning/')) {
        signing++;
        expect(json).toContain('signCsr');
      }
    }
    expect(signing).toBeGreaterThanOrEqual(BATCH + 3);
    process.stderr.write(`csr signing: ${alreadyIssued} batch retries found their certificate already written\n`);
    // the run that signed the CSR answers from its last state (the ID's first run: see firstRun)
    const signer = await eventually('the signing run listed', () => firstRun(client, `csrsigning/${ourPrefix}-client`), 30_000, 500);
    const state = await signer.query<{ view?: Record<string, unknown> }>('state');
    expect(state.view).toMatchObject({ outcome: 'issued' });
  } finally {
    await connection.close();
  }
  const logs = [a.logFile, b.logFile].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  expect(logs).toContain('issued certificate');
  expect(logs).toContain('approved certificate signing request');
  for (const n of needles) expect(logs.replace(/\s/g, '').includes(n)).toBe(false);
}, 150_000);
