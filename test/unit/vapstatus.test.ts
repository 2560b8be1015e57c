import pino from 'pino';
import { prune } from '../../activities/informers/fields';
import { ApiError, type KubeRest } from '../../activities/kube/rest';
import type { KubeObject } from '../../activities/kube/projections';
import { RESOURCES } from '../../activities/kube/resources';
import { VAP_STATUS_FIELDS, createVapStatusActivities, parseApiVersion, policyView, typesToCheck } from '../../activities/validatingadmissionpolicystatus/activities';
import { vapStatusRoutes } from '../../activities/validatingadmissionpolicystatus/routes';
import {
  escapePropertyName, gvkString, kindCelType, resolveKindSchema, schemaCelType, type CelType, type OpenApiDocument,
} from '../../activities/validatingadmissionpolicystatus/schema';
import { celGoTypeName, checkPolicy, formatIssue, formatWarning, variableFieldType } from '../../activities/validatingadmissionpolicystatus/typecheck';
import { checkDue, checkReason } from '../../workflows/validatingadmissionpolicystatus/logic';
import { vapStatusWorkflow, type VapStatusEvent } from '../../workflows/validatingadmissionpolicystatus/workflow';
import { routeHarness } from '../support/routes';

const DEPLOY = { group: 'apps', version: 'v1', kind: 'Deployment' };

/** A slice of apps/v1's OpenAPI v3 document, shaped as the API server serves it. */
const DOC: OpenApiDocument = {
  components: {
    schemas: {
      'io.k8s.api.apps.v1.Deployment': {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] },
          spec: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec' }] },
        },
        'x-kubernetes-group-version-kind': [DEPLOY],
      },
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
        type: 'object',
        properties: {
          name: { type: 'string' },
          generateName: { type: 'string' },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          creationTimestamp: { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time' }] },
        },
      },
      'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time' },
      'io.k8s.api.apps.v1.DeploymentSpec': {
        type: 'object',
        properties: {
          replicas: { type: 'integer', format: 'int32' },
          paused: { type: 'boolean' },
          maxSurge: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
          limits: { type: 'object', additionalProperties: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity' } },
          containers: { type: 'array', items: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }] } },
          'x-dash-name': { type: 'string' },
          namespace: { type: 'string' },
          raw: { type: 'object', additionalProperties: true },
          data: { type: 'string', format: 'byte' },
          ratio: { type: 'number' },
          node: { $ref: '#/components/schemas/io.k8s.api.apps.v1.Node' },
        },
      },
      'io.k8s.api.apps.v1.Node': { type: 'object', properties: { next: { $ref: '#/components/schemas/io.k8s.api.apps.v1.Node' }, v: { type: 'integer' } } },
      'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] } as never,
      'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }] } as never,
      'io.k8s.api.core.v1.Container': { type: 'object', properties: { name: { type: 'string' }, image: { type: 'string' } } },
      'io.example.v1.Params': {
        type: 'object',
        properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, maxReplicas: { type: 'integer' } },
        'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Params' }],
      },
    },
  },
};

const deployment = () => {
  const t = kindCelType(DOC, DEPLOY);
  if (!t) throw new Error('no Deployment type');
  return t;
};
const fieldsOf = (t: CelType | undefined) => (t && t.kind === 'object' ? t.fields : {});

describe('schema to CEL type', () => {
  test('properties are escaped as apiserver does, or not exposed', () => {
    expect(escapePropertyName('replicas')).toBe('replicas');
    expect(escapePropertyName('namespace')).toBe('__namespace__');
    expect(escapePropertyName('x-dash.name/a__b')).toBe('x__dash__dash__dot__name__slash__a__underscores__b');
    expect(escapePropertyName('1st')).toBeUndefined();
    expect(escapePropertyName('a b')).toBeUndefined();
  });

  test('refs filled in, allOf included; a recursive ref is a bare object', () => {
    const s = resolveKindSchema(DOC, DEPLOY)!;
    expect(s.properties!.spec.properties!.replicas).toEqual({ type: 'integer', format: 'int32' });
    expect(s.properties!.metadata.properties!.creationTimestamp).toEqual({ type: 'string', format: 'date-time' });
    expect(s.properties!.spec.properties!.node.properties!.next).toEqual({ type: 'object' });
    expect(resolveKindSchema(DOC, { group: 'apps', version: 'v1', kind: 'StatefulSet' })).toBeUndefined();
  });

  test('types: int, bool, double, bytes, timestamp, int-or-string dyn, maps, lists; untyped schemas not exposed', () => {
    const t = deployment();
    const spec = fieldsOf(fieldsOf(t).spec);
    expect(spec.replicas).toEqual({ kind: 'primitive', name: 'int' });
    expect(spec.paused).toEqual({ kind: 'primitive', name: 'bool' });
    expect(spec.ratio).toEqual({ kind: 'primitive', name: 'double' });
    expect(spec.data).toEqual({ kind: 'primitive', name: 'bytes' });
    expect(spec.maxSurge).toEqual({ kind: 'primitive', name: 'dyn' });
    expect(spec.__namespace__).toEqual({ kind: 'primitive', name: 'string' });
    expect(spec.x__dash__dash__dash__name).toEqual({ kind: 'primitive', name: 'string' });
    // a map of Quantity (no type in OpenAPI v3) is not exposed; an object with additionalProperties: true has no fields
    expect(spec.limits).toBeUndefined();
    expect(spec.raw).toEqual({ kind: 'object', name: 'Deployment.spec.raw', fields: {} });
    expect(spec.containers).toEqual({ kind: 'list', elem: { kind: 'object', name: 'Deployment.spec.containers.__idx__', fields: {
      image: { kind: 'primitive', name: 'string' }, name: { kind: 'primitive', name: 'string' } } } });
    expect(fieldsOf(fieldsOf(t).metadata).labels).toEqual({ kind: 'map', value: { kind: 'primitive', name: 'string' } });
    expect(fieldsOf(fieldsOf(t).metadata).creationTimestamp).toEqual({ kind: 'primitive', name: 'google.protobuf.Timestamp' });
  });

  test('a resource root always has apiVersion, kind and metadata.name/generateName', () => {
    const t = schemaCelType({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'integer' } } } } }, true, 'X');
    expect(Object.keys(fieldsOf(t)).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(Object.keys(fieldsOf(fieldsOf(t).metadata)).sort()).toEqual(['generateName', 'name']);
  });

  test('GVK as Go prints it', () => {
    expect(gvkString(DEPLOY)).toBe('apps/v1, Kind=Deployment');
    expect(gvkString({ group: '', version: 'v1', kind: 'ConfigMap' })).toBe('/v1, Kind=ConfigMap');
  });
});

describe('warning text', () => {
  test("cel-go's issue display: position, source line, caret", () => {
    expect(formatIssue('object.spec.replicasx > 1', { offset: 11, message: "undefined field 'replicasx'" }))
      .toBe("ERROR: <input>:1:12: undefined field 'replicasx'\n | object.spec.replicasx > 1\n | ...........^");
    // the second line of a multi-line expression; tabs shown as spaces
    expect(formatIssue('true &&\n\tobject.x', { offset: 14, message: 'm' })).toBe('ERROR: <input>:2:7: m\n |  object.x\n | ......^');
    // wide characters before the column widen the dots
    expect(formatIssue('"é" == 1', { offset: 4, message: 'm' })).toBe('ERROR: <input>:1:5: m\n | "é" == 1\n | .．..^');
    // a character outside the BMP is two UTF-16 units and one column
    expect(formatIssue('"😀" == 1', { offset: 5, message: 'm' })).toBe('ERROR: <input>:1:5: m\n | "😀" == 1\n | .．..^');
  });

  test('per kind, prefixed by the GVK, each ending in a newline, joined by a newline', () => {
    expect(formatWarning([{ gvk: DEPLOY, issues: 'A' }, { gvk: { group: 'apps', version: 'v1', kind: 'ReplicaSet' }, issues: 'B' }]))
      .toBe('apps/v1, Kind=Deployment: A\n\napps/v1, Kind=ReplicaSet: B\n');
  });

  test('type names as cel-go prints them; variables typed as apiserver converts them', () => {
    expect(celGoTypeName('map<string, list<int>>')).toBe('map(string, list(int))');
    expect(variableFieldType('list<Deployment.spec>')).toBe('list<dyn>');
    expect(variableFieldType('map<string, int>')).toBe('map<string, int>');
    expect(variableFieldType('Deployment.spec')).toBe('dyn');
    expect(variableFieldType(undefined)).toBe('dyn');
  });
});

describe('checkPolicy', () => {
  const kinds = () => [{ gvk: DEPLOY, type: deployment() }];
  const check = (expressions: Array<{ expression: string; messageExpression?: string }>, o: { variables?: Array<{ name: string; expression: string }>; params?: CelType } = {}) =>
    checkPolicy({ validations: expressions, variables: o.variables ?? [] }, kinds(), o.params);

  test('a valid policy has no warnings', () => {
    expect(check([
      { expression: 'object.spec.replicas <= 5', messageExpression: '"replicas: " + string(object.spec.replicas)' },
      { expression: 'object.metadata.name.startsWith("a") && object.spec.containers.all(c, c.image != "")' },
      { expression: 'has(object.spec.paused) && request.userInfo.username != "" && namespaceObject.metadata.name != ""' },
      { expression: 'object.metadata.creationTimestamp < timestamp("2030-01-01T00:00:00Z") && object.metadata.labels["a"] == "b"' },
      { expression: 'oldObject == null || null != oldObject && oldObject.spec.replicas == object.spec.replicas' },
      { expression: 'object.spec.maxSurge == 1 || object.spec.maxSurge == "25%"' },
    ])).toEqual([]);
  });

  test('an undefined field and an int compared with a string: upstream fieldRefs and texts', () => {
    expect(check([{ expression: 'object.spec.replicasx > 1' }, { expression: 'true', messageExpression: 'object.spec.replicas == "1"' }])).toEqual([
      { fieldRef: 'spec.validations[0].expression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicasx'\n | object.spec.replicasx > 1\n | ...........^\n" },
      { fieldRef: 'spec.validations[1].messageExpression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, string)'\n | object.spec.replicas == \"1\"\n | .....................^\n" },
    ]);
  });

  test("what upstream wrote on the stack for the same expressions (cel-go's words and columns)", () => {
    const w = (expression: string) => check([{ expression }])[0]?.warning.split('\n')[0].replace('apps/v1, Kind=Deployment: ', '');
    expect(w('has(object.spec.replicasx)')).toBe("ERROR: <input>:1:4: undefined field 'replicasx'");
    expect(w('object.spec.replicas + 1.0 > 2.0')).toBe("ERROR: <input>:1:22: found no matching overload for '_+_' applied to '(int, double)'");
    expect(w('size(object.spec.replicas) > 0')).toBe("ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'");
    expect(w('object.spec.replicas.startsWith("a")')).toBe("ERROR: <input>:1:32: found no matching overload for 'startsWith' applied to 'int.(string)'");
    expect(w('object.spec.containers[0].namex == "a"')).toBe("ERROR: <input>:1:26: undefined field 'namex'");
    expect(w('object.spec.replicas == 1u')).toBe("ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, uint)'");
    expect(w('object.metadata.labels.a == 1')).toBe("ERROR: <input>:1:26: found no matching overload for '_==_' applied to '(string, int)'");
    expect(w('object.spec.replicas in ["a"]')).toBe("ERROR: <input>:1:22: found no matching overload for '@in' applied to '(int, list(string))'");
    expect(w('!object.spec.replicas')).toBe("ERROR: <input>:1:1: found no matching overload for '!_' applied to '(int)'");
    expect(w('object.spec.replicas == null')).toBe("ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, null)'");
    expect(w('int(object.spec.paused) > 0')).toBe("ERROR: <input>:1:4: found no matching overload for 'int' applied to '(bool)'");
    expect(w('object.spec.containers.map(c, c.namex).size() > 0')).toBe("ERROR: <input>:1:32: undefined field 'namex'");
    // upstream's type names carry a random number (Deployment308373540.spec.containers.@idx); ours none
    expect(w('object.spec.containers["a"] == 1'))
      .toBe("ERROR: <input>:1:23: found no matching overload for '_[_]' applied to '(list(Deployment.spec.containers.@idx), string)'");
    expect(w('object.spec.maxSurge == 1 && -object.spec.replicas < 0')).toBeUndefined();
  });

  test('params typed from paramKind; undeclared when it did not resolve', () => {
    const params = kindCelType(DOC, { group: 'example.com', version: 'v1', kind: 'Params' });
    expect(check([{ expression: 'object.spec.replicas <= params.maxReplicas' }], { params })).toEqual([]);
    expect(check([{ expression: 'object.spec.replicas <= params.maxReplicaz' }], { params })[0].warning).toContain("undefined field 'maxReplicaz'");
    expect(check([{ expression: 'object.spec.replicas <= params.maxReplicas' }])[0].warning)
      .toContain("ERROR: <input>:1:25: undeclared reference to 'params' (in container '')");
  });

  test('variables: typed by their expressions, each seeing the ones before it', () => {
    const variables = [{ name: 'n', expression: 'object.spec.replicas' }, { name: 'big', expression: 'variables.n > 3' }, { name: 's', expression: 'object.spec' }];
    expect(check([{ expression: 'variables.big && variables.s.replicas > 1' }], { variables })).toEqual([]);
    expect(check([{ expression: 'variables.n == "3"' }], { variables })[0].warning).toContain("found no matching overload for '_==_' applied to '(int, string)'");
    expect(check([{ expression: 'variables.nope' }], { variables })[0].warning).toContain("undefined field 'nope'");
  });

  test("no kinds resolved: nothing checked; Kubernetes' own functions and what the library cannot parse are not reported", () => {
    expect(checkPolicy({ validations: [{ expression: 'object.spec.replicasx > 1' }], variables: [] }, [], undefined)).toEqual([]);
    expect(check([
      { expression: 'quantity("1Gi").isGreaterThan(quantity("1Mi"))' },
      { expression: 'authorizer.group("apps").resource("deployments").check("get").allowed()' },
      { expression: 'object.metadata.name.matches("^a") && url("https://x").getHost() == "x"' },
    ])).toEqual([]);
  });

  test('each matched kind is checked; a warning names every kind it fails on', () => {
    const rs = { gvk: { group: 'apps', version: 'v1', kind: 'ReplicaSet' }, type: schemaCelType({ type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'string' } } } } }, true, 'ReplicaSet')! };
    const w = checkPolicy({ validations: [{ expression: 'object.spec.replicas > 1' }], variables: [] }, [{ gvk: DEPLOY, type: deployment() }, rs], undefined);
    expect(w).toEqual([{ fieldRef: 'spec.validations[0].expression',
      warning: "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(string, int)'\n | object.spec.replicas > 1\n | .....................^\n" }]);
  });
});

describe('the kinds a policy matches', () => {
  const known: Record<string, string> = { 'apps/v1/deployments': 'Deployment', 'apps/v1/replicasets': 'ReplicaSet', '/v1/configmaps': 'ConfigMap', 'apps/v1/deployment': 'Deployment' };
  const kindsFor = async (group: string, version: string, resource: string) => {
    const k = known[`${group}/${version}/${resource}`];
    return k ? [{ group, version, kind: k }] : [];
  };

  test('wildcard groups or versions skip the rule; wildcard and subresource resources are left out; unknown ones skipped', async () => {
    expect(await typesToCheck([
      { apiGroups: ['*'], apiVersions: ['v1'], resources: ['deployments'] },
      { apiGroups: ['apps'], apiVersions: ['v*'], resources: ['deployments'] },
      { apiGroups: ['apps', 'example.com', ''], apiVersions: ['v1'], resources: ['*', 'deployments/status', 'replicasets', 'deployments', 'configmaps', 'widgets'] },
    ], kindsFor)).toEqual([
      { group: '', version: 'v1', kind: 'ConfigMap' }, { group: 'apps', version: 'v1', kind: 'Deployment' }, { group: 'apps', version: 'v1', kind: 'ReplicaSet' },
    ]);
  });

  test('at most 10 from one rule', async () => {
    const many = async (group: string, version: string, resource: string) => [{ group, version, kind: resource.toUpperCase() }];
    const resources = Array.from({ length: 14 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    const got = await typesToCheck([{ apiGroups: ['g'], apiVersions: ['v1'], resources }], many);
    expect(got.map((g) => g.kind)).toEqual(resources.slice(0, 10).map((r) => r.toUpperCase()));
  });

  test('apiVersion parsing', () => {
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(parseApiVersion('example.com/v1')).toEqual({ group: 'example.com', version: 'v1' });
    expect(parseApiVersion('a/b/c')).toBeUndefined();
  });
});

describe('vapstatus decisions and routes', () => {
  const policy = (name: string, generation: number, observed?: number, rv = '1'): KubeObject => ({
    metadata: { name, uid: `u-${name}`, generation, resourceVersion: rv },
    spec: { validations: [{ expression: 'true' }] },
    ...(observed !== undefined ? { status: { observedGeneration: observed, typeChecking: {} } } : {}),
  } as unknown as KubeObject);

  test('due while the generation is newer than the observed one', () => {
    expect(checkDue({ generation: 1, observedGeneration: 0 })).toBe(true);
    expect(checkDue({ generation: 2, observedGeneration: 2 })).toBe(false);
    expect(checkDue({ generation: 2, observedGeneration: 3 })).toBe(false);
    expect(checkReason({ generation: 2, observedGeneration: 1 })).toBe('generation 2 is newer than the observed generation 1');
  });

  test('the view reads nothing its mask drops', () => {
    const full = policy('a', 3, 2);
    expect(policyView(prune(full, VAP_STATUS_FIELDS) as KubeObject)).toEqual(policyView(full));
  });

  test('only policies with a check due start a run; a due one deleted ends it', () => {
    const { sent, h } = routeHarness<VapStatusEvent>(vapStatusRoutes, { controllers: ['vapstatus'], tuning: { resyncMs: 7 } });
    h(RESOURCES.validatingAdmissionPolicies).relisted([policy('new', 1), policy('done', 2, 2)], '3');
    expect(sent.map((s) => s.event)).toEqual([{ policy: { name: 'new', uid: 'u-new', generation: 1, observedGeneration: 0 } }]);
    expect(sent[0].target).toEqual({
      controller: 'vapstatus', workflow: vapStatusWorkflow, kind: 'ValidatingAdmissionPolicy', namespace: '', name: 'new', uid: 'u-new',
      args: { name: 'new', uid: 'u-new', generation: 1, tuning: { resyncMs: 7 } }, workflowId: 'vapstatus/new',
    });
    sent.length = 0;
    h(RESOURCES.validatingAdmissionPolicies).event('MODIFIED', policy('done', 3, 2, '4'));
    h(RESOURCES.validatingAdmissionPolicies).event('DELETED', policy('new', 1, undefined, '5'));
    expect(sent.map((s) => s.event)).toEqual([
      { policy: { name: 'done', uid: 'u-done', generation: 3, observedGeneration: 2 } },
      { deletedUid: 'u-new' },
    ]);
  });

  test('off unless enabled', () => {
    expect(routeHarness(vapStatusRoutes, { controllers: ['ttl'] }).family).toBeUndefined();
  });
});

describe('typeCheckPolicy (the activity, on a scripted client)', () => {
  /** A client answering from fixed objects, recording the writes: no server, only the calls the activity makes. */
  function scripted(policy: Record<string, unknown> | undefined, onPatch?: () => void) {
    const writes: Array<{ path: string; body: unknown; contentType?: string }> = [];
    const rest = {
      async request<T>(method: string, path: string, ro: { body?: unknown; contentType?: string } = {}): Promise<{ status: number; body: T }> {
        const ok = (body: unknown) => ({ status: 200, body: body as T });
        if (method === 'PATCH') {
          writes.push({ path, body: ro.body, contentType: ro.contentType });
          onPatch?.();
          return ok({});
        }
        if (path.startsWith('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/')) {
          if (!policy) throw new ApiError(404, 'NotFound', 'not found');
          return ok(policy);
        }
        if (path === '/apis/apps/v1') return ok({ resources: [{ name: 'deployments', singularName: 'deployment', kind: 'Deployment' }, { name: 'deployments/scale', kind: 'Scale' }] });
        if (path === '/openapi/v3') return ok({ paths: { 'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=1' } } });
        if (path === '/openapi/v3/apis/apps/v1?hash=1') return ok(DOC);
        throw new ApiError(404, 'NotFound', `no ${path}`);
      },
    };
    const acts = createVapStatusActivities({ rest: rest as unknown as KubeRest, logger: pino({ level: 'silent' }) });
    return { acts, writes };
  }
  const vap = (o: { uid?: string; generation?: number; observed?: number } = {}) => ({
    metadata: { name: 'p', uid: o.uid ?? 'u1', generation: o.generation ?? 2, resourceVersion: '42' },
    spec: { matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'deployments/scale'] }] },
      validations: [{ expression: 'object.spec.replicas > 1' }, { expression: 'object.spec.replicasx > 1' }] },
    ...(o.observed ? { status: { observedGeneration: o.observed } } : {}),
  });
  const req = { reason: 'r', name: 'p', uid: 'u1', generation: 2 };

  test("applies upstream's status under its field manager, guarded by the resourceVersion read", async () => {
    const { acts, writes } = scripted(vap({ observed: 1 }));
    expect(await acts.typeCheckPolicy(req)).toEqual({ outcome: 'written', uid: 'u1', generation: 2, observedGeneration: 2,
      kinds: ['apps/v1, Kind=Deployment'], warnings: ['spec.validations[1].expression'] });
    expect(writes).toEqual([{
      path: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/p/status?fieldManager=validatingadmissionpolicy-status&force=true',
      contentType: 'application/apply-patch+yaml',
      body: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p', resourceVersion: '42' },
        status: { observedGeneration: 2, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[1].expression',
          warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicasx'\n | object.spec.replicasx > 1\n | ...........^\n" }] } } },
    }]);
  });

  test('settled, gone or replaced: nothing written', async () => {
    for (const [policy, outcome] of [[vap({ observed: 2 }), 'up-to-date'], [undefined, 'gone'], [vap({ uid: 'u2' }), 'replaced']] as const) {
      const { acts, writes } = scripted(policy);
      expect((await acts.typeCheckPolicy(req)).outcome).toBe(outcome);
      expect(writes).toEqual([]);
    }
  });

  test('a conflict (the policy changed since the read) is reported for a new check', async () => {
    const { acts } = scripted(vap(), () => {
      throw new ApiError(409, 'Conflict', 'the object has been modified');
    });
    expect(await acts.typeCheckPolicy(req)).toEqual({ outcome: 'conflict', uid: 'u1', generation: 2 });
  });
});
