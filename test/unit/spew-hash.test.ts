import TEMPLATES from './fixtures/pod-templates.json';
import GOLDEN from './fixtures/pod-template-hashes.json';
import { SpewUnsupported, computeTemplateHash, spewPodTemplate } from '../../workflows/common/spew';

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
