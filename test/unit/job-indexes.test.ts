import {
  completionIndexOf,
  duplicatedIndexPodsForRemoval,
  firstPendingIndexes,
  formatIndexes,
  hasIndex,
  indexFailureCount,
  indexIgnoredFailureCount,
  indexedPodGenerateName,
  isIndexFailed,
  isPodFailed,
  mergeIntervals,
  newIndexFailureCounts,
  parseIndexes,
  totalIndexes,
  withIndexes,
  type IndexedActivePod,
  type Interval,
} from '../../workflows/job/indexes';
import {
  JOB_COMPLETION_INDEX,
  JOB_INDEX_FAILURE_COUNT,
  JOB_INDEX_IGNORED_FAILURE_COUNT,
  type JobPodStatus,
  type PodFailurePolicy,
  type PodPhase,
} from '../../workflows/job/api';

const iv = (...pairs: Array<[number, number]>): Interval[] => pairs.map(([first, last]) => ({ first, last }));

function pod(phase: PodPhase, opts: Partial<JobPodStatus> & { index?: string; failures?: string; ignored?: string } = {}): JobPodStatus {
  const annotations: Record<string, string> = { ...(opts.annotations ?? {}) };
  if (opts.index !== undefined) annotations[JOB_COMPLETION_INDEX] = opts.index;
  if (opts.failures !== undefined) annotations[JOB_INDEX_FAILURE_COUNT] = opts.failures;
  if (opts.ignored !== undefined) annotations[JOB_INDEX_IGNORED_FAILURE_COUNT] = opts.ignored;
  return {
    phase,
    deletionTimestamp: opts.deletionTimestamp,
    conditions: opts.conditions ?? [],
    containerStatuses: opts.containerStatuses ?? [],
    initContainerStatuses: opts.initContainerStatuses ?? [],
    annotations,
    labels: opts.labels ?? {},
  };
}

describe('parseIndexes', () => {
  it.each<[string, string | undefined, number, Interval[]]>([
    ['empty', '', 5, []],
    ['undefined', undefined, 5, []],
    ['single and range', '1,3-5', 10, iv([1, 1], [3, 5])],
    ['whole prev interval out of range is dropped', '0-5,8-10', 8, iv([0, 5])],
    ['partially out of range is clipped', '0-5,8-10', 10, iv([0, 5], [8, 9])],
    ['adjacent parts are joined', '0,4,5,10-12', 13, iv([0, 0], [4, 5], [10, 12])],
    ['adjacent parts joined 2', '3,4,6', 9, iv([3, 4], [6, 6])],
    ['corrupted parts are skipped', '0,1-foo,bar', 4, iv([0, 0])],
    ['a part at completions stops the scan', '1,5,2', 5, iv([1, 1])],
    ['leading plus parses like Go Atoi', '+2', 5, iv([2, 2])],
    ['negative-looking part is corrupt', '-1,2', 5, iv([2, 2])],
    ['space is corrupt', ' 1,2', 5, iv([2, 2])],
  ])('%s', (_name, s, completions, want) => {
    expect(parseIndexes(s, completions)).toEqual(want);
  });
});

describe('formatIndexes', () => {
  it.each<[Interval[], string]>([
    [[], ''],
    [iv([1, 1]), '1'],
    [iv([1, 2]), '1,2'],
    [iv([1, 1], [3, 5]), '1,3-5'],
    [iv([0, 0], [2, 2], [4, 5], [7, 8], [10, 12]), '0,2,4,5,7,8,10-12'],
  ])('%j -> %s', (input, want) => {
    expect(formatIndexes(input)).toBe(want);
  });

  it('round-trips through parseIndexes', () => {
    const s = '0,2-4,6,7,9-20';
    expect(formatIndexes(parseIndexes(s, 100))).toBe(s);
  });
});

describe('withIndexes / mergeIntervals', () => {
  it.each<[string, Interval[], number[], Interval[]]>([
    ['one index', [], [1], iv([1, 1])],
    ['two separate', [], [5, 10], iv([5, 5], [10, 10])],
    ['two intervals', [], [2, 3, 5, 6, 7], iv([2, 3], [5, 7])],
    ['prev and new separate', iv([0, 0], [4, 5], [10, 12]), [2, 7, 8], iv([0, 0], [2, 2], [4, 5], [7, 8], [10, 12])],
    ['prev between new', iv([3, 4], [6, 6]), [2, 7, 8], iv([2, 4], [6, 8])],
    ['new between prev', iv([2, 2], [7, 8]), [3, 4, 6], iv([2, 4], [6, 8])],
    ['new within prev', iv([2, 7]), [0, 3, 5, 9], iv([0, 0], [2, 7], [9, 9])],
    ['corrupted prev then new', parseIndexes('0,1-foo,bar', 4), [3], iv([0, 0], [3, 3])],
  ])('%s', (_name, prev, add, want) => {
    const before = JSON.stringify(prev);
    expect(withIndexes(prev, add)).toEqual(want);
    expect(JSON.stringify(prev)).toBe(before);
  });

  it('merges overlapping interval lists', () => {
    expect(mergeIntervals(iv([0, 3], [8, 9]), iv([2, 5], [7, 7], [12, 13]))).toEqual(iv([0, 5], [7, 9], [12, 13]));
    expect(mergeIntervals([], iv([1, 2]))).toEqual(iv([1, 2]));
    expect(mergeIntervals(iv([1, 2]), [])).toEqual(iv([1, 2]));
  });

  it('counts indexes', () => {
    expect(totalIndexes([])).toBe(0);
    expect(totalIndexes(iv([0, 0], [2, 5]))).toBe(5);
  });
});

describe('hasIndex', () => {
  it.each<[string, Interval[], number, boolean]>([
    ['empty', [], 4, false],
    ['before all', iv([2, 4], [5, 7]), 1, false],
    ['after all', iv([2, 4], [6, 8]), 9, false],
    ['in between', iv([2, 4], [6, 8]), 5, false],
    ['in first', iv([2, 4], [6, 8]), 2, true],
    ['in second', iv([2, 4], [6, 8]), 8, true],
  ])('%s', (_name, list, ix, want) => {
    expect(hasIndex(list, ix)).toBe(want);
  });
});

describe('completionIndexOf', () => {
  it.each<[string, Record<string, string>, number | undefined]>([
    ['no annotation', {}, undefined],
    ['valid', { [JOB_COMPLETION_INDEX]: '3' }, 3],
    ['zero', { [JOB_COMPLETION_INDEX]: '0' }, 0],
    ['negative', { [JOB_COMPLETION_INDEX]: '-2' }, undefined],
    ['not a number', { [JOB_COMPLETION_INDEX]: 'invalid' }, undefined],
  ])('%s', (_name, annotations, want) => {
    expect(completionIndexOf({ annotations })).toBe(want);
  });

  it('ignores the label, as v1.35 does', () => {
    expect(completionIndexOf({ annotations: {}, labels: { [JOB_COMPLETION_INDEX]: '1' } })).toBeUndefined();
  });
});

describe('index failure counts', () => {
  it.each<[string, string | undefined, number]>([
    ['no annotation', undefined, 0],
    ['valid value', '2', 2],
    ['max int32', '2147483647', 2147483647],
    ['too large', '2147483648', 0],
    ['negative', '-1', 0],
    ['not an int', 'xyz', 0],
  ])('%s', (_name, v, want) => {
    expect(indexFailureCount(pod('Failed', { failures: v }))).toBe(want);
    expect(indexIgnoredFailureCount(pod('Failed', { ignored: v }))).toBe(want);
  });

  const ignoreDisruption: PodFailurePolicy = {
    rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
  };

  it('first pod of an index starts at zero', () => {
    expect(newIndexFailureCounts(undefined, undefined)).toEqual({ failureCount: 0, ignoredFailureCount: 0 });
  });
  it('replacing a failed pod with count 0 gives 1', () => {
    expect(newIndexFailureCounts(pod('Failed', { index: '0', failures: '0' }), undefined)).toEqual({
      failureCount: 1,
      ignoredFailureCount: 0,
    });
  });
  it('replacing a failed pod with count 3 gives 4', () => {
    expect(newIndexFailureCounts(pod('Failed', { index: '0', failures: '3' }), undefined)).toEqual({
      failureCount: 4,
      ignoredFailureCount: 0,
    });
  });
  it('a failure matching an Ignore rule goes to the ignored count', () => {
    const p = pod('Failed', { index: '3', failures: '3', conditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    expect(newIndexFailureCounts(p, ignoreDisruption)).toEqual({ failureCount: 3, ignoredFailureCount: 1 });
  });
  it('a failure not matching the policy counts', () => {
    const p = pod('Failed', { index: '3', failures: '1', ignored: '2' });
    expect(newIndexFailureCounts(p, ignoreDisruption)).toEqual({ failureCount: 2, ignoredFailureCount: 2 });
  });
});

describe('isPodFailed / isIndexFailed', () => {
  it('treats a deleted unfinished pod as failed unless only failed pods are replaced', () => {
    const deleting = pod('Running', { deletionTimestamp: '2024-01-01T00:00:00Z' });
    expect(isPodFailed(deleting, {})).toBe(true);
    expect(isPodFailed(deleting, { podReplacementPolicy: 'Failed' })).toBe(false);
    expect(isPodFailed(deleting, { podFailurePolicy: { rules: [] } })).toBe(false);
    expect(isPodFailed(pod('Succeeded', { deletionTimestamp: '2024-01-01T00:00:00Z' }), {})).toBe(false);
  });

  it('limit 0 is exceeded by the first failure', () => {
    expect(isIndexFailed(pod('Failed', { index: '0', failures: '0' }), { backoffLimitPerIndex: 0 })).toBe(true);
  });
  it('limit 1 is exceeded when the count reaches 1', () => {
    expect(isIndexFailed(pod('Failed', { index: '1', failures: '1' }), { backoffLimitPerIndex: 1 })).toBe(true);
  });
  it('below the limit the index is not failed', () => {
    expect(isIndexFailed(pod('Failed', { index: '1', failures: '0' }), { backoffLimitPerIndex: 1 })).toBe(false);
  });
  it('a running pod does not fail its index', () => {
    expect(isIndexFailed(pod('Running', { index: '1', failures: '5' }), { backoffLimitPerIndex: 1 })).toBe(false);
  });
  it('a FailIndex rule fails the index at once', () => {
    const p = pod('Failed', {
      index: '0',
      failures: '0',
      containerStatuses: [{ name: 'main', terminated: { exitCode: 3 } }],
    });
    const policy: PodFailurePolicy = {
      rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [3] } }],
    };
    expect(isIndexFailed(p, { backoffLimitPerIndex: 1, podFailurePolicy: policy })).toBe(true);
  });
  it('an ignored failure never exhausts the limit', () => {
    const p = pod('Failed', { index: '0', failures: '5', conditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    const policy: PodFailurePolicy = {
      rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }],
    };
    expect(isIndexFailed(p, { backoffLimitPerIndex: 1, podFailurePolicy: policy })).toBe(false);
  });
});

describe('firstPendingIndexes', () => {
  it.each<[string, number, number, Interval[], number[], Interval[] | undefined, number[]]>([
    ['count greater than completions', 5, 3, [], [], undefined, [0, 1, 2]],
    ['count less than completions', 2, 5, [], [], undefined, [0, 1]],
    ['first pods active', 3, 10, [], [0, 1], undefined, [2, 3, 4]],
    ['last pods active or succeeded', 6, 6, iv([4, 5]), [6], undefined, [0, 1, 2, 3]],
    ['mixed', 5, 20, iv([2, 4], [9, 9]), [3, 5, 8], undefined, [0, 1, 6, 7, 10]],
    ['with failed indexes', 5, 20, iv([1, 1], [5, 5], [9, 9]), [3, 9], iv([2, 2], [6, 7]), [0, 4, 8, 10, 11]],
    ['zero count', 0, 5, [], [], undefined, []],
  ])('%s', (_name, count, completions, succeeded, active, failed, want) => {
    expect(firstPendingIndexes(count, completions, { succeeded, failed, activeIndexes: new Set(active) })).toEqual(want);
  });

  it('skips indexes held back', () => {
    expect(
      firstPendingIndexes(3, 6, { succeeded: iv([0, 0]), activeIndexes: new Set([2]), delayedIndexes: new Set([1, 4]) }),
    ).toEqual([3, 5]);
  });
});

describe('duplicatedIndexPodsForRemoval', () => {
  type P = IndexedActivePod & { id: string };
  let n = 0;
  const ap = (index: string, phase: PodPhase, extra: Partial<P> = {}): P => ({
    id: `${index}/${phase}/${n++}`,
    index: completionIndexOf({ annotations: index === '' ? {} : { [JOB_COMPLETION_INDEX]: index } }),
    phase,
    conditions: [],
    ...extra,
  });
  const desc = (ps: P[]) => ps.map((p) => `${p.index ?? '-'}:${p.phase}`);

  it('all unique', () => {
    const pods = [ap('', 'Pending'), ap('2', 'Pending'), ap('5', 'Running'), ap('6', 'Running')];
    const { remove, keep } = duplicatedIndexPodsForRemoval(pods, 6);
    expect(desc(remove)).toEqual(['-:Pending', '6:Running']);
    expect(desc(keep)).toEqual(['2:Pending', '5:Running']);
  });

  it('all with index', () => {
    const pods = [
      ap('5', 'Pending'),
      ap('0', 'Running'),
      ap('3', 'Pending'),
      ap('0', 'Running'),
      ap('3', 'Running'),
      ap('0', 'Pending'),
      ap('6', 'Running'),
      ap('6', 'Pending'),
    ];
    const { remove, keep } = duplicatedIndexPodsForRemoval(pods, 6);
    expect(desc(remove)).toEqual(['0:Pending', '0:Running', '3:Pending', '6:Running', '6:Pending']);
    expect(desc(keep)).toEqual(['0:Running', '3:Running', '5:Pending']);
  });

  it('mixed', () => {
    const pods = [
      ap('', 'Pending'),
      ap('invalid', 'Running'),
      ap('-2', 'Running'),
      ap('0', 'Pending'),
      ap('1', 'Pending'),
      ap('1', 'Pending'),
      ap('1', 'Running'),
    ];
    const { remove, keep } = duplicatedIndexPodsForRemoval(pods, 6);
    expect(desc(remove)).toEqual(['-:Pending', '-:Running', '-:Running', '1:Pending', '1:Pending']);
    expect(desc(keep)).toEqual(['0:Pending', '1:Running']);
  });

  it('keeps the scheduled, ready-longest, least restarted, oldest pod', () => {
    const ready = (t: string) => [{ type: 'Ready', status: 'True' as const, lastTransitionTime: t }];
    const unscheduled = ap('0', 'Running', { conditions: ready('2024-01-01T00:00:00Z') });
    const readyLater = ap('0', 'Running', { nodeName: 'n', conditions: ready('2024-01-01T00:05:00Z') });
    const readyEarlier = ap('0', 'Running', { nodeName: 'n', conditions: ready('2024-01-01T00:01:00Z') });
    const notReady = ap('0', 'Running', { nodeName: 'n' });
    const { remove, keep } = duplicatedIndexPodsForRemoval([readyEarlier, unscheduled, readyLater, notReady], 1);
    expect(keep).toEqual([readyEarlier]);
    expect(remove).toEqual([unscheduled, notReady, readyLater]);

    const restarted = ap('1', 'Running', { nodeName: 'n', restartCount: 2, creationTimestamp: '2024-01-01T00:00:00Z' });
    const older = ap('1', 'Running', { nodeName: 'n', creationTimestamp: '2024-01-01T00:00:00Z' });
    const newer = ap('1', 'Running', { nodeName: 'n', creationTimestamp: '2024-01-02T00:00:00Z' });
    const r2 = duplicatedIndexPodsForRemoval([older, restarted, newer], 2);
    expect(r2.keep).toEqual([older]);
    expect(r2.remove).toEqual([restarted, newer]);
  });
});

describe('indexedPodGenerateName', () => {
  it.each<[string, number, string]>([
    ['indexed-job', 1, 'indexed-job-1-'],
    [
      'hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo',
      1,
      'hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-',
    ],
    ['hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo', 1, 'hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-'],
  ])('%s/%d', (job, ix, want) => {
    expect(indexedPodGenerateName(job, ix)).toBe(want);
  });
});
