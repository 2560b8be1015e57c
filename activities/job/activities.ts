import type { Logger } from 'pino';
import { heartbeat } from '../kube/heartbeat';
import { selectorError } from '../../workflows/common/selector';
import {
  JOB_COMPLETION_INDEX,
  JOB_INDEX_FAILURE_COUNT,
  JOB_INDEX_IGNORED_FAILURE_COUNT,
  JOB_TRACKING_FINALIZER,
  type JobStatus,
} from '../../workflows/job/api';
import type { JobEventRecord } from '../../workflows/job/logic';
import type { JobPod, JobView } from '../../workflows/job/types';
import type { OwnerRef } from '../../workflows/common/meta';
import type { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, asActivityFailure, isStatus } from '../kube/failures';
import { jobPod, jobView } from './projections';
import type { KubeObject } from '../kube/projections';
import { claimDecision, controllerRef } from '../../workflows/common/controller-ref';
import { readByName, updateGuarded, withoutEmpty } from '../kube/update';
import { isJobRef, orphanVerdict } from '../../workflows/job/orphans';
import { ApiError, type KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

export const JOB_COMPONENT = 'job-controller';
const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

export interface JobKey {
  namespace: string;
  name: string;
}

/** The Job a write is for: its identity, and the version a status write was computed from. */
export interface JobRef {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
}

export interface JobObservation {
  /** absent when the Job no longer exists */
  job?: JobView;
  /** the pods the Job controls after adoption and release, in any state */
  pods: JobPod[];
}

export interface JobPodRef {
  name: string;
  uid: string;
}

export interface JobPodWriteFailure {
  name: string;
  status: number;
  reason: string;
  message: string;
}

export interface JobPodToCreate {
  name: string;
  /** Indexed Jobs: the completion index */
  index?: number;
  failureCount?: number;
  ignoredFailureCount?: number;
}

export interface CreateJobPodsRequest {
  job: JobRef;
  pods: JobPodToCreate[];
  reason: string;
}

export interface CreateJobPodsResult {
  created: JobPod[];
  failed: JobPodWriteFailure[];
  /** the Job is gone or was replaced: nothing was created */
  jobGone?: boolean;
}

export interface DeleteJobPodsRequest {
  job: JobRef;
  pods: JobPodRef[];
  /** strip the tracking finalizer before deleting (suspend, excess pods), as upstream's deleteJobPods */
  removeFinalizer: boolean;
  reason: string;
}

export interface PodAfterWrite {
  uid: string;
  /** the pod as the API returned it, when it still exists (terminating) */
  pod?: JobPod;
}

export interface DeleteJobPodsResult {
  deleted: PodAfterWrite[];
  failed: JobPodWriteFailure[];
}

export interface RemoveFinalizersRequest {
  job: JobRef;
  pods: JobPodRef[];
  reason: string;
}

export interface RemoveFinalizersResult {
  /** pods that no longer hold the finalizer (gone ones included) */
  removed: PodAfterWrite[];
  failed: JobPodWriteFailure[];
}

export interface UpdateJobStatusRequest {
  job: JobRef;
  status: JobStatus;
  /** Job events to record once the write lands (Completed, BackoffLimitExceeded, Suspended, ...) */
  events: JobEventRecord[];
  reason: string;
}

export type UpdateJobStatusResult = { updated: true; resourceVersion: string } | { updated: false; reason: 'Conflict' | 'NotFound' };

export interface ReleaseJobPodsRequest {
  namespace: string;
  jobUid: string;
  reason: string;
}

export interface ReleaseOrphanPodRequest {
  namespace: string;
  /** the pod's name and UID */
  name: string;
  uid: string;
  /** why the watch thought it orphaned */
  reason: string;
}

export interface ReleaseOrphanPodResult {
  /** released: the finalizer is off; kept: a live Job (or another owner) holds it; gone or changed: nothing written */
  outcome: 'released' | 'kept' | 'gone' | 'changed';
  why: string;
}

export interface JobActivityDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

const jobPath = (ns: string, name?: string) => resourcePath(RESOURCES.jobs, ns, name);
const podPath = (ns: string, name?: string) => resourcePath(RESOURCES.pods, ns, name);

function target(job: { namespace: string; name: string; uid: string; resourceVersion?: string }): EventTarget {
  return { apiVersion: 'batch/v1', kind: 'Job', namespace: job.namespace, name: job.name, uid: job.uid, resourceVersion: job.resourceVersion };
}


function failure(name: string, e: unknown): JobPodWriteFailure {
  if (e instanceof ApiError) return { name, status: e.status, reason: e.reason, message: e.serverMessage };
  return { name, status: 0, reason: 'Unknown', message: String(e) };
}

/**
 * One write per item, in parallel. A rejection is that item's own failure; a transient error
 * fails the activity so Temporal retries it, safe because every write here is idempotent.
 */
async function perItem<T>(items: T[], nameOf: (t: T) => string, write: (t: T) => Promise<void>): Promise<JobPodWriteFailure[]> {
  const failed: JobPodWriteFailure[] = [];
  let transient: ApiError | undefined;
  await Promise.all(items.map(async (t) => {
    try {
      await write(t);
    } catch (e) {
      if (e instanceof ApiError && e.transient) transient = e;
      else failed.push(failure(nameOf(t), e));
    } finally {
      heartbeat();
    }
  }));
  if (transient) throw asActivityFailure(transient);
  return failed;
}

function cloneJson<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

interface ContainerJson {
  name: string;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  [k: string]: unknown;
}

/** Every container learns its index from the pod's label through the downward API, as upstream adds it. */
function addCompletionIndexEnv(c: ContainerJson): void {
  if ((c.env ?? []).some((e) => e.name === COMPLETION_INDEX_ENV)) return;
  c.env = [...(c.env ?? []), { name: COMPLETION_INDEX_ENV, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${JOB_COMPLETION_INDEX}']` } } }];
}

interface JobJson extends KubeObject {
  spec?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; finalizers?: string[] }; spec?: Record<string, unknown> } } & Record<string, unknown>;
}

/** The pod upstream's manageJob builds from spec.template, with a fixed name instead of generateName. */
export function jobPodManifest(job: JobJson, p: JobPodToCreate): Record<string, unknown> {
  const tmpl = job.spec?.template ?? {};
  const meta = tmpl.metadata ?? {};
  const spec = cloneJson(tmpl.spec ?? {}) as Record<string, unknown> & { containers?: ContainerJson[]; initContainers?: ContainerJson[] };
  const labels: Record<string, string> = { ...(meta.labels ?? {}) };
  const annotations: Record<string, string> = { ...(meta.annotations ?? {}) };
  const finalizers = [...(meta.finalizers ?? [])];
  if (!finalizers.includes(JOB_TRACKING_FINALIZER)) finalizers.push(JOB_TRACKING_FINALIZER);
  if (p.index !== undefined) {
    for (const c of spec.initContainers ?? []) addCompletionIndexEnv(c);
    for (const c of spec.containers ?? []) addCompletionIndexEnv(c);
    annotations[JOB_COMPLETION_INDEX] = String(p.index);
    labels[JOB_COMPLETION_INDEX] = String(p.index);
    spec.hostname = `${job.metadata?.name}-${p.index}`;
    if (p.failureCount !== undefined) annotations[JOB_INDEX_FAILURE_COUNT] = String(p.failureCount);
    if (p.ignoredFailureCount !== undefined && p.ignoredFailureCount > 0) annotations[JOB_INDEX_IGNORED_FAILURE_COUNT] = String(p.ignoredFailureCount);
  }
  const m = job.metadata ?? {};
  const owner: OwnerRef = { apiVersion: 'batch/v1', kind: 'Job', name: m.name ?? '', uid: m.uid ?? '', controller: true, blockOwnerDeletion: true };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: withoutEmpty({
      name: p.name,
      namespace: m.namespace,
      labels: Object.keys(labels).length ? labels : undefined,
      annotations: Object.keys(annotations).length ? annotations : undefined,
      finalizers,
      ownerReferences: [owner],
    }),
    spec,
  };
}

/**
 * The strategic-merge patch upstream sends to drop only the tracking finalizer; the UID guards
 * against a namesake, and a resourceVersion, when given, against any change since it was read.
 */
function removeFinalizerPatch(uid: string, resourceVersion?: string) {
  return { metadata: { uid, ...(resourceVersion ? { resourceVersion } : {}), '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER] } };
}

/** The I/O of the job controller; every write is safe to run twice. */
export function createJobActivities(deps: JobActivityDeps) {
  const { rest, logger, recordEvent } = deps;

  async function readJob(key: JobKey): Promise<JobJson | undefined> {
    try {
      return (await rest.request<JobJson>('GET', jobPath(key.namespace, key.name))).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  async function listPods(namespace: string): Promise<KubeObject[]> {
    const items: KubeObject[] = [];
    let cont = '';
    do {
      const page = await rest.request<{ items: KubeObject[]; metadata: { continue?: string } }>(
        'GET', `${podPath(namespace)}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      items.push(...page.body.items);
      cont = page.body.metadata.continue ?? '';
      heartbeat();
    } while (cont);
    return items;
  }

  /** Drop the tracking finalizer; gone (or replaced under the name, or changed since `resourceVersion`) counts as done. */
  async function unfinalize(namespace: string, p: JobPodRef, resourceVersion?: string): Promise<PodAfterWrite> {
    try {
      const r = await rest.request<KubeObject>('PATCH', podPath(namespace, p.name), {
        body: removeFinalizerPatch(p.uid, resourceVersion),
        contentType: 'application/strategic-merge-patch+json',
      });
      return { uid: p.uid, pod: jobPod(r.body) };
    } catch (e) {
      if (isStatus(e, 404, 409)) return { uid: p.uid };
      throw e;
    }
  }

  /**
   * Guarded merge patch of a pod's ownerReferences and finalizers (adopt / release), at the
   * resourceVersion just listed: a concurrent change makes it a no-op, seen again next sync.
   */
  async function patchOwnership(o: KubeObject & { metadata: { finalizers?: string[] } }, refs: OwnerRef[], finalizers: string[]): Promise<KubeObject | undefined> {
    const m = o.metadata;
    try {
      const r = await rest.request<KubeObject>('PATCH', podPath(m.namespace ?? '', m.name), {
        body: { metadata: { uid: m.uid, resourceVersion: m.resourceVersion, ownerReferences: refs, finalizers } },
        contentType: 'application/merge-patch+json',
      });
      return r.body;
    } catch (e) {
      if (isStatus(e, 404, 409, 422)) return undefined;
      throw e;
    }
  }

  return {
    /**
     * Read the Job and the pods it controls, straight from the API. Like upstream's getPodsForJob:
     * orphans its selector matches are adopted (controller reference plus tracking finalizer) and
     * pods it controls that no longer match are released (both removed), unless the Job is being
     * deleted.
     */
    async observeJob(key: JobKey): Promise<JobObservation> {
      return apiCall(async () => {
        const obj = await readJob(key);
        if (!obj) return { pods: [] };
        const job = jobView(obj);
        if (selectorError(job.selector) !== undefined) return { job, pods: [] };
        const owner: OwnerRef = { apiVersion: 'batch/v1', kind: 'Job', name: job.name, uid: job.uid, controller: true, blockOwnerDeletion: true };
        const pods: JobPod[] = [];
        let adopted = 0;
        let released = 0;
        for (const raw of await listPods(key.namespace)) {
          const o = raw as KubeObject & { metadata: { finalizers?: string[] } };
          const meta = o.metadata ?? {};
          const decision = claimDecision(job, {
            namespace: meta.namespace ?? key.namespace,
            labels: meta.labels,
            ownerReferences: meta.ownerReferences,
            deletionTimestamp: meta.deletionTimestamp,
          });
          if (decision === 'owned') {
            pods.push(jobPod(o));
          } else if (decision === 'release') {
            const after = await patchOwnership(o,
              (meta.ownerReferences ?? []).filter((r) => r.uid !== job.uid),
              (meta.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER));
            if (after) released++;
            else pods.push(jobPod(o));
            heartbeat();
          } else if (decision === 'adopt') {
            const finalizers = meta.finalizers ?? [];
            const after = await patchOwnership(o, [...(meta.ownerReferences ?? []), owner],
              finalizers.includes(JOB_TRACKING_FINALIZER) ? finalizers : [...finalizers, JOB_TRACKING_FINALIZER]);
            if (after) {
              adopted++;
              pods.push(jobPod(after));
            }
            heartbeat();
          }
        }
        if (adopted || released) logger.info({ controller: 'job', key: `${key.namespace}/${key.name}`, adopted, released }, 'claimed pods');
        return { job, pods };
      });
    },

    /**
     * Create pods from the Job's template, read live (the template never enters workflow history),
     * with the given deterministic names. A name that already exists and is ours counts as created.
     */
    async createJobPods(req: CreateJobPodsRequest): Promise<CreateJobPodsResult> {
      return apiCall(async () => {
        const job = await readJob(req.job);
        if (!job || job.metadata?.uid !== req.job.uid) return { created: [], failed: [], jobGone: true };
        const created: JobPod[] = [];
        const ns = req.job.namespace;
        const failed = await perItem(req.pods, (p) => p.name, async (p) => {
          try {
            // deterministic names: a retried POST the server took the first time answers 409, read below as ours
            const r = await rest.request<KubeObject>('POST', podPath(ns), { body: jobPodManifest(job, p), idempotent: true });
            created.push(jobPod(r.body));
            recordEvent(JOB_COMPONENT, target(req.job), 'Normal', 'SuccessfulCreate', `Created pod: ${p.name}`);
          } catch (e) {
            if (isStatus(e, 409)) {
              const found = await readByName(rest, podPath(ns, p.name));
              if (found && controllerRef(found.metadata?.ownerReferences)?.uid === req.job.uid) {
                created.push(jobPod(found));
                return;
              }
            }
            if (!(e instanceof ApiError && e.transient)) {
              recordEvent(JOB_COMPONENT, target(req.job), 'Warning', 'FailedCreate', `Error creating: ${e instanceof ApiError ? e.serverMessage : String(e)}`);
            }
            throw e;
          }
        });
        logger.info({ controller: 'job', key: `${ns}/${req.job.name}`, reason: req.reason, want: req.pods.length, created: created.length, failed: failed.length, firstError: failed[0]?.message }, 'created pods');
        return { created, failed };
      });
    },

    /** Delete pods by name with a UID precondition; gone or replaced counts as deleted. */
    async deleteJobPods(req: DeleteJobPodsRequest): Promise<DeleteJobPodsResult> {
      return apiCall(async () => {
        const ns = req.job.namespace;
        const deleted: PodAfterWrite[] = [];
        const failed = await perItem(req.pods, (p) => p.name, async (p) => {
          try {
            if (req.removeFinalizer) await unfinalize(ns, p);
            const r = await rest.request<KubeObject>('DELETE', podPath(ns, p.name), { body: { preconditions: { uid: p.uid } }, idempotent: true });
            const after = r.body?.kind === 'Pod' && r.body.metadata?.deletionTimestamp ? jobPod(r.body) : undefined;
            deleted.push({ uid: p.uid, ...(after ? { pod: after } : {}) });
            recordEvent(JOB_COMPONENT, target(req.job), 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.name}`);
          } catch (e) {
            if (isStatus(e, 404, 409)) {
              deleted.push({ uid: p.uid });
              return;
            }
            if (!(e instanceof ApiError && e.transient)) {
              recordEvent(JOB_COMPONENT, target(req.job), 'Warning', 'FailedDelete', `Error deleting: ${e instanceof ApiError ? e.serverMessage : String(e)}`);
            }
            throw e;
          }
        });
        logger.info({ controller: 'job', key: `${ns}/${req.job.name}`, reason: req.reason, want: req.pods.length, deleted: deleted.length, failed: failed.length }, 'deleted pods');
        return { deleted, failed };
      });
    },

    /** Drop the tracking finalizer from pods the Job has counted (or will never count). */
    async removeTrackingFinalizers(req: RemoveFinalizersRequest): Promise<RemoveFinalizersResult> {
      return apiCall(async () => {
        const removed: PodAfterWrite[] = [];
        const failed = await perItem(req.pods, (p) => p.name, async (p) => {
          removed.push(await unfinalize(req.job.namespace, p));
        });
        logger.info({ controller: 'job', key: `${req.job.namespace}/${req.job.name}`, reason: req.reason, removed: removed.length, failed: failed.length }, 'removed tracking finalizers');
        return { removed, failed };
      });
    },

    /**
     * Release every pod still holding the tracking finalizer for a Job that is gone (or finished),
     * as upstream's orphan-pod worker does, so nothing is left undeletable.
     */
    async releaseJobPods(req: ReleaseJobPodsRequest): Promise<{ released: number }> {
      return apiCall(async () => {
        const held = (await listPods(req.namespace))
          .map(jobPod)
          .filter((p) => p.hasTrackingFinalizer && controllerRef(p.ownerReferences)?.uid === req.jobUid);
        const failed = await perItem(held, (p) => p.name, async (p) => {
          await unfinalize(req.namespace, p);
        });
        if (held.length) logger.info({ controller: 'job', namespace: req.namespace, jobUid: req.jobUid, reason: req.reason, released: held.length - failed.length }, 'released pods');
        if (failed.length) throw new Error(`could not release ${failed.length} pods: ${failed[0].message}`);
        return { released: held.length };
      });
    },

    /**
     * Upstream's orphan-pod worker for one pod: read the pod and the Job its controller reference
     * names afresh (the watch's cache may lag), and drop the tracking finalizer if no live Job will.
     * The patch carries the UID and resourceVersion just read, so a pod adopted meanwhile keeps it.
     */
    async releaseOrphanPod(req: ReleaseOrphanPodRequest): Promise<ReleaseOrphanPodResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.name}`;
        const raw = await readByName(rest, podPath(req.namespace, req.name));
        if (!raw || raw.metadata?.uid !== req.uid) return { outcome: 'gone', why: 'the pod no longer exists' };
        const pod = jobPod(raw);
        const ref = controllerRef(pod.ownerReferences);
        const job = ref && isJobRef(ref) ? await readJob({ namespace: req.namespace, name: ref.name }) : undefined;
        const v = orphanVerdict(pod, job ? jobView(job) : undefined);
        if (!v.release) return { outcome: 'kept', why: v.why };
        const after = await unfinalize(req.namespace, { name: pod.name, uid: pod.uid }, pod.resourceVersion);
        if (!after.pod) return { outcome: 'changed', why: 'the pod changed or went since it was read; its next event decides' };
        logger.info({ controller: 'job', key, reason: req.reason, why: v.why }, 'released orphan pod');
        return { outcome: 'released', why: v.why };
      });
    },

    /** Write status through the status subresource, guarded by the resourceVersion it was computed from. */
    async updateJobStatus(req: UpdateJobStatusRequest): Promise<UpdateJobStatusResult> {
      return apiCall(async () => {
        const { job } = req;
        try {
          const r = await updateGuarded(rest, jobPath(job.namespace, job.name), job, (o) => {
            o.status = statusBody(req.status);
          }, 'status');
          for (const e of req.events) recordEvent(JOB_COMPONENT, target({ ...job, resourceVersion: r.metadata?.resourceVersion }), e.type, e.reason, e.message);
          return { updated: true, resourceVersion: r.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 409)) return { updated: false, reason: 'Conflict' };
          if (isStatus(e, 404)) return { updated: false, reason: 'NotFound' };
          throw e;
        }
      });
    },
  };
}

/** JobStatus as Go serializes it: zero counters and empty lists left out, uncountedTerminatedPods kept. */
function statusBody(s: JobStatus): Record<string, unknown> {
  const u = s.uncountedTerminatedPods ?? {};
  return withoutEmpty({
    conditions: s.conditions && s.conditions.length ? s.conditions : undefined,
    startTime: s.startTime,
    completionTime: s.completionTime,
    active: s.active || undefined,
    succeeded: s.succeeded || undefined,
    failed: s.failed || undefined,
    terminating: s.terminating,
    completedIndexes: s.completedIndexes || undefined,
    failedIndexes: s.failedIndexes,
    uncountedTerminatedPods: withoutEmpty({
      succeeded: u.succeeded && u.succeeded.length ? u.succeeded : undefined,
      failed: u.failed && u.failed.length ? u.failed : undefined,
    }),
    ready: s.ready,
  });
}

export type JobActivities = ReturnType<typeof createJobActivities>;
