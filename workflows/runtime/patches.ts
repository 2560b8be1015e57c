import { deprecatePatch, patched } from '@temporalio/workflow';

/*
 * The ledger of every patch a workflow asks about, and the only place that calls the SDK's
 * patched() and deprecatePatch(). A patch lives through three releases at least: it is added
 * (old histories replay the old branch, new runs record a marker), then deprecated once no run of
 * a build without it can still be open (the old branch is gone, new runs record a deprecated
 * marker, which the SDK ignores when the call is later removed), then removed once no run with its
 * plain marker can still be open. docs/ARCHITECTURE.md, "Patch policy", says when that is;
 * test/unit/patches.test.ts holds each release to it.
 */

/** Releases, oldest first. The last is this build's (package.json's version). */
export const RELEASES = ['0.1.0'] as const;
export type Release = (typeof RELEASES)[number];

interface LivePatch {
  added: Release;
}
interface DeprecatedPatch extends LivePatch {
  deprecated: Release;
}

export const PATCHES = {
  'continue-as-new-escapes-loop': { added: '0.1.0' },
  'continue-as-new-in-timer-task': { added: '0.1.0' },
  'controller-task-queue': { added: '0.1.0' },
  'deployment-deletion-reads-api': { added: '0.1.0' },
  'deployment-from-cache': { added: '0.1.0' },
  'early-timer-no-resync': { added: '0.1.0' },
  'eviction-burst-per-wake': { added: '0.1.0' },
  'finish-clears-last-error': { added: '0.1.0' },
  'forbidden-reported': { added: '0.1.0' },
  'gc-actions-in-one-activity': { added: '0.1.0' },
  'gc-drains-before-finish': { added: '0.1.0' },
  'history-bytes-bound': { added: '0.1.0' },
  'history-ceiling-carries': { added: '0.1.0' },
  'idle-continue-as-new': { added: '0.1.0' },
  'kept-wake-timers': { added: '0.1.0' },
  'last-error-published': { added: '0.1.0' },
  'local-io': { added: '0.1.0' },
  'node-events-in-background': { added: '0.1.0' },
  'node-health-in-parallel': { added: '0.1.0' },
  'node-unknown-in-one-call': { added: '0.1.0' },
  'pod-seq-follows-names': { added: '0.1.0' },
  'publish-uid': { added: '0.1.0' },
  'resync-rereads': { added: '0.1.0' },
  'pv-binder-drains-before-finish': { added: '0.1.0' },
  'pv-expander-lingers': { added: '0.1.0' },
  'run-age-bound': { added: '0.1.0' },
  'settled-continue-as-new': { added: '0.1.0' },
  'shadow-rereads': { added: '0.1.0' },
  'slow-start-in-one-call': { added: '0.1.0' },
  'thrown-reported': { added: '0.1.0' },
  'upstream-template-hash': { added: '0.1.0' },
} as const satisfies Record<string, LivePatch | DeprecatedPatch>;

/** Patches whose calls are gone from the code: kept so that no ID is ever used twice. */
export const REMOVED_PATCHES: Record<string, DeprecatedPatch & { removed: Release }> = {};

type PatchEntries = typeof PATCHES;
export type LivePatchId = { [K in keyof PatchEntries]: PatchEntries[K] extends { deprecated: string } ? never : K }[keyof PatchEntries];
export type DeprecatedPatchId = Exclude<keyof PatchEntries, LivePatchId>;

/** Does this run take the patch's new branch? (The SDK's patched(), for a patch in the ledger.) */
export function isPatched(id: LivePatchId): boolean {
  return patched(id);
}

/** Where a deprecated patch's isPatched() was: old runs' markers still replay, new runs record a deprecated one. */
export function deprecatedPatch(id: DeprecatedPatchId): void {
  deprecatePatch(id);
}

export interface PatchLedger {
  releases: readonly string[];
  patches: Readonly<Record<string, { added: string; deprecated?: string }>>;
  removed: Readonly<Record<string, { added: string; deprecated: string; removed: string }>>;
}

/**
 * What breaks the patch policy in a ledger, for the release `current` (pure; the unit test runs it
 * on PATCHES). A patch may be deprecated from the release after the one that added it, and must be
 * by the second after; it may be removed from the release after the one that deprecated it, and
 * must be by the second after. Upgrades go one release at a time, each after the last has run
 * --max-run-age everywhere, so in release N no run is open that a build before N-1 started.
 */
export function patchPolicyProblems(ledger: PatchLedger, current: string): string[] {
  const at = (r: string) => ledger.releases.indexOf(r);
  const now = at(current);
  const problems: string[] = [];
  if (now < 0) return [`release ${current} is not in the ledger's releases (${ledger.releases.join(', ')})`];
  if (now !== ledger.releases.length - 1) problems.push(`release ${current} is not the ledger's last (${ledger.releases[ledger.releases.length - 1]})`);
  const known = (id: string, stage: string, r: string) => {
    if (at(r) < 0) problems.push(`${id}: ${stage} in ${r}, which is not a release`);
    else if (at(r) > now) problems.push(`${id}: ${stage} in ${r}, after this release ${current}`);
    return at(r);
  };
  for (const [id, p] of Object.entries(ledger.patches)) {
    const added = known(id, 'added', p.added);
    if (p.deprecated === undefined) {
      if (added >= 0 && now - added >= 2) problems.push(`${id}: added in ${p.added}, so release ${current} must deprecate it (deprecatePatch)`);
      continue;
    }
    const deprecated = known(id, 'deprecated', p.deprecated);
    if (deprecated >= 0 && deprecated <= added) problems.push(`${id}: deprecated in ${p.deprecated}, not after ${p.added}, which added it: runs of builds without it may be open`);
    if (deprecated >= 0 && now - deprecated >= 2) problems.push(`${id}: deprecated in ${p.deprecated}, so release ${current} must remove it`);
  }
  for (const [id, p] of Object.entries(ledger.removed)) {
    if (id in ledger.patches) problems.push(`${id}: both removed and in use`);
    const added = known(id, 'added', p.added);
    const deprecated = known(id, 'deprecated', p.deprecated);
    const removed = known(id, 'removed', p.removed);
    if (deprecated <= added) problems.push(`${id}: deprecated in ${p.deprecated}, not after ${p.added}`);
    if (removed <= deprecated) problems.push(`${id}: removed in ${p.removed}, not after ${p.deprecated}, which deprecated it: runs with its marker may be open`);
  }
  return problems;
}
