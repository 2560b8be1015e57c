import type { Logger } from 'pino';
import { heartbeat } from '../kube/heartbeat';
import {
  SCHEDULED_TIMESTAMP_ANNOTATION,
  type ChildJob,
  type ConcurrencyPolicy,
  type CronJobEventRecord,
  type CronJobStatusView,
  type CronJobView,
  type JobManifest,
  type JobRef,
  type JobTemplate,
} from '../../workflows/cronjob/types';
import { isChildOf } from '../../workflows/cronjob/logic';
import type { FieldMask } from '../informers/fields';
import type { EventTarget, RecordEvent } from '../kube/events';
import { apiCall, asActivityFailure, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import { controllerRef } from '../../workflows/common/controller-ref';
import { updateGuarded, withoutEmpty } from '../kube/update';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

const COMPONENT = 'cronjob-controller';

export interface CronJobKey {
  namespace: string;
  name: string;
}

export interface CronJobObservation {
  /** absent when the CronJob no longer exists */
  cronJob?: CronJobView;
  /** Jobs whose controller reference names it */
  jobs: ChildJob[];
}

/** Who an activity acts for: the CronJob's identity and the version its decision was made at. */
export type CronJobTarget = Pick<CronJobView, 'namespace' | 'name' | 'uid' | 'resourceVersion'>;

export interface CreateJobRequest {
  cronJob: CronJobTarget;
  job: JobManifest;
  /** why, in words, for whoever reads the history */
  reason: string;
}

export type CreateJobResult =
  | { outcome: 'created'; job: ChildJob }
  /** the name was taken: by a Job of ours (this activity ran before) or by someone else's */
  | { outcome: 'exists'; job: ChildJob; ours: boolean }
  /** the namespace is being deleted: nothing can be created there (no event, as upstream) */
  | { outcome: 'namespaceTerminating' }
  /** the API rejected the Job (a FailedCreate event was recorded) */
  | { outcome: 'rejected'; message: string };

export interface DeleteJobsRequest {
  cronJob: CronJobTarget;
  jobs: Array<{ name: string; uid: string }>;
  reason: string;
}

export interface DeleteJobsResult {
  /** UIDs deleted now */
  deleted: string[];
  /** UIDs already gone (or the name now holds another Job) */
  gone: string[];
  failed: Array<{ name: string; uid: string; message: string }>;
}

export interface FindJobsRequest {
  namespace: string;
  names: string[];
}

export interface StatusUpdateRequest {
  cronJob: CronJobTarget;
  status: CronJobStatusView;
}

export type StatusUpdateResult = { updated: true; resourceVersion: string } | { updated: false; reason: 'Conflict' | 'NotFound' };

export interface RecordEventsRequest {
  cronJob: CronJobTarget;
  events: CronJobEventRecord[];
}

export interface CronJobActivityDeps {
  rest: KubeRest;
  logger: Logger;
  recordEvent: RecordEvent;
}

const cronJobPath = (ns: string, name?: string) => resourcePath(RESOURCES.cronJobs, ns, name);
const jobPath = (ns: string, name?: string) => resourcePath(RESOURCES.jobs, ns, name);


function eventTarget(cj: CronJobTarget): EventTarget {
  return { apiVersion: 'batch/v1', kind: 'CronJob', namespace: cj.namespace, name: cj.name, uid: cj.uid, resourceVersion: cj.resourceVersion };
}

const POLICIES: ConcurrencyPolicy[] = ['Allow', 'Forbid', 'Replace'];

/** What cronJobView reads of a CronJob: the spec (of the Job template's metadata only labels and annotations) and status. */
export const CRON_JOB_VIEW_FIELDS: FieldMask = {
  metadata: true,
  spec: {
    schedule: true, timeZone: true, startingDeadlineSeconds: true, concurrencyPolicy: true, suspend: true,
    successfulJobsHistoryLimit: true, failedJobsHistoryLimit: true,
    jobTemplate: { metadata: { labels: true, annotations: true }, spec: true },
  },
  status: {
    active: { apiVersion: true, kind: true, namespace: true, name: true, uid: true, resourceVersion: true },
    lastScheduleTime: true, lastSuccessfulTime: true,
  },
};

/** The fields of a CronJob the controller decides on. */
export function cronJobView(o: KubeObject): CronJobView {
  const m = o.metadata ?? {};
  const spec = (o.spec ?? {}) as {
    schedule?: string;
    timeZone?: string;
    startingDeadlineSeconds?: number;
    concurrencyPolicy?: string;
    suspend?: boolean;
    successfulJobsHistoryLimit?: number;
    failedJobsHistoryLimit?: number;
    jobTemplate?: JobTemplate;
  };
  const st = (o.status ?? {}) as { active?: JobRef[]; lastScheduleTime?: string; lastSuccessfulTime?: string };
  const policy = POLICIES.find((p) => p === spec.concurrencyPolicy) ?? 'Allow';
  const tmpl = spec.jobTemplate ?? { spec: {} };
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    creationTimestamp: m.creationTimestamp ?? '',
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    schedule: spec.schedule ?? '',
    ...(typeof spec.timeZone === 'string' ? { timeZone: spec.timeZone } : {}),
    ...(typeof spec.startingDeadlineSeconds === 'number' ? { startingDeadlineSeconds: spec.startingDeadlineSeconds } : {}),
    concurrencyPolicy: policy,
    suspend: spec.suspend === true,
    ...(typeof spec.successfulJobsHistoryLimit === 'number' ? { successfulJobsHistoryLimit: spec.successfulJobsHistoryLimit } : {}),
    ...(typeof spec.failedJobsHistoryLimit === 'number' ? { failedJobsHistoryLimit: spec.failedJobsHistoryLimit } : {}),
    jobTemplate: {
      ...(tmpl.metadata ? { metadata: { ...(tmpl.metadata.labels ? { labels: tmpl.metadata.labels } : {}), ...(tmpl.metadata.annotations ? { annotations: tmpl.metadata.annotations } : {}) } } : {}),
      spec: tmpl.spec ?? {},
    },
    status: {
      active: (st.active ?? []).map((r) => withoutEmpty({
        apiVersion: r.apiVersion, kind: r.kind, namespace: r.namespace, name: r.name, uid: r.uid, resourceVersion: r.resourceVersion,
      }) as JobRef),
      ...(st.lastScheduleTime ? { lastScheduleTime: st.lastScheduleTime } : {}),
      ...(st.lastSuccessfulTime ? { lastSuccessfulTime: st.lastSuccessfulTime } : {}),
    },
  };
}

/** What childJob reads of a Job: its metadata, and of its status the times and finishing conditions. */
export const CHILD_JOB_FIELDS: FieldMask = {
  metadata: true,
  status: { startTime: true, completionTime: true, conditions: { type: true, status: true } },
};

/** The slice of a Job the CronJob controller reads. */
export function childJob(o: KubeObject): ChildJob {
  const m = o.metadata ?? {};
  const st = (o.status ?? {}) as { startTime?: string; completionTime?: string; conditions?: Array<{ type: string; status: string }> };
  const finished = st.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type as ChildJob['finished'];
  const ref = controllerRef(m.ownerReferences);
  const scheduled = m.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION];
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    creationTimestamp: m.creationTimestamp ?? '',
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(ref ? { controllerRef: { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid } } : {}),
    ...(scheduled ? { scheduledTimestamp: scheduled } : {}),
    ...(st.startTime ? { startTime: st.startTime } : {}),
    ...(finished ? { finished } : {}),
    ...(st.completionTime ? { completionTime: st.completionTime } : {}),
  };
}

/** The apiserver's refusal to create in a namespace being deleted (its NamespaceTerminating cause). */
function namespaceTerminating(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403 && /because it is being terminated/.test(e.serverMessage);
}

/** The CronJob controller's I/O; every write is safe to run twice. */
export function createCronJobActivities(deps: CronJobActivityDeps) {
  const { rest } = deps;
  const log = (cj: CronJobTarget | CronJobKey) => deps.logger.child({ controller: 'cronjob', key: `${cj.namespace}/${cj.name}` });

  async function readCronJob(key: CronJobKey): Promise<CronJobView | undefined> {
    try {
      return cronJobView((await rest.request<KubeObject>('GET', cronJobPath(key.namespace, key.name))).body);
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  return {
    /** Re-read the CronJob and every Job in its namespace it controls, straight from the API. */
    async observeCronJob(key: CronJobKey): Promise<CronJobObservation> {
      return apiCall(async () => {
        const cronJob = await readCronJob(key);
        heartbeat();
        if (!cronJob) return { jobs: [] };
        const jobs: ChildJob[] = [];
        let cont = '';
        do {
          // paged, with a heartbeat per page, so a namespace of thousands of Jobs never looks like a dead worker
          const page = await rest.request<{ items: KubeObject[]; metadata: { continue?: string } }>(
            'GET', `${jobPath(key.namespace)}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
          for (const item of page.body.items) {
            const j = childJob(item);
            if (isChildOf(cronJob, j)) jobs.push(j);
          }
          cont = page.body.metadata.continue ?? '';
          heartbeat();
        } while (cont);
        return { cronJob, jobs };
      });
    },

    /** The CronJob alone, fresh: upstream re-reads it before calling a Job unexpected. */
    async readCronJob(key: CronJobKey): Promise<CronJobView | undefined> {
      return apiCall(() => readCronJob(key));
    },

    /** Which of these Job names exist (active entries the watch has not shown): upstream GETs each. */
    async findJobs(req: FindJobsRequest): Promise<{ found: string[] }> {
      return apiCall(async () => {
        const found: string[] = [];
        for (const name of req.names) {
          try {
            await rest.request('GET', jobPath(req.namespace, name));
            found.push(name);
          } catch (e) {
            if (!isStatus(e, 404)) throw e;
          }
          heartbeat();
        }
        return { found };
      });
    },

    /**
     * Create the Job for a scheduled time. Its name is derived from that time, so a second run of
     * this activity finds the first one's Job: AlreadyExists then reports whose it is.
     */
    async createJob(req: CreateJobRequest): Promise<CreateJobResult> {
      const { cronJob, job } = req;
      const l = log(cronJob);
      try {
        const r = await rest.request<KubeObject>('POST', jobPath(cronJob.namespace), { body: job });
        heartbeat();
        deps.recordEvent(COMPONENT, eventTarget(cronJob), 'Normal', 'SuccessfulCreate', `Created job ${job.metadata.name}`);
        l.info({ job: job.metadata.name, reason: req.reason }, 'created job');
        return { outcome: 'created', job: childJob(r.body) };
      } catch (e) {
        heartbeat();
        if (namespaceTerminating(e)) return { outcome: 'namespaceTerminating' };
        if (isStatus(e, 409)) {
          const existing = await apiCall(() => rest.request<KubeObject>('GET', jobPath(cronJob.namespace, job.metadata.name)));
          const j = childJob(existing.body);
          const ours = j.controllerRef?.uid === cronJob.uid;
          l.info({ job: job.metadata.name, ours, reason: req.reason }, 'job already exists');
          return { outcome: 'exists', job: j, ours };
        }
        if (e instanceof ApiError && !e.transient) {
          deps.recordEvent(COMPONENT, eventTarget(cronJob), 'Warning', 'FailedCreate', `Error creating job: ${e.serverMessage}`);
          l.warn({ job: job.metadata.name, err: e.serverMessage }, 'job rejected');
          return { outcome: 'rejected', message: e.serverMessage };
        }
        throw asActivityFailure(e);
      }
    },

    /**
     * Delete Jobs (history past its limit, or the running ones under Replace) with Background
     * propagation, as upstream, and a UID precondition so a newer Job under the name is never hit.
     */
    async deleteJobs(req: DeleteJobsRequest): Promise<DeleteJobsResult> {
      const { cronJob } = req;
      const out: DeleteJobsResult = { deleted: [], gone: [], failed: [] };
      for (const j of req.jobs) {
        try {
          await rest.request('DELETE', jobPath(cronJob.namespace, j.name), { body: { propagationPolicy: 'Background', preconditions: { uid: j.uid } } });
          out.deleted.push(j.uid);
          deps.recordEvent(COMPONENT, eventTarget(cronJob), 'Normal', 'SuccessfulDelete', `Deleted job ${j.name}`);
        } catch (e) {
          if (isStatus(e, 404, 409)) out.gone.push(j.uid);
          else if (e instanceof ApiError && !e.transient) {
            out.failed.push({ ...j, message: e.serverMessage });
            deps.recordEvent(COMPONENT, eventTarget(cronJob), 'Warning', 'FailedDelete', `Deleted job: ${e.serverMessage}`);
          } else throw asActivityFailure(e);
        } finally {
          heartbeat();
        }
      }
      log(cronJob).info({ reason: req.reason, jobs: req.jobs.map((j) => j.name), deleted: out.deleted.length, gone: out.gone.length, failed: out.failed.length }, 'deleted jobs');
      return out;
    },

    /** Write status through the status subresource, guarded by the resourceVersion it was computed from. */
    async updateCronJobStatus(req: StatusUpdateRequest): Promise<StatusUpdateResult> {
      return apiCall(async () => {
        const { cronJob, status } = req;
        try {
          const r = await updateGuarded(rest, cronJobPath(cronJob.namespace, cronJob.name), cronJob, (o) => {
            o.status = withoutEmpty({
              active: status.active.length ? status.active : undefined,
              lastScheduleTime: status.lastScheduleTime,
              lastSuccessfulTime: status.lastSuccessfulTime,
            });
          }, 'status');
          heartbeat();
          return { updated: true, resourceVersion: r.metadata?.resourceVersion ?? '' };
        } catch (e) {
          if (isStatus(e, 409)) return { updated: false, reason: 'Conflict' };
          if (isStatus(e, 404)) return { updated: false, reason: 'NotFound' };
          throw e;
        }
      });
    },

    /** Events a decision produced (the writes record their own). Best effort, as every event here. */
    async recordCronJobEvents(req: RecordEventsRequest): Promise<void> {
      for (const e of req.events) deps.recordEvent(COMPONENT, eventTarget(req.cronJob), e.type, e.reason, e.message);
    },
  };
}

export type CronJobActivities = ReturnType<typeof createCronJobActivities>;
