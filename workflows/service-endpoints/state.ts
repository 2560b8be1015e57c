import type { EndpointPod, ServicePodsEvent, ServiceView } from './types';

/** Merge two events for one Service (`later` wins where they overlap): one signal per burst. */
export function mergeServicePodsEvents(earlier: ServicePodsEvent, later: ServicePodsEvent): ServicePodsEvent {
  if (later.relist) return { ...later, service: later.service ?? earlier.service, serviceDeletedUid: later.serviceDeletedUid ?? earlier.serviceDeletedUid };
  const pods = new Map<string, EndpointPod>();
  const gone = new Set<string>(earlier.podsGone ?? []);
  for (const p of earlier.pods ?? []) pods.set(p.uid, p);
  for (const p of later.pods ?? []) {
    pods.set(p.uid, p);
    gone.delete(p.uid);
  }
  for (const u of later.podsGone ?? []) {
    pods.delete(u);
    gone.add(u);
  }
  const out: ServicePodsEvent = {};
  const service = later.service ?? earlier.service;
  if (service) out.service = service;
  const deleted = later.serviceDeletedUid ?? earlier.serviceDeletedUid;
  if (deleted) out.serviceDeletedUid = deleted;
  if (pods.size || earlier.relist) out.pods = [...pods.values()];
  if (gone.size) out.podsGone = [...gone];
  if (earlier.relist) out.relist = true;
  return out;
}

/**
 * A Service and its selected pods as its workflow knows them, folded from events. Pure: the
 * endpoints and endpointslice workflows both keep one.
 */
export class ServicePods {
  service?: ServiceView;
  readonly pods = new Map<string, EndpointPod>();
  /** the Service was deleted (by UID): the workflow cleans up and ends */
  deleted = false;

  apply(e: ServicePodsEvent): void {
    if (e.service) {
      if (this.service && this.service.uid !== e.service.uid) this.pods.clear();
      this.service = e.service;
      this.deleted = false;
    }
    if (e.serviceDeletedUid && (!this.service || this.service.uid === e.serviceDeletedUid)) this.deleted = true;
    if (e.relist) this.pods.clear();
    for (const p of e.pods ?? []) {
      const known = this.pods.get(p.uid);
      // a late event must not undo a newer one
      if (known && !e.relist && Number(known.resourceVersion) > Number(p.resourceVersion)) continue;
      this.pods.set(p.uid, p);
    }
    for (const u of e.podsGone ?? []) this.pods.delete(u);
  }

  /** pods sorted by name, so decisions never depend on arrival order */
  sortedPods(): EndpointPod[] {
    return [...this.pods.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
