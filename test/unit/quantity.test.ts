import {
  QuantityError,
  addQuantities,
  canonicalQuantity,
  compareQuantities,
  formatQuantity,
  fromInt,
  maxQuantity,
  parseQuantity,
  quantitiesEqual,
  resourceListsEqual,
  roundUpToInteger,
  tryParseQuantity,
  zeroQuantity,
} from '../../workflows/common/quantity';

const sum = (...xs: string[]) => formatQuantity(xs.map(parseQuantity).reduce((a, b) => addQuantities(a, b), zeroQuantity()));

describe('canonical forms (what the API server stores)', () => {
  test.each([
    ['0', '0'],
    ['0m', '0'],
    ['0Gi', '0'],
    ['000', '0'],
    ['1', '1'],
    ['+1', '1'],
    ['1.', '1'],
    ['5.0', '5'],
    ['.5', '500m'],
    ['0.5', '500m'],
    ['1.5', '1500m'],
    ['100m', '100m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['1000', '1k'],
    ['1024', '1024'],
    ['1200', '1200'],
    ['12000', '12k'],
    ['1000000', '1M'],
    ['0.001', '1m'],
    ['0.0001', '100u'],
    ['0.1m', '100u'],
    ['1u', '1u'],
    ['1n', '1n'],
    ['1000n', '1u'],
    ['12M', '12M'],
    ['1G', '1G'],
    ['1000M', '1G'],
    ['1T', '1T'],
    ['1P', '1P'],
    ['1E', '1E'],
    ['1000P', '1E'],
    ['-1.5', '-1500m'],
    ['-100m', '-100m'],
  ])('DecimalSI %s -> %s', (input, want) => {
    expect(canonicalQuantity(input)).toBe(want);
  });

  test.each([
    ['1Ki', '1Ki'],
    ['1024Ki', '1Mi'],
    ['1536Ki', '1536Ki'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['128Mi', '128Mi'],
    ['2Gi', '2Gi'],
    ['2048Mi', '2Gi'],
    ['1Ti', '1Ti'],
    ['1Pi', '1Pi'],
    ['1Ei', '1Ei'],
    ['1023Ki', '1023Ki'],
    ['-1Ki', '-1Ki'],
    // below 1024 or not whole: printed as DecimalSI so nothing is rounded
    ['0.5Ki', '512'],
    ['1.5Ki', '1536'],
    ['0.1Ki', '102400m'],
    ['0.0001Ki', '102400u'],
    ['0Ki', '0'],
  ])('BinarySI %s -> %s', (input, want) => {
    expect(canonicalQuantity(input)).toBe(want);
  });

  test.each([
    ['1e3', '1e3'],
    ['1E3', '1e3'],
    ['10e3', '10e3'],
    ['1000e0', '1e3'],
    ['1e-3', '1e-3'],
    ['1e+3', '1e3'],
    ['12e6', '12e6'],
    ['1.5e3', '1500'],
    ['1e0', '1'],
  ])('DecimalExponent %s -> %s', (input, want) => {
    expect(canonicalQuantity(input)).toBe(want);
  });

  test('precision finer than a nano is rounded up, away from zero', () => {
    expect(canonicalQuantity('0.1n')).toBe('1n');
    expect(canonicalQuantity('1.0000000001')).toBe('1000000001n');
    expect(canonicalQuantity('-0.1n')).toBe('-1n');
  });

  test('BinarySI is capped at the largest int64', () => {
    expect(canonicalQuantity('8Ei')).toBe('9223372036854775807');
    expect(canonicalQuantity('16Ei')).toBe('9223372036854775807');
  });

  test('a value past the E suffix keeps its magnitude', () => {
    expect(canonicalQuantity('1000E')).toBe('1000E');
    expect(compareQuantities(parseQuantity('1000E'), parseQuantity('1e21'))).toBe(0);
  });

  test('formats are remembered from the suffix', () => {
    expect(parseQuantity('1Mi').format).toBe('BinarySI');
    expect(parseQuantity('1M').format).toBe('DecimalSI');
    expect(parseQuantity('1e6').format).toBe('DecimalExponent');
    expect(parseQuantity('1').format).toBe('DecimalSI');
    // a BinarySI amount below one is DecimalSI from the start
    expect(parseQuantity('0.0001Ki').format).toBe('DecimalSI');
  });

  test.each(['', ' 1', '1 ', 'abc', '1.5.5', '1e', '1ki', '1Kib', '1KI', '--1', '1k5', '1e+', '1mm'])('rejects %j', (bad) => {
    expect(() => parseQuantity(bad)).toThrow(QuantityError);
    expect(tryParseQuantity(bad)).toBeUndefined();
  });

  test.each(['Ki', 'm', 'e3', '-', '+'])('like upstream, a bare suffix or sign %j reads as zero', (s) => {
    expect(canonicalQuantity(s)).toBe('0');
  });
});

describe('sums keep upstream format rules', () => {
  test('same format adds up in that format', () => {
    expect(sum('100m', '200m')).toBe('300m');
    expect(sum('1', '500m')).toBe('1500m');
    expect(sum('500m', '500m')).toBe('1');
    expect(sum('128Mi', '128Mi')).toBe('256Mi');
    expect(sum('1Gi', '512Mi')).toBe('1536Mi');
    expect(sum('1G', '1G')).toBe('2G');
    expect(sum('1', '1', '1')).toBe('3');
  });

  test('the first non-zero addend decides the format', () => {
    expect(sum('1Gi', '500M')).toBe('1573741824');
    expect(sum('500M', '1Gi')).toBe('1573741824');
    expect(sum('1Ki', '1')).toBe('1025');
    expect(sum('1', '1Ki')).toBe('1025');
    expect(sum('1Gi', '1G')).toBe('2073741824');
    expect(sum('1G', '1Gi')).toBe('2073741824');
    expect(sum('1Mi', '1Mi', '1M')).toBe('3097152');
    expect(sum('2Mi', '1048576')).toBe('3Mi');
    expect(sum('1048576', '2Mi')).toBe('3145728');
    expect(sum('100m', '1Gi')).toBe('1073741824100m');
    expect(sum('1e3', '1')).toBe('1001');
    expect(sum('1e3', '1e3')).toBe('2e3');
  });

  test('a zero left side takes the right side\'s format', () => {
    expect(formatQuantity(addQuantities(zeroQuantity(), parseQuantity('64Mi')))).toBe('64Mi');
    expect(formatQuantity(addQuantities(parseQuantity('0'), parseQuantity('1Gi')))).toBe('1Gi');
    // a zero in another format does not stick once something real is added
    expect(sum('0Mi', '1G')).toBe('1G');
    expect(sum('0', '0Gi', '2Gi')).toBe('2Gi');
    expect(sum('0', '0')).toBe('0');
  });

  test('negative amounts', () => {
    expect(sum('1', '-1500m')).toBe('-500m');
    expect(sum('1Gi', '-1Gi')).toBe('0');
  });
});

describe('comparison and helpers', () => {
  test('compare ignores format', () => {
    expect(compareQuantities(parseQuantity('1'), parseQuantity('1000m'))).toBe(0);
    expect(compareQuantities(parseQuantity('1Ki'), parseQuantity('1024'))).toBe(0);
    expect(compareQuantities(parseQuantity('1G'), parseQuantity('1Gi'))).toBe(-1);
    expect(compareQuantities(parseQuantity('2'), parseQuantity('1999m'))).toBe(1);
    expect(compareQuantities(parseQuantity('-1'), parseQuantity('0'))).toBe(-1);
  });

  test('max keeps the left on a tie', () => {
    const a = parseQuantity('1');
    const b = parseQuantity('1000m');
    expect(maxQuantity(a, b)).toBe(a);
    expect(maxQuantity(a, parseQuantity('2Ki')).format).toBe('BinarySI');
  });

  test('roundUpToInteger charges whole units', () => {
    expect(formatQuantity(roundUpToInteger(parseQuantity('1.5')))).toBe('2');
    expect(formatQuantity(roundUpToInteger(parseQuantity('1500m')))).toBe('2');
    expect(formatQuantity(roundUpToInteger(parseQuantity('2000m')))).toBe('2');
    expect(formatQuantity(roundUpToInteger(parseQuantity('1Gi')))).toBe('1Gi');
    expect(formatQuantity(roundUpToInteger(parseQuantity('0.5Ki')))).toBe('512');
    expect(formatQuantity(roundUpToInteger(parseQuantity('-1.5')))).toBe('-2');
  });

  test('fromInt prints plain counts', () => {
    expect(formatQuantity(fromInt(0))).toBe('0');
    expect(formatQuantity(fromInt(7))).toBe('7');
    expect(formatQuantity(fromInt(1000))).toBe('1k');
    expect(formatQuantity(fromInt(1500))).toBe('1500');
  });

  test('quantitiesEqual is semantic; a malformed string equals only itself', () => {
    expect(quantitiesEqual('1', '1000m')).toBe(true);
    expect(quantitiesEqual('1Gi', '1024Mi')).toBe(true);
    expect(quantitiesEqual('1G', '1Gi')).toBe(false);
    expect(quantitiesEqual('x', 'x')).toBe(true);
    expect(quantitiesEqual('x', '1')).toBe(false);
    expect(quantitiesEqual(undefined, '0')).toBe(false);
  });

  test('resourceListsEqual compares names and amounts; absent equals empty', () => {
    expect(resourceListsEqual({ cpu: '1', pods: '2' }, { pods: '2', cpu: '1000m' })).toBe(true);
    expect(resourceListsEqual({ cpu: '1' }, { cpu: '1', pods: '0' })).toBe(false);
    expect(resourceListsEqual({ cpu: '1' }, { memory: '1' })).toBe(false);
    expect(resourceListsEqual(undefined, {})).toBe(true);
    expect(resourceListsEqual({}, undefined)).toBe(true);
    expect(resourceListsEqual({ pods: '0' }, undefined)).toBe(false);
  });
});
