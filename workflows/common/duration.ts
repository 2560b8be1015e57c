/*
 * Go's time.ParseDuration, shared by the manager's flags and by workflow code (CronJob's
 * `@every <duration>`): a Go duration is what both upstream surfaces accept, so both accept exactly
 * what Go does. Pure and deterministic, so it runs inside the workflow sandbox too.
 */

const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu; Go accepts both spellings
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** time.Duration is an int64 of nanoseconds; anything larger is an error in Go, so here too. */
const MAX_DURATION_NS = (1n << 63n) - 1n;

export class DurationParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DurationParseError';
  }
}

/**
 * Milliseconds in a Go duration string ("300ms", "1.5h", "1h30m", "-2s", "0"); fractional below a
 * millisecond. Arithmetic is in integer nanoseconds, so "1.1s" is exactly 1100.
 * Throws DurationParseError for anything Go would reject.
 */
export function parseGoDuration(text: string): number {
  const invalid = () => new DurationParseError(`invalid duration ${JSON.stringify(text)}`);
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  // a bare zero is the one number Go lets through without a unit
  if (s === '0') return 0;
  if (s === '') throw invalid();

  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let totalNs = 0n;
  let i = 0;
  while (i < s.length) {
    if (!isDigit(s[i]) && s[i] !== '.') throw invalid();
    const intStart = i;
    while (isDigit(s[i])) i++;
    const intDigits = s.slice(intStart, i);
    let fracDigits = '';
    if (s[i] === '.') {
      i++;
      const fracStart = i;
      while (isDigit(s[i])) i++;
      fracDigits = s.slice(fracStart, i);
    }
    if (intDigits === '' && fracDigits === '') throw invalid();

    const unitStart = i;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    const unit = s.slice(unitStart, i);
    if (unit === '') throw new DurationParseError(`missing unit in duration ${JSON.stringify(text)}`);
    const perUnit = NS_PER_UNIT[unit];
    if (perUnit === undefined) {
      throw new DurationParseError(`unknown unit ${JSON.stringify(unit)} in duration ${JSON.stringify(text)} (use ns, us, ms, s, m or h)`);
    }

    let ns = BigInt(intDigits || '0') * perUnit;
    if (fracDigits) ns += (BigInt(fracDigits) * perUnit) / 10n ** BigInt(fracDigits.length);
    totalNs += ns;
    if (totalNs > MAX_DURATION_NS + (negative ? 1n : 0n)) throw invalid();
  }
  const ms = Number(totalNs) / 1e6;
  return negative ? -ms : ms;
}
