import { probe } from '../../starter/local/http-probe';
import { type ObjectRef, objectQuery } from '../../starter/operate/objects';
import type { HistoryEventJson, RunHistory } from '../../starter/why/history';

/**
 * The Temporal Web UI's HTTP API, read as its pages read it in the browser: `/api/v1/...` of the UI
 * (the dev server's built-in one, or the postgres topology's UI server), which calls the frontend
 * for each request. Answers are Temporal's proto JSON with payloads in full (metadata and base64
 * data), the shape `why` reads (starter/why/history.ts), so a test can build the same timeline
 * from what the UI shows as from what `why` fetched.
 */

/** One row of the UI's workflow list (ListWorkflowExecutions), the fields the tests read. */
export interface UiWorkflowExecution {
  execution: { workflowId: string; runId: string };
  type: { name: string };
  startTime: string;
  status: string;
}

/** GET a path of the UI's API; anything but 200 is an error naming the answer. */
export async function uiGet<T>(ui: string, path: string): Promise<T> {
  const r = await probe(`${ui}${path}`, {}, 30_000);
  if (r.status !== 200) throw new Error(`GET ${ui}${path}: ${r.status || 'no answer'} ${r.body.slice(0, 500)}`);
  return JSON.parse(r.body) as T;
}

/** Page tokens are bytes, base64 in the JSON; the API takes them back as a query parameter. */
const pageParam = (token: string | undefined) => (token ? `&nextPageToken=${encodeURIComponent(token)}` : '');

/** The workflows (runs) a visibility query finds, newest first as the UI lists them; at most `limit`. */
export async function uiListWorkflows(ui: string, query: string, opts: { namespace?: string; limit?: number } = {}): Promise<UiWorkflowExecution[]> {
  const ns = encodeURIComponent(opts.namespace ?? 'default');
  const limit = opts.limit ?? 1000;
  const out: UiWorkflowExecution[] = [];
  let token: string | undefined;
  do {
    const page = await uiGet<{ executions?: UiWorkflowExecution[]; nextPageToken?: string }>(
      ui, `/api/v1/namespaces/${ns}/workflows?query=${encodeURIComponent(query)}&pageSize=100${pageParam(token)}`);
    out.push(...(page.executions ?? []));
    token = page.nextPageToken || undefined;
  } while (token && out.length < limit);
  return out.slice(0, limit);
}

/** Every event of one run, as the UI's history page reads them (GetWorkflowExecutionHistory, page by page). */
export async function uiWorkflowEvents(ui: string, workflowId: string, runId: string, namespace = 'default'): Promise<HistoryEventJson[]> {
  // a workflow ID holds slashes (`deployment/<ns>/<name>`): one path segment, escaped as the UI does
  const base = `/api/v1/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}/history?execution.runId=${encodeURIComponent(runId)}`;
  const events: HistoryEventJson[] = [];
  let token: string | undefined;
  do {
    const page = await uiGet<{ history?: { events?: HistoryEventJson[] }; nextPageToken?: string }>(ui, `${base}${pageParam(token)}`);
    events.push(...(page.history?.events ?? []));
    token = page.nextPageToken || undefined;
  } while (token);
  return events;
}

/**
 * An object's runs as the UI shows them, oldest first: found by the same search attributes `why`
 * queries (objectQuery), each with its history; `buildTimeline` of them is `why`'s view through the UI.
 */
export async function uiObjectRuns(ui: string, o: ObjectRef, namespace = 'default'): Promise<RunHistory[]> {
  const listed = await uiListWorkflows(ui, objectQuery(o), { namespace });
  listed.sort((a, b) => Date.parse(a.startTime) - Date.parse(b.startTime));
  const runs: RunHistory[] = [];
  for (const w of listed) {
    runs.push({
      workflowId: w.execution.workflowId, runId: w.execution.runId, workflowType: w.type.name,
      events: await uiWorkflowEvents(ui, w.execution.workflowId, w.execution.runId, namespace),
    });
  }
  return runs;
}
