import type { Client } from '@temporalio/client';
import pino from 'pino';
import { HOT_KEY_INTERVAL_MS, Signaller, URGENT_INTERVAL_MS } from '../../activities/informers/signaller';
import { replicaOwnerWorkflow } from '../../workflows/replicaset/workflow';

const target = (name: string) => ({ controller: 'replicaset', workflow: replicaOwnerWorkflow, kind: 'ReplicaSet', namespace: 'ns', name, uid: `u-${name}`, args: { controller: 'replicaset' as const, kind: 'ReplicaSet' as const, namespace: 'ns', name, uid: `u-${name}` } });
const keepLater = <E>(_a: E, b: E) => b;

function signaller() {
  const sent: string[] = [];
  const client = { workflow: { signalWithStart: async (_t: unknown, o: { workflowId: string }) => { sent.push(o.workflowId); } } } as unknown as Client;
  return { s: new Signaller(client, 'q', pino({ level: 'silent' })), sent };
}

const timed = async (p: Promise<void>) => {
  const t0 = Date.now();
  await p;
  return Date.now() - t0;
};

describe('signaller wake-ups', () => {
  test('a quiet key queued while the pump idles wakes it within a tick', async () => {
    const { s } = signaller();
    const idle = s.idle(5_000);
    s.queue(target('a'), {}, keepLater);
    expect(await timed(idle)).toBeLessThan(1_000);
  });

  test('a key signalled within the hot-key interval does not wake it', async () => {
    const { s, sent } = signaller();
    s.queue(target('a'), {}, keepLater);
    await s.flush();
    expect(sent).toEqual(['replicaset/ns/a']);
    const idle = s.idle(300);
    s.queue(target('a'), { again: true }, keepLater);
    expect(await timed(idle)).toBeGreaterThanOrEqual(250);
    await s.flush(); // still hot: held back, merged with whatever comes next
    expect(sent).toHaveLength(1);
    expect(s.size).toBe(1);
  });

  test('a flush sends urgent events first, whatever order they were queued in', async () => {
    const { s, sent } = signaller();
    for (const n of ['a', 'b', 'c']) s.queue(target(n), {}, keepLater);
    s.queue(target('d'), { podGone: true }, keepLater, true);
    await s.flush(1);
    expect(sent).toEqual(['replicaset/ns/d', 'replicaset/ns/a', 'replicaset/ns/b', 'replicaset/ns/c']);
  });

  test('an urgent event waits only the short interval after its key was signalled', async () => {
    const { s, sent } = signaller();
    s.queue(target('a'), {}, keepLater);
    await s.flush();
    s.queue(target('a'), { routine: true }, keepLater);
    s.queue(target('a'), { podGone: true }, keepLater, true);
    await new Promise((r) => setTimeout(r, URGENT_INTERVAL_MS + 10));
    const idle = s.idle(5_000);
    s.queue(target('a'), { more: true }, keepLater); // merged into the urgent one: it stays urgent
    expect(await timed(idle)).toBeLessThan(1_000);
    await s.flush();
    expect(sent).toEqual(['replicaset/ns/a', 'replicaset/ns/a']);
    // and the next routine one is held for the full hot-key interval again
    s.queue(target('a'), { routine: true }, keepLater);
    await s.flush();
    expect(sent).toHaveLength(2);
    expect(HOT_KEY_INTERVAL_MS).toBeGreaterThan(URGENT_INTERVAL_MS);
  });

  test('an abort ends the wait', async () => {
    const { s } = signaller();
    const ac = new AbortController();
    const idle = s.idle(5_000, ac.signal);
    ac.abort();
    expect(await timed(idle)).toBeLessThan(1_000);
  });
});
