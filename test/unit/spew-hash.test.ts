import TEMPLATES from './fixtures/pod-templates.json';
import GOLDEN from './fixtures/pod-template-hashes.json';
import { SpewUnsupported, computeTemplateHash, spewPodTemplate } from '../../workflows/common/spew';
import { daemonSetRevisionData, equalRevisions, goJson, hashRevisionData, nextRevision, revisionName, sortRevisions } from '../../workflows/common/controller-history';

/*
 * The fixtures' expected dumps and hashes were made by upstream's own code (hack/gotypes golden):
 * pkg/controller.ComputeHash of each template after the protobuf round trip
 * kube-controller-manager's objects take.
 */
describe('upstream\'s pod template hash (ComputeHash over a go-spew dump)', () => {
  test.each(TEMPLATES.map((t, i) => [i, t] as const))('template %i: the dump is go-spew\'s, byte for byte', (i, t) => {
    expect(spewPodTemplate(t)).toBe(GOLDEN[i].dump);
  });

  test.each(TEMPLATES.map((t, i) => [i, t] as const))('template %i: the hash is upstream\'s, with and without a collision count', (i, t) => {
    expect(computeTemplateHash(t)).toBe(GOLDEN[i].hash);
    expect(computeTemplateHash(t, 3)).toBe(GOLDEN[i].hashWithCollision3);
  });

  test('what cannot be reproduced is said, not guessed', () => {
    const base = TEMPLATES[0] as { metadata: object; spec: { containers: object[] } };
    const huge = { ...base, spec: { containers: [{ name: 'c', resources: { limits: { cpu: '123456789012345678901234' } } }] } };
    expect(() => computeTemplateHash(huge)).toThrow(SpewUnsupported);
    const stamped = { ...base, metadata: { creationTimestamp: '2026-01-01T00:00:00Z' } };
    expect(() => computeTemplateHash(stamped)).toThrow(SpewUnsupported);
  });
});

describe('ControllerRevision history (pkg/controller/history and the daemon controller)', () => {
  test.each(GOLDEN.map((g, i) => [i, g] as const))('template %i: a DaemonSet revision\'s data is byte for byte upstream\'s, and so is its hash', (_i, g) => {
    // the template as the API serves it: what upstream marshalled from its typed object
    const { $patch, ...template } = (JSON.parse(g.daemonSetPatch) as { spec: { template: Record<string, unknown> } }).spec.template;
    expect($patch).toBe('replace');
    expect(daemonSetRevisionData(template)).toBe(g.daemonSetPatch);
    expect(hashRevisionData(g.daemonSetPatch)).toBe(g.revisionHash);
    expect(hashRevisionData(g.daemonSetPatch, 3)).toBe(g.revisionHashProbe3);
  });

  test('names, order and numbering', () => {
    expect(revisionName('web', '5d88d9cd76')).toBe('web-5d88d9cd76');
    expect(revisionName('x'.repeat(300), 'h')).toBe(`${'x'.repeat(223)}-h`);
    const revs = [
      { name: 'b', revision: 2, creationTimestamp: '2026-01-01T00:00:02Z', data: '{}' },
      { name: 'a', revision: 2, creationTimestamp: '2026-01-01T00:00:02Z', data: '{"x":1}' },
      { name: 'c', revision: 1, creationTimestamp: '2026-01-01T00:00:09Z', data: '{}' },
    ];
    expect(sortRevisions(revs).map((r) => r.name)).toEqual(['c', 'a', 'b']);
    expect(nextRevision(revs)).toBe(3);
    expect(nextRevision([])).toBe(1);
    expect(equalRevisions(revs, '{}').map((r) => r.name)).toEqual(['b', 'c']);
  });

  test('Go\'s JSON: sorted keys by bytes, HTML and control characters escaped, numbers as float64 prints them', () => {
    expect(goJson({ b: 1, a: [true, null, 'x'], Z: { '<': '&\u2028\b\u0001' } })).toBe('{"Z":{"\\u003c":"\\u0026\\u2028\\b\\u0001"},"a":[true,null,"x"],"b":1}');
    expect(goJson([1e21, 1e-7, 0.5, 30])).toBe('[1e+21,1e-7,0.5,30]');
  });
});
