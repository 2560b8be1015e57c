/**
 * From API objects to the HPA layer's plain data: a Pod to an HpaPod, a metrics.k8s.io PodMetrics
 * to a PodMetricsItem. Pure; an activity (or the informer route) runs them so that workflow
 * payloads carry only what the calculation reads.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { parseGoDuration } from '../common/duration';
import { milliValueOf } from './metric-status';
import type { PodMetricsItem } from './replica-calculator';
import type { HpaContainer, HpaPod } from './types';

type Time = Date | string | undefined | null;

function ms(t: Time): number | undefined {
  if (t === undefined || t === null) return undefined;
  const v = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
}

function milliList(list: Record<string, string> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(list ?? {})) out[k] = milliValueOf(v);
  return out;
}

function container(c: V1Container): HpaContainer {
  return { name: c.name, requestsMilli: milliList(c.resources?.requests) };
}

export function hpaPodFromPod(pod: V1Pod): HpaPod {
  const out: HpaPod = {
    name: pod.metadata?.name ?? '',
    containers: (pod.spec?.containers ?? []).map(container),
  };
  if (pod.status?.phase) out.phase = pod.status.phase;
  if (pod.metadata?.deletionTimestamp) out.deleting = true;
  const start = ms(pod.status?.startTime);
  if (start !== undefined) out.startTimeMs = start;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready) {
    const t = ms(ready.lastTransitionTime);
    out.ready = t === undefined ? { status: ready.status } : { status: ready.status, lastTransitionTimeMs: t };
  }
  const init = pod.spec?.initContainers ?? [];
  if (init.length) out.initContainers = init.map((c) => ({ ...container(c), restartable: c.restartPolicy === 'Always' }));
  if (pod.spec?.resources?.requests) out.podRequestsMilli = milliList(pod.spec.resources.requests);
  if (pod.spec?.overhead) out.overheadMilli = milliList(pod.spec.overhead);
  return out;
}

/** A metrics.k8s.io/v1beta1 PodMetrics as the API serves it (JSON). */
export interface PodMetricsJson {
  metadata: { name: string; namespace?: string };
  timestamp: string;
  window: string;
  containers?: { name: string; usage?: Record<string, string> }[];
}

export function podMetricsItem(m: PodMetricsJson): PodMetricsItem {
  return {
    name: m.metadata.name,
    timestampMs: ms(m.timestamp) ?? 0,
    windowMs: parseGoDuration(m.window),
    containers: (m.containers ?? []).map((c) => ({ name: c.name, usageMilli: milliList(c.usage) })),
  };
}
