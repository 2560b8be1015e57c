/*
 * A fake cluster for the deployment planner: a Deployment and its ReplicaSets in memory, whose
 * plans it applies, playing the ReplicaSet controller between rounds. Shared by the planner's unit
 * tests and the signal gate's property test, which needs converged states to start from.
 */
import { planDeployment } from '../../workflows/deployment/controller';
import { findNewReplicaSet } from '../../workflows/deployment/util';
import { formatTime } from '../../workflows/replicaset/logic';
import type { DeploymentPlan, DeploymentStatus, DeploymentView, ReplicaSetView } from '../../workflows/deployment/types';
import type { PodTemplate } from '../../workflows/common/meta';

export const T0 = Date.parse('2025-06-01T12:00:00Z');
export const SEC = 1000;

export type PodMode = 'instant' | 'nextTick';

export function template(image: string, labels: Record<string, string> = { app: 'web' }): PodTemplate {
  return { metadata: { labels: { ...labels } }, spec: { containers: [{ name: 'c', image }] } };
}

export function emptyStatus(): DeploymentStatus {
  return {
    observedGeneration: 0,
    replicas: 0,
    updatedReplicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    unavailableReplicas: 0,
    conditions: [],
  };
}

export function deployment(over: Partial<DeploymentView> = {}): DeploymentView {
  return {
    namespace: 'ns',
    name: 'web',
    uid: 'd-uid',
    resourceVersion: '1',
    generation: 1,
    labels: {},
    annotations: {},
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: template('img:1'),
    strategy: { type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: '25%' },
    minReadySeconds: 0,
    revisionHistoryLimit: 10,
    progressDeadlineSeconds: 600,
    paused: false,
    status: emptyStatus(),
    ...over,
  };
}

export class Sim {
  d: DeploymentView;
  rss: ReplicaSetView[];
  now: number;
  oldPodsRunning = 0;
  private seq = 0;
  history: DeploymentPlan[] = [];

  constructor(d: DeploymentView, rss: ReplicaSetView[] = [], now = T0, private readonly upstreamTemplateHash = false) {
    this.d = d;
    this.rss = rss;
    this.now = now;
  }

  plan(): DeploymentPlan {
    return planDeployment({ deployment: this.d, replicaSets: this.rss, oldPodsRunning: this.oldPodsRunning, now: this.now, upstreamTemplateHash: this.upstreamTemplateHash });
  }

  apply(plan: DeploymentPlan): void {
    for (const a of plan.actions) {
      switch (a.type) {
        case 'createReplicaSet': {
          expect(this.rss.some((r) => r.name === a.name)).toBe(false);
          this.seq++;
          this.rss.push({
            namespace: a.namespace,
            name: a.name,
            uid: `uid-created-${this.seq}`,
            resourceVersion: String(100 + this.seq),
            creationTimestamp: formatTime(this.now),
            generation: 1,
            labels: { ...a.labels },
            annotations: { ...a.annotations },
            ownerReferences: a.ownerReferences,
            replicas: a.replicas,
            minReadySeconds: a.minReadySeconds,
            template: a.template,
            selector: a.selector,
            status: { replicas: 0, readyReplicas: 0, availableReplicas: 0, fullyLabeledReplicas: 0, observedGeneration: 0 },
          });
          break;
        }
        case 'scaleReplicaSet':
        case 'updateReplicaSetAnnotations': {
          const r = this.rss.find((x) => x.name === a.name) as ReplicaSetView;
          expect(r).toBeDefined();
          expect(r.uid).toBe(a.uid);
          expect(r.resourceVersion).toBe(a.resourceVersion);
          if (a.type === 'scaleReplicaSet') r.replicas = a.replicas;
          r.annotations = { ...a.annotations };
          if (a.minReadySeconds !== undefined) r.minReadySeconds = a.minReadySeconds;
          r.generation++;
          r.resourceVersion = String(Number(r.resourceVersion) + 1000);
          break;
        }
        case 'deleteReplicaSet':
          this.rss = this.rss.filter((x) => x.uid !== a.uid);
          break;
        case 'updateDeploymentAnnotations':
          this.d = { ...this.d, annotations: { ...a.annotations } };
          break;
        case 'updateDeploymentStatus':
          this.d = { ...this.d, status: a.status };
          break;
      }
    }
  }

  /** The ReplicaSet controller: pods appear at once; they become available at once or one tick later. */
  tickReplicaSets(mode: PodMode): void {
    for (const r of this.rss) {
      const prev = r.status.replicas;
      const available = mode === 'instant' ? r.replicas : Math.min(r.replicas, prev, Math.max(r.status.availableReplicas, prev));
      r.status = {
        replicas: r.replicas,
        readyReplicas: available,
        availableReplicas: available,
        fullyLabeledReplicas: r.replicas,
        observedGeneration: r.generation,
        terminatingReplicas: 0,
        conditions: r.status.conditions,
      };
    }
  }

  round(mode: PodMode = 'instant'): DeploymentPlan {
    const p = this.plan();
    this.history.push(p);
    this.apply(p);
    this.tickReplicaSets(mode);
    this.now += SEC;
    return p;
  }

  /** Rounds until a plan has no actions; checks an invariant after every round. */
  converge(mode: PodMode = 'instant', check?: (s: Sim) => void, maxRounds = 60): number {
    for (let i = 1; i <= maxRounds; i++) {
      const p = this.round(mode);
      check?.(this);
      if (p.actions.length === 0) return i;
    }
    throw new Error('did not converge');
  }

  get(name: string): ReplicaSetView {
    return this.rss.find((r) => r.name === name) as ReplicaSetView;
  }

  newRS(): ReplicaSetView | undefined {
    return findNewReplicaSet(this.d, this.rss);
  }

  setTemplate(t: PodTemplate): void {
    this.d = { ...this.d, template: t, generation: this.d.generation + 1 };
  }

  setReplicas(n: number): void {
    this.d = { ...this.d, replicas: n, generation: this.d.generation + 1 };
  }
}

