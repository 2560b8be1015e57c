import { intersectionSize, matchSuccessPolicy } from '../../workflows/job/success-policy';
import type { Interval } from '../../workflows/job/indexes';
import type { SuccessPolicy, SuccessPolicyRule } from '../../workflows/job/api';

const iv = (...pairs: Array<[number, number]>): Interval[] => pairs.map(([first, last]) => ({ first, last }));
const rules = (...r: SuccessPolicyRule[]): SuccessPolicy => ({ rules: r });
const MATCH0 = { matched: true, message: 'Matched rules at index 0' };
const NONE = { matched: false, message: '' };

describe('matchSuccessPolicy', () => {
  it.each<[string, SuccessPolicy | undefined, Interval[], { matched: boolean; message: string }]>([
    ['no policy', undefined, iv([0, 0]), NONE],
    ['no rules', rules(), iv([0, 0]), NONE],
    ['succeededIndexes that do not parse are skipped', rules({ succeededIndexes: 'invalid-form' }), iv([0, 0]), NONE],
    ['indexes rule met', rules({ succeededIndexes: '0-2' }), iv([0, 2], [4, 7]), MATCH0],
    ['indexes rule not met', rules({ succeededIndexes: '3' }), iv([0, 2]), NONE],
    ['count rule met', rules({ succeededCount: 2 }), iv([0, 2]), MATCH0],
    ['count rule not met', rules({ succeededCount: 4 }), iv([0, 2]), NONE],
    [
      'second of two rules met',
      rules({ succeededIndexes: '9' }, { succeededIndexes: '4,6' }),
      iv([0, 2], [4, 7]),
      { matched: true, message: 'Matched rules at index 1' },
    ],
    ['both rules met: the first is reported', rules({ succeededIndexes: '0,1' }, { succeededIndexes: '5' }), iv([0, 2], [4, 7]), MATCH0],
    ['indexes and count met', rules({ succeededIndexes: '3-6', succeededCount: 2 }), iv([0, 2], [4, 7]), MATCH0],
    ['indexes and count not met', rules({ succeededIndexes: '3-6', succeededCount: 2 }), iv([0, 2], [6, 7]), NONE],
    ['nothing succeeded yet', rules({ succeededCount: 4 }), [], NONE],
    ['rule is a proper subset', rules({ succeededIndexes: '2-4,6-8' }), iv([1, 5], [6, 9]), MATCH0],
    ['rule equals succeeded', rules({ succeededIndexes: '2-4,6-9' }), iv([2, 4], [6, 9]), MATCH0],
    ['rule is a subset', rules({ succeededIndexes: '2-4,8-12' }), iv([2, 5], [7, 15]), MATCH0],
    ['empty rule indexes', rules({ succeededIndexes: '' }), iv([1, 3]), NONE],
    ['empty rule indexes and nothing succeeded', rules({ succeededIndexes: '' }), [], NONE],
    ['rule entirely out of range', rules({ succeededIndexes: '10-12,14-16' }), iv([1, 3], [5, 7]), NONE],
    ['rule overlaps at the start', rules({ succeededIndexes: '1-3,5-7' }), iv([2, 4], [6, 8]), NONE],
    ['rule overlaps at the start, count met', rules({ succeededIndexes: '1-3,5-7', succeededCount: 4 }), iv([2, 4], [6, 8]), MATCH0],
    ['rule overlaps at the end', rules({ succeededIndexes: '2-4,6-9' }), iv([1, 3], [5, 7]), NONE],
    ['rule overlaps at the end, count met', rules({ succeededIndexes: '2-4,6-9', succeededCount: 4 }), iv([1, 3], [5, 7]), MATCH0],
    ['rule covers succeeded', rules({ succeededIndexes: '0-4,6-9' }), iv([1, 3], [7, 8]), NONE],
    ['rule covers succeeded, count met', rules({ succeededIndexes: '0-4,6-9', succeededCount: 5 }), iv([1, 3], [7, 8]), MATCH0],
    ['rule overlaps several at the end', rules({ succeededIndexes: '0-6,8-9' }), iv([1, 3], [5, 9]), NONE],
    ['rule overlaps several at the end, count met', rules({ succeededIndexes: '0-6,8-9', succeededCount: 7 }), iv([1, 3], [5, 9]), MATCH0],
    ['overlap at start, equal at end', rules({ succeededIndexes: '0-5,7-9' }), iv([1, 5], [7, 10]), NONE],
    ['overlap at start, equal at end, count met', rules({ succeededIndexes: '0-5,7-9', succeededCount: 8 }), iv([1, 5], [7, 10]), MATCH0],
    ['first rule interval overlaps', rules({ succeededIndexes: '0-3,6-9' }), iv([1, 10]), NONE],
    ['first rule interval overlaps, count met', rules({ succeededIndexes: '0-3,6-9', succeededCount: 7 }), iv([1, 10]), MATCH0],
    ['count short by one is not met', rules({ succeededIndexes: '0-3,6-9', succeededCount: 8 }), iv([1, 10]), NONE],
  ])('%s', (_name, policy, succeeded, want) => {
    expect(matchSuccessPolicy(policy, 10, succeeded)).toEqual(want);
  });

  it('clips rule indexes to completions', () => {
    expect(matchSuccessPolicy(rules({ succeededIndexes: '3-20' }), 5, iv([3, 4]))).toEqual(MATCH0);
  });
});

describe('intersectionSize', () => {
  it('counts shared indexes', () => {
    expect(intersectionSize(iv([0, 6], [8, 9]), iv([1, 3], [5, 9]))).toBe(7);
    expect(intersectionSize([], iv([1, 3]))).toBe(0);
  });
});
