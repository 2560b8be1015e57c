import type { Mode } from '../scenarios/types';

export interface BenchArgs {
  mode: Mode;
  scenarios: number[];
  /** overrides every scenario's own repetition count */
  reps?: number;
  out: string;
  /** write V8 CPU profiles of our manager processes here (and leave docs/BENCHMARKS.md alone) */
  profile?: string;
  /** the scale curve instead of the scenarios */
  curve?: boolean;
  /** the curve's sizes (one-replica Deployments) and extra replica counts, instead of the mode's */
  sizes?: number[];
  replicas?: number[];
  /** the workflow-cache trade instead of the scenarios */
  cacheCap?: boolean;
  /** its caps (--max-cached-workflows of ours), instead of the mode's */
  caps?: number[];
  /** each cap also with settled runs left to their resync (run --settled-continue-as-new 0): the cold wake before they continued as new */
  unsettled?: boolean;
  /** the continue-as-new threshold's trade instead of the scenarios */
  historyCut?: boolean;
  /** the memory map study instead of the scenarios */
  memory?: boolean;
  /** its MALLOC_ARENA_MAX values for ours, instead of the mode's */
  arenas?: number[];
}

export const USAGE = `usage: node dist/bench/run.js [--quick | --smoke] [--scenarios 1,2,...] [--reps N] [--out docs/BENCHMARKS.md]
       node dist/bench/run.js --curve [--quick | --smoke] [--sizes 100,300,1000] [--replicas 2,3] [--reps N]
       node dist/bench/run.js --cache-cap [--quick | --smoke] [--sizes 1000] [--caps 500,100] [--unsettled] [--reps N]
       node dist/bench/run.js --history-cut [--quick | --smoke] [--reps N] [--profile DIR]
       node dist/bench/run.js --memory [--quick | --smoke] [--sizes 1000] [--arenas 2] [--reps N]

  --quick          smaller sizes and fewer repetitions (under 10 minutes)
  --smoke          the smallest sizes, one repetition, default setting; writes no docs
  --scenarios L    which of 1..9 to run (default: all)
                   1 scale-up  2 reaction  3 rollout  4 failover  5 restart catch-up  6 idle cost  7 ceiling
                   8 replacement during a readiness storm
  --reps N         repetitions of every scenario (default: full 3, 2 for 5 and 6, 1 for 8; quick 2 for 1
                   and 7, else 1; smoke 1)
  --out FILE       the docs file to write (default docs/BENCHMARKS.md); a curve written outside docs/
                   keeps its raw samples beside it, not in bench/results
  --curve          the scale curve instead of the scenarios: idle cost, restart catch-up and scale-up at
                   several sizes for both managers, catch-up with more replicas of ours at the largest
                   size, a failover there; writes its section of the docs file and charts in docs/bench/
  --sizes L        the curve's sizes, in one-replica Deployments (3 objects each; default 100,300,1000,
                   quick 10,30,100, smoke 3,10)
  --replicas L     the curve's replica counts after one, at the largest size (default 2,3; quick and smoke 2)
  --cache-cap      the workflow-cache trade instead of the scenarios: at one size (--sizes with one value;
                   default 1000, quick 100, smoke 10 one-replica Deployments), upstream and ours with the
                   SDK's default cache, then ours with each cap; idle memory, pod replacement, restart
                   catch-up; and what a replay costs against history length; writes its section of the
                   docs file
  --caps L         the caps (run --max-cached-workflows, at least 2; default 500,100, quick 50,10, smoke 4)
  --unsettled      each cap also with --settled-continue-as-new 0 (settled runs keep their history until
                   their resync): what a cold wake replayed before they continued as new
  --history-cut    the continue-as-new threshold's trade instead of the scenarios: ours with the default
                   --max-history-events and with 10000 and 2000 (quick 10000, smoke 100); ReplicaSets
                   (10, quick 4, smoke 2) churned to the same number of history events, then a restart
                   that replays every open run; writes its section of the docs file
  --memory         the memory study instead of the scenarios: at one size (--sizes with one value; default
                   1000, quick 100, smoke 10 one-replica Deployments), upstream, ours with glibc's default
                   malloc arenas and ours with each MALLOC_ARENA_MAX of --arenas; idle RSS split by what
                   holds it (/proc/<pid>/smaps); writes its section of the docs file
  --arenas L       the memory study's MALLOC_ARENA_MAX values for ours (at least 1; default 2)
  --profile DIR    run our managers under node --cpu-prof, write the profiles and a summary of where
                   their CPU went into DIR; the docs file is not written (profiling slows the run).
                   With --history-cut: a subdirectory per threshold, the churn's manager and the
                   restart's apart
`;

export class UsageError extends Error {}

export function parseArgs(argv: string[]): BenchArgs {
  const a: BenchArgs = { mode: 'full', scenarios: [1, 2, 3, 4, 5, 6, 7, 8, 9], out: 'docs/BENCHMARKS.md' };
  let modeSet = false;
  const value = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? [argv[i].slice(0, argv[i].indexOf('=')), argv[i].slice(argv[i].indexOf('=') + 1)] : [argv[i], undefined];
    const take = () => (inline !== undefined ? inline : value(i++, flag));
    switch (flag) {
      case '--quick':
      case '--smoke':
        if (inline !== undefined) throw new UsageError(`${flag} takes no value`);
        if (modeSet) throw new UsageError('give at most one of --quick and --smoke');
        a.mode = flag === '--quick' ? 'quick' : 'smoke';
        modeSet = true;
        break;
      case '--scenarios': {
        const list = take().split(',').map((s) => s.trim()).filter(Boolean);
        const ids = list.map(Number);
        if (!ids.length || ids.some((n) => !Number.isInteger(n) || n < 1 || n > 9)) throw new UsageError(`--scenarios takes numbers 1..9, got ${list.join(',')}`);
        a.scenarios = [...new Set(ids)].sort((x, y) => x - y);
        break;
      }
      case '--reps': {
        const n = Number(take());
        if (!Number.isInteger(n) || n < 1 || n > 100) throw new UsageError('--reps takes a whole number 1..100');
        a.reps = n;
        break;
      }
      case '--curve':
        if (inline !== undefined) throw new UsageError('--curve takes no value');
        a.curve = true;
        break;
      case '--cache-cap':
        if (inline !== undefined) throw new UsageError('--cache-cap takes no value');
        a.cacheCap = true;
        break;
      case '--history-cut':
        if (inline !== undefined) throw new UsageError('--history-cut takes no value');
        a.historyCut = true;
        break;
      case '--memory':
        if (inline !== undefined) throw new UsageError('--memory takes no value');
        a.memory = true;
        break;
      case '--arenas': {
        const list = take().split(',').map((x) => x.trim()).filter(Boolean);
        const ns = list.map(Number);
        if (!ns.length || ns.some((n) => !Number.isInteger(n) || n < 1 || n > 1024)) throw new UsageError(`--arenas takes whole numbers 1..1024, got ${list.join(',')}`);
        a.arenas = [...new Set(ns)].sort((x, y) => y - x);
        break;
      }
      case '--sizes':
      case '--replicas':
      case '--caps': {
        const list = take().split(',').map((x) => x.trim()).filter(Boolean);
        const ns = list.map(Number);
        const low = flag === '--sizes' ? 1 : 2;
        if (!ns.length || ns.some((n) => !Number.isInteger(n) || n < low || n > 100_000)) throw new UsageError(`${flag} takes whole numbers of at least ${low}, got ${list.join(',')}`);
        const sorted = [...new Set(ns)].sort((x, y) => x - y);
        if (flag === '--sizes') a.sizes = sorted;
        else if (flag === '--replicas') a.replicas = sorted;
        // the largest cap first: memory falls and replays grow down the table
        else a.caps = sorted.reverse();
        break;
      }
      case '--unsettled':
        if (inline !== undefined) throw new UsageError('--unsettled takes no value');
        a.unsettled = true;
        break;
      case '--out':
        a.out = take();
        break;
      case '--profile':
        a.profile = take();
        break;
      case '-h':
      case '--help':
        throw new UsageError('');
      default:
        throw new UsageError(`unknown argument ${argv[i]}`);
    }
  }
  if ([a.curve, a.cacheCap, a.historyCut, a.memory].filter(Boolean).length > 1) throw new UsageError('give at most one of --curve, --cache-cap, --history-cut and --memory');
  if (a.replicas && !a.curve) throw new UsageError('--replicas goes with --curve');
  if (a.sizes && !a.curve && !a.cacheCap && !a.memory) throw new UsageError('--sizes goes with --curve, --cache-cap or --memory');
  if (a.arenas && !a.memory) throw new UsageError('--arenas goes with --memory');
  if (a.memory && a.sizes && a.sizes.length !== 1) throw new UsageError('--memory runs at one size: give --sizes one value');
  if (a.caps && !a.cacheCap) throw new UsageError('--caps goes with --cache-cap');
  if (a.unsettled && !a.cacheCap) throw new UsageError('--unsettled goes with --cache-cap');
  if (a.cacheCap && a.sizes && a.sizes.length !== 1) throw new UsageError('--cache-cap runs at one size: give --sizes one value');
  // the history cut starts a manager per phase, so a profile per threshold and phase says where its CPU went
  const study = a.curve ? '--curve' : a.cacheCap ? '--cache-cap' : a.memory ? '--memory' : undefined;
  if (study && a.profile) throw new UsageError(`--profile does not go with ${study}`);
  return a;
}
