import { planPauses, runPauses } from '../../chaos/pauses';
import { seededRandom } from '../../chaos/storm';

const PLAN = { pauses: 3, minGapMs: 0, maxGapMs: 5, minStopMs: 10, maxStopMs: 30 };

describe('pauses', () => {
  test('the plan comes from the seed: the same seed, the same victims, gaps and lengths, each within its bounds', () => {
    const a = planPauses(PLAN, 3, seededRandom(7));
    expect(planPauses(PLAN, 3, seededRandom(7))).toEqual(a);
    expect(a).toHaveLength(3);
    for (const p of a) {
      expect(p.victim).toBeGreaterThanOrEqual(0);
      expect(p.victim).toBeLessThan(3);
      expect(p.gapMs).toBeLessThanOrEqual(5);
      expect(p.stopMs).toBeGreaterThanOrEqual(10);
      expect(p.stopMs).toBeLessThanOrEqual(30);
    }
    expect(() => planPauses(PLAN, 1, seededRandom(7))).toThrow(/second replica/);
  });

  test('each victim is stopped and then continued, and an abort mid-pause still continues it', async () => {
    const sent: string[] = [];
    const slots = [{ pid: 11 }, { pid: 12 }];
    const plan = [{ gapMs: 0, victim: 1, stopMs: 5 }, { gapMs: 0, victim: 0, stopMs: 60_000 }];
    const ac = new AbortController();
    const running = runPauses(slots, plan, ac.signal, () => undefined, (pid, sig) => {
      sent.push(`${sig} ${pid}`);
      if (sig === 'SIGSTOP' && pid === 11) setTimeout(() => ac.abort(), 5);
    });
    const done = await running;
    expect(sent).toEqual(['SIGSTOP 12', 'SIGCONT 12', 'SIGSTOP 11', 'SIGCONT 11']);
    expect(done.map((d) => d.pid)).toEqual([12, 11]);
    expect(done[1].stoppedForMs).toBeLessThan(1_000);
  });
});
