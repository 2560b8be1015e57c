import type { Logger } from 'pino';
import {
  INVALID_SINCE_LABEL,
  LAST_USED_LABEL,
  SA_NAME_ANNOTATION,
  SA_UID_ANNOTATION,
  SERVICE_ACCOUNT_TOKEN_TYPE,
  TRACKING_CONFIGMAP,
  TRACKING_KEY,
  decideLegacyToken,
  passClock,
  podSecretNames,
  screenToken,
  trackedLongEnough,
  trackedSince,
  type AccountView,
  type LegacyTokenAction,
  type LegacyTokenView,
  type PodSecretRefs,
} from '../../workflows/legacy-token-cleaner/logic';
import { heartbeat } from '../kube/heartbeat';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';

const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const PAGE = 500;

/** A token Secret's metadata as the cleaner reads it (the list is metadata-only: no data is ever fetched). */
export function legacyTokenView(o: KubeObject): LegacyTokenView {
  const m = o.metadata ?? {};
  const labels = m.labels ?? {};
  const ann = m.annotations ?? {};
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    resourceVersion: m.resourceVersion ?? '',
    creationTimestamp: m.creationTimestamp ?? '',
    deleting: !!m.deletionTimestamp,
    ...(ann[SA_NAME_ANNOTATION] ? { serviceAccountName: ann[SA_NAME_ANNOTATION] } : {}),
    ...(ann[SA_UID_ANNOTATION] ? { serviceAccountUid: ann[SA_UID_ANNOTATION] } : {}),
    // a label present but empty counts as present (upstream then fails to parse it)
    ...(labels[LAST_USED_LABEL] !== undefined ? { lastUsed: labels[LAST_USED_LABEL] } : {}),
    ...(labels[INVALID_SINCE_LABEL] !== undefined ? { invalidSince: labels[INVALID_SINCE_LABEL] } : {}),
  };
}

export interface PlanLegacyTokenPassRequest {
  /** --legacy-service-account-token-clean-up-period, in ms */
  cleanUpPeriodMs: number;
}

export type LegacyTokenPassPlan =
  /** the tracking ConfigMap could not be read or parsed: upstream logs it and skips the pass */
  | { kind: 'error'; error: string }
  /** token use has not been tracked for the whole period yet */
  | { kind: 'too-early'; trackedSince: string }
  | { kind: 'plan'; scanned: number; actions: LegacyTokenAction[] };

export interface LabelInvalidTokenRequest {
  namespace: string;
  name: string;
  uid: string;
  invalidSince: string;
  reason: string;
}

export interface DeleteLegacyTokenRequest {
  namespace: string;
  name: string;
  /** upstream's precondition: the Secret unchanged since the pass looked at it */
  resourceVersion: string;
  serviceAccountName: string;
  lastUsed?: string;
  invalidSince: string;
  reason: string;
}

export interface LegacyTokenWriteResult {
  /** `skipped`: gone or changed since (upstream ignores NotFound and Conflict too) */
  outcome: 'done' | 'skipped';
}

export interface LegacyTokenCleanerDeps {
  /** the controller's own client: the tracking ConfigMap, and the writes (all its RBAC role grants) */
  rest: KubeRest;
  /** the manager's client, for the reads upstream makes through its shared informers (Secrets, accounts, pods) */
  reader: KubeRest;
  logger: Logger;
}

type ConfigMapObject = KubeObject & { data?: Record<string, string> | null };
type AccountObject = KubeObject & { secrets?: Array<{ name?: string }> | null };

/** The legacy token cleaner's I/O: one planning read per pass, then one write per token. */
export function createLegacyTokenCleanerActivities(deps: LegacyTokenCleanerDeps) {
  const log = deps.logger.child({ controller: 'legacy-service-account-token-cleaner' });
  const secretPath = (ns: string, name: string) => resourcePath(RESOURCES.secrets, ns, name);

  async function listAll<T extends KubeObject>(path: string, accept?: string): Promise<T[]> {
    const out: T[] = [];
    let cont = '';
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page = (await deps.reader.request<{ items: T[]; metadata?: { continue?: string } }>('GET',
        `${path}${sep}limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, accept ? { accept } : undefined)).body;
      out.push(...(page.items ?? []));
      cont = page.metadata?.continue ?? '';
      heartbeat({ listed: out.length });
    } while (cont);
    return out;
  }

  return {
    /**
     * One pass's reading and deciding, as upstream's evaluateSATokens: the tracking date, every
     * token Secret's metadata, and for the candidates their accounts and their namespaces' pods.
     * The writes are left to the workflow, one activity each.
     */
    async planLegacyTokenPass(req: PlanLegacyTokenPassRequest): Promise<LegacyTokenPassPlan> {
      return apiCall(async () => {
        const now = Date.now();
        let since: string | undefined;
        try {
          const cm = (await deps.rest.request<ConfigMapObject>('GET', resourcePath(RESOURCES.configMaps, 'kube-system', TRACKING_CONFIGMAP))).body;
          since = cm.data?.[TRACKING_KEY];
        } catch (e) {
          if (isStatus(e, 404)) return { kind: 'error', error: `configmaps "${TRACKING_CONFIGMAP}" not found` };
          throw e;
        }
        const tracked = trackedSince(since);
        if (!tracked.ok) return { kind: 'error', error: tracked.error };
        if (!trackedLongEnough(tracked.atMs, now, req.cleanUpPeriodMs)) return { kind: 'too-early', trackedSince: new Date(tracked.atMs).toISOString() };

        const clock = passClock(now, req.cleanUpPeriodMs);
        const tokens = (await listAll<KubeObject>(
          `${resourcePath(RESOURCES.secrets)}?fieldSelector=${encodeURIComponent(`type=${SERVICE_ACCOUNT_TOKEN_TYPE}`)}`, METADATA_LIST,
        )).map(legacyTokenView);

        const accounts = new Map<string, AccountView | undefined>();
        const account = async (ns: string, name: string): Promise<AccountView | undefined> => {
          const key = `${ns}/${name}`;
          if (!accounts.has(key)) {
            try {
              const sa = (await deps.reader.request<AccountObject>('GET', resourcePath(RESOURCES.serviceAccounts, ns, name))).body;
              accounts.set(key, { uid: sa.metadata?.uid ?? '', secrets: (sa.secrets ?? []).map((s) => s.name ?? '') });
            } catch (e) {
              if (!isStatus(e, 404)) throw e;
              accounts.set(key, undefined);
            }
          }
          return accounts.get(key);
        };
        const mounted = new Map<string, Set<string>>();
        const usedIn = async (ns: string): Promise<Set<string>> => {
          let names = mounted.get(ns);
          if (!names) {
            names = new Set<string>();
            for (const p of await listAll<KubeObject & PodSecretRefs>(resourcePath(RESOURCES.pods, ns))) {
              for (const n of podSecretNames(p)) names.add(n);
            }
            mounted.set(ns, names);
          }
          return names;
        };

        const actions: LegacyTokenAction[] = [];
        for (const t of tokens) {
          // the checks on the Secret alone first: most tokens need no further read
          if (screenToken(t, clock).kind === 'skip') continue;
          if (!t.serviceAccountName) continue;
          const sa = await account(t.namespace, t.serviceAccountName);
          if (!sa || !sa.secrets.includes(t.name)) continue;
          const d = decideLegacyToken(t, sa, (await usedIn(t.namespace)).has(t.name), clock);
          if (d.kind === 'act') actions.push(d.action);
        }
        return { kind: 'plan', scanned: tokens.length, actions };
      });
    },

    /** Upstream's merge patch of the invalid-since label, guarded by the Secret's UID. */
    async labelInvalidLegacyToken(req: LabelInvalidTokenRequest): Promise<LegacyTokenWriteResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.name}`;
        try {
          await deps.rest.request('PATCH', secretPath(req.namespace, req.name), {
            contentType: 'application/merge-patch+json',
            body: { metadata: { uid: req.uid, labels: { [INVALID_SINCE_LABEL]: req.invalidSince } } },
          });
        } catch (e) {
          if (isStatus(e, 404) || isStatus(e, 409)) {
            log.info({ secret: key }, 'legacy token gone or replaced before it could be labelled');
            return { outcome: 'skipped' };
          }
          throw e;
        }
        log.info({ secret: key, invalidSince: req.invalidSince, reason: req.reason }, 'marked the auto-generated service account token as invalid');
        return { outcome: 'done' };
      });
    },

    /** Deletes a legacy token at the resourceVersion the pass judged; a changed or gone Secret is left. */
    async deleteLegacyToken(req: DeleteLegacyTokenRequest): Promise<LegacyTokenWriteResult> {
      return apiCall(async () => {
        const key = `${req.namespace}/${req.name}`;
        try {
          await deps.rest.request('DELETE', secretPath(req.namespace, req.name), {
            body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: req.resourceVersion } },
          });
        } catch (e) {
          if (isStatus(e, 404) || isStatus(e, 409)) return { outcome: 'skipped' };
          throw e;
        }
        log.info({ secret: key, serviceAccount: req.serviceAccountName, lastUsed: req.lastUsed, invalidSince: req.invalidSince, reason: req.reason },
          'deleted auto-generated service account token');
        return { outcome: 'done' };
      });
    },
  };
}

export type LegacyTokenCleanerActivities = ReturnType<typeof createLegacyTokenCleanerActivities>;
