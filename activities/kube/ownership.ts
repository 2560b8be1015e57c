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
