import { randomBytes } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { eventTexts, logLeaks, needlesIn, overBudget, secretLeaks, secretNeedles, type RunHistory } from '../../chaos/histories';
import { ZlibPayloadCodec } from '../../workers/payload-codec';

const VALUE = randomBytes(32).toString('hex');
const needles = secretNeedles(VALUE);
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const json = (v: unknown) => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(v)) });

/** An event as fetchHistory gives it: encoded and decoded again, so payload data are bytes. */
function event(o: temporal.api.history.v1.IHistoryEvent): temporal.api.history.v1.HistoryEvent {
  const { HistoryEvent } = temporal.api.history.v1;
  return HistoryEvent.decode(HistoryEvent.encode(HistoryEvent.create(o)).finish());
}
const completed = (payload: temporal.api.common.v1.IPayload) => event({
  eventType: temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
  activityTaskCompletedEventAttributes: { result: { payloads: [payload] } },
});
const run = (...events: temporal.api.history.v1.HistoryEvent[]): RunHistory => ({
  workflowId: 'namespace/ns-1', runId: 'r1',
  events: events.map((e) => ({ type: temporal.api.enums.v1.EventType[e.eventType].replace('EVENT_TYPE_', ''), event: e })),
});

describe('the Secret needles', () => {
  test('the value raw, and base64 at every alignment inside a longer text', () => {
    expect(needlesIn([`x${VALUE}y`], needles)).toEqual(['raw']);
    // a Secret's data as the API serves it
    expect(needlesIn([JSON.stringify({ data: { token: b64(VALUE) } })], needles)).toEqual(['base64']);
    // a whole object holding the value, base64-encoded, with the value at each offset mod 3
    for (const prefix of ['', 'a', 'ab', 'abc', 'abcd']) {
      expect(needlesIn([b64(`${prefix}${VALUE}"}`)], needles)).toEqual(['base64']);
    }
    // another value, or the value cut short, is not taken for it
    expect(needlesIn([VALUE.slice(0, 63), b64(randomBytes(32).toString('hex')), b64(VALUE.slice(1, 40))], needles)).toEqual([]);
  });
});

describe('Secret bytes in histories and logs', () => {
  test('a payload holding a Secret\'s data is caught, plain or compressed by our codec, and so is a failure message', async () => {
    const secret = { kind: 'Secret', metadata: { name: 's' }, data: { token: b64(VALUE) } };
    expect(secretLeaks(run(completed(json({ items: [secret] }))), needles)).toEqual([
      'history of namespace/ns-1 (run r1) event 1 (ACTIVITY_TASK_COMPLETED) holds the planted Secret\'s value (base64)',
    ]);
    // compressed: the bytes as stored show neither form until inflated
    const [packed] = await new ZlibPayloadCodec(0).encode([json({ items: [{ ...secret, stringData: { token: VALUE } }] })]);
    expect(Buffer.from(packed.data!).toString('latin1')).not.toContain(VALUE);
    expect(secretLeaks(run(completed(packed)), needles)).toHaveLength(1);
    expect(secretLeaks(run(completed(packed)), needles)[0]).toMatch(/\(base64, raw\)$/);
    const failed = event({
      eventType: temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
      activityTaskFailedEventAttributes: { failure: { message: `secret "s" is ${VALUE}` } },
    });
    expect(secretLeaks(run(completed(json({ ok: true })), failed), needles)).toEqual([
      'history of namespace/ns-1 (run r1) event 2 (ACTIVITY_TASK_FAILED) holds the planted Secret\'s value (raw)',
    ]);
  });

  test('a history with only metadata of the Secret passes', () => {
    const e = completed(json({ items: [{ kind: 'Secret', metadata: { name: 's', uid: 'u' } }] }));
    expect(eventTexts(e).some((t) => t.includes('"name":"s"'))).toBe(true);
    expect(secretLeaks(run(e), needles)).toEqual([]);
  });

  test('log lines holding the value are named by line, without the value', () => {
    const text = ['{"level":40,"msg":"ok"}', `{"msg":"patch","body":"${b64(VALUE)}"}`, VALUE, ''].join('\n');
    const found = logLeaks('bench-ours-x-0.log', text, needles);
    expect(found).toEqual([
      'manager log bench-ours-x-0.log line 2 holds the planted Secret\'s value (base64)',
      'manager log bench-ours-x-0.log line 3 holds the planted Secret\'s value (raw)',
    ]);
    expect(found.join('')).not.toContain(VALUE);
  });
});

describe('the history budget', () => {
  const types = (n: number, tail: string[] = []) => [...Array.from({ length: n - tail.length }, () => 'ACTIVITY_TASK_SCHEDULED'), ...tail];
  test('up to threshold + margin passes; one event more is a violation naming what came past the threshold', () => {
    expect(overBudget([{ workflowId: 'w', runId: 'r', types: types(1100) }], 1000, 100)).toEqual([]);
    const over = overBudget([
      { workflowId: 'ok', runId: 'r0', types: types(10) },
      { workflowId: 'endpointslice/ns/web', runId: 'r1', types: types(1101, ['WORKFLOW_EXECUTION_SIGNALED', 'WORKFLOW_EXECUTION_SIGNALED']) },
    ], 1000, 100);
    expect(over).toEqual([
      'history of endpointslice/ns/web (run r1): 1101 events, over the budget of 1100 (--max-history-events 1000 + 100); past the threshold: 99 ACTIVITY_TASK_SCHEDULED, 2 WORKFLOW_EXECUTION_SIGNALED',
    ]);
  });
});
