import { CronParseError, formatRfc3339, nextAfter, parseSchedule, timeZoneError } from '../../workflows/common/cron';
import { parseGoDuration } from '../../workflows/common/duration';

const ms = (iso: string) => Date.parse(iso);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString().replace('.000Z', 'Z'));

describe('parseSchedule', () => {
  it.each([
    ['* * * * ?'],
    ['0 * * * *'],
    ['30 6-16/4 * * 1-5'],
    ['*/15 0-23 1,15 JAN-jun mon,Fri'],
    ['5/10 * * * *'],
    ['@yearly'], ['@annually'], ['@monthly'], ['@weekly'], ['@daily'], ['@midnight'], ['@hourly'],
    ['@every 1h30m'],
    ['TZ=America/New_York 0 9 * * *'],
    ['CRON_TZ=UTC  0 9 * * *'],
  ])('accepts %s', (spec) => {
    expect(() => parseSchedule(spec)).not.toThrow();
  });

  it.each([
    ['', 'empty spec string'],
    ['obvious error schedule', 'expected exactly 5 fields, found 3: [obvious error schedule]'],
    ['* * * * * *', 'expected exactly 5 fields, found 6'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-3 * * * *', 'beginning of range (5) beyond end of range (3): 5-3'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['*/2/3 * * * *', 'too many slashes: */2/3'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['x * * * *', 'failed to parse int from x'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every soon', 'failed to parse duration @every soon'],
    ['TZ=Nowhere/Atall 0 * * * *', 'provided bad location Nowhere/Atall: unknown time zone Nowhere/Atall'],
    ['TZ=UTC', 'invalid schedule format'],
  ])('rejects %j', (spec, message) => {
    expect(() => parseSchedule(spec)).toThrow(CronParseError);
    expect(() => parseSchedule(spec)).toThrow(message);
  });

  it('rounds @every to whole seconds, at least one', () => {
    expect(parseSchedule('@every 1500ms')).toEqual({ kind: 'every', delayMs: 1000 });
    expect(parseSchedule('@every 10ms')).toEqual({ kind: 'every', delayMs: 1000 });
    expect(parseSchedule('@every 1h')).toEqual({ kind: 'every', delayMs: 3_600_000 });
  });

  it('parses Go durations', () => {
    expect(parseGoDuration('1h30m')).toBe(5_400_000);
    expect(parseGoDuration('1.5h')).toBe(5_400_000);
    expect(parseGoDuration('0')).toBe(0);
    expect(() => parseGoDuration('5')).toThrow('missing unit');
    expect(() => parseGoDuration('')).toThrow('invalid duration');
    expect(() => parseSchedule('@every 5')).toThrow(CronParseError);
  });

  it('knows time zones as Go does', () => {
    expect(timeZoneError('America/New_York')).toBeUndefined();
    expect(timeZoneError('UTC')).toBeUndefined();
    expect(timeZoneError('')).toBeUndefined();
    expect(timeZoneError('bad timezone')).toBe('unknown time zone bad timezone');
  });
});

describe('nextAfter in UTC', () => {
  it.each([
    // simple
    ['2012-07-09T14:45:00Z', '0/15 * * * *', '2012-07-09T15:00:00Z'],
    ['2012-07-09T14:59:00Z', '0/15 * * * *', '2012-07-09T15:00:00Z'],
    ['2012-07-09T14:59:59Z', '0/15 * * * *', '2012-07-09T15:00:00Z'],
    // wrap around hours and days
    ['2012-07-09T15:45:00Z', '20-35/15 * * * *', '2012-07-09T16:20:00Z'],
    ['2012-07-09T23:46:00Z', '*/15 * * * *', '2012-07-10T00:00:00Z'],
    ['2012-07-09T23:45:00Z', '20-35/15 * * * *', '2012-07-10T00:20:00Z'],
    ['2012-07-09T23:35:51Z', '20-35/15 1/2 * * *', '2012-07-10T01:20:00Z'],
    ['2012-07-09T23:35:51Z', '20-35/15 10-12 * * *', '2012-07-10T10:20:00Z'],
    ['2012-07-09T23:35:51Z', '20-35/15 1/2 */2 * *', '2012-07-11T01:20:00Z'],
    ['2012-07-09T23:35:51Z', '20-35/15 * 9-20 Jul *', '2012-07-10T00:20:00Z'],
    // wrap around months: day-of-month and weekday are OR-ed when neither is a star
    ['2012-07-09T23:35:00Z', '0 0 9 Apr-Oct ?', '2012-08-09T00:00:00Z'],
    ['2012-07-09T23:35:00Z', '0 0 */5 Apr,Aug,Oct Mon', '2012-08-01T00:00:00Z'],
    ['2012-07-09T23:35:00Z', '0 0 */5 Oct Mon', '2012-10-01T00:00:00Z'],
    // wrap around years
    ['2012-07-09T23:35:00Z', '0 0 * Feb Mon', '2013-02-04T00:00:00Z'],
    ['2012-07-09T23:35:00Z', '0 0 * Feb Mon/2', '2013-02-01T00:00:00Z'],
    ['2012-12-31T23:59:45Z', '* * * * *', '2013-01-01T00:00:00Z'],
    // leap year
    ['2012-07-09T23:35:00Z', '0 0 29 Feb ?', '2016-02-29T00:00:00Z'],
    // descriptors
    ['2016-05-19T10:00:00Z', '@hourly', '2016-05-19T11:00:00Z'],
    ['2016-05-19T10:00:00Z', '@daily', '2016-05-20T00:00:00Z'],
    ['2016-05-19T10:00:00Z', '@weekly', '2016-05-22T00:00:00Z'],
    ['2016-05-19T10:00:00Z', '@monthly', '2016-06-01T00:00:00Z'],
    ['2016-05-19T10:00:00Z', '@yearly', '2017-01-01T00:00:00Z'],
  ])('after %s, %s -> %s', (after, spec, want) => {
    expect(iso(nextAfter(spec, ms(after)))).toBe(want);
  });

  it('finds nothing for impossible dates', () => {
    expect(nextAfter('0 0 30 Feb ?', ms('2012-07-09T23:35:00Z'))).toBeUndefined();
    expect(nextAfter('0 0 31 Apr ?', ms('2012-07-09T23:35:00Z'))).toBeUndefined();
    expect(nextAfter('59 23 31 2 *', ms('2016-05-19T10:00:10Z'))).toBeUndefined();
  });

  it('adds @every to the time, dropping its fraction of a second', () => {
    expect(nextAfter('@every 1h', ms('2016-05-19T10:00:00.250Z'))).toBe(ms('2016-05-19T11:00:00Z'));
  });
});

describe('nextAfter across daylight saving (America/New_York)', () => {
  const NY = 'America/New_York';
  it.each([
    // spring forward: 2am EST -> 3am EDT
    ['2012-03-11T00:00:00-05:00', '30 2 11 Mar ?', '2013-03-11T02:30:00-04:00'],
    ['2012-03-11T00:00:00-05:00', '0 * * * ?', '2012-03-11T01:00:00-05:00'],
    ['2012-03-11T01:00:00-05:00', '0 * * * ?', '2012-03-11T03:00:00-04:00'],
    ['2012-03-11T03:00:00-04:00', '0 * * * ?', '2012-03-11T04:00:00-04:00'],
    ['2012-03-11T00:00:00-05:00', '0 1 * * ?', '2012-03-11T01:00:00-05:00'],
    ['2012-03-11T01:00:00-05:00', '0 1 * * ?', '2012-03-12T01:00:00-04:00'],
    // the 2am nightly job does not run on the day 2am does not exist
    ['2012-03-11T00:00:00-05:00', '0 2 * * ?', '2012-03-12T02:00:00-04:00'],
    // fall back: 2am EDT -> 1am EST
    ['2012-11-04T00:00:00-04:00', '30 2 04 Nov ?', '2012-11-04T02:30:00-05:00'],
    ['2012-11-04T01:45:00-04:00', '30 1 04 Nov ?', '2012-11-04T01:30:00-05:00'],
    ['2012-11-04T00:00:00-04:00', '0 * * * ?', '2012-11-04T01:00:00-04:00'],
    ['2012-11-04T01:00:00-04:00', '0 * * * ?', '2012-11-04T01:00:00-05:00'],
    ['2012-11-04T01:00:00-05:00', '0 * * * ?', '2012-11-04T02:00:00-05:00'],
    // the 1am nightly job runs twice
    ['2012-11-04T00:00:00-04:00', '0 1 * * ?', '2012-11-04T01:00:00-04:00'],
    ['2012-11-04T01:00:00-04:00', '0 1 * * ?', '2012-11-04T01:00:00-05:00'],
    ['2012-11-04T01:00:00-05:00', '0 1 * * ?', '2012-11-05T01:00:00-05:00'],
    ['2012-11-04T00:00:00-04:00', '0 2 * * ?', '2012-11-04T02:00:00-05:00'],
    ['2012-11-04T02:00:00-05:00', '0 2 * * ?', '2012-11-05T02:00:00-05:00'],
    ['2012-11-04T00:00:00-04:00', '0 3 * * ?', '2012-11-04T03:00:00-05:00'],
    ['2012-11-04T03:00:00-05:00', '0 3 * * ?', '2012-11-05T03:00:00-05:00'],
    // monthly
    ['2012-11-04T00:00:00-04:00', '0 3 3 * ?', '2012-12-03T03:00:00-05:00'],
  ])('after %s, %s -> %s', (after, spec, want) => {
    expect(nextAfter(spec, ms(after), NY)).toBe(ms(want));
    // the same through the schedule's own prefix
    expect(nextAfter(`TZ=${NY} ${spec}`, ms(after))).toBe(ms(want));
    expect(nextAfter(`CRON_TZ=${NY} ${spec}`, ms(after))).toBe(ms(want));
  });

  it('handles a midnight that does not exist (America/Sao_Paulo)', () => {
    expect(nextAfter('0 9 10 * ?', ms('2018-10-17T05:00:00-04:00'), 'America/Sao_Paulo')).toBe(ms('2018-11-10T06:00:00-05:00'));
    expect(nextAfter('0 9 22 * ?', ms('2018-02-14T05:00:00-05:00'), 'America/Sao_Paulo')).toBe(ms('2018-02-22T07:00:00-05:00'));
  });

  it('lets the schedule prefix win over the default zone', () => {
    expect(nextAfter('TZ=UTC 0 * * * *', ms('2016-05-19T10:01:00Z'), NY)).toBe(ms('2016-05-19T11:00:00Z'));
  });
});

describe('formatRfc3339', () => {
  it('writes Z for UTC and the offset elsewhere', () => {
    const t = ms('2016-05-19T10:00:00Z');
    expect(formatRfc3339(t)).toBe('2016-05-19T10:00:00Z');
    expect(formatRfc3339(t, 'UTC')).toBe('2016-05-19T10:00:00Z');
    expect(formatRfc3339(t, 'Europe/Rome')).toBe('2016-05-19T12:00:00+02:00');
    expect(formatRfc3339(t, 'America/New_York')).toBe('2016-05-19T06:00:00-04:00');
    expect(formatRfc3339(t, 'Asia/Kolkata')).toBe('2016-05-19T15:30:00+05:30');
    expect(formatRfc3339(ms('2016-01-19T10:00:00Z'), 'Europe/London')).toBe('2016-01-19T10:00:00Z');
  });
});
