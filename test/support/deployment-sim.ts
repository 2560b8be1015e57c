/*
 * A fake cluster for the deployment planner: a Deployment and its ReplicaSets in memory, whose
 * plans it applies, playing the ReplicaSet controller between rounds. Shared by the planner's unit
 * tests and the signal gate's property test, which needs converged states to start from.
 */
import { planDeployment } from '../../workflows/deployment/controller';
import { REVISION_ANNOTATION, findNewReplicaSet } from '../../workflows/deployment/util';
import { formatTime } from '../../workflows/replicaset/logic';
import type { DeploymentPlan, DeploymentStatus, DeploymentView, ReplicaSetView } from '../../workflows/deployment/types';
import type { PodTemplate } from '../../workflows/common/meta';
import type { DeploymentObservation } from '../../workflows/deployment/cache';
import { seededRandom } from '../../chaos/storm';

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

/**
 * A converged Deployment, perhaps disturbed, as the cache's snapshot of it: either strategy, paused
 * or not, with or without a progress deadline, a few revisions deep, then disturbed in one way (a
 * new template or size, a ReplicaSet losing a ready pod, a status drifting, an orphan to adopt, a
 * ReplicaSet's echo). Seeded by `n`.
 */
export function randomDeploymentCase(n: number): { name: string; snapshot: DeploymentObservation } {
  // seeded: the same cases on every run, so a failure names a case that can be run again
  const r = seededRandom(5000 + n);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const name = `d-${n}`;
  const over: Partial<DeploymentView> = {
    name, uid: `${name}-uid`, namespace: 'gate', selector: { matchLabels: { app: name } }, template: template('img:1', { app: name }),
    replicas: pick([0, 1, 2, 3, 5]),
    strategy: pick([{ type: 'RollingUpdate' as const, maxSurge: '25%', maxUnavailable: '25%' }, { type: 'RollingUpdate' as const, maxSurge: 1, maxUnavailable: 0 }, { type: 'Recreate' as const }]),
    progressDeadlineSeconds: pick([600, 600, null]),
    revisionHistoryLimit: pick([10, 1, 0]),
  };
  // the planner's clock is the workflow's: start the fake cluster a little in the past so that
  // no condition it writes is dated after the moment the workflow plans
  const sim = new Sim(deployment(over), [], Date.now() - 120 * SEC, true);
  sim.converge();
  // a few revisions deep
  for (let i = 0, k = pick([0, 0, 1, 2]); i < k; i++) {
    sim.setTemplate(template(`img:${i + 2}`, { app: name }));
    sim.converge();
  }
  if (r() < 0.15) {
    sim.d = { ...sim.d, paused: true, generation: sim.d.generation + 1 };
    sim.converge();
  }
  const disturb = pick(['none', 'none', 'none', 'echo', 'template', 'replicas', 'unready', 'status', 'orphan', 'revision'] as const);
  const rss: ReplicaSetView[] = sim.rss.map((x) => ({ ...x, status: { ...x.status } }));
  let d = sim.d;
  const live = rss.find((x) => x.replicas > 0) ?? rss[0];
  switch (disturb) {
    case 'echo': // a ReplicaSet's own status write seen again: a new version, nothing else
      if (live) live.resourceVersion = String(Number(live.resourceVersion) + 7);
      break;
    case 'template':
      d = { ...d, template: template('img:new', { app: name }), generation: d.generation + 1 };
      break;
    case 'replicas':
      d = { ...d, replicas: d.replicas + 1, generation: d.generation + 1 };
      break;
    case 'unready':
      if (live && live.status.readyReplicas > 0) live.status = { ...live.status, readyReplicas: live.status.readyReplicas - 1, availableReplicas: live.status.availableReplicas - 1 };
      break;
    case 'status':
      d = { ...d, status: { ...d.status, updatedReplicas: d.status.updatedReplicas + 1 } };
      break;
    case 'orphan':
      rss.push({ ...(live ?? rss[0]), name: `${name}-orphan`, uid: `${name}-orphan-uid`, ownerReferences: [], creationTimestamp: formatTime(Date.now() - 60 * SEC), replicas: 0,
        status: { replicas: 0, readyReplicas: 0, availableReplicas: 0, fullyLabeledReplicas: 0, observedGeneration: 1 } });
      break;
    case 'revision':
      if (live) live.annotations = { ...live.annotations, [REVISION_ANNOTATION]: '99' };
      break;
  }
  return { name, snapshot: { deployment: d, replicaSets: rss, activePodsByReplicaSet: {}, versions: { deployments: '1000', replicaSets: '1000' } } };
}
