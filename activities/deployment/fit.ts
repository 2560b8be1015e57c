import type { DeploymentObservation } from '../../workflows/deployment/cache';
import type { ReplicaSetView } from '../../workflows/deployment/types';
import { templatesEqualIgnoringHash } from '../../workflows/deployment/util';

/**
 * The most an observation may weigh as JSON, in a signal or in observeDeployment's result. Temporal
 * refuses any payload over 2 MiB, and the codec's compression cannot be counted on (random bytes in
 * a template do not compress); this leaves room for the Deployment itself past the ReplicaSets.
 */
export const OBSERVATION_BUDGET_BYTES = 1024 * 1024;

/** The controller's own annotations on a ReplicaSet: all it reads or writes of an old one. */
const OWN_ANNOTATION_PREFIX = 'deployment.kubernetes.io/';

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/**
 * An observation that fits a payload, with what the workflow needs of it. Kubernetes bounds each
 * object (about 1.5 MiB in etcd) but not a Deployment with its ten old ReplicaSets, each carrying
 * its revision's whole pod template. Past the budget, in turn:
 * - every ReplicaSet's template is left out, with `templateMatches` saying what the workflow reads
 *   of it: whether it equals the Deployment's, ignoring the hash label (upstream's EqualIgnoreHash,
 *   which finds the new ReplicaSet; a new ReplicaSet is made from the Deployment's template);
 * - then old ReplicaSets keep only the controller's own annotations: the revision and replica
 *   annotations it reads, and merge-patches alone, so the others stay as they are on the server.
 * A Deployment that still does not fit goes out as it is; its signal is then sent without it
 * (shrinkDeploymentEvent) and a read that does not fit fails its activity with the size.
 */
export function fitObservation(o: DeploymentObservation, budget = OBSERVATION_BUDGET_BYTES): DeploymentObservation {
  const d = o.deployment;
  if (!d || !o.replicaSets.length || jsonBytes(o) <= budget) return o;
  const lean = (rs: ReplicaSetView): ReplicaSetView =>
    rs.templateMatches !== undefined ? rs : { ...rs, template: { spec: {} }, templateMatches: templatesEqualIgnoringHash(rs.template, d.template) };
  const withoutTemplates = { ...o, replicaSets: o.replicaSets.map(lean) };
  if (jsonBytes(withoutTemplates) <= budget) return withoutTemplates;
  const ownOnly = (a: Record<string, string>) => Object.fromEntries(Object.entries(a).filter(([k]) => k.startsWith(OWN_ANNOTATION_PREFIX)));
  return { ...withoutTemplates, replicaSets: withoutTemplates.replicaSets.map((rs) => (rs.templateMatches ? rs : { ...rs, annotations: ownOnly(rs.annotations) })) };
}
