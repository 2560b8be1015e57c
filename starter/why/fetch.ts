/**
 * The I/O of `temporal-kcm why`: find an object's workflow runs through the Kcm* search
 * attributes and read their histories, in the JSON shape the recorded fixtures have.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { ObjectRef, objectQuery } from '../operate/objects';
import { failureText, type HistoryEventJson, type PendingActivityJson, type RunHistory } from './history';

export interface FetchOptions {
  /** most recent runs to read (continue-as-new makes many runs per workflow); default 50 */
  limit?: number;
  /** visibility can trail a workflow start by a second: an empty answer is asked again once after this */
  emptyRetryMs?: number;
  /** histories read at the same time */
  concurrency?: number;
}

export const DEFAULT_RUN_LIMIT = 50;

async function listRuns(client: Client, query: string, limit: number): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  // visibility answers newest first, so the limit keeps the most recent runs
  for await (const info of client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
    found.push(info);
    if (found.length >= limit) break;
  }
  return found;
}

function pendingActivities(raw: unknown): PendingActivityJson[] {
  const list = (raw as { pendingActivities?: unknown[] } | undefined)?.pendingActivities ?? [];
  return list.map((p) => {
    const a = p as {
      activityId?: string | null;
      activityType?: { name?: string | null } | null;
      attempt?: number | null;
      maximumAttempts?: number | null;
      lastFailure?: unknown;
      nextAttemptScheduleTime?: Parameters<typeof optionalTsToMs>[0];
    };
    const next = optionalTsToMs(a.nextAttemptScheduleTime);
    return {
      activityId: a.activityId ?? '',
      activityType: a.activityType?.name ?? '?',
      attempt: a.attempt ?? 1,
      ...(a.maximumAttempts ? { maximumAttempts: a.maximumAttempts } : {}),
      ...(a.lastFailure ? { lastFailure: failureText(a.lastFailure) } : {}),
      ...(next !== undefined ? { nextAttemptTime: new Date(next).toISOString() } : {}),
    };
  });
}

async function readRun(client: Client, info: WorkflowExecutionInfo): Promise<RunHistory> {
  const handle = client.workflow.getHandle(info.workflowId, info.runId);
  const history = await handle.fetchHistory();
  const events = (JSON.parse(historyToJSON(history)) as { events?: HistoryEventJson[] }).events ?? [];
  const run: RunHistory = { workflowId: info.workflowId, runId: info.runId, workflowType: info.type, events };
  if (info.memo && Object.keys(info.memo).length) run.memo = info.memo;
  // an activity Temporal is retrying shows up only here, not in the history, until it ends
  if (info.status.name === 'RUNNING') {
    const pending = pendingActivities((await handle.describe()).raw);
    if (pending.length) run.pendingActivities = pending;
  }
  return run;
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The object's runs, oldest first; empty when no workflow ever handled it. */
export async function fetchObjectRuns(client: Client, o: ObjectRef, opts: FetchOptions = {}): Promise<RunHistory[]> {
  const query = objectQuery(o);
  const limit = opts.limit ?? DEFAULT_RUN_LIMIT;
  let infos = await listRuns(client, query, limit);
  if (!infos.length && (opts.emptyRetryMs ?? 1500) > 0) {
    await new Promise((r) => setTimeout(r, opts.emptyRetryMs ?? 1500));
    infos = await listRuns(client, query, limit);
  }
  infos.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return mapLimited(infos, opts.concurrency ?? 8, (info) => readRun(client, info));
}
