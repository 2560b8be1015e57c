/**
 * Sets of values kept by key (quotas by namespace, pods by namespace, Services by selector label),
 * an empty set dropped with its key, so routes look up only what could be affected.
 */
export class SetIndex<K, V> {
  private readonly sets = new Map<K, Set<V>>();

  add(key: K, value: V): void {
    const set = this.sets.get(key);
    if (set) set.add(value);
    else this.sets.set(key, new Set([value]));
  }

  delete(key: K, value: V): void {
    const set = this.sets.get(key);
    if (!set) return;
    set.delete(value);
    if (!set.size) this.sets.delete(key);
  }

  clear(): void {
    this.sets.clear();
  }

  get(key: K): ReadonlySet<V> {
    return this.sets.get(key) ?? EMPTY;
  }
}

const EMPTY: ReadonlySet<never> = new Set<never>();
