import { certificateNotAfter, csrCleanerView } from '../../activities/csrcleaner/activities';
import { legacyTokenView } from '../../activities/legacy-token-cleaner/activities';
import { bootstrapTokenView } from '../../activities/tokencleaner/activities';
import type { KubeObject } from '../../activities/kube/projections';
import { csrDeadlines, decideCsr, sameForCleaner, type CsrView } from '../../workflows/csrcleaner/logic';
import {
  decideLegacyToken,
  formatDate,
  parseDate,
  passClock,
  podSecretNames,
  trackedLongEnough,
  trackedSince,
  type AccountView,
  type LegacyTokenView,
} from '../../workflows/legacy-token-cleaner/logic';
import { decideToken, isCleanerSecret, parseRfc3339, type BootstrapTokenView } from '../../workflows/tokencleaner/logic';

const HOUR = 3600_000;
const NOW = Date.parse('2026-03-10T12:00:00Z');
const at = (ms: number) => new Date(ms).toISOString();

/** a self-signed certificate valid 2020-01-01T00:00:00Z to 2020-01-02T03:04:05Z (made with openssl ca) */
const CERT_PEM = `-----BEGIN CERTIFICATE-----
MIIBFDCBugIBBjAKBggqhkjOPQQDAjAWMRQwEgYDVQQDDAtjbGVhbmVyLWUyZTAe
Fw0yMDAxMDEwMDAwMDBaFw0yMDAxMDIwMzA0MDVaMBYxFDASBgNVBAMMC2NsZWFu
ZXItZTJlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEarm20bdBedUZTV1UJXaU
g6WJcnJwTyq9IE4l2dZVWfcbuo0g9uTo8NsLwxcEnaGYJ+2aZD2DNQRbi5QHG+92
pjAKBggqhkjOPQQDAgNJADBGAiEA7YujeGyr2s1NX96ZBwzFfZuW4WFtCmUJ4SmY
nuVIySwCIQDaTtX5rI4R4d4wK5NvRhw3dYuMNySjimF/doJxihiyrw==
-----END CERTIFICATE-----
`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

const csr = (o: Partial<CsrView> = {}): CsrView => ({ name: 'c', uid: 'u', creationTimestamp: at(NOW - HOUR), conditions: [], issued: false, ...o });

describe('CSR cleaner decisions (upstream cleaner.go)', () => {
  test('a pending CSR (no conditions) goes strictly more than 24 h after its creation', () => {
    const c = csr({ creationTimestamp: at(NOW - 24 * HOUR) });
    expect(decideCsr(c, NOW)).toEqual({ kind: 'wait', ms: 1, rule: 'pending-past-deadline', afterMs: NOW });
    expect(decideCsr(c, NOW + 1)).toEqual({ kind: 'delete', rule: 'pending-past-deadline', afterMs: NOW });
  });

  test('denied and failed CSRs go an hour after the condition was last updated', () => {
    expect(decideCsr(csr({ conditions: [{ type: 'Denied', lastUpdateTime: at(NOW - 2 * HOUR) }] }), NOW).kind).toBe('delete');
    expect(decideCsr(csr({ conditions: [{ type: 'Denied', lastUpdateTime: at(NOW - 30 * 60_000) }] }), NOW))
      .toEqual({ kind: 'wait', ms: 30 * 60_000 + 1, rule: 'denied-past-deadline', afterMs: NOW + 30 * 60_000 });
    expect(decideCsr(csr({ conditions: [{ type: 'Approved', lastUpdateTime: at(NOW) }, { type: 'Failed', lastUpdateTime: at(NOW - 2 * HOUR) }] }), NOW))
      .toEqual({ kind: 'delete', rule: 'failed-past-deadline', afterMs: NOW - HOUR });
  });

  test('approved: an hour once issued, 24 hours while not issued', () => {
    const approved2h = [{ type: 'Approved', lastUpdateTime: at(NOW - 2 * HOUR) }];
    expect(decideCsr(csr({ conditions: approved2h, issued: true }), NOW)).toEqual({ kind: 'delete', rule: 'issued-past-deadline', afterMs: NOW - HOUR });
    expect(decideCsr(csr({ conditions: approved2h }), NOW)).toEqual({ kind: 'wait', ms: 22 * HOUR + 1, rule: 'approved-unissued-past-deadline', afterMs: NOW + 22 * HOUR });
    expect(decideCsr(csr({ conditions: [{ type: 'Approved', lastUpdateTime: at(NOW - 25 * HOUR) }] }), NOW).kind).toBe('delete');
  });

  test('an issued certificate that expired goes at once, but only with an Approved condition', () => {
    const expired = { issued: true, certificateNotAfter: at(NOW - 1000) };
    expect(decideCsr(csr({ ...expired, conditions: [{ type: 'Approved', lastUpdateTime: at(NOW) }] }), NOW))
      .toEqual({ kind: 'delete', rule: 'issued-expired', afterMs: NOW - 1000 });
    // issued without an Approved condition: no rule looks at it (a condition exists, so not pending either)
    expect(decideCsr(csr({ ...expired, conditions: [{ type: 'Other', lastUpdateTime: at(NOW) }] }), NOW)).toEqual({ kind: 'keep' });
    // the earliest deadline is waited for: the certificate's expiry before the approval's hour
    expect(decideCsr(csr({ issued: true, certificateNotAfter: at(NOW + 60_000), conditions: [{ type: 'Approved', lastUpdateTime: at(NOW) }] }), NOW))
      .toEqual({ kind: 'wait', ms: 60_001, rule: 'issued-expired', afterMs: NOW + 60_000 });
  });

  test('zero (absent) times never qualify, as upstream\'s isOlderThan', () => {
    expect(csrDeadlines(csr({ conditions: [{ type: 'Denied' }] }))).toEqual([]);
    expect(csrDeadlines(csr({ creationTimestamp: undefined }))).toEqual([]);
    expect(decideCsr(csr({ conditions: [{ type: 'Approved' }], issued: true }), NOW)).toEqual({ kind: 'keep' });
  });

  test('views the same for the rules; a new condition time is a difference', () => {
    const a = csr({ conditions: [{ type: 'Approved', lastUpdateTime: at(NOW) }] });
    expect(sameForCleaner(a, { ...a })).toBe(true);
    expect(sameForCleaner(a, csr({ conditions: [{ type: 'Approved', lastUpdateTime: at(NOW + 1000) }] }))).toBe(false);
    expect(sameForCleaner(a, { ...a, issued: true })).toBe(false);
  });

  test('the certificate\'s NotAfter is read from the first PEM block; garbage gives none', () => {
    expect(certificateNotAfter(b64(CERT_PEM))).toBe('2020-01-02T03:04:05.000Z');
    expect(certificateNotAfter(b64(`junk before\n${CERT_PEM}${CERT_PEM}`))).toBe('2020-01-02T03:04:05.000Z');
    expect(certificateNotAfter(b64('not a pem'))).toBeUndefined();
    expect(certificateNotAfter(b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'))).toBeUndefined();
  });

  test('the CSR view keeps condition types and times, and the certificate only as issued + NotAfter', () => {
    const o = {
      metadata: { name: 'n', uid: 'u1', creationTimestamp: '2026-03-10T00:00:00Z' },
      spec: { request: 'cmVxdWVzdA==' },
      status: { certificate: b64(CERT_PEM), conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: '2026-03-10T01:00:00Z', message: 'm' }] },
    } as unknown as KubeObject;
    expect(csrCleanerView(o)).toEqual({
      name: 'n', uid: 'u1', creationTimestamp: '2026-03-10T00:00:00Z', conditions: [{ type: 'Approved', lastUpdateTime: '2026-03-10T01:00:00Z' }],
      issued: true, certificateNotAfter: '2020-01-02T03:04:05.000Z',
    });
  });
});

describe('token cleaner decisions (upstream tokencleaner.go, GetExpiration)', () => {
  const token = (o: Partial<BootstrapTokenView> = {}): BootstrapTokenView =>
    ({ namespace: 'kube-system', name: 'bootstrap-token-abcdef', uid: 'u', type: 'bootstrap.kubernetes.io/token', ...o });

  test('only bootstrap tokens in kube-system are the cleaner\'s', () => {
    expect(isCleanerSecret('kube-system', 'bootstrap.kubernetes.io/token')).toBe(true);
    expect(isCleanerSecret('default', 'bootstrap.kubernetes.io/token')).toBe(false);
    expect(isCleanerSecret('kube-system', 'Opaque')).toBe(false);
    expect(decideToken(token({ type: 'Opaque', expiration: '2020-01-01T00:00:00Z' }), NOW).kind).toBe('keep');
  });

  test('no or empty expiration: kept; unparseable: deleted; expired at the instant itself; else waited for', () => {
    expect(decideToken(token(), NOW)).toEqual({ kind: 'keep', why: 'has no expiration' });
    expect(decideToken(token({ expiration: 'tomorrow' }), NOW)).toEqual({ kind: 'delete', why: 'unparseable expiration' });
    expect(decideToken(token({ expiration: '2026-03-10T12:00:00Z' }), NOW)).toEqual({ kind: 'delete', why: 'expired', expiresAt: NOW });
    expect(decideToken(token({ expiration: '2026-03-10T13:00:00+01:00' }), NOW)).toEqual({ kind: 'delete', why: 'expired', expiresAt: NOW });
    expect(decideToken(token({ expiration: '2026-03-10T12:00:30.5Z' }), NOW)).toEqual({ kind: 'wait', ms: 30_500, expiresAt: NOW + 30_500 });
  });

  test('RFC 3339 as Go parses it: strict layout and ranges', () => {
    expect(parseRfc3339('2026-03-10T12:00:00Z')).toBe(NOW);
    expect(parseRfc3339('2026-03-10T07:00:00-05:00')).toBe(NOW);
    for (const bad of ['2026-03-10 12:00:00Z', '2026-03-10T12:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-10T24:00:00Z', '1741608000', '']) {
      expect([bad, parseRfc3339(bad)]).toEqual([bad, undefined]);
    }
  });

  test('the live view carries the decoded expiration and nothing else of the data', () => {
    const o = {
      metadata: { namespace: 'kube-system', name: 'bootstrap-token-abcdef', uid: 'u9' }, type: 'bootstrap.kubernetes.io/token',
      data: { 'token-id': b64('abcdef'), 'token-secret': b64('0123456789abcdef'), expiration: b64('2026-03-10T12:00:00Z') },
    } as unknown as KubeObject;
    const v = bootstrapTokenView(o);
    expect(v).toEqual({ namespace: 'kube-system', name: 'bootstrap-token-abcdef', uid: 'u9', type: 'bootstrap.kubernetes.io/token', expiration: '2026-03-10T12:00:00Z' });
    expect(JSON.stringify(v)).not.toContain('0123456789abcdef');
    expect(JSON.stringify(v)).not.toContain(b64('0123456789abcdef'));
  });
});

describe('legacy service account token cleaner decisions (upstream legacy_serviceaccount_token_cleaner.go)', () => {
  const PERIOD = 30 * 24 * HOUR;
  const clock = passClock(NOW, PERIOD);
  const token = (o: Partial<LegacyTokenView> = {}): LegacyTokenView => ({
    namespace: 'ns', name: 'tok', uid: 'tu', resourceVersion: '7', creationTimestamp: at(NOW - 2 * PERIOD), deleting: false,
    serviceAccountName: 'sa', serviceAccountUid: 'sau', ...o,
  });
  const account: AccountView = { uid: 'sau', secrets: ['tok'] };

  test('dates as Go\'s 2006-01-02 layout', () => {
    expect(formatDate(NOW)).toBe('2026-03-10');
    expect(parseDate('2026-03-10')).toBe(Date.parse('2026-03-10T00:00:00Z'));
    for (const bad of ['2026-02-29', '2026-3-10', '2026-03-10T00:00:00Z', 'xyz', '']) expect([bad, parseDate(bad)]).toEqual([bad, undefined]);
  });

  test('the tracking gate: since + 1 day + the period must have passed', () => {
    expect(trackedSince(undefined)).toEqual({ ok: false, error: 'configMap does not have since label' });
    expect(trackedSince('bad').ok).toBe(false);
    const t = trackedSince('2026-02-07');
    expect(t).toEqual({ ok: true, atMs: Date.parse('2026-02-08T00:00:00Z') });
    if (!t.ok) throw new Error('unreachable');
    // since 2026-02-07 counts from 2026-02-08, and 30 days from then is 2026-03-10T00:00:00Z
    expect(trackedLongEnough(t.atMs, Date.parse('2026-03-10T00:00:00Z') - 1, PERIOD)).toBe(false);
    expect(trackedLongEnough(t.atMs, Date.parse('2026-03-10T00:00:00Z'), PERIOD)).toBe(true);
  });

  test('an unused, referenced, unmounted token is labelled invalid today first, deleted once that date is older than the period', () => {
    expect(decideLegacyToken(token(), account, false, clock))
      .toEqual({ kind: 'act', action: { kind: 'label', namespace: 'ns', name: 'tok', uid: 'tu', invalidSince: '2026-03-10' } });
    expect(decideLegacyToken(token({ invalidSince: 'junk' }), account, false, clock))
      .toEqual({ kind: 'act', action: { kind: 'label', namespace: 'ns', name: 'tok', uid: 'tu', invalidSince: '2026-03-10' } });
    // the preserve date is 2026-02-08: that day itself is recent
    expect(decideLegacyToken(token({ invalidSince: '2026-02-08' }), account, false, clock)).toEqual({ kind: 'skip', why: 'recently invalidated' });
    expect(decideLegacyToken(token({ invalidSince: '2026-02-07', lastUsed: '2026-01-01' }), account, false, clock)).toEqual({
      kind: 'act',
      action: { kind: 'delete', namespace: 'ns', name: 'tok', uid: 'tu', resourceVersion: '7', lastUsed: '2026-01-01', invalidSince: '2026-02-07', serviceAccountName: 'sa' },
    });
  });

  test('kept: created or used within the period, being deleted, an unparseable last-used date', () => {
    expect(decideLegacyToken(token({ creationTimestamp: at(NOW - PERIOD) }), account, false, clock)).toEqual({ kind: 'skip', why: 'recently created' });
    expect(decideLegacyToken(token({ deleting: true }), account, false, clock)).toEqual({ kind: 'skip', why: 'being deleted' });
    expect(decideLegacyToken(token({ lastUsed: '2026-02-08' }), account, false, clock)).toEqual({ kind: 'skip', why: 'recently used' });
    expect(decideLegacyToken(token({ lastUsed: '' }), account, false, clock)).toEqual({ kind: 'skip', why: 'unparseable last-used' });
  });

  test('kept: its account missing, another UID, not listing it; or a pod using it', () => {
    const unreferenced = { kind: 'skip', why: 'not referenced by its service account' };
    expect(decideLegacyToken(token(), undefined, false, clock)).toEqual(unreferenced);
    expect(decideLegacyToken(token({ serviceAccountUid: 'other' }), account, false, clock)).toEqual(unreferenced);
    expect(decideLegacyToken(token(), { uid: 'sau', secrets: ['another'] }, false, clock)).toEqual(unreferenced);
    // no UID annotation: any account of that name
    expect(decideLegacyToken(token({ serviceAccountUid: undefined }), { uid: 'x', secrets: ['tok'] }, false, clock).kind).toBe('act');
    expect(decideLegacyToken(token(), account, true, clock)).toEqual({ kind: 'skip', why: 'used by a pod' });
  });

  test('the Secrets a pod uses, as VisitPodSecretNames walks them', () => {
    const names = podSecretNames({ spec: {
      imagePullSecrets: [{ name: 'pull' }, { name: '' }],
      containers: [{ env: [{ valueFrom: { secretKeyRef: { name: 'env' } } }], envFrom: [{ secretRef: { name: 'envfrom' } }] }],
      initContainers: [{ envFrom: [{ secretRef: { name: 'init' } }] }],
      ephemeralContainers: [{ env: [{ valueFrom: { secretKeyRef: { name: 'debug' } } }] }],
      volumes: [
        { secret: { secretName: 'vol' } },
        { projected: { sources: [{ secret: { name: 'proj' } }, {}] } },
        { csi: { nodePublishSecretRef: { name: 'csi' } } },
        { azureFile: { secretName: 'azure' } },
        { rbd: { secretRef: { name: 'rbd' } } },
        { iscsi: { secretRef: { name: 'iscsi' } } },
      ],
    } });
    expect([...names].sort()).toEqual(['azure', 'csi', 'debug', 'env', 'envfrom', 'init', 'iscsi', 'proj', 'pull', 'rbd', 'vol']);
  });

  test('the metadata view: annotations and labels, an empty label still present', () => {
    const o = {
      metadata: {
        namespace: 'ns', name: 'tok', uid: 'tu', resourceVersion: '3', creationTimestamp: '2026-01-01T00:00:00Z',
        annotations: { 'kubernetes.io/service-account.name': 'sa' },
        labels: { 'kubernetes.io/legacy-token-last-used': '' },
      },
    } as unknown as KubeObject;
    expect(legacyTokenView(o)).toEqual({
      namespace: 'ns', name: 'tok', uid: 'tu', resourceVersion: '3', creationTimestamp: '2026-01-01T00:00:00Z', deleting: false,
      serviceAccountName: 'sa', lastUsed: '',
    });
  });
});
