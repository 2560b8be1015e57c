/**
 * The controllers this build implements, by upstream's canonical --controllers name. The short
 * name is the first segment of their workflow IDs (`replicaset/<ns>/<name>`) and the value of
 * the KcmController search attribute.
 */
export const IMPLEMENTED_CONTROLLERS = {
  'replicaset-controller': { short: 'replicaset' },
  'replicationcontroller-controller': { short: 'replicationcontroller' },
  'deployment-controller': { short: 'deployment' },
  'garbage-collector-controller': { short: 'garbagecollector' },
} as const;

export type ImplementedController = keyof typeof IMPLEMENTED_CONTROLLERS;

export function implementedOf(enabled: Iterable<string>): ImplementedController[] {
  return [...enabled].filter((c): c is ImplementedController => c in IMPLEMENTED_CONTROLLERS);
}

export function notImplemented(enabled: Iterable<string>): string[] {
  return [...enabled].filter((c) => !(c in IMPLEMENTED_CONTROLLERS)).sort();
}
