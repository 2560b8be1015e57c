import { ApiError, KubeRest } from './rest';
import type { KubeObject } from './projections';

/**
 * Read one object through a list of its collection narrowed to its name. Upstream controllers
 * read through informers, so their roles may grant list but not get (the replicaset controller's
 * pods); reading this way works under exactly the rights they have.
 */
export async function readByName(rest: KubeRest, objectPath: string): Promise<KubeObject | undefined> {
  const cut = objectPath.lastIndexOf('/');
  const collection = objectPath.slice(0, cut);
  const name = objectPath.slice(cut + 1);
  const r = await rest.request<{ items: KubeObject[] }>('GET', `${collection}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
  return r.body.items?.[0];
}

export interface Guard {
  uid: string;
  /** the version the decision was computed from: any change since makes the write a 409 */
  resourceVersion: string;
}

/**
 * Replace an object (or its status subresource) with an update, as upstream controllers do:
 * their roles grant update, rarely patch. The body is the object with the change applied, sent
 * with the resourceVersion the decision was made at, so it never overwrites a newer object.
 * A different UID under the name is a 409 too: the caller re-observes either way. The object is
 * `base` when given (the informer cache's copy at exactly the guarded version: what a read would
 * return, as upstream writes from its informer), else a fresh read.
 */
export async function updateGuarded(
  rest: KubeRest,
  objectPath: string,
  guard: Guard,
  change: (obj: KubeObject & Record<string, unknown>) => void,
  subresource?: 'status',
  base?: KubeObject,
): Promise<KubeObject> {
  // an update sent without a version would overwrite whatever is there: never send one, look again
  if (!guard.resourceVersion) throw new ApiError(409, 'Conflict', `${objectPath}: no resourceVersion to guard the update with`);
  const current = (base as (KubeObject & Record<string, unknown>) | undefined) ?? (await rest.request<KubeObject & Record<string, unknown>>('GET', objectPath)).body;
  if (current.metadata?.uid !== guard.uid) throw new ApiError(409, 'Conflict', `${objectPath}: UID changed`);
  current.metadata = { ...current.metadata, resourceVersion: guard.resourceVersion };
  change(current);
  const r = await rest.request<KubeObject>('PUT', subresource ? `${objectPath}/${subresource}` : objectPath, { body: current });
  return r.body;
}

/** Drop undefined and null members, which an update must simply leave out. */
export function withoutEmpty<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}
