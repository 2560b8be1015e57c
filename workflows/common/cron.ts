/**
 * Cron schedules as the CronJob controller reads them: the standard five fields (minute, hour,
 * day of month, month, day of week) with ranges, lists, steps, `?`, month and weekday names, the
 * descriptors @yearly/@annually/@monthly/@weekly/@daily/@midnight/@hourly and @every <duration>,
 * and an optional `TZ=<zone> ` / `CRON_TZ=<zone> ` prefix. The semantics (and the error texts, which
 * end up in Events) follow github.com/robfig/cron/v3, the parser upstream uses.
 *
 * Pure and deterministic: safe in workflow code. Time zones are resolved with Intl, which the
 * workflow sandbox provides.
 *
 * Daylight saving: the search for the next time walks wall-clock fields the way robfig/cron does,
 * mapping a wall-clock time to an instant like Go's time.Date, so the results match upstream's:
 * - a spring-forward gap is skipped: hourly "0 * * * *" in New York goes 01:00 EST -> 03:00 EDT,
 *   and a daily "0 2 * * *" does not run that day at all;
 * - in a fall-back overlap an hour that occurs twice runs twice, for hourly and daily "0 1 * * *" alike.
 */
import { DurationParseError, parseGoDuration } from './duration';

export class CronParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronParseError';
  }
}

/** Field sets as membership arrays indexed by value; `domStar`/`dowStar` remember a `*` or `?`. */
export interface SpecSchedule {
  kind: 'spec';
  seconds: boolean[];
  minutes: boolean[];
  hours: boolean[];
  dom: boolean[];
  months: boolean[];
  dow: boolean[];
  domStar: boolean;
  dowStar: boolean;
  /** IANA name; absent means UTC */
  timeZone?: string;
}

/** `@every <duration>`: a fixed delay after the previous time, whole seconds, at least one. */
export interface EverySchedule {
  kind: 'every';
  delayMs: number;
}

export type CronSchedule = SpecSchedule | EverySchedule;

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const SECONDS: Bounds = { min: 0, max: 59 };
const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1, max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

interface FieldSet {
  set: boolean[];
  star: boolean;
}

function bitsOf(min: number, max: number, step: number): boolean[] {
  const set: boolean[] = [];
  for (let i = min; i <= max; i += step) set[i] = true;
  return set;
}

function union(a: boolean[], b: boolean[]): boolean[] {
  const out = a.slice();
  b.forEach((v, i) => { if (v) out[i] = true; });
  return out;
}

/** strconv.Atoi plus robfig's non-negative check, with their messages. */
function parseUint(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr)) {
    throw new CronParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  }
  const n = Number(expr);
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 63 - 1) {
    throw new CronParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`);
  }
  if (n < 0) throw new CronParseError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names?: Record<string, number>): number {
  const named = names?.[expr.toLowerCase()];
  return named !== undefined ? named : parseUint(expr);
}

function parseRange(expr: string, r: Bounds): FieldSet {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0].split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    // robfig ignores whatever follows a star's hyphen
    start = r.min;
    end = r.max;
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0], r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1], r.names);
    else throw new CronParseError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseUint(rangeAndStep[1]);
    if (single) end = r.max; // "N/step" runs to the end of the field
    if (step > 1) star = false; // "*/2" restricts the field, "*/1" does not
  } else if (rangeAndStep.length > 2) {
    throw new CronParseError(`too many slashes: ${expr}`);
  }
  if (start < r.min) throw new CronParseError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronParseError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronParseError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronParseError(`step of range should be a positive number: ${expr}`);
  return { set: bitsOf(start, end, step), star };
}

function parseField(field: string, r: Bounds): FieldSet {
  let out: FieldSet = { set: [], star: false };
  for (const expr of field.split(',').filter((s) => s !== '')) {
    const f = parseRange(expr, r);
    out = { set: union(out.set, f.set), star: out.star || f.star };
  }
  return out;
}

const one = (v: number) => bitsOf(v, v, 1);
const all = (r: Bounds) => bitsOf(r.min, r.max, 1);

function descriptor(spec: string, timeZone: string | undefined): CronSchedule {
  const tz = timeZone !== undefined ? { timeZone } : {};
  const base = { kind: 'spec' as const, seconds: one(0), minutes: one(0), hours: one(0), ...tz };
  switch (spec) {
    case '@yearly':
    case '@annually':
      return { ...base, dom: one(1), months: one(1), dow: all(DOW), domStar: false, dowStar: true };
    case '@monthly':
      return { ...base, dom: one(1), months: all(MONTHS), dow: all(DOW), domStar: false, dowStar: true };
    case '@weekly':
      return { ...base, dom: all(DOM), months: all(MONTHS), dow: one(0), domStar: true, dowStar: false };
    case '@daily':
    case '@midnight':
      return { ...base, dom: all(DOM), months: all(MONTHS), dow: all(DOW), domStar: true, dowStar: true };
    case '@hourly':
      return { ...base, hours: all(HOURS), dom: all(DOM), months: all(MONTHS), dow: all(DOW), domStar: true, dowStar: true };
  }
  if (spec.startsWith('@every ')) {
    const ms = durationOrUndefined(spec.slice('@every '.length));
    if (ms === undefined) throw new CronParseError(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(spec.slice(7))}`);
    // under a second becomes a second; the rest is cut to whole seconds
    const delay = Math.max(1000, ms);
    return { kind: 'every', delayMs: delay - (delay % 1000) };
  }
  throw new CronParseError(`unrecognized descriptor: ${spec}`);
}

function durationOrUndefined(text: string): number | undefined {
  try {
    return parseGoDuration(text);
  } catch (e) {
    if (e instanceof DurationParseError) return undefined;
    throw e;
  }
}

/**
 * Parse a schedule. `timeZone` is where the fields are read when the schedule names no zone of its
 * own; absent means UTC. (Upstream falls back to the controller's local zone; the manager runs in
 * UTC, and a fixed choice keeps workflow replays independent of the host.)
 */
export function parseSchedule(spec: string, timeZone?: string): CronSchedule {
  if (spec.length === 0) throw new CronParseError('empty spec string');
  let tz = timeZone;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const eq = spec.indexOf('=');
    // upstream's parser panics here and the controller reports the recovered panic
    if (space < 0) throw new CronParseError(`invalid schedule format: runtime error: slice bounds out of range [:-1]`);
    const name = spec.slice(eq + 1, space);
    const problem = timeZoneError(name);
    if (problem) throw new CronParseError(`provided bad location ${name}: ${problem}`);
    tz = name;
    spec = spec.slice(space).trim();
  }
  if (tz !== undefined) {
    const problem = timeZoneError(tz);
    if (problem) throw new CronParseError(problem);
  }
  if (spec.startsWith('@')) return descriptor(spec, normalZone(tz));

  const fields = spec.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) throw new CronParseError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minute, hour, dom, month, dow] = [
    parseField(fields[0], MINUTES), parseField(fields[1], HOURS), parseField(fields[2], DOM), parseField(fields[3], MONTHS), parseField(fields[4], DOW),
  ];
  const zone = normalZone(tz);
  return {
    kind: 'spec',
    seconds: one(SECONDS.min),
    minutes: minute.set,
    hours: hour.set,
    dom: dom.set,
    months: month.set,
    dow: dow.set,
    domStar: dom.star,
    dowStar: dow.star,
    ...(zone !== undefined ? { timeZone: zone } : {}),
  };
}

/** UTC needs no Intl round trips; "" and "Local" mean UTC here (see parseSchedule). */
function normalZone(tz: string | undefined): string | undefined {
  return tz === undefined || tz === '' || tz === 'UTC' || tz === 'Local' ? undefined : tz;
}

/**
 * Why a time zone name cannot be loaded, in Go's words (`unknown time zone X`), or undefined when it
 * can. "" and "UTC" are UTC and "Local" is the controller's zone, as for Go's time.LoadLocation.
 */
export function timeZoneError(name: string): string | undefined {
  if (name === '' || name === 'UTC' || name === 'Local') return undefined;
  try {
    zoneFormatter(name);
    return undefined;
  } catch {
    return `unknown time zone ${name}`;
  }
}

// ---------------------------------------------------------------------------------------------
// wall-clock fields <-> instants

interface Fields {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: number; // 0 = Sunday
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function zoneFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', era: 'short',
      year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** An instant from (possibly out-of-range) UTC fields, normalised like Go's time.Date. */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d); // not Date.UTC: it maps years 0-99 to 1900-1999
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

function utcFields(ms: number): Fields {
  const t = new Date(ms);
  return {
    year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate(),
    hour: t.getUTCHours(), minute: t.getUTCMinutes(), second: t.getUTCSeconds(), weekday: t.getUTCDay(),
  };
}

interface Zone {
  fields(ms: number): Fields;
  /** the instant of a wall-clock time, out-of-range fields carried over, as Go's time.Date */
  date(y: number, mo: number, d: number, h: number, mi: number, s: number): number;
}

const UTC_ZONE: Zone = { fields: utcFields, date: utcMs };

function ianaZone(timeZone: string): Zone {
  const fmt = zoneFormatter(timeZone);
  const fields = (ms: number): Fields => {
    const p: Record<string, string> = {};
    for (const part of fmt.formatToParts(new Date(ms))) p[part.type] = part.value;
    const yearInEra = Number(p.year);
    const year = p.era === 'BC' || p.era === 'B' ? 1 - yearInEra : yearInEra;
    const month = Number(p.month);
    const day = Number(p.day);
    return {
      year, month, day, hour: Number(p.hour), minute: Number(p.minute), second: Number(p.second),
      weekday: new Date(utcMs(year, month, day, 0, 0, 0)).getUTCDay(),
    };
  };
  const offsetAt = (ms: number): number => {
    const f = fields(ms);
    return utcMs(f.year, f.month, f.day, f.hour, f.minute, f.second) - Math.floor(ms / 1000) * 1000;
  };
  return {
    fields,
    date(y, mo, d, h, mi, s) {
      // Go's rule: take the offset in force at the wall time read as UTC; if the instant that gives
      // lies outside that offset's span, take the offset in force at that instant instead. A time
      // in a gap therefore lands on one side of it, an ambiguous one on one of its two instants.
      const wall = utcMs(y, mo, d, h, mi, s);
      return wall - offsetAt(wall - offsetAt(wall));
    },
  };
}

function zoneOf(timeZone: string | undefined): Zone {
  const tz = normalZone(timeZone);
  return tz === undefined ? UTC_ZONE : ianaZone(tz);
}

/** The UTC offset in force in `timeZone` at the instant, in minutes east of UTC. */
export function utcOffsetMinutes(ms: number, timeZone?: string): number {
  const tz = normalZone(timeZone);
  if (tz === undefined) return 0;
  const f = ianaZone(tz).fields(ms);
  return Math.round((utcMs(f.year, f.month, f.day, f.hour, f.minute, f.second) - Math.floor(ms / 1000) * 1000) / 60_000);
}

/** RFC 3339 in the given zone, whole seconds, `Z` for a zero offset: Go's time.RFC3339 layout. */
export function formatRfc3339(ms: number, timeZone?: string): string {
  const off = utcOffsetMinutes(ms, timeZone);
  const local = new Date(Math.floor(ms / 1000) * 1000 + off * 60_000).toISOString().slice(0, 19);
  if (off === 0) return `${local}Z`;
  const abs = Math.abs(off);
  return `${local}${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// next activation

function dayMatches(s: SpecSchedule, f: Fields): boolean {
  const domMatch = s.dom[f.day] === true;
  const dowMatch = s.dow[f.weekday] === true;
  // a star in either day field means both must match; otherwise either one will do (as cron does)
  return s.domStar || s.dowStar ? domMatch && dowMatch : domMatch || dowMatch;
}

const HOUR_MS = 3_600_000;

/** robfig/cron's SpecSchedule.Next, field by field on wall-clock time. */
function nextSpec(s: SpecSchedule, afterMs: number): number | undefined {
  const z = zoneOf(s.timeZone);
  let t = Math.floor(afterMs / 1000) * 1000 + 1000; // the next whole second
  let added = false;
  const yearLimit = z.fields(t).year + 5;

  wrap: for (;;) {
    let f = z.fields(t);
    if (f.year > yearLimit) return undefined;

    while (!s.months[f.month]) {
      if (!added) {
        added = true;
        t = z.date(f.year, f.month, 1, 0, 0, 0);
        f = z.fields(t);
      }
      t = z.date(f.year, f.month + 1, f.day, f.hour, f.minute, f.second);
      f = z.fields(t);
      if (f.month === 1) continue wrap;
    }

    while (!dayMatches(s, f)) {
      if (!added) {
        added = true;
        t = z.date(f.year, f.month, f.day, 0, 0, 0);
        f = z.fields(t);
      }
      t = z.date(f.year, f.month, f.day + 1, f.hour, f.minute, f.second);
      f = z.fields(t);
      // midnight may not exist on a DST day: step back to the day's start or forward to the next
      if (f.hour !== 0) {
        t += f.hour > 12 ? (24 - f.hour) * HOUR_MS : -f.hour * HOUR_MS;
        f = z.fields(t);
      }
      if (f.day === 1) continue wrap;
    }

    while (!s.hours[f.hour]) {
      if (!added) {
        added = true;
        t = z.date(f.year, f.month, f.day, f.hour, 0, 0);
      }
      t += HOUR_MS;
      f = z.fields(t);
      if (f.hour === 0) continue wrap;
    }

    while (!s.minutes[f.minute]) {
      if (!added) {
        added = true;
        t = Math.floor(t / 60_000) * 60_000;
      }
      t += 60_000;
      f = z.fields(t);
      if (f.minute === 0) continue wrap;
    }

    while (!s.seconds[f.second]) {
      if (!added) added = true;
      t += 1000;
      f = z.fields(t);
      if (f.second === 0) continue wrap;
    }
    return t;
  }
}

/**
 * The first activation strictly after `afterMs`, or undefined when there is none within five years
 * (an impossible date such as February 30th), where upstream's library returns the zero time.
 * A string schedule is parsed with `timeZone` as its default zone.
 */
export function nextAfter(schedule: CronSchedule | string, afterMs: number, timeZone?: string): number | undefined {
  const s = typeof schedule === 'string' ? parseSchedule(schedule, timeZone) : schedule;
  if (s.kind === 'every') return afterMs + s.delayMs - (((afterMs % 1000) + 1000) % 1000);
  return nextSpec(s, afterMs);
}
