import type { RouteContext } from '../../workers/descriptor';
import { CONTROLLER, overlappingServiceCidrs, serviceCidrNeed, serviceCidrsOfIp, type CidrEntry, type ServiceCidrView } from '../../workflows/servicecidr/logic';
import { mergeServiceCidrEvents, serviceCidrWorkflow, serviceCidrWorkflowId, type ServiceCidrEvent, type ServiceCidrWorkflowInput } from '../../workflows/servicecidr/workflow';
import type { RouteFamily } from '../informers/family';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { IP_ADDRESS_FIELDS, SERVICE_CIDR_FIELDS, ipAddressView, serviceCidrView } from './activities';

/**
 * Routes of the ServiceCIDR controller. Upstream queues a ServiceCIDR on each of its own events,
 * every overlapping ServiceCIDR when one is added (it may now cover one being deleted), and the
 * ServiceCIDRs containing an IPAddress its allocator made when that address comes or goes. Its
 * sync of a ServiceCIDR that already has the finalizer and Ready condition writes nothing, so here
 * such a one starts no workflow: only a ServiceCIDR that needs a write (the finalizer, the Ready
 * condition) or a deletion check is sent. Nothing is judged before both kinds are listed, as
 * upstream waits for both caches.
 */
export function serviceCidrRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const cidrs = cache.watch(RESOURCES.serviceCidrs, SERVICE_CIDR_FIELDS);
  const ips = cache.watch(RESOURCES.ipAddresses, IP_ADDRESS_FIELDS);
  const ready = () => cidrs.synced && ips.synced;

  const send = (cidr: ServiceCidrView) => {
    const args: ServiceCidrWorkflowInput = { name: cidr.name, uid: cidr.uid, tuning: input.tuning };
    const event: ServiceCidrEvent = { cidr };
    signaller.queue({ controller: CONTROLLER, workflow: serviceCidrWorkflow, kind: 'ServiceCIDR', namespace: '', name: cidr.name,
      uid: cidr.uid, args, workflowId: serviceCidrWorkflowId(cidr.name) }, event, mergeServiceCidrEvents);
  };
  const judge = (o: KubeObject) => {
    const v = serviceCidrView(o);
    if (serviceCidrNeed(v) !== 'none') send(v);
  };
  /** the named ServiceCIDRs that are being deleted and still held: their deletion check may answer otherwise now */
  const recheck = (names: readonly string[]) => {
    for (const name of names) {
      const o = cidrs.getByName('', name);
      if (o && serviceCidrNeed(serviceCidrView(o)) === 'finalize') judge(o);
    }
  };
  const entries = (): CidrEntry[] => [...cidrs.list()].map((o) => ({ name: o.metadata?.name ?? '', cidrs: serviceCidrView(o).cidrs }));
  // each ServiceCIDR on its own: one the route throws on leaves the others judged
  const eachCidr = cidrs.eachObject(judge);
  const judgeAll = () => {
    if (ready()) eachCidr();
  };

  cidrs.subscribe({
    onEvent(ev) {
      // a deleted ServiceCIDR needs nothing (upstream's sync finds it gone); a (re)list is judged whole once in
      if (ev.type === 'deleted' || ev.source !== 'watch' || !ready()) return;
      judge(ev.obj);
      if (ev.type === 'added') {
        const v = serviceCidrView(ev.obj);
        recheck(overlappingServiceCidrs(entries(), { name: v.name, cidrs: v.cidrs }).filter((n) => n !== v.name));
      }
    },
    onListed: judgeAll,
  });

  ips.subscribe({
    onEvent(ev) {
      // upstream reacts to an address being allocated or released, not to its updates
      if (ev.type === 'updated' || ev.source !== 'watch' || !ready()) return;
      const ip = ipAddressView(ev.type === 'deleted' ? ev.old : ev.obj);
      recheck(serviceCidrsOfIp(entries(), ip));
    },
    onListed: judgeAll,
  });

  return {};
}
