import type * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { Writable } from 'node:stream';
import { HealthServer, HealthServerOptions, Readiness, SecureServing, startHealthServer } from '../../starter/health-server';
import { createAuthenticator, createAuthorizer, DEFAULT_ALWAYS_ALLOW_PATHS } from '../../starter/secure-serving/delegated-auth';
import { makeSelfSigned, selfSignedNames } from '../../starter/secure-serving/serving-cert';
import { controllerLogger, createLogger } from '../../workers/logger';
import { createMetrics } from '../../workers/metrics';

let pair: { cert: string; key: string };
beforeAll(async () => {
  pair = await makeSelfSigned(selfSignedNames('127.0.0.1'));
});

/** The secure port as `run` sets it up with neither kubeconfig: anonymous callers, /metrics open as a harness opens it. */
function serving(paths: readonly string[] = [...DEFAULT_ALWAYS_ALLOW_PATHS, '/metrics']): SecureServing {
  return {
    cert: { ...pair, source: { kind: 'memory' } },
    authenticate: createAuthenticator({ clientCertificates: false, cacheTtlMs: 10_000 }),
    authorize: createAuthorizer({ alwaysAllowPaths: paths, allowCacheTtlMs: 10_000, denyCacheTtlMs: 10_000 }),
  };
}

function start(o: Partial<HealthServerOptions> = {}): Promise<HealthServer> {
  return startHealthServer({ bindAddress: '127.0.0.1', port: 0, metrics: createMetrics(), readiness: () => true, logger: createLogger('silent'), serving: serving(), ...o });
}

function get(port: number, path: string, method = 'GET', agent?: https.Agent): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    // the certificate is self-signed: what it is, is tested in secure-serving.test.ts
    const req = https.request({ host: '127.0.0.1', port, path, method, rejectUnauthorized: false, ...(agent ? { agent } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return {
    stream,
    lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('health server', () => {
  let server: HealthServer;
  let ready: () => Readiness | Promise<Readiness>;
  const metrics = createMetrics();
  const log = capture();

  beforeAll(async () => {
    server = await start({ metrics, readiness: () => ready(), logger: createLogger('info', log.stream) });
  });
  afterAll(() => server.close());

  test('port 0 picks a real port and the start is logged', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(log.lines().some((l) => l.port === server.port && l.level === 'info')).toBe(true);
  });

  test('/healthz is ok while the process runs', async () => {
    expect(await get(server.port, '/healthz')).toMatchObject({ status: 200, body: 'ok' });
    expect(await get(server.port, '/healthz?verbose')).toMatchObject({ status: 200 });
  });

  test('/readyz follows the readiness callback, with a reason when not ready', async () => {
    ready = () => true;
    expect(await get(server.port, '/readyz')).toMatchObject({ status: 200, body: 'ok' });
    ready = async () => false;
    expect(await get(server.port, '/readyz')).toMatchObject({ status: 503, body: 'not ready' });
    ready = () => ({ ready: false, reason: 'workers not polling yet' });
    expect(await get(server.port, '/readyz')).toMatchObject({ status: 503, body: 'workers not polling yet' });
    ready = () => {
      throw new Error('temporal unreachable');
    };
    const r = await get(server.port, '/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toContain('temporal unreachable');
  });

  test('/metrics serves every kcm_ metric and the process metrics in Prometheus text format', async () => {
    metrics.reconcilesTotal.inc({ controller: 'replicaset-controller', result: 'success' });
    metrics.reconcileDurationSeconds.observe({ controller: 'replicaset-controller' }, 0.2);
    metrics.watchEventsTotal.inc({ resource: 'pods', type: 'ADDED' }, 3);
    metrics.signalsSentTotal.inc({ controller: 'replicaset-controller' });
    metrics.signalsReceivedTotal.inc({ controller: 'replicaset-controller' });
    metrics.signalsCoalescedTotal.inc({ controller: 'replicaset-controller' });
    metrics.activityErrorsTotal.inc({ activity: 'createPod', reason: 'Conflict' });
    metrics.apiRequestsTotal.inc({ verb: 'POST', resource: 'pods', code: '201' });

    const r = await get(server.port, '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(r.body).toContain('kcm_reconciles_total{controller="replicaset-controller",result="success"} 1');
    expect(r.body).toContain('kcm_reconcile_duration_seconds_bucket{le="0.25",controller="replicaset-controller"} 1');
    expect(r.body).toContain('kcm_watch_events_total{resource="pods",type="ADDED"} 3');
    expect(r.body).toContain('kcm_signals_sent_total{controller="replicaset-controller"} 1');
    expect(r.body).toContain('kcm_signals_received_total{controller="replicaset-controller"} 1');
    expect(r.body).toContain('kcm_signals_coalesced_total{controller="replicaset-controller"} 1');
    expect(r.body).toContain('kcm_activity_errors_total{activity="createPod",reason="Conflict"} 1');
    expect(r.body).toContain('kcm_api_requests_total{verb="POST",resource="pods",code="201"} 1');
    expect(r.body).toContain('process_cpu_seconds_total');
    expect(r.body).toContain('nodejs_eventloop_lag_seconds');
  });

  test('an unknown path is 403 to whoever may not read it and 404 past authorization, as upstream', async () => {
    expect(await get(server.port, '/')).toMatchObject({ status: 403, body: expect.stringContaining('forbidden: User \\"system:anonymous\\" cannot get path \\"/\\"') });
    // always allowed, and upstream serves no /livez either
    expect(await get(server.port, '/livez')).toMatchObject({ status: 404, body: '404 page not found\n' });
  });

  test('any method past authorization gets the page, HEAD without a body', async () => {
    expect(await get(server.port, '/healthz', 'POST')).toMatchObject({ status: 200, body: 'ok' });
    expect(await get(server.port, '/healthz', 'HEAD')).toMatchObject({ status: 200, body: '' });
    expect((await get(server.port, '/healthz')).headers['cache-control']).toBe('no-cache, private');
  });
});

describe('health server lifecycle', () => {
  const quiet = () => createLogger('silent');

  test('a taken port is a clear error', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(start({ port, logger: quiet() })).rejects.toThrow(`cannot serve health and metrics on 127.0.0.1:${port}: EADDRINUSE`);
    } finally {
      blocker.close();
    }
  });

  test('close() stops serving even with a keep-alive connection open, and may be called twice', async () => {
    const s = await start({ logger: quiet() });
    const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
    expect((await get(s.port, '/healthz', 'GET', agent)).status).toBe(200);
    await Promise.all([s.close(), s.close()]);
    await expect(get(s.port, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  });

  test('metrics registries are independent per createMetrics()', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.reconcilesTotal.inc({ controller: 'x', result: 'error' });
    expect(await b.registry.getSingleMetricAsString('kcm_reconciles_total')).not.toContain('controller="x"');
  });
});

describe('logger', () => {
  test('one JSON line per event, level names, controller and key on reconcile lines', () => {
    const out = capture();
    const base = createLogger('debug', out.stream);
    controllerLogger(base, 'replicaset-controller', 'default/web').info({ replicas: 3 }, 'synced');
    base.trace('dropped');
    const lines = out.lines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', controller: 'replicaset-controller', key: 'default/web', replicas: 3, msg: 'synced' });
    expect(typeof lines[0].time).toBe('string');
  });
});
