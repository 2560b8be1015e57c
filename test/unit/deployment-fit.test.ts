import { randomBytes } from 'node:crypto';
import { fitObservation } from '../../activities/deployment/fit';
import { claimAll } from '../../workflows/common/controller-ref';
import type { DeploymentObservation } from '../../workflows/deployment/cache';
import { planDeployment } from '../../workflows/deployment/controller';
import type { DeploymentAction, ReplicaSetView } from '../../workflows/deployment/types';
import { findNewReplicaSet, templatesEqualIgnoringHash } from '../../workflows/deployment/util';
import type { PodTemplate } from '../../workflows/common/meta';
import { deploymentWouldAct } from '../../workflows/deployment/would-act';
import { randomDeploymentCase } from '../support/deployment-sim';

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const noise = (bytes: number) => randomBytes(bytes).toString('base64');

/**
 * Every ReplicaSet made heavy: random bytes in its template (the same as the Deployment's for the
 * ReplicaSet whose template is the Deployment's), and in a foreign annotation of its own.
 */
function heavy(o: DeploymentObservation, bytes: number): DeploymentObservation {
  const d = o.deployment!;
  const current = noise(bytes);
  const withBallast = (t: PodTemplate, ballast: string): PodTemplate => ({ ...t, metadata: { ...t.metadata, annotations: { 'example.com/ballast': ballast } } });
  return {
    ...o,
    deployment: { ...d, template: withBallast(d.template, current) },
    replicaSets: o.replicaSets.map((rs) => ({
      ...rs,
      annotations: { ...rs.annotations, 'example.com/notes': noise(bytes) },
      template: withBallast(rs.template, templatesEqualIgnoringHash(rs.template, d.template) ? current : noise(bytes)),
    })),
  };
}

/** One reconcile's writes, as the server would hold them: a ReplicaSet's annotations are merge-patched onto what it has. */
function outcome(o: DeploymentObservation, full: DeploymentObservation, now: number): unknown {
  const d = o.deployment!;
  const claim = claimAll(d, o.replicaSets);
  const newRS = findNewReplicaSet(d, claim.owned);
  const plan = planDeployment({ deployment: d, replicaSets: claim.owned, oldPodsRunning: 0, now, upstreamTemplateHash: true });
  const before = new Map(full.replicaSets.map((rs) => [rs.name, rs.annotations]));
  const held = (a: DeploymentAction) => ('annotations' in a && a.type !== 'createReplicaSet' && a.type !== 'updateDeploymentAnnotations'
    ? { ...a, annotations: { ...before.get(a.name), ...a.annotations } } : a);
  return { adopt: claim.adopt.map((rs) => rs.name), release: claim.release.map((rs) => rs.name), newRS: newRS?.name, actions: plan.actions.map(held), requeue: plan.requeueAfterMs };
}

describe('fitObservation: a Deployment with heavy ReplicaSets fits a payload and plans the same', () => {
  test('under the budget nothing changes', () => {
    const { snapshot } = randomDeploymentCase(1);
    expect(fitObservation(snapshot)).toBe(snapshot);
  });

  test('on 200 random Deployments, templates (then foreign annotations of old ReplicaSets) left out: the same claim, new ReplicaSet, writes and timer', () => {
    let trimmedAnnotations = 0;
    let withNewReplicaSet = 0;
    for (let n = 0; n < 200; n++) {
      const full = heavy(randomDeploymentCase(n).snapshot, 16 * 1024);
      if (!full.replicaSets.length) continue;
      if (findNewReplicaSet(full.deployment!, full.replicaSets)) withNewReplicaSet++;
      // a budget that the templates' removal meets, and one that only the annotations' removal can
      for (const budget of [jsonBytes(full) - 16 * 1024 * full.replicaSets.length, 1]) {
        const fit = fitObservation(full, budget);
        expect(fit.replicaSets.every((rs) => rs.templateMatches !== undefined && JSON.stringify(rs.template) === '{"spec":{}}')).toBe(true);
        if (budget > 1) expect(jsonBytes(fit)).toBeLessThanOrEqual(budget);
        if (fit.replicaSets.some((rs, i) => Object.keys(rs.annotations).length < Object.keys(full.replicaSets[i].annotations).length)) trimmedAnnotations++;
        // one clock for both: a plan dates its conditions, and a millisecond apart they differ
        const now = Date.now();
        expect(deploymentWouldAct(fit, now)).toBe(deploymentWouldAct(full, now));
        expect(outcome(fit, full, now)).toEqual(outcome(full, full, now));
      }
    }
    expect(trimmedAnnotations).toBeGreaterThan(50);
    expect(withNewReplicaSet).toBeGreaterThan(100);
  });

  test("the new ReplicaSet keeps every annotation (the Deployment's are copied onto it); old ones keep the controller's own", () => {
    const revisions = Array.from({ length: 50 }, (_, n) => randomDeploymentCase(n).snapshot)
      .find((o) => o.replicaSets.length >= 2 && findNewReplicaSet(o.deployment!, o.replicaSets));
    const full = heavy(revisions!, 8 * 1024);
    const fit = fitObservation(full, 1);
    const newRS = findNewReplicaSet(full.deployment!, full.replicaSets) as ReplicaSetView;
    expect(newRS).toBeDefined();
    for (const rs of fit.replicaSets) {
      const keys = Object.keys(rs.annotations);
      if (rs.uid === newRS.uid) expect(keys).toContain('example.com/notes');
      else expect(keys.every((k) => k.startsWith('deployment.kubernetes.io/'))).toBe(true);
    }
  });
});
