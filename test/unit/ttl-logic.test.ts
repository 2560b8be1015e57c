import { annotationSays, nextStep, ttlOfStep } from '../../workflows/ttl/logic';
import { mergeTtlEvents } from '../../workflows/ttl/workflow';

describe('the TTL step, with upstream boundaries and hysteresis', () => {
  test('up past each sizeMax', () => {
    expect(ttlOfStep(nextStep(0, 1))).toBe(0);
    expect(ttlOfStep(nextStep(0, 100))).toBe(0);
    expect(ttlOfStep(nextStep(0, 101))).toBe(15);
    expect(ttlOfStep(nextStep(0, 501))).toBe(30);
    expect(ttlOfStep(nextStep(0, 1001))).toBe(60);
    expect(ttlOfStep(nextStep(0, 2001))).toBe(300);
  });
  test('down only below each sizeMin', () => {
    expect(ttlOfStep(nextStep(1, 95))).toBe(15);
    expect(ttlOfStep(nextStep(1, 89))).toBe(0);
    expect(ttlOfStep(nextStep(2, 460))).toBe(30);
    expect(ttlOfStep(nextStep(2, 449))).toBe(15);
    expect(ttlOfStep(nextStep(4, 3))).toBe(0);
  });
  test('the annotation is compared as the integer Go parses', () => {
    expect(annotationSays('15', 15)).toBe(true);
    expect(annotationSays('+15', 15)).toBe(true);
    expect(annotationSays('15s', 15)).toBe(false);
    expect(annotationSays(null, 0)).toBe(false);
  });
  test('events merge: the latest count, node annotations by name, gone nodes dropped', () => {
    expect(mergeTtlEvents({ count: 3, nodes: [['a', '0']] }, { count: 2, nodesGone: ['a'] })).toEqual({ count: 2, nodesGone: ['a'] });
    expect(mergeTtlEvents({ nodesGone: ['a'] }, { count: 4, nodes: [['a', null]] })).toEqual({ count: 4, nodes: [['a', null]] });
  });
});
