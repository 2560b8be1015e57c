import { KubeRest } from '../../activities/kube/rest';

/**
 * Totals of the API server's `apiserver_request_total`. That counter has no user-agent label, so
 * a window's count includes the stack's other clients (kube-scheduler, kwok's node leases and pod
 * status updates); scenario 6 measures that baseline with no manager running.
 */
export interface RequestCounts {
  total: number;
  /** mutating verbs only (POST, PUT, PATCH, DELETE, APPLY) */
  writes: number;
  /** mutating calls on the objects the scenarios watch: pods, replicasets, deployments (and their status) */
  workloadWrites: number;
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION', 'APPLY', 'CREATE', 'UPDATE']);
const WORKLOAD = new Set(['pods', 'replicasets', 'deployments']);

export function parseRequestCounts(text: string): RequestCounts {
  const out: RequestCounts = { total: 0, writes: 0, workloadWrites: 0 };
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const m = /^apiserver_request_total\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const kv of m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[kv[1]] = kv[2];
    const n = Number(m[2]);
    out.total += n;
    if (WRITE_VERBS.has(labels.verb ?? '')) {
      out.writes += n;
      if (WORKLOAD.has(labels.resource ?? '')) out.workloadWrites += n;
    }
  }
  return out;
}

export async function requestCounts(rest: KubeRest): Promise<RequestCounts> {
  const r = await rest.request<string>('GET', '/metrics', { accept: 'text/plain' });
  return parseRequestCounts(typeof r.body === 'string' ? r.body : String(r.body));
}
