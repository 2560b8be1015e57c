import type { OwnerRef } from '../../workflows/common/meta';
import { isStatus } from './failures';
import type { KubeObject } from './projections';
import type { KubeRest } from './rest';
import { readByName } from './update';

export type PatchOutcome = { patched: KubeObject } | { skipped: true };

/**
 * Change an object's ownerReferences with a merge patch guarded by the UID and resourceVersion
 * just read: a concurrent change (or a new object under the same name) makes the caller
 * re-observe instead of overwriting it. `change` returns undefined when there is nothing to do.
 */
export async function patchOwnerReferences(
  rest: KubeRest,
  path: string,
  uid: string,
  change: (refs: OwnerRef[]) => OwnerRef[] | undefined,
): Promise<PatchOutcome> {
  try {
    const meta = (await readByName(rest, path))?.metadata ?? {};
    const next = meta.uid === uid && !meta.deletionTimestamp ? change(meta.ownerReferences ?? []) : undefined;
    if (!next) return { skipped: true };
    const r = await rest.request<KubeObject>('PATCH', path, {
      body: { metadata: { uid, resourceVersion: meta.resourceVersion, ownerReferences: next } },
      contentType: 'application/merge-patch+json',
    });
    return { patched: r.body };
  } catch (e) {
    if (isStatus(e, 404, 409, 422)) return { skipped: true };
    throw e;
  }
}

/** Add `ref` as controller unless something already controls the object. */
export const adoptBy = (ref: OwnerRef) => (refs: OwnerRef[]) => (refs.some((r) => r.controller) ? undefined : [...refs, ref]);

/** Remove the reference to `ownerUid`, if present. */
export const releaseFrom = (ownerUid: string) => (refs: OwnerRef[]) =>
  refs.some((r) => r.uid === ownerUid) ? refs.filter((r) => r.uid !== ownerUid) : undefined;

/** How removing one owner reference from a dependent ended. */
export type OrphanOutcome = 'removed' | 'gone' | 'conflict';

/** JSON merge patches retried on a conflict before giving up (custom resources only). */
const ORPHAN_MERGE_ATTEMPTS = 5;

/**
 * Removes the reference to `ownerUid` from the dependent at `path` (UID `uid`), as the garbage
 * collector's orphaning must: certain to have happened when it returns `removed` or `gone`.
 * A strategic merge patch deletes the one reference by UID without a resourceVersion, so the
 * dependent's own controller updating it at the same moment cannot make it fail; a dependent
 * whose UID no longer matches (409 on the UID precondition) or that is gone needs nothing.
 * Custom resources take no strategic merge patch (415): they get a merge patch of the whole list
 * guarded by the resourceVersion just read, retried on fresh data after a conflict, and
 * `conflict` if it still loses. Any other failure throws.
 */
export async function removeOwnerReference(rest: KubeRest, path: string, uid: string, ownerUid: string): Promise<OrphanOutcome> {
  try {
    await rest.request('PATCH', path, {
      body: { metadata: { uid, ownerReferences: [{ $patch: 'delete', uid: ownerUid }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    return 'removed';
  } catch (e) {
    if (isStatus(e, 404, 409)) return 'gone';
    if (!isStatus(e, 415)) throw e;
  }
  for (let attempt = 0; attempt < ORPHAN_MERGE_ATTEMPTS; attempt++) {
    try {
      const meta = (await readByName(rest, path))?.metadata;
      if (!meta || meta.uid !== uid) return 'gone';
      const refs = meta.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === ownerUid)) return 'removed';
      await rest.request('PATCH', path, {
        body: { metadata: { uid, resourceVersion: meta.resourceVersion, ownerReferences: refs.filter((r) => r.uid !== ownerUid) } },
        contentType: 'application/merge-patch+json',
      });
      return 'removed';
    } catch (e) {
      if (isStatus(e, 404)) return 'gone';
      if (!isStatus(e, 409)) throw e;
    }
  }
  return 'conflict';
}
