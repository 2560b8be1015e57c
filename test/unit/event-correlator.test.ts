import { COMBINED_PREFIX, EventCorrelator, type CorrelatedEvent } from '../../activities/kube/event-correlator';

const T0 = Date.parse('2026-11-28T12:00:00Z');
const rs = { kind: 'ReplicaSet', namespace: 'ns', name: 'web-1', uid: 'u1', apiVersion: 'apps/v1' };
const ev = (message: string, more: Partial<CorrelatedEvent> = {}): CorrelatedEvent =>
  ({ component: 'replicaset-controller', involvedObject: rs, type: 'Normal', reason: 'SuccessfulCreate', message, ...more });

let n = 0;
const fresh = () => `web-1.${n++}`;

test('a 50-pod scale-up: nine Events, then one combined Event counted up, then the spam limit (25 writes)', () => {
  const c = new EventCorrelator();
  const out = Array.from({ length: 50 }, (_, i) => c.correlate(ev(`Created pod: web-1-${i}`), T0 + i, fresh()));
  const written = out.filter((x) => !x.skip);
  expect(written).toHaveLength(25);
  const single = written.slice(0, 9);
  expect(single.map((x) => x.skip === false && x.message)).toEqual(Array.from({ length: 9 }, (_, i) => `Created pod: web-1-${i}`));
  expect(new Set(single.map((x) => x.skip === false && x.name)).size).toBe(9);
  expect(single.every((x) => x.skip === false && x.count === 1)).toBe(true);
  const combined = written.slice(9);
  // the tenth is a new Event under a name of its own; every later one patches it
  expect(combined.map((x) => x.skip === false && x.message)).toEqual(Array.from({ length: 16 }, (_, i) => `${COMBINED_PREFIX}Created pod: web-1-${i + 9}`));
  expect(combined.map((x) => x.skip === false && x.count)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  expect(new Set(combined.map((x) => x.skip === false && x.name)).size).toBe(1);
  expect(combined[0].skip === false && combined[0].firstTimestamp).toBe(new Date(T0 + 9).toISOString());
  expect(combined[15].skip === false && combined[15].firstTimestamp).toBe(new Date(T0 + 9).toISOString());
  expect(out.slice(25).every((x) => x.skip)).toBe(true);
});

test('the same Event again is the first one counted up; another reason is aggregated apart but shares the spam bucket', () => {
  const c = new EventCorrelator();
  const a = [1, 2, 3].map((i) => c.correlate(ev('Deleted pod: web-1-x', { reason: 'SuccessfulDelete' }), T0 + i, fresh()));
  expect(a.map((x) => x.skip === false && [x.name, x.count])).toEqual([[a[0].skip === false && a[0].name, 1], [a[0].skip === false && a[0].name, 2], [a[0].skip === false && a[0].name, 3]]);
  // 22 tokens left for this object's Normal Events, whatever their reason
  const b = Array.from({ length: 23 }, (_, i) => c.correlate(ev(`Created pod: web-1-${i % 5}`), T0 + 10 + i, fresh()));
  expect(b.filter((x) => !x.skip)).toHaveLength(22);
  // a Warning has a bucket of its own
  expect(c.correlate(ev('Error creating: quota', { type: 'Warning', reason: 'FailedCreate' }), T0 + 50, fresh()).skip).toBe(false);
  // one token comes back every five minutes
  expect(c.correlate(ev('Created pod: web-1-0'), T0 + 300_100, fresh()).skip).toBe(false);
  expect(c.correlate(ev('Created pod: web-1-0'), T0 + 300_200, fresh()).skip).toBe(true);
});

test('similar Events ten minutes apart start counting afresh', () => {
  const c = new EventCorrelator();
  for (let i = 0; i < 9; i++) c.correlate(ev(`Created pod: a-${i}`), T0, fresh());
  const later = c.correlate(ev('Created pod: b'), T0 + 600_001, fresh());
  expect(later.skip === false && later.message).toBe('Created pod: b');
  const soon = c.correlate(ev(`Created pod: c`), T0, fresh());
  expect(soon.skip).toBe(false);
});
