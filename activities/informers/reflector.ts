import type { Logger } from 'pino';
import type { KubeObject } from '../kube/projections';
import { sleep } from '../kube/abort';
import { ApiError, KubeRest } from '../kube/rest';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What a reflector feeds: the full set after every (re)list, then each watch event. */
export interface Handler {
  /**
   * `resourceVersion` is the list's: the cache is complete up to it. `resumed`: the list was made
   * at the position it was asked to resume from, so its objects are what the last holder had.
   */
  relisted(objects: KubeObject[], resourceVersion: string, resumed: boolean): void;
  event(type: WatchEventType, obj: KubeObject): void;
  /** a bookmark: every change up to this resourceVersion has been delivered */
  bookmark?(resourceVersion: string): void;
}

export interface ReflectorStats {
  lists: number;
  watches: number;
  events: number;
  lastEventAt: number;
}

/** Metadata-only lists and watches (the garbage collector reads nothing else). */
export const METADATA_ONLY = { list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1', watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' };

/** Told of each list and of each watch opening and closing, for the manager's metrics. */
export interface ReflectorHooks {
  onList?(): void;
  onWatch?(open: boolean): void;
  /** the position to resume from was listed (true), or could not be and a fresh list follows (false) */
  onResume?(resumed: boolean): void;
  /** awaited once, between the first list and the first watch */
  beforeFirstWatch?(): Promise<void>;
}

/** A resume that fails for another reason than an expired position is tried this often before a fresh list. */
const RESUME_ATTEMPTS = 3;

/**
 * One resource's list+watch: list, then watch from the list's resourceVersion, re-watch on
 * disconnect, and relist on 410 Gone or anything it cannot resume from.
 *
 * With `resumeFrom`, the first list is made at exactly that resourceVersion (the position the
 * last holder of the watch had signalled everything up to), so the watch after it replays the
 * changes since as events. A position the API server no longer keeps (compacted: 410 Gone), or
 * one it will not list at, gives way to an ordinary list.
 */
export async function reflect(rest: KubeRest, path: string, h: Handler, signal: AbortSignal, logger: Logger, stats: ReflectorStats,
  accept?: { list: string; watch: string }, hooks: ReflectorHooks = {}, resumeFrom?: string): Promise<void> {
  let failures = 0;
  let resume = resumeFrom;
  let watched = false;
  // a path may carry its own selector (e.g. secrets of one type)
  const q = path.includes('?') ? '&' : '?';
  while (!signal.aborted) {
    let rv: string;
    try {
      const items: KubeObject[] = [];
      let cont = '';
      do {
        // the exact version only on the first page: a continue token carries its own
        const at = resume && !cont ? `&resourceVersion=${resume}&resourceVersionMatch=Exact` : '';
        const page = await rest.request<{ items: KubeObject[]; metadata: { resourceVersion: string; continue?: string } }>(
          'GET', `${path}${q}limit=500${at}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, { accept: accept?.list });
        items.push(...(page.body.items ?? [])); // an empty metadata-only list has items: null
        rv = page.body.metadata.resourceVersion;
        cont = page.body.metadata.continue ?? '';
      } while (cont);
      stats.lists++;
      hooks.onList?.();
      if (resume) hooks.onResume?.(true);
      h.relisted(items, rv, !!resume);
      resume = undefined;
      failures = 0;
    } catch (e) {
      failures++;
      if (resume) {
        const expired = e instanceof ApiError && (e.status === 410 || e.status === 400 || e.status === 422);
        if (expired || failures >= RESUME_ATTEMPTS) {
          logger.info({ path, resourceVersion: resume, err: String(e) }, 'cannot resume the watch from the last holder\'s position; listing afresh');
          hooks.onResume?.(false);
          resume = undefined;
          failures = 0;
          continue;
        }
      }
      logger.warn({ path, err: String(e) }, 'list failed; retrying');
      await sleep(Math.min(30_000, 500 * 2 ** failures), signal);
      continue;
    }
    if (!watched) {
      watched = true;
      await hooks.beforeFirstWatch?.();
    }
    for (;;) {
      if (signal.aborted) return;
      let gone = false;
      stats.watches++;
      hooks.onWatch?.(true);
      try {
        await rest.watch(`${path}${q}watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${rv}`, (e) => {
          const obj = e.object as KubeObject & { code?: number };
          if (e.type === 'ERROR') {
            if (obj.code === 410) gone = true;
            throw new ApiError(obj.code ?? 500, 'WatchError', `watch ${path}: ${JSON.stringify(obj).slice(0, 200)}`);
          }
          const next = obj.metadata?.resourceVersion;
          if (next) rv = next;
          stats.lastEventAt = Date.now();
          if (e.type === 'BOOKMARK') {
            if (next) h.bookmark?.(next);
            return;
          }
          stats.events++;
          h.event(e.type as WatchEventType, obj);
        }, signal, undefined, accept?.watch);
        hooks.onWatch?.(false);
      } catch (e) {
        hooks.onWatch?.(false);
        if (signal.aborted) return;
        if (gone || (e instanceof ApiError && e.status === 410)) {
          logger.info({ path }, 'watch expired (410 Gone); relisting');
          break;
        }
        // A quiet resource sends nothing for minutes; the idle guard ends such a watch and it
        // resumes from where it was. That is routine, not worth a warning or a pause.
        if (e instanceof ApiError && e.status === 0 && e.message.includes('no data for')) {
          logger.debug({ path }, 'quiet watch renewed');
          continue;
        }
        logger.warn({ path, err: String(e) }, 'watch broke; resuming');
        await sleep(1000, signal);
        if (e instanceof ApiError && e.status !== 0 && e.status !== 500) break;
      }
    }
  }
}
