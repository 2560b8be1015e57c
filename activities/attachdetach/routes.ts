import type { RouteContext } from '../../workers/descriptor';
import type { PersistentVolumeClaimJson } from '../../workflows/pv-binder/types';
import { boolFlag, durationFlag, flagValue } from '../../workers/flags';
import { claimIsForPod, podClaimRefs, type PodVolumeSource } from '../../workflows/common/ephemeral-claims';
import { mergeAttachDetachEvents, parseCsiUniqueName } from '../../workflows/attachdetach/logic';
import { CONTROLLER, type AttachDetachEvent, type AttachDetachSettings, type AttachableVolume, type DesiredNode } from '../../workflows/attachdetach/types';
import { attachDetachWorkflow, attachDetachWorkflowId } from '../../workflows/attachdetach/workflow';
import type { RouteFamily } from '../informers/family';
import { PODS_BY_NODE } from '../informers/indexes';
import type { KubeObject } from '../kube/projections';
import { RESOURCES } from '../kube/resources';
import { CLAIM_POD_FIELDS, PODS_BY_CLAIM, pvcPodView, pvcView } from '../pvc-protection/projections';
import {
  ATTACHMENTS_BY_VOLUME,
  ATTACHMENT_FIELDS,
  ATTACH_CLAIM_FIELDS,
  ATTACH_NODE_FIELDS,
  ATTACH_VOLUME_FIELDS,
  CSI_DRIVER_FIELDS,
  NODES_BY_ATTACHED_VOLUME,
  VOLUMES_BY_UNIQUE_NAME,
  attachableVolume,
  attachedNames,
  attachmentName,
  attachmentOf,
  attachmentView,
  claimBoundTo,
  inUseNames,
  managedNode,
  nodeReady,
  nodeView,
  skipsAttach,
} from './projections';

export const ATTACH_DETACH_RECONCILE_SYNC_PERIOD = durationFlag('attach-detach-reconcile-sync-period', '1m0s',
  'The reconciler sync wait time between volume attach detach. This duration must be larger than one second, and increasing this value from the default may allow for volumes to be mismatched with pods.', true);
export const DISABLE_ATTACH_DETACH_RECONCILE_SYNC = boolFlag('disable-attach-detach-reconcile-sync', false,
  'Disable volume attach detach reconciler sync. Disabling this may cause volumes to be mismatched with pods. Use wisely.');
export const DISABLE_FORCE_DETACH_ON_TIMEOUT = boolFlag('disable-force-detach-on-timeout', false,
  'Prevent force detaching volumes based on maximum unmount time and node status. If this flag is set to true, the non-graceful node shutdown feature must be used to recover from node failure.');

/** upstream's ReconcilerMaxWaitForUnmountDuration, which no flag sets */
const MAX_WAIT_FOR_UNMOUNT_MS = 6 * 60_000;

/** What a node change means to the volumes it reports: health, mounts, the attach annotation, the reports. */
const nodeFacts = (o: KubeObject) => JSON.stringify([
  managedNode(o), nodeReady(o), nodeView(o, '').outOfService, [...inUseNames(o)].sort(), [...attachedNames(o)].sort(),
]);

/**
 * Routes of the attach/detach controller. Upstream keeps a desired state of the world (which
 * volumes the scheduled pods of managed nodes need where) fed by its pod, node and claim handlers;
 * here the watch works it out per volume from the shared caches and sends it to the volume's
 * workflow whenever it, or what the volume's attachments and nodes show, changes, unless the
 * volume is already exactly where it is wanted (so a relist of a quiet cluster starts nothing).
 * The reconciler's periodic sync runs here too: a reported attachment whose VolumeAttachment is
 * gone or not attached is sent to its workflow to be verified.
 */
export function attachDetachRoutes({ input, signaller, cache }: RouteContext): RouteFamily | undefined {
  if (!input.controllers.includes(CONTROLLER)) return undefined;
  const settings: AttachDetachSettings = {
    maxWaitForUnmountMs: MAX_WAIT_FOR_UNMOUNT_MS,
    disableForceDetachOnTimeout: flagValue(input.flags, DISABLE_FORCE_DETACH_ON_TIMEOUT),
  };
  const syncPeriodMs = flagValue(input.flags, ATTACH_DETACH_RECONCILE_SYNC_PERIOD);
  const syncing = !flagValue(input.flags, DISABLE_ATTACH_DETACH_RECONCILE_SYNC) && syncPeriodMs >= 1000;

  const pods = cache.watch(RESOURCES.pods, CLAIM_POD_FIELDS);
  const claims = cache.watch(RESOURCES.persistentVolumeClaims, ATTACH_CLAIM_FIELDS);
  const volumes = cache.watch(RESOURCES.persistentVolumes, ATTACH_VOLUME_FIELDS);
  const nodes = cache.watch(RESOURCES.nodes, ATTACH_NODE_FIELDS);
  const attachments = cache.watch(RESOURCES.volumeAttachments, ATTACHMENT_FIELDS);
  const drivers = cache.watch(RESOURCES.csiDrivers, CSI_DRIVER_FIELDS);
  pods.addIndex(PODS_BY_CLAIM);
  pods.addIndex(PODS_BY_NODE);
  volumes.addIndex(VOLUMES_BY_UNIQUE_NAME);
  nodes.addIndex(NODES_BY_ATTACHED_VOLUME);
  attachments.addIndex(ATTACHMENTS_BY_VOLUME);
  const stores = [pods, claims, volumes, nodes, attachments, drivers];
  const ready = () => stores.every((s) => s.synced);

  /** the volume a bound PersistentVolume attaches as, unless its CSIDriver needs no attach */
  const attachable = (pv: KubeObject | undefined): AttachableVolume | undefined => {
    const v = pv ? attachableVolume(pv) : undefined;
    return v && !skipsAttach(drivers.getByName('', v.driver)) ? v : undefined;
  };

  /** The unique names of the volumes a pod's claims are bound to (attachable or not: a change matters either way). */
  const podVolumes = (o: KubeObject): string[] => {
    const p = o as KubeObject & { spec?: { volumes?: PodVolumeSource[] } };
    const ns = p.metadata?.namespace ?? '';
    const out: string[] = [];
    for (const ref of podClaimRefs(p.metadata?.name ?? '', p.spec?.volumes)) {
      const c = claims.getByName(ns, ref.claim) as PersistentVolumeClaimJson | undefined;
      const pv = c?.spec?.volumeName ? volumes.getByName('', c.spec.volumeName) : undefined;
      const v = pv ? attachableVolume(pv) : undefined;
      if (v) out.push(v.uniqueName);
    }
    return out;
  };

  /** upstream's desired state of the world for one volume: scheduled, running pods of managed nodes, by node */
  const desiredOf = (uniqueName: string): { volume?: AttachableVolume; desired: DesiredNode[] } => {
    const byNode = new Map<string, DesiredNode>();
    let volume: AttachableVolume | undefined;
    for (const pv of volumes.byIndex(VOLUMES_BY_UNIQUE_NAME, uniqueName)) {
      const v = attachable(pv);
      if (!v) continue;
      volume ??= v;
      const ref = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
      if (!ref?.name) continue;
      const claim = claims.getByName(ref.namespace ?? '', ref.name);
      if (!claimBoundTo(claim, pv)) continue;
      const owner = pvcView(claim!);
      for (const o of pods.byIndex(PODS_BY_CLAIM, `${owner.namespace}/${owner.name}`)) {
        const pod = pvcPodView(o);
        if (!pod.nodeName || pod.terminated || !managedNode(nodes.getByName('', pod.nodeName))) continue;
        // an ephemeral volume's claim counts only if this pod made it
        const refs = pod.claims.filter((r) => r.claim === owner.name);
        if (!refs.some((r) => !r.ephemeral || claimIsForPod(pod.namespace, pod.uid, owner))) continue;
        const d = byNode.get(pod.nodeName) ?? { node: pod.nodeName, pods: [] };
        d.pods.push({ namespace: pod.namespace, name: pod.name, uid: pod.uid });
        byNode.set(pod.nodeName, d);
      }
    }
    const desired = [...byNode.values()].sort((a, b) => (a.node < b.node ? -1 : 1));
    for (const d of desired) d.pods.sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
    return { ...(volume ? { volume } : {}), desired };
  };

  /** Attached and reported exactly where wanted, with no attachment anywhere else: nothing for a workflow to do. */
  const settled = (uniqueName: string, volume: AttachableVolume | undefined, desired: DesiredNode[]): boolean => {
    const want = new Set(desired.map((d) => d.node));
    const reporting = nodes.byIndex(NODES_BY_ATTACHED_VOLUME, uniqueName).map((n) => n.metadata?.name ?? '');
    if (reporting.some((n) => !want.has(n)) || reporting.length !== want.size) return false;
    const parsed = parseCsiUniqueName(uniqueName);
    if (!parsed) return want.size === 0;
    for (const n of want) {
      const va = attachments.getByName('', attachmentName(parsed.handle, parsed.driver, n));
      if (!va) return false;
      const view = attachmentView(va);
      if (!view.attached || view.deleting) return false;
    }
    if (!volume) return true;
    return attachments.byIndex(ATTACHMENTS_BY_VOLUME, volume.pvName).every((va) => {
      const node = attachmentOf(va, uniqueName);
      return node === undefined || want.has(node);
    });
  };

  /** `always`: the attacher's answer, which a workflow may be waiting on even when the caches look settled */
  const send = (uniqueName: string, verify = false, always = false) => {
    if (!parseCsiUniqueName(uniqueName)) return;
    const { volume, desired } = desiredOf(uniqueName);
    if (!verify && !always && settled(uniqueName, volume, desired)) return;
    const event: AttachDetachEvent = { ...(volume ? { volume } : {}), desired, ...(verify ? { verify } : {}) };
    signaller.queue({
      controller: CONTROLLER, workflow: attachDetachWorkflow, kind: 'PersistentVolume', namespace: '', name: volume?.pvName ?? uniqueName, uid: '',
      args: { uniqueName, settings, tuning: input.tuning }, workflowId: attachDetachWorkflowId(uniqueName),
    }, event, mergeAttachDetachEvents);
  };
  const sendAll = (names: Iterable<string>) => {
    for (const n of new Set(names)) send(n);
  };

  // each volume and node on its own, so one the route throws on leaves the others theirs; a
  // volume met twice (its PV, a node reporting it) is queued twice and sent once, merged
  const eachVolume = volumes.eachObject((pv) => {
    const v = attachableVolume(pv);
    if (v) send(v.uniqueName);
  });
  const eachNode = nodes.eachObject((n) => sendAll(attachedNames(n)));
  const everything = () => {
    if (!ready()) return;
    eachVolume();
    eachNode();
  };
  const onListed = () => everything();

  /** what a pod's change means here: where it runs, whether it still counts, which claims it names */
  const podFacts = (o: KubeObject) => {
    const p = pvcPodView(o);
    return JSON.stringify([p.nodeName, p.terminated, p.claims]);
  };
  pods.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      if (ev.type === 'updated' && podFacts(ev.old) === podFacts(ev.obj)) return;
      sendAll([...(ev.type !== 'added' ? podVolumes(ev.old) : []), ...(ev.type !== 'deleted' ? podVolumes(ev.obj) : [])]);
    },
    onListed,
  });

  const claimVolume = (o: KubeObject): string[] => {
    const name = (o as PersistentVolumeClaimJson).spec?.volumeName;
    const v = name ? volumes.getByName('', name) : undefined;
    const a = v ? attachableVolume(v) : undefined;
    return a ? [a.uniqueName] : [];
  };
  claims.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      const phase = (o: KubeObject) => `${(o as PersistentVolumeClaimJson).status?.phase}/${(o as PersistentVolumeClaimJson).spec?.volumeName}`;
      if (ev.type === 'updated' && phase(ev.old) === phase(ev.obj)) return;
      sendAll([...(ev.type !== 'added' ? claimVolume(ev.old) : []), ...(ev.type !== 'deleted' ? claimVolume(ev.obj) : [])]);
    },
    onListed,
  });

  volumes.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      const names = [ev.type !== 'added' ? ev.old : undefined, ev.type !== 'deleted' ? ev.obj : undefined]
        .flatMap((o) => (o ? [attachableVolume(o)?.uniqueName] : [])).filter((n): n is string => !!n);
      sendAll(names);
    },
    onListed,
  });

  nodes.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      if (ev.type === 'updated' && nodeFacts(ev.old) === nodeFacts(ev.obj)) return;
      const touched = [ev.type !== 'added' ? ev.old : undefined, ev.type !== 'deleted' ? ev.obj : undefined].filter((o): o is KubeObject => !!o);
      const names = touched.flatMap((o) => [...attachedNames(o), ...inUseNames(o)]);
      // the attach annotation decides whether the node's pods count at all
      const name = touched[0]?.metadata?.name ?? '';
      if (ev.type !== 'updated' || managedNode(ev.old) !== managedNode(ev.obj)) {
        for (const p of pods.byIndex(PODS_BY_NODE, name)) names.push(...podVolumes(p));
      }
      sendAll(names);
    },
    onListed,
  });

  const attachmentVolume = (o: KubeObject): string[] => {
    const pvName = (o.spec as { source?: { persistentVolumeName?: string } } | undefined)?.source?.persistentVolumeName;
    const pv = pvName ? volumes.getByName('', pvName) : undefined;
    const v = pv ? attachableVolume(pv) : undefined;
    return v && attachmentOf(o, v.uniqueName) !== undefined ? [v.uniqueName] : [];
  };
  attachments.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      if (ev.type === 'updated' && JSON.stringify(attachmentView(ev.old)) === JSON.stringify(attachmentView(ev.obj))) return;
      // a detach's end looks settled (nothing wanted, nothing left), yet its workflow waits for it
      for (const name of attachmentVolume(ev.type === 'deleted' ? ev.old : ev.obj)) send(name, false, true);
    },
    onListed,
  });

  drivers.subscribe({
    onEvent(ev) {
      if (ev.source !== 'watch' || !ready()) return;
      const driver = (ev.type === 'deleted' ? ev.old : ev.obj).metadata?.name ?? '';
      const names: string[] = [];
      for (const pv of volumes.list()) {
        const v = attachableVolume(pv);
        if (v?.driver === driver) names.push(v.uniqueName);
      }
      sendAll(names);
    },
    onListed,
  });

  return {
    ...(syncing ? {
      periodic: {
        everyMs: syncPeriodMs,
        run() {
          if (!ready()) return;
          // upstream's VerifyVolumesAreAttached: what nodes report attached must have an attached VolumeAttachment
          for (const n of nodes.list()) {
            const node = n.metadata?.name ?? '';
            for (const name of attachedNames(n)) {
              const parsed = parseCsiUniqueName(name);
              if (!parsed) continue;
              const va = attachments.getByName('', attachmentName(parsed.handle, parsed.driver, node));
              if (!va || !attachmentView(va).attached) send(name, true);
            }
          }
        },
      },
    } : {}),
  };
}
