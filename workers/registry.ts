import { attachDetachController } from '../activities/attachdetach/controller';
import { bootstrapSignerController } from '../activities/bootstrapsigner/controller';
import { clusterRoleAggregationController } from '../activities/clusterrole-aggregation/controller';
import { csrApprovingController } from '../activities/csrapproving/controller';
import { csrCleanerController } from '../activities/csrcleaner/controller';
import { csrSigningController } from '../activities/csrsigning/controller';
import { cronJobController } from '../activities/cronjob/controller';
import { daemonSetController } from '../activities/daemonset/controller';
import { deploymentController } from '../activities/deployment/controller';
import { disruptionController } from '../activities/disruption/controller';
import { endpointsController } from '../activities/endpoints/controller';
import { ephemeralVolumeController } from '../activities/ephemeral-volume/controller';
import { endpointSliceController } from '../activities/endpointslice/controller';
import { endpointSliceMirroringController } from '../activities/endpointslicemirroring/controller';
import { garbageCollectorController } from '../activities/gc/controller';
import { jobController } from '../activities/job/controller';
import { legacyTokenCleanerController } from '../activities/legacy-token-cleaner/controller';
import { namespaceController } from '../activities/namespace/controller';
import { nodeLifecycleController } from '../activities/node-lifecycle/controller';
import { podGcController } from '../activities/podgc/controller';
import { pvBinderController } from '../activities/pv-binder/controller';
import { pvExpanderController } from '../activities/pv-expander/controller';
import { pvProtectionController } from '../activities/pv-protection/controller';
import { pvcProtectionController } from '../activities/pvc-protection/controller';
import { replicaSetController, replicationControllerController } from '../activities/replicaset/controller';
import { resourceClaimController } from '../activities/resourceclaim/controller';
import { hpaController } from '../activities/hpa/controller';
import { resourceQuotaController } from '../activities/resourcequota/controller';
import { rootCaCertPublisherController } from '../activities/root-ca-cert-publisher/controller';
import { statefulSetController } from '../activities/statefulset/controller';
import { serviceCidrController } from '../activities/servicecidr/controller';
import { serviceAccountTokenController } from '../activities/serviceaccount-token/controller';
import { serviceAccountController } from '../activities/serviceaccount/controller';
import { taintEvictionController } from '../activities/taint-eviction/controller';
import { tokenCleanerController } from '../activities/tokencleaner/controller';
import { ttlAfterFinishedController } from '../activities/ttl-after-finished/controller';
import { ttlController } from '../activities/ttl/controller';
import { vacProtectionController } from '../activities/vac-protection/controller';
import { vapStatusController } from '../activities/validatingadmissionpolicystatus/controller';
import type { ControllerDescriptor } from './descriptor';
import type { FlagSpec } from './flags';

/** Every controller this build implements. Adding a controller is one entry here. */
export const CONTROLLERS: readonly ControllerDescriptor[] = [
  replicaSetController,
  replicationControllerController,
  deploymentController,
  garbageCollectorController,
  namespaceController,
  serviceAccountController,
  serviceAccountTokenController,
  rootCaCertPublisherController,
  clusterRoleAggregationController,
  resourceQuotaController,
  endpointsController,
  endpointSliceController,
  endpointSliceMirroringController,
  jobController,
  cronJobController,
  ttlAfterFinishedController,
  podGcController,
  nodeLifecycleController,
  taintEvictionController,
  ttlController,
  disruptionController,
  daemonSetController,
  statefulSetController,
  pvBinderController,
  pvExpanderController,
  pvcProtectionController,
  pvProtectionController,
  vacProtectionController,
  ephemeralVolumeController,
  attachDetachController,
  csrCleanerController,
  csrApprovingController,
  csrSigningController,
  tokenCleanerController,
  bootstrapSignerController,
  legacyTokenCleanerController,
  serviceCidrController,
  vapStatusController,
  resourceClaimController,
  hpaController,
];

const byName = new Map(CONTROLLERS.map((d) => [d.name, d]));

export function descriptorOf(name: string): ControllerDescriptor | undefined {
  return byName.get(name);
}

/** The implemented controllers among the enabled canonical names, in registry order. */
export function implementedOf(enabled: ReadonlySet<string>): ControllerDescriptor[] {
  return CONTROLLERS.filter((d) => enabled.has(d.name));
}

/** Enabled names this build does not implement (upstream runs them; we say so at start). */
export function notImplemented(enabled: Iterable<string>): string[] {
  return [...enabled].filter((c) => !byName.has(c)).sort();
}

/** Every controller flag, each once (controllers sharing an engine may share a flag), concurrency flags first. */
export function controllerFlags(): FlagSpec[] {
  const out = new Map<string, FlagSpec>();
  for (const d of CONTROLLERS) if (typeof d.concurrency !== 'number') out.set(d.concurrency.name, d.concurrency);
  for (const d of CONTROLLERS) for (const f of d.flags ?? []) out.set(f.name, f);
  return [...out.values()];
}
