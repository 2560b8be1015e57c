/**
 * True when resourceVersion `a` is newer than `b`. Resource versions are opaque to clients in
 * general, but etcd-backed ones are increasing integers, which is what lets us drop stale events
 * and date a cache snapshot. Anything else compares as "not newer".
 */
export function newerVersion(a: string, b: string): boolean {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) > BigInt(b);
}
