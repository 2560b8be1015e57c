import { KUBE_FEATURE_GATES } from './feature-gate-table';
import { parseGoBool, type FlagValues } from './flags';

/*
 * `--feature-gates`, as kube-controller-manager reads it: `Name=bool` pairs, comma-separated, the
 * flag repeatable, each pair optionally prefixed `kube:` (upstream's component prefix; the bare
 * form means `kube`, and the two may not be mixed). Every gate upstream registers is accepted,
 * with its default, stage and lock at the pinned version (feature-gate-table.ts, generated from
 * upstream by hack/featuregates/run.sh); an unknown gate, a value that is not a Go bool, and a
 * locked gate set away from its default are errors with upstream's words. `AllAlpha` and
 * `AllBeta` set every alpha or beta gate not named on its own.
 *
 * The resolved values ride with the controllers' flags (FlagValues, under `feature-gate:<Name>`,
 * only where they differ from the default), so activities, routes, preconditions and start hooks
 * read them as they read any flag: `featureEnabled(ctx.flags, 'JobSuccessPolicy')`.
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED' | 'PRE-ALPHA';

export interface FeatureGateSpec {
  name: string;
  default: boolean;
  stage: FeatureStage;
  /** GA (or deprecated) gates upstream no longer lets anyone turn away from their default */
  lockToDefault: boolean;
}

/** A gate's name as upstream spells it (test/unit/feature-gates.test.ts checks every name the code uses against the table). */
export type GateName = string;

/**
 * Upstream's requiredFeatureGates of the controllers this build does not implement (the
 * implemented ones declare theirs in their descriptors): with a gate off, such a controller is
 * reported as disabled by its gate rather than as not implemented.
 */
export const UPSTREAM_REQUIRED_GATES: Readonly<Record<string, readonly GateName[]>> = {
  'device-taint-eviction-controller': ['DynamicResourceAllocation', 'DRADeviceTaints'],
  'storageversion-garbage-collector-controller': ['APIServerIdentity', 'StorageVersionAPI'],
  'selinux-warning-controller': ['SELinuxChangePolicy'],
  'podcertificaterequest-cleaner-controller': ['PodCertificateRequest'],
  'kube-apiserver-serving-clustertrustbundle-publisher-controller': ['ClusterTrustBundle'],
};

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

const byName = new Map(KUBE_FEATURE_GATES.map((g) => [g.name, g]));

/** The key a gate's value has among the flag values. */
export const gateKey = (name: string): string => `feature-gate:${name}`;

export function featureGateSpec(name: string): FeatureGateSpec | undefined {
  return byName.get(name);
}

/** Whether the gate is on: its resolved value when the manager set one, else its default. */
export function featureEnabled(values: FlagValues | undefined, name: GateName): boolean {
  const v = values?.[gateKey(name)];
  return typeof v === 'boolean' ? v : (byName.get(name)?.default ?? false);
}

/** A bad --feature-gates value, worded as upstream words it. */
export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}


/**
 * The explicit settings of every --feature-gates value given (in order; a later setting of a gate
 * wins), validated as upstream validates them. Throws FeatureGateError.
 */
export function parseFeatureGates(values: readonly string[]): Map<string, boolean> {
  // upstream's colon-separated multimap: `kube:Name=v` or `Name=v`, keyed by component
  const byComponent = new Map<string, string[]>();
  for (const value of values) {
    for (const pair of value.split(',')) {
      if (pair.length === 0) continue;
      const colon = pair.indexOf(':');
      const [component, setting] = colon < 0 ? ['', pair.trim()] : [pair.slice(0, colon).trim(), pair.slice(colon + 1).trim()];
      byComponent.set(component, [...(byComponent.get(component) ?? []), setting]);
    }
  }
  if (byComponent.has('') && byComponent.has('kube')) {
    throw new FeatureGateError('set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use');
  }
  for (const c of byComponent.keys()) if (c !== '' && c !== 'kube') throw new FeatureGateError(`component not registered: ${c}`);

  const settings = new Map<string, boolean>();
  for (const s of [...byComponent.values()].flat()) {
    if (s.length === 0) continue;
    const eq = s.indexOf('=');
    const k = (eq < 0 ? s : s.slice(0, eq)).trim();
    if (eq < 0) throw new FeatureGateError(`missing bool value for ${k}`);
    const v = s.slice(eq + 1).trim();
    const b = parseGoBool(v);
    if (b === undefined) throw new FeatureGateError(`invalid value of ${k}=${v}, err: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
    settings.set(k, b);
  }

  const errors: string[] = [];
  for (const [k, v] of settings) {
    const spec = byName.get(k);
    // upstream stops at the first unknown gate
    if (!spec) throw new FeatureGateError(`unrecognized feature gate: ${k}`);
    if (spec.lockToDefault && spec.default !== v) errors.push(`cannot set feature gate ${k} to ${v}, feature is locked to ${spec.default}`);
    else if (spec.stage === 'PRE-ALPHA') errors.push(`cannot set feature gate ${k} to ${v}, feature is PreAlpha`);
  }
  // upstream aggregates several errors as [a, b]
  if (errors.length === 1) throw new FeatureGateError(errors[0]);
  if (errors.length > 1) throw new FeatureGateError(`[${errors.join(', ')}]`);
  return settings;
}

/**
 * Every gate's value under these settings that differs from its default, as flag values:
 * AllAlpha/AllBeta first fill the alpha/beta gates not named on their own.
 */
export function resolveFeatureGates(settings: ReadonlyMap<string, boolean>): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  const allAlpha = settings.get(ALL_ALPHA);
  const allBeta = settings.get(ALL_BETA);
  for (const g of KUBE_FEATURE_GATES) {
    let v = settings.get(g.name);
    if (v === undefined && g.name !== ALL_ALPHA && g.name !== ALL_BETA) {
      if (g.stage === 'ALPHA' && allAlpha !== undefined) v = allAlpha;
      else if (g.stage === 'BETA' && allBeta !== undefined) v = allBeta;
    }
    if (v !== undefined && v !== g.default) out[gateKey(g.name)] = v;
  }
  return out;
}

/** The GA or deprecated gates among the settings: upstream warns that they will be removed. */
export function settingWarnings(settings: ReadonlyMap<string, boolean>): string[] {
  const out: string[] = [];
  for (const [k, v] of settings) {
    const spec = byName.get(k);
    if (spec?.stage === 'DEPRECATED') out.push(`Setting deprecated feature gate ${k}=${v}. It will be removed in a future release.`);
    else if (spec?.stage === 'GA') out.push(`Setting GA feature gate ${k}=${v}. It will be removed in a future release.`);
  }
  return out;
}

/** The required gates that are off: a controller with any is disabled by its gate, as upstream skips it. */
export function gatesOff(values: FlagValues | undefined, required: readonly GateName[] | undefined): GateName[] {
  return (required ?? []).filter((g) => !featureEnabled(values, g));
}
