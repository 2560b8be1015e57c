/**
 * The status decision of the resourcequota controller (upstream's syncResourceQuota): status.hard
 * mirrors spec.hard, status.used holds a usage for every hard resource some evaluator can count,
 * and a write happens only when either differs semantically from what is stored ("1" and "1000m"
 * are the same amount). Pure: runs in workflow code.
 */
import { resourceListsEqual, quantitiesEqual } from '../common/quantity';
import type { QuotaView, ResourceMap } from './types';

export interface QuotaStatusPlan {
  write: boolean;
  hard: ResourceMap;
  used: ResourceMap;
  /** in words, what the write changes (empty when there is no write) */
  reason: string;
}

const MAX_LISTED_CHANGES = 8;

function changes(prefix: string, before: ResourceMap | undefined, after: ResourceMap): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(after)) {
    const old = before?.[k];
    if (old === undefined) out.push(`${prefix}.${k} set to ${v}`);
    else if (!quantitiesEqual(old, v)) out.push(`${prefix}.${k} ${old} -> ${v}`);
  }
  for (const k of Object.keys(before ?? {})) if (!(k in after)) out.push(`${prefix}.${k} dropped`);
  return out;
}

/**
 * The status to store, from the quota as read and the usage just recounted. Resources that were
 * not recounted (not asked for this time, or their evaluator failed) keep the value the status has;
 * resources no longer in spec.hard leave status.used.
 */
export function planQuotaStatus(quota: QuotaView, recounted: ResourceMap): QuotaStatusPlan {
  const hard: ResourceMap = { ...quota.hard };
  const used: ResourceMap = {};
  for (const k of Object.keys(hard)) {
    const v = Object.prototype.hasOwnProperty.call(recounted, k) ? recounted[k] : quota.statusUsed?.[k];
    if (v !== undefined) used[k] = v;
  }
  const write = !resourceListsEqual(hard, quota.statusHard) || !resourceListsEqual(used, quota.statusUsed);
  if (!write) return { write, hard, used, reason: '' };
  const all = [...changes('hard', quota.statusHard, hard), ...changes('used', quota.statusUsed, used)];
  const listed = all.slice(0, MAX_LISTED_CHANGES).join('; ');
  const reason = all.length > MAX_LISTED_CHANGES ? `${listed}; and ${all.length - MAX_LISTED_CHANGES} more` : listed;
  return { write, hard, used, reason };
}
