import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { selectorMatches } from '../workflows/common/selector';
import { OBJECT_EVENT_SIGNAL, LoopTuning } from '../workflows/runtime/object-loop';
import { SA_CONTROLLER, SA_KIND, SA_NAME, SA_NAMESPACE, SA_UID } from '../workflows/search-attributes';
import type { ReplicaOwnerEvent, ReplicaOwnerWorkflowInput } from '../workflows/replicaset/workflow';
import type { PodSummary, ReplicaOwner, ReplicaOwnerKind } from '../workflows/replicaset/types';
import { KubeObject, controllerRef, podSummary, replicaOwner } from './kube/projections';
import { ApiError, KubeRest } from './kube/rest';
import { mergeReplicaOwnerEvents } from './routing';

export interface InformerInput {
  controllers: string[];
  tuning?: Partial<LoopTuning>;
  burstReplicas?: number;
}

export interface InformerDeps {
  rest: KubeRest;
  client: Client;
  taskQueue: string;
  logger: Logger;
  onWatchEvent?: (resource: string, type: string) => void;
  onSignalSent?: (controller: string) => void;
}

interface OwnerResource {
  controller: 'replicaset' | 'replicationcontroller';
  kind: ReplicaOwnerKind;
  path: string;
  resource: string;
}

const OWNER_RESOURCES: OwnerResource[] = [
  { controller: 'replicaset', kind: 'ReplicaSet', path: '/apis/apps/v1/replicasets', resource: 'replicasets' },
  { controller: 'replicationcontroller', kind: 'ReplicationController', path: '/api/v1/replicationcontrollers', resource: 'replicationcontrollers' },
];

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const onAbort = () => { clearTimeout(t); resolve(); };
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

const FLUSH_PERIOD_MS = 100;

/** Pod summaries carry only what owners decide on, so equal summaries (but for the version) mean nothing changed for them. */
function sameForOwners(a: PodSummary, b: PodSummary): boolean {
  return JSON.stringify({ ...a, resourceVersion: '' }) === JSON.stringify({ ...b, resourceVersion: '' });
}

type Handler = {
  /** after every (re)list: the full set of objects */
  relisted(objects: KubeObject[]): void;
  event(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void;
};

/**
 * One resource's list+watch (a reflector): list, then watch from the list's resourceVersion,
 * re-watch on disconnect, and relist on 410 Gone or anything it cannot resume from.
 */
interface ReflectorStats {
  lists: number;
  watches: number;
  events: number;
  lastEventAt: number;
}

async function reflect(rest: KubeRest, path: string, h: Handler, signal: AbortSignal, logger: Logger, stats: ReflectorStats): Promise<void> {
  let failures = 0;
  while (!signal.aborted) {
    let rv: string;
    try {
      const items: KubeObject[] = [];
      let cont = '';
      do {
        const page = await rest.request<{ items: KubeObject[]; metadata: { resourceVersion: string; continue?: string } }>(
          'GET', `${path}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        items.push(...page.body.items);
        rv = page.body.metadata.resourceVersion;
        cont = page.body.metadata.continue ?? '';
      } while (cont);
      h.relisted(items);
      stats.lists++;
      failures = 0;
    } catch (e) {
      failures++;
      logger.warn({ path, err: String(e) }, 'list failed; retrying');
      await sleep(Math.min(30_000, 500 * 2 ** failures), signal);
      continue;
    }
    // watch until it breaks; a resumable break re-watches from the last version seen
    for (;;) {
      if (signal.aborted) return;
      let gone = false;
      stats.watches++;
      try {
        await rest.watch(`${path}?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${rv}`, (e) => {
          const obj = e.object as KubeObject & { code?: number };
          if (e.type === 'ERROR') {
            if (obj.code === 410) gone = true;
            throw new ApiError(obj.code ?? 500, 'WatchError', `watch ${path}: ${JSON.stringify(obj).slice(0, 200)}`);
          }
          const next = obj.metadata?.resourceVersion;
          if (next) rv = next;
          stats.lastEventAt = Date.now();
          if (e.type === 'BOOKMARK') return;
          stats.events++;
          h.event(e.type as 'ADDED' | 'MODIFIED' | 'DELETED', obj);
        }, signal);
      } catch (e) {
        if (signal.aborted) return;
        if (gone || (e instanceof ApiError && e.status === 410)) {
          logger.info({ path }, 'watch expired (410 Gone); relisting');
          break;
        }
        logger.warn({ path, err: String(e) }, 'watch broke; resuming');
        await sleep(1000, signal);
        if (e instanceof ApiError && e.status !== 0 && e.status !== 500) break;
      }
    }
  }
}

/**
 * The single list+watch of every resource the enabled controllers need, and the router that turns
 * its events into signals for per-object workflows. It runs as one long, heartbeating activity of
 * a fixed-ID workflow, so exactly one replica runs it; if that replica dies, the heartbeat times
 * out and Temporal starts it on another, which relists and nudges every object to re-observe.
 */
export function createInformerActivities(deps: InformerDeps) {
  return {
    async runInformers(input: InformerInput): Promise<void> {
      const ctx = Context.current();
      const abort = new AbortController();
      ctx.cancelled.catch(() => abort.abort());
      const signal = abort.signal;
      const log = deps.logger.child({ component: 'informers' });
      const enabled = OWNER_RESOURCES.filter((r) => input.controllers.includes(r.controller));
      if (!enabled.length) {
        log.info('no enabled controller needs informers');
        for (;;) {
          ctx.heartbeat();
          await sleep(1000, signal);
          if (signal.aborted) throw ApplicationFailure.retryable('informers stopped on this worker', 'InformersStopped');
        }
      }

      /** owners by uid, for routing pods (controllerRef and orphan selector match) */
      const owners = new Map<string, { res: OwnerResource; owner: ReplicaOwner }>();
      const pods = new Map<string, PodSummary>();
      const pending = new Map<string, { res: OwnerResource; owner: ReplicaOwner | { namespace: string; name: string; uid: string }; event: ReplicaOwnerEvent }>();

      const queue = (res: OwnerResource, who: { namespace: string; name: string; uid: string }, event: ReplicaOwnerEvent) => {
        const id = `${res.controller}/${who.namespace}/${who.name}`;
        const prev = pending.get(id);
        pending.set(id, { res, owner: who, event: prev ? mergeReplicaOwnerEvents(prev.event, event) : event });
      };

      const ownersForPod = (p: PodSummary): Array<{ res: OwnerResource; owner: ReplicaOwner }> => {
        const ref = controllerRef(p.ownerReferences);
        if (ref) {
          const o = owners.get(ref.uid);
          return o ? [o] : [];
        }
        const out: Array<{ res: OwnerResource; owner: ReplicaOwner }> = [];
        for (const o of owners.values()) {
          if (o.owner.namespace === p.namespace && selectorMatches(o.owner.selector, p.labels)) out.push(o);
        }
        return out;
      };

      const routePod = (before: PodSummary | undefined, after: PodSummary | undefined) => {
        // A change the owners cannot act on (annotations, most of status) is not worth a signal.
        if (before && after && sameForOwners(before, after)) return;
        const targets = new Map<string, { res: OwnerResource; owner: ReplicaOwner }>();
        for (const p of [before, after]) if (p) for (const o of ownersForPod(p)) targets.set(o.owner.uid, o);
        for (const o of targets.values()) {
          queue(o.res, o.owner, after ? { pods: [after] } : { podsDeleted: [before!.uid] });
        }
      };

      const ownerHandler = (res: OwnerResource): Handler => ({
        relisted(objects) {
          const seen = new Set<string>();
          for (const obj of objects) {
            const owner = replicaOwner(res.kind, obj);
            seen.add(owner.uid);
            owners.set(owner.uid, { res, owner });
            queue(res, owner, { owner, relist: true });
          }
          for (const [uid, o] of owners) {
            if (o.res === res && !seen.has(uid)) {
              owners.delete(uid);
              queue(res, o.owner, { ownerDeletedUid: uid });
            }
          }
        },
        event(type, obj) {
          deps.onWatchEvent?.(res.resource, type);
          const owner = replicaOwner(res.kind, obj);
          if (type === 'DELETED') {
            owners.delete(owner.uid);
            queue(res, owner, { ownerDeletedUid: owner.uid });
          } else {
            owners.set(owner.uid, { res, owner });
            queue(res, owner, { owner });
          }
        },
      });

      const podHandler: Handler = {
        relisted(objects) {
          const seen = new Set<string>();
          for (const obj of objects) {
            const p = podSummary(obj);
            seen.add(p.uid);
            const before = pods.get(p.uid);
            pods.set(p.uid, p);
            if (before && before.resourceVersion !== p.resourceVersion) routePod(before, p);
          }
          for (const [uid, p] of pods) if (!seen.has(uid)) { pods.delete(uid); routePod(p, undefined); }
        },
        event(type, obj) {
          deps.onWatchEvent?.('pods', type);
          const p = podSummary(obj);
          const before = pods.get(p.uid);
          if (type === 'DELETED') {
            pods.delete(p.uid);
            routePod(before ?? p, undefined);
          } else {
            pods.set(p.uid, p);
            routePod(before, p);
          }
        },
      };

      const flush = async () => {
        const batch = [...pending.entries()];
        pending.clear();
        const inFlight = new Set<Promise<void>>();
        for (const [workflowId, item] of batch) {
          const p = signalOne(workflowId, item).finally(() => inFlight.delete(p));
          inFlight.add(p);
          if (inFlight.size >= 32) await Promise.race(inFlight);
        }
        await Promise.all(inFlight);
      };

      const signalOne = async (workflowId: string, item: { res: OwnerResource; owner: { namespace: string; name: string; uid: string }; event: ReplicaOwnerEvent }) => {
        const args: ReplicaOwnerWorkflowInput = {
          controller: item.res.controller,
          kind: item.res.kind,
          namespace: item.owner.namespace,
          name: item.owner.name,
          uid: item.owner.uid,
          tuning: input.tuning,
          burstReplicas: input.burstReplicas,
        };
        try {
          await deps.client.workflow.signalWithStart('replicaOwnerWorkflow', {
            workflowId,
            taskQueue: deps.taskQueue,
            args: [args],
            signal: OBJECT_EVENT_SIGNAL,
            signalArgs: [item.event],
            typedSearchAttributes: [
              { key: SA_CONTROLLER, value: item.res.controller },
              { key: SA_KIND, value: item.res.kind },
              { key: SA_NAMESPACE, value: item.owner.namespace },
              { key: SA_NAME, value: item.owner.name },
              { key: SA_UID, value: item.owner.uid },
            ],
          });
          deps.onSignalSent?.(item.res.controller);
          signalsSent++;
        } catch (e) {
          signalErrors++;
          // keep it for the next flush, merged with whatever arrived meanwhile
          log.warn({ controller: item.res.controller, key: workflowId, err: String(e) }, 'signal failed; will retry');
          const prev = pending.get(workflowId);
          pending.set(workflowId, { ...item, event: prev ? mergeReplicaOwnerEvents(item.event, prev.event) : item.event });
        }
      };

      const paths = [...enabled.map((r) => r.path), '/api/v1/pods'];
      const stats = new Map(paths.map((p) => [p, { lists: 0, watches: 0, events: 0, lastEventAt: 0 } as ReflectorStats]));
      const reflectors = [
        ...enabled.map((res) => reflect(deps.rest, res.path, ownerHandler(res), signal, log, stats.get(res.path)!)),
        reflect(deps.rest, '/api/v1/pods', podHandler, signal, log, stats.get('/api/v1/pods')!),
      ];
      let signalsSent = 0;
      let signalErrors = 0;
      log.info({ controllers: input.controllers }, 'informers started');
      let lastStats = Date.now();
      const pump = (async () => {
        while (!signal.aborted) {
          if (Date.now() - lastStats > 30_000) {
            lastStats = Date.now();
            log.info({ owners: owners.size, pods: pods.size, pending: pending.size, signalsSent, signalErrors,
              reflectors: Object.fromEntries([...stats].map(([p, st]) => [p, { ...st, lastEventAgoMs: st.lastEventAt ? Date.now() - st.lastEventAt : null }])) }, 'informer stats');
          }
          ctx.heartbeat({ owners: owners.size, pods: pods.size });
          if (pending.size) await flush();
          // The flush period is the price of coalescing: events for one key within it become one signal.
          await sleep(FLUSH_PERIOD_MS, signal);
        }
      })();
      await Promise.race([Promise.all(reflectors), pump]);
      abort.abort();
      log.info('informers stopped');
      // Never complete: a stop (worker shutdown, lost heartbeat) must hand the watch to another replica.
      throw ApplicationFailure.retryable('informers stopped on this worker', 'InformersStopped');
    },
  };
}

export type InformerActivities = ReturnType<typeof createInformerActivities>;
