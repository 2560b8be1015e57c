import * as path from 'node:path';
import { PATH_BINARIES, pathWithBinaries } from '../../starter/local/stack';
import { cachedPath } from '../../starter/local/binaries';
import { loadVersions, temporalCliBuild } from '../../starter/local/versions';

const cache = '/home/u/.cache/temporal-kcm';
const kubectl = `${cache}/kubernetes/v1.35.4/kubectl`;
const temporal = `${cache}/temporal/v1.5.1/temporal`;

/** findOnPath over a fixed set of files instead of the disk. */
const finder = (files: string[]) => (name: string, pathVar: string) => {
  for (const dir of pathVar.split(path.delimiter)) {
    const f = path.join(dir, name);
    if (dir && files.includes(f)) return f;
  }
  return undefined;
};

describe('local env PATH', () => {
  test("puts the stack's kubectl and temporal directories first", () => {
    expect(pathWithBinaries([kubectl, temporal], '/usr/local/bin:/usr/bin', finder([kubectl, temporal])))
      .toBe(`${cache}/kubernetes/v1.35.4:${cache}/temporal/v1.5.1:/usr/local/bin:/usr/bin`);
  });

  test('even ahead of another kubectl on PATH', () => {
    expect(pathWithBinaries([kubectl], '/usr/bin', finder([kubectl, '/usr/bin/kubectl'])))
      .toBe(`${cache}/kubernetes/v1.35.4:/usr/bin`);
  });

  test('adds nothing for binaries PATH already finds first, so a second eval changes nothing', () => {
    const once = pathWithBinaries([kubectl, temporal], '/usr/bin', finder([kubectl, temporal]))!;
    expect(pathWithBinaries([kubectl, temporal], once, finder([kubectl, temporal]))).toBeUndefined();
    // a binary found on PATH (no cached build) is what PATH runs already: PATH is left in its order
    expect(pathWithBinaries(['/usr/bin/kubectl'], '/usr/local/bin:/usr/bin', finder(['/usr/bin/kubectl']))).toBeUndefined();
  });

  test("drops what npx prepended for this process, so it does not leak into the user's shell", () => {
    const npx = [
      '/work/main/node_modules/.bin', '/work/node_modules/.bin', '/node_modules/.bin',
      '/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin',
      '/usr/local/bin', '/usr/bin',
    ].join(':');
    expect(pathWithBinaries([kubectl], npx, finder([kubectl]))).toBe(`${cache}/kubernetes/v1.35.4:/usr/local/bin:/usr/bin`);
    // the user's own node_modules/.bin after npm's block stays
    expect(pathWithBinaries([kubectl], `/x/node-gyp-bin:/home/u/proj/node_modules/.bin:/usr/bin`, finder([kubectl])))
      .toBe(`${cache}/kubernetes/v1.35.4:/home/u/proj/node_modules/.bin:/usr/bin`);
  });

  test('one directory once; a directory with the PATH delimiter in it cannot go on PATH', () => {
    expect(pathWithBinaries(['/opt/k/kubectl', '/opt/k/temporal'], '/usr/bin', finder([]))).toBe('/opt/k:/usr/bin');
    expect(pathWithBinaries(['/opt/a:b/kubectl'], '/usr/bin', finder([]))).toBeUndefined();
  });

  test("the directories are binaries.ts's cache paths", () => {
    const v = loadVersions();
    const bins = PATH_BINARIES.map((b) => cachedPath(b, v));
    const out = pathWithBinaries(bins, '/usr/bin', finder(bins))!;
    expect(out.split(':').slice(0, 2)).toEqual([path.dirname(cachedPath('kubectl', v)), path.dirname(cachedPath('temporal', v))]);
    expect(out).toContain(path.join('kubernetes', v.kubernetes));
    expect(out).toContain(path.join('temporal', temporalCliBuild(v)));
  });
});
