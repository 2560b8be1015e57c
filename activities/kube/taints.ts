import type { KubeObject } from './projections';
import { isStatus } from './failures';
import type { KubeRest } from './rest';
import { RESOURCES, resourcePath } from './resources';

/** A node taint as the API has it. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

type NodeObject = KubeObject & { spec?: { taints?: Taint[] | null } };

const sameTaint = (a: Pick<Taint, 'key' | 'effect'>, b: Pick<Taint, 'key' | 'effect'>) => a.key === b.key && a.effect === b.effect;

/** upstream retries a taint update this often on a conflict */
const CONFLICT_RETRIES = 5;

export interface TaintChange {
  /** taints to add, or to update in place (same key and effect); they get timeAdded now, as upstream's do */
  add?: Array<Pick<Taint, 'key' | 'value' | 'effect'>>;
  /** taints to remove, by key and effect */
  remove?: Array<Pick<Taint, 'key' | 'effect'>>;
}

/**
 * Adds and removes a node's taints as upstream's AddOrUpdateTaintOnNode and RemoveTaintOffNode
 * do: read the node, change its taint list, and write it back guarded by its resourceVersion,
 * trying again on a conflict. Returns false when the node is gone.
 */
export async function changeNodeTaints(rest: KubeRest, node: string, change: TaintChange, now = () => new Date().toISOString()): Promise<boolean> {
  const path = resourcePath(RESOURCES.nodes, undefined, node);
  for (let attempt = 0; ; attempt++) {
    let n: NodeObject;
    try {
      n = (await rest.request<NodeObject>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return false;
      throw e;
    }
    const old = n.spec?.taints ?? [];
    let taints = old.filter((t) => !(change.remove ?? []).some((r) => sameTaint(r, t)));
    for (const a of change.add ?? []) {
      const have = taints.find((t) => sameTaint(t, a));
      if (have && (have.value ?? '') === (a.value ?? '')) continue;
      taints = [...taints.filter((t) => !sameTaint(t, a)), { key: a.key, ...(a.value ? { value: a.value } : {}), effect: a.effect, timeAdded: now() }];
    }
    if (taints.length === old.length && taints.every((t, i) => t === old[i])) return true;
    try {
      await rest.request('PATCH', path, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: n.metadata?.resourceVersion }, spec: { taints: taints.length ? taints : null } },
      });
      return true;
    } catch (e) {
      if (isStatus(e, 404)) return false;
      if (!isStatus(e, 409) || attempt + 1 >= CONFLICT_RETRIES) throw e;
    }
  }
}
