import type { Client } from '@temporalio/client';
import pino from 'pino';
import { HOT_KEY_INTERVAL_MS, SIGNAL_BUDGET_BYTES, Signaller, URGENT_INTERVAL_MS } from '../../activities/informers/signaller';
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

describe('signal gates', () => {
  /** a signaller whose sends are kept with their events */
  function gated(maxHoldMs = 60_000) {
    const sent: Array<{ id: string; event: Record<string, unknown> }> = [];
    const client = { workflow: { signalWithStart: async (_t: unknown, o: { workflowId: string; signalArgs: [Record<string, unknown>] }) => { sent.push({ id: o.workflowId, event: o.signalArgs[0] }); } } } as unknown as Client;
    const heldBy: Record<string, number> = {};
    const s = new Signaller(client, 'q', pino({ level: 'silent' }), { maxHoldMs, onHeld: (c, n) => { heldBy[c] = (heldBy[c] ?? 0) + n; } });
    const acts = new Set<string>();
    s.gate('replicaset', { wouldAct: (t) => acts.has(t.name), full: (t) => ({ full: t.name }) });
    return { s, sent, acts, heldBy };
  }
  const union = (a: Record<string, unknown>, b: Record<string, unknown>) => ({ ...a, ...b });

  test('an event the workflow would do nothing about is held, counted once, and goes out merged with the next that needs work', async () => {
    const { s, sent, acts, heldBy } = gated();
    s.queue(target('a'), { echo: 1 }, union);
    await s.flush();
    s.queue(target('a'), { restarts: 2 }, union);
    await s.flush();
    expect(sent).toEqual([]);
    expect(s.size).toBe(0);
    expect(s.heldKeys).toBe(1);
    expect(heldBy).toEqual({ replicaset: 2 });
    acts.add('a');
    s.queue(target('a'), { podGone: 3 }, union, true);
    await s.flush();
    expect(sent).toEqual([{ id: 'replicaset/ns/a', event: { echo: 1, restarts: 2, podGone: 3, folded: 3 } }]);
    expect(s.heldKeys).toBe(0);
    expect(heldBy).toEqual({ replicaset: 2 });
  });

  test('a gate that throws on an object lets its event go, ungated, and says so; the other objects are judged as ever', async () => {
    const sent: string[] = [];
    const client = { workflow: { signalWithStart: async (_t: unknown, o: { workflowId: string }) => { sent.push(o.workflowId); } } } as unknown as Client;
    const threw: string[] = [];
    const s = new Signaller(client, 'q', pino({ level: 'silent' }), { onGateThrew: (c) => threw.push(c) });
    s.gate('replicaset', {
      wouldAct: (t) => {
        if (t.name === 'bad') throw new TypeError('selector.matchExpressions is not iterable');
        return t.name === 'acts';
      },
      full: () => ({}),
    });
    for (const n of ['bad', 'acts', 'idle']) s.queue(target(n), {}, keepLater);
    await expect(s.flush()).resolves.toBeUndefined();
    expect(sent.sort()).toEqual(['replicaset/ns/acts', 'replicaset/ns/bad']);
    expect(s.heldKeys).toBe(1);
    expect(threw).toEqual(['replicaset']);
  });

  test('a new, deleted or relisted object goes out whatever the gate says; another controller is not gated', async () => {
    const { s, sent } = gated();
    s.queue(target('new'), { snapshot: true }, union, false, true);
    s.queue({ ...target('rc'), controller: 'replicationcontroller' }, { pods: 1 }, union);
    await s.flush();
    expect(sent.map((x) => x.id).sort()).toEqual(['replicaset/ns/new', 'replicationcontroller/ns/rc']);
  });

  test('a watch position passes a held event: the held event is in no one\'s way', async () => {
    const { s } = gated();
    s.queue(target('a'), {}, union);
    await s.flush();
    expect(s.heldKeys).toBe(1);
    expect(s.sentThrough()).toBe(s.queued);
  });

  test('a hold that runs out is judged again: held again while the workflow would still do nothing, sent once it would act', async () => {
    const { s, sent, acts, heldBy } = gated(200);
    s.queue(target('a'), { echo: 1 }, union);
    await s.flush();
    expect(sent).toEqual([]);
    await new Promise((r) => setTimeout(r, 1_100)); // past the hold and the held scan's period
    await s.flush();
    // time alone changed nothing the workflow would act on: it stays held, counted once
    expect(sent).toEqual([]);
    expect(s.heldKeys).toBe(1);
    expect(heldBy).toEqual({ replicaset: 1 });
    expect(s.holdsExpired).toBe(0);
    // by the next time it runs out, something no event brought makes the workflow act (a wait for availability)
    acts.add('a');
    await new Promise((r) => setTimeout(r, 1_100));
    await s.flush();
    expect(sent).toEqual([{ id: 'replicaset/ns/a', event: { echo: 1 } }]);
    expect(s.heldKeys).toBe(0);
    expect(s.holdsExpired).toBe(1);
  });

  test('a holder that took over the watch sends each gated object its full state once, with its first signal', async () => {
    const { s, sent, acts } = gated();
    s.resumed();
    acts.add('a');
    s.queue(target('a'), { pods: 1 }, union);
    await s.flush();
    await new Promise((r) => setTimeout(r, HOT_KEY_INTERVAL_MS + 10));
    s.queue(target('a'), { pods: 2 }, union);
    await s.flush();
    expect(sent).toEqual([{ id: 'replicaset/ns/a', event: { pods: 1, full: 'a' } }, { id: 'replicaset/ns/a', event: { pods: 2 } }]);
  });

  test('--max-signal-hold 0 gates nothing', async () => {
    const { s, sent } = gated(0);
    s.queue(target('a'), {}, union);
    await s.flush();
    expect(sent).toHaveLength(1);
  });
});

describe('events too large for a payload', () => {
  test("a target's event past SIGNAL_BUDGET_BYTES goes out as its look again, counted; smaller ones and targets without one go as they are", async () => {
    const sent: Array<{ id: string; event: Record<string, unknown> }> = [];
    const client = { workflow: { signalWithStart: async (_t: unknown, o: { workflowId: string; signalArgs: [Record<string, unknown>] }) => { sent.push({ id: o.workflowId, event: o.signalArgs[0] }); } } } as unknown as Client;
    const lean: string[] = [];
    const s = new Signaller(client, 'q', pino({ level: 'silent' }), { onShrunk: (c) => lean.push(c) });
    const shrink = (e: unknown) => ({ ...(e as Record<string, unknown>), state: undefined, lookAgain: true });
    const big = 'x'.repeat(SIGNAL_BUDGET_BYTES);
    s.queue({ ...target('big'), shrink }, { state: big }, keepLater);
    s.queue({ ...target('small'), shrink }, { state: 'x' }, keepLater);
    s.queue(target('plain'), { state: big }, keepLater);
    await s.flush();
    const byId = Object.fromEntries(sent.map((x) => [x.id, x.event]));
    expect(byId['replicaset/ns/big']).toEqual({ state: undefined, lookAgain: true });
    expect(byId['replicaset/ns/small']).toEqual({ state: 'x' });
    expect(byId['replicaset/ns/plain'].state).toBe(big);
    expect(lean).toEqual(['replicaset']);
    expect(s.shrunk).toBe(1);
  });
});
