/**
 * `npm run acceptance:shadow`: a shadow deployment of ours beside upstream kube-controller-manager
 * v1.35.4 through the scenarios of the deployment, replicaset, job, cronjob, endpoints and
 * garbage-collector controllers, on a stack of its own. Upstream does every write; ours proposes
 * its own as dry runs; the shadow ledger's report and the audit log go into docs/COMPATIBILITY.md.
 * Exit 0 when no write of the shadow's was real and every scenario reached its end state under
 * upstream, else 1 (the scenarios' own checks of upstream's work are reported, not judged);
 * a bad flag: usage and 2.
 */
import * as path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AuditLog, isDryRun, writesOfOurControllers } from '../bench/lib/audit';
import { SETTINGS, killAllStarted, startOurs, startUpstream, type ManagedProcess } from '../bench/lib/managers';
import { rawResultsPath, saveSection } from '../bench/lib/report';
import { startBenchStack, stopBenchStack, type BenchStack } from '../bench/lib/stack';
import { connectTemporal } from '../bench/lib/temporal';
import { sleep, waitFor, type Log } from '../bench/lib/util';
import { endpointsScenario } from '../chaos/scenarios/endpoints';
import { foregroundScenario } from '../chaos/scenarios/foreground';
import { jobsScenario } from '../chaos/scenarios/jobs';
import { rolloutScenario } from '../chaos/scenarios/rollout';
import type { ChaosContext, ChaosMode, ChaosScenario } from '../chaos/scenarios/types';
import { repoRoot } from '../starter/local/paths';
import { auditLogPath } from '../starter/local/stack';
import { pidWorkingOn } from '../test/support/manager';
import { parseGoDuration } from '../workflows/common/duration';
import { SHADOW_TASK_QUEUE_SUFFIX } from '../workflows/runtime/workflow-ids';
import { shadowLedgerWorkflowId, shadowReportQuery } from '../workflows/shadow/ledger';
import type { ShadowReport } from '../workflows/shadow/types';
import { adoptionScenario } from './scenarios/adoption';
import { cronJobsScenario } from './scenarios/cronjobs';
import { SHADOW_ACCEPTANCE_HEADING, acceptancePassed, renderShadowAcceptance, type ShadowAcceptanceResults, type ShadowScenarioRecord } from './shadow-report';

const SCENARIOS: ChaosScenario[] = [rolloutScenario, adoptionScenario, foregroundScenario, jobsScenario, cronJobsScenario, endpointsScenario];
/** the controllers the issue's acceptance names, with the endpoints controller's slice sibling */
const SHADOWED = ['deployment', 'replicaset', 'job', 'cronjob', 'endpoint', 'endpointslice', 'garbagecollector'];
const DATA_DIR = path.resolve(process.env.TEMPORAL_KCM_SHADOW_DATA_DIR ?? path.join(repoRoot, '.local', 'shadow-stack'));

interface Args { mode: ChaosMode; scenarios: ChaosScenario[]; replicas: number; window: string; out: string }

const log: Log = (l) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${l}\n`);

function parseArgs(argv: string[]): Args {
  const whole = (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 5) throw new InvalidArgumentError('a whole number 1..5');
    return n;
  };
  const duration = (v: string) => {
    try {
      if (parseGoDuration(v) > 0) return v;
    } catch { /* said below */ }
    throw new InvalidArgumentError('a positive duration such as 10s');
  };
  const scenarios = (v: string) => v.split(',').map((s) => {
    const found = SCENARIOS.find((x) => x.slug === s.trim());
    if (!found) throw new InvalidArgumentError(`unknown scenario "${s}"; known: ${SCENARIOS.map((x) => x.slug).join(', ')}`);
    return found;
  });
  const program = new Command('acceptance:shadow')
    .description('a --shadow deployment beside upstream kube-controller-manager through the scenarios; its report goes into the docs')
    .option('--quick', 'smaller workloads and two scheduled times of the CronJobs instead of four')
    .addOption(new Option('--scenarios <list>', `comma-separated, in order (default: ${SCENARIOS.map((s) => s.slug).join(',')})`).argParser(scenarios))
    .addOption(new Option('--replicas <n>', 'shadow replicas; with two or more the one holding the ledger is killed with SIGKILL halfway').argParser(whole).default(2))
    .addOption(new Option('--window <duration>', "the shadow's --shadow-window").argParser(duration).default('10s'))
    .option('--out <file>', 'the docs file whose "Shadow acceptance" section is written', 'docs/COMPATIBILITY.md')
    .showHelpAfterError()
    .exitOverride();
  program.parse(argv, { from: 'user' });
  const o = program.opts<{ quick?: boolean; scenarios?: ChaosScenario[]; replicas: number; window: string; out: string }>();
  return { mode: o.quick ? 'quick' : 'full', scenarios: o.scenarios ?? SCENARIOS, replicas: o.replicas, window: o.window, out: o.out };
}

/** A namespace made as a user makes one: upstream's serviceaccount controller gives it its `default` account. */
async function userNamespace(stack: BenchStack, slug: string): Promise<string> {
  const ns = `shadow-${slug}-${Date.now().toString(36)}`;
  await stack.rest.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  await waitFor(`${ns}'s default ServiceAccount`, () => stack.rest.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`).then(() => true), 60_000, 250);
  return ns;
}

async function runScenario(stack: BenchStack, s: ChaosScenario, mode: ChaosMode): Promise<ShadowScenarioRecord> {
  const ctx: ChaosContext = { rest: stack.rest, ns: await userNamespace(stack, s.slug), mode, log };
  const audit = new AuditLog(auditLogPath(stack.dataDir));
  log(`${s.slug}: ${s.title(mode)} in ${ctx.ns}`);
  await s.prepare(ctx);
  audit.mark();
  const t0 = Date.now();
  await s.act(ctx);
  let convergedAfterS: number | undefined;
  try {
    await waitFor(`${s.slug} converged under upstream`, () => s.converged(ctx), 900_000, 500);
    convergedAfterS = (Date.now() - t0) / 1000;
  } catch (e) {
    log(String(e));
  }
  // the scenario's checks count what was written, so the shadow's dry runs are not theirs to see
  const violations = await s.violations(ctx, audit.events().filter((e) => !isDryRun(e)));
  log(`${s.slug}: ${convergedAfterS === undefined ? 'did not converge' : `converged in ${convergedAfterS.toFixed(1)} s`}, ${violations.length} violations`);
  await s.cleanup(ctx);
  // the rest goes as a user's namespace goes: upstream's namespace controller and collector take it
  await stack.rest.request('DELETE', `/api/v1/namespaces/${ctx.ns}`).catch(() => undefined);
  return { slug: s.slug, title: s.title(mode), convergedAfterS, violations };
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    return e.code === 'commander.helpDisplayed' || e.code === 'commander.help' ? 0 : 2;
  }
  const t0 = Date.now();
  const startedAt = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  const stack = await startBenchStack(DATA_DIR, log);
  const onSignal = () => void killAllStarted().then(() => stopBenchStack(stack, log)).finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const temporal = await connectTemporal(stack.temporalAddress);
  const taskQueue = `shadow-acceptance-${Date.now().toString(36)}`;
  const ledger = temporal.client.workflow.getHandle(shadowLedgerWorkflowId(taskQueue + SHADOW_TASK_QUEUE_SUFFIX));
  const audit = new AuditLog(auditLogPath(stack.dataDir));
  try {
    audit.mark();
    // the shadow first, so it has seen the cluster before upstream's first write
    const shadowReplica = (i: number) => startOurs(stack, {
      impl: 'ours', controllers: SHADOWED, setting: SETTINGS.lifted, serviceAccountCredentials: true, taskQueue, tag: `shadow-acceptance-${i}`,
      extraFlags: ['--shadow', '--shadow-window', args.window],
    }, i);
    const replicas: ManagedProcess[] = [];
    for (let i = 0; i < args.replicas; i++) replicas.push(await shadowReplica(i));
    await startUpstream(stack, { impl: 'upstream', controllers: ['*'], setting: SETTINGS.lifted, serviceAccountCredentials: true, tag: 'shadow-acceptance' }, 0);
    const scenarios: ShadowScenarioRecord[] = [];
    const kills: ShadowAcceptanceResults['kills'] = [];
    for (const [i, s] of args.scenarios.entries()) {
      scenarios.push(await runScenario(stack, s, args.mode));
      // halfway, the replica running the ledger dies as a machine would; another takes over
      if (replicas.length > 1 && i === Math.floor((args.scenarios.length - 1) / 2)) {
        const holder = await pidWorkingOn(temporal.client, ledger.workflowId).catch(() => undefined);
        const victim = replicas.find((m) => m.pid === holder) ?? replicas[0];
        await victim.kill('SIGKILL');
        kills.push({ afterScenario: s.slug, pid: victim.pid });
        log(`killed shadow replica ${victim.pid} (ledger holder: ${holder === victim.pid})`);
      }
    }
    // every entry settles within six windows of its write; the last writes are the namespaces' going
    const windowMs = parseGoDuration(args.window);
    await sleep(2 * windowMs);
    const report = await waitFor('the shadow ledger settled', async () => {
      const r = await ledger.query(shadowReportQuery, {}) as ShadowReport;
      return r.pending.ours + r.pending.theirs === 0 ? r : undefined;
    }, 12 * windowMs + 120_000, 2000);
    const ours = writesOfOurControllers(audit.events());
    const real = ours.filter((e) => !isDryRun(e)).map((e) => `${e.verb} ${e.requestURI}`);
    const results: ShadowAcceptanceResults = {
      mode: args.mode, startedAt, durationS: (Date.now() - t0) / 1000, window: args.window, replicas: args.replicas, controllers: SHADOWED,
      scenarios, kills, writes: { dryRuns: ours.length - real.length, real }, report,
    };
    const raw = rawResultsPath(args.out, `shadow-acceptance-${args.mode}.json`);
    const generated = renderShadowAcceptance(results, raw.cited);
    saveSection({ mode: args.mode, out: raw.out, rawAbs: raw.abs, results, generated, heading: SHADOW_ACCEPTANCE_HEADING, after: 'The manager', log });
    process.stdout.write(generated);
    return acceptancePassed(results) ? 0 : 1;
  } finally {
    await killAllStarted();
    await temporal.close();
    await stopBenchStack(stack, log);
  }
}

main().then((code) => process.exit(code), (e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
