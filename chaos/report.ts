import type { OutagePlan, OutageRecord } from './outages';
import type { FaultCounts, FaultPlan } from './proxy';
import type { RestartRecord } from './restarts';
import type { KillRecord, StormPlan } from './storm';
import type { ChaosMode } from './scenarios/types';

/** The kinds of fault a pass of ours runs under, one kind per pass. */
export type FaultName = 'kills' | 'pauses' | 'partitions' | 'api' | 'restarts' | 'outage';
export const FAULT_NAMES: FaultName[] = ['kills', 'pauses', 'partitions', 'api', 'restarts', 'outage'];

/** One manager's pass through one scenario. */
export interface PassRecord {
  /** from the change until the end state first held, s (undefined: never within the run) */
  convergedAfterS?: number;
  /** the end state held again after the faults and a settling pause */
  stable: boolean;
  violations: string[];
  error?: string;
}

/** A pass of ours under one kind of fault, and what was injected. */
export interface FaultedPass extends PassRecord {
  faults: FaultName;
  replicas: number;
  kills?: KillRecord[];
  api?: FaultCounts;
  restarts?: RestartRecord[];
  /** pauses and partitions: each replica taken out and let back */
  outages?: OutageRecord[];
  /** injected events (kills, outages, restarts) that came before the end state first held */
  beforeConverged: number;
  /** where this pass ended differently from upstream, field by field */
  differences: string[];
}

export interface ScenarioRecord {
  slug: string;
  title: string;
  upstream: PassRecord;
  ours: FaultedPass[];
}

export interface ChaosResults {
  mode: ChaosMode;
  seed: number;
  storm: StormPlan & { replicas: number };
  api: FaultPlan & { replicas: number };
  restarts: { gapMs: number; replicas: number };
  /** pauses and partitions alike */
  outages: OutagePlan & { replicas: number };
  startedAt: string;
  finishedAt: string;
  scenarios: ScenarioRecord[];
}

export const FAULTS_HEADING = 'Faults';

const secs = (s: number | undefined) => (s === undefined ? 'never' : `${s.toFixed(1)} s`);

/** Did ours keep every promise in this pass? */
export function passPassed(p: FaultedPass): boolean {
  return !p.error && p.stable && p.convergedAfterS !== undefined && !p.violations.length && !p.differences.length;
}

/** Did ours keep every promise in every pass of this scenario? */
export function passed(r: ScenarioRecord): boolean {
  return r.ours.every(passPassed);
}

/** What one pass injected, in words, for the table. */
export function injected(p: FaultedPass): string {
  switch (p.faults) {
    case 'kills':
      return `${p.kills?.length ?? 0} x kill -9 of a replica (${p.beforeConverged} before converged)`;
    case 'pauses':
    case 'partitions': {
      const out = p.outages ?? [];
      const what = p.faults === 'pauses' ? 'SIGSTOP of a replica' : 'a replica cut from Temporal';
      return `${out.length} x ${what}${out.length ? ` for ${out.map((x) => `${(x.outForMs / 1000).toFixed(0)} s`).join(', ')}` : ''} (${p.beforeConverged} before converged)`;
    }
    case 'api': {
      const c = p.api;
      if (!c) return 'API faults (none counted)';
      const refused = Object.values(c.faults).reduce((a, b) => a + b, 0);
      const kinds = [['429', c.faults.throttled], ['500', c.faults.internal], ['503', c.faults.unavailable], ['409', c.faults.conflict], ['dropped', c.faults.dropped]]
        .map(([k, n]) => `${k}: ${n}`).join(', ');
      return `${refused} of ${c.requests} requests refused (${kinds}); ${c.watchesCut} watches cut`;
    }
    case 'outage': {
      const out = p.restarts ?? [];
      if (!out.length) return 'no outage';
      const back = (r: RestartRecord) => (p.convergedAfterS === undefined ? '' : `, converged ${Math.max(0, p.convergedAfterS - (r.atMs + r.downForMs) / 1000).toFixed(1)} s after it was back`);
      return out.map((r) => `Temporal down ${(r.downForMs / 1000).toFixed(0)} s (controller writes meanwhile: ${r.controllerWrites ?? '?'}${out.length === 1 ? back(r) : ''})`).join(', then ')
        + (out.length > 1 ? back(out[out.length - 1]) : '');
    }
    case 'restarts':
      return `${(p.restarts ?? []).map((r) => `${r.parts.join(' + ')} (down ${(r.downForMs / 1000).toFixed(1)} s)`).join(', then ') || 'no restart'}, kill -9 (${p.beforeConverged} before converged)`;
  }
}

/** The generated section of docs/RELIABILITY.md. */
export function renderFaults(r: ChaosResults, rawPath: string): string {
  const lines = [
    `## ${FAULTS_HEADING} (\`npm run chaos${r.mode === 'quick' ? ' -- --quick' : ''}\`, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `Each scenario runs on the chaos stack (.local/chaos-stack) once under one upstream kube-controller-manager v1.35.4 with no faults, for the reference end state, and then under ours once per kind of fault, each from the change on (seed ${r.seed}; \`--seed ${r.seed}\` repeats the same faults):`,
    '',
    `- **kills**: ${r.storm.replicas} replicas on one task queue; a random one is killed with \`kill -9\` and restarted ${r.storm.kills} times, one every ${r.storm.minGapMs / 1000} to ${r.storm.maxGapMs / 1000} s.`,
    `- **pauses**: ${r.outages.replicas} replicas on one task queue; a random one is stopped with SIGSTOP for ${r.outages.minOutMs / 1000} to ${r.outages.maxOutMs / 1000} s and then continued, ${r.outages.outages} times, one every ${r.outages.minGapMs / 1000} to ${r.outages.maxGapMs / 1000} s after the last ended.`,
    `- **partitions**: the same, but a random replica is cut from Temporal (each reaches it through a relay of its own, whose connections are dropped and refused) while it still reaches the API server.`,
    `- **api**: ${r.api.replicas} replica${r.api.replicas === 1 ? '' : 's'} talking to kube-apiserver through the fault proxy (chaos/proxy.ts), from start-up on: ${Math.round(r.api.rate * 100)}% of requests get 429 with Retry-After, 500, 503, 409 (updates only) or a dropped connection instead of an answer, and every watch is cut after ${r.api.watchCutMinMs / 1000} to ${r.api.watchCutMaxMs / 1000} s.`,
    `- **outage**: ${r.restarts.replicas} replica; ${r.restarts.gapMs / 1000} s into the change the Temporal server is killed with \`kill -9\` and kept down for 2 minutes (in a full run, then 5 more minutes 30 s after it came back), then started again on its data; the controllers' writes the audit log shows meanwhile are counted.`,
    `- **restarts**: ${r.restarts.replicas} replica${r.restarts.replicas === 1 ? '' : 's'}; ${r.restarts.gapMs / 1000} s into the change etcd and kube-apiserver are killed with \`kill -9\` and started again on their data, and ${r.restarts.gapMs / 1000} s after they answer again, the Temporal server.`,
    '',
    `Both managers get the lifted client rate limit. The end state is checked when it first holds, again after the faults and a pause, field by field against upstream's, and for the invariants (exact counts, exactly the pods the workload needs made and deleted, no orphan, every controller write carrying the precondition it needs, no write by a replica after another took its activity over; from the end state and the API server's audit log; sampled every second while the change goes on, a rollout's ReplicaSets within replicas + maxSurge and its available pods at least replicas - maxUnavailable, no Job above its parallelism or running an index twice; and, for ours, no replica exited on its own, no Secret's value in a history or log, no run over its history budget). Raw results: \`${rawPath}\`.`,
    '',
    '| scenario | faults injected | upstream, no faults: converged after | ours: converged after | ours / upstream | end state held after the faults | invariant violations: upstream / ours | differences from upstream |',
    '| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |',
  ];
  for (const s of r.scenarios) {
    for (const p of s.ours) {
      const ratio = p.convergedAfterS !== undefined && s.upstream.convergedAfterS ? `${(p.convergedAfterS / s.upstream.convergedAfterS).toFixed(2)}x` : '-';
      lines.push(`| ${s.title} | ${p.faults}: ${injected(p)} | ${secs(s.upstream.convergedAfterS)} | ${secs(p.convergedAfterS)} | ${ratio} | ${p.stable ? 'yes' : 'no'} | ${s.upstream.violations.length} / ${p.violations.length} | ${p.differences.length} |`);
    }
  }
  const details = r.scenarios.flatMap((s) => {
    const items = [
      ...(s.upstream.error ? [`upstream did not finish: ${s.upstream.error}`] : []),
      ...s.upstream.violations.map((v) => `upstream: ${v}`),
      ...s.ours.flatMap((p) => [
        ...(p.error ? [`ours (${p.faults}) did not finish: ${p.error}`] : []),
        ...p.violations.map((v) => `ours (${p.faults}): ${v}`),
        ...p.differences.map((d) => `differs (${p.faults}): ${d}`),
      ]),
    ];
    return items.length ? ['', `${s.title}:`, '', ...items.map((i) => `- ${i}`)] : [];
  });
  return [...lines, ...details].join('\n') + '\n';
}

export const SEEDS_HEADING = 'Seeds';

/** Every pass of one run, as `scenario (fault)`, with why it failed (empty: it passed). */
function passOutcomes(r: ChaosResults): Array<{ pass: string; failures: string[] }> {
  return r.scenarios.flatMap((s) => [
    { pass: `${s.slug} (upstream)`, failures: [...(s.upstream.error ? [`did not finish: ${s.upstream.error}`] : []), ...s.upstream.violations] },
    ...s.ours.map((p) => ({
      pass: `${s.slug} (${p.faults})`,
      failures: passPassed(p) ? [] : [
        ...(p.error ? [`did not finish: ${p.error}`] : []),
        ...(p.convergedAfterS === undefined && !p.error ? ['never converged'] : []),
        ...(p.stable || p.convergedAfterS === undefined ? [] : ['the end state did not hold after the faults']),
        ...p.violations,
        ...p.differences.map((d) => `differs: ${d}`),
      ],
    })),
  ]);
}

/** The generated section of a `--seeds N` run: one row per seed, then every failure by seed. */
export function renderSeeds(runs: ChaosResults[], rawPath: string): string {
  const first = runs[0];
  const seeds = runs.map((r) => r.seed);
  const scenarios = first ? first.scenarios.map((s) => s.slug).join(', ') : '';
  const faults = first?.scenarios[0]?.ours.map((p) => p.faults).join(', ') ?? '';
  const lines = [
    `## ${SEEDS_HEADING} (\`npm run chaos -- ${first?.mode === 'quick' ? '--quick ' : ''}--seeds ${runs.length}\`, ${first?.startedAt.slice(0, 16).replace('T', ' ') ?? '-'} UTC)`,
    '',
    `The whole suite once per seed (${seeds.length ? `${seeds[0]} to ${seeds[seeds.length - 1]}` : 'none'}): scenarios ${scenarios}; faults ${faults}. A pass is one scenario under upstream without faults or under ours with one kind of fault; it fails on any invariant violation, a difference from upstream's end state, or an end state that never held or did not hold after the faults. Raw results: \`${rawPath}\`.`,
    '',
    '| seed | passes | passed | failed passes |',
    '| ---: | ---: | ---: | --- |',
  ];
  const details: string[] = [];
  for (const r of runs) {
    const outcomes = passOutcomes(r);
    const failed = outcomes.filter((o) => o.failures.length);
    lines.push(`| ${r.seed} | ${outcomes.length} | ${outcomes.length - failed.length} | ${failed.map((o) => o.pass).join(', ') || '-'} |`);
    for (const o of failed) for (const f of o.failures) details.push(`- seed ${r.seed}, ${o.pass}: ${f}`);
  }
  return [...lines, ...(details.length ? ['', ...details] : [])].join('\n') + '\n';
}
