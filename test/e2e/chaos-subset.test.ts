import * as fs from 'node:fs';
import * as path from 'node:path';
import { attachRunningStack } from '../../bench/lib/stack';
import { runChaos } from '../../chaos/suite';
import { TEST_DATA_DIR } from '../support/stack';

/**
 * `npm run chaos`'s short form: the quick hostile corpus (overlapping selectors, ownership cycles
 * of two and three, self-owners and dangling owners, a ReplicaSet starved by quota, a 1 MiB pod
 * template, a Deployment whose eleven ReplicaSets weigh 11 MiB of random bytes, a crowded Service,
 * CronJobs that never or too late fire, a 10,000-index Job, namespaces that never finish) beside a
 * canary Deployment, under upstream kube-controller-manager without faults and then under three
 * replicas of ours, each killed once with kill -9. Checked as `npm run chaos` checks it:
 * every object ends where upstream's does, field by field, and no invariant (exact counts, write
 * preconditions, no Secret bytes in a history or log, history budgets, replicas alive) is broken.
 * The seed is fixed, so a failure here is repeated by `npm run chaos -- --quick --scenarios
 * hostile --faults kills --kills 3 --seed 795`: it kills every replica, the first 5.3 s into the
 * change, while the corpus is still being worked on, and the others 5 to 7 s apart.
 */
const SEED = 795;
const KILLS = 3;
const lines: string[] = [];
const log = (l: string) => lines.push(`${new Date().toISOString().slice(11, 19)} ${l}`);

test('the hostile corpus under a kill storm ends as upstream leaves it, with no invariant broken', async () => {
  const stack = attachRunningStack(TEST_DATA_DIR);
  const results = await runChaos(stack, { mode: 'quick', scenarios: ['hostile'], faults: ['kills'], faultRate: 0.2, kills: KILLS, seed: SEED, out: '' }, SEED, log);
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'chaos-subset.json'), JSON.stringify({ results, log: lines }, null, 1));

  const [hostile] = results.scenarios;
  const { convergedAfterS, ...upstream } = hostile.upstream;
  expect(upstream).toEqual({ stable: true, violations: [] });
  expect(convergedAfterS).toBeDefined();
  const [ours] = hostile.ours;
  // the storm ran in full, every replica replaced
  expect(ours.kills).toHaveLength(KILLS);
  expect({ error: ours.error, stable: ours.stable, converged: ours.convergedAfterS !== undefined, violations: ours.violations, differences: ours.differences })
    .toEqual({ error: undefined, stable: true, converged: true, violations: [], differences: [] });
}, 900_000);
