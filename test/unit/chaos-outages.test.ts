import { pauseOf, planOutages, runOutages } from '../../chaos/outages';
import { seededRandom } from '../../chaos/storm';

const PLAN = { outages: 3, minGapMs: 0, maxGapMs: 5, minOutMs: 10, maxOutMs: 30 };

describe('replica outages (pauses, partitions)', () => {
  test('the plan comes from the seed: the same seed, the same victims, gaps and lengths, each within its bounds', () => {
    const a = planOutages(PLAN, 3, seededRandom(7));
    expect(planOutages(PLAN, 3, seededRandom(7))).toEqual(a);
    expect(a).toHaveLength(3);
    for (const p of a) {
      expect(p.victim).toBeGreaterThanOrEqual(0);
      expect(p.victim).toBeLessThan(3);
      expect(p.gapMs).toBeLessThanOrEqual(5);
      expect(p.outMs).toBeGreaterThanOrEqual(10);
      expect(p.outMs).toBeLessThanOrEqual(30);
    }
    expect(() => planOutages(PLAN, 1, seededRandom(7))).toThrow(/second replica/);
  });

  test('each victim is stopped and then continued, and an abort mid-pause still continues it', async () => {
    const sent: string[] = [];
    const slots = [{ pid: 11 }, { pid: 12 }];
    const plan = [{ gapMs: 0, victim: 1, outMs: 5 }, { gapMs: 0, victim: 0, outMs: 60_000 }];
    const ac = new AbortController();
    const pauses = pauseOf(slots, (pid, sig) => {
      sent.push(`${sig} ${pid}`);
      if (sig === 'SIGSTOP' && pid === 11) setTimeout(() => ac.abort(), 5);
    });
    const done = await runOutages(pauses, plan, ac.signal, () => undefined);
    expect(sent).toEqual(['SIGSTOP 12', 'SIGCONT 12', 'SIGSTOP 11', 'SIGCONT 11']);
    expect(done.map((d) => d.victim)).toEqual([1, 0]);
    expect(done[1].outForMs).toBeLessThan(1_000);
  });
});
