import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cacheRoot, repoRoot } from './paths';
import { PinnedVersions, loadVersions, temporalCliBuild } from './versions';
import { UI_SERVER_MODULE, renderEtcdWrapperGoMod, renderKubernetesWrapperGoMod, renderTemporalWrapperGoMod, requiredVersion } from './gomod';

export type BinaryName =
  | 'temporal'
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-scheduler'
  | 'kube-controller-manager'
  | 'kubectl'
  | 'kwok'
  | 'temporal-server'
  | 'temporal-sql-tool'
  | 'temporal-ui-server';

export const ALL_BINARIES: BinaryName[] = [
  'temporal', 'etcd', 'kube-apiserver', 'kube-scheduler', 'kube-controller-manager', 'kubectl', 'kwok',
  'temporal-server', 'temporal-sql-tool', 'temporal-ui-server',
];

/** What the `--temporal postgres` topology runs besides BASE_BINARIES (the dev server has the UI built in). */
export const POSTGRES_TOPOLOGY_BINARIES: BinaryName[] = ['temporal-server', 'temporal-sql-tool', 'temporal-ui-server'];
/** What every topology runs. */
export const BASE_BINARIES: BinaryName[] = ALL_BINARIES.filter((b) => !POSTGRES_TOPOLOGY_BINARIES.includes(b));

/** One `go` invocation can produce several binaries (the Kubernetes ones share most of their compile). */
interface BuildGroup {
  id: 'temporal' | 'etcd' | 'kubernetes' | 'kwok' | 'temporal-server' | 'temporal-ui-server';
  binaries: BinaryName[];
  /** go names a binary after its package directory; this renames what it built (server -> temporal-server) */
  builtAs?: Partial<Record<BinaryName, string>>;
  version: (v: PinnedVersions) => string;
  /** Go command that puts the binaries into `outDir`. */
  command: (v: PinnedVersions, outDir: string) => { args: string[]; cwd: string; env?: NodeJS.ProcessEnv };
  /** Make sure the in-repo wrapper module matches the pinned version before building. */
  prepare?: (v: PinnedVersions, log: Logger) => Promise<void>;
}

export type Logger = (line: string) => void;

const BUILD_GROUPS: BuildGroup[] = [
  {
    // from a wrapper module of its own, so that it links the pinned modernc.org/sqlite (PinnedVersions.temporalCliSqlite says why)
    id: 'temporal',
    binaries: ['temporal'],
    version: (v) => temporalCliBuild(v),
    prepare: async (v, log) => ensureTemporalCliModule(v, log),
    command: (_v, outDir) => ({
      args: ['build', '-mod=mod', '-trimpath', '-o', path.join(outDir, 'temporal'), 'github.com/temporalio/cli/cmd/temporal'],
      cwd: path.join(repoRoot, 'hack', 'temporal-cli'),
    }),
  },
  {
    id: 'kwok',
    binaries: ['kwok'],
    version: (v) => v.kwok,
    command: (v, outDir) => ({
      args: ['install', '-trimpath', `sigs.k8s.io/kwok/cmd/kwok@${v.kwok}`],
      cwd: outDir,
      env: { GOBIN: outDir },
    }),
  },
  {
    id: 'etcd',
    binaries: ['etcd'],
    version: (v) => v.etcd,
    prepare: async (v, log) => ensureWrapperModule('etcd', 'go.etcd.io/etcd/server/v3', v.etcd, log),
    command: (_v, outDir) => ({
      args: ['build', '-mod=mod', '-trimpath', '-o', path.join(outDir, 'etcd'), 'go.etcd.io/etcd/server/v3'],
      cwd: path.join(repoRoot, 'hack', 'etcd'),
    }),
  },
  {
    id: 'temporal-server',
    binaries: ['temporal-server', 'temporal-sql-tool'],
    builtAs: { 'temporal-server': 'server', 'temporal-sql-tool': 'sql' },
    version: (v) => v.temporalServer,
    prepare: async (v, log) => temporalWrapperModuleOnce(v, log),
    command: (_v, outDir) => ({
      args: ['build', '-mod=mod', '-trimpath', '-o', outDir + path.sep, 'go.temporal.io/server/cmd/server', 'go.temporal.io/server/cmd/tools/sql'],
      cwd: path.join(repoRoot, 'hack', 'temporal'),
    }),
  },
  {
    // The Web UI server (what the dev server embeds, as its own process): built from the same wrapper
    // module, at the version the CLI requires, with the UI's assets embedded in the binary. Its own
    // group and cache dir, as its version is not the server's.
    id: 'temporal-ui-server',
    binaries: ['temporal-ui-server'],
    builtAs: { 'temporal-ui-server': 'server' },
    version: (v) => v.temporalUiServer,
    prepare: async (v, log) => temporalWrapperModuleOnce(v, log),
    command: (_v, outDir) => ({
      args: ['build', '-mod=mod', '-trimpath', '-o', outDir + path.sep, `${UI_SERVER_MODULE}/cmd/server`],
      cwd: path.join(repoRoot, 'hack', 'temporal'),
    }),
  },
  {
    id: 'kubernetes',
    binaries: ['kube-apiserver', 'kube-scheduler', 'kube-controller-manager', 'kubectl'],
    version: (v) => v.kubernetes,
    prepare: async (v, log) => ensureWrapperModule('k8s', 'k8s.io/kubernetes', v.kubernetes, log),
    command: (v, outDir) => ({
      args: [
        'build', '-mod=mod', '-trimpath', '-ldflags', kubernetesVersionLdflags(v.kubernetes), '-o', outDir + path.sep,
        ...['kube-apiserver', 'kube-scheduler', 'kube-controller-manager', 'kubectl'].map((c) => `k8s.io/kubernetes/cmd/${c}`),
      ],
      cwd: path.join(repoRoot, 'hack', 'k8s'),
    }),
  },
];

/**
 * Upstream's release build stamps the version into the binaries; without it kube-apiserver reports
 * v0.0.0-master to every client (kubectl version, discovery), and version-skew checks misfire.
 */
export function kubernetesVersionLdflags(version: string): string {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new Error(`not a Kubernetes release tag: ${version}`);
  const vars: Record<string, string> = {
    gitVersion: version,
    gitMajor: m[1],
    gitMinor: m[2],
    gitCommit: 'unknown',
    gitTreeState: 'archive',
    buildDate: '1970-01-01T00:00:00Z',
  };
  return Object.entries(vars)
    .flatMap(([k, val]) => ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].map((pkg) => `-X ${pkg}.${k}=${val}`))
    .join(' ');
}

function groupOf(name: BinaryName): BuildGroup {
  const g = BUILD_GROUPS.find((b) => b.binaries.includes(name));
  if (!g) throw new Error(`no build recipe for ${name}`);
  return g;
}

/** KUBE_APISERVER_BIN, ETCD_BIN, TEMPORAL_BIN, TEMPORAL_SERVER_BIN, TEMPORAL_SQL_TOOL_BIN, TEMPORAL_UI_SERVER_BIN, ... */
export function envVarFor(name: BinaryName): string {
  return name.toUpperCase().replace(/-/g, '_') + '_BIN';
}

export function cachedPath(name: BinaryName, versions: PinnedVersions = loadVersions()): string {
  const g = groupOf(name);
  return path.join(cacheRoot(), g.id, g.version(versions), name);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

export function findOnPath(name: string, pathVar = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface ResolvedBinary {
  name: BinaryName;
  path: string;
  source: 'env' | 'path' | 'cache' | 'built';
}

/**
 * Where a binary comes from without building: the env var a user set, then our cache (exactly the
 * pinned version), then PATH (a release binary the user installed saves the build).
 */
export function locateBinary(name: BinaryName, versions: PinnedVersions = loadVersions()): ResolvedBinary | undefined {
  const envVar = envVarFor(name);
  const fromEnv = process.env[envVar];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new BuildError(`${envVar}=${fromEnv} is not an executable file`);
    return { name, path: fromEnv, source: 'env' };
  }
  const cached = cachedPath(name, versions);
  if (isExecutable(cached)) return { name, path: cached, source: 'cache' };
  const onPath = findOnPath(name);
  if (onPath) return { name, path: onPath, source: 'path' };
  return undefined;
}

export class BuildError extends Error {}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

async function runGo(args: string[], cwd: string, extraEnv: NodeJS.ProcessEnv | undefined, logFile: string): Promise<void> {
  const goBin = findOnPath('go');
  if (!goBin) {
    throw new BuildError(
      'the Go toolchain (`go`) is not on PATH, and a binary has to be built. Install Go 1.25 or newer, ' +
        'or point the *_BIN environment variables (e.g. KUBE_APISERVER_BIN, ETCD_BIN, TEMPORAL_BIN, KWOK_BIN) at release binaries.',
    );
  }
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const out = fs.openSync(logFile, 'w');
  try {
    const code: number = await new Promise((resolve, reject) => {
      const child = spawn(goBin, args, { cwd, env: { ...process.env, ...extraEnv }, stdio: ['ignore', out, out] });
      child.on('error', reject);
      child.on('exit', (c, sig) => resolve(c ?? (sig ? 128 : 1)));
    });
    if (code !== 0) {
      const tail = fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-40).join('\n');
      throw new BuildError(`go ${args.join(' ')} failed (exit ${code}) in ${cwd}:\n${tail}\n(full log: ${logFile})`);
    }
  } finally {
    fs.closeSync(out);
  }
}

async function goModDownloadGoMod(module: string, version: string, logFile: string): Promise<string> {
  const tmp = fs.mkdtempSync(path.join(cacheRoot(), 'gomod-'));
  try {
    await runGo(['mod', 'download', '-json', `${module}@${version}`], tmp, { GOFLAGS: '-mod=mod' }, logFile);
    const text = fs.readFileSync(logFile, 'utf8');
    const info = JSON.parse(text.slice(text.indexOf('{'))) as { GoMod?: string };
    if (!info.GoMod) throw new BuildError(`go mod download gave no go.mod for ${module}@${version}`);
    return fs.readFileSync(info.GoMod, 'utf8');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * hack/temporal-cli/go.mod: the pinned CLI and the pinned modernc.org/sqlite, which minimal version
 * selection then builds it with (the CLI asks for an older one). The build with -mod=mod adds the
 * rest of the CLI's requirements and go.sum; a changed pin starts the file over.
 */
function ensureTemporalCliModule(v: PinnedVersions, log: Logger): void {
  const dir = path.join(repoRoot, 'hack', 'temporal-cli');
  const goModPath = path.join(dir, 'go.mod');
  const current = fs.existsSync(goModPath) ? fs.readFileSync(goModPath, 'utf8') : '';
  if (requiredVersion(current, 'github.com/temporalio/cli') === v.temporalCli && requiredVersion(current, 'modernc.org/sqlite') === v.temporalCliSqlite) return;
  log(`generating hack/temporal-cli/go.mod for temporal CLI ${v.temporalCli} with modernc.org/sqlite ${v.temporalCliSqlite}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(goModPath, [
    '// Generated by starter/local/binaries.ts from hack/versions.json: the temporal CLI built with the',
    '// pinned modernc.org/sqlite instead of the one its own go.mod names (starter/local/versions.ts says why).',
    'module temporal-kcm/hack/temporal-cli',
    '',
    'go 1.25.0',
    '',
    'require (',
    `\tgithub.com/temporalio/cli ${v.temporalCli}`,
    `\tmodernc.org/sqlite ${v.temporalCliSqlite}`,
    ')',
    '',
  ].join('\n'));
  fs.rmSync(path.join(dir, 'go.sum'), { force: true });
}

/** Regenerate hack/<dir>/go.mod from upstream's go.mod when it does not require the pinned version. */
export async function ensureWrapperModule(dir: 'k8s' | 'etcd', module: string, version: string, log: Logger, force = false): Promise<void> {
  const goModPath = path.join(repoRoot, 'hack', dir, 'go.mod');
  const current = fs.existsSync(goModPath) ? fs.readFileSync(goModPath, 'utf8') : '';
  const sameVersion = requiredVersion(current, module) === version;
  if (sameVersion && !force) return;
  log(`generating hack/${dir}/go.mod for ${module} ${version} from upstream's go.mod`);
  const upstream = await goModDownloadGoMod(module, version, path.join(cacheRoot(), 'logs', `gomod-${dir}.log`));
  const rendered = dir === 'k8s' ? renderKubernetesWrapperGoMod(upstream, version) : renderEtcdWrapperGoMod(upstream, version);
  fs.writeFileSync(goModPath, rendered);
  // go.sum entries for another version are useless; the build with -mod=mod writes the new ones.
  if (!sameVersion) fs.rmSync(path.join(repoRoot, 'hack', dir, 'go.sum'), { force: true });
}

/**
 * Regenerate hack/temporal/go.mod from the pinned CLI's go.mod when it does not require the pinned
 * server and Web UI server. The CLI must be the one that embeds both: a mismatch is a versions.json mistake.
 */
export async function ensureTemporalWrapperModule(v: PinnedVersions, log: Logger, force = false): Promise<void> {
  const goModPath = path.join(repoRoot, 'hack', 'temporal', 'go.mod');
  const current = fs.existsSync(goModPath) ? fs.readFileSync(goModPath, 'utf8') : '';
  const sameVersion = requiredVersion(current, 'go.temporal.io/server') === v.temporalServer
    && requiredVersion(current, UI_SERVER_MODULE) === v.temporalUiServer;
  if (sameVersion && !force) return;
  log(`generating hack/temporal/go.mod for go.temporal.io/server ${v.temporalServer} and ${UI_SERVER_MODULE} ${v.temporalUiServer} from the go.mod of temporal CLI ${v.temporalCli}`);
  const cliGoMod = await goModDownloadGoMod('github.com/temporalio/cli', v.temporalCli, path.join(cacheRoot(), 'logs', 'gomod-temporal.log'));
  const cliServer = requiredVersion(cliGoMod, 'go.temporal.io/server');
  if (cliServer !== v.temporalServer) {
    throw new BuildError(`hack/versions.json: temporalServer ${v.temporalServer} is not the server temporal CLI ${v.temporalCli} embeds (${cliServer}); pin them together`);
  }
  const cliUi = requiredVersion(cliGoMod, UI_SERVER_MODULE);
  if (cliUi !== v.temporalUiServer) {
    throw new BuildError(`hack/versions.json: temporalUiServer ${v.temporalUiServer} is not the Web UI server temporal CLI ${v.temporalCli} embeds (${cliUi}); pin them together`);
  }
  fs.mkdirSync(path.dirname(goModPath), { recursive: true });
  fs.writeFileSync(goModPath, renderTemporalWrapperGoMod(cliGoMod, v.temporalCli, v.temporalServer));
  if (!sameVersion) fs.rmSync(path.join(repoRoot, 'hack', 'temporal', 'go.sum'), { force: true });
}

/**
 * The two groups built from hack/temporal prepare its go.mod once per process: built in parallel,
 * each checking (and perhaps rewriting, and removing go.sum) on its own would race the other's build.
 */
let temporalWrapperPrepared: Promise<void> | undefined;
function temporalWrapperModuleOnce(v: PinnedVersions, log: Logger): Promise<void> {
  temporalWrapperPrepared ??= ensureTemporalWrapperModule(v, log).catch((e: unknown) => {
    temporalWrapperPrepared = undefined; // a later build in this process tries again
    throw e;
  });
  return temporalWrapperPrepared;
}

async function buildGroup(g: BuildGroup, versions: PinnedVersions, log: Logger): Promise<void> {
  const version = g.version(versions);
  const finalDir = path.join(cacheRoot(), g.id, version);
  const tmpDir = `${finalDir}.building-${process.pid}`;
  fs.rmSync(tmpDir, { recursive: true, force: true });
  fs.mkdirSync(tmpDir, { recursive: true });
  const started = Date.now();
  const what = `${g.binaries.join(', ')} (${g.id} ${version})`;
  log(`building ${what} with Go; a cold build can take several minutes`);
  const heartbeat = setInterval(() => log(`  still building ${g.id}... ${formatDuration(Date.now() - started)}`), 60_000);
  try {
    await g.prepare?.(versions, log);
    const cmd = g.command(versions, tmpDir);
    await runGo(cmd.args, cmd.cwd, cmd.env, path.join(cacheRoot(), 'logs', `build-${g.id}-${version}.log`));
    const built = (b: BinaryName) => path.join(tmpDir, g.builtAs?.[b] ?? b);
    for (const b of g.binaries) {
      if (!isExecutable(built(b))) throw new BuildError(`go build finished but produced no ${path.basename(built(b))} in ${tmpDir}`);
    }
    // Rename into place only when complete, so an interrupted build never leaves a half binary in the cache.
    fs.mkdirSync(finalDir, { recursive: true });
    for (const b of g.binaries) fs.renameSync(built(b), path.join(finalDir, b));
    log(`built ${what} in ${formatDuration(Date.now() - started)}`);
  } finally {
    clearInterval(heartbeat);
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}

/**
 * Resolve every requested binary, building the missing ones (in parallel: Go's build cache is
 * safe to share, and downloads of one overlap compiles of another).
 */
export async function ensureBinaries(
  names: BinaryName[] = ALL_BINARIES,
  log: Logger = (l) => process.stderr.write(l + '\n'),
): Promise<Record<BinaryName, string>> {
  const versions = loadVersions();
  const missingGroups = new Set<BuildGroup>();
  for (const name of names) {
    const found = locateBinary(name, versions);
    if (!found) missingGroups.add(groupOf(name));
    else if (found.source === 'env') log(`using ${name} from ${envVarFor(name)}: ${found.path}`);
  }
  const failures: Error[] = [];
  await Promise.all(
    [...missingGroups].map((g) => buildGroup(g, versions, log).catch((e: Error) => failures.push(e))),
  );
  if (failures.length) throw new BuildError(failures.map((f) => f.message).join('\n\n'));
  // Resolve again after building: a group build also caches siblings that PATH had offered.
  const result: Partial<Record<BinaryName, string>> = {};
  for (const name of names) {
    const found = locateBinary(name, versions)!;
    result[name] = found.path;
    if (found.source === 'path') log(`using ${name} from PATH: ${found.path}`);
  }
  return result as Record<BinaryName, string>;
}
