import type { KillRecord, StormPlan } from './storm';
import type { ChaosMode } from './scenarios/types';

/** One manager's pass through one scenario. */
export interface PassRecord {
  /** from the change until the end state first held, s (undefined: never within the run) */
  convergedAfterS?: number;
  /** the end state held again after the storm and a settling pause */
  stable: boolean;
  violations: string[];
  error?: string;
}

export interface ScenarioRecord {
  slug: string;
  title: string;
  upstream: PassRecord;
  ours: PassRecord & { kills: KillRecord[]; killsBeforeConverged: number };
  /** where ours ended differently from upstream, field by field */
  differences: string[];
}

export interface ChaosResults {
  mode: ChaosMode;
  seed: number;
  storm: StormPlan & { replicas: number };
  startedAt: string;
  finishedAt: string;
  scenarios: ScenarioRecord[];
}

export const STORM_HEADING = 'Kill storms';

const secs = (s: number | undefined) => (s === undefined ? 'never' : `${s.toFixed(1)} s`);

/** Did ours keep every promise in this scenario? */
export function passed(r: ScenarioRecord): boolean {
  return !r.ours.error && r.ours.stable && r.ours.convergedAfterS !== undefined && !r.ours.violations.length && !r.differences.length;
}

/** The generated section of docs/RELIABILITY.md. */
export function renderStorms(r: ChaosResults, rawPath: string): string {
  const lines = [
    `## ${STORM_HEADING} (\`npm run chaos${r.mode === 'quick' ? ' -- --quick' : ''}\`, ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `Each scenario runs twice on the chaos stack (.local/chaos-stack): once under one upstream kube-controller-manager v1.35.4 with no faults, for the reference end state, and once under ${r.storm.replicas} replicas of ours on one task queue while a random replica is killed with \`kill -9\` and restarted ${r.storm.kills} times, one every ${r.storm.minGapMs / 1000} to ${r.storm.maxGapMs / 1000} s (seed ${r.seed}; \`--seed ${r.seed}\` repeats the same storm). Both managers get the lifted client rate limit. The storm starts with the change; the end state is checked when it first holds, again after the storm and a pause, field by field against upstream's, and for the invariants (exact counts, exactly the pods the workload needs made and deleted, no orphan; from the end state and the API server's audit log). Raw results: \`${rawPath}\`.`,
    '',
    '| scenario | faults injected | upstream, no faults: converged after | ours: converged after | kills before that | end state held after the storm | invariant violations: upstream / ours | differences from upstream |',
    '| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |',
  ];
  for (const s of r.scenarios) {
    lines.push(`| ${s.title} | ${s.ours.kills.length} x kill -9 of a replica | ${secs(s.upstream.convergedAfterS)} | ${secs(s.ours.convergedAfterS)} | ${s.ours.killsBeforeConverged} | ${s.ours.stable ? 'yes' : 'no'} | ${s.upstream.violations.length} / ${s.ours.violations.length} | ${s.differences.length} |`);
  }
  const details = r.scenarios.flatMap((s) => {
    const items = [
      ...(s.upstream.error ? [`upstream did not finish: ${s.upstream.error}`] : []),
      ...(s.ours.error ? [`ours did not finish: ${s.ours.error}`] : []),
      ...s.upstream.violations.map((v) => `upstream: ${v}`),
      ...s.ours.violations.map((v) => `ours: ${v}`),
      ...s.differences.map((d) => `differs: ${d}`),
    ];
    return items.length ? ['', `${s.title}:`, '', ...items.map((i) => `- ${i}`)] : [];
  });
  return [...lines, ...details].join('\n') + '\n';
}
