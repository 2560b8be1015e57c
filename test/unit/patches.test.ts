import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PATCHES, RELEASES, REMOVED_PATCHES, patchPolicyProblems, type PatchLedger } from '../../workflows/runtime/patches';

/*
 * The patch ledger (workflows/runtime/patches.ts) against the code and the policy in
 * docs/ARCHITECTURE.md ("Patch policy"): every patch a workflow asks about is in it, in the stage
 * the release it was added in allows.
 */

const root = join(__dirname, '../..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

const ledgerFile = join(root, 'workflows/runtime/patches.ts');
const workflowSources = sources(join(root, 'workflows'))
  .filter((f) => f !== ledgerFile)
  .map((f) => ({ file: relative(root, f), text: readFileSync(f, 'utf8') }));

describe('the patch ledger', () => {
  test('its last release is this build\'s version', () => {
    expect(RELEASES[RELEASES.length - 1]).toBe(version);
  });

  test('the real ledger keeps the policy', () => {
    expect(patchPolicyProblems({ releases: RELEASES, patches: PATCHES, removed: REMOVED_PATCHES }, version)).toEqual([]);
  });

  test('no workflow calls the SDK\'s patched() or deprecatePatch() but through the ledger', () => {
    const direct = workflowSources.filter(({ text }) => /import\s*\{[^}]*\b(patched|deprecatePatch)\b[^}]*\}\s*from\s*'@temporalio\/workflow'/.test(text));
    expect(direct.map((s) => s.file)).toEqual([]);
  });

  test('every patch in use is asked about in the code, by the call its stage allows, and no removed one is', () => {
    const code = workflowSources.map((s) => s.text).join('\n');
    for (const [id, p] of Object.entries(PATCHES)) {
      const call = 'deprecated' in p ? 'deprecatedPatch' : 'isPatched';
      expect({ id, asked: code.includes(`${call}('${id}')`) }).toEqual({ id, asked: true });
    }
    for (const id of Object.keys(REMOVED_PATCHES)) expect({ id, mentioned: code.includes(`'${id}'`) }).toEqual({ id, mentioned: false });
  });
});

describe('patchPolicyProblems', () => {
  const releases = ['0.1.0', '0.2.0', '0.3.0', '0.4.0'];
  const ledger = (patches: PatchLedger['patches'], removed: PatchLedger['removed'] = {}): PatchLedger => ({ releases, patches, removed });
  /** the ledger as release `current` has it: its releases end there */
  const check = (l: PatchLedger, current: string) => patchPolicyProblems({ ...l, releases: l.releases.slice(0, l.releases.indexOf(current) + 1 || undefined) }, current);

  test('a patch may wait one release for its deprecation, not two', () => {
    expect(check(ledger({ p: { added: '0.1.0' } }), '0.2.0')).toEqual([]);
    expect(check(ledger({ p: { added: '0.1.0' } }), '0.3.0')).toEqual(['p: added in 0.1.0, so release 0.3.0 must deprecate it (deprecatePatch)']);
  });

  test('a patch is deprecated only in a release after the one that added it', () => {
    expect(check(ledger({ p: { added: '0.2.0', deprecated: '0.2.0' } }), '0.2.0')).toEqual([
      'p: deprecated in 0.2.0, not after 0.2.0, which added it: runs of builds without it may be open',
    ]);
    expect(check(ledger({ p: { added: '0.1.0', deprecated: '0.2.0' } }), '0.3.0')).toEqual([]);
    expect(check(ledger({ p: { added: '0.1.0', deprecated: '0.2.0' } }), '0.4.0')).toEqual(['p: deprecated in 0.2.0, so release 0.4.0 must remove it']);
  });

  test('a patch is removed only in a release after the one that deprecated it', () => {
    expect(check(ledger({}, { p: { added: '0.1.0', deprecated: '0.2.0', removed: '0.3.0' } }), '0.3.0')).toEqual([]);
    expect(check(ledger({}, { p: { added: '0.1.0', deprecated: '0.2.0', removed: '0.2.0' } }), '0.2.0')).toEqual([
      'p: removed in 0.2.0, not after 0.2.0, which deprecated it: runs with its marker may be open',
    ]);
  });

  test('a stage in an unknown or later release, and a version not the last release, are refused', () => {
    expect(check(ledger({ p: { added: '0.9.0' } }), '0.4.0')).toEqual(['p: added in 0.9.0, which is not a release']);
    expect(patchPolicyProblems(ledger({ p: { added: '0.3.0' } }), '0.2.0')).toEqual([
      'release 0.2.0 is not the ledger\'s last (0.4.0)',
      'p: added in 0.3.0, after this release 0.2.0',
    ]);
    expect(check(ledger({}), '1.0.0')).toEqual(['release 1.0.0 is not in the ledger\'s releases (0.1.0, 0.2.0, 0.3.0, 0.4.0)']);
  });

  test('an ID is never both removed and in use', () => {
    expect(check(ledger({ p: { added: '0.3.0' } }, { p: { added: '0.1.0', deprecated: '0.2.0', removed: '0.3.0' } }), '0.4.0')).toEqual(['p: both removed and in use']);
  });
});
