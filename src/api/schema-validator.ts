/**
 * JSON-Schema validation (ajv) of FlinkDeployment and FlinkSessionJob specs and statuses and of the internal state, with errors
 * that name the field and say how to fix it.
 *
 * The schemas are the TypeBox ones the CRD is generated from, so this is what the API server would
 * check, plus what a structural schema cannot express but ajv can (int-or-string quantities, int32
 * range). Unknown fields are not errors here: the API server prunes them (or rejects them under
 * `fieldValidation=Strict`), and specs recorded by other operator versions may carry fields this
 * one does not know.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { FlinkDeploymentSpecSchema } from './flink-deployment-spec.js';
import { FlinkDeploymentStatusV1beta1Schema, FlinkDeploymentStatusV1Schema } from './flink-deployment-status.js';
import { FlinkSessionJobSpecSchema } from './flink-session-job-spec.js';
import { FlinkSessionJobStatusV1beta1Schema, FlinkSessionJobStatusV1Schema } from './flink-session-job-status.js';
import { InternalStateSchema, SessionJobInternalStateSchema } from './internal-state.js';
import { plainJsonSchema } from './schema-builders.js';
import { withSharedSubschemas } from './schema-deduplication.js';

/** One problem with one field. */
export interface FieldError {
  /** Path of the field, e.g. `spec.job.parallelism`, `spec.flinkConfiguration["state.savepoints.dir"]`, `spec.job.args[2]`. */
  field: string;
  /** What is wrong and how to fix it, e.g. `must be at least 1, got 0; set it to 1 or more`. */
  message: string;
}

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv) => Ajv;

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
  addFormats(ajv);
  ajv.addVocabulary([
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-embedded-resource',
  ]);
  ajv.addKeyword({
    keyword: 'x-kubernetes-int-or-string',
    schemaType: 'boolean',
    errors: true,
    validate: function intOrString(schema: boolean, data: unknown): boolean {
      const ok = !schema || typeof data === 'string' || (typeof data === 'number' && Number.isInteger(data));
      if (!ok)
        (intOrString as unknown as { errors: Partial<ErrorObject>[] }).errors = [
          { keyword: 'x-kubernetes-int-or-string', message: 'must be an integer or a string', params: {} },
        ];
      return ok;
    },
  });
  return ajv;
}

const ajv = makeAjv();
const compiled = new Map<TSchema, ValidateFunction>();

function validatorFor(schema: TSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(withSharedSubschemas(plainJsonSchema(schema)));
    compiled.set(schema, fn);
  }
  return fn;
}

const SIMPLE_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `/job/args/2` under `spec` → `spec.job.args[2]`; keys with dots are bracketed and quoted. */
export function fieldPath(prefix: string, instancePath: string, extraKey?: string): string {
  const segments =
    instancePath === ''
      ? []
      : instancePath
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extraKey !== undefined) segments.push(extraKey);
  let out = prefix;
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else if (SIMPLE_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return typeof value;
}

function valueAt(root: unknown, instancePath: string): unknown {
  let node = root;
  if (instancePath === '') return node;
  for (const raw of instancePath.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a map of fields',
  array: 'a list',
};

function toFieldError(error: ErrorObject, prefix: string, root: unknown): FieldError {
  const value = valueAt(root, error.instancePath);
  const got = `got ${describe(value)}`;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: fieldPath(prefix, error.instancePath, String(p['missingProperty'])), message: 'is required; set it' };
    case 'type': {
      const wanted = String(p['type']);
      let hint = `; write it as ${TYPE_WORDS[wanted] ?? wanted}`;
      if (wanted === 'string' && (typeof value === 'number' || typeof value === 'boolean')) hint = `; quote it ("${String(value)}")`;
      else if ((wanted === 'integer' || wanted === 'number') && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
        hint = `; remove the quotes (${value.trim()})`;
      else if (wanted === 'boolean' && (value === 'true' || value === 'false')) hint = `; remove the quotes (${value})`;
      return { field: fieldPath(prefix, error.instancePath), message: `must be ${TYPE_WORDS[wanted] ?? wanted}, ${got}${hint}` };
    }
    case 'enum': {
      const allowed = (p['allowedValues'] as unknown[]).map((v) => String(v)).join(', ');
      return { field: fieldPath(prefix, error.instancePath), message: `must be one of ${allowed}, ${got}; use one of those values` };
    }
    case 'format':
      if (p['format'] === 'int32' || p['format'] === 'int64') {
        return {
          field: fieldPath(prefix, error.instancePath),
          message: `must be a ${String(p['format']).replace('int', '')}-bit whole number, ${got}; use a smaller value`,
        };
      }
      return { field: fieldPath(prefix, error.instancePath), message: `must be a valid ${String(p['format'])}, ${got}; fix its format` };
    case 'x-kubernetes-int-or-string':
      return { field: fieldPath(prefix, error.instancePath), message: `must be a whole number or a quantity string such as "500m" or "2Gi", ${got}; quote it` };
    case 'minimum':
    case 'maximum':
      return { field: fieldPath(prefix, error.instancePath), message: `${error.message ?? 'is out of range'}, ${got}; change the value` };
    default:
      return { field: fieldPath(prefix, error.instancePath), message: `${error.message ?? 'is invalid'}, ${got}` };
  }
}

function run(schema: TSchema, value: unknown, prefix: string): FieldError[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of validate.errors ?? []) {
    const fe = toFieldError(error, prefix, value);
    const key = `${fe.field}\u0000${fe.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(fe);
    }
  }
  return out;
}

/** Schema errors of a FlinkDeployment spec; fields are named from `spec`, e.g. `spec.job.parallelism`. */
export function validateSpecSchema(spec: unknown): FieldError[] {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    return [{ field: 'spec', message: `must be a map of fields, got ${describe(spec)}; write the spec as YAML fields (job, image, flinkVersion, ...)` }];
  }
  return run(FlinkDeploymentSpecSchema, spec, 'spec');
}

/** Schema errors of a FlinkSessionJob spec; fields are named from `spec`, e.g. `spec.job.parallelism`. */
export function validateSessionJobSpecSchema(spec: unknown): FieldError[] {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    return [{ field: 'spec', message: `must be a map of fields, got ${describe(spec)}; write the spec as YAML fields (deploymentName, job, ...)` }];
  }
  return run(FlinkSessionJobSpecSchema, spec, 'spec');
}

/** Schema errors of a FlinkSessionJob status in the layout of `version`; fields are named from `status`. */
export function validateSessionJobStatusSchema(status: unknown, version: 'v1' | 'v1beta1'): FieldError[] {
  if (typeof status !== 'object' || status === null || Array.isArray(status)) {
    return [{ field: 'status', message: `must be a map of fields, got ${describe(status)}` }];
  }
  return run(version === 'v1' ? FlinkSessionJobStatusV1Schema : FlinkSessionJobStatusV1beta1Schema, status, 'status');
}

/**
 * Schema errors of `value` against any schema of this folder, fields named from `prefix` (e.g.
 * `spec`); a value that is not a map gets one error, naming `fields` (what a map would hold) as
 * the fix. For kinds whose modules cannot be imported here without an import cycle (the
 * FlinkStateSnapshot schemas reach flink-session-job.ts, which imports spec-validation.ts, which
 * imports this module): flink-state-snapshot-validation.ts passes its schemas in.
 */
export function validateAgainstSchema(schema: TSchema, value: unknown, prefix: string, fields?: string): FieldError[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const hint = fields ? `; write the ${prefix} as YAML fields (${fields})` : '';
    return [{ field: prefix, message: `must be a map of fields, got ${describe(value)}${hint}` }];
  }
  return run(schema, value, prefix);
}

/** Schema errors of an internal state (the ConfigMap contents); fields are named from the state root, e.g. `savepointHistory[0].location`. */
export function validateInternalStateSchema(state: unknown): FieldError[] {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    return [{ field: '', message: `must be a map of fields, got ${describe(state)}` }];
  }
  return run(InternalStateSchema, state, '');
}

/** Schema errors of a FlinkSessionJob's internal state (its ConfigMap contents), named as validateInternalStateSchema names them. */
export function validateSessionJobInternalStateSchema(state: unknown): FieldError[] {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    return [{ field: '', message: `must be a map of fields, got ${describe(state)}` }];
  }
  return run(SessionJobInternalStateSchema, state, '');
}

/**
 * Schema errors of a status in the layout of `version` (what the API server would check on a
 * `/status` write through that version); fields are named from `status`.
 */
export function validateStatusSchema(status: unknown, version: 'v1' | 'v1beta1'): FieldError[] {
  if (typeof status !== 'object' || status === null || Array.isArray(status)) {
    return [{ field: 'status', message: `must be a map of fields, got ${describe(status)}` }];
  }
  return run(version === 'v1' ? FlinkDeploymentStatusV1Schema : FlinkDeploymentStatusV1beta1Schema, status, 'status');
}
