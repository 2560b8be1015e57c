import type { Client } from '@temporalio/client';
import { InvalidArgumentError } from 'commander';

/**
 * Naming a Kubernetes object on the command line the way kubectl users do (`rs`, `deployment`,
 * `Job`), and finding the workflows that reconcile it through the Kcm* search attributes.
 */
const KINDS: Record<string, { kind: string; clusterScoped?: boolean }> = {};
const alias = (kind: string, names: string[], clusterScoped = false) => {
  for (const n of [kind.toLowerCase(), `${kind.toLowerCase()}s`, ...names]) KINDS[n] = { kind, clusterScoped };
};
alias('ReplicaSet', ['rs']);
alias('ReplicationController', ['rc']);
alias('Deployment', ['deploy']);
alias('Job', []);
alias('CronJob', ['cj']);
alias('Service', ['svc']);
alias('Endpoints', ['ep']);
alias('ServiceAccount', ['sa']);
alias('Secret', []);
alias('ConfigMap', ['cm']);
alias('ResourceQuota', ['quota']);
alias('Pod', ['po']);
alias('Namespace', ['ns'], true);
alias('ClusterRole', [], true);
alias('Node', ['no'], true);
alias('PersistentVolume', ['pv'], true);
alias('PersistentVolumeClaim', ['pvc']);
alias('VolumeAttributesClass', ['vac'], true);
alias('EndpointSlice', []);
alias('PodDisruptionBudget', ['pdb']);
alias('DaemonSet', ['ds']);
alias('StatefulSet', ['sts']);
alias('HorizontalPodAutoscaler', ['hpa']);
alias('ResourceClaim', []);
alias('CertificateSigningRequest', ['csr'], true);

const NAME = /^[A-Za-z0-9]([A-Za-z0-9._:-]{0,251}[A-Za-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const withoutUndefined = (o: { uid?: string; controller?: string }) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { uid?: string; controller?: string };

export interface ObjectRef {
  kind: string;
  /** absent for cluster-scoped objects */
  namespace?: string;
  name: string;
  uid?: string;
  controller?: string;
}

/** `<kind> <namespace>/<name>` (or `<kind> <name>` for cluster-scoped kinds); a mistake is a usage error. */
export function parseObjectRef(kindArg: string, objectArg: string, extra: { uid?: string; controller?: string } = {}): ObjectRef {
  const known = KINDS[kindArg.toLowerCase()];
  // an unknown kind is taken as written: custom resources are collected by the garbage collector too
  if (!known && !/^[A-Za-z][A-Za-z0-9]*$/.test(kindArg)) throw new InvalidArgumentError(`kind ${JSON.stringify(kindArg)}: not a kind name`);
  const kind = known?.kind ?? kindArg;
  const parts = objectArg.split('/');
  if (parts.length > 2) throw new InvalidArgumentError(`object ${JSON.stringify(objectArg)}: expected <namespace>/<name> or <name>`);
  const [namespace, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (namespace !== undefined && !NAMESPACE.test(namespace)) throw new InvalidArgumentError(`${JSON.stringify(namespace)} is not a namespace name`);
  // names of some kinds (ClusterRoles) carry colons and capitals
  if (!NAME.test(name)) throw new InvalidArgumentError(`${JSON.stringify(name)} is not an object name`);
  if (known?.clusterScoped && namespace !== undefined) throw new InvalidArgumentError(`${kind} is cluster-scoped: give just <name>`);
  if (known && !known.clusterScoped && namespace === undefined) throw new InvalidArgumentError(`${kind} is namespaced: give <namespace>/<name>`);
  return { kind, ...(namespace !== undefined ? { namespace } : {}), name, ...withoutUndefined(extra) };
}

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * The visibility query for an object's workflows (every controller and run unless narrowed).
 * Without a namespace it matches any: a Namespace's name also finds the per-namespace workflows
 * (root CA, default ServiceAccount) that carry it.
 */
export function objectQuery(o: ObjectRef, opts: { running?: boolean } = {}): string {
  const terms = [`KcmKind=${quote(o.kind)}`, `KcmName=${quote(o.name)}`];
  if (o.namespace !== undefined) terms.push(`KcmNamespace=${quote(o.namespace)}`);
  if (o.uid) terms.push(`KcmUid=${quote(o.uid)}`);
  if (o.controller) terms.push(`KcmController=${quote(o.controller)}`);
  if (opts.running) terms.push(`ExecutionStatus='Running'`);
  return terms.join(' AND ');
}

export interface WorkflowRef {
  workflowId: string;
  runId: string;
  workflowType: string;
  status: string;
  startTime: Date;
}

export async function listObjectWorkflows(client: Client, o: ObjectRef, opts: { running?: boolean; limit?: number } = {}): Promise<WorkflowRef[]> {
  const out: WorkflowRef[] = [];
  for await (const w of client.workflow.list({ query: objectQuery(o, opts) })) {
    out.push({ workflowId: w.workflowId, runId: w.runId, workflowType: w.type, status: w.status.name, startTime: w.startTime });
    if (opts.limit && out.length >= opts.limit) break;
  }
  return out.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
}

export function describeObject(o: ObjectRef): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}
