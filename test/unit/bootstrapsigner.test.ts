import { Writable } from 'node:stream';
import pino from 'pino';
import { createBootstrapSignerActivities, tokenFacts } from '../../activities/bootstrapsigner/activities';
import { computeDetachedSignature } from '../../activities/bootstrapsigner/jws';
import { SIGNER_SECRET_FIELDS, bootstrapSignerRoutes, cachedSignerSecret } from '../../activities/bootstrapsigner/routes';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { ApiError, type KubeRest } from '../../activities/kube/rest';
import { RESOURCES } from '../../activities/kube/resources';
import {
  EXPIRY_MARGIN_MS,
  msUntilExpiryCheck,
  planSignatures,
  signingTokens,
  signingVerdict,
  tokenIdOfName,
  type TokenFacts,
} from '../../workflows/bootstrapsigner/logic';
import { bootstrapSignerWorkflow, mergeBootstrapSignerEvents, type BootstrapSignerEvent } from '../../workflows/bootstrapsigner/workflow';
import { routeHarness } from '../support/routes';

const b64 = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s) : s).toString('base64');

describe('bootstrap signer JWS', () => {
  // made by upstream's k8s.io/cluster-bootstrap v0.35.4 token/jws.ComputeDetachedSignature (go-jose v2.6.3)
  const KUBECONFIG = 'apiVersion: v1\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: ""\n';
  test.each([
    ['empty content', '', 'abcdef', Buffer.from('0123456789abcdef'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..MO2tlCpY1xB334qWeOe_XEv9c6DIMRNmKJZImOzY17k'],
    ['a kubeconfig', KUBECONFIG, 'abcdef', Buffer.from('0123456789abcdef'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..wVaoE7MrQB-RAG6WyPt-wfU_dz2Srivl2eIkiT_EEts'],
    ['non-ASCII content', 'héllo <wörld> & ünïcode \u2028 😀', 'z9y8x7', Buffer.from('s'), 'eyJhbGciOiJIUzI1NiIsImtpZCI6Ino5eTh4NyJ9..JDjUO604MgCXS-yzZ-8MsFUlewwqD1nTfJaEnZhzc0k'],
    ['a key that is not UTF-8', 'x', '000000', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(' binary key')]),
      'eyJhbGciOiJIUzI1NiIsImtpZCI6IjAwMDAwMCJ9..iV_iEJWvDftlp8BEzXsIW0-E-eqkZND2Ta3Avas3TVA'],
  ])('%s: byte-equal to upstream', (_what, content, id, key, want) => {
    expect(computeDetachedSignature(content, id, key)).toBe(want);
  });

  test('a kid that Go could escape differently is refused', () => {
    expect(() => computeDetachedSignature('x', 'ab<def', Buffer.from('k'))).toThrow();
    expect(() => computeDetachedSignature('x', 'ABCDEF', Buffer.from('k'))).toThrow();
  });
});

const facts = (o: Partial<TokenFacts> = {}): TokenFacts =>
  ({ name: 'bootstrap-token-abcdef', tokenId: 'abcdef', hasSecret: true, expiration: '', usageSigning: 'true', ...o });
const NOW = Date.parse('2026-03-10T12:00:00Z');

describe('bootstrap signer logic', () => {
  test('the name gives the token id', () => {
    expect(tokenIdOfName('bootstrap-token-abc123')).toBe('abc123');
    expect(tokenIdOfName('bootstrap-token-abc12')).toBeUndefined();
    expect(tokenIdOfName('bootstrap-token-ABC123')).toBeUndefined();
    expect(tokenIdOfName('bootstrap-token-abc1234')).toBeUndefined();
    expect(tokenIdOfName('x-bootstrap-token-abc123')).toBeUndefined();
  });

  test('upstream\'s validateSecretForSigning, rule by rule', () => {
    expect(signingVerdict(facts(), NOW)).toEqual({ ok: true, tokenId: 'abcdef' });
    expect(signingVerdict(facts({ name: 'bootstrap-token-x' }), NOW)).toMatchObject({ ok: false, why: 'name is not bootstrap-token-<id>' });
    expect(signingVerdict(facts({ tokenId: '' }), NOW)).toMatchObject({ ok: false, why: 'no token-id' });
    expect(signingVerdict(facts({ tokenId: 'abcdeg' }), NOW)).toMatchObject({ ok: false, why: 'token-id does not match the name' });
    expect(signingVerdict(facts({ hasSecret: false }), NOW)).toMatchObject({ ok: false, why: 'no token-secret' });
    expect(signingVerdict(facts({ expiration: '2026-03-10T11:59:59Z' }), NOW)).toMatchObject({ ok: false, why: 'expired' });
    // expired at the very instant: Go's timeRemaining <= 0
    expect(signingVerdict(facts({ expiration: '2026-03-10T12:00:00Z' }), NOW)).toMatchObject({ ok: false, why: 'expired' });
    expect(signingVerdict(facts({ expiration: 'tomorrow' }), NOW)).toMatchObject({ ok: false, why: 'unparseable expiration' });
    expect(signingVerdict(facts({ expiration: '2026-03-10T13:00:00+01:00' }), NOW)).toMatchObject({ ok: false, why: 'expired' });
    expect(signingVerdict(facts({ expiration: '2026-03-10T12:00:01Z' }), NOW)).toEqual({ ok: true, tokenId: 'abcdef', expiresAt: NOW + 1000 });
    expect(signingVerdict(facts({ usageSigning: '' }), NOW)).toMatchObject({ ok: false, why: 'usage-bootstrap-signing is not "true"' });
    expect(signingVerdict(facts({ usageSigning: 'True' }), NOW)).toMatchObject({ ok: false });
    expect(signingVerdict(facts({ usageSigning: 'true ' }), NOW)).toMatchObject({ ok: false });
  });

  test('the signing set: one Secret per id, the rest skipped with a reason, the earliest expiry', () => {
    const r = signingTokens([
      facts({ name: 'bootstrap-token-bbbbbb', tokenId: 'bbbbbb', expiration: '2026-03-10T14:00:00Z' }),
      facts({ name: 'bootstrap-token-aaaaaa', tokenId: 'aaaaaa', expiration: '2026-03-10T13:00:00Z' }),
      facts({ name: 'bootstrap-token-cccccc', tokenId: 'cccccc', usageSigning: 'false' }),
      facts({ name: 'bootstrap-token-dddddd', tokenId: 'dddddd', expiration: '2020-01-01T00:00:00Z' }),
    ], NOW);
    expect(r.ids).toEqual(['aaaaaa', 'bbbbbb']);
    expect(r.nextExpiryAt).toBe(Date.parse('2026-03-10T13:00:00Z'));
    expect(r.skipped).toEqual([
      { secret: 'bootstrap-token-cccccc', why: 'usage-bootstrap-signing is not "true"' },
      { secret: 'bootstrap-token-dddddd', why: 'expired' },
    ]);
    expect(signingTokens([facts()], NOW).nextExpiryAt).toBeUndefined();
  });

  test('the plan keeps other keys, replaces every signature, and says what changed', () => {
    const data = { kubeconfig: 'k', other: 'o', 'jws-kubeconfig-aaaaaa': 'A', 'jws-kubeconfig-bbbbbb': 'B-old', 'jws-kubeconfig-zzzzzz': 'Z' };
    const p = planSignatures(data, new Map([['bbbbbb', 'B'], ['aaaaaa', 'A'], ['cccccc', 'C']]));
    expect(p).toEqual({
      data: { kubeconfig: 'k', other: 'o', 'jws-kubeconfig-aaaaaa': 'A', 'jws-kubeconfig-bbbbbb': 'B', 'jws-kubeconfig-cccccc': 'C' },
      needUpdate: true, added: ['cccccc'], changed: ['bbbbbb'], removed: ['zzzzzz'],
    });
    expect(planSignatures({ kubeconfig: 'k', 'jws-kubeconfig-aaaaaa': 'A' }, new Map([['aaaaaa', 'A']])).needUpdate).toBe(false);
    expect(planSignatures({ kubeconfig: 'k' }, new Map()).needUpdate).toBe(false);
    // a key that is only the prefix is a signature too (of the empty id), and is removed
    expect(planSignatures({ kubeconfig: 'k', 'jws-kubeconfig-': 'x' }, new Map())).toMatchObject({ needUpdate: true, removed: [''] });
  });

  test('the expiry check comes a margin after the earliest expiry', () => {
    expect(msUntilExpiryCheck(undefined, NOW)).toBeUndefined();
    expect(msUntilExpiryCheck(NOW + 5000, NOW)).toBe(5000 + EXPIRY_MARGIN_MS);
    expect(msUntilExpiryCheck(NOW - 5000, NOW)).toBe(EXPIRY_MARGIN_MS);
  });

  test('events merge: the newest resourceVersion, the names, listed once set', () => {
    const e: BootstrapSignerEvent = mergeBootstrapSignerEvents({ configMapRv: '1', secrets: ['a'] }, { secrets: ['b', 'a'], listed: true });
    expect(e).toEqual({ configMapRv: '1', secrets: ['a', 'b'], listed: true });
    expect(mergeBootstrapSignerEvents({ configMapRv: '1' }, { configMapRv: '2' })).toEqual({ configMapRv: '2' });
    const many = Array.from({ length: 30 }, (_, i) => `s${i}`);
    expect(mergeBootstrapSignerEvents({ secrets: many }, { secrets: ['z'] }).secrets).toHaveLength(10);
  });
});

const SECRETS = RESOURCES.secrets;
const CONFIGMAPS = RESOURCES.configMaps;

const secret = (ns: string, name: string, o: { data?: Record<string, string>; type?: string; rv?: string; uid?: string; labels?: Record<string, string> } = {}): KubeObject =>
  ({
    metadata: { namespace: ns, name, uid: o.uid ?? `u-${name}`, resourceVersion: o.rv ?? '1', ...(o.labels ? { labels: o.labels } : {}) },
    type: o.type ?? 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(o.data ?? { 'token-id': 'abcdef', 'token-secret': 'topsecret0000000', 'usage-bootstrap-signing': 'true' }).map(([k, v]) => [k, b64(v)])),
  } as unknown as KubeObject);
const configMap = (ns: string, name: string, rv = '1'): KubeObject =>
  ({ metadata: { namespace: ns, name, uid: `c-${name}`, resourceVersion: rv }, data: { kubeconfig: 'k' } } as unknown as KubeObject);

describe('bootstrap signer routes', () => {
  test('off unless enabled', () => {
    expect(routeHarness(bootstrapSignerRoutes, { controllers: ['tokencleaner'] }).family).toBeUndefined();
  });

  test('the view reads nothing its mask drops, and the cache keeps no secret', () => {
    const full = secret('kube-system', 'bootstrap-token-abcdef', { data: { 'token-id': 'abcdef', 'token-secret': 'topsecret0000000', description: 'x', expiration: '2026-03-10T00:00:00Z' } });
    expect(cachedSignerSecret(prune(full, SIGNER_SECRET_FIELDS) as KubeObject)).toEqual(cachedSignerSecret(full));
    const { cache, h } = routeHarness(bootstrapSignerRoutes, { controllers: ['bootstrapsigner'] });
    h(SECRETS).relisted([full], '1');
    const kept = JSON.stringify(cache.store(SECRETS)!.list());
    expect(kept).not.toContain('topsecret0000000');
    expect(kept).not.toContain(b64('topsecret0000000'));
  });

  test('cluster-info and kube-system bootstrap tokens go to the one signer workflow; nothing else does', () => {
    const { sent, h } = routeHarness<BootstrapSignerEvent>(bootstrapSignerRoutes, { controllers: ['bootstrapsigner'], tuning: { resyncMs: 7 } });
    h(CONFIGMAPS).relisted([configMap('kube-public', 'cluster-info', '5'), configMap('kube-system', 'cluster-info'), configMap('kube-public', 'other')], '9');
    h(SECRETS).relisted([
      secret('kube-system', 'bootstrap-token-abcdef'),
      secret('default', 'bootstrap-token-abcdef'),
      secret('kube-system', 'opaque', { type: 'Opaque' }),
    ], '9');
    expect(sent.map((s) => s.event)).toEqual([{ configMapRv: '5', listed: true }, { secrets: ['bootstrap-token-abcdef'], listed: true }]);
    expect(sent[0].target).toEqual({
      controller: 'bootstrapsigner', workflow: bootstrapSignerWorkflow, kind: 'ConfigMap', namespace: 'kube-public', name: 'cluster-info', uid: '',
      args: { tuning: { resyncMs: 7 } }, workflowId: 'bootstrapsigner/test-queue',
    });
    for (const s of sent) expect(JSON.stringify(s)).not.toContain(b64('topsecret0000000'));
  });

  test('watched: an update of a signed value or a delete sends; a label change or the ConfigMap\'s delete does not', () => {
    const { sent, h } = routeHarness<BootstrapSignerEvent>(bootstrapSignerRoutes, { controllers: ['bootstrapsigner'] });
    h(CONFIGMAPS).relisted([configMap('kube-public', 'cluster-info', '5')], '1');
    h(SECRETS).relisted([secret('kube-system', 'bootstrap-token-abcdef')], '1');
    sent.length = 0;
    h(SECRETS).event('MODIFIED', secret('kube-system', 'bootstrap-token-abcdef', { rv: '2', labels: { a: 'b' } }));
    expect(sent).toEqual([]);
    h(SECRETS).event('MODIFIED', secret('kube-system', 'bootstrap-token-abcdef', { rv: '3', data: { 'token-id': 'abcdef', 'token-secret': 'topsecret0000000' } }));
    h(SECRETS).event('DELETED', secret('kube-system', 'bootstrap-token-abcdef', { rv: '4' }));
    h(SECRETS).event('ADDED', secret('kube-system', 'bootstrap-token-bbbbbb', { rv: '5' }));
    h(CONFIGMAPS).event('MODIFIED', configMap('kube-public', 'cluster-info', '6'));
    h(CONFIGMAPS).event('DELETED', configMap('kube-public', 'cluster-info', '7'));
    expect(sent.map((s) => s.event)).toEqual([
      { secrets: ['bootstrap-token-abcdef'] }, { secrets: ['bootstrap-token-abcdef'] }, { secrets: ['bootstrap-token-bbbbbb'] }, { configMapRv: '6' },
    ]);
  });
});

/** A fake API server holding cluster-info and some Secrets, answering the calls the activity makes. */
function fakeApi(cm: Record<string, unknown> | undefined, secrets: KubeObject[], opts: { conflict?: boolean; forbidden?: boolean } = {}) {
  const calls: string[] = [];
  const writes: Array<Record<string, unknown>> = [];
  let current = cm;
  const rest = {
    request: async (method: string, path: string, ro: { body?: Record<string, unknown> } = {}) => {
      calls.push(`${method} ${path}`);
      if (path.startsWith('/api/v1/namespaces/kube-system/secrets?')) {
        if (opts.forbidden) throw new ApiError(403, 'Forbidden', 'secrets is forbidden');
        expect(path).toContain(`fieldSelector=${encodeURIComponent('type=bootstrap.kubernetes.io/token')}`);
        return { status: 200, body: { items: secrets, metadata: {} } };
      }
      if (path === '/api/v1/namespaces/kube-public/configmaps/cluster-info') {
        if (!current) throw new ApiError(404, 'NotFound', 'not found');
        if (method === 'GET') return { status: 200, body: structuredClone(current) };
        if (opts.conflict) throw new ApiError(409, 'Conflict', 'the object has been modified');
        writes.push(ro.body!);
        const m = ro.body!.metadata as { resourceVersion: string };
        current = { ...ro.body!, metadata: { ...m, resourceVersion: String(Number(m.resourceVersion) + 1) } };
        return { status: 200, body: current };
      }
      throw new Error(`unexpected ${method} ${path}`);
    },
  } as unknown as KubeRest;
  return { rest, calls, writes };
}

function capture() {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write(chunk, _e, cb) { lines.push(String(chunk)); cb(); } }));
  return { logger, lines };
}

describe('bootstrap signer activity', () => {
  const KUBECONFIG = 'apiVersion: v1\nkind: Config\n';
  const SECRET_A = 'aaaaaaaaaaaaaaaa';
  const SECRET_B = 'bbbbbbbbbbbbbbbb';
  const cm = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'kube-public', name: 'cluster-info', resourceVersion: '10', labels: { x: 'y' } }, data });
  const token = (id: string, s: string, extra: Record<string, string> = {}) =>
    secret('kube-system', `bootstrap-token-${id}`, { data: { 'token-id': id, 'token-secret': s, 'usage-bootstrap-signing': 'true', ...extra } });

  test('signs with every valid signing token, drops stale signatures, keeps the rest of the object; no secret leaves', async () => {
    const api = fakeApi(cm({ kubeconfig: KUBECONFIG, 'jws-kubeconfig-zzzzzz': 'stale', keep: 'me' }), [
      token('aaaaaa', SECRET_A, { expiration: '2099-01-01T00:00:00Z' }),
      token('bbbbbb', SECRET_B),
      token('cccccc', 'cccccccccccccccc', { 'usage-bootstrap-signing': 'false' }),
      token('dddddd', 'dddddddddddddddd', { expiration: '2020-01-01T00:00:00Z' }),
    ]);
    const { logger, lines } = capture();
    const act = createBootstrapSignerActivities({ rest: api.rest, logger });
    const r = await act.signClusterInfo({ reason: 'test' });
    expect(r).toMatchObject({
      outcome: 'updated', resourceVersion: '11', signed: ['aaaaaa', 'bbbbbb'], added: ['aaaaaa', 'bbbbbb'], changed: [], removed: ['zzzzzz'],
      nextExpiryAt: '2099-01-01T00:00:00.000Z',
    });
    expect(r.skipped.map((s) => s.secret)).toEqual(['bootstrap-token-cccccc', 'bootstrap-token-dddddd']);
    expect(api.writes).toHaveLength(1);
    expect(api.writes[0]).toMatchObject({ metadata: { resourceVersion: '10', labels: { x: 'y' } } });
    expect(api.writes[0].data).toEqual({
      kubeconfig: KUBECONFIG, keep: 'me',
      'jws-kubeconfig-aaaaaa': computeDetachedSignature(KUBECONFIG, 'aaaaaa', Buffer.from(SECRET_A)),
      'jws-kubeconfig-bbbbbb': computeDetachedSignature(KUBECONFIG, 'bbbbbb', Buffer.from(SECRET_B)),
    });
    const out = JSON.stringify(r) + lines.join('');
    for (const s of [SECRET_A, SECRET_B, 'cccccccccccccccc', 'dddddddddddddddd']) {
      expect(out).not.toContain(s);
      expect(out).not.toContain(b64(s));
    }
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ controller: 'bootstrapsigner', key: 'kube-public/cluster-info', reason: 'test', outcome: 'updated' });

    // a second pass finds nothing to do
    const again = await act.signClusterInfo({ reason: 'again' });
    expect(again).toMatchObject({ outcome: 'unchanged', resourceVersion: '11' });
    expect(api.writes).toHaveLength(1);
  });

  test('no ConfigMap, no kubeconfig key, a conflict, a rejection', async () => {
    const { logger } = capture();
    expect((await createBootstrapSignerActivities({ rest: fakeApi(undefined, []).rest, logger }).signClusterInfo({ reason: 'r' })).outcome).toBe('no-configmap');
    const noKey = fakeApi(cm({ other: 'x', 'jws-kubeconfig-aaaaaa': 'x' }), [token('aaaaaa', SECRET_A)]);
    expect((await createBootstrapSignerActivities({ rest: noKey.rest, logger }).signClusterInfo({ reason: 'r' })).outcome).toBe('no-kubeconfig');
    expect(noKey.writes).toEqual([]);
    const conflict = fakeApi(cm({ kubeconfig: KUBECONFIG }), [token('aaaaaa', SECRET_A)], { conflict: true });
    expect(await createBootstrapSignerActivities({ rest: conflict.rest, logger }).signClusterInfo({ reason: 'r' })).toMatchObject({ outcome: 'conflict', resourceVersion: '10' });
    const forbidden = fakeApi(cm({ kubeconfig: KUBECONFIG }), [], { forbidden: true });
    expect(await createBootstrapSignerActivities({ rest: forbidden.rest, logger }).signClusterInfo({ reason: 'r' })).toMatchObject({ outcome: 'failed', message: 'secrets is forbidden' });
  });

  test('tokenFacts reads the secret part only as bytes', () => {
    const { facts: f, secret: s } = tokenFacts(token('abcdef', SECRET_A, { expiration: '2026-03-10T00:00:00Z' }) as never);
    expect(f).toEqual({ name: 'bootstrap-token-abcdef', tokenId: 'abcdef', hasSecret: true, expiration: '2026-03-10T00:00:00Z', usageSigning: 'true' });
    expect(JSON.stringify(f)).not.toContain(SECRET_A);
    expect(s.equals(Buffer.from(SECRET_A))).toBe(true);
  });
});
