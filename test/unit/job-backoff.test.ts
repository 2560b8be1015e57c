import {
  DEFAULT_POD_FAILURE_BACKOFF_MS,
  MAX_POD_FAILURE_BACKOFF_MS,
  finishedTimeMs,
  nextBackoffRecord,
  remainingBackoffMs,
  remainingBackoffPerIndexMs,
  lastFailedPodPerIndex,
  type BackoffRecord,
  type FinishedTimeExtras,
} from '../../workflows/job/backoff';
import {
  JOB_INDEX_FAILURE_COUNT,
  JOB_INDEX_IGNORED_FAILURE_COUNT,
  type JobPodStatus,
  type PodPhase,
} from '../../workflows/job/api';

const T = Date.UTC(2009, 10, 10, 23, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

function pod(phase: PodPhase, init: Partial<JobPodStatus> & FinishedTimeExtras = {}): JobPodStatus & FinishedTimeExtras {
  return { conditions: [], containerStatuses: [], initContainerStatuses: [], annotations: {}, labels: {}, ...init, phase };
}
const finishedAt = (phase: PodPhase, ms: number) =>
  pod(phase, { containerStatuses: [{ name: 'c', terminated: { exitCode: phase === 'Failed' ? 1 : 0, finishedAt: iso(ms) } }] });

describe('constants', () => {
  it('match upstream', () => {
    expect(DEFAULT_POD_FAILURE_BACKOFF_MS).toBe(10_000);
    expect(MAX_POD_FAILURE_BACKOFF_MS).toBe(600_000);
  });
});

describe('nextBackoffRecord', () => {
  const empty: BackoffRecord = { failuresAfterLastSuccess: 0 };
  const now = T + 3_600_000;
  it.each<[string, BackoffRecord, number[], number[], BackoffRecord]>([
    ['one new failure', empty, [], [T], { failuresAfterLastSuccess: 1, lastFailureTimeMs: T }],
    ['two new failures', empty, [], [T, T - 1], { failuresAfterLastSuccess: 2, lastFailureTimeMs: T }],
    ['two failures then a success', empty, [T], [T - 2, T - 1], { failuresAfterLastSuccess: 0 }],
    [
      'failures around a success: only later ones count',
      empty,
      [T - 2],
      [T, T - 4, T - 3, T - 1],
      { failuresAfterLastSuccess: 2, lastFailureTimeMs: T },
    ],
    ['previous count 2 and one more failure', { failuresAfterLastSuccess: 2 }, [], [T], { failuresAfterLastSuccess: 3, lastFailureTimeMs: T }],
    ['success and failure at the same time', empty, [T], [T], { failuresAfterLastSuccess: 0 }],
    ['nothing new', empty, [], [], { failuresAfterLastSuccess: 0 }],
    ['one success', { failuresAfterLastSuccess: 4, lastFailureTimeMs: T - 10 }, [T], [], { failuresAfterLastSuccess: 0 }],
  ])('%s', (_name, prev, succeeded, failed, want) => {
    const got = nextBackoffRecord(
      prev,
      succeeded.map((t) => finishedAt('Succeeded', t)),
      failed.map((t) => finishedAt('Failed', t)),
      now,
    );
    expect(got).toEqual(want);
  });

  it('keeps the previous record when nothing finished', () => {
    const prev = { failuresAfterLastSuccess: 3, lastFailureTimeMs: T };
    expect(nextBackoffRecord(prev, [], [], now)).toEqual(prev);
  });
});

describe('finishedTimeMs', () => {
  const now = T + 999_000;
  it('latest finish of all terminated containers', () => {
    const p = pod('Failed', {
      containerStatuses: [
        { name: 'a', terminated: { exitCode: 1, finishedAt: iso(T - 1000) } },
        { name: 'b', terminated: { exitCode: 1, finishedAt: iso(T) } },
        { name: 'c', terminated: { exitCode: 1, finishedAt: iso(T - 2000) } },
      ],
    });
    expect(finishedTimeMs(p, now)).toBe(T);
  });

  it('one container still running: falls back to the deletion time', () => {
    const p = pod('Failed', {
      deletionTimestamp: iso(T),
      containerStatuses: [
        { name: 'a', terminated: { exitCode: 1, finishedAt: iso(T - 1000) } },
        { name: 'b' },
        { name: 'c', terminated: { exitCode: 1, finishedAt: iso(T - 2000) } },
      ],
    });
    expect(finishedTimeMs(p, now)).toBe(T);
  });

  it('deletion time less the grace period', () => {
    const p = pod('Failed', { deletionTimestamp: iso(T), deletionGracePeriodSeconds: 30, containerStatuses: [{ name: 'a' }] });
    expect(finishedTimeMs(p, now)).toBe(T - 30_000);
  });

  it('Ready=False transition time when containers lack finish times', () => {
    const p = pod('Failed', {
      containerStatuses: [{ name: 'a', terminated: { exitCode: 1 } }],
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodFailed', lastTransitionTime: iso(T) }],
    });
    expect(finishedTimeMs(p, now)).toBe(T);
  });

  it('Ready=True is not used', () => {
    const p = pod('Failed', {
      deletionTimestamp: iso(T),
      containerStatuses: [{ name: 'a', terminated: { exitCode: 1 } }],
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T - 30_000) }],
    });
    expect(finishedTimeMs(p, now)).toBe(T);
  });

  it('creation time, then now, as last resorts', () => {
    const base = { containerStatuses: [{ name: 'a', terminated: { exitCode: 1 } }] };
    expect(finishedTimeMs(pod('Failed', { ...base, creationTimestamp: iso(T) }), now)).toBe(T);
    expect(finishedTimeMs(pod('Failed', base), now)).toBe(now);
    expect(finishedTimeMs(pod('Failed'), now)).toBe(now);
  });

  it('a sidecar that ends after the main container sets the time', () => {
    const p = pod('Succeeded', {
      sidecarContainerNames: ['sidecar'],
      containerStatuses: [{ name: 'main', terminated: { exitCode: 0, finishedAt: iso(T - 1000) } }],
      initContainerStatuses: [{ name: 'sidecar', terminated: { exitCode: 0, finishedAt: iso(T) } }],
    });
    expect(finishedTimeMs(p, now)).toBe(T);
  });

  it('plain init containers are not consulted', () => {
    const p = pod('Succeeded', {
      containerStatuses: [{ name: 'main', terminated: { exitCode: 0, finishedAt: iso(T - 1000) } }],
      initContainerStatuses: [{ name: 'setup', terminated: { exitCode: 0, finishedAt: iso(T) } }],
    });
    expect(finishedTimeMs(p, now)).toBe(T - 1000);
  });
});

describe('remainingBackoffMs', () => {
  const base = 5_000;
  const max = 700_000;
  it.each<[string, BackoffRecord, number, number]>([
    ['no failures', { failuresAfterLastSuccess: 0 }, T, 0],
    ['one failure just now', { failuresAfterLastSuccess: 1, lastFailureTimeMs: T }, T, 5_000],
    ['one failure a second ago', { failuresAfterLastSuccess: 1, lastFailureTimeMs: T }, T + 1_000, 4_000],
    ['one failure, backoff just elapsed', { failuresAfterLastSuccess: 1, lastFailureTimeMs: T }, T + 5_000, 0],
    ['one failure, backoff long elapsed', { failuresAfterLastSuccess: 1, lastFailureTimeMs: T }, T + 6_000, 0],
    ['three failures', { failuresAfterLastSuccess: 3, lastFailureTimeMs: T }, T, 20_000],
    ['eight failures, below the cap', { failuresAfterLastSuccess: 8, lastFailureTimeMs: T }, T, 640_000],
    ['nine failures, capped', { failuresAfterLastSuccess: 9, lastFailureTimeMs: T }, T, 700_000],
  ])('%s', (_name, record, now, want) => {
    expect(remainingBackoffMs(record, now, base, max)).toBe(want);
  });

  it('uses upstream defaults', () => {
    expect(remainingBackoffMs({ failuresAfterLastSuccess: 1, lastFailureTimeMs: T }, T)).toBe(10_000);
    expect(remainingBackoffMs({ failuresAfterLastSuccess: 30, lastFailureTimeMs: T }, T)).toBe(600_000);
  });
});

describe('remainingBackoffPerIndexMs', () => {
  const base = 5_000;
  const max = 700_000;
  it('no failed pod, no delay', () => {
    expect(remainingBackoffPerIndexMs(undefined, T, base, max)).toBe(0);
  });
  it('two earlier failures', () => {
    const p = pod('Failed', { annotations: { [JOB_INDEX_FAILURE_COUNT]: '2' }, deletionTimestamp: iso(T) });
    expect(remainingBackoffPerIndexMs(p, T, base, max)).toBe(20_000);
  });
  it('one counted and one ignored earlier failure', () => {
    const p = pod('Failed', {
      annotations: { [JOB_INDEX_FAILURE_COUNT]: '1', [JOB_INDEX_IGNORED_FAILURE_COUNT]: '1' },
      deletionTimestamp: iso(T),
    });
    expect(remainingBackoffPerIndexMs(p, T, base, max)).toBe(20_000);
  });
  it('first failure of an index, partly elapsed', () => {
    const p = finishedAt('Failed', T);
    expect(remainingBackoffPerIndexMs(p, T + 3_000)).toBe(7_000);
  });
});

describe('lastFailedPodPerIndex', () => {
  const withIndex = (ix: string, count: string, finishMs: number, phase: PodPhase = 'Failed') =>
    pod(phase, {
      annotations: { 'batch.kubernetes.io/job-completion-index': ix, [JOB_INDEX_FAILURE_COUNT]: count },
      containerStatuses: [{ name: 'c', terminated: { exitCode: 1, finishedAt: iso(finishMs) } }],
    });
  const ctx = { completions: 4, succeeded: [{ first: 1, last: 1 }], failed: [{ first: 2, last: 2 }], activeIndexes: new Set([3]) };

  it('keeps the latest failed pod of each index still pending', () => {
    const a0 = withIndex('0', '0', T);
    const b0 = withIndex('0', '1', T + 1000);
    const c0 = withIndex('0', '0', T + 2000);
    const got = lastFailedPodPerIndex([a0, b0, c0], ctx, T + 5000);
    expect(got.get(0)).toBe(b0);
    expect(got.size).toBe(1);
  });

  it('skips succeeded, failed, active and out-of-range indexes and pods that did not fail', () => {
    const pods = [withIndex('1', '0', T), withIndex('2', '0', T), withIndex('3', '0', T), withIndex('7', '0', T), withIndex('0', '0', T, 'Running')];
    expect(lastFailedPodPerIndex(pods, ctx, T).size).toBe(0);
  });
});
