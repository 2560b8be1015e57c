import { Command, Option } from 'commander';
import { parseGoDuration } from '../workflows/common/duration';
import { parseGoBool } from '../workers/flags';
import { ACCEPTED_UPSTREAM_FLAGS, type AcceptedFlag } from './upstream-flag-policy';
import type { UpstreamFlag } from './upstream-flag-types';
import { UPSTREAM_FLAGS } from './upstream-flags';

/*
 * Upstream's flags that `run` has no option of its own for, accepted as upstream spells them (so
 * kubeadm's command line starts this manager unchanged) and checked as upstream's types read them.
 * What each does here is in starter/upstream-flag-policy.ts.
 */

/** pflag reads `--concurrent_rc_syncs` as `--concurrent-rc-syncs` (kube's word-separator normalisation). */
export function normalizeFlagName(name: string): string {
  return name.replace(/_/g, '-');
}

/**
 * The `run` arguments as pflag would read them: underscores in a flag's name become dashes, and
 * `-v=4` is `-v 4` (commander would take "=4" as the value).
 */
export function normalizeRunArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      out.push(eq < 0 ? normalizeFlagName(a) : normalizeFlagName(a.slice(0, eq)) + a.slice(eq));
    } else if (/^-v=/.test(a)) out.push('-v', a.slice(3));
    else out.push(a);
  }
  return out;
}

/** pflag types that may be repeated (their values add up) or comma-joined. */
const LIST_TYPES = new Set(['stringSlice', 'namedCertKey', 'stringToString']);

/**
 * Upstream's flags without an option of ours, in upstream's order, with what each does here: those
 * the policy names (test/unit/upstream-flags.test.ts checks that it names every one and no other).
 */
function acceptedUpstreamFlags(): Array<{ flag: UpstreamFlag; name: string; policy: AcceptedFlag }> {
  const out: Array<{ flag: UpstreamFlag; name: string; policy: AcceptedFlag }> = [];
  for (const flag of UPSTREAM_FLAGS) {
    const policy = ACCEPTED_UPSTREAM_FLAGS[flag.name];
    if (policy) out.push({ flag, name: normalizeFlagName(flag.name), policy });
  }
  return out;
}

const KIND_LABEL: Record<AcceptedFlag['kind'], string> = { honoured: 'upstream flag', 'no effect': 'upstream flag, no effect here', 'not yet': 'upstream flag, not built yet' };

/** Adds every accepted upstream flag to `run` (after its own, which are added first). */
export function addAcceptedUpstreamFlags(cmd: Command): void {
  for (const { flag, name, policy } of acceptedUpstreamFlags()) {
    const arg = flag.type === 'bool' ? '[bool]' : flag.type === 'version' ? '[version]' : `<${flag.type}>`;
    const option = new Option(`${flag.shorthand ? `-${flag.shorthand}, ` : ''}--${name} ${arg}`, `${flag.usage} [${KIND_LABEL[policy.kind]}: ${policy.reason}]`);
    if (LIST_TYPES.has(flag.type)) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    if (flag.hidden) option.hideHelp();
    cmd.addOption(option);
  }
}

/** What resolveRunOptions needs of its reader here. */
export interface FlagReader {
  given(flag: string): { value: unknown; origin: string } | undefined;
  fail(origin: string, value: unknown, why: string): undefined;
}

/** One accepted upstream flag given on the command line, for the start log. */
export interface GivenUpstreamFlag {
  flag: string;
  value: string;
  kind: AcceptedFlag['kind'];
  reason: string;
}

export interface ResolvedUpstreamFlags {
  given: GivenUpstreamFlag[];
  /** -v as a log level, when given */
  logLevelFromVerbosity?: 'info' | 'debug' | 'trace';
  /** --enable-garbage-collector=false */
  garbageCollectorOff: boolean;
  /** --logging-format=text */
  textLogs: boolean;
}


/** The reason a value is not of its pflag type, or undefined when it is. */
function typeProblem(type: string, value: string): string | undefined {
  switch (type) {
    case 'bool':
      return parseGoBool(value) !== undefined ? undefined : 'is not a boolean (true or false)';
    case 'int':
    case 'int32':
      return /^[+-]?\d+$/.test(value) && Math.abs(Number(value)) <= 2 ** 31 - 1 ? undefined : 'is not an integer';
    case 'Level':
      return /^\d+$/.test(value) && Number(value) <= 2 ** 31 - 1 ? undefined : 'is not a verbosity level (0 or more)';
    case 'duration':
      try {
        parseGoDuration(value);
        return undefined;
      } catch {
        return 'is not a duration like 30s, 5m or 1h30m';
      }
    case 'pattern=N,...':
      return value === '' || value.split(',').every((p) => /^[^=]+=\d+$/.test(p)) ? undefined : 'is not a list of pattern=N';
    case 'stringToString':
      return value === '' || value.split(',').every((p) => p.includes('=')) ? undefined : 'is not a list of key=value';
    case 'quantity':
      return /^\d+(\.\d+)?([KMGTPE]i?|[mkMGTPE]|[eE][+-]?\d+)?$/.test(value) ? undefined : 'is not a quantity like 0, 64Ki or 1M';
    default:
      return undefined;
  }
}

/** `--emulated-version`'s and `--min-compatibility-version`'s `[component=]version` entries: this build is v1.35 only. */
function versionProblem(value: string): string | undefined {
  for (const entry of value.split(',').map((e) => e.trim()).filter(Boolean)) {
    const [component, version] = entry.includes('=') ? entry.split('=', 2) : ['kube', entry];
    if (component !== 'kube') return `names component "${component}"; the only one is kube`;
    if (!/^v?1\.35(\.\d+)?$/.test(version)) return 'names another version than 1.35, which this build cannot emulate';
  }
  return undefined;
}

/** Checks the accepted upstream flags that were given and reads the ones honoured here. */
export function resolveAcceptedUpstreamFlags(r: FlagReader): ResolvedUpstreamFlags {
  const out: ResolvedUpstreamFlags = { given: [], garbageCollectorOff: false, textLogs: false };
  for (const { flag, name, policy } of acceptedUpstreamFlags()) {
    const g = r.given(name);
    if (!g) continue;
    // a bool given bare (`--profiling`) is true; a list flag holds each time it was given
    const values = Array.isArray(g.value) ? g.value.map(String) : [g.value === true ? 'true' : String(g.value)];
    let ok = true;
    for (const v of values) {
      const problem = name === 'emulated-version' || name === 'min-compatibility-version' ? versionProblem(v) : typeProblem(flag.type, v.trim());
      if (problem) {
        r.fail(g.origin, v, problem);
        ok = false;
      }
    }
    if (!ok) continue;
    const value = values.join(',');
    if (name === 'v') {
      const level = Number(value);
      out.logLevelFromVerbosity = level >= 6 ? 'trace' : level >= 4 ? 'debug' : 'info';
    } else if (name === 'enable-garbage-collector') {
      out.garbageCollectorOff = parseGoBool(value.trim()) === false;
    } else if (name === 'logging-format') {
      if (value !== 'json' && value !== 'text') {
        r.fail(g.origin, value, 'must be json or text');
        continue;
      }
      out.textLogs = value === 'text';
    }
    out.given.push({ flag: `--${name}`, value, kind: policy.kind, reason: policy.reason });
  }
  return out;
}
