import type { Logger } from 'pino';
import type { RecordEvent } from '../kube/events';
import { asActivityFailure, isStatus } from '../kube/failures';
import { ApiError, KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

export interface CreateServiceAccountsRequest {
  namespace: string;
  names: string[];
  reason: string;
}

export interface CreateServiceAccountsResult {
  created: string[];
  /** already there, or the namespace is going away: nothing left to do for these */
  skipped: string[];
  failed: Array<{ name: string; message: string }>;
}

/** The API refuses creates in a terminating namespace; that is an end, not an error. */
export function isNamespaceTerminating(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403 && /because it is being terminated/.test(e.serverMessage);
}

/** The serviceaccount controller's only write (its role grants create and nothing else). */
export function createServiceAccountActivities(deps: { rest: KubeRest; logger: Logger; recordEvent: RecordEvent }) {
  return {
    async createServiceAccounts(req: CreateServiceAccountsRequest): Promise<CreateServiceAccountsResult> {
      const out: CreateServiceAccountsResult = { created: [], skipped: [], failed: [] };
      for (const name of req.names) {
        try {
          await deps.rest.request('POST', resourcePath(RESOURCES.serviceAccounts, req.namespace), {
            body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: req.namespace } },
          });
          out.created.push(name);
        } catch (e) {
          if (isStatus(e, 409, 404) || isNamespaceTerminating(e)) out.skipped.push(name);
          else if (e instanceof ApiError && !e.transient) out.failed.push({ name, message: e.serverMessage });
          else throw asActivityFailure(e);
        }
      }
      deps.logger.info({ controller: 'serviceaccount', key: req.namespace, reason: req.reason, ...out }, 'ensured service accounts');
      return out;
    },
  };
}

export type ServiceAccountActivities = ReturnType<typeof createServiceAccountActivities>;
