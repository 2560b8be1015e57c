import { needsTimer } from '../../workflows/runtime/wake-timers';

describe('needsTimer: the earliest pending timer wins', () => {
  test('no timer pending: a wake needs one', () => {
    expect(needsTimer([], 1000)).toBe(true);
  });
  test('a timer pending at or before the wake serves it', () => {
    expect(needsTimer([1000], 1000)).toBe(false);
    expect(needsTimer([500, 9000], 1000)).toBe(false);
  });
  test('only later timers pending: an earlier wake needs its own', () => {
    expect(needsTimer([9000], 1000)).toBe(true);
  });
});
