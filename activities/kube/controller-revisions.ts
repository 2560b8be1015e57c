/*
 * The ControllerRevision I/O the DaemonSet and StatefulSet controllers share (upstream's
 * pkg/controller/history): the view and field mask, paged lists and claiming of what a workload
 * may own, and the create, renumber and delete writes. Each write is safe to run twice.
 */
import type { Logger } from 'pino';
import type { FieldMask } from '../informers/fields';
import { apiCall, isStatus } from './failures';
import { heartbeat } from './heartbeat';
import { patchOwnerReferences } from './ownership';
import type { KubeObject } from './projections';
import type { KubeRest } from './rest';
import { RESOURCES, resourcePath } from './resources';
import { goJson, type ControllerRevisionView, type RevisionedWorkloadView } from '../../workflows/common/controller-history';
import { controllerRef } from '../../workflows/common/controller-ref';
import type { LabelSelector, OwnerRef } from '../../workflows/common/meta';
import { selectorMatches } from '../../workflows/common/selector';

export const revisionPath = (ns: string, name?: string) => resourcePath(RESOURCES.controllerRevisions, ns, name);

/** What controllerRevisionView reads of a ControllerRevision. */
export const CONTROLLER_REVISION_FIELDS: FieldMask = { metadata: true, data: true, revision: true };

/**
 * A ControllerRevision as the controllers read it; `refView` shapes its controller reference, and
 * `hash` (DaemonSets) adds the value of that label, when set.
 */
export function controllerRevisionView(o: KubeObject, refView: (r: OwnerRef) => OwnerRef, hash?: string): ControllerRevisionView & { hash?: string } {
  const m = o.metadata ?? {};
  const r = o as KubeObject & { data?: unknown; revision?: number };
  const ref = controllerRef(m.ownerReferences);
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    labels: m.labels ?? {},
    ...(ref ? { controllerRef: refView(ref) } : {}),
    revision: r.revision ?? 0,
    ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(hash && m.labels?.[hash] ? { hash: m.labels[hash] } : {}),
    data: goJson(r.data ?? null),
  };
}

/** The metadata and selector part of a DaemonSet's or StatefulSet's view, in the views' field order. */
export function revisionedWorkloadMeta(o: KubeObject, selector: LabelSelector | null | undefined): Pick<RevisionedWorkloadView,
  'namespace' | 'name' | 'uid' | 'annotations' | 'resourceVersion' | 'generation' | 'deleting' | 'selector'> {
  const m = o.metadata ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    ...(m.annotations && Object.keys(m.annotations).length ? { annotations: { ...m.annotations } } : {}),
    resourceVersion: m.resourceVersion ?? '',
    generation: m.generation ?? 0,
    deleting: !!m.deletionTimestamp,
    selector: selector ?? null,
  };
}

/** Every object under `path`, 500 a page, heartbeating between pages. */
export async function listAll(rest: KubeRest, path: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let cont = '';
  do {
    const page = (await rest.request<{ items: KubeObject[]; metadata: { continue?: string } }>('GET',
      `${path}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`)).body;
    items.push(...page.items);
    cont = page.metadata.continue ?? '';
    heartbeat();
  } while (cont);
  return items;
}

/** Whether a workload may claim an object: its controller is the workload, or it is an orphan the selector matches. */
export const claimableBy = (w: { uid: string; selector: LabelSelector | null }) => (o: KubeObject): boolean => {
  const ref = controllerRef(o.metadata?.ownerReferences);
  return ref ? ref.uid === w.uid : selectorMatches(w.selector, o.metadata?.labels);
};

/** Patches an object's owner references (adopt or release); the object as patched, or undefined when skipped. */
export async function patchOwners(rest: KubeRest, path: string, uid: string, change: Parameters<typeof patchOwnerReferences>[3]): Promise<KubeObject | undefined> {
  const r = await patchOwnerReferences(rest, path, uid, change);
  heartbeat();
  return 'patched' in r ? r.patched : undefined;
}

export interface RevisionToCreate {
  namespace: string;
  name: string;
  hash: string;
  /** the workload's template labels, which the revision carries with the hash label */
  templateLabels?: Record<string, string>;
  /** the workload's annotations, copied onto the revision */
  annotations?: Record<string, string>;
  owner: OwnerRef;
  /** the revision data as Go marshals it; sent byte for byte */
  data: string;
  revision: number;
}

/**
 * POSTs a ControllerRevision, labelled with `hashLabel`. When the name is taken the answer is the
 * object under it, for the caller to tell an earlier attempt of its own from a hash collision.
 */
export async function postControllerRevision(rest: KubeRest, hashLabel: string, r: RevisionToCreate): Promise<{ created: KubeObject } | { existing: KubeObject }> {
  const meta = {
    name: r.name,
    namespace: r.namespace,
    labels: { ...(r.templateLabels ?? {}), [hashLabel]: r.hash },
    ...(r.annotations ? { annotations: r.annotations } : {}),
    ownerReferences: [r.owner],
  };
  // the data goes as its own bytes: revisions are compared byte for byte
  const body = `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":${JSON.stringify(meta)},"data":${r.data},"revision":${r.revision}}`;
  try {
    return { created: (await rest.request<KubeObject>('POST', revisionPath(r.namespace), { rawBody: body })).body };
  } catch (e) {
    if (!isStatus(e, 409)) throw e;
    return { existing: (await rest.request<KubeObject>('GET', revisionPath(r.namespace, r.name))).body };
  }
}

export interface RenumberRevisionRequest {
  namespace: string;
  name: string;
  revision: number;
  reason: string;
}

/** UpdateControllerRevision: the revision takes a new number; undefined when it is gone. */
export async function renumberControllerRevision(rest: KubeRest, log: Logger, req: RenumberRevisionRequest): Promise<KubeObject | undefined> {
  const r = await rest.request<KubeObject>('PATCH', revisionPath(req.namespace, req.name), {
    contentType: 'application/merge-patch+json', body: { revision: req.revision },
  }).catch((e: unknown) => {
    if (isStatus(e, 404)) return undefined;
    throw e;
  });
  log.info({ revision: `${req.namespace}/${req.name}`, number: req.revision, reason: req.reason }, 'renumbered revision');
  return r?.body;
}

export interface RevisionWriteRequest {
  namespace: string;
  names: string[];
  reason: string;
}

/** Deletes revisions by name; one already gone is fine. */
export async function deleteControllerRevisions(rest: KubeRest, log: Logger, req: RevisionWriteRequest): Promise<void> {
  for (const name of req.names) {
    await rest.request('DELETE', revisionPath(req.namespace, name)).catch((e: unknown) => {
      if (!isStatus(e, 404)) throw e;
    });
    heartbeat();
  }
  log.info({ namespace: req.namespace, revisions: req.names, reason: req.reason }, 'deleted revisions');
}

/** The renumber and delete activities of a controller whose revisions it reads as `view`. */
export function revisionWriteActivities<V>(rest: KubeRest, log: Logger, view: (o: KubeObject) => V) {
  return {
    renumber: (req: RenumberRevisionRequest): Promise<V | undefined> => apiCall(async () => {
      const r = await renumberControllerRevision(rest, log, req);
      return r && view(r);
    }),
    remove: (req: RevisionWriteRequest): Promise<void> => apiCall(() => deleteControllerRevisions(rest, log, req)),
  };
}
