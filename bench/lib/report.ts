import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadVersions } from '../../starter/local/versions';
import { repoRoot } from '../../starter/local/paths';
import { RUN_DEFAULTS } from '../../starter/run-options';
import type { MetricDef, Mode, Scenario, Subject } from '../scenarios/types';
import { SETTINGS, Setting } from './managers';
import { RunRecord } from './runner';
import { Spread, spread } from './stats';

export interface Environment {
  machine: { cores: number; cpuModel: string; memoryGiB: number; kernel: string };
  versions: Record<string, string>;
  /** the Temporal dev server's command line as it runs, and the worker settings that matter */
  temporalServer: string;
  settings: Record<string, { qps: number; burst: number }>;
}

export interface BenchResults {
  mode: Mode;
  startedAt: string;
  finishedAt: string;
  environment: Environment;
  records: RunRecord[];
}

export function describeEnvironment(temporalPid: number | undefined): Environment {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const v = loadVersions();
  let temporalServer = 'unknown (dev server not found)';
  if (temporalPid) {
    try {
      temporalServer = fs.readFileSync(`/proc/${temporalPid}/cmdline`, 'utf8').split('\0').filter(Boolean)
        .map((a, i) => (i === 0 ? 'temporal' : a.startsWith('/') ? `<${path.basename(a)}>` : a)).join(' ');
    } catch { /* gone */ }
  }
  return {
    machine: { cores: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? '?', memoryGiB: Math.round(os.totalmem() / 2 ** 30), kernel: os.release() },
    versions: {
      'temporal-kcm': pkg.version, 'kube-controller-manager': v.kubernetes, 'kube-apiserver': v.kubernetes,
      etcd: v.etcd, 'temporal CLI (dev server)': v.temporalCli, kwok: v.kwok, node: process.version,
    },
    temporalServer,
    settings: Object.fromEntries(Object.values(SETTINGS).map((s) => [s.name, { qps: s.qps, burst: s.burst }])),
  };
}

const fmt = (v: number, unit: MetricDef['unit']): string => {
  if (!Number.isFinite(v)) return '-';
  switch (unit) {
    case 'ms': return v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`;
    case 's': return `${v.toFixed(v < 10 ? 2 : 1)} s`;
    case 'MiB': return `${Math.round(v)} MiB`;
    case 'count': return String(Math.round(v));
    case '/min': return v >= 100 ? String(Math.round(v)) : v.toFixed(1);
  }
};
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? (a / b).toFixed(2) : '-');

function spreadOf(records: RunRecord[], key: string): Spread {
  return spread(records.filter((r) => r.sample && key in r.sample).map((r) => r.sample![key]));
}

function managerTable(s: Scenario, recs: RunRecord[]): string[] {
  const up = recs.filter((r) => r.subject === 'upstream');
  const ours = recs.filter((r) => r.subject === 'ours');
  const lines = [
    '| metric | upstream median | min | max | temporal-kcm median | min | max | ratio ours/upstream |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const m of s.metrics) {
    const u = spreadOf(up, m.key);
    const o = spreadOf(ours, m.key);
    if (!u.n && !o.n) continue;
    lines.push(`| ${m.label} | ${fmt(u.median, m.unit)} | ${fmt(u.min, m.unit)} | ${fmt(u.max, m.unit)} | ` +
      `${fmt(o.median, m.unit)} | ${fmt(o.min, m.unit)} | ${fmt(o.max, m.unit)} | ${m.only || m.noRatio ? '-' : ratio(o.median, u.median)} |`);
  }
  return lines;
}

/** Scenario 7 has one subject; its ratios put scenario 1 (same size and setting) over it. */
function ceilingTable(s: Scenario, recs: RunRecord[], all: RunRecord[], setting: string): string[] {
  const scale = all.filter((r) => r.scenario === 1 && r.setting === setting);
  const lines = [
    '| metric | plain client median | min | max | upstream (scenario 1) / client | temporal-kcm (scenario 1) / client |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const m of s.metrics) {
    const c = spreadOf(recs, m.key);
    const u = spreadOf(scale.filter((r) => r.subject === 'upstream'), m.key);
    const o = spreadOf(scale.filter((r) => r.subject === 'ours'), m.key);
    lines.push(`| ${m.label} | ${fmt(c.median, m.unit)} | ${fmt(c.min, m.unit)} | ${fmt(c.max, m.unit)} | ${ratio(u.median, c.median)} | ${ratio(o.median, c.median)} |`);
  }
  return lines;
}

const SUBJECT_NAME: Record<Subject, string> = { upstream: 'upstream', ours: 'temporal-kcm', client: 'plain client' };

export function renderResults(results: BenchResults, scenarios: Scenario[], rawPath: string): string {
  const env = results.environment;
  const out: string[] = [];
  const cmd = results.mode === 'full' ? '`npm run bench`' : `\`npm run bench -- --${results.mode}\``;
  out.push(`## Side by side with upstream (${cmd}, ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC)`, '');
  out.push(
    'Each scenario runs against upstream kube-controller-manager and against temporal-kcm on the same stack, in the same ' +
    'run, alternating (which goes first flips every repetition), each in a fresh namespace, with only the controllers the ' +
    'scenario needs enabled in both and the same `--kube-api-qps`/`--kube-api-burst`: ' +
    Object.entries(env.settings).map(([n, s]) => `**${n}** ${s.qps}/${s.burst}`).join(', ') +
    ' (default is kube-controller-manager\'s own; lifted takes the client-side limit out of the picture). Medians, min and ' +
    `max over the repetitions; the ratio is of the medians. Raw samples: \`${rawPath}\`.`, '');
  out.push(`- Machine: ${env.machine.cores} cores (${env.machine.cpuModel}), ${env.machine.memoryGiB} GiB, Linux ${env.machine.kernel}; ` +
    'the whole stack (etcd, kube-apiserver, kube-scheduler, kwok, Temporal dev server) shares it with the manager measured.');
  out.push(`- Versions: ${Object.entries(env.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  out.push('- Both managers run as kubeadm runs them: the stack\'s `kube-controller-manager.kubeconfig` (user ' +
    '`system:kube-controller-manager`) and `--use-service-account-credentials`, so each controller calls the API as its own ServiceAccount.');
  out.push(`- Temporal server: \`${env.temporalServer}\` (SQLite file store, default dynamic config); our workers run with ` +
    `their defaults (\`--informer-heartbeat-timeout ${RUN_DEFAULTS.informerHeartbeatTimeout}\`, \`--concurrent-*-syncs\` as upstream's, sticky queue timeout 2 s).`);
  out.push('- CPU is user+system seconds of the manager process tree (ours: the `run` process; the Temporal server is reported ' +
    'on its own row) over the timed interval; RSS the peak of its resident memory. API requests are the growth of the API ' +
    'server\'s `apiserver_request_total`, which has no user-agent label: they include the benchmark\'s own polling, ' +
    'kube-scheduler and kwok, the same for both.');
  out.push('');
  const failed = results.records.filter((r) => r.error);
  for (const s of scenarios) {
    const recs = results.records.filter((r) => r.scenario === s.id && r.sample);
    out.push(`### ${s.id}. ${s.title}`, '', s.method(results.mode), '');
    const settings = [...new Set(results.records.filter((r) => r.scenario === s.id).map((r) => r.setting))];
    if (!settings.length) { out.push('(not run)', ''); continue; }
    for (const name of settings) {
      const forSetting = recs.filter((r) => r.setting === name);
      const st: Setting = SETTINGS[name];
      const n = Math.max(0, ...(['upstream', 'ours', 'client'] as Subject[]).map((x) => forSetting.filter((r) => r.subject === x).length));
      out.push(`Setting **${name}** (qps ${st.qps}, burst ${st.burst}), ${n} repetition${n === 1 ? '' : 's'}:`, '');
      out.push(...(s.subjects.includes('client') ? ceilingTable(s, forSetting, results.records, name) : managerTable(s, forSetting)), '');
    }
  }
  if (failed.length) {
    out.push('### Runs that failed', '', ...failed.map((r) => `- ${r.slug} ${SUBJECT_NAME[r.subject]} ${r.setting} #${r.rep}: ${r.error}`), '');
  }
  return out.join('\n');
}

/** Headings of generated sections and of the results they replace; every other section of the file is kept. */
const REPLACED = [/^## Side by side with upstream/, /^## ReplicaSet scale-up and scale-down/];

const INTRO = `# Benchmarks

Measured against upstream kube-controller-manager on the same local stack, in the same run, one
controller manager at a time. The machine runs the whole stack as well, so absolute times are
pessimistic and noisy; the ratios are the point. \`npm run bench\` regenerates the section below
(\`-- --quick\` for a smaller one, \`-- --scenarios 1,7 --reps 5\` to pick); the sections after it are
written by hand.
`;

/**
 * The new docs file: the intro, the generated results, then the hand-written sections of the
 * current file that the results do not replace (failover from the e2e tests, coalescing, notes).
 */
export function mergeIntoDoc(current: string, generated: string): string {
  const sections = current.split(/^(?=## )/m).slice(1);
  const kept = sections.filter((sec) => !REPLACED.some((re) => re.test(sec)));
  return [INTRO, generated.trimEnd() + '\n', ...kept.map((k) => k.trimEnd() + '\n')].join('\n');
}

/**
 * A generated section (starting `## <heading>...`) put into the docs file: where the previous one
 * under the same heading was, or else right after the section whose heading starts with `after`.
 * Every other section stays as it is.
 */
export function placeSection(current: string, generated: string, heading: string, after: string): string {
  const [head, ...sections] = current.split(/^(?=## )/m);
  const section = generated.trimEnd() + '\n\n';
  const at = sections.findIndex((s) => s.startsWith(`## ${heading}`));
  if (at >= 0) sections[at] = section;
  else sections.splice(sections.findIndex((s) => s.startsWith(`## ${after}`)) + 1, 0, section);
  return [head, ...sections].join('');
}

/**
 * Where a generated section's raw samples are kept: the docs' own file keeps them in bench/results
 * (cited by a relative path); a run written elsewhere (--out) keeps them beside its output, not
 * over the ones the docs cite.
 */
export function rawResultsPath(outArg: string, name: string): { out: string; abs: string; cited: string } {
  const out = path.resolve(repoRoot, outArg);
  const intoDocs = path.dirname(out) === path.join(repoRoot, 'docs');
  const abs = intoDocs ? path.join(repoRoot, 'bench', 'results', name) : path.join(path.dirname(out), name);
  return { out, abs, cited: intoDocs ? path.relative(repoRoot, abs) : abs };
}

/** A smoke run prints its section; any other keeps its raw samples and puts the section into the docs file. */
export function saveSection(
  o: { mode: Mode; out: string; rawAbs: string; results: unknown; generated: string; heading: string; after: string; log: (line: string) => void },
): void {
  if (o.mode === 'smoke') {
    process.stdout.write(o.generated + '\n');
    return;
  }
  fs.mkdirSync(path.dirname(o.rawAbs), { recursive: true });
  fs.writeFileSync(o.rawAbs, JSON.stringify(o.results, null, 2) + '\n');
  const current = fs.existsSync(o.out) ? fs.readFileSync(o.out, 'utf8') : '';
  fs.writeFileSync(o.out, placeSection(current, o.generated, o.heading, o.after));
  o.log(`wrote ${path.relative(repoRoot, o.out)}`);
}

/** A figure for a generated table: `-` when a run gave none. */
export const num = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : '-');

/** `text` with v's ratio to the upstream figure `base` after it, when both are there. */
export const withRatio = (v: number, base: number, text: string) => (Number.isFinite(v) && Number.isFinite(base) && base > 0 ? `${text} (${(v / base).toFixed(2)}x)` : text);
