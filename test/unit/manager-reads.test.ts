import * as fs from 'node:fs';
import * as path from 'node:path';
import { listOnly, managerReadOf } from '../../activities/kube/manager-reads';
import { RESOURCES, parseResourcePath, resourcePath } from '../../activities/kube/resources';
import { ApiError, type KubeRest, type RequestOptions } from '../../activities/kube/rest';

/*
 * kubeadm's kube-controller-manager runs as system:kube-controller-manager, whose role lists and
 * watches everything but gets almost nothing. These hold the manager's own reads to that.
 */

/** What upstream's system:kube-controller-manager ClusterRole lets a GET request do (v1.35 bootstrap policy). */
function managerRoleAllowsGet(p: string): boolean {
  const parts = parseResourcePath(p);
  if (!parts) return true; // discovery: system:discovery, bound to every authenticated user
  if (parts.name === undefined) return true; // list (and watch) on */*
  if (parts.subresource !== undefined) return false;
  return parts.group === '' && ['namespaces', 'secrets', 'serviceaccounts', 'configmaps'].includes(parts.resource);
}

describe('parseResourcePath', () => {
  it('splits namespaced, cluster-scoped, subresource and discovery paths', () => {
    expect(parseResourcePath('/apis/apps/v1/namespaces/ns/statefulsets/web')).toEqual({ groupVersion: '/apis/apps/v1', group: 'apps', namespace: 'ns', resource: 'statefulsets', name: 'web', query: '' });
    expect(parseResourcePath('/api/v1/nodes/n1/status')).toEqual({ groupVersion: '/api/v1', group: '', resource: 'nodes', name: 'n1', subresource: 'status', query: '' });
    expect(parseResourcePath('/api/v1/namespaces/kube-system')).toEqual({ groupVersion: '/api/v1', group: '', resource: 'namespaces', name: 'kube-system', query: '' });
    expect(parseResourcePath('/api/v1/namespaces/a/pods?labelSelector=x%3Dy')).toEqual({ groupVersion: '/api/v1', group: '', namespace: 'a', resource: 'pods', query: 'labelSelector=x%3Dy' });
    expect(parseResourcePath('/api/v1/namespaces/gone/finalize')).toEqual({ groupVersion: '/api/v1', group: '', resource: 'namespaces', name: 'gone', subresource: 'finalize', query: '' });
    for (const d of ['/api', '/api/v1', '/apis', '/apis/apps/v1']) expect(parseResourcePath(d)).toBeUndefined();
  });
});

describe('the manager reads within its role', () => {
  it('turns a GET of any one object of every resource into a list of its collection by name', () => {
    for (const r of Object.values(RESOURCES)) {
      const one = resourcePath(r, r.namespaced ? 'some-ns' : undefined, 'obj.name-1');
      const read = managerReadOf('GET', one);
      expect(read.single?.name).toBe('obj.name-1');
      expect(read.path).toBe(`${resourcePath(r, r.namespaced ? 'some-ns' : undefined)}?fieldSelector=${encodeURIComponent('metadata.name=obj.name-1')}`);
      expect(managerRoleAllowsGet(read.path)).toBe(true);
      // without the rewrite the role would refuse it (but for the four resources it may get)
      if (!['namespaces', 'secrets', 'serviceaccounts', 'configmaps'].includes(r.resource)) expect(managerRoleAllowsGet(one)).toBe(false);
    }
  });

  it('sends lists and discovery as they are, and refuses writes and subresources as bugs', () => {
    expect(managerReadOf('GET', '/api/v1/pods?limit=500')).toEqual({ path: '/api/v1/pods?limit=500' });
    expect(managerReadOf('GET', '/apis/apps/v1')).toEqual({ path: '/apis/apps/v1' });
    expect(() => managerReadOf('PATCH', '/apis/apps/v1/namespaces/a/statefulsets/web')).toThrow(/only reads/);
    expect(() => managerReadOf('GET', '/apis/apps/v1/namespaces/a/statefulsets/web/scale')).toThrow(/subresource/);
  });

  it('answers a read by name as a GET would: the object with its kind, or 404', async () => {
    const calls: string[] = [];
    const fake = {
      async request<T>(method: string, p: string, _ro?: RequestOptions) {
        calls.push(`${method} ${p}`);
        const found = p.includes('metadata.name%3Dweb');
        return { status: 200, body: { kind: 'StatefulSetList', apiVersion: 'apps/v1', items: found ? [{ metadata: { name: 'web', namespace: 'a' } }] : [] } as T };
      },
    } as unknown as KubeRest;
    const reader = listOnly(fake);
    const got = (await reader.request<{ kind: string; apiVersion: string; metadata: { name: string } }>('GET', '/apis/apps/v1/namespaces/a/statefulsets/web')).body;
    expect(got).toEqual({ kind: 'StatefulSet', apiVersion: 'apps/v1', metadata: { name: 'web', namespace: 'a' } });
    const missing = await reader.request('GET', '/apis/apps/v1/namespaces/a/statefulsets/db').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
    expect((missing as ApiError).serverMessage).toBe('statefulsets.apps "db" not found');
    expect(calls.every((c) => c.startsWith('GET ') && managerRoleAllowsGet(c.slice(4)))).toBe(true);
  });
});

/*
 * Every activity that reads with the manager's identity gets it as ActivityContext.reader, which the
 * manager builds with listOnly. This walks the sources: each use of a reader is a GET, or hands the
 * reader to a helper that only GETs (listAll, heartbeating, the REST mapper's discovery).
 */
describe('every activity read with the manager identity', () => {
  const root = path.join(__dirname, '..', '..');
  const files = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));

  it('is built by listOnly', () => {
    const manager = fs.readFileSync(path.join(root, 'workers', 'manager.ts'), 'utf8');
    expect(manager).toMatch(/const managerReader = listOnly\(rest\);/);
    expect(manager).toMatch(/reader: shadowOf\(managerReader, d\.short\)/);
    expect(manager.match(/\breader:/g)).toHaveLength(1);
  });

  it('is only ever a GET', () => {
    const uses: string[] = [];
    for (const f of files(path.join(root, 'activities'))) {
      // code only: comments speak of readers in other senses
      const text = fs.readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      for (const m of text.matchAll(/\breader\.request(?:<[^(]*>)?\(\s*'([A-Z]+)'/g)) uses.push(`${path.relative(root, f)} ${m[1]}`);
      for (const m of text.matchAll(/\b(?:deps\.|ctx\.)?reader\b(?!\.request|:|\s*=|,\s*reader)/g)) {
        const at = text.slice(Math.max(0, m.index! - 40), m.index! + 40);
        if (!/(listAll|heartbeating|RestMapper|shadowOf)\((?:deps\.|ctx\.)?reader|\{[^}]*\breader\b[^}]*\}\s*=\s*deps|reader: (?:deps|ctx)\.reader|reader: KubeRest/.test(at)) uses.push(`${path.relative(root, f)} passes the reader on: ${at.replace(/\s+/g, ' ')}`);
      }
    }
    expect(uses.length).toBeGreaterThan(10);
    expect(uses.filter((u) => !u.endsWith(' GET'))).toEqual([]);
  });
});
