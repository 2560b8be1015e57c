import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What `up` records for each process it starts, so `down` can stop exactly that process and nothing else. */
export interface PidRecord {
  pid: number;
  binary: string;
  startedAt: string;
  /** the arguments it was started with (absent in records written before they were kept) */
  args?: string[];
}

export function runDir(dataDir: string): string {
  return path.join(dataDir, 'run');
}

export function logDir(dataDir: string): string {
  return path.join(dataDir, 'logs');
}

function pidFile(dataDir: string, name: string): string {
  return path.join(runDir(dataDir), `${name}.pid`);
}

export function readPid(dataDir: string, name: string): PidRecord | undefined {
  try {
    const rec = JSON.parse(fs.readFileSync(pidFile(dataDir, name), 'utf8')) as PidRecord;
    return Number.isInteger(rec.pid) && rec.pid > 0 ? rec : undefined;
  } catch {
    return undefined;
  }
}

export function removePid(dataDir: string, name: string): void {
  fs.rmSync(pidFile(dataDir, name), { force: true });
}

/**
 * A pid file is only trusted while the pid still runs the binary we started: after a crash or a
 * reboot the number may belong to an unrelated process, which we must never signal.
 */
export function isOurs(rec: PidRecord | undefined): rec is PidRecord {
  if (!rec) return false;
  try {
    const stat = fs.readFileSync(`/proc/${rec.pid}/stat`, 'utf8');
    // field 3 is the state; Z = exited but not reaped: as good as gone.
    if (/^\d+ \(.*\) Z/.test(stat)) return false;
    const argv = fs.readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8').split('\0');
    if (argv[0] !== rec.binary) return false;
    // a script run by node shares its argv[0] with every other node process: the arguments tell them apart
    return !rec.args || rec.args.every((a, i) => argv[i + 1] === a);
  } catch {
    return false;
  }
}

/** /proc/<pid>/stat: the state (field 3) and the start time (field 22); undefined when there is no such process. */
function procStat(pid: number, file = `/proc/${pid}/stat`): { state: string; startTime: string } | undefined {
  try {
    const stat = fs.readFileSync(file, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], startTime: rest[19] };
  } catch {
    return undefined;
  }
}

const startTime = (pid: number) => procStat(pid)?.startTime;

const dead = (state: string | undefined) => state === undefined || state === 'Z' || state === 'X';

/**
 * Has the process finished exiting: no such pid, or the pid now names a later process (another
 * start time), or every one of its threads a zombie? The main thread alone is not enough: in a
 * Go program it can be a zombie while other threads still run down, and they share its files,
 * listening sockets included, until the last of them is done.
 */
function exited(pid: number, started: string | undefined): boolean {
  const s = procStat(pid);
  if (!s || s.startTime !== started) return true;
  if (!dead(s.state)) return false;
  try {
    return fs.readdirSync(`/proc/${pid}/task`).every((t) => dead(procStat(pid, `/proc/${pid}/task/${t}/stat`)?.state));
  } catch {
    return true;
  }
}

export interface StartSpec {
  name: string;
  binary: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** run as this user (root starting PostgreSQL, which refuses to run as root) */
  uid?: number;
  gid?: number;
}

/** Start a process detached from us (it outlives `local up`), logging to <data>/logs/<name>.log. */
export function startDetached(dataDir: string, spec: StartSpec): PidRecord {
  fs.mkdirSync(runDir(dataDir), { recursive: true });
  fs.mkdirSync(logDir(dataDir), { recursive: true });
  const logPath = path.join(logDir(dataDir), `${spec.name}.log`);
  const out = fs.openSync(logPath, 'a');
  fs.writeSync(out, `\n===== ${new Date().toISOString()} starting ${spec.binary} ${spec.args.join(' ')}\n`);
  const child = spawn(spec.binary, spec.args, {
    cwd: spec.cwd ?? dataDir,
    env: { ...process.env, ...spec.env },
    detached: true,
    stdio: ['ignore', out, out],
    ...(spec.uid !== undefined ? { uid: spec.uid, gid: spec.gid } : {}),
  });
  fs.closeSync(out);
  if (child.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.binary})`);
  child.unref();
  const rec: PidRecord = { pid: child.pid, binary: spec.binary, startedAt: new Date().toISOString(), args: spec.args };
  fs.writeFileSync(pidFile(dataDir, spec.name), JSON.stringify(rec) + '\n');
  return rec;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `signal` (SIGTERM), then SIGKILL after `graceMs`; resolves once the process is gone. PostgreSQL
 * is stopped with SIGINT, its fast shutdown: SIGTERM is its smart shutdown, which waits for every
 * client to disconnect.
 */
export async function stopProcess(dataDir: string, name: string, graceMs = 10_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<'stopped' | 'not-running'> {
  const rec = readPid(dataDir, name);
  if (!isOurs(rec)) {
    removePid(dataDir, name);
    return 'not-running';
  }
  const started = startTime(rec.pid);
  try {
    // The process leads its own group (detached), so this also reaches any helper it forked.
    process.kill(-rec.pid, signal);
  } catch {
    try { process.kill(rec.pid, signal); } catch { /* already gone */ }
  }
  // not isOurs: an exiting process loses its command line before it closes its files, so it
  // would pass for gone while its listening sockets still hold the ports a restart needs
  const deadline = Date.now() + graceMs;
  while (!exited(rec.pid, started) && Date.now() < deadline) await sleep(50);
  if (!exited(rec.pid, started)) {
    try { process.kill(-rec.pid, 'SIGKILL'); } catch { try { process.kill(rec.pid, 'SIGKILL'); } catch { /* gone */ } }
    while (!exited(rec.pid, started)) await sleep(50);
  }
  removePid(dataDir, name);
  return 'stopped';
}

export function tailLog(dataDir: string, name: string, lines = 25): string {
  try {
    return fs.readFileSync(path.join(logDir(dataDir), `${name}.log`), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
