import { Client } from '@temporalio/client';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiError } from '../../activities/kube/rest';
import { eventually, testClusterAccess, testTemporalConnection, uniqueName } from '../support/cluster';
import { testRest } from '../support/kube';
import { ManagerProcess, startManagerProcess } from '../support/manager';
import { firstRun } from '../support/runs';
import { TEST_DATA_DIR } from '../support/stack';
import { UpstreamKcm } from '../support/upstream';

/**
 * The ValidatingAdmissionPolicy status controller compared with upstream kube-controller-manager
 * v1.35.4 on the same stack: the same policies, under each manager's own name prefix, one manager
 * after the other, and their status compared field by field (observedGeneration, every
 * expressionWarning's fieldRef and text, and who owns the status in managedFields). The policies:
 * a valid one on apps/v1 deployments (with a variable and a messageExpression), one with an
 * undefined field, one comparing an int with a string, one with a paramKind (ConfigMap), one
 * matching two kinds, one on a custom resource (a CRD's schema: int-or-string, preserve-unknown-fields,
 * an embedded resource), one on a group no API serves, one with wildcard groups, and one updated to
 * generation 2 after its first check. Ours runs as two replicas; the one that starts checking a
 * batch of policies is killed with kill -9, and every policy of the batch still gets its status.
 */
const kc = testClusterAccess();
const rest = testRest(kc);
const VAPS = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const BATCH = 8;

const upstream = new UpstreamKcm('vapstatus');
const managers: ManagerProcess[] = [];
const made: string[] = [];

interface Validation {
  expression: string;
  messageExpression?: string;
}

interface PolicySpec {
  rules?: Array<{ apiGroups: string[]; apiVersions: string[]; resources: string[] }>;
  validations: Validation[];
  variables?: Array<{ name: string; expression: string }>;
  paramKind?: { apiVersion: string; kind: string };
}

interface Policy {
  metadata: { name: string; generation?: number; resourceVersion?: string;
    managedFields?: Array<{ manager?: string; operation?: string; subresource?: string; fieldsV1?: unknown }> };
  spec: Record<string, unknown>;
  status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: Array<{ fieldRef: string; warning: string }> } };
}

const DEPLOYMENTS = [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }];

/** A CRD: its kind's type comes from the apiserver's OpenAPI v3 for both managers. */
const CRD_NAME = 'gadgets.vap-e2e-crd.example.com';
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: CRD_NAME },
  spec: {
    group: 'vap-e2e-crd.example.com', scope: 'Namespaced', names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: {
      size: { type: 'integer' }, port: { 'x-kubernetes-int-or-string': true }, free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      tmpl: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } } },
    } } } } } }],
  },
};

const POLICIES: Record<string, PolicySpec> = {
  valid: {
    variables: [{ name: 'many', expression: 'object.spec.replicas > 3' }],
    validations: [
      { expression: '!variables.many || object.spec.template.spec.containers.all(c, c.image.startsWith("registry.example/"))',
        messageExpression: '"replicas: " + string(object.spec.replicas)' },
      { expression: 'oldObject == null || object.metadata.name == oldObject.metadata.name' },
    ],
  },
  undefinedfield: { validations: [{ expression: 'object.spec.replicas <= 5' }, { expression: 'object.spec.replicasx > 1' }] },
  intstring: { validations: [{ expression: 'true', messageExpression: '"n"' }, { expression: 'object.spec.replicas == "1"' }] },
  params: {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    validations: [{ expression: 'object.spec.replicas <= int(params.data["max"])' }, { expression: 'params.datax.max == "1"' }],
  },
  twokinds: {
    rules: [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['replicasets', 'deployments', 'deployments/scale'] }],
    validations: [{ expression: 'object.spec.replicas > 0 && object.spec.minReadySeconds >= 0' }, { expression: 'object.spec.strategy.type == "Recreate"' }],
  },
  unknowngroup: {
    rules: [{ apiGroups: ['vap-e2e.example.com'], apiVersions: ['v1'], resources: ['widgets'] }],
    validations: [{ expression: 'object.spec.size > "x"' }],
  },
  wildcard: {
    rules: [{ apiGroups: ['*'], apiVersions: ['v1'], resources: ['deployments'] }],
    validations: [{ expression: 'object.spec.replicasx > 1' }],
  },
  update: { validations: [{ expression: 'object.spec.replicas <= 5' }] },
  crd: {
    rules: [{ apiGroups: ['vap-e2e-crd.example.com'], apiVersions: ['v1'], resources: ['gadgets'] }],
    validations: [{ expression: 'object.spec.size == "1"' }, { expression: 'object.spec.port == 1 && object.spec.tmpl.metadata.name != ""' },
      { expression: 'object.spec.free.x == 1' }],
  },
};

function policyBody(name: string, p: PolicySpec): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      ...(p.paramKind ? { paramKind: p.paramKind } : {}),
      matchConstraints: { resourceRules: (p.rules ?? DEPLOYMENTS).map((r) => ({ ...r, operations: ['CREATE', 'UPDATE'] })) },
      ...(p.variables ? { variables: p.variables } : {}),
      validations: p.validations,
    },
  };
}

async function create(name: string, p: PolicySpec): Promise<void> {
  await rest.request('POST', VAPS, { body: policyBody(name, p) });
  made.push(name);
}

async function get(name: string): Promise<Policy | undefined> {
  try {
    return (await rest.request<Policy>('GET', `${VAPS}/${name}`)).body;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

/** Waits until the status observes the policy's generation. */
async function observed(name: string, timeoutMs = 30_000): Promise<Policy> {
  return eventually(`${name}: status observes its generation`, async () => {
    const p = await get(name);
    return p && (p.status?.observedGeneration ?? 0) >= (p.metadata.generation ?? 1) ? p : undefined;
  }, timeoutMs, 50);
}

/** What a user sees: the generations, the warnings, and who wrote the status (managedFields of the status subresource). */
function view(p: Policy): Record<string, unknown> {
  return {
    generation: p.metadata.generation,
    status: p.status,
    statusManagers: (p.metadata.managedFields ?? []).filter((m) => m.subresource === 'status')
      .map((m) => ({ manager: m.manager, operation: m.operation, fieldsV1: m.fieldsV1 })),
  };
}

type Result = Record<string, unknown>;

async function scenario(prefix: string, midBatch: () => Promise<void>): Promise<Result> {
  const out: Result = {};
  for (const [k, p] of Object.entries(POLICIES)) await create(`${prefix}-${k}`, p);
  for (const k of Object.keys(POLICIES)) out[k] = view(await observed(`${prefix}-${k}`));

  // generation 2: the spec changes to an expression with an undefined field; checked again
  const before = (await get(`${prefix}-update`))!;
  await rest.request('PUT', `${VAPS}/${prefix}-update`, {
    body: { ...before, spec: { ...before.spec, validations: [{ expression: 'object.spec.replicas <= 5' }, { expression: 'object.spec.templatex.metadata.name != ""' }] } },
  });
  out.updated = view(await observed(`${prefix}-update`));

  // a batch at once (ours: a replica killed while it checks them)
  const batch = Array.from({ length: BATCH }, (_, i) => `${prefix}-batch-${i}`);
  const batchRules = [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'controllerrevisions'] }];
  for (const name of batch) {
    await create(name, { rules: batchRules, validations: [{ expression: 'object.metadata.name != ""' }, { expression: 'object.spec.paused == 1' }] });
  }
  await midBatch();
  const views = [];
  for (const name of batch) views.push(JSON.stringify(view(await observed(name, 45_000))));
  out.batch = [...new Set(views)].map((v) => JSON.parse(v) as unknown);
  return out;
}

beforeAll(async () => {
  await rest.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD }).catch((e) => {
    if (!(e instanceof ApiError && e.status === 409)) throw e;
  });
  // served, and in the OpenAPI v3 index, before any policy names it
  await eventually('the CRD in OpenAPI v3', async () => {
    const index = (await rest.request<{ paths?: Record<string, unknown> }>('GET', '/openapi/v3')).body;
    return index.paths?.['apis/vap-e2e-crd.example.com/v1'] ? true : undefined;
  }, 30_000, 100);
});

afterAll(async () => {
  await upstream.stop();
  await rest.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`).catch(() => undefined);
  await Promise.all(managers.map((m) => m.kill()));
  for (const n of made) await rest.request('DELETE', `${VAPS}/${n}`).catch(() => undefined);
});

test('ValidatingAdmissionPolicy status: observedGeneration and type-checking warnings as upstream writes them, across a kill -9', async () => {
  const started = Date.now();

  await upstream.start('validatingadmissionpolicy-status-controller', ['--use-service-account-credentials']);
  const theirs = await scenario(uniqueName('e2e-vap-up'), async () => undefined);
  await upstream.stop();
  const upstreamDone = Date.now();

  const taskQueue = uniqueName('vapstatus-e2e');
  const args = ['--use-service-account-credentials', '--informer-heartbeat-timeout', '3s'];
  const controllers = 'validatingadmissionpolicy-status-controller';
  const [a, b] = await Promise.all([startManagerProcess(taskQueue, args, { controllers }), startManagerProcess(taskQueue, args, { controllers })]);
  managers.push(a, b);
  const ourPrefix = uniqueName('e2e-vap-ours');
  let killed: ManagerProcess | undefined;
  const ours = await scenario(ourPrefix, async () => {
    // the replica that starts checking the batch is killed at once, its checks in flight
    const started = new RegExp(`"key":"${ourPrefix}-batch-\\d+"[^\\n]*"msg":"type-checking`);
    killed = await eventually('a replica checking the batch', async () => [a, b].find((m) => started.test(fs.readFileSync(m.logFile, 'utf8'))), 20_000, 2);
    await killed.kill('SIGKILL');
  });
  const oursDone = Date.now();
  fs.writeFileSync(path.join(TEST_DATA_DIR, 'logs', 'validatingadmissionpolicystatus-vs-upstream.json'), JSON.stringify({ theirs, ours }, null, 1));
  process.stderr.write(`vap status: upstream scenario ${upstreamDone - started} ms, ours ${oursDone - upstreamDone} ms\n`);

  // upstream's behaviour, as the issue asks
  const warnings = (r: unknown) => ((r as { status?: Policy['status'] }).status?.typeChecking?.expressionWarnings ?? []);
  expect(theirs.valid).toMatchObject({ generation: 1, status: { observedGeneration: 1 } });
  expect(warnings(theirs.valid)).toEqual([]);
  expect(warnings(theirs.undefinedfield).map((w) => w.fieldRef)).toEqual(['spec.validations[1].expression']);
  expect(warnings(theirs.undefinedfield)[0].warning).toContain("undefined field 'replicasx'");
  expect(warnings(theirs.intstring).map((w) => w.fieldRef)).toEqual(['spec.validations[1].expression']);
  expect(warnings(theirs.unknowngroup)).toEqual([]);
  expect(warnings(theirs.wildcard)).toEqual([]);
  expect(theirs.updated).toMatchObject({ generation: 2, status: { observedGeneration: 2 } });
  expect(warnings(theirs.crd).map((w) => w.fieldRef)).toEqual(['spec.validations[0].expression', 'spec.validations[2].expression']);

  // ours: the same, field by field
  expect(Object.keys(ours)).toEqual(Object.keys(theirs));
  for (const k of Object.keys(theirs)) expect([k, ours[k]]).toEqual([k, theirs[k]]);
  expect((ours.batch as unknown[]).length).toBe(1);

  const connection = await testTemporalConnection();
  try {
    const client = new Client({ connection });
    // every batch policy's run ends, those whose check was cut by the kill on the survivor. A policy
    // may have had a second run: the survivor resumes the watch from the last position the killed
    // replica heartbeated, and the events replayed from there show the policy as it was before its
    // status was written, so a new run is started, finds the status written and ends. Upstream's
    // informer replays the same events into its queue and skips them the same way.
    const latestRuns = async () => {
      const latest = new Map<string, { start: number; status: string }>();
      for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH 'vapstatus/${ourPrefix}-batch-'` })) {
        const start = wf.startTime.getTime();
        if ((latest.get(wf.workflowId)?.start ?? -1) < start) latest.set(wf.workflowId, { start, status: wf.status.name });
      }
      return [...latest.values()].map((r) => r.status);
    };
    await eventually('every batch policy\'s latest run completed', async () => {
      const s = await latestRuns();
      return s.length === BATCH && s.every((x) => x === 'COMPLETED') ? s : undefined;
    }, 30_000, 200);
    const survivor = killed === a ? b : a;
    const count = (m: ManagerProcess, what: string) =>
      (fs.readFileSync(m.logFile, 'utf8').match(new RegExp(`"key":"${ourPrefix}-batch-\\d+"[^\\n]*"msg":"${what}`, 'g')) ?? []).length;
    process.stderr.write(`vap status: batch of ${BATCH}: ${count(killed!, 'type-checking')} checks started on the killed replica, `
      + `${count(killed!, 'type-checked')} finished there, `
      + `${count(survivor, 'type-checked')} by the survivor, ${count(survivor, 'already observes')} retries found the status written; `
      + `all runs completed ${Date.now() - oursDone} ms after the last status\n`);
    expect(count(killed!, 'type-checked') + count(survivor, 'type-checked') + count(survivor, 'already observes')).toBeGreaterThanOrEqual(BATCH);

    // the state query of a finished run still answers from its last state (the ID's first run: see firstRun)
    const checker = await eventually('the policy\'s run listed', () => firstRun(client, `vapstatus/${ourPrefix}-undefinedfield`), 30_000, 500);
    const state = await checker.query<{ view?: Record<string, unknown> }>('state');
    expect(state.view).toMatchObject({ generation: 1, observedGeneration: 1, checkDue: false, outcome: 'written',
      kinds: ['apps/v1, Kind=Deployment'], warnings: ['spec.validations[1].expression'] });
  } finally {
    await connection.close();
  }
}, 150_000);
