import type { Logger } from 'pino';
import { FIELD_MANAGER, type PolicyView } from '../../workflows/validatingadmissionpolicystatus/logic';
import type { FieldMask } from '../informers/fields';
import { heartbeat, heartbeating } from '../kube/heartbeat';
import { apiCall, isStatus } from '../kube/failures';
import type { KubeObject } from '../kube/projections';
import type { KubeRest } from '../kube/rest';
import { RESOURCES, resourcePath } from '../kube/resources';
import { kindCelType, openApiPathOf, gvkString, type CelType, type GroupVersionKind, type OpenApiDocument } from './schema';
import { checkPolicy, type ExpressionWarning, type KindType } from './typecheck';

/** The policy as the checker reads it (admissionregistration.k8s.io/v1, JSON). */
interface PolicyObject extends KubeObject {
  spec?: {
    paramKind?: { apiVersion?: string; kind?: string } | null;
    matchConstraints?: { resourceRules?: Array<{ apiGroups?: string[]; apiVersions?: string[]; resources?: string[] }> | null } | null;
    validations?: Array<{ expression?: string; messageExpression?: string }> | null;
    variables?: Array<{ name?: string; expression?: string }> | null;
  };
  status?: { observedGeneration?: number };
}

/** What the watch keeps of a policy: its metadata (generation, UID) and its observed generation. */
export const VAP_STATUS_FIELDS: FieldMask = { metadata: true, status: { observedGeneration: true } };

export function policyView(o: KubeObject): PolicyView {
  const p = o as PolicyObject;
  return {
    name: p.metadata?.name ?? '',
    uid: p.metadata?.uid ?? '',
    generation: p.metadata?.generation ?? 0,
    observedGeneration: p.status?.observedGeneration ?? 0,
  };
}

/** upstream checks at most this many matched kinds */
export const MAX_TYPES_TO_CHECK = 10;

export interface ResourceRule {
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
}

/**
 * The kinds a policy's matchConstraints select, as upstream's typesToCheck: a rule with a wildcard
 * group or version is skipped, wildcard and subresource resources are left out, each rule's
 * groups, versions and resources are taken in sorted order, and the collection stops once one
 * rule has yielded 10 kinds. A resource the mapper does not know (no such group, version or
 * resource: a CRD not installed) is skipped. Sorted by group, version, kind.
 */
export async function typesToCheck(rules: ResourceRule[], kindsFor: (group: string, version: string, resource: string) => Promise<GroupVersionKind[]>): Promise<GroupVersionKind[]> {
  const found = new Map<string, GroupVersionKind>();
  const done = () => [...found.values()].sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
  for (const rule of rules) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    if (groups.length === 0 || groups.some((g) => g.includes('*'))) continue;
    if (versions.length === 0 || versions.some((v) => v.includes('*'))) continue;
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    if (resources.length === 0) continue;
    let count = 0;
    for (const group of [...groups].sort(cmp)) {
      for (const version of [...versions].sort(cmp)) {
        for (const resource of [...resources].sort(cmp)) {
          for (const gvk of await kindsFor(group, version, resource)) {
            found.set(`${gvk.group}/${gvk.version}/${gvk.kind}`, gvk);
            if (++count === MAX_TYPES_TO_CHECK) return done();
          }
        }
      }
    }
  }
  return done();
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `apps/v1` -> {group: apps, version: v1}; `v1` -> the core group; undefined when it does not parse. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } | undefined {
  const parts = apiVersion.split('/');
  if (parts.length === 1 && parts[0]) return { group: '', version: parts[0] };
  if (parts.length === 2 && parts[1]) return { group: parts[0], version: parts[1] };
  return undefined;
}

export interface CheckPolicyRequest {
  /** why the check is due, in words */
  reason: string;
  name: string;
  /** the policy the watch saw: another one under the name is not written to */
  uid: string;
  /** the generation the watch saw; the check is of the generation read, which may be newer */
  generation: number;
}

export interface CheckPolicyResult {
  /**
   * `written`: status applied for `generation`; `up-to-date`: the status already observes the
   * generation read; `gone`: no policy under the name; `replaced`: another policy holds the name
   * (`uid`); `conflict`: the policy changed between the read and the write (its resourceVersion)
   */
  outcome: 'written' | 'up-to-date' | 'gone' | 'replaced' | 'conflict';
  uid?: string;
  generation?: number;
  observedGeneration?: number;
  /** the kinds checked, `apps/v1, Kind=Deployment` */
  kinds?: string[];
  /** the fieldRefs that got a warning (the texts are in the status) */
  warnings?: string[];
}

export interface VapStatusDeps {
  rest: KubeRest;
  logger: Logger;
}

interface ApiResourceList {
  resources?: Array<{ name: string; singularName?: string; kind: string }>;
}

/** `/openapi/v3`: each group version's document, under a URL that changes with its content */
interface OpenApiIndex {
  paths?: Record<string, { serverRelativeURL?: string }>;
}

/** Documents by their content-addressed URL: a URL is never reused for other content. */
const documents = new Map<string, OpenApiDocument>();
const MAX_DOCUMENTS = 16;

const policyPath = (name: string) => resourcePath(RESOURCES.validatingAdmissionPolicies, undefined, name);

/** The status controller's I/O: one activity reads a policy, its kinds' schemas, checks, and applies the status. */
export function createVapStatusActivities(deps: VapStatusDeps) {
  const log = deps.logger.child({ controller: 'vapstatus' });
  // every answer heartbeats: a replica killed mid-check is noticed within the heartbeat timeout
  const rest = heartbeating(deps.rest);

  async function getOrUndefined<T>(path: string): Promise<T | undefined> {
    try {
      return (await rest.request<T>('GET', path)).body;
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  return {
    /**
     * Type-checks the policy as it is now and applies its status (observedGeneration and the
     * warnings) under upstream's field manager, guarded by the resourceVersion read: a policy
     * changed meanwhile is a conflict, and the workflow checks it again. Applying the same status
     * twice (a retry after a replica died) changes nothing.
     */
    async typeCheckPolicy(req: CheckPolicyRequest): Promise<CheckPolicyResult> {
      return apiCall(async () => {
        const policy = await getOrUndefined<PolicyObject>(policyPath(req.name));
        if (!policy) return { outcome: 'gone' };
        const uid = policy.metadata?.uid ?? '';
        if (uid !== req.uid) return { outcome: 'replaced', uid };
        const view = policyView(policy);
        if (view.generation > view.observedGeneration) {
          log.info({ key: req.name, uid, generation: view.generation, reason: req.reason }, 'type-checking validating admission policy');
        }
        if (view.generation <= view.observedGeneration) {
          log.info({ key: req.name, uid, generation: view.generation, reason: req.reason }, 'policy status already observes its generation');
          return { outcome: 'up-to-date', uid, generation: view.generation, observedGeneration: view.observedGeneration };
        }

        // one round's reads: discovery per group version, the OpenAPI index once
        const groupVersions = new Map<string, Promise<ApiResourceList | undefined>>();
        const resourceList = (group: string, version: string) => {
          const key = `${group}/${version}`;
          let p = groupVersions.get(key);
          if (!p) {
            p = getOrUndefined<ApiResourceList>(group ? `/apis/${group}/${version}` : `/api/${version}`);
            groupVersions.set(key, p);
          }
          return p;
        };
        const kindsFor = async (group: string, version: string, resource: string): Promise<GroupVersionKind[]> => {
          const list = await resourceList(group, version);
          const r = (list?.resources ?? []).find((x) => !x.name.includes('/') && (x.name === resource || x.singularName === resource));
          return r ? [{ group, version, kind: r.kind }] : [];
        };
        let index: Promise<OpenApiIndex | undefined> | undefined;
        const schemaOf = async (gvk: GroupVersionKind): Promise<CelType | undefined> => {
          index ??= getOrUndefined<OpenApiIndex>('/openapi/v3');
          const url = (await index)?.paths?.[openApiPathOf(gvk)]?.serverRelativeURL;
          if (!url) return undefined;
          let doc = documents.get(url);
          if (!doc) {
            doc = await getOrUndefined<OpenApiDocument>(url);
            if (!doc) return undefined;
            if (documents.size >= MAX_DOCUMENTS) documents.delete(documents.keys().next().value!);
            documents.set(url, doc);
          }
          heartbeat();
          return kindCelType(doc, gvk);
        };

        const spec = policy.spec ?? {};
        const kinds: KindType[] = [];
        for (const gvk of await typesToCheck(spec.matchConstraints?.resourceRules ?? [], kindsFor)) {
          const type = await schemaOf(gvk);
          if (type) kinds.push({ gvk, type });
          heartbeat();
        }
        let params: CelType | undefined;
        const pk = spec.paramKind;
        const pgv = pk?.apiVersion !== undefined ? parseApiVersion(pk.apiVersion) : undefined;
        if (pk && pgv && pk.kind) params = await schemaOf({ ...pgv, kind: pk.kind });

        const warnings: ExpressionWarning[] = checkPolicy({
          validations: (spec.validations ?? []).map((v) => ({ expression: v.expression ?? '', messageExpression: v.messageExpression })),
          variables: (spec.variables ?? []).map((v) => ({ name: v.name ?? '', expression: v.expression ?? '' })),
        }, kinds, params);
        heartbeat();

        try {
          await rest.request('PATCH', `${policyPath(req.name)}/status?fieldManager=${FIELD_MANAGER}&force=true`, {
            contentType: 'application/apply-patch+yaml',
            body: {
              apiVersion: 'admissionregistration.k8s.io/v1',
              kind: 'ValidatingAdmissionPolicy',
              metadata: { name: req.name, resourceVersion: policy.metadata?.resourceVersion },
              status: {
                observedGeneration: view.generation,
                typeChecking: warnings.length ? { expressionWarnings: warnings } : {},
              },
            },
          });
        } catch (e) {
          if (isStatus(e, 409)) return { outcome: 'conflict', uid, generation: view.generation };
          if (isStatus(e, 404)) return { outcome: 'gone' };
          throw e;
        }
        const kindNames = kinds.map((k) => gvkString(k.gvk));
        log.info({ key: req.name, uid, generation: view.generation, kinds: kindNames, warnings: warnings.map((w) => w.fieldRef), reason: req.reason },
          'type-checked validating admission policy');
        return { outcome: 'written', uid, generation: view.generation, observedGeneration: view.generation, kinds: kindNames, warnings: warnings.map((w) => w.fieldRef) };
      });
    },
  };
}

export type VapStatusActivities = ReturnType<typeof createVapStatusActivities>;
