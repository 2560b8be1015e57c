import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApiError } from '../../activities/kube/rest';
import { eventually, freshNamespace, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';
import { deploymentQueuesQuery } from '../../workflows/runtime/task-queues';
import { UpstreamKcm } from '../support/upstream';

/**
 * The CSR cleaner, the bootstrap token cleaner and the legacy service account token cleaner,
 * compared with upstream kube-controller-manager v1.35.4 on the same stack: the same objects are
 * made before each manager starts (upstream's CSR and legacy-token passes run at start, then only
 * hourly and daily), and what a user sees afterwards (which objects remain, their labels, Events)
 * must be the same. The CSRs' ages are set through their conditions' lastUpdateTime, which the API
 * server keeps as given; certificates are made with openssl with the validity each case needs.
 * Ours is killed with kill -9 while its timers for a token and a CSR due in a few seconds run.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const CONTROLLERS = 'certificatesigningrequest-cleaner-controller,token-cleaner-controller,legacy-serviceaccount-token-cleaner-controller';
/** --legacy-service-account-token-clean-up-period: short, so tokens made a few seconds ago qualify */
const PERIOD_S = 3;
const PERIOD = `${PERIOD_S}s`;
/**
 * How far after their creation the "soon" token and CSR are due: past ours seeing them and a
 * restart. They are made after the first passes, so that a slow setup or start cannot eat the margin.
 */
const SOON_MS = 15_000;
const TRACKING = '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const HOUR = 3600_000;
const SIGNER = 'example.com/cleaners-e2e';

const upstream = new UpstreamKcm('cleaners');
let ours: ManagerProcess | undefined;
let trackingSince: string | undefined;
const namespaces: string[] = [];
const csrNames: string[] = [];
const kubeSystemSecrets: string[] = [];
/** every bootstrap token's secret part: none may reach a history or a log */
const tokenSecrets: string[] = [];
let certDir = '';

type Secret = { metadata: { name: string; namespace?: string; labels?: Record<string, string>; uid?: string } };
type Event = { reason: string; message: string; involvedObject: { kind: string; name: string } };
type Csr = { metadata: { name: string }; status?: Record<string, unknown> };

function openssl(args: string[]): void {
  execFileSync('openssl', args, { cwd: certDir, stdio: ['ignore', 'pipe', 'pipe'] });
}

const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
let serial = 1;

/** A certificate for the request key, valid from `fromMs` to `toMs` (openssl ca sets any dates). */
function certificate(fromMs: number, toMs: number): string {
  const out = `cert-${serial}.pem`;
  fs.writeFileSync(path.join(certDir, 'db', 'serial'), `${String(serial++).padStart(2, '0')}\n`);
  openssl(['ca', '-batch', '-config', 'ca.cnf', '-selfsign', '-keyfile', 'key.pem', '-in', 'req.pem',
    '-startdate', stamp(fromMs), '-enddate', stamp(toMs), '-out', out, '-notext']);
  return fs.readFileSync(path.join(certDir, out), 'utf8');
}

function preparePki(): void {
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cleaners-e2e-'));
  fs.mkdirSync(path.join(certDir, 'db'));
  fs.writeFileSync(path.join(certDir, 'db', 'index.txt'), '');
  fs.writeFileSync(path.join(certDir, 'ca.cnf'), [
    '[ca]', 'default_ca = d', '[d]', 'database = db/index.txt', 'new_certs_dir = db', 'default_md = sha256', 'policy = p',
    'serial = db/serial', 'unique_subject = no', '[p]', 'commonName = supplied', '',
  ].join('\n'));
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'key.pem']);
  openssl(['req', '-new', '-key', 'key.pem', '-subj', '/CN=cleaners-e2e', '-out', 'req.pem']);
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

interface CsrCase {
  /** conditions set through the approval and status subresources, each with its lastUpdateTime */
  approved?: number;
  denied?: number;
  failed?: number;
  /** a certificate valid until this time (issued) */
  certUntil?: number;
}

async function createCsr(name: string, c: CsrCase): Promise<void> {
  const request = fs.readFileSync(path.join(certDir, 'req.pem'), 'utf8');
  await rest.request('POST', CSRS, { body: {
    apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest',
    metadata: { name }, spec: { request: b64(request), signerName: SIGNER, usages: ['client auth'] },
  } });
  csrNames.push(name);
  const cond = (type: string, at: number) => ({ type, status: 'True', reason: 'E2E', message: 'set by the cleaners e2e', lastUpdateTime: new Date(at).toISOString() });
  if (c.approved !== undefined || c.denied !== undefined) {
    const csr = (await rest.request<Csr>('GET', `${CSRS}/${name}`)).body;
    const conditions = [...(c.approved !== undefined ? [cond('Approved', c.approved)] : []), ...(c.denied !== undefined ? [cond('Denied', c.denied)] : [])];
    await rest.request('PUT', `${CSRS}/${name}/approval`, { body: { ...csr, status: { ...(csr.status ?? {}), conditions } } });
  }
  if (c.failed !== undefined || c.certUntil !== undefined) {
    const csr = (await rest.request<Csr>('GET', `${CSRS}/${name}`)).body;
    const status = { ...(csr.status ?? {}) } as { conditions?: unknown[]; certificate?: string };
    if (c.failed !== undefined) status.conditions = [...(status.conditions ?? []), cond('Failed', c.failed)];
    if (c.certUntil !== undefined) status.certificate = b64(certificate(c.certUntil - 2 * 24 * HOUR, c.certUntil));
    await rest.request('PUT', `${CSRS}/${name}/status`, { body: { ...csr, status } });
  }
}

async function createSecret(ns: string, body: Record<string, unknown>): Promise<void> {
  await rest.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', ...body } });
}

/** A bootstrap token Secret (kube-system unless `ns`), with the given expiration when there is one. */
async function bootstrapToken(name: string, o: { expiration?: string; ns?: string; type?: string }): Promise<void> {
  const ns = o.ns ?? 'kube-system';
  const id = randomBytes(3).toString('hex');
  const secret = randomBytes(8).toString('hex');
  tokenSecrets.push(secret);
  await createSecret(ns, {
    metadata: { name }, type: o.type ?? 'bootstrap.kubernetes.io/token',
    stringData: { 'token-id': id, 'token-secret': secret, ...(o.expiration !== undefined ? { expiration: o.expiration } : {}) },
  });
  if (ns === 'kube-system') kubeSystemSecrets.push(name);
}

/** What each step made, by its role in the scenario. */
interface Made {
  ns: string;
  csr: Record<string, string>;
  bootstrap: Record<string, string>;
  legacy: string[];
  soonDueAt: number;
}

const LEGACY = ['invalid-old', 'fresh', 'used-today', 'used-old-invalid-old', 'mounted', 'unreferenced', 'wrong-uid', 'garbage-invalid', 'garbage-used', 'no-account'];

async function setup(prefix: string): Promise<Made> {
  // whole seconds: the API server keeps condition times to the second
  const now = Math.floor(Date.now() / 1000) * 1000;
  const ns = await freshNamespace(kc, `cleaners-${prefix}`);
  namespaces.push(ns);
  const today = new Date(now).toISOString().slice(0, 10);

  // CSRs: one per rule, and one beside each rule that must stay
  const csr: Record<string, string> = {};
  const cases: Record<string, CsrCase> = {
    'denied-old': { denied: now - 2 * HOUR },
    'denied-new': { denied: now },
    'failed-old': { approved: now, failed: now - 2 * HOUR },
    'approved-unissued-2h': { approved: now - 2 * HOUR },
    'approved-unissued-25h': { approved: now - 25 * HOUR },
    'issued-2h': { approved: now - 2 * HOUR, certUntil: now + 24 * HOUR },
    'issued-expired': { approved: now, certUntil: now - HOUR },
    'issued-valid': { approved: now, certUntil: now + 24 * HOUR },
    pending: {},
  };
  for (const [k, c] of Object.entries(cases)) {
    csr[k] = uniqueName(`${prefix}-${k}`);
    await createCsr(csr[k], c);
  }

  // bootstrap tokens
  const bootstrap: Record<string, string> = {};
  const tokens: Record<string, { expiration?: string; ns?: string; type?: string }> = {
    expired: { expiration: '2020-01-01T00:00:00Z' },
    future: { expiration: new Date(now + HOUR).toISOString() },
    never: {},
    garbage: { expiration: 'not a time' },
    'other-namespace': { expiration: '2020-01-01T00:00:00Z', ns },
    opaque: { expiration: '2020-01-01T00:00:00Z', type: 'Opaque' },
  };
  for (const [k, t] of Object.entries(tokens)) {
    bootstrap[k] = `bootstrap-token-${prefix}-${k}-${randomBytes(2).toString('hex')}`;
    await bootstrapToken(bootstrap[k], t);
  }

  // legacy tokens of one account (and one of an account that does not exist)
  const listed = LEGACY.filter((k) => k !== 'unreferenced' && k !== 'no-account').map((k) => ({ name: `legacy-${k}` }));
  const sa = (await rest.request<{ metadata: { uid: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    body: { metadata: { name: 'legacy' }, secrets: listed },
  })).body;
  const labels: Record<string, Record<string, string>> = {
    'invalid-old': { 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
    fresh: {},
    'used-today': { 'kubernetes.io/legacy-token-last-used': today },
    'used-old-invalid-old': { 'kubernetes.io/legacy-token-last-used': '2020-01-01', 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
    mounted: { 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
    unreferenced: { 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
    'wrong-uid': { 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
    'garbage-invalid': { 'kubernetes.io/legacy-token-invalid-since': 'garbage' },
    'garbage-used': { 'kubernetes.io/legacy-token-last-used': 'xyz', 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
    'no-account': { 'kubernetes.io/legacy-token-invalid-since': '2020-01-02' },
  };
  for (const k of LEGACY) {
    await createSecret(ns, {
      metadata: {
        name: `legacy-${k}`, labels: labels[k],
        annotations: {
          'kubernetes.io/service-account.name': k === 'no-account' ? 'nobody' : 'legacy',
          ...(k === 'wrong-uid' ? { 'kubernetes.io/service-account.uid': '00000000-0000-0000-0000-000000000000' } : k === 'no-account' ? {} : { 'kubernetes.io/service-account.uid': sa.metadata.uid }),
        },
      },
      type: 'kubernetes.io/service-account-token',
    });
  }
  await rest.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: {
    metadata: { name: 'mounts-legacy-token' },
    spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', secret: { secretName: 'legacy-mounted' } }] },
  } });
  // the tokens must be older than the clean-up period when the first pass runs
  await new Promise((r) => setTimeout(r, PERIOD_S * 1000 + 500));
  return { ns, csr, bootstrap, legacy: LEGACY, soonDueAt: 0 };
}

/** The token and the CSR due SOON_MS from now, made once the first passes are done. */
async function addSoon(m: Made, prefix: string): Promise<void> {
  // whole seconds: the API server keeps condition times to the second
  const now = Math.floor(Date.now() / 1000) * 1000;
  m.soonDueAt = now + SOON_MS;
  // issued an hour ago all but SOON_MS: due then; upstream's next pass is an hour away
  m.csr['issued-soon'] = uniqueName(`${prefix}-issued-soon`);
  await createCsr(m.csr['issued-soon'], { approved: now - HOUR + SOON_MS, certUntil: now + 24 * HOUR });
  m.bootstrap.soon = `bootstrap-token-${prefix}-soon-${randomBytes(2).toString('hex')}`;
  await bootstrapToken(m.bootstrap.soon, { expiration: new Date(m.soonDueAt).toISOString().replace(/\.000Z$/, 'Z') });
}

async function exists(p: string): Promise<boolean> {
  try {
    await rest.request('GET', p);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return false;
    throw e;
  }
}

const csrPath = (name: string) => `${CSRS}/${name}`;
const secretPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/secrets/${name}`;
const bootstrapNs = (m: Made, k: string) => (k === 'other-namespace' ? m.ns : 'kube-system');

/** What a user sees: which objects remain, the legacy tokens' labels (today's date as TODAY), Events about any of them. */
async function snapshot(m: Made): Promise<Record<string, unknown>> {
  const today = new Date().toISOString().slice(0, 10);
  const out: Record<string, unknown> = {};
  for (const [k, name] of Object.entries(m.csr)) if (k !== 'issued-soon') out[`csr/${k}`] = (await exists(csrPath(name))) ? 'kept' : 'deleted';
  for (const [k, name] of Object.entries(m.bootstrap)) out[`bootstrap/${k}`] = (await exists(secretPath(bootstrapNs(m, k), name))) ? 'kept' : 'deleted';
  for (const k of m.legacy) {
    try {
      const s = (await rest.request<Secret>('GET', secretPath(m.ns, `legacy-${k}`))).body;
      const labels = Object.entries(s.metadata.labels ?? {}).map(([l, v]) => `${l}=${v === today ? 'TODAY' : v}`).sort();
      out[`legacy/${k}`] = labels.length ? labels.join(',') : 'kept';
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
      out[`legacy/${k}`] = 'deleted';
    }
  }
  const ours = new Set([...Object.values(m.csr), ...Object.values(m.bootstrap), ...m.legacy.map((k) => `legacy-${k}`)]);
  const events: string[] = [];
  for (const ns of [m.ns, 'kube-system', 'default']) {
    const items = (await rest.request<{ items: Event[] }>('GET', `/api/v1/namespaces/${ns}/events`)).body.items;
    for (const e of items) if (ours.has(e.involvedObject.name)) events.push(`${e.involvedObject.kind} ${e.reason}`);
  }
  out.events = events.sort();
  return out;
}

/** The effects of the passes at start: every object due at once gone, the fresh legacy tokens labelled. */
async function firstPassesDone(m: Made): Promise<void> {
  await eventually('the cleaners\' first passes', async () => {
    const pending: string[] = [];
    for (const k of ['denied-old', 'failed-old', 'approved-unissued-25h', 'issued-2h', 'issued-expired']) if (await exists(csrPath(m.csr[k]))) pending.push(`csr/${k}`);
    for (const k of ['expired', 'garbage']) if (await exists(secretPath('kube-system', m.bootstrap[k]))) pending.push(`bootstrap/${k}`);
    for (const k of ['invalid-old', 'used-old-invalid-old']) if (await exists(secretPath(m.ns, `legacy-${k}`))) pending.push(`legacy/${k}`);
    for (const k of ['fresh', 'garbage-invalid']) {
      const s = (await rest.request<Secret>('GET', secretPath(m.ns, `legacy-${k}`))).body;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(s.metadata.labels?.['kubernetes.io/legacy-token-invalid-since'] ?? '')) pending.push(`legacy/${k} label`);
    }
    // thrown, so that a timeout names what is still pending
    if (pending.length) throw new Error(`still pending: ${pending.join(', ')}`);
    return true;
  }, 30_000, 200);
}

async function soonTokenGone(m: Made): Promise<number> {
  return eventually('the token expiring soon deleted', async () => ((await exists(secretPath('kube-system', m.bootstrap.soon))) ? false : Date.now()), SOON_MS + 20_000, 200);
}

beforeAll(async () => {
  preparePki();
  // token use counts as tracked long ago, so the legacy cleaner's gate opens at once (restored after)
  const cm = (await rest.request<{ data?: Record<string, string> }>('GET', TRACKING)).body;
  trackingSince = cm.data?.since;
  await rest.request('PATCH', TRACKING, { contentType: 'application/merge-patch+json', body: { data: { since: '2020-01-01' } } });
});

afterAll(async () => {
  await upstream.stop();
  await ours?.kill();
  if (trackingSince) await rest.request('PATCH', TRACKING, { contentType: 'application/merge-patch+json', body: { data: { since: trackingSince } } }).catch(() => undefined);
  for (const n of csrNames) await rest.request('DELETE', csrPath(n)).catch(() => undefined);
  for (const n of kubeSystemSecrets) await rest.request('DELETE', secretPath('kube-system', n)).catch(() => undefined);
  for (const ns of namespaces) await rest.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
  if (certDir) fs.rmSync(certDir, { recursive: true, force: true });
});

test('CSRs, bootstrap tokens and legacy service account tokens are cleaned up as upstream cleans them', async () => {
  // upstream
  const up = await setup('up');
  await upstream.start(CONTROLLERS, ['--use-service-account-credentials', `--legacy-service-account-token-clean-up-period=${PERIOD}`,
    // upstream's CSR cleaner does not wait for its informer: started at once, its pass at start
    // sees no CSR (the next is an hour later). A start interval lets the informer list first.
    '--controller-start-interval=1s']);
  await firstPassesDone(up);
  await addSoon(up, 'up');
  const upSoonGoneAt = await soonTokenGone(up);
  await new Promise((r) => setTimeout(r, 1500));
  const theirs = await snapshot(up);
  // upstream looks at CSRs hourly: one due since the test began is still there
  const upstreamKeptSoonCsr = await exists(csrPath(up.csr['issued-soon']));
  await upstream.stop();

  // ours, killed with kill -9 while the soon-due token's and CSR's timers run
  const mine = await setup('ours');
  const taskQueue = uniqueName('cleaners-e2e');
  // the restarted replica takes the killed one's watch after 3 s without heartbeats, not the default 15 s
  const args = ['--use-service-account-credentials', `--legacy-service-account-token-clean-up-period=${PERIOD}`, '--informer-heartbeat-timeout', '3s'];
  ours = await startManagerProcess(taskQueue, args, { controllers: CONTROLLERS });
  await firstPassesDone(mine);
  await addSoon(mine, 'ours');
  // the kill comes once the runs of both wait for the due time, and a restart before it
  const early = await testTemporalConnection();
  try {
    const client = new Client({ connection: early });
    for (const id of [`csrcleaner/${mine.csr['issued-soon']}`, `tokencleaner/kube-system/${mine.bootstrap.soon}`]) {
      await eventually(`${id} waits`, async () => (await client.workflow.getHandle(id).query<{ view?: { decision?: string } }>('state')
        .catch(() => undefined))?.view?.decision === 'wait', 10_000, 100);
    }
  } finally {
    await early.close();
  }
  expect(Date.now()).toBeLessThan(mine.soonDueAt - 5000);
  expect(await exists(csrPath(mine.csr['issued-soon']))).toBe(true);
  const firstLog = ours.logFile;
  await ours.kill('SIGKILL');
  ours = await startManagerProcess(taskQueue, args, { controllers: CONTROLLERS });
  const soonGoneAt = await soonTokenGone(mine);
  const soonCsrGoneAt = await eventually('the CSR due soon deleted', async () => ((await exists(csrPath(mine.csr['issued-soon']))) ? false : Date.now()), 20_000, 200);
  await new Promise((r) => setTimeout(r, 1500));
  const result = await snapshot(mine);
  const logs = [firstLog, ours.logFile].map((f) => fs.readFileSync(f, 'utf8')).join('\n');

  // the runs of CSRs still waiting: the state query tells what each waits for; a CSR deleted
  // before its deadline ends its run
  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    const valid = client.workflow.getHandle(`csrcleaner/${mine.csr['issued-valid']}`);
    const state = await valid.query<{ view?: Record<string, unknown> }>('state');
    expect(state.view).toMatchObject({ csr: mine.csr['issued-valid'], decision: 'wait', rule: 'issued-past-deadline' });
    await rest.request('DELETE', csrPath(mine.csr.pending));
    const pendingRun = client.workflow.getHandle(`csrcleaner/${mine.csr.pending}`);
    await eventually('the deleted pending CSR\'s run ended', async () => (await pendingRun.describe()).status.name === 'COMPLETED', 15_000, 200);

    // no bootstrap token's secret, raw or base64, in any history of this deployment (payloads
    // decoded) or in either replica's log; the expirations are there
    const needles = tokenSecrets.flatMap((t) => [t, b64(t)]);
    let tokenHistories = 0;
    for await (const wf of client.workflow.list({ query: deploymentQueuesQuery(taskQueue) })) {
      const json = historyToJSON(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory());
      const decoded = [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8')).join('\n');
      for (const n of needles) expect([wf.workflowId, json.includes(n) || decoded.includes(n)]).toEqual([wf.workflowId, false]);
      if (wf.workflowId.startsWith('tokencleaner/')) {
        tokenHistories++;
        expect(decoded).toContain('"expiration"');
      }
    }
    expect(tokenHistories).toBeGreaterThanOrEqual(4);
    expect(logs).toContain(mine.bootstrap.expired);
    for (const n of needles) expect(logs.includes(n)).toBe(false);
  } finally {
    await connection.close();
  }

  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'cleaners-vs-upstream.json'), JSON.stringify({ theirs, ours: result }, null, 1));
  expect(theirs).toEqual({
    'csr/denied-old': 'deleted',
    'csr/denied-new': 'kept',
    'csr/failed-old': 'deleted',
    'csr/approved-unissued-2h': 'kept',
    'csr/approved-unissued-25h': 'deleted',
    'csr/issued-2h': 'deleted',
    'csr/issued-expired': 'deleted',
    'csr/issued-valid': 'kept',
    'csr/pending': 'kept',
    'bootstrap/expired': 'deleted',
    'bootstrap/soon': 'deleted',
    'bootstrap/future': 'kept',
    'bootstrap/never': 'kept',
    'bootstrap/garbage': 'deleted',
    'bootstrap/other-namespace': 'kept',
    'bootstrap/opaque': 'kept',
    'legacy/invalid-old': 'deleted',
    'legacy/fresh': 'kubernetes.io/legacy-token-invalid-since=TODAY',
    'legacy/used-today': 'kubernetes.io/legacy-token-last-used=TODAY',
    'legacy/used-old-invalid-old': 'deleted',
    'legacy/mounted': 'kubernetes.io/legacy-token-invalid-since=2020-01-02',
    'legacy/unreferenced': 'kubernetes.io/legacy-token-invalid-since=2020-01-02',
    'legacy/wrong-uid': 'kubernetes.io/legacy-token-invalid-since=2020-01-02',
    'legacy/garbage-invalid': 'kubernetes.io/legacy-token-invalid-since=TODAY',
    'legacy/garbage-used': 'kubernetes.io/legacy-token-invalid-since=2020-01-02,kubernetes.io/legacy-token-last-used=xyz',
    'legacy/no-account': 'kubernetes.io/legacy-token-invalid-since=2020-01-02',
    events: [],
  });
  expect(result).toEqual(theirs);
  // the token expiring soon goes at its expiry under both (upstream requeues it for then), not before
  expect(upSoonGoneAt).toBeGreaterThanOrEqual(up.soonDueAt);
  expect(soonGoneAt).toBeGreaterThanOrEqual(mine.soonDueAt);
  // the CSR due soon: upstream keeps it until its next hourly pass; ours deletes it when due (documented)
  expect(upstreamKeptSoonCsr).toBe(true);
  expect(soonCsrGoneAt).toBeGreaterThan(mine.soonDueAt);
}, 180_000);
