import { temporal } from '@temporalio/proto';
import { prefixAtTaskBoundary } from '../../bench/cache-cap/scenarios';
import { parseRequestCounts } from '../../bench/lib/apiserver';
import { UsageError, parseArgs } from '../../bench/lib/args';
import { disagreements, readinessInEndpoints, readinessInSlices } from '../../bench/lib/endpoints';
import { CpuProfile, bucketOf, summarizeProfile } from '../../bench/lib/profile';
import { ProcessTimes, addProfile, renderComparison } from '../../bench/lib/profile-compare';
import { sumMetric } from '../../bench/lib/prom';
import { classify, parseSmaps } from '../../bench/lib/memory-map';
import { mergeIntoDoc, placeSection } from '../../bench/lib/report';
import { median, percentile, spread } from '../../bench/lib/stats';
import { reactionStages } from '../../bench/lib/temporal';

describe('bench args', () => {
  test('defaults to the full run of every scenario', () => {
    expect(parseArgs([])).toEqual({ mode: 'full', scenarios: [1, 2, 3, 4, 5, 6, 7, 8, 9], out: 'docs/BENCHMARKS.md' });
  });
  test('reads every flag, in both spellings', () => {
    expect(parseArgs(['--quick', '--scenarios', '7,1,1', '--reps=4', '--out', 'x.md'])).toEqual({ mode: 'quick', scenarios: [1, 7], reps: 4, out: 'x.md' });
    expect(parseArgs(['--profile', '/tmp/p', '--scenarios=5']).profile).toBe('/tmp/p');
  });
  test('reads the scale curve\'s flags, sizes and replicas sorted', () => {
    expect(parseArgs(['--curve', '--quick', '--sizes', '300,100,100', '--replicas=3,2'])).toMatchObject({ mode: 'quick', curve: true, sizes: [100, 300], replicas: [2, 3] });
  });
  test('reads the cache cap\'s flags, caps largest first', () => {
    expect(parseArgs(['--cache-cap', '--sizes', '300', '--caps', '10,50'])).toMatchObject({ mode: 'full', cacheCap: true, sizes: [300], caps: [50, 10] });
    expect(parseArgs(['--cache-cap', '--caps', '30', '--unsettled'])).toMatchObject({ cacheCap: true, caps: [30], unsettled: true });
  });
  test('reads the memory study\'s flags, arena caps largest first', () => {
    expect(parseArgs(['--memory', '--sizes', '300', '--arenas', '1,2', '--reps=3'])).toMatchObject({ mode: 'full', memory: true, sizes: [300], arenas: [2, 1], reps: 3 });
  });
  test('reads the history cut\'s flags', () => {
    expect(parseArgs(['--history-cut', '--quick', '--reps', '2'])).toMatchObject({ mode: 'quick', historyCut: true, reps: 2 });
  });
  test('profiles the history cut', () => {
    expect(parseArgs(['--history-cut', '--quick', '--profile', '/tmp/p'])).toMatchObject({ mode: 'quick', historyCut: true, profile: '/tmp/p' });
    expect(parseArgs(['--profile=/tmp/p', '--history-cut'])).toMatchObject({ mode: 'full', historyCut: true, profile: '/tmp/p' });
  });
  test.each([
    [['--profile']], [['--fast']], [['--scenarios', '10']], [['--scenarios', '0']], [['--scenarios']], [['--reps', '0']], [['--quick', '--smoke']], [['--smoke=1']],
    [['--sizes', '100']], [['--curve', '--sizes', '0']], [['--curve', '--replicas', '1']], [['--curve=1']], [['--curve', '--profile', '/tmp/p']],
    [['--caps', '100']], [['--cache-cap', '--caps', '1']], [['--cache-cap', '--sizes', '100,300']], [['--cache-cap', '--curve']],
    [['--cache-cap', '--replicas', '2']], [['--cache-cap', '--profile', '/tmp/p']],
    [['--unsettled']], [['--curve', '--unsettled']], [['--cache-cap', '--unsettled=1']],
    [['--history-cut', '--curve']], [['--history-cut', '--cache-cap']], [['--history-cut=1']], [['--history-cut', '--sizes', '10']],
    [['--history-cut', '--caps', '10']], [['--history-cut', '--profile']], [['--history-cut', '--profile', '--quick']],
    [['--arenas', '2']], [['--memory', '--arenas', '0']], [['--memory', '--sizes', '100,300']], [['--memory', '--curve']], [['--memory=1']],
    [['--memory', '--profile', '/tmp/p']], [['--memory', '--caps', '10']],
  ])('refuses %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
  });
});

describe('bench endpoints readiness', () => {
  const want = [
    { service: 'a', pod: 'a-0', ready: true },
    { service: 'a', pod: 'a-1', ready: false },
    { service: 'b', pod: 'b-0', ready: true },
  ];
  test('Endpoints: addresses are Ready, notReadyAddresses are not, per Service', () => {
    const shown = readinessInEndpoints([
      { metadata: { name: 'a' }, subsets: [{ addresses: [{ ip: '10.0.0.1', targetRef: { name: 'a-0' } }], notReadyAddresses: [{ ip: '10.0.0.2', targetRef: { name: 'a-1' } }] }] },
      { metadata: { name: 'b' }, subsets: [{ notReadyAddresses: [{ ip: '10.0.0.3', targetRef: { name: 'b-0' } }] }] },
      { metadata: { name: 'c' } },
    ]);
    expect(shown.get('a')).toEqual(new Map([['a-0', true], ['a-1', false]]));
    expect(disagreements(want, shown)).toBe(1);
    expect(disagreements(want.slice(0, 2), shown)).toBe(0);
  });
  test('EndpointSlices: by the service-name label, ready unset is not Ready, a pod in two states disagrees', () => {
    const slice = (service: string, endpoints: Array<{ name: string; ready?: boolean }>) => ({
      metadata: { labels: { 'kubernetes.io/service-name': service } },
      endpoints: endpoints.map((e) => ({ addresses: ['10.0.0.9'], targetRef: { name: e.name }, conditions: e.ready === undefined ? {} : { ready: e.ready } })),
    });
    const agreeing = readinessInSlices([slice('a', [{ name: 'a-0', ready: true }]), slice('a', [{ name: 'a-1' }]), slice('b', [{ name: 'b-0', ready: true }]), { metadata: {} }]);
    expect(disagreements(want, agreeing)).toBe(0);
    const torn = readinessInSlices([slice('a', [{ name: 'a-0', ready: true }, { name: 'a-1', ready: false }]), slice('a', [{ name: 'a-0', ready: false }])]);
    expect(torn.get('a')?.get('a-0')).toBe('conflict');
    // a-0 listed both ways, b-0 missing
    expect(disagreements(want, torn)).toBe(2);
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

describe('cpu profile summary', () => {
  const root = '/repo';
  const frame = (id: number, functionName: string, url: string, children: number[] = []) =>
    ({ id, callFrame: { functionName, url, lineNumber: 9 }, children });

  test('buckets frames by package, V8 pseudo-frames by name', () => {
    expect(bucketOf({ functionName: 'f', url: 'file:///repo/dist/workers/manager.js' }, root)).toBe('our code');
    expect(bucketOf({ functionName: 'f', url: 'file:///repo/node_modules/@temporalio/worker/lib/worker.js' }, root)).toBe('Temporal SDK');
    expect(bucketOf({ functionName: 'f', url: '/repo/node_modules/webpack/lib/Compiler.js' }, root)).toBe('workflow bundling');
    expect(bucketOf({ functionName: 'f', url: '/repo/node_modules/protobufjs/src/reader.js' }, root)).toBe('protobuf/gRPC');
    expect(bucketOf({ functionName: 'f', url: '/repo/node_modules/@kubernetes/client-node/dist/config.js' }, root)).toBe('Kubernetes client');
    expect(bucketOf({ functionName: 'f', url: 'evalmachine.<anonymous>' }, root)).toBe('workflow sandbox');
    expect(bucketOf({ functionName: 'runInContext', url: 'node:vm' }, root)).toBe('workflow vm entry');
    expect(bucketOf({ functionName: 'f', url: 'node:internal/modules/cjs/loader' }, root)).toBe('module loading');
    expect(bucketOf({ functionName: 'f', url: 'node:_http_client' }, root)).toBe('HTTP/TLS/streams (node)');
    expect(bucketOf({ functionName: '(garbage collector)', url: '' }, root)).toBe('garbage collection');
    expect(bucketOf({ functionName: '(idle)', url: '' }, root)).toBe('idle');
  });

  test('self time per bucket, builtins charged to their caller, inclusive time of our frames', () => {
    // root -> ours(2) -> temporal(3) -> JSON.parse builtin(4); root -> idle(5)
    const p: CpuProfile = {
      nodes: [
        frame(1, '(root)', '', [2, 5]),
        frame(2, 'reconcile', 'file:///repo/dist/workflows/x.js', [3]),
        frame(3, 'decode', 'file:///repo/node_modules/@temporalio/common/lib/c.js', [4]),
        frame(4, 'parse', ''),
        frame(5, '(idle)', ''),
      ],
      // the delta at i+1 is the length of sample i
      samples: [2, 3, 4, 4, 5, 2],
      timeDeltas: [0, 1000, 2000, 3000, 4000, 5000],
      startTime: 0,
      endTime: 15000,
    };
    const s = summarizeProfile(p, root);
    expect(s.idleMs).toBe(5);
    // reconcile 1 ms, decode 2 ms, parse 3+4 ms; the last sample has no successor and counts nothing
    expect(s.busyMs).toBe(10);
    expect(s.byBucket).toEqual({ 'our code': 1, 'Temporal SDK': 9 });
    expect(s.topSelf[0]).toMatchObject({ fn: 'parse', bucket: 'Temporal SDK', ms: 7 });
    expect(s.topOwnInclusive).toEqual([{ fn: 'reconcile', where: 'dist/workflows/x.js:10', ms: 10 }]);
  });

  test('comparison: self and total time per function over threads, recursion counted once, and the difference', () => {
    // root -> activate(2) -> activate(3) -> decode(4); root -> idle(5)
    const thread = (decodeUs: number): CpuProfile => ({
      nodes: [
        frame(1, '(root)', '', [2, 5]),
        frame(2, 'activate', 'file:///repo/node_modules/@temporalio/worker/lib/vm.js', [3]),
        frame(3, 'activate', 'file:///repo/node_modules/@temporalio/worker/lib/vm.js', [4]),
        frame(4, 'decode', 'file:///repo/node_modules/protobufjs/src/reader.js'),
        frame(5, '(idle)', ''),
      ],
      samples: [2, 4, 5, 2],
      timeDeltas: [0, 1000, decodeUs, 7000],
      startTime: 0,
      endTime: 20000,
    });
    const times = (...threads: CpuProfile[]) => {
      const t: ProcessTimes = { busyMs: 0, byBucket: new Map(), functions: new Map() };
      for (const p of threads) addProfile(t, p, root);
      return t;
    };
    const a = times(thread(2000));
    const b = times(thread(2000), thread(5000));
    expect(a.busyMs).toBe(3);
    expect(b.busyMs).toBe(9);
    const activate = b.functions.get('activate@@temporalio/worker/lib/vm.js:10');
    expect(activate).toMatchObject({ bucket: 'Temporal SDK', selfMs: 2, totalMs: 9 });
    expect(b.byBucket.get('protobuf/gRPC')).toBe(7);
    const text = renderComparison(a, b, ['A', 'B'], 5);
    expect(text).toContain('A 0.00 s, B 0.01 s (3.00x)');
    expect(text).toContain('| decode | protobufjs/src/reader.js:10 | protobuf/gRPC | 2 | 7 | 5 |');
  });
});

test('our counters: a metric summed over its samples, or over those with one label value', () => {
  const text = [
    'kcm_api_requests_total{verb="GET",resource="pods",code="200"} 7',
    'kcm_api_requests_total{verb="POST",resource="pods",code="201"} 3',
    'kcm_api_requests_total{verb="GET",resource="deployments",code="200"} 2',
    'kcm_api_requests_total_created 99',
  ].join('\n');
  expect(sumMetric(text, 'kcm_api_requests_total')).toBe(12);
  expect(sumMetric(text, 'kcm_api_requests_total', 'verb="GET"')).toBe(9);
});

describe('reaction stages from a history', () => {
  // event types as the proto enum's numbers: 26 signaled, 6 workflow task started, 10/11 activity scheduled/started
  const ev = (type: number, at: number, activity?: string) => ({ type: String(type), at, ...(activity ? { activity } : {}) });

  test('the first signal after the trigger, the task that reads it, the named activity and its start', () => {
    const events = [
      ev(26, 90), ev(6, 95), // an earlier reaction
      ev(26, 120), ev(6, 130), ev(10, 150, 'observe'), ev(11, 155), ev(10, 170, 'createPods'), ev(11, 180),
    ];
    expect(reactionStages(events, 100, 300, 'createPods')).toEqual({ toSignal: 20, toTask: 10, toActivity: 40, activityQueue: 10, activityToSeen: 120 });
  });

  test('no stages when the history has no such chain after the trigger', () => {
    expect(reactionStages([ev(26, 120), ev(6, 130)], 100, 300, 'createPods')).toBeUndefined();
    expect(reactionStages([ev(6, 130), ev(10, 140, 'createPods'), ev(11, 150)], 100, 300, 'createPods')).toBeUndefined();
  });
});

describe('a generated docs section (the scale curve\'s, the cache cap\'s)', () => {
  const placeCurveSection = (current: string, generated: string) => placeSection(current, generated, 'Scale curve', 'Side by side');
  const doc = '# Benchmarks\n\nintro\n\n## Side by side with upstream (x)\n\ntables\n\n## Failover (by hand)\n\nkept\n';
  test('goes right after the generated side-by-side section the first time', () => {
    const once = placeCurveSection(doc, '## Scale curve (a)\n\nfirst');
    expect(once).toBe('# Benchmarks\n\nintro\n\n## Side by side with upstream (x)\n\ntables\n\n## Scale curve (a)\n\nfirst\n\n## Failover (by hand)\n\nkept\n');
  });
  test('replaces itself where it is, leaving every other section alone', () => {
    const twice = placeCurveSection(placeCurveSection(doc, '## Scale curve (a)\n\nfirst'), '## Scale curve (b)\n\nsecond');
    expect(twice).toContain('## Scale curve (b)\n\nsecond\n\n## Failover (by hand)');
    expect(twice).not.toContain('first');
    expect(twice.match(/## Scale curve/g)).toHaveLength(1);
  });
  test('the cache cap\'s goes after the curve, and the curve rewritten keeps it', () => {
    const both = placeSection(placeCurveSection(doc, '## Scale curve (a)\n\nfirst'), '## The workflow cache cap (c)\n\ncap', 'The workflow cache cap', 'Scale curve');
    expect(both).toContain('## Scale curve (a)\n\nfirst\n\n## The workflow cache cap (c)\n\ncap\n\n## Failover (by hand)');
    expect(placeCurveSection(both, '## Scale curve (b)\n\nsecond')).toContain('## Scale curve (b)\n\nsecond\n\n## The workflow cache cap (c)\n\ncap\n\n## Failover');
  });
});

describe('the replay-cost prefixes', () => {
  const T = temporal.api.enums.v1.EventType;
  const events = [T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, T.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    T.EVENT_TYPE_WORKFLOW_TASK_STARTED, T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
    .map((eventType) => ({ eventType }));
  test('end at the first completed workflow task holding at least n events', () => {
    expect(prefixAtTaskBoundary(events, 1)).toHaveLength(4);
    expect(prefixAtTaskBoundary(events, 4)).toHaveLength(4);
    expect(prefixAtTaskBoundary(events, 5)).toHaveLength(8);
  });
  test('past the last completed task, the whole history', () => {
    expect(prefixAtTaskBoundary(events, 9)).toHaveLength(9);
  });
});

describe('the memory map of a process (smaps)', () => {
  // a trimmed /proc/<pid>/smaps of a node process with worker threads: its main arena, two thread
  // arenas (64 MiB-aligned, each followed by the rest of its reservation), a V8 page, a reservation
  // that is not an arena, node's own code and the stack
  const entry = (range: string, perms: string, path: string, rss: number) =>
    `${range} ${perms} 00000000 00:00 0 ${path}\nSize:  1 kB\nRss:  ${rss} kB\nPss:  ${rss} kB\n`;
  const smaps = [
    entry('00400000-04a00000', 'r-xp', '/usr/bin/node', 40_000),
    entry('378a0000-37b6c000', 'rw-p', '[heap]', 2712),
    entry('475fa00000-475fa40000', 'rw-p', '', 240),
    entry('7f7ae8000000-7f7ae87ea000', 'rw-p', '', 8048),
    entry('7f7ae87ea000-7f7aec000000', '---p', '', 0),
    entry('7f7aec000000-7f7af0000000', 'rw-p', '', 1000),
    entry('7f7af0000000-7f7af0808000', 'rw-p', '', 300),
    entry('7f7af0808000-7f7af1000000', '---p', '', 0),
    entry('7ffd1c000000-7ffd1c021000', 'rw-p', '[stack]', 40),
  ].join('');

  test('parses every mapping with its resident size', () => {
    const maps = parseSmaps(smaps);
    expect(maps).toHaveLength(9);
    expect(maps[1]).toEqual({ start: 0x378a0000n, end: 0x37b6c000n, perms: 'rw-p', path: '[heap]', rssKiB: 2712 });
  });

  test('tells malloc\'s arenas by their aligned reservation, not by alignment alone', () => {
    expect(classify(parseSmaps(smaps))).toEqual({
      totalKiB: 40_000 + 2712 + 240 + 8048 + 1000 + 300 + 40,
      mallocMainKiB: 2712,
      // the partly grown arena and the one that fills its 64 MiB; the aligned mapping whose rest ends short of a boundary is not one
      mallocArenasKiB: 8048 + 1000,
      arenas: 2,
      fileKiB: 40_000,
      stackKiB: 40,
      otherAnonKiB: 240 + 300,
    });
  });
});
