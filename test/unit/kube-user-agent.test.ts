import { plainHttpAccess } from '../support/plain-http-access';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EventEmitter } from 'node:events';
import pino from 'pino';
import {
  KubeRest,
  PROGRAM,
  defaultUserAgent,
  fieldManagerFromUserAgent,
  goArch,
  goOs,
  ownVersion,
  requestHeaders,
  requestPath,
  userAgentFor,
} from '../../activities/kube/rest';
import { controllerClients, controllerUserAgent } from '../../activities/kube/service-account-credentials';
import { TokenBucket } from '../../activities/kube/token-bucket';

const linux = { version: '0.1.0', platform: 'linux', arch: 'x64' };
const pkgVersion = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

describe('User-Agent', () => {
  test("Node's platform and arch in Go's spelling, as client-go's GOOS/GOARCH", () => {
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(goArch('ia32')).toBe('386');
    expect(goArch('mipsel')).toBe('mipsle');
    expect(goArch('ppc64', 'LE')).toBe('ppc64le');
    expect(goArch('ppc64', 'BE')).toBe('ppc64');
    expect(goArch('s390x')).toBe('s390x');
    expect(goOs('linux')).toBe('linux');
    expect(goOs('darwin')).toBe('darwin');
    expect(goOs('win32')).toBe('windows');
  });

  test('the default one is shaped like rest.DefaultKubernetesUserAgent', () => {
    expect(defaultUserAgent(linux)).toBe('temporal-kcm/0.1.0 (linux/amd64) temporal-kcm');
    expect(defaultUserAgent({ ...linux, platform: 'darwin', arch: 'arm64' })).toBe('temporal-kcm/0.1.0 (darwin/arm64) temporal-kcm');
    // client-go's adjustVersion: the pre-release part goes, an empty version reads unknown
    expect(defaultUserAgent({ ...linux, version: '0.2.0-rc.1' })).toBe('temporal-kcm/0.2.0 (linux/amd64) temporal-kcm');
    expect(defaultUserAgent({ ...linux, version: '' })).toBe('temporal-kcm/unknown (linux/amd64) temporal-kcm');
  });

  test("the version is package.json's, and the running platform is used by default", () => {
    expect(ownVersion()).toBe(pkgVersion);
    expect(defaultUserAgent()).toBe(`temporal-kcm/${pkgVersion.split('-')[0]} (${goOs(process.platform)}/${goArch(process.arch)}) temporal-kcm`);
  });

  test('a controller client appends its name, as rest.AddUserAgent does', () => {
    expect(userAgentFor('replicaset-controller', linux)).toBe('temporal-kcm/0.1.0 (linux/amd64) temporal-kcm/replicaset-controller');
    expect(userAgentFor(undefined, linux)).toBe(defaultUserAgent(linux));
  });

  test('the name is the ServiceAccount, or its user name with --use-service-account-credentials', () => {
    const base = defaultUserAgent();
    expect(controllerUserAgent('replicaset-controller', false)).toBe(`${base}/replicaset-controller`);
    expect(controllerUserAgent('replicaset-controller', true)).toBe(`${base}/system:serviceaccount:kube-system:replicaset-controller`);
  });
});

describe('field manager', () => {
  test('the API server derives temporal-kcm from every User-Agent we send', () => {
    for (const ua of [defaultUserAgent(), userAgentFor('generic-garbage-collector'), controllerUserAgent('job-controller', true)]) {
      expect(fieldManagerFromUserAgent(ua)).toBe(PROGRAM);
    }
    expect(PROGRAM).toBe('temporal-kcm');
  });

  test("the derivation is apiserver's prefixFromUserAgent (its own test cases), unknown when empty", () => {
    expect(fieldManagerFromUserAgent('kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/unknown/replicaset-controller')).toBe('kube-controller-manager');
    expect(fieldManagerFromUserAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36')).toBe('Mozilla');
    expect(fieldManagerFromUserAgent(`${'f'.repeat(129)}/Something`)).toBe('f'.repeat(128));
    expect(fieldManagerFromUserAgent('🍔'.repeat(60))).toBe('🍔'.repeat(32));
    expect(fieldManagerFromUserAgent('a\tb\u0000c d/1')).toBe('abc d');
    expect(fieldManagerFromUserAgent('')).toBe('unknown');
  });

  test('writes name no fieldManager, so the User-Agent decides (as upstream)', () => {
    for (const m of ['GET', 'POST', 'PUT', 'DELETE']) {
      expect(requestPath(m, '/api/v1/namespaces/a/pods?labelSelector=x')).toBe('/api/v1/namespaces/a/pods?labelSelector=x');
    }
    expect(requestPath('PATCH', '/apis/apps/v1/namespaces/a/replicasets/r', 'application/merge-patch+json')).toBe('/apis/apps/v1/namespaces/a/replicasets/r');
  });

  test('a server-side apply must name one: ours unless it names its own', () => {
    const apply = 'application/apply-patch+yaml';
    expect(requestPath('PATCH', '/api/v1/namespaces/a/configmaps/c', apply)).toBe('/api/v1/namespaces/a/configmaps/c?fieldManager=temporal-kcm');
    expect(requestPath('PATCH', '/api/v1/namespaces/a/configmaps/c?force=true', apply)).toBe('/api/v1/namespaces/a/configmaps/c?force=true&fieldManager=temporal-kcm');
    const own = '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin?fieldManager=clusterrole-aggregation-controller&force=true';
    expect(requestPath('PATCH', own, apply)).toBe(own);
  });
});

describe('request headers', () => {
  test('every request says who we are and accepts JSON unless told otherwise', () => {
    expect(requestHeaders('ua')).toEqual({ 'User-Agent': 'ua', Accept: 'application/json' });
    const meta = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
    expect(requestHeaders('ua', { accept: meta })).toEqual({ 'User-Agent': 'ua', Accept: meta });
  });

  test('a body brings its type and its length in bytes', () => {
    const payload = JSON.stringify({ message: 'naïve' });
    expect(requestHeaders('ua', {}, payload)).toEqual({
      'User-Agent': 'ua', Accept: 'application/json', 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)),
    });
    expect(requestHeaders('ua', { contentType: 'application/merge-patch+json' }, '{}')['Content-Type']).toBe('application/merge-patch+json');
  });
});

interface Call { url: URL; opts: { method?: string; headers?: Record<string, string> } }

/** Fakes node:http's request: each call answers 200 with `body`. */
function fakeHttp(body: unknown) {
  const calls: Call[] = [];
  const httpModule = require('node:http') as typeof import('node:http');
  const spy = jest.spyOn(httpModule, 'request').mockImplementation(((url: URL, opts: Call['opts'], cb: (res: unknown) => void) => {
    calls.push({ url, opts });
    const req = Object.assign(new EventEmitter(), {
      write: () => true,
      destroy: () => req,
      end: () => {
        const res = Object.assign(new EventEmitter(), { statusCode: 200, headers: {}, setEncoding: () => res });
        cb(res);
        setImmediate(() => { res.emit('data', Buffer.from(JSON.stringify(body))); res.emit('end'); });
      },
    });
    return req;
  }) as unknown as typeof httpModule.request);
  return { calls, restore: () => spy.mockRestore() };
}

describe('KubeRest sends them', () => {
  test('the User-Agent goes on every request, the default one without a name', async () => {
    const http = fakeHttp({ items: [] });
    try {
      const rest = new KubeRest(plainHttpAccess(), new TokenBucket(0, 0));
      await rest.request('GET', '/api/v1/pods');
      await rest.request('POST', '/api/v1/namespaces/a/configmaps', { body: { metadata: { name: 'c' } } });
      expect(http.calls.map((c) => c.opts.headers?.['User-Agent'])).toEqual([defaultUserAgent(), defaultUserAgent()]);
      expect(http.calls[1].url.search).toBe(''); // no fieldManager: the server derives temporal-kcm
      expect(http.calls[1].opts.headers?.['Content-Type']).toBe('application/json');
    } finally {
      http.restore();
    }
  });

  test("each controller's client carries its own; without service accounts they share the manager's", async () => {
    const http = fakeHttp({});
    try {
      const root = new KubeRest(plainHttpAccess(), new TokenBucket(0, 0));
      const clientOf = controllerClients(root, false, 20, 30, pino({ level: 'silent' }));
      const rs = clientOf('replicaset-controller');
      expect(clientOf('replicaset-controller')).toBe(rs);
      expect(rs).not.toBe(root);
      expect(rs.userAgent).toBe(`${defaultUserAgent()}/replicaset-controller`);
      await rs.request('PUT', '/apis/apps/v1/namespaces/a/replicasets/r', { body: {} });
      await clientOf('job-controller').request('GET', '/apis/batch/v1/jobs');
      await root.request('GET', '/api/v1/nodes');
      expect(http.calls.map((c) => c.opts.headers?.['User-Agent'])).toEqual([
        `${defaultUserAgent()}/replicaset-controller`, `${defaultUserAgent()}/job-controller`, defaultUserAgent(),
      ]);
    } finally {
      http.restore();
    }
  });

  test('a controller upstream gives a faster client gets its scaled bucket (namespace: 20x QPS, 100x burst)', async () => {
    const http = fakeHttp({});
    try {
      const root = new KubeRest(plainHttpAccess(), new TokenBucket(0, 0));
      const clientOf = controllerClients(root, false, 1, 1, pino({ level: 'silent' }));
      const fast = clientOf('namespace-controller', { qps: 20, burst: 100 });
      const plain = clientOf('job-controller');
      const fired = [...Array.from({ length: 50 }, () => fast.request('GET', '/api/v1/namespaces/a/configmaps')), ...Array.from({ length: 2 }, () => plain.request('GET', '/apis/batch/v1/jobs'))];
      await new Promise((r) => setTimeout(r, 100));
      const sent = (ua: string) => http.calls.filter((c) => c.opts.headers?.['User-Agent'] === `${defaultUserAgent()}/${ua}`).length;
      // a burst of 100 lets all 50 out at once; the unscaled burst of 1 lets one out, then one a second
      expect(sent('namespace-controller')).toBe(50);
      expect(sent('job-controller')).toBe(1);
      await Promise.all(fired); // the second job request, a second later
      expect(sent('job-controller')).toBe(2);
    } finally {
      http.restore();
    }
  });

  test('with service accounts each client names its account', () => {
    const root = new KubeRest(plainHttpAccess(), new TokenBucket(0, 0));
    const clientOf = controllerClients(root, true, 20, 30, pino({ level: 'silent' }));
    expect(clientOf('endpoint-controller').userAgent).toBe(`${defaultUserAgent()}/system:serviceaccount:kube-system:endpoint-controller`);
    expect(root.withUserAgent('x', new TokenBucket(0, 0)).withAuth({ token: async () => 't', invalidate: () => undefined }, new TokenBucket(0, 0)).userAgent).toBe('x');
  });
});
