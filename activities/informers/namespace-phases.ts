import type { KubeObject } from '../kube/projections';
import type { Handler } from './reflector';

export const NAMESPACES_PATH = '/api/v1/namespaces';

/**
 * Which namespaces are active, for controllers that keep something in every namespace. `changed`
 * is called for each namespace added or updated (and each one listed), with whether it is active.
 */
export class NamespacePhases {
  private readonly active = new Map<string, boolean>();

  constructor(private readonly changed: (namespace: string, active: boolean) => void) {}

  isActive(ns: string): boolean {
    return this.active.get(ns) === true;
  }

  *activeNamespaces(): Iterable<string> {
    for (const [ns, active] of this.active) if (active) yield ns;
  }

  get size(): number {
    return this.active.size;
  }

  readonly handler: Handler = {
    relisted: (objects) => {
      const seen = new Set<string>();
      for (const o of objects) seen.add(this.upsert(o));
      for (const ns of [...this.active.keys()]) if (!seen.has(ns)) this.active.delete(ns);
    },
    event: (type, o) => {
      if (type === 'DELETED') this.active.delete(o.metadata?.name ?? '');
      else this.upsert(o);
    },
  };

  private upsert(o: KubeObject & { status?: { phase?: string } }): string {
    const ns = o.metadata?.name ?? '';
    // a namespace being deleted is Terminating; one that was just created may not show a phase yet
    const active = !o.metadata?.deletionTimestamp && (o.status?.phase ?? 'Active') === 'Active';
    this.active.set(ns, active);
    this.changed(ns, active);
    return ns;
  }
}
