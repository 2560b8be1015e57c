import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { routeHarness } from '../support/routes';
import { replicaRoutes } from '../../activities/replicaset/routes';
import { RESOURCES } from '../../activities/kube/resources';
import type { KubeObject } from '../../activities/kube/projections';
import { ALL_CONTROLLERS } from '../../starter/controller-names';
import { addRunOptions, resolveRunOptions } from '../../starter/run-options';
import { KUBE_FEATURE_GATES } from '../../workers/feature-gate-table';
import {
  FeatureGateError, UPSTREAM_REQUIRED_GATES, featureEnabled, featureGateSpec, gateKey, gatesOff, parseFeatureGates, resolveFeatureGates, settingWarnings,
} from '../../workers/feature-gates';
import { CONTROLLERS } from '../../workers/registry';
import type { ReplicaOwnerWorkflowInput } from '../../workflows/replicaset/workflow';
import { podsForRanking, statusForGates } from '../../workflows/replicaset/gates';
import { rankPodsForDeletion } from '../../workflows/replicaset/logic';
import type { PodSummary, ReplicaStatus } from '../../workflows/replicaset/types';

const err = (values: string[]): string => {
  try {
    parseFeatureGates(values);
  } catch (e) {
    expect(e).toBeInstanceOf(FeatureGateError);
    return (e as Error).message;
  }
  throw new Error(`expected ${values.join(' ')} to be rejected`);
};

describe('the gate table', () => {
  test('upstream 1.35 defaults, stages and locks of the gates the controllers consult', () => {
    expect(featureGateSpec('MultiCIDRServiceAllocator')).toEqual({ name: 'MultiCIDRServiceAllocator', default: true, stage: 'GA', lockToDefault: true });
    expect(featureGateSpec('PodDeletionCost')).toEqual({ name: 'PodDeletionCost', default: true, stage: 'BETA', lockToDefault: false });
    expect(featureGateSpec('DeploymentReplicaSetTerminatingReplicas')).toMatchObject({ default: true, stage: 'BETA', lockToDefault: false });
    expect(featureGateSpec('VolumeAttributesClass')).toMatchObject({ default: true, stage: 'GA', lockToDefault: false });
    expect(featureGateSpec('SeparateTaintEvictionController')).toMatchObject({ default: true, lockToDefault: true });
    expect(featureGateSpec('JobSuccessPolicy')).toMatchObject({ default: true, stage: 'GA', lockToDefault: true });
    expect(featureGateSpec('MaxUnavailableStatefulSet')).toMatchObject({ default: false, stage: 'BETA' });
    // gates removed before 1.35 are unknown, as upstream
    expect(featureGateSpec('StatefulSetAutoDeletePVC')).toBeUndefined();
    expect(featureGateSpec('PodDisruptionConditions')).toBeUndefined();
    expect(KUBE_FEATURE_GATES.length).toBeGreaterThan(150);
  });

  test('every required gate named in the code is one upstream knows; the descriptors say what upstream\'s do', () => {
    const named = [...CONTROLLERS.flatMap((d) => d.requiredFeatureGates ?? []), ...Object.values(UPSTREAM_REQUIRED_GATES).flat()];
    for (const g of named) expect([g, featureGateSpec(g) !== undefined]).toEqual([g, true]);
    for (const c of Object.keys(UPSTREAM_REQUIRED_GATES)) expect(ALL_CONTROLLERS).toContain(c);
    const required = Object.fromEntries(CONTROLLERS.filter((d) => d.requiredFeatureGates).map((d) => [d.name, d.requiredFeatureGates]));
    expect(required).toEqual({
      'resourceclaim-controller': ['DynamicResourceAllocation'],
      'service-cidr-controller': ['MultiCIDRServiceAllocator'],
      'taint-eviction-controller': ['SeparateTaintEvictionController'],
      'volumeattributesclass-protection-controller': ['VolumeAttributesClass'],
    });
  });
});

describe('--feature-gates values', () => {
  test('comma-joined, repeated, kube:-prefixed; the last setting of a gate wins', () => {
    expect(Object.fromEntries(parseFeatureGates(['PodDeletionCost=false,MaxUnavailableStatefulSet=true', 'PodDeletionCost=true']))).toEqual({
      PodDeletionCost: true, MaxUnavailableStatefulSet: true,
    });
    expect(Object.fromEntries(parseFeatureGates(['kube:PodDeletionCost=f', 'kube:ClusterTrustBundle=1']))).toEqual({ PodDeletionCost: false, ClusterTrustBundle: true });
    expect(parseFeatureGates(['', ' PodDeletionCost = FALSE ,']).get('PodDeletionCost')).toBe(false);
    // a locked gate at its own default is fine
    expect(parseFeatureGates(['MultiCIDRServiceAllocator=true']).get('MultiCIDRServiceAllocator')).toBe(true);
  });

  test('upstream\'s errors', () => {
    expect(err(['NoSuchGate=true'])).toBe('unrecognized feature gate: NoSuchGate');
    expect(err(['MultiCIDRServiceAllocator=false'])).toBe('cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true');
    expect(err(['JobSuccessPolicy=false,SidecarContainers=false'])).toBe(
      '[cannot set feature gate JobSuccessPolicy to false, feature is locked to true, cannot set feature gate SidecarContainers to false, feature is locked to true]');
    expect(err(['PodDeletionCost'])).toBe('missing bool value for PodDeletionCost');
    expect(err(['PodDeletionCost=maybe'])).toBe('invalid value of PodDeletionCost=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax');
    expect(err(['kube:PodDeletionCost=true', 'PodDeletionCost=true'])).toBe('set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use');
    expect(err(['wardle:PodDeletionCost=true'])).toBe('component not registered: wardle');
  });

  test('resolved values: only what differs from the default; AllAlpha/AllBeta fill the gates not named', () => {
    expect(resolveFeatureGates(parseFeatureGates(['PodDeletionCost=false,VolumeAttributesClass=true']))).toEqual({ [gateKey('PodDeletionCost')]: false });
    const beta = resolveFeatureGates(parseFeatureGates(['AllBeta=false,PodDeletionCost=true']));
    expect(beta[gateKey('DeploymentReplicaSetTerminatingReplicas')]).toBe(false);
    expect(beta[gateKey('PodDeletionCost')]).toBeUndefined();
    expect(beta[gateKey('MultiCIDRServiceAllocator')]).toBeUndefined();
    expect(featureEnabled(beta, 'DeploymentReplicaSetTerminatingReplicas')).toBe(false);
    expect(featureEnabled(beta, 'PodDeletionCost')).toBe(true);
    expect(featureEnabled(undefined, 'MaxUnavailableStatefulSet')).toBe(false);
    const alpha = resolveFeatureGates(parseFeatureGates(['AllAlpha=true']));
    expect(featureEnabled(alpha, 'DRADeviceTaints')).toBe(true);
    expect(gatesOff(alpha, ['VolumeAttributesClass'])).toEqual([]);
    expect(gatesOff(resolveFeatureGates(parseFeatureGates(['VolumeAttributesClass=false'])), ['VolumeAttributesClass'])).toEqual(['VolumeAttributesClass']);
  });

  test('setting a GA gate warns as upstream does', () => {
    expect(settingWarnings(parseFeatureGates(['VolumeAttributesClass=true,PodDeletionCost=true']))).toEqual([
      'Setting GA feature gate VolumeAttributesClass=true. It will be removed in a future release.',
    ]);
  });
});

describe('run --feature-gates', () => {
  const run = (args: string[]) => resolveRunOptions(addRunOptions(new Command('run')).exitOverride().parse(args, { from: 'user' }));

  test('the values ride with the controller flags', () => {
    const o = run(['--feature-gates=PodDeletionCost=false', '--feature-gates', 'MaxUnavailableStatefulSet=true']);
    expect(o.featureGates).toEqual({ PodDeletionCost: false, MaxUnavailableStatefulSet: true });
    expect(featureEnabled(o.controllerFlags, 'PodDeletionCost')).toBe(false);
    expect(featureEnabled(o.controllerFlags, 'MaxUnavailableStatefulSet')).toBe(true);
    expect(run([]).featureGates).toEqual({});
  });

  test('a bad value is a usage error naming the flag', () => {
    expect(() => run(['--feature-gates=NoSuchGate=true'])).toThrow(InvalidArgumentError);
    expect(() => run(['--feature-gates=NoSuchGate=true'])).toThrow('--feature-gates: unrecognized feature gate: NoSuchGate');
  });

  test('the CLI: an unknown gate and a locked gate print usage and exit 2', () => {
    const bin = path.join(__dirname, '..', '..', 'bin', 'temporal-kcm.js');
    const cli = (gates: string) => spawnSync(process.execPath, [bin, 'run', `--feature-gates=${gates}`, '--kubeconfig=/nonexistent'], { encoding: 'utf8', timeout: 60_000 });
    const unknown = cli('NoSuchGate=true');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unrecognized feature gate: NoSuchGate');
    expect(unknown.stderr).toContain('Usage: temporal-kcm run');
    const locked = cli('MultiCIDRServiceAllocator=false');
    expect(locked.status).toBe(2);
    expect(locked.stderr).toContain('cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true');
  });
});

describe('gates wired into the replicaset controller', () => {
  const rs = { metadata: { namespace: 'd', name: 'web', uid: 'rs-1', resourceVersion: '1', generation: 1 }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } } } }, status: {} } as unknown as KubeObject;
  const argsWith = (flags: Record<string, boolean>) => {
    const { sent, h } = routeHarness(replicaRoutes, { controllers: ['replicaset'], flags });
    h(RESOURCES.pods).relisted([], '1');
    h(RESOURCES.replicaSets).relisted([rs], '1');
    return sent.map((s) => s.target.args as ReplicaOwnerWorkflowInput)[0];
  };

  test('gates off reach the workflow input; at their defaults nothing is added', () => {
    expect(argsWith({}).gatesOff).toBeUndefined();
    expect(argsWith(resolveFeatureGates(parseFeatureGates(['PodDeletionCost=false,DeploymentReplicaSetTerminatingReplicas=false']))).gatesOff)
      .toEqual(['PodDeletionCost', 'DeploymentReplicaSetTerminatingReplicas']);
  });
});

describe('what the replicaset gates change', () => {
  const pod = (name: string, uid: string, deletionCost: number): PodSummary => ({
    namespace: 'd', name, uid, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', labels: {}, ownerReferences: [],
    phase: 'Running', nodeName: 'n1', ready: true, readySince: '2026-01-01T00:00:00Z', restartCount: 0, deletionCost,
  });
  // by UID alone "a" goes first; its deletion cost keeps it
  const pods = [pod('a', 'u1', 100), pod('b', 'u2', 0)];

  test('PodDeletionCost: on, the cheaper pod goes first; off, the annotation is not looked at', () => {
    expect(rankPodsForDeletion(podsForRanking(pods, undefined)).map((p) => p.name)).toEqual(['b', 'a']);
    expect(rankPodsForDeletion(podsForRanking(pods, ['PodDeletionCost'])).map((p) => p.name)).toEqual(['a', 'b']);
  });

  test('DeploymentReplicaSetTerminatingReplicas: off, status.terminatingReplicas is left out', () => {
    const status: ReplicaStatus = { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2, terminatingReplicas: 1, observedGeneration: 1, conditions: [] };
    expect(statusForGates(status, undefined)).toBe(status);
    expect(statusForGates(status, ['DeploymentReplicaSetTerminatingReplicas'])).toEqual({ ...status, terminatingReplicas: undefined });
    expect('terminatingReplicas' in statusForGates(status, ['DeploymentReplicaSetTerminatingReplicas'])).toBe(false);
  });
});
