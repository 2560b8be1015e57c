import type { RouteContext } from '../../workers/descriptor';
import { laterView } from '../../workflows/common/storage-protection';
import { CONTROLLER, pvWriteDue, type PvView } from '../../workflows/pv-protection/logic';
import { pvProtectionWorkflow, pvProtectionWorkflowId, type PvProtectionEvent, type PvProtectionWorkflowInput } from '../../workflows/pv-protection/workflow';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { PV_PROTECTION_FIELDS, pvView } from './projections';

/**
 * Routes of the PV protection controller: upstream queues a volume on each add and update that
 * leaves it needing the finalizer or being a deletion candidate, and its sync keeps a Bound one
 * without a write. Here a volume goes to its workflow only when a write is due, so a Bound
 * volume being deleted starts nothing until the status change that unbinds it.
 */
export function pvProtectionRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;

  const send = (pv: PvView) => {
    const args: PvProtectionWorkflowInput = { name: pv.name, uid: pv.uid, tuning: input.tuning };
    const event: PvProtectionEvent = { pv };
    signaller.queue({ controller: CONTROLLER, workflow: pvProtectionWorkflow, kind: 'PersistentVolume', namespace: '', name: pv.name,
      uid: pv.uid, args, workflowId: pvProtectionWorkflowId(pv.name) }, event, laterView<PvProtectionEvent>);
  };

  cache.watch(RESOURCES.persistentVolumes, PV_PROTECTION_FIELDS, {
    onEvent(ev) {
      // upstream has no delete handler
      if (ev.type === 'deleted') return;
      const pv = pvView(ev.obj);
      if (pvWriteDue(pv)) send(pv);
    },
  });

  return {};
}
