import { createHash } from 'node:crypto';
import { CSR_CLEANER_FIELDS, csrCleanerView } from '../../activities/csrcleaner/activities';
import { csrCleanerRoutes } from '../../activities/csrcleaner/routes';
import { prune } from '../../activities/informers/fields';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { TOKEN_CLEANER_FIELDS, cachedToken, tokenCleanerRoutes } from '../../activities/tokencleaner/routes';
import { csrCleanerWorkflow, type CsrCleanerEvent } from '../../workflows/csrcleaner/workflow';
import { tokenCleanerWorkflow, type TokenCleanerEvent } from '../../workflows/tokencleaner/workflow';
import { routeHarness } from '../support/routes';

const CSRS = RESOURCES.certificateSigningRequests;
const SECRETS = RESOURCES.secrets;

const csr = (name: string, o: { rv?: string; conditions?: Array<{ type: string; lastUpdateTime?: string; message?: string }>; created?: string | null } = {}): KubeObject =>
  ({
    metadata: { name, uid: `c-${name}`, resourceVersion: o.rv ?? '1', ...(o.created === null ? {} : { creationTimestamp: o.created ?? '2026-03-10T00:00:00Z' }) },
    spec: { request: 'cmVx', signerName: 'example.com/x' },
    status: { conditions: o.conditions ?? [] },
  } as unknown as KubeObject);

describe('csrcleaner routes', () => {
  test('the view reads nothing its mask drops', () => {
    const full = {
      ...csr('m', { conditions: [{ type: 'Denied', lastUpdateTime: '2026-03-10T01:00:00Z', message: 'no' }] }),
      status: { certificate: 'bm90IGEgY2VydA==', conditions: [{ type: 'Denied', status: 'True', reason: 'R', lastUpdateTime: '2026-03-10T01:00:00Z' }] },
    } as unknown as KubeObject;
    expect(csrCleanerView(prune(full, CSR_CLEANER_FIELDS) as KubeObject)).toEqual(csrCleanerView(full));
  });

  test('off unless enabled', () => {
    const { family } = routeHarness(csrCleanerRoutes, { controllers: ['ttl'] });
    expect(family).toBeUndefined();
  });

  test('a list sends every CSR some rule will apply to, to csrcleaner/<name>, with the view the rules read', () => {
    const { sent, h } = routeHarness<CsrCleanerEvent>(csrCleanerRoutes, { controllers: ['csrcleaner'], tuning: { resyncMs: 7 } });
    // no creation time and a condition without a time: no rule can ever apply
    h(CSRS).relisted([csr('p'), csr('never', { created: null, conditions: [{ type: 'Approved' }] })], '3');
    expect(sent.map((s) => s.event)).toEqual([
      { csr: { name: 'p', uid: 'c-p', creationTimestamp: '2026-03-10T00:00:00Z', conditions: [], issued: false } },
    ]);
    expect(sent[0].target).toEqual({
      controller: 'csrcleaner', workflow: csrCleanerWorkflow, kind: 'CertificateSigningRequest', namespace: '', name: 'p', uid: 'c-p',
      args: { name: 'p', uid: 'c-p', tuning: { resyncMs: 7 } }, workflowId: 'csrcleaner/p',
    });
  });

  test('watched: a change the rules do not read sends nothing; a new condition re-times; deletes send nothing', () => {
    const { sent, h } = routeHarness<CsrCleanerEvent>(csrCleanerRoutes, { controllers: ['csrcleaner'] });
    h(CSRS).relisted([csr('a', { conditions: [{ type: 'Approved', lastUpdateTime: '2026-03-10T01:00:00Z', message: 'one' }] })], '1');
    sent.length = 0;
    h(CSRS).event('MODIFIED', csr('a', { rv: '2', conditions: [{ type: 'Approved', lastUpdateTime: '2026-03-10T01:00:00Z', message: 'two' }] }));
    expect(sent).toEqual([]);
    h(CSRS).event('MODIFIED', csr('a', { rv: '3', conditions: [{ type: 'Approved', lastUpdateTime: '2026-03-10T01:00:00Z' }, { type: 'Failed', lastUpdateTime: '2026-03-10T02:00:00Z' }] }));
    expect(sent.map((s) => ('csr' in s.event ? s.event.csr.conditions.map((c) => c.type) : s.event))).toEqual([['Approved', 'Failed']]);
  });

  test('a CSR deleted while its run waits ends that run; one deleted past a deadline sends nothing', () => {
    const { sent, h } = routeHarness<CsrCleanerEvent>(csrCleanerRoutes, { controllers: ['csrcleaner'] });
    // pending: due 24 h after creation; a creation time in the future keeps it waiting
    h(CSRS).relisted([csr('waiting', { created: '2099-01-01T00:00:00Z' }), csr('due', { created: '2020-01-01T00:00:00Z' })], '1');
    sent.length = 0;
    h(CSRS).event('DELETED', csr('waiting', { rv: '2', created: '2099-01-01T00:00:00Z' }));
    h(CSRS).event('DELETED', csr('due', { rv: '3', created: '2020-01-01T00:00:00Z' }));
    expect(sent.map((s) => ({ id: s.id, event: s.event }))).toEqual([{ id: '/waiting', event: { deletedUid: 'c-waiting' } }]);
  });
});

const secret = (ns: string, name: string, o: { type?: string; expiration?: string; rv?: string; uid?: string; extra?: string } = {}): KubeObject =>
  ({
    metadata: { namespace: ns, name, uid: o.uid ?? `s-${name}`, resourceVersion: o.rv ?? '1' },
    type: o.type ?? 'bootstrap.kubernetes.io/token',
    data: {
      'token-id': Buffer.from('abcdef').toString('base64'),
      'token-secret': Buffer.from('supersecretvalue').toString('base64'),
      ...(o.expiration !== undefined ? { expiration: Buffer.from(o.expiration).toString('base64') } : {}),
      ...(o.extra ? { description: Buffer.from(o.extra).toString('base64') } : {}),
    },
  } as unknown as KubeObject);

describe('tokencleaner routes', () => {
  test('the cache keeps only the digest of `expiration` for it, and the view reads nothing else', () => {
    const { h, cache } = routeHarness<TokenCleanerEvent>(tokenCleanerRoutes, { controllers: ['tokencleaner'] });
    const o = secret('kube-system', 'bootstrap-token-d', { expiration: '2026-03-10T00:00:00Z', extra: 'x' });
    h(SECRETS).relisted([o], '1');
    const kept = cache.store(SECRETS)!.getByName('kube-system', 'bootstrap-token-d') as KubeObject & { data?: Record<string, string> };
    expect(Object.keys(kept.data ?? {})).toEqual(['expiration']);
    expect(kept.data!.expiration).toBe(createHash('sha256').update('2026-03-10T00:00:00Z').digest('hex'));
    expect(cachedToken(prune(kept, TOKEN_CLEANER_FIELDS) as KubeObject)).toEqual(cachedToken(kept));
  });

  test('off unless enabled (it is off by default upstream)', () => {
    expect(routeHarness(tokenCleanerRoutes, { controllers: ['csrcleaner'] }).family).toBeUndefined();
  });

  test('a list sends only kube-system bootstrap tokens with an expiration; the event is a UID, never data', () => {
    const { sent, h } = routeHarness<TokenCleanerEvent>(tokenCleanerRoutes, { controllers: ['tokencleaner'], tuning: { resyncMs: 7 } });
    h(SECRETS).relisted([
      secret('kube-system', 'bootstrap-token-aaaaaa', { expiration: '2026-03-10T00:00:00Z' }),
      secret('kube-system', 'bootstrap-token-empty', { expiration: '' }),
      secret('kube-system', 'bootstrap-token-never'),
      secret('default', 'bootstrap-token-elsewhere', { expiration: '2026-03-10T00:00:00Z' }),
      secret('kube-system', 'opaque', { type: 'Opaque', expiration: '2026-03-10T00:00:00Z' }),
    ], '2');
    expect(sent.map((s) => ({ id: s.id, event: s.event }))).toEqual([{ id: 'kube-system/bootstrap-token-aaaaaa', event: { uid: 's-bootstrap-token-aaaaaa' } }]);
    expect(sent[0].target).toEqual({
      controller: 'tokencleaner', workflow: tokenCleanerWorkflow, kind: 'Secret', namespace: 'kube-system', name: 'bootstrap-token-aaaaaa',
      uid: 's-bootstrap-token-aaaaaa', args: { namespace: 'kube-system', name: 'bootstrap-token-aaaaaa', uid: 's-bootstrap-token-aaaaaa', tuning: { resyncMs: 7 } },
      workflowId: 'tokencleaner/kube-system/bootstrap-token-aaaaaa',
    });
    const text = JSON.stringify(sent.map((s) => [s.target.args, s.event]));
    expect(text).not.toContain('supersecretvalue');
    expect(text).not.toContain(Buffer.from('supersecretvalue').toString('base64'));
    expect(text).not.toContain(createHash('sha256').update('supersecretvalue').digest('hex'));
  });

  test('watched: only a changed expiration (or a new expiration) sends again', () => {
    const { sent, h } = routeHarness<TokenCleanerEvent>(tokenCleanerRoutes, { controllers: ['tokencleaner'] });
    h(SECRETS).relisted([secret('kube-system', 'bootstrap-token-b', { expiration: '2026-03-10T00:00:00Z' }), secret('kube-system', 'bootstrap-token-c')], '1');
    sent.length = 0;
    h(SECRETS).event('MODIFIED', secret('kube-system', 'bootstrap-token-b', { expiration: '2026-03-10T00:00:00Z', rv: '2', extra: 'described' }));
    expect(sent).toEqual([]);
    h(SECRETS).event('MODIFIED', secret('kube-system', 'bootstrap-token-b', { expiration: '2026-03-11T00:00:00Z', rv: '3' }));
    h(SECRETS).event('MODIFIED', secret('kube-system', 'bootstrap-token-c', { expiration: '2026-03-11T00:00:00Z', rv: '4' }));
    h(SECRETS).event('DELETED', secret('kube-system', 'bootstrap-token-b', { rv: '5' }));
    expect(sent.map((s) => s.id)).toEqual(['kube-system/bootstrap-token-b', 'kube-system/bootstrap-token-c']);
  });
});
