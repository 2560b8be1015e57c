import * as fs from 'node:fs';
import { auditLogPath } from '../../starter/local/stack';
import { eventually, uniqueName } from '../support/cluster';
import { ManagerProcess, clusterIdentityArgs, startManagerProcess } from '../support/manager';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * With every implemented controller enabled, the shared informer cache lists and watches each
 * resource exactly once, whichever controllers read it and whether they read it in full or only
 * its metadata (the garbage collector). Counted from the API server's side, in its audit log, and
 * from ours, in the manager's metrics.
 */
interface AuditEvent {
  stage: string;
  verb: string;
  userAgent?: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; apiGroup?: string };
}

const INFORMER_AGENT = /\/shared-informers$/;

/** `pods`, `replicasets.apps`: as the manager's metrics label resources. */
const resourceOf = (e: AuditEvent) => `${e.objectRef?.resource ?? ''}${e.objectRef?.apiGroup ? `.${e.objectRef.apiGroup}` : ''}`;

/** The informers' lists (first pages only: a long list is several requests) and watches since `since`, by resource. */
function informerRequests(since: Date): Map<string, { lists: number; watches: number }> {
  const out = new Map<string, { lists: number; watches: number }>();
  for (const line of fs.readFileSync(auditLogPath(TEST_DATA_DIR), 'utf8').split('\n')) {
    if (!line.includes('shared-informers')) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (!INFORMER_AGENT.test(e.userAgent ?? '') || new Date(e.requestReceivedTimestamp) < since) continue;
    const c = out.get(resourceOf(e)) ?? { lists: 0, watches: 0 };
    if (e.verb === 'list' && e.stage === 'ResponseComplete' && !e.requestURI.includes('continue=')) c.lists++;
    else if (e.verb === 'watch' && e.stage === 'ResponseStarted') c.watches++;
    else continue;
    out.set(resourceOf(e), c);
  }
  return out;
}

/** `{resource: value}` of one labelled metric. */
function byResource(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}\\{resource="([^"]+)"\\} (\\S+)$`, 'gm'))) out.set(m[1], Number(m[2]));
  return out;
}

/** rediscovery this often (upstream's 30 s), so two rounds fit in seconds */
const DISCOVERY_PERIOD_S = 2;
let manager: ManagerProcess | undefined;
afterAll(async () => {
  await manager?.kill();
});

test('every controller enabled: one list and one watch per resource, typed and metadata-only consumers sharing it', async () => {
  // audit timestamps are the API server's clock, on this machine, to the microsecond; no margin
  // before now, or the last requests of the previous file's manager (same User-Agent, exiting as
  // this file starts) would be counted as this one's
  const since = new Date();
  manager = await startManagerProcess(uniqueName('shared-informers'), [...clusterIdentityArgs(), '--discovery-period', `${DISCOVERY_PERIOD_S}s`], { controllers: '*' });
  const m = manager;
  // every reflector has listed and has its watch open (the collector's discovered resources included)
  const reflectors = await eventually('every reflector watching', async () => {
    const text = await m.metrics();
    const r = byResource(text, 'kcm_informer_reflectors');
    const w = byResource(text, 'kcm_informer_watches');
    // podtemplates only the collector watches: its discovered resources are in once it is
    return r.has('podtemplates') && [...r.keys()].every((k) => w.get(k) === 1) ? r : undefined;
  }, 60_000);
  // the collector's rediscovery must find every resource already watched: give it two rounds
  await new Promise((r) => setTimeout(r, (2 * DISCOVERY_PERIOD_S + 1) * 1000));

  const text = await m.metrics();
  const after = byResource(text, 'kcm_informer_reflectors');
  expect(after).toEqual(reflectors);
  for (const [resource, n] of after) expect({ resource, reflectors: n }).toEqual({ resource, reflectors: 1 });
  for (const [resource, n] of byResource(text, 'kcm_informer_lists_total')) expect({ resource, lists: n }).toEqual({ resource, lists: 1 });

  // resources routes read in full, resources only the collector reads, and ones both read
  for (const r of ['pods', 'replicasets.apps', 'jobs.batch', 'secrets', 'configmaps', 'endpointslices.discovery.k8s.io', 'namespaces', 'leases.coordination.k8s.io']) {
    expect(after.has(r)).toBe(true);
  }

  const seen = informerRequests(since);
  expect([...seen.keys()].sort()).toEqual([...after.keys()].sort());
  for (const [resource, c] of seen) expect({ resource, ...c }).toEqual({ resource, lists: 1, watches: 1 });
});
