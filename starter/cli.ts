import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ALL_BINARIES, BuildError, ensureBinaries, ensureTemporalWrapperModule, ensureWrapperModule } from './local/binaries';
import { defaultDataDir } from './local/paths';
import { loadVersions } from './local/versions';
import { normalizeRunArgs } from './upstream-flag-options';
import { UPSTREAM_VERSION } from './upstream-flags';
import { PORT_NAMES, PortName, StackError, connectionEnv, describeStack, down, readState, stackTemporal, status, up } from './local/stack';
import { PortInUseError } from './local/ports';
import { TEMPORAL_TOPOLOGIES, TemporalTopology, isTemporalTopology, temporalTlsArgs } from './local/temporal-topology';
import { pkiPaths } from './local/pki';
import { RunOptions, addRunOptions, camel, resolveRunOptions } from './run-options';
import { SERVICE_ACCOUNT_PRIVATE_KEY_FILE } from '../activities/serviceaccount-token/controller';
import { runManager } from './run';
import { addOperateCommands } from './operate/commands';
import { OperateError } from './operate/errors';
import { addReplayCommand } from './replay/command';
import { addWhyCommand } from './why/command';
import { addShadowCommands } from './shadow/report';
import { USAGE_EXIT_CODE } from './operate/usage';

export { USAGE_EXIT_CODE };

function intArg(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

/** The ports a user may choose; the postgres topology's internal server ports are always picked free. */
const PORT_FLAGS: Partial<Record<PortName, string>> = {
  etcd: 'etcd-port',
  etcdPeer: 'etcd-peer-port',
  apiserver: 'apiserver-port',
  scheduler: 'scheduler-port',
  kwok: 'kwok-port',
  temporal: 'temporal-port',
  temporalUi: 'temporal-ui-port',
  temporalHttp: 'temporal-http-port',
  temporalMetrics: 'temporal-metrics-port',
  metricsStandin: 'metrics-standin-port',
  postgres: 'postgres-port',
};

function temporalTopologyArg(value: string): TemporalTopology {
  if (!isTemporalTopology(value)) throw new InvalidArgumentError(`must be one of ${TEMPORAL_TOPOLOGIES.join(', ')}`);
  return value;
}

/** `--temporal dev|postgres`; no default here, so `up` keeps what the data dir ran last. */
function temporalTopologyOption(): Option {
  return new Option('--temporal <topology>',
    'which Temporal the stack runs: dev (temporal server start-dev, SQLite, Web UI) or postgres (temporal-server with its services, PostgreSQL, mTLS frontend, the Web UI server); default: the last one of the data dir, else dev')
    .argParser(temporalTopologyArg);
}

function dataDirOption(): Option {
  return new Option('--data-dir <dir>', 'where the stack keeps its state, logs and kubeconfigs (env TEMPORAL_KCM_DATA_DIR)').default(defaultDataDir(), '.local');
}

const print = (line: string) => process.stdout.write(line + '\n');
const packageVersion = () => (JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
const note = (line: string) => process.stderr.write(line + '\n');

async function localUp(opts: Record<string, unknown>): Promise<void> {
  const ports: Partial<Record<PortName, number>> = {};
  for (const p of PORT_NAMES) {
    const flag = PORT_FLAGS[p];
    const v = flag ? opts[camel(flag)] : undefined;
    if (typeof v === 'number') ports[p] = v;
  }
  const state = await up({
    dataDir: opts.dataDir as string, nodes: opts.nodes as number | undefined, temporal: opts.temporal as TemporalTopology | undefined,
    ports, timeoutMs: (opts.timeout as number) * 1000,
  });
  print(describeStack(state));
  print(`\nuse it:  eval "$(npx temporal-kcm local env${path.resolve(state.dataDir) === path.resolve('.local') ? '' : ` --data-dir ${state.dataDir}`})"`);
}

export function buildProgram(): Command {
  const program = new Command('temporal-kcm')
    .description('kube-controller-manager on Temporal: one durable workflow per watched object')
    .showHelpAfterError()
    .exitOverride();

  const runCmd = addRunOptions(
    program.command('run').description('run the controller manager (one replica; start as many as you like against one Temporal namespace and task queue)'),
  );
  runCmd.action(async () => {
    // upstream's --version: the version, then exit
    if (runCmd.getOptionValue('version') !== undefined) {
      print(`temporal-kcm ${packageVersion()} (kube-controller-manager ${UPSTREAM_VERSION})`);
      return;
    }
    await runManager(resolveOrUsage(runCmd));
  });

  program
    .command('start')
    .description('bring the local stack up and run the controller manager against it (npm start)')
    .addOption(dataDirOption())
    .addOption(new Option('--nodes <n>', 'number of kwok fake nodes').argParser(intArg(1, 1000)))
    .addOption(temporalTopologyOption())
    .action(async (opts: Record<string, unknown>) => {
      await localUp({ ...opts, timeout: 180 });
      const env = await connectionEnv(opts.dataDir as string);
      const state = readState(path.resolve(opts.dataDir as string));
      if (!state) throw new StackError('the local stack wrote no state.json');
      note(`\nrunning the controller manager against it (Ctrl-C stops the manager; \`npx temporal-kcm local down\` stops the stack)`);
      const pki = pkiPaths(path.resolve(opts.dataDir as string));
      // `run` with the stack's flags, so what start runs is exactly what `run` would with them
      // and as kubeadm runs it: its own identity system:kube-controller-manager, each controller as its ServiceAccount
      const runCmd = addRunOptions(new Command('run').exitOverride()).parse([
        '--kubeconfig', path.join(path.resolve(opts.dataDir as string), 'kube-controller-manager.kubeconfig'), '--use-service-account-credentials',
        '--temporal-address', env.TEMPORAL_ADDRESS, '--secure-port', '0',
        // the postgres topology's frontend requires the stack's client certificate
        ...temporalTlsArgs(stackTemporal(state).tls),
        `--${SERVICE_ACCOUNT_PRIVATE_KEY_FILE.name}`, pki.serviceAccountKey, '--root-ca-file', pki.caCert,
      ], { from: 'user' });
      await runManager(resolveRunOptions(runCmd));
    });

  addWhyCommand(program);
  addOperateCommands(program);
  addReplayCommand(program);
  addShadowCommands(program);

  const local = program.command('local').description('the local stack: etcd, kube-apiserver, kube-scheduler, kwok nodes, Temporal (dev server, or --temporal postgres)');

  const upCmd = local
    .command('up')
    .description('start the local stack (idempotent: running parts are kept), wait until healthy, print where it listens')
    .addOption(dataDirOption())
    .addOption(new Option('--nodes <n>', 'number of kwok fake nodes (default 3, or as the last up)').argParser(intArg(1, 1000)))
    .addOption(new Option('--timeout <seconds>', 'how long each part may take to become healthy').argParser(intArg(1, 3600)).default(120));
  upCmd.addOption(temporalTopologyOption());
  for (const p of PORT_NAMES) {
    const flag = PORT_FLAGS[p];
    if (flag) upCmd.addOption(new Option(`--${flag} <port>`, `port for ${p} (default: a free one)`).argParser(intArg(1, 65535)));
  }
  upCmd.action(localUp);

  local
    .command('down')
    .description('stop exactly the processes `up` started (by pid file)')
    .addOption(dataDirOption())
    .option('--purge', 'also delete the data dir (cluster and Temporal state, certificates, logs)')
    .action(async (opts: { dataDir: string; purge?: boolean }) => {
      const stopped = await down(opts.dataDir, { purge: opts.purge });
      if (!stopped.length) note('nothing was running');
    });

  local
    .command('status')
    .description('show each part: pid, health, address (exit 1 unless all are healthy)')
    .addOption(dataDirOption())
    .action(async (opts: { dataDir: string }) => {
      const { parts } = await status(opts.dataDir);
      for (const p of parts) {
        const st = !p.running ? 'stopped' : p.healthy ? 'healthy' : 'unhealthy';
        print(`${p.name.padEnd(15)} ${st.padEnd(9)} ${String(p.pid ?? '-').padEnd(8)} ${p.address}`);
      }
      if (!parts.every((p) => p.healthy)) process.exitCode = 1;
    });

  local
    .command('env')
    .description('print export lines (KUBECONFIG, TEMPORAL_ADDRESS, ...) for eval')
    .addOption(dataDirOption())
    .action(async (opts: { dataDir: string }) => {
      const env = await connectionEnv(opts.dataDir);
      for (const [k, v] of Object.entries(env)) print(`export ${k}=${shellQuote(v)}`);
    });

  local
    .command('build')
    .description('build (or find) every binary of the stack and print its path')
    .action(async () => {
      const bins = await ensureBinaries(ALL_BINARIES);
      for (const [name, p] of Object.entries(bins)) print(`${name.padEnd(24)} ${p}`);
    });

  local
    .command('gen-modules')
    .description("regenerate hack/k8s/go.mod, hack/etcd/go.mod and hack/temporal/go.mod from upstream's go.mod for the pinned versions")
    .action(async () => {
      const v = loadVersions();
      await ensureWrapperModule('k8s', 'k8s.io/kubernetes', v.kubernetes, note, true);
      await ensureWrapperModule('etcd', 'go.etcd.io/etcd/server/v3', v.etcd, note, true);
      await ensureTemporalWrapperModule(v, note, true);
    });

  return program;
}

/** Invalid flag values are usage errors: message, usage, exit code 2 (through exitOverride). */
function resolveOrUsage(cmd: Command): RunOptions {
  try {
    return resolveRunOptions(cmd);
  } catch (e) {
    if (e instanceof InvalidArgumentError) cmd.error(`error: ${e.message}`, { exitCode: USAGE_EXIT_CODE, code: 'temporal-kcm.invalidArgument' });
    throw e;
  }
}

function shellQuote(v: string): string {
  return /^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Errors we expect users to meet get one clear line, not a stack trace. */
function isExpected(e: unknown): e is Error {
  return e instanceof StackError || e instanceof BuildError || e instanceof PortInUseError || e instanceof OperateError;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    // pflag's spellings: `--concurrent_rc_syncs`, `-v=2`
    await program.parseAsync(argv[0] === 'run' ? ['run', ...normalizeRunArgs(argv.slice(1))] : argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version are not errors; anything else commander rejects is a usage error
      process.exit(e.exitCode === 0 ? 0 : USAGE_EXIT_CODE);
    }
    note(`error: ${isExpected(e) ? e.message : (e as Error)?.stack ?? String(e)}`);
    process.exit(1);
  }
}
