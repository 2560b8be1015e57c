import { calculateRolloutStatus, requeueForProgress } from '../../workflows/deployment/progress';
import { oldReplicaSetsScaleDown } from '../../workflows/deployment/rolling';
import {
  calculateDeploymentStatus,
  isScalingEvent,
  proportionalSizes,
  replicaSetName,
  replicaSetsToCleanUp,
  resolveCreateConflict,
} from '../../workflows/deployment/sync';
import {
  ANNOTATIONS_NOT_COPIED,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  canonicalJson,
  copyDeploymentAnnotations,
  deploymentComplete,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  fnv1a32,
  getCondition,
  getReplicaSetFraction,
  isSaturated,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  newRSReplicasForRolling,
  newRevisionAnnotations,
  podTemplateHash,
  resolveFenceposts,
  revisionOf,
  safeEncodeString,
  scaledValue,
  setCondition,
  templatesEqualIgnoringHash,
} from '../../workflows/deployment/util';
import { formatTime } from '../../workflows/replicaset/logic';
import type {
  DeploymentAction,
  DeploymentCondition,
  DeploymentPlan,
  DeploymentStatus,
  DeploymentView,
  IntOrPercent,
  ReplicaSetView,
} from '../../workflows/deployment/types';
import type { PodTemplate } from '../../workflows/common/meta';
import { type PodMode, SEC, Sim, T0, deployment, emptyStatus, template } from '../support/deployment-sim';

// ---------------------------------------------------------------------------------------------
// fixtures (the shared ones, and the fake cluster Sim, are in test/support/deployment-sim.ts)

function rolling(maxSurgeV: IntOrPercent, maxUnavailableV: IntOrPercent) {
  return { type: 'RollingUpdate' as const, maxSurge: maxSurgeV, maxUnavailable: maxUnavailableV };
}

interface RSOpts {
  image?: string;
  created?: number;
  available?: number;
  statusReplicas?: number;
  revision?: number;
  annotations?: Record<string, string>;
  template?: PodTemplate;
}

function rs(name: string, replicas: number, o: RSOpts = {}): ReplicaSetView {
  const tpl = o.template ?? template(o.image ?? 'img:1');
  const annotations = { ...(o.annotations ?? {}) };
  if (o.revision !== undefined) annotations[REVISION_ANNOTATION] = String(o.revision);
  const statusReplicas = o.statusReplicas ?? replicas;
  const available = o.available ?? statusReplicas;
  return {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resourceVersion: '10',
    creationTimestamp: formatTime(o.created ?? T0),
    generation: 1,
    labels: { ...(tpl.metadata?.labels ?? {}) },
    annotations,
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }],
    replicas,
    minReadySeconds: 0,
    template: tpl,
    selector: { matchLabels: { app: 'web' } },
    status: {
      replicas: statusReplicas,
      readyReplicas: available,
      availableReplicas: available,
      fullyLabeledReplicas: statusReplicas,
      observedGeneration: 1,
      terminatingReplicas: 0,
    },
  };
}

function withReplicaAnnotations(r: ReplicaSetView, desired: number, max: number): ReplicaSetView {
  return { ...r, annotations: { ...r.annotations, [DESIRED_REPLICAS_ANNOTATION]: String(desired), [MAX_REPLICAS_ANNOTATION]: String(max) } };
}

function ofType<K extends DeploymentAction['type']>(plan: DeploymentPlan, type: K): Array<Extract<DeploymentAction, { type: K }>> {
  return plan.actions.filter((a): a is Extract<DeploymentAction, { type: K }> => a.type === type);
}

function cond(s: DeploymentStatus, type: string): DeploymentCondition | undefined {
  return getCondition(s, type);
}

// ---------------------------------------------------------------------------------------------
// runs on the fake cluster

function sumSpec(s: Sim): number {
  return s.rss.reduce((n, r) => n + r.replicas, 0);
}
function sumAvailable(s: Sim): number {
  return s.rss.reduce((n, r) => n + r.status.availableReplicas, 0);
}

/** A Deployment created from nothing and run to a complete first rollout. */
function freshSim(over: Partial<DeploymentView> = {}, mode: PodMode = 'instant'): Sim {
  const s = new Sim(deployment(over));
  s.converge(mode);
  return s;
}

// ---------------------------------------------------------------------------------------------
// fenceposts

describe('fenceposts', () => {
  test('integers pass through', () => {
    expect(resolveFenceposts(2, 1, 10)).toEqual({ maxSurge: 2, maxUnavailable: 1 });
  });

  test('percentages: surge rounds up, unavailable rounds down', () => {
    expect(resolveFenceposts('25%', '25%', 10)).toEqual({ maxSurge: 3, maxUnavailable: 2 });
    expect(resolveFenceposts('25%', '25%', 3)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(resolveFenceposts('50%', '50%', 5)).toEqual({ maxSurge: 3, maxUnavailable: 2 });
    expect(resolveFenceposts('10%', '90%', 1)).toEqual({ maxSurge: 1, maxUnavailable: 0 });
  });

  test('both zero makes one unavailable', () => {
    expect(resolveFenceposts(0, 0, 10)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(resolveFenceposts('0%', '0%', 10)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    // 10% of 5 rounds down to 0 for unavailable, with surge 0 -> 1
    expect(resolveFenceposts(0, '10%', 5)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(resolveFenceposts('1%', 0, 0)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
  });

  test('invalid values: a string without % is an error and yields 0/0', () => {
    expect(scaledValue('5', 10, true).error).toBeDefined();
    expect(scaledValue('x%', 10, true).error).toBeDefined();
    const r = resolveFenceposts('5', 1, 10);
    expect(r.maxSurge).toBe(0);
    expect(r.maxUnavailable).toBe(0);
    expect(r.error).toBeDefined();
  });

  test('maxUnavailable / maxSurge of a Deployment', () => {
    expect(maxUnavailable(deployment({ replicas: 10 }))).toBe(2);
    expect(maxSurge(deployment({ replicas: 10 }))).toBe(3);
    expect(maxUnavailable(deployment({ replicas: 0 }))).toBe(0);
    // never more than replicas
    expect(maxUnavailable(deployment({ replicas: 2, strategy: rolling(0, 5) }))).toBe(2);
    expect(maxUnavailable(deployment({ strategy: { type: 'Recreate' } }))).toBe(0);
    expect(maxSurge(deployment({ strategy: { type: 'Recreate' } }))).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// hashing, naming, templates

describe('pod-template-hash', () => {
  test('safeEncodeString maps each character code modulo 27 onto the alphabet', () => {
    // '0' is 48 -> 48 % 27 = 21 -> '4'; '9' is 57 -> 3 -> 'f'
    expect(safeEncodeString('0')).toBe('4');
    expect(safeEncodeString('9')).toBe('f');
    expect(safeEncodeString('0123456789')).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
  });

  test('fnv1a32 matches the reference vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  test('deterministic and independent of key order', () => {
    const a: PodTemplate = { metadata: { labels: { app: 'web', tier: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }], dnsPolicy: 'ClusterFirst' } };
    const b: PodTemplate = { spec: { dnsPolicy: 'ClusterFirst', containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { tier: 'x', app: 'web' } } };
    expect(podTemplateHash(a)).toBe(podTemplateHash(b));
    expect(podTemplateHash(a)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(podTemplateHash(a)).not.toBe(podTemplateHash(template('other')));
  });

  test('collisionCount changes the hash, and 0 differs from absent', () => {
    const t = template('img:1');
    const h = new Set([podTemplateHash(t), podTemplateHash(t, 0), podTemplateHash(t, 1), podTemplateHash(t, 2)]);
    expect(h.size).toBe(4);
    expect(podTemplateHash(t, 1)).toBe(podTemplateHash(t, 1));
  });

  test('canonical JSON drops null and empty lists', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: null, c: [] }] })).toBe('{"a":[2,{}],"b":1}');
  });

  test('replicaSetName truncates long deployment names to fit 253 characters', () => {
    expect(replicaSetName('web', 'abc')).toBe('web-abc');
    const long = 'x'.repeat(300);
    const n = replicaSetName(long, 'hash');
    expect(n.length).toBe(253);
    expect(n.endsWith('-hash')).toBe(true);
  });

  test('templates compare equal ignoring the pod-template-hash label only', () => {
    const a = template('img:1');
    const b = template('img:1', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: 'zzz' });
    expect(templatesEqualIgnoringHash(a, b)).toBe(true);
    expect(templatesEqualIgnoringHash(a, template('img:2'))).toBe(false);
    expect(templatesEqualIgnoringHash(a, template('img:1', { app: 'web', other: 'x' }))).toBe(false);
  });
});

describe('new and old ReplicaSets', () => {
  test('the oldest matching ReplicaSet is the new one; the rest are old, oldest first', () => {
    const d = deployment();
    const a = rs('a', 1, { image: 'img:1', created: T0 + 20 * SEC });
    const b = rs('b', 1, { image: 'img:1', created: T0 + 10 * SEC });
    const c = rs('c', 1, { image: 'img:0', created: T0 });
    expect(findNewReplicaSet(d, [a, b, c])?.name).toBe('b');
    expect(findOldReplicaSets(d, [a, b, c]).map((r) => r.name)).toEqual(['c', 'a']);
    expect(findNewReplicaSet(d, [c])).toBeUndefined();
  });

  test('same creation time: by name', () => {
    const d = deployment();
    expect(findNewReplicaSet(d, [rs('y', 1), rs('x', 1)])?.name).toBe('x');
  });
});

// ---------------------------------------------------------------------------------------------
// revisions and annotations

describe('revisions and annotations', () => {
  test('revisionOf and maxRevision', () => {
    expect(revisionOf(rs('a', 1))).toBe(0n);
    expect(revisionOf(rs('a', 1, { revision: 4 }))).toBe(4n);
    expect(revisionOf(rs('a', 1, { annotations: { [REVISION_ANNOTATION]: 'x' } }))).toBeUndefined();
    expect(maxRevision([rs('a', 1, { revision: 4 }), rs('b', 1, { annotations: { [REVISION_ANNOTATION]: 'x' } }), rs('c', 1, { revision: 7 })])).toBe(7n);
    expect(maxRevision([])).toBe(0n);
    // int64 as upstream's strconv.ParseInt: exact beyond 2^53, and nothing beyond 2^63 - 1
    expect(revisionOf(rs('a', 1, { annotations: { [REVISION_ANNOTATION]: '3546343826724305832' } }))).toBe(3546343826724305832n);
    expect(revisionOf(rs('a', 1, { annotations: { [REVISION_ANNOTATION]: '9223372036854775808' } }))).toBeUndefined();
    expect(revisionOf(rs('a', 1, { annotations: { [REVISION_ANNOTATION]: '-9223372036854775808' } }))).toBe(-(2n ** 63n));
  });

  test('annotation copy skips the controller-owned and kubectl keys', () => {
    const src: Record<string, string> = { team: 'a', [REVISION_ANNOTATION]: '9', 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    for (const k of ANNOTATIONS_NOT_COPIED) src[k] = 'skip';
    src.team = 'a';
    const { annotations, changed } = copyDeploymentAnnotations(src, { keep: 'me', team: 'old' });
    expect(changed).toBe(true);
    expect(annotations).toEqual({ keep: 'me', team: 'a' });
    expect(ANNOTATIONS_NOT_COPIED.size).toBe(6);
    expect(ANNOTATIONS_NOT_COPIED.has('deprecated.deployment.rollback.to')).toBe(true);
    expect(copyDeploymentAnnotations({ team: 'a' }, { team: 'a' }).changed).toBe(false);
  });

  test('a new ReplicaSet gets revision, desired-replicas and max-replicas', () => {
    const d = deployment({ replicas: 4, annotations: { team: 'a' } });
    const { annotations } = newRevisionAnnotations(d, {}, '3', false);
    expect(annotations).toEqual({ team: 'a', [REVISION_ANNOTATION]: '3', [DESIRED_REPLICAS_ANNOTATION]: '4', [MAX_REPLICAS_ANNOTATION]: '5' });
    expect(annotations[REVISION_HISTORY_ANNOTATION]).toBeUndefined();
  });

  test('an existing ReplicaSet that gets a higher revision records the old one in revision-history', () => {
    const d = deployment();
    let r = newRevisionAnnotations(d, { [REVISION_ANNOTATION]: '1' }, '3', true);
    expect(r.changed).toBe(true);
    expect(r.annotations[REVISION_ANNOTATION]).toBe('3');
    expect(r.annotations[REVISION_HISTORY_ANNOTATION]).toBe('1');
    r = newRevisionAnnotations(d, r.annotations, '5', true);
    expect(r.annotations[REVISION_HISTORY_ANNOTATION]).toBe('1,3');
    // no lower revision, no change
    expect(newRevisionAnnotations(d, r.annotations, '5', true).changed).toBe(false);
    expect(newRevisionAnnotations(d, r.annotations, '2', true).changed).toBe(false);
    // an existing RS never gets replica annotations from this step
    expect(r.annotations[DESIRED_REPLICAS_ANNOTATION]).toBeUndefined();
  });

  test('revision-history drops the oldest entries beyond 2000 characters', () => {
    const entries = Array.from({ length: 400 }, (_, i) => String(1000 + i)); // 400 * 5 - 1 = 1999 chars
    const history = entries.join(',');
    expect(history.length).toBe(1999);
    const r = newRevisionAnnotations(deployment(), { [REVISION_ANNOTATION]: '2000', [REVISION_HISTORY_ANNOTATION]: history }, '2001', true);
    const out = r.annotations[REVISION_HISTORY_ANNOTATION].split(',');
    expect(out[out.length - 1]).toBe('2000');
    expect(out[0]).toBe('1001');
    expect(r.annotations[REVISION_HISTORY_ANNOTATION].length).toBeLessThanOrEqual(2000);
  });

  test('an unparseable revision on the ReplicaSet leaves it alone', () => {
    const r = newRevisionAnnotations(deployment({ annotations: { team: 'a' } }), { [REVISION_ANNOTATION]: 'x' }, '3', true);
    expect(r.changed).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// rolling update math

describe('rolling update math', () => {
  test('newRSNewReplicas grows by what surge leaves room for', () => {
    const d = deployment({ replicas: 10, strategy: rolling(2, 0) });
    const old = rs('old', 10);
    const nw = rs('new', 0);
    expect(newRSReplicasForRolling(d, [old, nw], nw)).toBe(2);
    expect(newRSReplicasForRolling(d, [rs('old', 9), rs('new', 2)], rs('new', 2))).toBe(3);
    expect(newRSReplicasForRolling(d, [rs('old', 10), rs('new', 2)], rs('new', 2))).toBe(2); // at max
    // never past replicas
    expect(newRSReplicasForRolling(d, [rs('old', 0), rs('new', 9)], rs('new', 9))).toBe(10);
    // Recreate: straight to replicas
    expect(newRSNewReplicas(deployment({ replicas: 5, strategy: { type: 'Recreate' } }), [old, nw], nw).replicas).toBe(5);
  });

  test('old scale-down honours maxUnavailable over all pods', () => {
    // replicas 10, maxUnavailable 2: 8 must stay available
    const d = deployment({ replicas: 10, strategy: rolling(0, 2) });
    const old = rs('old', 10);
    const nw = rs('new', 0);
    const r = oldReplicaSetsScaleDown(d, [old, nw], [old], nw);
    expect(r.steps).toEqual([expect.objectContaining({ name: 'old', from: 10, to: 8 })]);
    expect(r.scaledDown).toBe(2);
  });

  test('unavailable pods of the new RS hold the scale-down back', () => {
    const d = deployment({ replicas: 10, strategy: rolling(0, 2) });
    const old = rs('old', 8);
    const nw = rs('new', 2, { available: 0 });
    // all 10, min available 8, new RS has 2 unavailable -> nothing may go
    expect(oldReplicaSetsScaleDown(d, [old, nw], [old], nw).steps).toEqual([]);
  });

  test('unhealthy old replicas are cleaned up first, oldest RS first', () => {
    const d = deployment({ replicas: 10, strategy: rolling(0, 2) });
    const older = rs('older', 3, { created: T0, available: 1 });
    const old = rs('old', 7, { created: T0 + SEC, available: 7 });
    const nw = rs('new', 0, { created: T0 + 2 * SEC });
    const r = oldReplicaSetsScaleDown(d, [older, old, nw], [older, old], nw);
    // maxScaledDown = 10 - 8 - 0 = 2: the 2 unavailable of 'older' go; then available 8 = min, nothing more
    expect(r.steps.map((s) => [s.name, s.from, s.to])).toEqual([['older', 3, 1]]);
    expect(r.scaledDown).toBe(2);
  });

  test('more available than spec on an old RS stops the cleanup as upstream does', () => {
    const d = deployment({ replicas: 2, strategy: rolling(1, 1) });
    const old = rs('old', 1, { available: 2, statusReplicas: 2 });
    const nw = rs('new', 2, { created: T0 + SEC, available: 2 });
    const r = oldReplicaSetsScaleDown(d, [old, nw], [old], nw);
    expect(r.error).toMatch(/invalid request to scale down/);
    expect(r.scaledDown).toBe(0);
  });

  test('a revision beyond 2^53 is carried exactly into the next one (upstream\'s int64)', () => {
    const s = new Sim(deployment({ replicas: 4, strategy: rolling(1, 1), generation: 2 }), [
      rs('web-old', 4, { image: 'img:0', annotations: { [REVISION_ANNOTATION]: '3546343826724305832' } }),
    ]);
    s.d.status = { ...emptyStatus(), observedGeneration: 1, replicas: 4, updatedReplicas: 4, readyReplicas: 4, availableReplicas: 4 };
    const p = s.plan();
    expect(ofType(p, 'createReplicaSet')[0].annotations[REVISION_ANNOTATION]).toBe('3546343826724305833');
    expect(ofType(p, 'updateDeploymentAnnotations')[0].annotations[REVISION_ANNOTATION]).toBe('3546343826724305833');
  });

  test('maxSurge 1 / maxUnavailable 1 from 4 replicas: exact first round', () => {
    const s = new Sim(deployment({ replicas: 4, strategy: rolling(1, 1), generation: 2 }), [rs('web-old', 4, { image: 'img:0', revision: 1 })]);
    s.d.status = { ...emptyStatus(), observedGeneration: 1, replicas: 4, updatedReplicas: 4, readyReplicas: 4, availableReplicas: 4 };
    const p = s.plan();
    // create new RS with 1 (surge), record revision 2 + NewReplicaSetCreated, then old 4 -> 3 in the same sync;
    // the final status write of that sync would conflict upstream, so it is not in the plan
    expect(p.actions.map((a) => a.type)).toEqual(['createReplicaSet', 'updateDeploymentAnnotations', 'updateDeploymentStatus', 'scaleReplicaSet']);
    const create = ofType(p, 'createReplicaSet')[0];
    expect(create.replicas).toBe(1);
    expect(create.annotations[REVISION_ANNOTATION]).toBe('2');
    expect(create.annotations[DESIRED_REPLICAS_ANNOTATION]).toBe('4');
    expect(create.annotations[MAX_REPLICAS_ANNOTATION]).toBe('5');
    expect(create.labels[POD_TEMPLATE_HASH_LABEL]).toBe(create.hash);
    expect(create.template.metadata?.labels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: create.hash });
    expect(create.selector.matchLabels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: create.hash });
    expect(create.name).toBe(`web-${create.hash}`);
    expect(create.ownerReferences[0]).toMatchObject({ kind: 'Deployment', uid: 'd-uid', controller: true });
    expect(ofType(p, 'updateDeploymentAnnotations')[0].annotations[REVISION_ANNOTATION]).toBe('2');
    const st = ofType(p, 'updateDeploymentStatus')[0].status;
    expect(cond(st, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetCreated', message: `Created new replica set "${create.name}"` });
    const scale = ofType(p, 'scaleReplicaSet')[0];
    expect(scale).toMatchObject({ name: 'web-old', replicas: 3 });
    expect(scale.annotations[DESIRED_REPLICAS_ANNOTATION]).toBe('4');
    expect(scale.reason).toMatch(/scale down/);
  });

  test.each([
    [4, 1, 1],
    [10, '25%', '25%'],
    [10, 0, 3],
    [10, 3, 0],
    [5, '50%', 0],
    [7, 0, 0],
    [1, 1, 0],
    [3, '25%', '25%'],
  ] as Array<[number, IntOrPercent, IntOrPercent]>)('rolling update %s replicas surge %s unavailable %s converges within bounds', (replicas, surgeV, unavailV) => {
    const s = freshSim({ replicas, strategy: rolling(surgeV, unavailV) }, 'nextTick');
    const firstRS = s.newRS() as ReplicaSetView;
    expect(firstRS.replicas).toBe(replicas);
    const { maxSurge: ms, maxUnavailable: mu } = resolveFenceposts(surgeV, unavailV, replicas);
    s.setTemplate(template('img:2'));
    const rounds = s.converge('nextTick', (sim) => {
      expect(sumSpec(sim)).toBeLessThanOrEqual(replicas + ms);
      expect(sumAvailable(sim)).toBeGreaterThanOrEqual(Math.min(replicas - mu, replicas));
    });
    expect(rounds).toBeGreaterThan(1);
    const nw = s.newRS() as ReplicaSetView;
    expect(nw.name).not.toBe(firstRS.name);
    expect(nw.replicas).toBe(replicas);
    expect(s.get(firstRS.name).replicas).toBe(0);
    expect(nw.annotations[REVISION_ANNOTATION]).toBe('2');
    expect(s.d.annotations[REVISION_ANNOTATION]).toBe('2');
    expect(s.d.status).toMatchObject({ replicas, updatedReplicas: replicas, availableReplicas: replicas, unavailableReplicas: 0, observedGeneration: s.d.generation });
    expect(cond(s.d.status, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${nw.name}" has successfully progressed.` });
    expect(cond(s.d.status, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(deploymentComplete(s.d, s.d.status)).toBe(true);
  });

  test('step by step: 3 replicas, maxSurge 1, maxUnavailable 0', () => {
    const s = freshSim({ replicas: 3, strategy: rolling(1, 0) }, 'instant');
    const oldName = (s.newRS() as ReplicaSetView).name;
    s.setTemplate(template('img:2'));
    const sizes: Array<[number, number]> = [];
    s.converge('instant', (sim) => {
      const nw = sim.newRS();
      sizes.push([sim.get(oldName).replicas, nw ? nw.replicas : 0]);
    });
    // surge one new pod, then one old goes, and so on
    const distinct = sizes.filter((v, i) => i === 0 || v[0] !== sizes[i - 1][0] || v[1] !== sizes[i - 1][1]);
    expect(distinct).toEqual([
      [3, 1],
      [2, 1],
      [2, 2],
      [1, 2],
      [1, 3],
      [0, 3],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// first rollout, revisions across template changes

describe('planDeployment: first rollout and revisions', () => {
  test('a new Deployment creates its ReplicaSet and converges', () => {
    const s = new Sim(deployment({ replicas: 3 }));
    const p = s.round();
    const create = ofType(p, 'createReplicaSet')[0];
    // 25% of 3 surge = 1: total may reach 4, new RS capped at replicas
    expect(create.replicas).toBe(3);
    expect(create.annotations[REVISION_ANNOTATION]).toBe('1');
    s.converge();
    expect(s.d.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 });
    expect(s.d.status.terminatingReplicas).toBe(0);
    expect(cond(s.d.status, 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
  });

  test('going back to an old template reuses its RS with a new revision and revision-history', () => {
    const s = freshSim({ replicas: 2 });
    const rs1 = (s.newRS() as ReplicaSetView).name;
    s.setTemplate(template('img:2'));
    s.converge();
    const rs2 = (s.newRS() as ReplicaSetView).name;
    expect(s.get(rs2).annotations[REVISION_ANNOTATION]).toBe('2');
    s.setTemplate(template('img:1'));
    // first round: only the revision sync of the old RS (upstream's second write of it in the sync conflicts)
    const p = s.round();
    expect(p.actions.map((a) => a.type)).toEqual(['updateReplicaSetAnnotations']);
    const upd = ofType(p, 'updateReplicaSetAnnotations')[0];
    expect(upd.name).toBe(rs1);
    expect(upd.annotations[REVISION_ANNOTATION]).toBe('3');
    expect(upd.annotations[REVISION_HISTORY_ANNOTATION]).toBe('1');
    s.converge();
    expect((s.newRS() as ReplicaSetView).name).toBe(rs1);
    expect(s.get(rs1).replicas).toBe(2);
    expect(s.get(rs2).replicas).toBe(0);
    expect(s.d.annotations[REVISION_ANNOTATION]).toBe('3');
    expect(s.rss.length).toBe(2);
  });

  test('Deployment annotations are copied to the new RS, minus the skip list', () => {
    const s = new Sim(
      deployment({ annotations: { team: 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}', [REVISION_ANNOTATION]: '7' } }),
    );
    const create = ofType(s.plan(), 'createReplicaSet')[0];
    expect(create.annotations.team).toBe('x');
    expect(create.annotations['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    expect(create.annotations[REVISION_ANNOTATION]).toBe('1');
  });

  test('a new Deployment annotation reaches the existing new RS; minReadySeconds too', () => {
    const s = freshSim({ replicas: 2 });
    s.d = { ...s.d, annotations: { ...s.d.annotations, owner: 'team-b' }, minReadySeconds: 5 };
    const p = s.round();
    const upd = ofType(p, 'updateReplicaSetAnnotations')[0];
    expect(upd.annotations.owner).toBe('team-b');
    expect(upd.minReadySeconds).toBe(5);
    expect(s.converge()).toBeGreaterThanOrEqual(1);
  });

  test('hash collision: an RS already has the name with another template -> collisionCount goes up', () => {
    const d = deployment({ replicas: 2 });
    const hash = podTemplateHash(d.template);
    const squatter = { ...rs(replicaSetName('web', hash), 0, { image: 'other', revision: 1 }), template: template('other') };
    const s = new Sim(d, [squatter]);
    const p = s.round();
    expect(p.collisionCount).toBe(1);
    expect(ofType(p, 'createReplicaSet')).toHaveLength(0);
    expect(ofType(p, 'updateDeploymentStatus')[0].status.collisionCount).toBe(1);
    const p2 = s.round();
    const create = ofType(p2, 'createReplicaSet')[0];
    expect(create.hash).toBe(podTemplateHash(d.template, 1));
    expect(create.name).not.toBe(squatter.name);
    s.converge();
    expect(s.d.status.collisionCount).toBe(1);
  });

  test('resolveCreateConflict: our own matching RS vs a collision', () => {
    const d = deployment();
    const mine = { ...rs('web-x', 1), template: template('img:1', { app: 'web', [POD_TEMPLATE_HASH_LABEL]: 'x' }) };
    expect(resolveCreateConflict(d, mine).actions).toEqual([]);
    const foreign = { ...mine, ownerReferences: [] };
    const r = resolveCreateConflict(d, foreign);
    expect(r.collisionCount).toBe(1);
    expect(r.actions[0]).toMatchObject({ type: 'updateDeploymentStatus', status: { collisionCount: 1 } });
  });
});

// ---------------------------------------------------------------------------------------------
// Recreate

describe('Recreate', () => {
  test('old RSs go to 0 first; the new RS appears only when no old pod runs', () => {
    const s = freshSim({ replicas: 3, strategy: { type: 'Recreate' } });
    const oldName = (s.newRS() as ReplicaSetView).name;
    s.setTemplate(template('img:2'));

    let p = s.plan();
    expect(p.actions.map((a) => a.type)).toEqual(['scaleReplicaSet', 'updateDeploymentStatus']);
    expect(ofType(p, 'scaleReplicaSet')[0]).toMatchObject({ name: oldName, replicas: 0 });
    s.apply(p);
    // the RS controller has not caught up: status.replicas still 3
    p = s.plan();
    expect(ofType(p, 'createReplicaSet')).toHaveLength(0);
    s.apply(p);
    s.tickReplicaSets('instant');
    // RS status says 0, but pods are still terminating
    s.oldPodsRunning = 2;
    p = s.plan();
    expect(ofType(p, 'createReplicaSet')).toHaveLength(0);
    s.apply(p);
    s.oldPodsRunning = 0;
    p = s.plan();
    const create = ofType(p, 'createReplicaSet')[0];
    expect(create.replicas).toBe(3);
    expect(create.annotations[MAX_REPLICAS_ANNOTATION]).toBe('3');
    s.apply(p);
    s.tickReplicaSets('instant');
    s.converge();
    expect(s.get(oldName).replicas).toBe(0);
    expect((s.newRS() as ReplicaSetView).replicas).toBe(3);
    expect(cond(s.d.status, 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
    expect(cond(s.d.status, 'Available')?.status).toBe('True');
  });

  test('Available needs every replica under Recreate', () => {
    const d = deployment({ replicas: 3, strategy: { type: 'Recreate' } });
    const s = calculateDeploymentStatus(d, [rs('a', 3, { available: 2 })], rs('a', 3, { available: 2 }), T0);
    expect(cond(s, 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' });
  });
});

// ---------------------------------------------------------------------------------------------
// proportional scaling (cases after upstream's TestScale)

describe('proportional scaling', () => {
  // max-replicas annotation reflects the size before the change: old replicas + old surge
  function scaleCase(newReplicas: number, oldReplicas: number, surge: number, oldSurge: number, rss: ReplicaSetView[], newName?: string) {
    const d = deployment({ replicas: newReplicas, strategy: rolling(surge, 0) });
    const annotated = rss.map((r) => withReplicaAnnotations(r, oldReplicas, oldReplicas + oldSurge));
    const newRS = annotated.find((r) => r.name === newName);
    const olds = annotated.filter((r) => r.name !== newName);
    const sizes = proportionalSizes(d, newRS, olds);
    const out: Record<string, number> = {};
    for (const r of annotated) out[r.name] = r.replicas;
    for (const { rs: r, size } of sizes) out[r.name] = size;
    return out;
  }
  const tNew = T0 + 2 * 3600 * SEC;
  const tOld = T0 + 3600 * SEC;
  const tOlder = T0;

  test('5 -> 10 doubles both', () => {
    expect(scaleCase(10, 5, 0, 0, [rs('v2', 2, { created: tNew }), rs('v1', 3, { created: tOld })], 'v2')).toEqual({ v2: 4, v1: 6 });
  });
  test('5 -> 3', () => {
    expect(scaleCase(3, 5, 0, 0, [rs('v2', 2, { created: tNew }), rs('v1', 3, { created: tOld })], 'v2')).toEqual({ v2: 1, v1: 2 });
  });
  test('9 -> 4', () => {
    expect(scaleCase(4, 9, 0, 0, [rs('v2', 8, { created: tNew }), rs('v1', 1, { created: tOld })], 'v2')).toEqual({ v2: 4, v1: 0 });
  });
  test('7 -> 10 over three RSs', () => {
    expect(
      scaleCase(10, 7, 0, 0, [rs('v3', 2, { created: tNew }), rs('v2', 3, { created: tOld }), rs('v1', 2, { created: tOlder })], 'v3'),
    ).toEqual({ v3: 3, v2: 4, v1: 3 });
  });
  test('13 -> 8 over three RSs', () => {
    expect(
      scaleCase(8, 13, 0, 0, [rs('v3', 2, { created: tNew }), rs('v2', 8, { created: tOld }), rs('v1', 3, { created: tOlder })], 'v3'),
    ).toEqual({ v3: 1, v2: 5, v1: 2 });
  });
  test('leftover on the way up goes to the newest of equal sizes', () => {
    expect(
      scaleCase(4, 3, 0, 0, [rs('v3', 1, { created: tNew }), rs('v2', 1, { created: tOld }), rs('v1', 1, { created: tOlder })], 'v3'),
    ).toEqual({ v3: 2, v2: 1, v1: 1 });
  });
  test('leftover on the way down comes from the oldest of equal sizes', () => {
    expect(
      scaleCase(2, 3, 0, 0, [rs('v3', 1, { created: tNew }), rs('v2', 1, { created: tOld }), rs('v1', 1, { created: tOlder })], 'v3'),
    ).toEqual({ v3: 1, v2: 1, v1: 0 });
  });
  test('without a new RS the latest old one takes the leftover', () => {
    expect(scaleCase(5, 4, 0, 0, [rs('v2', 2, { created: tOld }), rs('v1', 2, { created: tOlder })])).toEqual({ v2: 3, v1: 2 });
  });
  test('to zero', () => {
    expect(
      scaleCase(0, 6, 0, 0, [rs('v3', 3, { created: tNew }), rs('v2', 2, { created: tOld }), rs('v1', 1, { created: tOlder })], 'v3'),
    ).toEqual({ v3: 0, v2: 0, v1: 0 });
  });
  test('with surge pods: 10 -> 20, surge 2', () => {
    expect(scaleCase(20, 10, 2, 2, [rs('v2', 6, { created: tNew }), rs('v1', 6, { created: tOld })], 'v2')).toEqual({ v2: 11, v1: 11 });
  });
  test('size and surge change together: 10 (surge 3) -> 50 (surge 6)', () => {
    expect(scaleCase(50, 10, 6, 3, [rs('v2', 5, { created: tNew }), rs('v1', 8, { created: tOld })], 'v2')).toEqual({ v2: 22, v1: 34 });
  });

  test('fraction falls back to status.replicas without a max-replicas annotation', () => {
    const d = deployment({ replicas: 10, strategy: rolling(0, 1), status: { ...emptyStatus(), replicas: 5 } });
    expect(getReplicaSetFraction(rs('a', 3), d)).toBe(3);
    expect(getReplicaSetFraction(rs('a', 3), { ...d, status: emptyStatus() })).toBe(0);
  });

  test('isScalingEvent and single-RS resize', () => {
    const d = deployment({ replicas: 5 });
    const a = withReplicaAnnotations(rs('a', 3), 3, 4);
    expect(isScalingEvent(d, [a])).toBe(true);
    expect(isScalingEvent(d, [withReplicaAnnotations(rs('a', 3), 5, 7)])).toBe(false);
    expect(isScalingEvent(d, [withReplicaAnnotations(rs('a', 0), 3, 4)])).toBe(false); // inactive RS ignored
    expect(findActiveOrLatest(undefined, [rs('x', 0, { created: T0 }), rs('y', 0, { created: T0 + SEC })])?.name).toBe('y');
  });

  test('a resize mid-rollout is spread proportionally by planDeployment', () => {
    // replicas 10 -> 20 while v1 (old) has 6 and v2 (new) 6, surge 2
    const d0 = deployment({ replicas: 20, strategy: rolling(2, 0), generation: 3, template: template('img:2') });
    d0.status = { ...emptyStatus(), observedGeneration: 2, replicas: 12, updatedReplicas: 6, availableReplicas: 12, readyReplicas: 12 };
    const v1 = withReplicaAnnotations(rs('v1', 6, { image: 'img:1', created: tOld, revision: 1 }), 10, 12);
    const v2 = withReplicaAnnotations(rs('v2', 6, { image: 'img:2', created: tNew, revision: 2 }), 10, 12);
    const then = formatTime(T0 - 10 * SEC);
    d0.status.conditions = [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'ReplicaSet "v2" is progressing.', lastUpdateTime: then, lastTransitionTime: then }];
    const s = new Sim({ ...d0, annotations: { [REVISION_ANNOTATION]: '2' } }, [v1, v2]);
    const p = s.plan();
    const scales = ofType(p, 'scaleReplicaSet');
    expect(Object.fromEntries(scales.map((a) => [a.name, a.replicas]))).toEqual({ v1: 11, v2: 11 });
    for (const a of scales) {
      expect(a.annotations[DESIRED_REPLICAS_ANNOTATION]).toBe('20');
      expect(a.annotations[MAX_REPLICAS_ANNOTATION]).toBe('22');
      expect(a.reason).toMatch(/proportional/);
    }
    // a scaling event writes plain status: Progressing is not re-evaluated
    const st = ofType(p, 'updateDeploymentStatus')[0].status;
    expect(cond(st, 'Progressing')).toMatchObject({ reason: 'ReplicaSetUpdated', lastUpdateTime: then });
    expect(st.observedGeneration).toBe(3);
    s.apply(p);
    s.tickReplicaSets('instant');
    s.converge();
    expect(s.get('v2').replicas).toBe(20);
    expect(s.get('v1').replicas).toBe(0);
  });

  test('saturated new RS: old RSs go to 0', () => {
    const d = deployment({ replicas: 3, strategy: rolling(1, 0), template: template('img:2') });
    const v2 = withReplicaAnnotations(rs('v2', 3, { image: 'img:2', created: tNew }), 3, 4);
    expect(isSaturated(d, v2)).toBe(true);
    expect(isSaturated(d, { ...v2, status: { ...v2.status, availableReplicas: 2 } })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// status and conditions

describe('status and conditions', () => {
  test('counters, unavailable from spec totals, observedGeneration, collisionCount', () => {
    const d = deployment({ replicas: 5, generation: 4, status: { ...emptyStatus(), collisionCount: 2 } });
    const a = rs('a', 3, { statusReplicas: 3, available: 2 });
    const b = rs('b', 3, { statusReplicas: 2, available: 1 });
    const s = calculateDeploymentStatus(d, [a, b], b, T0);
    expect(s).toMatchObject({
      observedGeneration: 4,
      replicas: 5,
      updatedReplicas: 2,
      readyReplicas: 3,
      availableReplicas: 3,
      unavailableReplicas: 3, // 6 spec - 3 available
      collisionCount: 2,
      terminatingReplicas: 0,
    });
    // 3 available < 5 - 1
    expect(cond(s, 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable', lastUpdateTime: formatTime(T0) });
  });

  test('terminatingReplicas is left out when an observed RS does not report it', () => {
    const d = deployment();
    const a = rs('a', 1);
    const b = rs('b', 1);
    delete b.status.terminatingReplicas;
    expect(calculateDeploymentStatus(d, [a, b], a, T0).terminatingReplicas).toBeUndefined();
    b.status.observedGeneration = 0;
    expect(calculateDeploymentStatus(d, [a, b], a, T0).terminatingReplicas).toBe(0);
    a.status.terminatingReplicas = 2;
    expect(calculateDeploymentStatus(d, [a, b], a, T0).terminatingReplicas).toBe(2);
  });

  test('Available True keeps its times while it stays True', () => {
    const old = formatTime(T0 - 3600 * SEC);
    const d = deployment({
      replicas: 2,
      status: {
        ...emptyStatus(),
        conditions: [
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.', lastUpdateTime: old, lastTransitionTime: old },
        ],
      },
    });
    const s = calculateDeploymentStatus(d, [rs('a', 2)], rs('a', 2), T0);
    expect(cond(s, 'Available')).toMatchObject({ lastUpdateTime: old, lastTransitionTime: old });
  });

  test('setCondition: same status new reason keeps lastTransitionTime and moves to the end', () => {
    const old = formatTime(T0 - 100 * SEC);
    const s: DeploymentStatus = {
      ...emptyStatus(),
      conditions: [
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated', lastUpdateTime: old, lastTransitionTime: old },
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', lastUpdateTime: old, lastTransitionTime: old },
      ],
    };
    setCondition(s, { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', lastUpdateTime: formatTime(T0), lastTransitionTime: formatTime(T0) });
    expect(s.conditions.map((c) => c.type)).toEqual(['Available', 'Progressing']);
    expect(s.conditions[1]).toMatchObject({ reason: 'ReplicaSetUpdated', lastUpdateTime: formatTime(T0), lastTransitionTime: old });
  });

  function midRollout(progressing: DeploymentCondition | undefined, over: Partial<DeploymentView> = {}) {
    const d = deployment({
      replicas: 4,
      strategy: rolling(1, 1),
      template: template('img:2'),
      status: {
        ...emptyStatus(),
        observedGeneration: 1,
        replicas: 5,
        updatedReplicas: 1,
        readyReplicas: 4,
        availableReplicas: 4,
        unavailableReplicas: 1,
        conditions: progressing ? [progressing] : [],
      },
      ...over,
    });
    const oldRS = rs('v1', 4, { image: 'img:1', created: T0 - 100 * SEC });
    const newRS = rs('v2', 1, { image: 'img:2', created: T0 - 50 * SEC, available: 0 });
    return { d, all: [oldRS, newRS], newRS };
  }

  test('ReplicaSetUpdated when the status moved forward: lastUpdateTime refreshed, True transition kept', () => {
    const then = formatTime(T0 - 30 * SEC);
    const { d, all } = midRollout({ type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated', message: 'x', lastUpdateTime: then, lastTransitionTime: then });
    const newRS = { ...all[1], status: { ...all[1].status, availableReplicas: 1, readyReplicas: 1 } };
    const s = calculateRolloutStatus(d, [all[0], newRS], newRS, T0);
    expect(cond(s, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'ReplicaSetUpdated',
      message: 'ReplicaSet "v2" is progressing.',
      lastUpdateTime: formatTime(T0),
      lastTransitionTime: then,
    });
  });

  test('no progress within the deadline: unchanged, requeue at the deadline', () => {
    const then = formatTime(T0 - 100 * SEC);
    const { d, all, newRS } = midRollout({ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'ReplicaSet "v2" is progressing.', lastUpdateTime: then, lastTransitionTime: then });
    const s = calculateRolloutStatus(d, all, newRS, T0);
    expect(cond(s, 'Progressing')?.reason).toBe('ReplicaSetUpdated');
    expect(requeueForProgress(d, T0, s)).toBe(500 * SEC + SEC);
  });

  test('no progress past the deadline: ProgressDeadlineExceeded', () => {
    const then = formatTime(T0 - 601 * SEC);
    const { d, all, newRS } = midRollout({ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'm', lastUpdateTime: then, lastTransitionTime: then });
    const s = calculateRolloutStatus(d, all, newRS, T0);
    expect(cond(s, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "v2" has timed out progressing.',
      lastTransitionTime: formatTime(T0),
    });
    // exactly at the deadline is not past it
    const atDeadline = midRollout({ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'm', lastUpdateTime: formatTime(T0 - 600 * SEC), lastTransitionTime: then });
    expect(cond(calculateRolloutStatus(atDeadline.d, atDeadline.all, atDeadline.newRS, T0), 'Progressing')?.reason).toBe('ReplicaSetUpdated');
  });

  test('the plan writes ProgressDeadlineExceeded and then stops requeueing', () => {
    const then = formatTime(T0 - 700 * SEC);
    const { d, all } = midRollout({ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'm', lastUpdateTime: then, lastTransitionTime: then }, { annotations: { [REVISION_ANNOTATION]: '2' } });
    // old 3 available, new 2 not yet: 5 = replicas + surge, and 3 = replicas - maxUnavailable: stuck
    const rss = [
      withReplicaAnnotations({ ...all[0], replicas: 3, status: { ...all[0].status, replicas: 3, readyReplicas: 3, availableReplicas: 3 }, annotations: { [REVISION_ANNOTATION]: '1' } }, 4, 5),
      withReplicaAnnotations({ ...all[1], replicas: 2, status: { ...all[1].status, replicas: 2 }, annotations: { [REVISION_ANNOTATION]: '2' } }, 4, 5),
    ];
    // status already reflects the RSs except the condition
    d.status = { ...d.status, replicas: 5, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 2, terminatingReplicas: 0 };
    const s = new Sim(d, rss, T0);
    const p = s.plan();
    s.apply(p); // pods stay unavailable
    expect(p.actions.map((a) => a.type)).toEqual(['updateDeploymentStatus']);
    expect(cond(ofType(p, 'updateDeploymentStatus')[0].status, 'Progressing')?.reason).toBe('ProgressDeadlineExceeded');
    // the new RS still cannot grow (4+1 = max) and nothing may be scaled down: idle, no requeue
    const p2 = s.plan();
    expect(p2.actions).toEqual([]);
    expect(p2.requeueAfterMs).toBeUndefined();
  });

  test('progress after a timeout turns Progressing back to True', () => {
    const then = formatTime(T0 - 700 * SEC);
    const { d, all } = midRollout({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'm', lastUpdateTime: then, lastTransitionTime: then });
    const newRS = { ...all[1], status: { ...all[1].status, availableReplicas: 1, readyReplicas: 1 } };
    const s = calculateRolloutStatus(d, [all[0], newRS], newRS, T0);
    expect(cond(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'ReplicaSetUpdated', lastTransitionTime: formatTime(T0) });
  });

  test('no deadline: Progressing removed and no requeue', () => {
    const then = formatTime(T0 - 700 * SEC);
    const { d, all, newRS } = midRollout({ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'm', lastUpdateTime: then, lastTransitionTime: then }, { progressDeadlineSeconds: null });
    const s = calculateRolloutStatus(d, all, newRS, T0);
    expect(cond(s, 'Progressing')).toBeUndefined();
    expect(requeueForProgress(d, T0, s)).toBeUndefined();
  });

  test('complete with nothing old left keeps the NewReplicaSetAvailable condition untouched', () => {
    const then = formatTime(T0 - 700 * SEC);
    const d = deployment({
      replicas: 2,
      status: {
        ...emptyStatus(),
        conditions: [{ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'old msg', lastUpdateTime: then, lastTransitionTime: then }],
      },
    });
    const r = rs('v1', 2, { available: 1 });
    const s = calculateRolloutStatus(d, [r], r, T0);
    expect(cond(s, 'Progressing')).toMatchObject({ reason: 'NewReplicaSetAvailable', message: 'old msg', lastUpdateTime: then });
  });

  test('ReplicaFailure is copied from the new RS, else from any RS, and removed when gone', () => {
    const when = formatTime(T0 - 5 * SEC);
    const d = deployment({ replicas: 1 });
    const failing = rs('v2', 1, { available: 0, statusReplicas: 0 });
    failing.status.conditions = [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota', lastTransitionTime: when }];
    const s = calculateRolloutStatus(d, [failing], failing, T0);
    expect(cond(s, 'ReplicaFailure')).toEqual({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota', lastUpdateTime: when, lastTransitionTime: when });
    const other = rs('v1', 0);
    const s2 = calculateRolloutStatus(d, [failing, other], other, T0);
    expect(cond(s2, 'ReplicaFailure')?.message).toBe('quota');
    const healthy = rs('v1', 1);
    const s3 = calculateRolloutStatus({ ...d, status: s }, [healthy], healthy, T0);
    expect(cond(s3, 'ReplicaFailure')).toBeUndefined();
  });

  test('FoundNewReplicaSet when the new RS exists but no Progressing condition does', () => {
    const s = freshSim({ replicas: 1 });
    const conds = s.d.status.conditions.filter((c) => c.type !== 'Progressing');
    s.d = { ...s.d, status: { ...s.d.status, conditions: conds } };
    const p = s.plan();
    const st = ofType(p, 'updateDeploymentStatus')[0].status;
    expect(cond(st, 'Progressing')).toMatchObject({ status: 'True', reason: 'FoundNewReplicaSet', message: `Found new replica set "${(s.newRS() as ReplicaSetView).name}"` });
  });

  test('an unchanged status is not written', () => {
    const s = freshSim({ replicas: 2 });
    expect(s.plan().actions).toEqual([]);
  });

  test('a Deployment being deleted only syncs status', () => {
    const s = freshSim({ replicas: 2 });
    s.setTemplate(template('img:2'));
    s.d = { ...s.d, deletionTimestamp: formatTime(T0) };
    const p = s.plan();
    expect(p.actions.map((a) => a.type)).toEqual(['updateDeploymentStatus']);
    expect(ofType(p, 'updateDeploymentStatus')[0].status.observedGeneration).toBe(2);
  });

  test('an empty selector only bumps observedGeneration', () => {
    const s = new Sim(deployment({ selector: {}, generation: 3 }));
    const p = s.plan();
    expect(p.actions).toEqual([expect.objectContaining({ type: 'updateDeploymentStatus', status: expect.objectContaining({ observedGeneration: 3 }) })]);
    expect(new Sim(deployment({ selector: { matchLabels: { 'bad key!': 'x' } } })).plan().actions).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// paused

describe('paused', () => {
  test('pausing sets Progressing Unknown DeploymentPaused and no rollout happens', () => {
    const s = freshSim({ replicas: 2 });
    s.d = { ...s.d, paused: true };
    s.setTemplate(template('img:2'));
    const p = s.round();
    const st = ofType(p, 'updateDeploymentStatus')[0].status;
    expect(cond(st, 'Progressing')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' });
    expect(ofType(p, 'createReplicaSet')).toHaveLength(0);
    s.converge();
    expect(s.rss).toHaveLength(1);
    // status still written (observedGeneration) but nothing updated
    expect(s.d.status.updatedReplicas).toBe(0);
    expect(s.d.status.observedGeneration).toBe(2);
  });

  test('resuming sets DeploymentResumed and the rollout proceeds', () => {
    const s = freshSim({ replicas: 2 });
    s.d = { ...s.d, paused: true };
    s.setTemplate(template('img:2'));
    s.converge();
    s.d = { ...s.d, paused: false };
    const p = s.round();
    expect(cond(ofType(p, 'updateDeploymentStatus')[0].status, 'Progressing')).toMatchObject({ status: 'Unknown', reason: 'DeploymentResumed', message: 'Deployment is resumed' });
    s.converge();
    expect((s.newRS() as ReplicaSetView).replicas).toBe(2);
    expect(cond(s.d.status, 'Progressing')?.reason).toBe('NewReplicaSetAvailable');
  });

  test('paused without a progress deadline: no Progressing condition is touched', () => {
    const s = freshSim({ replicas: 2, progressDeadlineSeconds: null });
    expect(cond(s.d.status, 'Progressing')).toBeUndefined();
    s.d = { ...s.d, paused: true };
    expect(s.plan().actions).toEqual([]);
  });

  test('scaling still happens while paused, proportionally mid-rollout', () => {
    const s = freshSim({ replicas: 4, strategy: rolling(1, 1) }, 'nextTick');
    const v1 = (s.newRS() as ReplicaSetView).name;
    s.setTemplate(template('img:2'));
    // two rounds into the rollout, then pause
    s.round('nextTick');
    s.round('nextTick');
    s.d = { ...s.d, paused: true };
    s.converge('nextTick');
    const v2 = (s.newRS() as ReplicaSetView).name;
    const before = { v1: s.get(v1).replicas, v2: s.get(v2).replicas };
    expect(before.v1).toBeGreaterThan(0);
    expect(before.v2).toBeGreaterThan(0);
    s.setReplicas(8);
    s.converge('nextTick');
    const after = { v1: s.get(v1).replicas, v2: s.get(v2).replicas };
    expect(after.v1 + after.v2).toBe(8 + 1); // replicas + maxSurge
    expect(after.v1).toBeGreaterThan(before.v1);
    expect(after.v2).toBeGreaterThan(before.v2);
    s.d = { ...s.d, paused: false };
    s.converge('nextTick');
    expect(s.get(v2).replicas).toBe(8);
    expect(s.get(v1).replicas).toBe(0);
  });

  test('history is cleaned up while paused', () => {
    const s = freshSim({ replicas: 1, revisionHistoryLimit: 10 });
    for (const img of ['img:2', 'img:3', 'img:4']) {
      s.setTemplate(template(img));
      s.converge();
    }
    expect(s.rss).toHaveLength(4);
    s.d = { ...s.d, paused: true, revisionHistoryLimit: 1 };
    const p = s.round();
    expect(ofType(p, 'deleteReplicaSet').map((a) => a.name).length).toBe(2);
  });
});

// ---------------------------------------------------------------------------------------------
// cleanup

describe('cleanup by revisionHistoryLimit', () => {
  test('oldest revisions first, only fully scaled-down and up-to-date RSs', () => {
    const d = deployment({ revisionHistoryLimit: 1 });
    const r1 = rs('r1', 0, { revision: 1, created: T0 + 3 * SEC });
    const r2 = rs('r2', 0, { revision: 2, created: T0 + 2 * SEC });
    const r3 = rs('r3', 0, { revision: 3, created: T0 + 1 * SEC });
    expect(replicaSetsToCleanUp(d, [r3, r1, r2]).map((r) => r.name)).toEqual(['r1', 'r2']);
    // still has pods / spec / stale status / being deleted
    const busy = { ...r1, status: { ...r1.status, replicas: 1 } };
    const stale = { ...r2, generation: 5 };
    expect(replicaSetsToCleanUp(d, [r3, busy, stale])).toEqual([]);
    const deleting = { ...r1, deletionTimestamp: formatTime(T0) };
    // a deleting RS does not count toward the history either
    expect(replicaSetsToCleanUp(d, [deleting, r2, r3]).map((r) => r.name)).toEqual(['r2']);
    expect(replicaSetsToCleanUp({ ...d, revisionHistoryLimit: null }, [r1, r2, r3])).toEqual([]);
    expect(replicaSetsToCleanUp({ ...d, revisionHistoryLimit: 0 }, [r1, r2, r3]).map((r) => r.name)).toEqual(['r1', 'r2', 'r3']);
  });

  test('a completed rollout deletes RSs beyond the limit', () => {
    const s = freshSim({ replicas: 2, revisionHistoryLimit: 2 });
    for (const img of ['img:2', 'img:3', 'img:4', 'img:5']) {
      s.setTemplate(template(img));
      s.converge();
    }
    // the current RS plus two old ones
    expect(s.rss).toHaveLength(3);
    const revs = s.rss.map((r) => Number(r.annotations[REVISION_ANNOTATION])).sort();
    expect(revs).toEqual([3, 4, 5]);
    const deletes = s.history.flatMap((p) => ofType(p, 'deleteReplicaSet'));
    expect(deletes.length).toBe(2);
    expect(deletes[0].reason).toMatch(/revisionHistoryLimit 2/);
  });
});
