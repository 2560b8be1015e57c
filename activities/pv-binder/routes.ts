import type { RouteContext } from '../../workers/descriptor';
import { boolFlag, durationFlag, flagValue, stringFlag } from '../../workers/flags';
import { claimMigrationChange, claimSettled } from '../../workflows/pv-binder/claim-sync';
import { CONTROLLER, type ClaimEvent, type ClaimView, type VolumeEvent, type VolumeView } from '../../workflows/pv-binder/types';
import { planVolumeSync } from '../../workflows/pv-binder/volume-sync';
import { recyclerPodName } from '../../workflows/pv-binder/recycler';
import {
  mergeClaimEvents,
  mergeVolumeEvents,
  pvClaimWorkflow,
  pvClaimWorkflowId,
  pvVolumeWorkflow,
  pvVolumeWorkflowId,
  type BinderSettings,
} from '../../workflows/pv-binder/workflow';
import type { RouteFamily } from '../informers/family';
import { RESOURCES } from '../kube/resources';
import { BINDER_POD_FIELDS, CLAIM_FIELDS, CLASS_FIELDS, VOLUME_FIELDS, claimView, volumeView } from './projections';

const RECYCLER_PREFIX = recyclerPodName('');

export const PV_CLAIM_BINDER_SYNC_PERIOD = durationFlag('pvclaimbinder-sync-period', '15s', 'The period for syncing persistent volumes and persistent volume claims');
export const ENABLE_DYNAMIC_PROVISIONING = boolFlag('enable-dynamic-provisioning', true, 'Enable dynamic provisioning for environments that support it.');
export const ENABLE_HOSTPATH_PROVISIONER = boolFlag('enable-hostpath-provisioner', false,
  'Enable HostPath PV provisioning when running without a cloud provider: directories under /tmp/hostpath_pv on the manager\'s host. Testing and development only.');
/** upstream's flex plugin directory: accepted so that a kube-controller-manager command line runs unchanged */
export const FLEX_VOLUME_PLUGIN_DIR = stringFlag('flex-volume-plugin-dir', '/usr/libexec/kubernetes/kubelet-plugins/volume/exec/',
  'Full path of the directory in which the flex volume plugin should search for additional third party volume plugins [accepted for compatibility; flex volume plugins are not loaded]');

/**
 * Routes of the persistent volume binder, as upstream's handlers queue claims and volumes: each
 * to its own workflow, unless it is settled (a claim Bound to a volume bound back to it; a volume
 * Available and unused, or Bound to its claim), so a relist of a quiet cluster starts nothing. A
 * deleted claim wakes its volume (to be Released), a deleted volume its claim (to be Lost), and a
 * volume pointing at a claim that has not taken it yet wakes that claim, as upstream's syncVolume
 * queues it.
 */
export function pvBinderRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  const settings: BinderSettings = {
    syncPeriodMs: flagValue(input.flags, PV_CLAIM_BINDER_SYNC_PERIOD),
    dynamicProvisioning: flagValue(input.flags, ENABLE_DYNAMIC_PROVISIONING),
    hostPathProvisioner: flagValue(input.flags, ENABLE_HOSTPATH_PROVISIONER),
  };

  const claims = cache.watch(RESOURCES.persistentVolumeClaims, CLAIM_FIELDS);
  const volumes = cache.watch(RESOURCES.persistentVolumes, VOLUME_FIELDS);
  // read by the activities from this cache when they run on this replica
  cache.watch(RESOURCES.storageClasses, CLASS_FIELDS);
  const pods = cache.watch(RESOURCES.pods, BINDER_POD_FIELDS);

  const sendClaim = (c: ClaimView, event: ClaimEvent) => {
    signaller.queue({
      controller: CONTROLLER, workflow: pvClaimWorkflow, kind: 'PersistentVolumeClaim', namespace: c.namespace, name: c.name, uid: c.uid,
      args: { namespace: c.namespace, name: c.name, uid: c.uid, settings, tuning: input.tuning }, workflowId: pvClaimWorkflowId(c.namespace, c.name),
    }, event, mergeClaimEvents);
  };
  const sendVolume = (v: VolumeView, event: VolumeEvent) => {
    signaller.queue({
      controller: CONTROLLER, workflow: pvVolumeWorkflow, kind: 'PersistentVolume', namespace: '', name: v.name, uid: v.uid,
      args: { name: v.name, uid: v.uid, settings, tuning: input.tuning }, workflowId: pvVolumeWorkflowId(v.name),
    }, event, mergeVolumeEvents);
  };

  const cachedClaim = (namespace: string, name: string) => {
    const o = claims.getByName(namespace, name);
    return o ? claimView(o) : undefined;
  };
  const cachedVolume = (name: string) => {
    const o = volumes.getByName('', name);
    return o ? volumeView(o) : undefined;
  };
  /** the claim a volume's claimRef names, if the cache has it under that UID */
  const claimOf = (v: VolumeView) => {
    if (!v.claimRef?.uid) return undefined;
    const c = cachedClaim(v.claimRef.namespace, v.claimRef.name);
    return c?.uid === v.claimRef.uid ? c : undefined;
  };

  const claimChanged = (c: ClaimView) => {
    const volume = c.volumeName ? cachedVolume(c.volumeName) : undefined;
    if (claimSettled({ claim: c, named: volume ?? null, nonScheduledPods: [] }) && !claimMigrationChange(c)) return;
    sendClaim(c, { claim: c });
  };
  const volumeChanged = (v: VolumeView) => {
    const claim = claimOf(v);
    const plan = planVolumeSync({ volume: v, ...(claim ? { claim } : {}) });
    if (!(plan.kind === 'none' && plan.settled)) sendVolume(v, { volume: v });
    // upstream's syncVolume queues a claim that a volume points at but that has not taken it
    if (claim && claim.volumeName === '') sendClaim(claim, { claim, nudge: true });
  };

  // upstream syncs nothing until both caches are filled: a volume judged before its claim is listed would look released
  const ready = () => claims.synced && volumes.synced;
  // each object on its own: one the route throws on leaves the others theirs
  const eachVolume = volumes.eachObject((o) => volumeChanged(volumeView(o)));
  const eachClaim = claims.eachObject((o) => claimChanged(claimView(o)));
  const everything = () => {
    if (!ready()) return;
    eachVolume();
    eachClaim();
  };

  claims.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      if (ev.type === 'deleted') {
        const gone = claimView(ev.old);
        const v = gone.volumeName ? cachedVolume(gone.volumeName) : undefined;
        if (v) sendVolume(v, { volume: v, nudge: true });
        return;
      }
      claimChanged(claimView(ev.obj));
    },
    onListed: everything,
  });

  volumes.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      if (ev.type === 'deleted') {
        const gone = volumeView(ev.old);
        const c = gone.claimRef ? cachedClaim(gone.claimRef.namespace, gone.claimRef.name) : undefined;
        if (c) sendClaim(c, { claim: c, nudge: true });
        return;
      }
      volumeChanged(volumeView(ev.obj));
    },
    onListed: everything,
  });

  // a recycler pod's progress wakes the volume it recycles (upstream watches the pod)
  pods.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      const name = (ev.type === 'deleted' ? ev.old : ev.obj).metadata?.name ?? '';
      if (!name.startsWith(RECYCLER_PREFIX)) return;
      const v = cachedVolume(name.slice(RECYCLER_PREFIX.length));
      if (v) sendVolume(v, { volume: v, nudge: true });
    },
  });

  return {};
}
