import { parseRequestCounts } from '../../bench/lib/apiserver';
import { UsageError, parseArgs } from '../../bench/lib/args';
import { mergeIntoDoc } from '../../bench/lib/report';
import { median, percentile, spread } from '../../bench/lib/stats';

describe('bench args', () => {
  test('defaults to the full run of every scenario', () => {
    expect(parseArgs([])).toEqual({ mode: 'full', scenarios: [1, 2, 3, 4, 5, 6, 7], out: 'docs/BENCHMARKS.md' });
  });
  test('reads every flag, in both spellings', () => {
    expect(parseArgs(['--quick', '--scenarios', '7,1,1', '--reps=4', '--out', 'x.md'])).toEqual({ mode: 'quick', scenarios: [1, 7], reps: 4, out: 'x.md' });
  });
  test.each([
    [['--fast']], [['--scenarios', '8']], [['--scenarios']], [['--reps', '0']], [['--quick', '--smoke']], [['--smoke=1']],
  ])('refuses %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
  });
});

describe('bench stats', () => {
  test('median, nearest-rank percentiles, spread', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(spread([5, NaN, 1, 3])).toEqual({ n: 3, median: 3, min: 1, max: 5 });
  });
});

test('apiserver_request_total: totals, writes, and writes to the workloads', () => {
  const text = [
    '# TYPE apiserver_request_total counter',
    'apiserver_request_total{code="200",component="apiserver",resource="pods",verb="LIST"} 10',
    'apiserver_request_total{code="201",component="apiserver",resource="pods",verb="POST"} 4',
    'apiserver_request_total{code="200",component="apiserver",resource="replicasets",subresource="status",verb="PUT"} 2',
    'apiserver_request_total{code="200",component="apiserver",resource="leases",verb="PUT"} 7',
    'apiserver_request_total_other{verb="POST"} 100',
  ].join('\n');
  expect(parseRequestCounts(text)).toEqual({ total: 23, writes: 13, workloadWrites: 6 });
});

test('the docs keep hand-written sections and replace old results', () => {
  const current = '# Benchmarks\n\nold intro\n\n## ReplicaSet scale-up and scale-down (`npm run bench`)\n\nold table\n\n' +
    '## Failover (from the end-to-end tests)\n\nkept\n\n## Side by side with upstream (x)\n\nolder run\n\n## Coalescing\n\nalso kept\n';
  const doc = mergeIntoDoc(current, '## Side by side with upstream (new)\n\nnew tables\n');
  expect(doc).toContain('new tables');
  expect(doc).toContain('## Failover (from the end-to-end tests)\n\nkept');
  expect(doc).toContain('## Coalescing\n\nalso kept');
  expect(doc).not.toContain('old table');
  expect(doc).not.toContain('older run');
  expect(doc).not.toContain('old intro');
  expect(doc.indexOf('new tables')).toBeLessThan(doc.indexOf('## Failover'));
});
