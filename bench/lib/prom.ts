import { probeSecurePort } from '../../starter/local/http-probe';

/** Sum of every sample of one Prometheus metric in a text exposition (those with `label` only, if given). */
export function sumMetric(text: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name && (!label || (m[2] ?? '').includes(label))) sum += Number(m[3]);
  }
  return sum;
}

/** Counters of our manager that split its cost: API calls (and the reads among them), signals through Temporal, reconciles. */
export const OUR_COUNTERS = {
  ourApiCalls: ['kcm_api_requests_total'],
  ourApiReads: ['kcm_api_requests_total', 'verb="GET"'],
  signalsSent: ['kcm_signals_sent_total'],
  /** watch events a signal gate held (they go out merged with a later signal, or after --max-signal-hold) */
  eventsHeld: ['kcm_signal_events_held_total'],
  /** objects whose held events went out when their hold ran out and the gate, asked again, said act */
  holdsExpired: ['kcm_signal_holds_expired_total'],
  reconciles: ['kcm_reconciles_total'],
} as const;

export type OurCounters = Record<keyof typeof OUR_COUNTERS, number>;

/** Our manager's counters from its metrics port; undefined when it does not answer (killed, still starting). */
export async function ourCounters(port: number): Promise<OurCounters | undefined> {
  const r = await probeSecurePort(port, '/metrics');
  if (r.status !== 200) return undefined;
  const out = {} as OurCounters;
  for (const [k, [name, label]] of Object.entries(OUR_COUNTERS) as Array<[keyof OurCounters, readonly [string, string?]]>) out[k] = sumMetric(r.body, name, label);
  return out;
}

/** Our manager's API calls so far by verb and resource, most first ("GET replicasets 200, PUT pods 12"), for the run's log. */
export async function apiCallsByVerb(port: number): Promise<string> {
  const r = await probeSecurePort(port, '/metrics');
  if (r.status !== 200) return '(metrics not answering)';
  const sums = new Map<string, number>();
  for (const line of r.body.split('\n')) {
    const m = /^kcm_api_requests_total\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!m) continue;
    const verb = /verb="([^"]*)"/.exec(m[1])?.[1] ?? '?';
    const resource = /resource="([^"]*)"/.exec(m[1])?.[1] ?? '?';
    sums.set(`${verb} ${resource}`, (sums.get(`${verb} ${resource}`) ?? 0) + Number(m[2]));
  }
  return [...sums].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ');
}

/** How many watches our manager has open (kcm_informer_watches): above zero only on the replica running the informer. */
export async function openWatches(port: number): Promise<number | undefined> {
  const r = await probeSecurePort(port, '/metrics');
  return r.status === 200 ? sumMetric(r.body, 'kcm_informer_watches') : undefined;
}
