/**
 * The writes of one Deployment sync, held in memory. Upstream has no such file: its sync writes through
 * the API as it goes, and the engine instead returns those writes as a plan for activities to run. Runs
 * inside Temporal workflow code: no I/O, no clocks, no randomness, no Node built-ins.
 *
 * Upstream writes with the resourceVersion it read at the start of the sync, so a second write to the same
 * object in one sync fails with a conflict and ends the sync early; Round reproduces that, which keeps the
 * sequence of rounds the same as upstream's.
 */
import type { LabelSelector, OwnerRef, PodTemplate } from '../common/meta';
import type { DeploymentAction, DeploymentPlan, DeploymentStatus, DeploymentView, ReplicaSetView } from './types';
import { cloneStatus, deploymentStatusEqual, getCondition } from './util';

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k]);
}

/** Upstream returned an error: the sync ends here, the writes so far stand. */
export class EndOfSync {
  constructor(readonly why: string) {}
}

/** A ReplicaSet as one sync holds it: `version` counts the writes behind this copy, to spot stale ones. */
export interface RS extends ReplicaSetView {
  version: number;
  created?: { hash: string; template: PodTemplate; selector: LabelSelector; ownerReferences: OwnerRef[] };
}

interface RSWrite {
  orig: RS;
  latest: RS;
  reasons: string[];
}

type Step = { kind: 'rs'; name: string } | { kind: 'action'; action: DeploymentAction };

/**
 * One upstream sync. `d` is the in-memory Deployment (annotations and status change as upstream's copy
 * does). Writes follow upstream's resourceVersion rules: a ReplicaSet can be written again only through
 * the copy the previous write returned, and the Deployment only once (its later writes would carry the
 * stale resourceVersion and conflict), otherwise the sync ends.
 */
export class Round {
  readonly d: DeploymentView;
  readonly steps: Step[] = [];
  readonly rsWrites = new Map<string, RSWrite>();
  deploymentWritten = false;
  requeueAfterMs?: number;
  collisionCount?: number;

  constructor(
    readonly orig: DeploymentView,
    readonly rsList: readonly RS[],
    readonly oldPodsRunning: number,
    readonly now: number,
    readonly upstreamTemplateHash = false,
  ) {
    this.d = { ...orig, annotations: { ...(orig.annotations ?? {}) }, status: cloneStatus(orig.status) };
  }

  writeRS(base: RS, change: Partial<Pick<RS, 'replicas' | 'annotations' | 'minReadySeconds'>>, reason: string): RS {
    const w = this.rsWrites.get(base.name);
    const current = w ? w.latest.version : 0;
    if (base.version !== current) throw new EndOfSync(`conflict: ReplicaSet ${base.name} was already written in this sync`);
    const next: RS = { ...base, ...change, version: base.version + 1 };
    if (w) {
      w.latest = next;
      w.reasons.push(reason);
    } else {
      this.rsWrites.set(base.name, { orig: base, latest: next, reasons: [reason] });
      this.steps.push({ kind: 'rs', name: base.name });
    }
    return next;
  }

  recordCreate(rs: RS, reason: string): void {
    this.rsWrites.set(rs.name, { orig: rs, latest: rs, reasons: [reason] });
    this.steps.push({ kind: 'rs', name: rs.name });
  }

  deleteRS(rs: RS, reason: string): void {
    this.steps.push({ kind: 'action', action: { type: 'deleteReplicaSet', name: rs.name, uid: rs.uid, reason } });
  }

  /** Upstream's UpdateStatus of its Deployment copy (annotations ride along). */
  writeDeployment(reason: string): void {
    if (this.deploymentWritten) throw new EndOfSync('conflict: the Deployment was already written in this sync');
    this.deploymentWritten = true;
    if (!sameMap(this.orig.annotations ?? {}, this.d.annotations)) {
      this.steps.push({ kind: 'action', action: { type: 'updateDeploymentAnnotations', annotations: { ...this.d.annotations }, reason } });
    }
    if (!deploymentStatusEqual(this.orig.status, this.d.status)) {
      this.steps.push({
        kind: 'action',
        action: { type: 'updateDeploymentStatus', status: cloneStatus(this.d.status), reason: `${reason}${describeStatusChange(this.orig.status, this.d.status)}` },
      });
    }
  }

  plan(): DeploymentPlan {
    const actions: DeploymentAction[] = [];
    for (const step of this.steps) {
      if (step.kind === 'action') {
        actions.push(step.action);
        continue;
      }
      const w = this.rsWrites.get(step.name) as RSWrite;
      const rs = w.latest;
      const reason = w.reasons.join('; ');
      if (w.orig.created) {
        const c = w.orig.created;
        actions.push({
          type: 'createReplicaSet',
          namespace: rs.namespace,
          name: rs.name,
          hash: c.hash,
          replicas: rs.replicas,
          minReadySeconds: rs.minReadySeconds,
          annotations: { ...rs.annotations },
          labels: { ...rs.labels },
          ownerReferences: c.ownerReferences,
          template: c.template,
          selector: c.selector,
          reason,
        });
        continue;
      }
      const minReady = rs.minReadySeconds !== w.orig.minReadySeconds ? { minReadySeconds: rs.minReadySeconds } : {};
      if (rs.replicas !== w.orig.replicas) {
        actions.push({
          type: 'scaleReplicaSet',
          name: rs.name,
          uid: rs.uid,
          resourceVersion: w.orig.resourceVersion,
          replicas: rs.replicas,
          annotations: { ...rs.annotations },
          ...minReady,
          reason,
        });
      } else {
        actions.push({
          type: 'updateReplicaSetAnnotations',
          name: rs.name,
          uid: rs.uid,
          resourceVersion: w.orig.resourceVersion,
          annotations: { ...rs.annotations },
          ...minReady,
          reason,
        });
      }
    }
    const plan: DeploymentPlan = { actions };
    if (this.requeueAfterMs !== undefined) plan.requeueAfterMs = this.requeueAfterMs;
    if (this.collisionCount !== undefined) plan.collisionCount = this.collisionCount;
    return plan;
  }
}

function describeStatusChange(a: DeploymentStatus, b: DeploymentStatus): string {
  const parts: string[] = [];
  const fields: Array<keyof DeploymentStatus> = [
    'observedGeneration',
    'replicas',
    'updatedReplicas',
    'readyReplicas',
    'availableReplicas',
    'unavailableReplicas',
    'terminatingReplicas',
    'collisionCount',
  ];
  for (const f of fields) if (a[f] !== b[f]) parts.push(`${f} ${String(a[f] ?? '-')}->${String(b[f] ?? '-')}`);
  for (const c of b.conditions ?? []) {
    const old = getCondition(a, c.type);
    if (!old || old.status !== c.status || old.reason !== c.reason) parts.push(`${c.type}=${c.status} (${c.reason ?? ''})`);
  }
  for (const c of a.conditions ?? []) if (!getCondition(b, c.type)) parts.push(`${c.type} removed`);
  return parts.length > 0 ? `: ${parts.join(', ')}` : '';
}
