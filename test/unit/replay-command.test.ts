import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { addReplayCommand, formatReport } from '../../starter/replay/command';
import { HistoryFileError, loadHistoryFile, replayHistory, workflowTasks } from '../../starter/replay/replay';
import { CHANGED_AFTER_EVENTS } from '../support/workflows/changed-replicaset';

/*
 * `temporal-kcm replay` without a server: recorded histories against the real workflows, and
 * against a deliberately changed ReplicaSet workflow whose first incompatible task is known.
 */

jest.setTimeout(120_000);

const root = path.join(__dirname, '..', '..');
const historyFile = path.join(root, 'test', 'replay', 'histories', 'replicaset-churn-0.json');
const changedWorkflows = require.resolve('../support/workflows/changed-replicaset');
const rawEvents = (JSON.parse(fs.readFileSync(historyFile, 'utf8')) as { events: { eventId: string; eventType: string }[] }).events;

/** The task the fixture breaks: the first one whose activation sees more than CHANGED_AFTER_EVENTS events. */
function expectedFailingTask(): { started: number; completed: number } {
  const started = rawEvents.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_STARTED' && Number(e.eventId) > CHANGED_AFTER_EVENTS);
  const completed = rawEvents.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED' && Number(e.eventId) > Number(started?.eventId));
  return { started: Number(started?.eventId), completed: Number(completed?.eventId) };
}

afterEach(() => {
  process.exitCode = undefined;
  jest.restoreAllMocks();
});

describe('replayHistory', () => {
  test('a recorded history replays against the current workflows', async () => {
    const report = await replayHistory({ history: loadHistoryFile(historyFile), workflowId: 'replicaset/default/churn' });
    expect(report).toEqual({ ok: true, workflowType: 'replicaOwnerWorkflow', events: rawEvents.length });
  });

  test('a changed workflow fails, located at the first task it no longer reproduces', async () => {
    const report = await replayHistory({ history: loadHistoryFile(historyFile), workflowId: 'replicaset/default/churn', workflowsPath: changedWorkflows });
    if (report.ok) throw new Error('expected the changed workflow not to replay');
    expect(report.error).toMatch(/nondeterminism/i);

    const { started, completed } = expectedFailingTask();
    expect(completed).toBeGreaterThan(0);
    const ids = (report.taskEvents ?? []).map((e) => e.eventId);
    expect(ids).toContain(started);
    expect(ids).toContain(completed);
    // the window is that task alone: nothing from the task before it completed, nothing after its commands
    const types = (report.taskEvents ?? []).map((e) => e.eventType);
    expect(types.filter((t) => t === 'WorkflowTaskCompleted')).toHaveLength(1);

    const d = report.divergedAt;
    expect(d).toBeDefined();
    expect(d!.eventId).toBeGreaterThan(completed);
    expect(ids).toContain(d!.eventId);
    const event = rawEvents.find((e) => Number(e.eventId) === d!.eventId)!;
    expect(`EVENT_TYPE_${d!.eventType.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`).toBe(event.eventType);
    // what the old code did in that task is spelled out, activity types included
    expect(d!.detail).toContain(`completed at event ${completed}`);
    expect(d!.detail).toMatch(/activity deletePods scheduled/);
    expect(report.taskEvents).toEqual(expect.arrayContaining([expect.objectContaining({ eventType: 'WorkflowExecutionSignaled', summary: 'signal kcm.objectEvent' })]));
  });
});

describe('workflowTasks', () => {
  test('cuts each task just before the next WorkflowTaskScheduled, after its commands', () => {
    const h = loadHistoryFile(historyFile);
    const tasks = workflowTasks(h.events ?? []);
    expect(tasks.length).toBe(rawEvents.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED').length);
    for (const t of tasks) {
      expect(rawEvents[t.completed].eventType).toBe('EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
      if (t.cut < rawEvents.length) expect(rawEvents[t.cut].eventType).toBe('EVENT_TYPE_WORKFLOW_TASK_SCHEDULED');
      expect(t.start).toBeLessThanOrEqual(t.completed);
      expect(t.commandsEnd).toBeLessThanOrEqual(t.cut);
    }
  });
});

describe('loadHistoryFile', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kcm-replay-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content);
    return p;
  };

  test('accepts {events}, a bare array and {history: {events}}', () => {
    const n = rawEvents.length;
    expect(loadHistoryFile(write('a.json', JSON.stringify({ events: rawEvents }))).events).toHaveLength(n);
    expect(loadHistoryFile(write('b.json', JSON.stringify(rawEvents))).events).toHaveLength(n);
    expect(loadHistoryFile(write('c.json', JSON.stringify({ history: { events: rawEvents } }))).events).toHaveLength(n);
  });

  test('accepts PascalCase event types as some UI versions write them', () => {
    const pascal = rawEvents.map((e) => ({
      ...e,
      eventType: e.eventType.replace(/^EVENT_TYPE_/, '').toLowerCase().replace(/(^|_)([a-z])/g, (_, __: string, c: string) => c.toUpperCase()),
    }));
    expect(loadHistoryFile(write('d.json', JSON.stringify({ events: pascal }))).events).toHaveLength(rawEvents.length);
  });

  test('says what is wrong with a file that is not a history', () => {
    expect(() => loadHistoryFile(path.join(dir, 'missing.json'))).toThrow(HistoryFileError);
    expect(() => loadHistoryFile(write('e.json', '{'))).toThrow(/not JSON/);
    expect(() => loadHistoryFile(write('f.json', '{"foo": 1}'))).toThrow(/no workflow history/);
    expect(() => loadHistoryFile(write('g.json', '[]'))).toThrow(/empty history/);
  });
});

describe('the replay command', () => {
  function program(): { program: Command; out: string[]; err: string[] } {
    const out: string[] = [];
    const err: string[] = [];
    const p = new Command('temporal-kcm').exitOverride().configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => err.push(s) });
    addReplayCommand(p);
    jest.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      out.push(String(s));
      return true;
    });
    return { program: p, out, err };
  }

  test.each([
    ['neither a workflow ID nor a file', ['replay']],
    ['both a workflow ID and a file', ['replay', 'replicaset/default/web', '--history-file', historyFile]],
    ['a run ID without a workflow ID', ['replay', '--history-file', historyFile, '--run-id', 'abc']],
    ['a malformed Temporal address', ['replay', 'replicaset/default/web', '--temporal-address', 'nope']],
  ])('%s is a usage error (exit 2)', async (_, argv) => {
    const { program: p, err } = program();
    const e: unknown = await p.parseAsync(argv, { from: 'user' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CommanderError);
    expect((e as CommanderError).exitCode).toBe(2);
    expect(err.join('')).toMatch(/error:/);
  });

  test('a compatible history prints OK and leaves the exit code alone', async () => {
    const { program: p, out } = program();
    await p.parseAsync(['replay', '--history-file', historyFile], { from: 'user' });
    expect(out.join('')).toMatch(new RegExp(`^replay OK: replicaOwnerWorkflow \\S+, ${rawEvents.length} events`, 'm'));
    expect(process.exitCode).toBeUndefined();
  });

  test('a divergence prints where and why, and sets exit code 1', async () => {
    const { program: p, out } = program();
    await p.parseAsync(['replay', '--history-file', historyFile, '--workflows', changedWorkflows, '--json'], { from: 'user' });
    const report = JSON.parse(out.join('')) as { ok: boolean; divergedAt: { eventId: number } };
    expect(report.ok).toBe(false);
    expect(report.divergedAt.eventId).toBeGreaterThan(expectedFailingTask().completed);
    expect(process.exitCode).toBe(1);
  });

  test('the text report names the event, its type, and the core error', () => {
    const lines = formatReport(
      {
        ok: false,
        workflowType: 'replicaOwnerWorkflow',
        events: 39,
        error: 'Details: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: boom", source: "" }) }',
        divergedAt: { eventId: 16, eventType: 'TimerCanceled', detail: 'history has timer 1 canceled' },
        taskEvents: [{ eventId: 16, eventType: 'TimerCanceled', summary: 'timer 1 canceled' }],
      },
      'replicaset/default/web',
      false,
    );
    expect(lines[0]).toBe('replay FAILED: replicaOwnerWorkflow replicaset/default/web, 39 events');
    expect(lines).toContain('diverged at event 16 (TimerCanceled): history has timer 1 canceled');
    expect(lines).toContain('error: [TMPRL1100] Nondeterminism error: boom');
  });
});

// The compiled CLI only when a build of this very code is there; the end-to-end suite covers it otherwise.
function compiledCliIsFresh(): boolean {
  const built = path.join(root, 'dist', 'starter', 'replay', 'command.js');
  const cli = path.join(root, 'dist', 'starter', 'cli.js');
  if (!fs.existsSync(built) || !fs.existsSync(cli) || !fs.readFileSync(cli, 'utf8').includes('addReplayCommand')) return false;
  const newest = Math.max(...['command.ts', 'replay.ts'].map((f) => fs.statSync(path.join(root, 'starter', 'replay', f)).mtimeMs));
  return fs.statSync(built).mtimeMs >= newest;
}

(compiledCliIsFresh() ? test : test.skip)('the compiled CLI replays a history file', () => {
  const out = execFileSync(process.execPath, [path.join(root, 'bin', 'temporal-kcm.js'), 'replay', '--history-file', historyFile], { encoding: 'utf8' });
  expect(out).toMatch(/^replay OK: replicaOwnerWorkflow /m);
});
