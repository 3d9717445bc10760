/**
 * Structural OpenAPI v3 schemas of CRDs: pruning, defaulting and validation, as
 * apiextensions-apiserver applies them (pkg/apiserver/schema/{pruning,defaulting},
 * kube-openapi validate).
 *
 * Guarantees:
 * - {@link pruneAndDefault} removes every field the schema does not declare (apiVersion, kind and
 *   metadata stay at the root and at x-kubernetes-embedded-resource nodes), keeps subtrees under
 *   x-kubernetes-preserve-unknown-fields (resuming pruning under any `properties` they list),
 *   drops `null` where the schema is not `nullable`, then applies `default`s to absent fields.
 *   It reports the pruned paths so fieldValidation=Strict can reject them.
 * - {@link validateValue} reports errors worded as the real server's (`spec.replicas in body should
 *   be less than or equal to 10`), with the field path `spec.items[0].name`.
 * - x-kubernetes-list-type set/map uniqueness is checked (`Duplicate value: ...`), and the
 *   int32 and date-time formats.
 * Caveats: not supported: oneOf/anyOf/allOf/not, other `format`s. x-kubernetes-validations (CEL)
 * are evaluated by crd-validation-rules.ts.
 * Non-structural schemas are accepted as is.
 */
import { invalidValue, notSupported, renderValue, requiredValue, type FieldError } from './errors.js';
import { cloneJson, isJsonObject, textOf, type JsonObject, type JsonValue } from './json-clone.js';

export type Schema = JsonObject;

const EMPTY_SCHEMA: Schema = Object.freeze({});

/**
 * A schema node as the pruner and validator read it: an object is a schema; another truthy value
 * (a malformed node such as `true`) reads like an empty schema, as every keyword lookup on it finds
 * nothing; a falsy one is no schema.
 */
export function schemaOf(node: JsonValue | undefined): Schema | undefined {
  if (isJsonObject(node)) return node;
  return node ? EMPTY_SCHEMA : undefined;
}

function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

const ROOT_KEPT = new Set(['apiVersion', 'kind', 'metadata']);

export interface PruneResult {
  /** paths of the fields that were removed as unknown */
  unknownFields: string[];
}

/**
 * Prunes and defaults `obj` (a whole custom object) in place against the version's
 * openAPIV3Schema. `obj` must be a private copy.
 */
export function pruneAndDefault(obj: JsonObject, schema: Schema | undefined, applyDefaults = true): PruneResult {
  const result: PruneResult = { unknownFields: [] };
  if (!schema) return result;
  pruneObject(obj, schema, '', true, result, applyDefaults);
  return result;
}

function pruneNode(value: JsonValue | undefined, schema: Schema | undefined, path: string, result: PruneResult, applyDefaults: boolean): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (isJsonObject(items)) {
      for (let i = 0; i < value.length; i++) {
        const itemPath = `${path}[${i}]`;
        if (value[i] === null && !items.nullable && !items['x-kubernetes-preserve-unknown-fields']) continue;
        pruneNode(value[i], items, itemPath, result, applyDefaults);
      }
    }
    return;
  }
  if (isJsonObject(value)) pruneObject(value, schema, path, !!schema['x-kubernetes-embedded-resource'], result, applyDefaults);
}

function pruneObject(obj: JsonObject, schema: Schema, path: string, keepMeta: boolean, result: PruneResult, applyDefaults: boolean): void {
  const props: JsonObject | undefined = isJsonObject(schema.properties) ? schema.properties : undefined;
  const additional = schema.additionalProperties;
  const preserve = !!schema['x-kubernetes-preserve-unknown-fields'];
  for (const key of Object.keys(obj)) {
    const p = childPath(path, key);
    // apiVersion, kind and metadata of the object (and of embedded resources) are never pruned by
    // the schema: ObjectMeta has its own decoding, as in apiextensions-apiserver.
    if (keepMeta && ROOT_KEPT.has(key)) continue;
    let child: Schema | undefined;
    if (props && Object.prototype.hasOwnProperty.call(props, key)) child = schemaOf(props[key]);
    else if (isJsonObject(additional)) child = additional;
    else if (additional === true || preserve) {
      // kept as is, unpruned
      continue;
    } else {
      delete obj[key];
      result.unknownFields.push(p);
      continue;
    }
    if (obj[key] === null && child && !child.nullable) {
      delete obj[key];
      continue;
    }
    pruneNode(obj[key], child, p, result, applyDefaults);
  }
  if (applyDefaults && props) {
    for (const [key, child] of Object.entries(props)) {
      if (obj[key] === undefined && isJsonObject(child) && child.default !== undefined) {
        obj[key] = cloneJson(child.default);
        pruneNode(obj[key], child, childPath(path, key), { unknownFields: [] }, applyDefaults);
      }
    }
  }
}

function typeName(v: JsonValue | undefined): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: JsonValue | undefined, type: string): boolean {
  switch (type) {
    case 'object':
      return isJsonObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

/** Validates `value` (at `path`) against `schema`; appends errors. */
export function validateValue(value: JsonValue | undefined, schema: Schema | undefined, path: string, errors: FieldError[]): void {
  if (!schema) return;
  if (value === null) {
    if (!schema.nullable && schema.type && !schema['x-kubernetes-preserve-unknown-fields']) {
      errors.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        text: `Invalid value: "null": ${path} in body must be of type ${textOf(schema.type)}: "null"`,
      });
    }
    return;
  }
  if (schema['x-kubernetes-int-or-string']) {
    if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) {
      errors.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        text: `Invalid value: "${typeName(value)}": ${path} in body must be of type integer,string: "${typeName(value)}"`,
      });
      return;
    }
  } else if (typeof schema.type === 'string' && !typeMatches(value, schema.type)) {
    errors.push({
      type: 'FieldValueTypeInvalid',
      field: path,
      text: `Invalid value: "${typeName(value)}": ${path} in body must be of type ${schema.type}: "${typeName(value)}"`,
    });
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(notSupported(path, value, schema.enum));
  }
  if (typeof value === 'number') {
    if (typeof schema.maximum === 'number') {
      if (schema.exclusiveMaximum === true ? value >= schema.maximum : value > schema.maximum) {
        errors.push(
          invalidValue(path, value, `${path} in body should be less than ${schema.exclusiveMaximum === true ? '' : 'or equal to '}${schema.maximum}`),
        );
      }
    }
    if (typeof schema.minimum === 'number') {
      if (schema.exclusiveMinimum === true ? value <= schema.minimum : value < schema.minimum) {
        errors.push(
          invalidValue(path, value, `${path} in body should be greater than ${schema.exclusiveMinimum === true ? '' : 'or equal to '}${schema.minimum}`),
        );
      }
    }
    if (schema.format === 'int32' && Number.isInteger(value) && (value > 2147483647 || value < -2147483648)) {
      errors.push(invalidValue(path, value, `${path} in body must be of type int32: "${value}"`));
    }
    if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0 && Math.abs(value / schema.multipleOf - Math.round(value / schema.multipleOf)) > 1e-9) {
      errors.push(invalidValue(path, value, `${path} in body should be a multiple of ${schema.multipleOf}`));
    }
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (typeof schema.maxLength === 'number' && len > schema.maxLength) {
      errors.push({ type: 'FieldValueTooLong', field: path, text: `Too long: may not be more than ${schema.maxLength} bytes` });
    }
    if (typeof schema.minLength === 'number' && len < schema.minLength) {
      errors.push(invalidValue(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
    }
    if (typeof schema.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = undefined;
      }
      if (re && !re.test(value)) errors.push(invalidValue(path, value, `${path} in body should match '${schema.pattern}'`));
    }
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value)) && value !== '') {
      errors.push(invalidValue(path, value, `${path} in body must be of type date-time: "${value}"`));
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
      errors.push({ type: 'FieldValueTooMany', field: path, text: `Too many: ${value.length}: must have at most ${schema.maxItems} items` });
    }
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
      errors.push(invalidValue(path, value, `${path} in body should have at least ${schema.minItems} items`));
    }
    const items = schema.items;
    if (isJsonObject(items)) value.forEach((item, i) => validateValue(item, items, `${path}[${i}]`, errors));
    validateListType(value, schema, path, errors);
  }
  if (isJsonObject(value)) {
    const props: JsonObject = isJsonObject(schema.properties) ? schema.properties : {};
    for (const req of Array.isArray(schema.required) ? schema.required.map(textOf) : []) {
      if (value[req] === undefined) errors.push(requiredValue(childPath(path, req)));
    }
    if (typeof schema.maxProperties === 'number' && Object.keys(value).length > schema.maxProperties) {
      errors.push({ type: 'FieldValueTooMany', field: path, text: `Too many: ${Object.keys(value).length}: must have at most ${schema.maxProperties} items` });
    }
    if (typeof schema.minProperties === 'number' && Object.keys(value).length < schema.minProperties) {
      errors.push(invalidValue(path, value, `${path} in body should have at least ${schema.minProperties} properties`));
    }
    for (const [key, child] of Object.entries(value)) {
      if ((!path || schema['x-kubernetes-embedded-resource']) && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) continue;
      const own = props[key];
      const childSchema =
        own !== undefined && own !== null ? schemaOf(own) : isJsonObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
      validateValue(child, childSchema, childPath(path, key), errors);
    }
  }
}

/** Go's `%#v` of a map[string]interface{}, as field.Duplicate renders list-map keys. */
function goMapLiteral(m: JsonObject): string {
  return `map[string]interface {}{${Object.keys(m)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${typeof m[k] === 'string' ? JSON.stringify(m[k]) : textOf(m[k])}`)
    .join(', ')}}`;
}

/** x-kubernetes-list-type set (unique items) and map (unique x-kubernetes-list-map-keys). */
function validateListType(list: JsonValue[], schema: Schema, path: string, errors: FieldError[]): void {
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set') {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      const key = JSON.stringify(item);
      if (seen.has(key)) errors.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, text: `Duplicate value: ${renderValue(item)}` });
      seen.add(key);
    });
  } else if (listType === 'map' && Array.isArray(schema['x-kubernetes-list-map-keys'])) {
    const keys = schema['x-kubernetes-list-map-keys'].map(textOf);
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (!isJsonObject(item)) return;
      const keyMap: JsonObject = {};
      for (const k of keys) if (item[k] !== undefined) keyMap[k] = item[k];
      const key = JSON.stringify(keys.map((k) => item[k]));
      if (seen.has(key)) errors.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, text: `Duplicate value: ${goMapLiteral(keyMap)}` });
      seen.add(key);
    });
  }
}

/** Validates a whole custom object (the root fields other than apiVersion/kind/metadata). */
export function validateObject(obj: JsonObject, schema: Schema | undefined): FieldError[] {
  const errors: FieldError[] = [];
  if (schema) validateValue(obj, schema, '', errors);
  return errors;
}

/** True when the schema (or any of its nodes) lists a `default`. */
export function schemaHasDefaults(schema: JsonValue | undefined): boolean {
  if (!isJsonObject(schema)) return false;
  if (schema.default !== undefined) return true;
  if (isJsonObject(schema.properties)) for (const c of Object.values(schema.properties)) if (schemaHasDefaults(c)) return true;
  if (isJsonObject(schema.items) && schemaHasDefaults(schema.items)) return true;
  if (isJsonObject(schema.additionalProperties) && schemaHasDefaults(schema.additionalProperties)) return true;
  return false;
}
