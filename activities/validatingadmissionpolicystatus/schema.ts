/**
 * From the API server's OpenAPI v3 documents to the types a policy's expressions are checked
 * against, as upstream's type checker gets them: the schema of a kind found by its
 * x-kubernetes-group-version-kind, every $ref (or allOf holding one) replaced by what it names, a
 * ref met again inside itself cut to a bare object, then each schema turned into a CEL type by
 * apiserver's rules (cel/common SchemaDeclType). Pure: the documents are read by the activity.
 */

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The subset of an OpenAPI v3 schema the conversion reads. */
export interface OpenApiSchema {
  type?: string | string[];
  format?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema | boolean;
  items?: OpenApiSchema;
  allOf?: OpenApiSchema[];
  $ref?: string;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-group-version-kind'?: GroupVersionKind[];
}

/** One `/openapi/v3/apis/<group>/<version>` (or `/openapi/v3/api/v1`) document. */
export interface OpenApiDocument {
  components?: { schemas?: Record<string, OpenApiSchema> };
}

const REF_PREFIX = '#/components/schemas/';

/** `apps/v1, Kind=Deployment`; `/v1, Kind=ConfigMap` for the core group: Go's GroupVersionKind.String(). */
export function gvkString(g: GroupVersionKind): string {
  return `${g.group}/${g.version}, Kind=${g.kind}`;
}

/** The OpenAPI v3 path of a group version: `api/v1` or `apis/<group>/<version>`, as discovery lists them. */
export function openApiPathOf(g: Pick<GroupVersionKind, 'group' | 'version'>): string {
  return g.group ? `apis/${g.group}/${g.version}` : `api/${g.version}`;
}

/** The component whose x-kubernetes-group-version-kind names this kind; undefined when none does. */
export function findKindRef(doc: OpenApiDocument, gvk: GroupVersionKind): string | undefined {
  for (const [name, s] of Object.entries(doc.components?.schemas ?? {})) {
    for (const g of s['x-kubernetes-group-version-kind'] ?? []) {
      if (g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind) return name;
    }
  }
  return undefined;
}

function refOf(s: OpenApiSchema): string | undefined {
  if (s.$ref) return s.$ref;
  for (const a of s.allOf ?? []) {
    const r = refOf(a);
    if (r) return r;
  }
  return undefined;
}

/**
 * The kind's schema with its references filled in (upstream's PopulateRefs): properties, map values
 * and list items are followed; a reference to a schema already being filled in (a recursive type,
 * such as JSONSchemaProps) becomes `{type: object}` with no properties. Undefined when the kind or
 * a reference it needs is missing (upstream: schema not found, the kind is not checked).
 */
export function resolveKindSchema(doc: OpenApiDocument, gvk: GroupVersionKind): OpenApiSchema | undefined {
  const schemas = doc.components?.schemas ?? {};
  const root = findKindRef(doc, gvk);
  if (root === undefined) return undefined;
  const visiting = new Set<string>([root]);
  const fill = (s: OpenApiSchema): OpenApiSchema | undefined => {
    let result: OpenApiSchema = s;
    const ref = refOf(s);
    if (ref !== undefined) {
      const name = ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : ref;
      if (visiting.has(name)) return { type: 'object' };
      const target = schemas[name];
      if (!target) return undefined;
      visiting.add(name);
      try {
        return fillChildren(target);
      } finally {
        visiting.delete(name);
      }
    }
    result = fillChildren(result) ?? result;
    return result;
  };
  const fillChildren = (s: OpenApiSchema): OpenApiSchema | undefined => {
    const out: OpenApiSchema = { ...s };
    if (s.properties) {
      out.properties = {};
      for (const [k, p] of Object.entries(s.properties)) {
        const f = fill(p);
        if (!f) return undefined;
        out.properties[k] = f;
      }
    }
    if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      const f = fill(s.additionalProperties);
      if (!f) return undefined;
      out.additionalProperties = f;
    }
    if (s.items) {
      const f = fill(s.items);
      if (!f) return undefined;
      out.items = f;
    }
    return out;
  };
  return fillChildren(schemas[root]);
}

/** A CEL type as the checker declares it. Object types carry a name unique within one check. */
export type CelType =
  | { kind: 'primitive'; name: 'int' | 'uint' | 'double' | 'string' | 'bool' | 'bytes' | 'google.protobuf.Timestamp' | 'google.protobuf.Duration' | 'dyn' }
  | { kind: 'list'; elem: CelType }
  | { kind: 'map'; value: CelType }
  | { kind: 'object'; name: string; fields: Record<string, CelType> };

const prim = (name: Extract<CelType, { kind: 'primitive' }>['name']): CelType => ({ kind: 'primitive', name });

/** CEL's reserved words, which a property name is escaped around (`__namespace__`). */
const CEL_RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if',
  'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/**
 * A property's name in CEL (apiserver's cel.Escape): reserved words become `__word__`; `__`, `.`,
 * `-` and `/` become `__underscores__`, `__dot__`, `__dash__` and `__slash__`; a name starting with
 * a digit or holding any other character outside [A-Za-z0-9_] is not exposed (undefined).
 */
export function escapePropertyName(name: string): string | undefined {
  if (name.length === 0 || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (!/^[A-Za-z0-9_.\-/]+$/.test(name)) return undefined;
  return name.replace(/__|[.\-/]/g, (m) => ({ __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' }[m] ?? m));
}

const typeOf = (s: OpenApiSchema): string => (Array.isArray(s.type) ? s.type[0] ?? '' : s.type ?? '');

/** The root of a resource always exposes apiVersion, kind, metadata.name and metadata.generateName (WithTypeAndObjectMeta). */
function withTypeAndObjectMeta(s: OpenApiSchema): OpenApiSchema {
  const p = s.properties ?? {};
  const isString = (x: OpenApiSchema | undefined) => !!x && (Array.isArray(x.type) ? x.type.includes('string') : x.type === 'string');
  const isObject = (x: OpenApiSchema | undefined) => !!x && (Array.isArray(x.type) ? x.type.includes('object') : x.type === 'object');
  const meta = p.metadata;
  if (isString(p.kind) && isString(p.apiVersion) && isObject(meta) && meta?.properties
    && isString(meta.properties.name) && isString(meta.properties.generateName)) return s;
  return {
    ...s,
    properties: {
      ...p,
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
    },
  };
}

/**
 * The CEL type of a filled-in schema (apiserver's SchemaDeclType), or undefined where upstream
 * exposes nothing: a schema without a type (x-kubernetes-preserve-unknown-fields alone, a
 * RawExtension), a list or map whose items are not exposed, an unknown type. int-or-string is
 * dyn; string formats byte, date, date-time and duration are bytes, timestamp and duration;
 * integer is int, number double. `name` names object types (`Deployment.spec.template`), `__idx__`
 * for list items and `__elem__` for map values, as cel-go's DeclTypes are named by path.
 */
export function schemaCelType(s: OpenApiSchema, isResourceRoot: boolean, name: string): CelType | undefined {
  if (s.format === 'int-or-string' || s['x-kubernetes-int-or-string']) return prim('dyn');
  const schema = isResourceRoot ? withTypeAndObjectMeta(s) : s;
  switch (typeOf(schema)) {
    case 'array': {
      if (!schema.items) return undefined;
      const elem = schemaCelType(schema.items, !!schema.items['x-kubernetes-embedded-resource'], `${name}.__idx__`);
      return elem ? { kind: 'list', elem } : undefined;
    }
    case 'object': {
      const ap = schema.additionalProperties;
      if (ap && typeof ap === 'object') {
        const value = schemaCelType(ap, !!ap['x-kubernetes-embedded-resource'], `${name}.__elem__`);
        return value ? { kind: 'map', value } : undefined;
      }
      const fields: Record<string, CelType> = {};
      for (const k of Object.keys(schema.properties ?? {}).sort()) {
        const p = schema.properties![k];
        const escaped = escapePropertyName(k);
        if (escaped === undefined) continue;
        const t = schemaCelType(p, !!p['x-kubernetes-embedded-resource'], `${name}.${escaped}`);
        if (t) fields[escaped] = t;
      }
      return { kind: 'object', name, fields };
    }
    case 'string':
      switch (schema.format) {
        case 'byte': return prim('bytes');
        case 'duration': return prim('google.protobuf.Duration');
        case 'date':
        case 'date-time': return prim('google.protobuf.Timestamp');
        default: return prim('string');
      }
    case 'boolean': return prim('bool');
    case 'number': return prim('double');
    case 'integer': return prim('int');
    default: return undefined;
  }
}

/** The resource's CEL type from its group version's document; undefined when the kind's schema is not there. */
export function kindCelType(doc: OpenApiDocument, gvk: GroupVersionKind): CelType | undefined {
  const s = resolveKindSchema(doc, gvk);
  // the library takes no one-letter type names
  return s ? schemaCelType(s, true, gvk.kind.length > 1 ? gvk.kind : `${gvk.kind}_`) : undefined;
}
