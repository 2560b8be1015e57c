import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, CALL_RETRIES, KubeRest, callRetryDelayMs } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { plainHttpAccess } from '../support/plain-http-access';

const err = (status: number, retryAfter?: number) => new ApiError(status, 'x', `x ${status}`, retryAfter);

describe('retries inside one API call', () => {
  test('a read, or a write marked idempotent, is tried again on any transient failure, 100 ms doubling, 4 times', () => {
    for (const status of [0, 429, 500, 503]) {
      expect([0, 1, 2, 3].map((r) => callRetryDelayMs('GET', false, err(status), r))).toEqual([100, 200, 400, 800]);
      expect(callRetryDelayMs('GET', false, err(status), CALL_RETRIES)).toBeUndefined();
      expect(callRetryDelayMs('DELETE', true, err(status), 1)).toBe(200);
    }
  });

  test('a write not marked idempotent is only sent again after a Retry-After (the server did nothing), as client-go does', () => {
    expect(callRetryDelayMs('POST', false, err(500), 0)).toBeUndefined();
    expect(callRetryDelayMs('PUT', false, err(0), 0)).toBeUndefined();
    expect(callRetryDelayMs('POST', false, err(429, 1), 0)).toBe(1000);
    expect(callRetryDelayMs('PATCH', false, err(503, 2), 3)).toBe(2000);
    // a long Retry-After is the activity's to wait, not a call's
    expect(callRetryDelayMs('GET', false, err(429, 30), 0)).toBeUndefined();
  });

  test('a rejection is never retried', () => {
    for (const status of [400, 403, 404, 409, 422]) expect(callRetryDelayMs('GET', true, err(status), 0)).toBeUndefined();
  });

  describe('against a server that fails the first tries', () => {
    let server: http.Server;
    let failures = 0;
    let seen: string[] = [];
    let rest: KubeRest;
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        seen.push(req.method ?? '');
        if (failures > 0) {
          failures--;
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', reason: 'InternalError', message: 'boom', code: 500 }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const kc = plainHttpAccess(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      rest = new KubeRest(kc, new TokenBucket(0, 0));
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));
    beforeEach(() => { seen = []; });

    test('a GET that fails twice succeeds on its third try', async () => {
      failures = 2;
      await expect(rest.request('GET', '/api/v1/pods')).resolves.toMatchObject({ status: 200 });
      expect(seen).toEqual(['GET', 'GET', 'GET']);
    });

    test('a POST not marked idempotent fails at once; marked, it is tried again', async () => {
      failures = 1;
      await expect(rest.request('POST', '/api/v1/namespaces/n/pods', { body: {} })).rejects.toMatchObject({ status: 500 });
      expect(seen).toEqual(['POST']);
      failures = 1;
      await expect(rest.request('POST', '/api/v1/namespaces/n/pods', { body: {}, idempotent: true })).resolves.toMatchObject({ status: 200 });
      expect(seen).toEqual(['POST', 'POST', 'POST']);
    });

    test('a GET that keeps failing gives up after its retries, with the server\'s error', async () => {
      failures = CALL_RETRIES + 1;
      await expect(rest.request('GET', '/api/v1/pods')).rejects.toMatchObject({ status: 500, reason: 'InternalError' });
      expect(seen).toHaveLength(CALL_RETRIES + 1);
    });
  });
});
