import { execFile, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TEMPORAL_DATABASES } from './temporal-topology';

/**
 * PostgreSQL for the `--temporal postgres` topology: the machine's own installation (Debian's
 * postgresql package), a cluster of our own under <data>/postgres/, listening on 127.0.0.1 only.
 */

/** The role Temporal connects as; it owns both databases. */
export const POSTGRES_USER = 'temporal';

export class PostgresError extends Error {}

export interface PostgresPaths {
  dir: string;
  /** PGDATA */
  data: string;
  /** unix_socket_directories: inside the data dir, not the system's /var/run/postgresql */
  socket: string;
  /** the temporal role's password (0600, read by `up` when it writes the server config) */
  passwordFile: string;
}

export function postgresPaths(dataDir: string): PostgresPaths {
  const dir = path.join(dataDir, 'postgres');
  return { dir, data: path.join(dir, 'data'), socket: path.join(dir, 'socket'), passwordFile: path.join(dataDir, 'pki', 'postgres-temporal.password') };
}

/**
 * Where the server binaries are: $POSTGRES_BIN_DIR, else Debian's /usr/lib/postgresql/<major>/bin
 * (the newest major installed). Debian does not put initdb and postgres on PATH.
 */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env, root = '/usr/lib/postgresql'): string {
  const has = (dir: string) => ['initdb', 'postgres', 'pg_isready'].every((b) => fs.existsSync(path.join(dir, b)));
  if (env.POSTGRES_BIN_DIR) {
    if (!has(env.POSTGRES_BIN_DIR)) throw new PostgresError(`POSTGRES_BIN_DIR=${env.POSTGRES_BIN_DIR} has no initdb, postgres and pg_isready`);
    return env.POSTGRES_BIN_DIR;
  }
  const majors = (fs.existsSync(root) ? fs.readdirSync(root) : []).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
  for (const m of majors) if (has(path.join(root, m, 'bin'))) return path.join(root, m, 'bin');
  throw new PostgresError('PostgreSQL is not installed (no /usr/lib/postgresql/<major>/bin with initdb and postgres): `apt-get install postgresql`, or set POSTGRES_BIN_DIR');
}

/** Whom postgres runs as: itself refuses to run as root, so root runs it as the `postgres` system user. */
export interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

export function postgresRunAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) {
    throw new PostgresError('running as root, and PostgreSQL refuses to: it is run as the `postgres` system user, which does not exist here (Debian\'s postgresql package creates it)');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), name: 'postgres' };
}

/** The server's flags: its own data and socket dirs, loopback only, the stack's port. */
export function postgresArgs(p: PostgresPaths, port: number): string[] {
  return [
    '-D', p.data,
    '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1',
    '-c', `unix_socket_directories=${p.socket}`,
    // Temporal's services each keep their own pools (default store up to 20, visibility up to 10
    // connections per service, five services in the process): more than the default 100
    '-c', 'max_connections=200',
    '-c', 'log_min_messages=warning',
  ];
}

/**
 * Make the postgres dir and, once, the cluster (initdb): the `temporal` role as its superuser,
 * password auth over TCP, peer auth on the socket. A data dir made before keeps its cluster and
 * password, as etcd keeps its data.
 */
export function ensurePostgresCluster(dataDir: string, binDir: string, runAs: RunAs | undefined): PostgresPaths {
  const p = postgresPaths(dataDir);
  fs.mkdirSync(p.dir, { recursive: true, mode: 0o700 });
  if (runAs) {
    fs.chownSync(p.dir, runAs.uid, runAs.gid);
    // the postgres user must reach its dir through the data dir's parents
    const probe = spawnSync('test', ['-x', p.dir], { uid: runAs.uid, gid: runAs.gid });
    if (probe.status !== 0) {
      throw new PostgresError(`the postgres user cannot reach ${p.dir}: a parent directory of the data dir is not searchable by others (chmod o+x it, or use a --data-dir elsewhere)`);
    }
  }
  for (const d of [p.socket]) {
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    if (runAs) fs.chownSync(d, runAs.uid, runAs.gid);
  }
  if (!fs.existsSync(p.passwordFile)) {
    fs.mkdirSync(path.dirname(p.passwordFile), { recursive: true, mode: 0o700 });
    fs.writeFileSync(p.passwordFile, crypto.randomBytes(18).toString('base64url') + '\n', { mode: 0o600 });
  }
  if (fs.existsSync(path.join(p.data, 'PG_VERSION'))) return p;
  // A half-made cluster (initdb interrupted) is made again from scratch.
  fs.rmSync(p.data, { recursive: true, force: true });
  // initdb reads the password from a file it can open; it is removed again at once
  const pwfile = path.join(p.dir, 'initdb.pw');
  fs.writeFileSync(pwfile, readPostgresPassword(dataDir) + '\n', { mode: 0o600 });
  if (runAs) fs.chownSync(pwfile, runAs.uid, runAs.gid);
  try {
    const r = spawnSync(path.join(binDir, 'initdb'), [
      '-D', p.data, '-U', POSTGRES_USER, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=peer',
      '-E', 'UTF8', '--locale=C',
    ], { cwd: p.dir, encoding: 'utf8', ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) });
    if (r.status !== 0) throw new PostgresError(`initdb failed (exit ${r.status}):\n${(r.stderr || r.stdout || String(r.error)).trim()}`);
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
  return p;
}

export function readPostgresPassword(dataDir: string): string {
  return fs.readFileSync(postgresPaths(dataDir).passwordFile, 'utf8').trim();
}

/** pg_isready: the server accepts connections (not merely its port open during recovery). */
export function postgresReady(binDir: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(path.join(binDir, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port), '-t', '2'], { timeout: 5000 }, (err) => resolve(!err));
  });
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

/**
 * The two databases and their schemas, as Temporal's own auto-setup does it: create the database,
 * set up the versioning tables at 0.0, then update to the newest schema embedded in this
 * temporal-sql-tool. Each step is a no-op when done before (checked on PostgreSQL 15: creating an
 * existing database and setting up existing versioning tables both succeed and keep the version),
 * so it runs at every start, and a half-done setup is finished. After a server version bump the
 * update step migrates the schema, as an operator would before rolling out the new server.
 */
export async function ensureTemporalSchemas(sqlTool: string, port: number, password: string, log: (l: string) => void): Promise<void> {
  // the password goes by environment, not argv (which `ps` shows every user)
  const env = { SQL_PASSWORD: password };
  const base = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '--port', String(port), '--user', POSTGRES_USER];
  const schemas: [string, string][] = [[TEMPORAL_DATABASES.default, 'postgresql/v12/temporal'], [TEMPORAL_DATABASES.visibility, 'postgresql/v12/visibility']];
  for (const [db, schema] of schemas) {
    const t0 = Date.now();
    const steps: [string, string[]][] = [
      ['create-database', []],
      ['setup-schema', ['-v', '0.0']],
      ['update-schema', ['--schema-name', schema]],
    ];
    for (const [step, args] of steps) {
      const r = await run(sqlTool, [...base, '--db', db, step, ...args], env);
      if (r.code !== 0 && !(step === 'create-database' && /already exists/.test(r.out))) {
        throw new PostgresError(`temporal-sql-tool ${step} ${db} failed (exit ${r.code}):\n${r.out.trim().split('\n').slice(-15).join('\n')}`);
      }
    }
    log(`  postgres        database ${db} at the newest ${schema} schema (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
  }
}
