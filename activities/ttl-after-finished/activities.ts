import type { Logger } from 'pino';
import type { JobTtlView } from '../../workflows/ttl-after-finished/logic';
import type { FieldMask } from '../informers/fields';
import type { RecordEvent } from '../kube/events';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

type JobObject = KubeObject & {
  spec?: { ttlSecondsAfterFinished?: number | null };
  status?: { conditions?: Array<{ type?: string; status?: string; lastTransitionTime?: string | null }> };
};

/** What jobTtlView reads of a Job: its TTL and its finishing conditions. */
export const JOB_TTL_FIELDS: FieldMask = {
  metadata: true,
  spec: { ttlSecondsAfterFinished: true },
  status: { conditions: { type: true, status: true, lastTransitionTime: true } },
};

/** The slice of a Job the TTL controller times; used by the watch and by the live read alike. */
export function jobTtlView(o: KubeObject): JobTtlView {
  const j = o as JobObject;
  const m = j.metadata ?? {};
  const ttl = j.spec?.ttlSecondsAfterFinished;
  const done = (j.status?.conditions ?? []).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    ...(typeof ttl === 'number' ? { ttlSecondsAfterFinished: ttl } : {}),
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(done ? { finished: { type: done.type as 'Complete' | 'Failed', ...(done.lastTransitionTime ? { lastTransitionTime: done.lastTransitionTime } : {}) } } : {}),
  };
}

export interface ReadFinishedJobRequest {
  namespace: string;
  name: string;
}

export interface DeleteExpiredJobRequest {
  namespace: string;
  name: string;
  /** the Job the decision was made for; another Job under the name is never deleted */
  uid: string;
  /** RFC 3339, for the log: when its TTL ran out */
  expiredAt: string;
}

export interface DeleteExpiredJobResult {
  /** `gone`: already deleted; `replaced`: the name now holds another Job (UID precondition failed) */
  outcome: 'deleted' | 'gone' | 'replaced';
}

export interface TtlAfterFinishedDeps {
  rest: KubeRest;
  logger: Logger;
  /** upstream's controller has a recorder but records nothing; kept so the manager's deps fit */
  recordEvent?: RecordEvent;
}

const jobPath = (ns: string, name: string) => resourcePath(RESOURCES.jobs, ns, name);

/** The TTL controller's I/O: a live read before deleting (the watch's TTL may be stale) and a guarded delete. */
export function createTtlAfterFinishedActivities(deps: TtlAfterFinishedDeps) {
  const log = deps.logger.child({ controller: 'ttl-after-finished' });
  return {
    /** The Job as the API server has it now; undefined when it is gone. */
    async readFinishedJob(req: ReadFinishedJobRequest): Promise<JobTtlView | undefined> {
      return apiCall(async () => {
        try {
          return jobTtlView((await deps.rest.request<KubeObject>('GET', jobPath(req.namespace, req.name))).body);
        } catch (e) {
          if (isStatus(e, 404)) return undefined;
          throw e;
        }
      });
    },

    /**
     * Deletes an expired Job in the foreground, so its pods go before it does, with a UID
     * precondition, as upstream does: a Job recreated under the name since the decision is kept.
     */
    async deleteExpiredJob(req: DeleteExpiredJobRequest): Promise<DeleteExpiredJobResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.name}`;
        try {
          await deps.rest.request('DELETE', jobPath(req.namespace, req.name), {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', preconditions: { uid: req.uid } },
          });
        } catch (e) {
          if (isStatus(e, 404)) return { outcome: 'gone' };
          if (isStatus(e, 409)) {
            log.info({ job: key, uid: req.uid }, 'job under this name was replaced; not deleting it');
            return { outcome: 'replaced' };
          }
          throw e;
        }
        log.info({ job: key, uid: req.uid, expiredAt: req.expiredAt, lateBySeconds: Math.max(0, (Date.now() - Date.parse(req.expiredAt)) / 1000) },
          'cleaned up job whose TTL after finished expired');
        return { outcome: 'deleted' };
      });
    },
  };
}

export type TtlAfterFinishedActivities = ReturnType<typeof createTtlAfterFinishedActivities>;
