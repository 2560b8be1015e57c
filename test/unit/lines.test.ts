import { lineSplitter } from '../../activities/kube/lines';

describe('lineSplitter (watch streams)', () => {
  it('yields each complete line once, across chunk boundaries, trimmed, skipping blank ones', () => {
    const lines: string[] = [];
    const feed = lineSplitter((l) => { lines.push(l); });
    feed('{"a":1}\n{"b"');
    feed(':2}\r\n\n  \n{"c":');
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    feed('3}\n');
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('stops the chunk when the handler returns false', () => {
    const lines: string[] = [];
    const feed = lineSplitter((l) => {
      lines.push(l);
      return l === 'stop' ? false : undefined;
    });
    feed('a\nstop\nb\n');
    expect(lines).toEqual(['a', 'stop']);
  });
});
