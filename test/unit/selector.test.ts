import {
  isEverythingSelector,
  isNothingSelector,
  labelKeyError,
  labelValueError,
  labelsContain,
  selectorError,
  selectorFromMap,
  selectorMatches,
} from '../../workflows/common/selector';
import type { LabelSelector } from '../../workflows/common/meta';

describe('selectorMatches', () => {
  const labels = { app: 'web', tier: 'frontend', env: 'prod' };

  test('null and undefined selectors match nothing, not even an empty label set', () => {
    expect(selectorMatches(null, labels)).toBe(false);
    expect(selectorMatches(undefined, labels)).toBe(false);
    expect(selectorMatches(null, {})).toBe(false);
    expect(isNothingSelector(null)).toBe(true);
    expect(isNothingSelector({})).toBe(false);
  });

  test('an empty selector matches everything, including no labels', () => {
    for (const sel of [{}, { matchLabels: {} }, { matchExpressions: [] }, { matchLabels: {}, matchExpressions: [] }] as LabelSelector[]) {
      expect(isEverythingSelector(sel)).toBe(true);
      expect(selectorMatches(sel, labels)).toBe(true);
      expect(selectorMatches(sel, {})).toBe(true);
      expect(selectorMatches(sel, undefined)).toBe(true);
    }
    expect(isEverythingSelector(null)).toBe(false);
    expect(isEverythingSelector({ matchLabels: { a: 'b' } })).toBe(false);
  });

  test('matchLabels: every pair must be present with the same value', () => {
    expect(selectorMatches({ matchLabels: { app: 'web' } }, labels)).toBe(true);
    expect(selectorMatches({ matchLabels: { app: 'web', tier: 'frontend' } }, labels)).toBe(true);
    expect(selectorMatches({ matchLabels: { app: 'web', tier: 'backend' } }, labels)).toBe(false);
    expect(selectorMatches({ matchLabels: { missing: 'x' } }, labels)).toBe(false);
    expect(selectorMatches({ matchLabels: { app: '' } }, { app: '' })).toBe(true);
    expect(selectorMatches({ matchLabels: { app: '' } }, {})).toBe(false);
  });

  test('In: key present with one of the values', () => {
    const sel: LabelSelector = { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'staging'] }] };
    expect(selectorMatches(sel, labels)).toBe(true);
    expect(selectorMatches(sel, { env: 'dev' })).toBe(false);
    expect(selectorMatches(sel, {})).toBe(false);
  });

  test('NotIn: key absent, or present with none of the values', () => {
    const sel: LabelSelector = { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] };
    expect(selectorMatches(sel, labels)).toBe(false);
    expect(selectorMatches(sel, { env: 'dev' })).toBe(true);
    expect(selectorMatches(sel, {})).toBe(true);
  });

  test('Exists and DoesNotExist look at the key only', () => {
    const exists: LabelSelector = { matchExpressions: [{ key: 'tier', operator: 'Exists' }] };
    const absent: LabelSelector = { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] };
    expect(selectorMatches(exists, labels)).toBe(true);
    expect(selectorMatches(exists, { tier: '' })).toBe(true);
    expect(selectorMatches(exists, {})).toBe(false);
    expect(selectorMatches(absent, labels)).toBe(false);
    expect(selectorMatches(absent, {})).toBe(true);
    // empty values array is the same as no values
    expect(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'Exists', values: [] }] }, labels)).toBe(true);
  });

  test('matchLabels and matchExpressions are ANDed', () => {
    const sel: LabelSelector = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod'] },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    };
    expect(selectorMatches(sel, labels)).toBe(true);
    expect(selectorMatches(sel, { ...labels, canary: 'true' })).toBe(false);
    expect(selectorMatches(sel, { ...labels, app: 'api' })).toBe(false);
    expect(selectorMatches(sel, { ...labels, env: 'dev' })).toBe(false);
  });

  test('keys are compared exactly, inherited object properties are not labels', () => {
    expect(selectorMatches({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {})).toBe(false);
    expect(selectorMatches({ matchLabels: { App: 'web' } }, labels)).toBe(false);
  });

  test('an invalid selector matches nothing', () => {
    expect(selectorMatches({ matchExpressions: [{ key: 'env', operator: 'In', values: [] }] }, labels)).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'env', operator: 'NotIn' }] }, {})).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'env', operator: 'DoesNotExist', values: ['x'] }] }, {})).toBe(false);
  });
});

describe('selectorError', () => {
  test('valid selectors', () => {
    expect(selectorError(null)).toBeUndefined();
    expect(selectorError(undefined)).toBeUndefined();
    expect(selectorError({})).toBeUndefined();
    expect(selectorError({ matchLabels: { 'app.kubernetes.io/name': 'web', empty: '' } })).toBeUndefined();
    expect(
      selectorError({
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['x'] },
          { key: 'b', operator: 'NotIn', values: ['x', 'y'] },
          { key: 'c', operator: 'Exists' },
          { key: 'd', operator: 'DoesNotExist', values: [] },
        ],
      }),
    ).toBeUndefined();
  });

  test('In / NotIn need values', () => {
    expect(selectorError({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).toMatch(/non-empty values/);
    expect(selectorError({ matchExpressions: [{ key: 'a', operator: 'NotIn' }] })).toMatch(/non-empty values/);
  });

  test('Exists / DoesNotExist take no values', () => {
    expect(selectorError({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).toMatch(/takes no values/);
    expect(selectorError({ matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x'] }] })).toMatch(/takes no values/);
  });

  test('unknown operators are rejected', () => {
    const sel = { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] } as unknown as LabelSelector;
    expect(selectorError(sel)).toBe('"Gt" is not a valid label selector operator');
    expect(selectorMatches(sel, { a: '2' })).toBe(false);
  });

  test('bad keys and values in matchLabels and expressions are rejected', () => {
    expect(selectorError({ matchLabels: { 'bad key': 'x' } })).toMatch(/invalid label key/);
    expect(selectorError({ matchLabels: { ok: 'bad value!' } })).toMatch(/invalid label value/);
    expect(selectorError({ matchExpressions: [{ key: '-a', operator: 'Exists' }] })).toMatch(/invalid label key/);
    expect(selectorError({ matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', 'x'.repeat(64)] }] })).toMatch(/63/);
  });
});

describe('label key and value syntax', () => {
  test.each([
    ['app', true],
    ['a', true],
    ['app.kubernetes.io/name', true],
    ['example.com/a_b-c.d', true],
    ['x'.repeat(63), true],
    ['x'.repeat(64), false],
    ['', false],
    ['/name', false],
    ['prefix/', false],
    ['a/b/c', false],
    ['Example.com/name', false],
    ['-app', false],
    ['app-', false],
    ['a b', false],
    [`${'a'.repeat(254)}/name`, false],
  ])('key %j valid=%s', (key, ok) => {
    expect(labelKeyError(key) === undefined).toBe(ok);
  });

  test.each([
    ['', true],
    ['web', true],
    ['Web_1.2-x', true],
    ['v'.repeat(63), true],
    ['v'.repeat(64), false],
    ['-web', false],
    ['web.', false],
    ['a/b', false],
  ])('value %j valid=%s', (value, ok) => {
    expect(labelValueError(value) === undefined).toBe(ok);
  });
});

describe('selectorFromMap (ReplicationController)', () => {
  test('a map becomes matchLabels and matches like one', () => {
    const sel = selectorFromMap({ app: 'web' });
    expect(sel).toEqual({ matchLabels: { app: 'web' } });
    expect(selectorMatches(sel, { app: 'web', x: 'y' })).toBe(true);
    expect(selectorMatches(sel, { app: 'api' })).toBe(false);
  });

  test('absent map matches nothing, empty map matches everything', () => {
    expect(selectorFromMap(undefined)).toBeNull();
    expect(selectorFromMap(null)).toBeNull();
    expect(selectorMatches(selectorFromMap(undefined), {})).toBe(false);
    expect(selectorMatches(selectorFromMap({}), { any: 'thing' })).toBe(true);
  });

  test('the map is copied', () => {
    const map = { app: 'web' };
    const sel = selectorFromMap(map)!;
    map.app = 'changed';
    expect(sel.matchLabels).toEqual({ app: 'web' });
  });
});

describe('labelsContain', () => {
  test('superset check', () => {
    expect(labelsContain({ a: '1', b: '2' }, { a: '1' })).toBe(true);
    expect(labelsContain({ a: '1' }, { a: '1', b: '2' })).toBe(false);
    expect(labelsContain({ a: '1' }, { a: '2' })).toBe(false);
    expect(labelsContain({}, {})).toBe(true);
    expect(labelsContain(undefined, {})).toBe(true);
    expect(labelsContain({ a: '1' }, undefined)).toBe(true);
  });
});
