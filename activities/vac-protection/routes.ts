import type { RouteContext } from '../../workers/descriptor';
import { laterView } from '../../workflows/common/storage-protection';
import { CONTROLLER, classesLetGo, vacWriteDue } from '../../workflows/vac-protection/logic';
import { vacProtectionWorkflow, vacProtectionWorkflowId, type VacProtectionEvent, type VacProtectionWorkflowInput } from '../../workflows/vac-protection/workflow';
import type { RouteFamily } from '../informers/family';
import type { StoreListener } from '../informers/store';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { PVCS_BY_CLASS, PVC_CLASS_FIELDS, PVS_BY_CLASS, PV_CLASS_FIELDS, VAC_FIELDS, classesOfPv, classesOfPvc, vacView } from './projections';

/**
 * Routes of the VolumeAttributesClass protection controller, as upstream's handlers queue: a class
 * on its add and update events when it needs the finalizer or is a deletion candidate; the classes
 * a claim or volume stopped naming when it changes or is deleted. The sync's question (does a
 * claim or volume in the informers name it?) is answered here, from the same stores' indexes, and
 * a class goes to its workflow only when a write is due. Nothing is judged before classes, claims
 * and volumes are all listed, as upstream waits for the three caches.
 */
export function vacProtectionRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const vacs = cache.watch(RESOURCES.volumeAttributesClasses, VAC_FIELDS);
  const pvcs = cache.watch(RESOURCES.persistentVolumeClaims, PVC_CLASS_FIELDS);
  pvcs.addIndex(PVCS_BY_CLASS);
  const pvs = cache.watch(RESOURCES.persistentVolumes, PV_CLASS_FIELDS);
  pvs.addIndex(PVS_BY_CLASS);
  const ready = () => vacs.synced && pvcs.synced && pvs.synced;

  const inUse = (name: string) => pvs.byIndex(PVS_BY_CLASS, name).length > 0 || pvcs.byIndex(PVCS_BY_CLASS, name).length > 0;

  const judge = (o: KubeObject) => {
    const vac = vacView(o);
    const used = inUse(vac.name);
    if (!vacWriteDue(vac, used)) return;
    const args: VacProtectionWorkflowInput = { name: vac.name, uid: vac.uid, tuning: input.tuning };
    const event: VacProtectionEvent = { vac, inUse: used };
    signaller.queue({ controller: CONTROLLER, workflow: vacProtectionWorkflow, kind: 'VolumeAttributesClass', namespace: '', name: vac.name,
      uid: vac.uid, args, workflowId: vacProtectionWorkflowId(vac.name) }, event, laterView<VacProtectionEvent>);
  };
  const judgeNamed = (names: readonly string[]) => {
    for (const n of names) {
      const o = vacs.getByName('', n);
      if (o) judge(o);
    }
  };
  // each class on its own: one the route throws on leaves the others judged
  const eachClass = vacs.eachObject(judge);
  const judgeAll = () => {
    if (ready()) eachClass();
  };

  vacs.subscribe({
    onEvent(ev) {
      // a (re)list is judged whole once it is in
      if (ev.type === 'deleted' || ev.source !== 'watch' || !ready()) return;
      judge(ev.obj);
    },
    onListed: judgeAll,
  });

  /** a claim or volume that stops naming classes (updated or deleted) may free them; adds free nothing */
  const users = (classesOf: (o: KubeObject) => string[]): StoreListener => ({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready() || ev.type === 'added') return;
      judgeNamed(ev.type === 'deleted' ? classesOf(ev.old) : classesLetGo(classesOf(ev.old), classesOf(ev.obj)));
    },
    onListed: judgeAll,
  });
  pvcs.subscribe(users(classesOfPvc));
  pvs.subscribe(users(classesOfPv));

  return {};
}
