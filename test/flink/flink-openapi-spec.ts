/**
 * Flink's published OpenAPI 3.0 spec of the JobManager REST API
 * (/work/shared/reference/flink-rest-v1-dispatcher.yml, apache/flink
 * docs/static/generated/rest_v1_dispatcher.yml, `v1/1.19-SNAPSHOT`) compiled into ajv validators,
 * so tests can check recorded Flink REST exchanges (method, path, query, body; status, answer)
 * against the operation the spec defines.
 *
 * Guarantees:
 * - `checkRequest` finds the spec operation of a method + path (a literal segment wins over a
 *   `{param}`: `/jobs/overview` is not `/jobs/{jobid}`) and reports every path parameter, query
 *   parameter and body field that does not fit it; a method + path the spec does not have is a
 *   problem, never silently accepted.
 * - `checkResponse` reports a 2xx status the operation does not declare, an answer body that does
 *   not validate against the declared schema, and an error body (4xx/5xx) that is not Flink's
 *   `ErrorResponseBody`.
 * - `shapeDifferences` lists, per schema (`Schema.field`), the properties the spec declares that a
 *   body leaves out and the ones it has that the spec does not declare: the spec makes almost
 *   nothing `required`, so this is how tests see every field a simulated answer omits.
 *
 * OpenAPI 3.0 → JSON Schema (draft-07) adaptations, each matching what Flink itself does:
 * 1. `$ref: '#/components/schemas/X'` → `#/definitions/X` of one ajv document.
 * 2. `nullable: true` → `anyOf [schema, null]` (the 1.19 spec has none), plus `NULL_IN_FLINK`:
 *    properties Flink's Jackson mapper writes as `null` although the spec does not say so
 *    (`@Nullable` fields without `@JsonInclude(NON_NULL)`).
 * 3. `discriminator` (CheckpointStatistics on `className`, SubtaskCheckpointStatistics): `X`
 *    becomes "className is one of the mapping's keys, and then the mapped subtype"; the subtypes'
 *    `allOf` point at `X.base` (X without the discriminator), which breaks the cycle.
 * 4. `AsynchronousOperationResult.operation` is `oneOf` three open object schemas (the generator
 *    merged the generic `AsynchronousOperationResult<V>`): any object matches several, so `oneOf`
 *    would always fail. Each status operation gets its own result schema with its `V`
 *    (`OPERATION_INFO`): SavepointInfo, CheckpointInfo, AsynchronousOperationInfo.
 * 5. `pattern`s are anchored (`^…$`): they describe whole values (an AbstractID's 32 hex digits,
 *    JobID.fromHexString), while JSON Schema patterns match anywhere.
 * 6. The OpenAPI formats `int32`, `int64`, `double`, `binary` are registered (integers in range;
 *    any number; any string).
 * 7. `MetricCollectionResponseBody` is a bare array of Metric: Flink serializes it with its own
 *    serializer as a JSON list (MetricCollectionResponseBody.Serializer), not as the
 *    `{"metrics": [...]}` object the generator derived from the class's field.
 * 8. Error answers are `ErrorResponseBody` (`{"errors": [string, ...]}`, flink-runtime
 *    rest/messages/ErrorResponseBody.java), which the spec does not list.
 * 9. An operation without response content answers `EmptyResponseBody`, serialized as `{}`.
 * 10. Request bodies are closed (`additionalProperties: false`): Flink reads them with Jackson's
 *    default FAIL_ON_UNKNOWN_PROPERTIES (RestMapperUtils.getStrictObjectMapper) and answers 400
 *    `Request did not match expected format <Class>.` (AbstractHandler) to an unknown field. An
 *    empty body is read as `{}` (AbstractHandler), so it is always valid.
 * 11. Query parameter `mode` of cancelJob compares case-insensitively: Flink's
 *    TerminationModeQueryParameter converts with `TerminationMode.valueOf(value.toUpperCase())`
 *    and itself sends `value.name().toLowerCase()` (`mode=cancel`).
 * 12. A file upload (`uploadJar`: request content `application/x-java-archive`, binary) travels
 *    as `multipart/form-data` with the jar as a file part: Flink's FileUploadHandler takes uploads
 *    only from multipart bodies (the endpoint's description says so; the generator recorded the
 *    part's type). `checkRequest` requires such an exchange's `contentType` to be multipart, and
 *    the recorded exchange carries no JSON body.
 * Response objects stay open, as the spec states them (no `additionalProperties: false`):
 * undeclared fields are reported by `shapeDifferences`, not as validation errors.
 *
 * Caveats: only `application/json` content is compiled; of a multipart upload only the content
 * type is checked, not its parts (JarUploadHandler's own checks are the simulation's tests). Query
 * values are converted by the parameter's schema type (integer, boolean, string) before
 * validation, as Flink's MessageQueryParameter converters do; list-valued parameters are split at
 * ',' only where the spec says "Comma-separated list" (metrics `get` is a plain string there).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

export const FLINK_OPENAPI_SPEC_FILE = '/work/shared/reference/flink-rest-v1-dispatcher.yml';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv) => Ajv;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaNode = Record<string, unknown>;

/** One HTTP exchange with the Flink REST API, as a test recorded it. */
export interface FlinkRestExchange {
  readonly method: string;
  /** Path without query, e.g. `/jobs/<id>/savepoints`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Parsed JSON body of the request; undefined when it had none (or it was a multipart upload). */
  readonly body?: unknown;
  /** The request's Content-Type header, when it had one. */
  readonly contentType?: string;
  readonly status: number;
  /** Parsed JSON answer; undefined when empty. */
  readonly response?: unknown;
}

export interface SpecParameter {
  readonly name: string;
  readonly in: 'path' | 'query';
  readonly required: boolean;
  readonly schema: SchemaNode;
  readonly description: string;
}

export interface SpecOperation {
  readonly method: string;
  /** The spec's path template, e.g. `/jobs/{jobid}/savepoints/{triggerid}`. */
  readonly template: string;
  readonly operationId: string;
  readonly parameters: readonly SpecParameter[];
  /** Definition name of the JSON request body, if the operation has one. */
  readonly requestSchema?: string;
  /** The content type of a file the operation takes (adaptation 12), e.g. `application/x-java-archive`. */
  readonly uploadContentType?: string;
  /** Declared success statuses → definition name of the answer (undefined: no content, `{}`). */
  readonly responses: ReadonlyMap<number, string | undefined>;
}

/** Per status operation, the `V` of its AsynchronousOperationResult<V> (adaptation 4). */
export const OPERATION_INFO: Readonly<Record<string, string>> = {
  getSavepointStatus: 'SavepointInfo',
  getCheckpointStatus: 'CheckpointInfo',
  getSavepointDisposalStatus: 'AsynchronousOperationInfo',
};

/**
 * `Schema.property` that Flink writes as `null` (adaptation 2), with the Flink class saying so:
 * AsynchronousOperationResult (`@Nullable V operation`, null while IN_PROGRESS);
 * CheckpointingStatistics.LatestCheckpoints (four `@Nullable` fields, no NON_NULL);
 * CompletedCheckpointStatistics.externalPath, FailedCheckpointStatistics.failureMessage,
 * RestoredCheckpointStatistics.externalPath (`@Nullable`); JobExceptionsInfoWithHistory
 * (`new JobExceptionsInfoWithHistory(history)` passes null root exception and timestamp).
 */
export const NULL_IN_FLINK: readonly string[] = [
  'AsynchronousOperationResult.operation',
  'LatestCheckpoints.completed',
  'LatestCheckpoints.savepoint',
  'LatestCheckpoints.failed',
  'LatestCheckpoints.restored',
  'CompletedCheckpointStatistics.external_path',
  'FailedCheckpointStatistics.failure_message',
  'RestoredCheckpointStatistics.external_path',
  'JobExceptionsInfoWithHistory.root-exception',
  'JobExceptionsInfoWithHistory.timestamp',
];

/** Query parameters Flink converts case-insensitively (adaptation 11): operationId → names. */
const CASE_INSENSITIVE_QUERY: Readonly<Record<string, readonly string[]>> = { cancelJob: ['mode'] };

const ERROR_RESPONSE_BODY = 'ErrorResponseBody';
const EMPTY_RESPONSE_BODY = 'EmptyResponseBody';
const DOCUMENT_ID = 'flink-rest-v1';

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refName(ref: unknown): string | undefined {
  return typeof ref === 'string' ? ref.split('/').pop() : undefined;
}

/** OpenAPI schema → JSON Schema: refs, nullable, anchored patterns (adaptations 1, 2, 5). */
function convert(node: unknown, discriminated: ReadonlySet<string>, inAllOf = false): unknown {
  if (Array.isArray(node)) return node.map((n) => convert(n, discriminated, inAllOf));
  if (!isNode(node)) return node;
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref') {
      const name = refName(value)!;
      out.$ref = `#/definitions/${inAllOf && discriminated.has(name) ? `${name}.base` : name}`;
    } else if (key === 'pattern' && typeof value === 'string') {
      out.pattern = `^(?:${value})$`;
    } else if (key === 'nullable' || key === 'discriminator') {
      // nullable: below; discriminator: convertDiscriminators
    } else if (key === 'properties' && isNode(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v, discriminated)]));
    } else if (key === 'allOf' && Array.isArray(value)) {
      out.allOf = value.map((member) => convert(member, discriminated, true));
    } else {
      out[key] = convert(value, discriminated);
    }
  }
  if (node.nullable === true) return { anyOf: [out, { type: 'null' }] };
  return out;
}

/** Finds property `name` of a converted definition, also inside its `allOf` members. */
function propertyHolder(definition: SchemaNode, name: string): Record<string, unknown> | undefined {
  const own = definition.properties;
  if (isNode(own) && name in own) return own;
  for (const member of Array.isArray(definition.allOf) ? definition.allOf : []) {
    if (isNode(member) && isNode(member.properties) && name in member.properties) return member.properties;
  }
  return undefined;
}

export interface ShapeDifferences {
  /** `Schema.field` the spec declares and the body leaves out. */
  readonly missing: ReadonlySet<string>;
  /** `Schema.field` the body has and the spec does not declare. */
  readonly extra: ReadonlySet<string>;
}

export class FlinkOpenApiSpec {
  readonly version: string;
  readonly operations: readonly SpecOperation[];
  private readonly definitions: Record<string, SchemaNode>;
  /** Discriminated definitions: property and value → mapped definition (adaptation 3). */
  private readonly polymorphic = new Map<string, { property: string; mapping: Record<string, string> }>();
  private readonly ajv: Ajv;
  /** Request-body and parameter validators, by definition name / parameter schema text. */
  private readonly compiled = new Map<string, ValidateFunction>();

  static load(file: string = FLINK_OPENAPI_SPEC_FILE): FlinkOpenApiSpec {
    return new FlinkOpenApiSpec(parseYaml(readFileSync(file, 'utf8')) as SchemaNode);
  }

  constructor(document: SchemaNode) {
    const info = document.info as { version?: string } | undefined;
    this.version = info?.version ?? 'unknown';
    const components = (document.components as { schemas?: Record<string, SchemaNode> } | undefined)?.schemas ?? {};
    const discriminated = new Set(
      Object.entries(components)
        .filter(([, s]) => isNode(s.discriminator))
        .map(([name]) => name),
    );
    const definitions: Record<string, SchemaNode> = {};
    for (const [name, schema] of Object.entries(components)) definitions[name] = convert(schema, discriminated) as SchemaNode;
    for (const name of discriminated) this.convertDiscriminator(name, components[name], definitions);
    for (const [name, info] of Object.entries(OPERATION_INFO))
      definitions[`AsynchronousOperationResult.${info}`] = this.operationResult(definitions, info, name);
    definitions.MetricCollectionResponseBody = { type: 'array', items: { $ref: '#/definitions/Metric' } };
    definitions[ERROR_RESPONSE_BODY] = {
      type: 'object',
      required: ['errors'],
      additionalProperties: false,
      properties: { errors: { type: 'array', items: { type: 'string' } } },
    };
    definitions[EMPTY_RESPONSE_BODY] = { type: 'object', additionalProperties: false, properties: {} };
    for (const entry of NULL_IN_FLINK) {
      const [schema, property] = entry.split('.');
      const names = schema === 'AsynchronousOperationResult' ? Object.values(OPERATION_INFO).map((i) => `${schema}.${i}`) : [schema];
      for (const name of names) {
        const holder = definitions[name] ? propertyHolder(definitions[name], property) : undefined;
        if (!holder) throw new Error(`NULL_IN_FLINK names ${entry}, which the spec does not have`);
        holder[property] = { anyOf: [holder[property], { type: 'null' }] };
      }
    }
    this.definitions = definitions;

    this.ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
    addFormats(this.ajv);
    this.ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
    // Long.MAX_VALUE (e.g. a disabled checkpoint interval) arrives as 2^63 after JSON.parse.
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 63) && n <= 2 ** 63 });
    this.ajv.addFormat('double', { type: 'number', validate: () => true });
    this.ajv.addFormat('binary', { type: 'string', validate: () => true });
    this.ajv.addSchema({ $id: DOCUMENT_ID, definitions });

    this.operations = this.readOperations(document);
  }

  /** `X` = "discriminator value, then the mapped subtype"; `X.base` = X without it (adaptation 3). */
  private convertDiscriminator(name: string, original: SchemaNode, definitions: Record<string, SchemaNode>): void {
    const { propertyName, mapping } = original.discriminator as { propertyName: string; mapping: Record<string, string> };
    const base = definitions[name];
    definitions[`${name}.base`] = base;
    const mapped = Object.fromEntries(Object.entries(mapping).map(([value, ref]) => [value, refName(ref)!]));
    this.polymorphic.set(name, { property: propertyName, mapping: mapped });
    definitions[name] = {
      type: 'object',
      required: [propertyName],
      properties: { [propertyName]: { enum: Object.keys(mapped) } },
      allOf: Object.entries(mapped).map(([value, target]) => ({
        if: { properties: { [propertyName]: { const: value } } },
        then: { $ref: `#/definitions/${target}` },
      })),
    };
  }

  /** AsynchronousOperationResult with `operation` of one type (adaptation 4). */
  private operationResult(definitions: Record<string, SchemaNode>, info: string, operationId: string): SchemaNode {
    const generic = definitions.AsynchronousOperationResult;
    const properties = { ...(generic.properties as Record<string, unknown>) };
    const operation = properties.operation as { oneOf?: Array<{ $ref?: string }> };
    if (!operation.oneOf?.some((branch) => refName(branch.$ref) === info)) {
      throw new Error(`${operationId}: AsynchronousOperationResult.operation has no ${info} branch in this spec`);
    }
    properties.operation = { $ref: `#/definitions/${info}` };
    return { ...generic, properties };
  }

  private readOperations(document: SchemaNode): SpecOperation[] {
    const operations: SpecOperation[] = [];
    for (const [template, item] of Object.entries((document.paths as Record<string, Record<string, SchemaNode>>) ?? {})) {
      for (const [method, op] of Object.entries(item)) {
        const operationId = String(op.operationId);
        const parameters = ((op.parameters as SchemaNode[] | undefined) ?? []).map((p) => ({
          name: String(p.name),
          in: p.in as 'path' | 'query',
          required: p.required === true,
          schema: convert(p.schema, new Set()) as SchemaNode,
          description: typeof p.description === 'string' ? p.description : '',
        }));
        const content = (op.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content;
        const requestRef = refName(content?.['application/json']?.schema?.$ref);
        const upload = Object.entries(content ?? {}).find(([type, media]) => type !== 'application/json' && media.schema?.format === 'binary')?.[0];
        const responses = new Map<number, string | undefined>();
        for (const [status, response] of Object.entries((op.responses as Record<string, SchemaNode>) ?? {})) {
          const body = (response.content as Record<string, { schema?: SchemaNode }> | undefined)?.['application/json']?.schema;
          const name = refName(body?.$ref);
          responses.set(
            Number(status),
            name === 'AsynchronousOperationResult' && OPERATION_INFO[operationId] ? `${name}.${OPERATION_INFO[operationId]}` : name,
          );
        }
        operations.push({
          method: method.toUpperCase(),
          template,
          operationId,
          parameters,
          ...(requestRef ? { requestSchema: requestRef } : {}),
          ...(upload ? { uploadContentType: upload } : {}),
          responses,
        });
      }
    }
    return operations;
  }

  /** The spec operation of `method path` and its path parameters; literal segments win. */
  find(method: string, path: string): { operation: SpecOperation; pathParams: Record<string, string> } | undefined {
    const segments = path.split('/').filter((s) => s !== '');
    let best: { operation: SpecOperation; pathParams: Record<string, string>; literals: number } | undefined;
    for (const operation of this.operations) {
      if (operation.method !== method.toUpperCase()) continue;
      const parts = operation.template.split('/').filter((s) => s !== '');
      if (parts.length !== segments.length) continue;
      const pathParams: Record<string, string> = {};
      let literals = 0;
      let matches = true;
      for (let i = 0; i < parts.length && matches; i++) {
        const param = /^\{(.+)\}$/.exec(parts[i]);
        if (param) pathParams[param[1]] = decodeURIComponent(segments[i]);
        else if (parts[i] === segments[i]) literals++;
        else matches = false;
      }
      if (matches && (!best || literals > best.literals)) best = { operation, pathParams, literals };
    }
    return best && { operation: best.operation, pathParams: best.pathParams };
  }

  /** The compiled validator of a definition (compiles on first use). */
  validator(definition: string): ValidateFunction {
    const fn = this.ajv.getSchema(`${DOCUMENT_ID}#/definitions/${definition}`);
    if (!fn) throw new Error(`no definition ${definition} in the compiled spec`);
    return fn;
  }

  /** Closed variant of a request body definition (adaptation 10). */
  private requestValidator(definition: string): ValidateFunction {
    const key = `request ${definition}`;
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile({ allOf: [{ $ref: `${DOCUMENT_ID}#/definitions/${definition}` }], ...this.closedKeys(definition) });
      this.compiled.set(key, fn);
    }
    return fn;
  }

  private closedKeys(definition: string): SchemaNode {
    const properties = this.definitions[definition].properties as Record<string, unknown> | undefined;
    return { properties: Object.fromEntries(Object.keys(properties ?? {}).map((k) => [k, true])), additionalProperties: false };
  }

  /** Compiles the request and response schemas of `operation` (fails if one does not compile). */
  compile(operation: SpecOperation): void {
    if (operation.requestSchema) this.requestValidator(operation.requestSchema);
    for (const definition of operation.responses.values()) this.validator(definition ?? EMPTY_RESPONSE_BODY);
    this.validator(ERROR_RESPONSE_BODY);
  }

  /** Problems of the request half of `exchange` against the spec; [] when it conforms. */
  checkRequest(exchange: Pick<FlinkRestExchange, 'method' | 'path' | 'query' | 'body' | 'contentType'>): string[] {
    const label = `${exchange.method} ${exchange.path}`;
    const found = this.find(exchange.method, exchange.path);
    if (!found) return [`${label}: the spec (${this.version}) has no such operation`];
    const { operation, pathParams } = found;
    const problems: string[] = [];
    for (const p of operation.parameters.filter((q) => q.in === 'path')) {
      problems.push(...this.checkValue(`${label}: path parameter ${p.name}`, p.schema, pathParams[p.name]));
    }
    const declared = new Map(operation.parameters.filter((q) => q.in === 'query').map((q) => [q.name, q]));
    for (const name of new Set(exchange.query.keys())) {
      const parameter = declared.get(name);
      if (!parameter) {
        problems.push(`${label}: query parameter ${name} is not one of ${operation.operationId}'s (${[...declared.keys()].join(', ') || 'none'})`);
        continue;
      }
      const caseInsensitive = CASE_INSENSITIVE_QUERY[operation.operationId]?.includes(name) ?? false;
      for (const raw of exchange.query.getAll(name)) {
        const values = /comma-separated list/i.test(parameter.description) ? raw.split(',') : [raw];
        for (const value of values) {
          problems.push(...this.checkValue(`${label}: query parameter ${name}`, parameter.schema, caseInsensitive ? value.toUpperCase() : value));
        }
      }
    }
    for (const p of declared.values()) if (p.required && !exchange.query.has(p.name)) problems.push(`${label}: required query parameter ${p.name} missing`);
    if (operation.uploadContentType && !/^multipart\/form-data\s*;/i.test(exchange.contentType ?? '')) {
      problems.push(
        `${label}: ${operation.operationId} takes a ${operation.uploadContentType} file as multipart/form-data (FileUploadHandler), not ${exchange.contentType ?? 'no body'}`,
      );
    }
    if (exchange.body !== undefined) {
      if (operation.requestSchema)
        problems.push(...explain(`${label}: body (${operation.requestSchema})`, this.requestValidator(operation.requestSchema), exchange.body));
      else if (!(isNode(exchange.body) && Object.keys(exchange.body).length === 0))
        problems.push(`${label}: ${operation.operationId} takes no body (EmptyRequestBody)`);
    }
    return problems;
  }

  /** Problems of the answer half of `exchange`; [] when it conforms. */
  checkResponse(exchange: FlinkRestExchange): string[] {
    const label = `${exchange.method} ${exchange.path} → ${exchange.status}`;
    const found = this.find(exchange.method, exchange.path);
    if (!found) return [`${exchange.method} ${exchange.path}: the spec (${this.version}) has no such operation`];
    const { operation } = found;
    if (exchange.status >= 400) return explain(`${label}: error body`, this.validator(ERROR_RESPONSE_BODY), exchange.response);
    if (!operation.responses.has(exchange.status)) {
      return [`${label}: ${operation.operationId} answers ${[...operation.responses.keys()].join('/')} in the spec, not ${exchange.status}`];
    }
    const definition = operation.responses.get(exchange.status) ?? EMPTY_RESPONSE_BODY;
    return explain(`${label}: body (${definition})`, this.validator(definition), exchange.response ?? {});
  }

  /** The answer body's fields against the declared schema's properties (see ShapeDifferences). */
  shapeDifferences(exchange: FlinkRestExchange): ShapeDifferences {
    const missing = new Set<string>();
    const extra = new Set<string>();
    const found = this.find(exchange.method, exchange.path);
    const definition = found && exchange.status < 300 ? found.operation.responses.get(exchange.status) : undefined;
    if (definition) this.walk({ $ref: `#/definitions/${definition}` }, exchange.response as Json, definition, missing, extra);
    return { missing, extra };
  }

  private walk(node: unknown, data: Json | undefined, owner: string, missing: Set<string>, extra: Set<string>): void {
    if (data === null || data === undefined || !isNode(node)) return;
    if (typeof node.$ref === 'string') {
      const name = refName(node.$ref)!;
      const poly = this.polymorphic.get(name);
      if (poly && isNode(data)) {
        const tag = data[poly.property];
        const target = typeof tag === 'string' ? poly.mapping[tag] : undefined;
        if (target) this.walk({ $ref: `#/definitions/${target}` }, data, target, missing, extra);
        return;
      }
      this.walk(this.definitions[name], data, name.replace(/\.base$/, ''), missing, extra);
      return;
    }
    if (Array.isArray(node.anyOf)) {
      for (const branch of node.anyOf) if (isNode(branch) && branch.type !== 'null') this.walk(branch, data, owner, missing, extra);
      return;
    }
    if (Array.isArray(data)) {
      for (const item of data) this.walk(node.items, item, owner, missing, extra);
      return;
    }
    if (!isNode(data)) return;
    const properties = this.collectProperties(node, owner);
    if (properties.size === 0) {
      if (isNode(node.additionalProperties)) for (const value of Object.values(data)) this.walk(node.additionalProperties, value, `${owner}.*`, missing, extra);
      return;
    }
    for (const [name, { schema, holder }] of properties) {
      if (!(name in data)) missing.add(`${holder}.${name}`);
      else this.walk(schema, data[name], isNode(schema) && typeof schema.$ref === 'string' ? owner : `${holder}.${name}`, missing, extra);
    }
    for (const key of Object.keys(data)) if (!properties.has(key)) extra.add(`${owner}.${key}`);
  }

  /** Properties of an object schema, own and from `allOf` members, with the schema declaring each. */
  private collectProperties(node: SchemaNode, holder: string): Map<string, { schema: unknown; holder: string }> {
    const out = new Map<string, { schema: unknown; holder: string }>();
    const add = (props: unknown, from: string) => {
      if (isNode(props)) for (const [k, v] of Object.entries(props)) if (!out.has(k)) out.set(k, { schema: v, holder: from });
    };
    add(node.properties, holder);
    for (const member of Array.isArray(node.allOf) ? node.allOf : []) {
      if (!isNode(member)) continue;
      if (typeof member.$ref === 'string') {
        const name = refName(member.$ref)!;
        for (const [k, v] of this.collectProperties(this.definitions[name], name.replace(/\.base$/, ''))) if (!out.has(k)) out.set(k, v);
      } else add(member.properties, holder);
    }
    return out;
  }

  private checkValue(label: string, schema: SchemaNode, raw: string | undefined): string[] {
    if (raw === undefined) return [`${label} missing`];
    const target = typeof schema.$ref === 'string' ? this.definitions[refName(schema.$ref)!] : schema;
    let value: unknown = raw;
    if (target?.type === 'integer' || target?.type === 'number') value = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    if (target?.type === 'boolean') value = raw === 'true' ? true : raw === 'false' ? false : raw;
    const key = `value ${JSON.stringify(schema)}`;
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(rebase(schema));
      this.compiled.set(key, fn);
    }
    return explain(`${label} "${raw}"`, fn, value);
  }
}

/** A parameter schema's local refs pointed at the shared document. */
function rebase(schema: SchemaNode): SchemaNode {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/definitions/', `"${DOCUMENT_ID}#/definitions/`)) as SchemaNode;
}

function explain(label: string, validate: ValidateFunction, data: unknown): string[] {
  if (validate(data)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${label}: ${e.instancePath || '/'} ${e.message ?? e.keyword}${paramsText(e)}`);
}

function paramsText(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (typeof p.additionalProperty === 'string') return ` (${p.additionalProperty})`;
  if (p.allowedValues) return ` (${JSON.stringify(p.allowedValues)})`;
  return '';
}
