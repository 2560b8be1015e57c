import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ApiError, CALL_RETRIES, KubeRest } from '../../activities/kube/rest';
import { TokenBucket } from '../../activities/kube/token-bucket';
import { createEventRecorder, eventWriteRetryable, type RecordEvent } from '../../activities/kube/events';
import { plainHttpAccess } from '../support/plain-http-access';

const target = { apiVersion: 'batch/v1', kind: 'CronJob', namespace: 'ns', name: 'c', uid: 'u1' };

describe('event writes', () => {
  test('tried again when no answer came or the server was in trouble; a refusal is final', () => {
    expect(eventWriteRetryable(new ApiError(0, 'ConnectionError', 'reset'))).toBe(true);
    expect(eventWriteRetryable(new ApiError(503, 'ServiceUnavailable', 'x'))).toBe(true);
    expect(eventWriteRetryable(new Error('socket hang up'))).toBe(true);
    for (const status of [400, 403, 404, 422]) expect(eventWriteRetryable(new ApiError(status, 'x', 'x'))).toBe(false);
  });

  describe('against a server that drops connections', () => {
    let server: http.Server;
    let drop = 0;
    let answer: { status: number; reason: string } | undefined;
    let posts: { name: string; reason: string }[] = [];
    let stored: string[] = [];
    let record: RecordEvent;
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const ev = JSON.parse(Buffer.concat(chunks).toString()) as { metadata: { name: string }; reason: string };
          posts.push({ name: ev.metadata.name, reason: ev.reason });
          if (drop > 0) { drop--; req.socket.destroy(); return; }
          if (answer) {
            res.writeHead(answer.status, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ kind: 'Status', reason: answer.reason, code: answer.status }));
            return;
          }
          stored.push(ev.metadata.name);
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify(ev));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const kc = plainHttpAccess(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      record = createEventRecorder(new KubeRest(kc, new TokenBucket(0, 0)), 'test', pino({ level: 'silent' }), { maxTries: 3, sleepMs: 50 });
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));
    beforeEach(() => { posts = []; stored = []; drop = 0; answer = undefined; });

    const settled = async (count: () => number, want: number) => {
      for (let i = 0; i < 200 && count() < want; i++) await new Promise((r) => setTimeout(r, 25));
      await new Promise((r) => setTimeout(r, 300)); // and nothing more comes
    };

    test('an event whose every try in one call is dropped is written by a later try, under the same name', async () => {
      drop = CALL_RETRIES + 2; // the first call's tries and then some
      record('cronjob-controller', target, 'Normal', 'SuccessfulCreate', 'Created job c-1');
      await settled(() => stored.length, 1);
      expect(stored).toHaveLength(1);
      expect(new Set(posts.map((p) => p.name))).toEqual(new Set(stored));
      expect(posts).toHaveLength(CALL_RETRIES + 3);
    });

    test('a 409 AlreadyExists (an earlier try landed) ends it', async () => {
      answer = { status: 409, reason: 'AlreadyExists' };
      record('cronjob-controller', { ...target, uid: 'u2' }, 'Normal', 'SawCompletedJob', 'x');
      await settled(() => posts.length, 1);
      expect(posts).toHaveLength(1);
    });

    test('a refusal is not sent again; no answer ever is given up after the last try', async () => {
      answer = { status: 403, reason: 'Forbidden' };
      record('cronjob-controller', { ...target, uid: 'u3' }, 'Warning', 'FailedCreate', 'x');
      await settled(() => posts.length, 1);
      expect(posts).toHaveLength(1);

      posts = [];
      answer = undefined;
      drop = 1000;
      record('cronjob-controller', { ...target, uid: 'u4' }, 'Warning', 'FailedCreate', 'x');
      await settled(() => posts.length, 3 * (CALL_RETRIES + 1));
      expect(posts).toHaveLength(3 * (CALL_RETRIES + 1));
      expect(stored).toHaveLength(0);
    });
  });
});
