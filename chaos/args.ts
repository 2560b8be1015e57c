import { FAULT_NAMES, type FaultName } from './report';
import type { ChaosMode } from './scenarios/types';

export interface ChaosArgs {
  mode: ChaosMode;
  /** scenario slugs, in the order given */
  scenarios: string[];
  /** the kinds of fault, one pass of ours each, in the order given */
  faults: FaultName[];
  /** the API-fault proxy's share of refused requests (default 0.2) */
  faultRate: number;
  /** kills per scenario (default: full 20, quick 6) */
  kills?: number;
  /** the storm's seed (default: from the clock, printed so a run can be repeated) */
  seed?: number;
  /** run the whole suite this many times, under seeds seed, seed+1, ... (default: once) */
  seeds?: number;
  out: string;
}

export const CHAOS_USAGE = `usage: node dist/chaos/run.js [--quick] [--scenarios rollout,drain,foreground,jobs,namespace,endpoints,hostile] [--faults kills,pauses,partitions,api,restarts,outage]
                               [--fault-rate 0.2] [--kills N] [--seed N] [--seeds N] [--out docs/RELIABILITY.md]

  --quick          smaller workloads and fewer kills
  --scenarios L    which to run, comma-separated (default: all): rollout, drain, foreground, jobs, namespace, endpoints,
                   hostile (the corpus of valid objects controllers may choke on)
  --faults L       which kinds of fault, one pass of ours each (default: all): kills (replicas killed with
                   kill -9), pauses (replicas stopped with SIGSTOP for 20 to 60 s, then continued),
                   partitions (replicas cut from Temporal, not from the API server, for 20 to 60 s), api
                   (requests refused and watches cut by a proxy), restarts (etcd and kube-apiserver, then
                   the Temporal server, killed and started again), outage (the Temporal server kept
                   down for 2 minutes; in a full run, then for 5)
  --fault-rate R   the share of API requests the proxy refuses, 0..1 (default 0.2)
  --kills N        replicas killed with kill -9 per scenario (default 20, quick 6), one every 5 to 20 s
  --seed N         the storm's seed: the same seed kills the same replicas at the same moments
  --seeds N        run the suite N times, under seeds N0, N0+1, ... (N0: --seed, or from the clock), and
                   write a table of every seed's result (its own section of the docs file)
  --out FILE       the docs file to write (default docs/RELIABILITY.md)
`;

export class ChaosUsageError extends Error {}

export function parseChaosArgs(argv: string[], known: string[]): ChaosArgs {
  const a: ChaosArgs = { mode: 'full', scenarios: [...known], faults: [...FAULT_NAMES], faultRate: 0.2, out: 'docs/RELIABILITY.md' };
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].indexOf('=');
    const [flag, inline] = eq > 0 ? [argv[i].slice(0, eq), argv[i].slice(eq + 1)] : [argv[i], undefined];
    const take = () => {
      if (inline !== undefined) return inline;
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('--')) throw new ChaosUsageError(`${flag} needs a value`);
      i++;
      return v;
    };
    const whole = (v: string, low: number, high: number) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < low || n > high) throw new ChaosUsageError(`${flag} takes a whole number ${low}..${high}, got ${v}`);
      return n;
    };
    switch (flag) {
      case '--quick':
        if (inline !== undefined) throw new ChaosUsageError('--quick takes no value');
        a.mode = 'quick';
        break;
      case '--scenarios': {
        const list = take().split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = list.filter((s) => !known.includes(s));
        if (!list.length || unknown.length) throw new ChaosUsageError(`--scenarios takes ${known.join(', ')}; unknown: ${unknown.join(', ') || '(none given)'}`);
        a.scenarios = [...new Set(list)];
        break;
      }
      case '--faults': {
        const list = take().split(',').map((s) => s.trim()).filter(Boolean);
        const unknown = list.filter((s) => !(FAULT_NAMES as string[]).includes(s));
        if (!list.length || unknown.length) throw new ChaosUsageError(`--faults takes ${FAULT_NAMES.join(', ')}; unknown: ${unknown.join(', ') || '(none given)'}`);
        a.faults = [...new Set(list)] as FaultName[];
        break;
      }
      case '--fault-rate': {
        const v = take();
        const r = Number(v);
        if (v.trim() === '' || !Number.isFinite(r) || r < 0 || r > 1) throw new ChaosUsageError(`--fault-rate takes a number 0..1, got ${v}`);
        a.faultRate = r;
        break;
      }
      case '--kills':
        a.kills = whole(take(), 0, 1000);
        break;
      case '--seed':
        a.seed = whole(take(), 0, 2 ** 32 - 1);
        break;
      case '--seeds':
        a.seeds = whole(take(), 1, 1000);
        break;
      case '--out':
        a.out = take();
        break;
      case '--help':
      case '-h':
        throw new ChaosUsageError('');
      default:
        throw new ChaosUsageError(`unknown flag ${flag}`);
    }
  }
  return a;
}
