/**
 * CRD validation rules (`x-kubernetes-validations`): checked when a CRD is written, evaluated on
 * every write of a custom object, as kube-apiserver 1.33 does
 * (apiextensions-apiserver pkg/apiserver/schema/cel/{validation,compilation}.go,
 * pkg/apis/apiextensions/validation/validation.go, pkg/registry/customresource/strategy.go,
 * k8s.io/apiserver/pkg/cel/common/equality.go; docs: "Validation rules" in
 * https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/).
 *
 * Guarantees:
 * - rules run at every schema node (root, properties, items, additionalProperties) where the value
 *   is present and not null, `self` being that value as the node's schema types it: only declared
 *   properties are visible (undeclared data under x-kubernetes-preserve-unknown-fields is not, and
 *   a rule selecting an undeclared field does not compile: `undefined field 'x'`), property names
 *   are escaped (`foo-bar` is `self.foo__dash__bar`), and at the root (and embedded resources)
 *   `self.metadata` has only `name` and `generateName`;
 * - a rule naming `oldSelf` (transition rule) runs only on UPDATE and only where the old object
 *   has a value at the same path (list items correlate only in x-kubernetes-list-type map lists,
 *   by their keys; map values by key);
 * - errors are worded as the real server's: `spec.replicas: Invalid value: "integer": <message>`
 *   (the node's type, not the value, as 1.33/1.34 print it), `Forbidden: <message>`,
 *   `Required value: <message>`, `Duplicate value: "string"`; default message
 *   `failed rule: <rule>`; evaluation errors `<error> evaluating rule: <rule>`; a root rule's
 *   field is `<nil>`; messageExpression falls back to the message on error, a non-string, an empty
 *   or multi-line result, or one over 5120 bytes;
 * - ratcheting (CRDValidationRatcheting, GA in 1.33, main resource and /status): on UPDATE an
 *   error of a rule that does not use oldSelf is dropped (and sent as a warning) when the value at
 *   the nearest correlatable node is unchanged; schema (OpenAPI) errors are dropped the same way,
 *   silently; list-type duplicates only when the old object had them too. Rule evaluation errors
 *   and transition rules are never ratcheted;
 * - rules are skipped (with the real `<nil>` error) when the schema errors include a blocking one
 *   (unsupported value, required, too long, too many, wrong type);
 * - a CRD is refused when a rule does not compile, its reason is not supported, its fieldPath does
 *   not name a declared field, or the estimated cost is over budget (cel-cost-estimate.ts).
 * Caveats: the runtime cost budget (PerCallLimit, RuntimeCELCostBudget) is not enforced;
 * `optionalOldSelf` is refused (the CEL library has no optional types); rules are parsed and
 * checked only for undefined fields, not fully type-checked (a rule that does not return a bool is
 * refused when it runs, not when the CRD is written); allOf/anyOf rules are not evaluated; a set
 * `reason` shows in a compile error's value as a fixed pointer (`0xc000000000`), where Go prints
 * an address; a ratcheting match by path prefix treats a property name with `.` or `[` like a nested path.
 */
import { compileCel, celValueOf, type CelBindings, type CompiledCel } from './cel-environment.js';
import {
  costErrorMessage,
  escapeCelName,
  estimateExpression,
  forEachRuleNode,
  ruleCardinality,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
  withTypeAndObjectMeta,
  type RuleNode,
} from './cel-cost-estimate.js';
import { forbiddenValue, invalidValue, notSupported, requiredValue, type FieldError } from './errors.js';
import { isJsonObject, jsonEqual, textOf, type JsonObject, type JsonValue } from './json-clone.js';
import type { CelInput } from '@bufbuild/cel';

/** Reasons a rule may give (apiextensions validation.go supportedValidationReason), sorted as its List(). */
const SUPPORTED_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
/** celconfig.MaxEvaluatedMessageExpressionSizeBytes */
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

interface CompiledRule {
  rule: string;
  message?: string;
  messageExpression?: CompiledCel;
  reason?: string;
  /** the rule's fieldPath as a field path suffix (`a.b`, `a[x.y]`) */
  fieldPath?: string;
  program: CompiledCel;
  usesOldSelf: boolean;
}

interface RuleValidator {
  schema: JsonObject;
  /** the schema `self` is converted with (with apiVersion/kind/metadata at resource roots) */
  selfSchema: JsonObject;
  rules: CompiledRule[];
  properties: Map<string, RuleValidator>;
  items?: RuleValidator;
  additionalProperties?: RuleValidator;
}

// ---------------------------------------------------------------------------------------------
// values

/** A value as a rule's `self` sees it: declared properties only, escaped names, typed by the schema. */
function ruleValueOf(value: JsonValue | undefined, schema: JsonObject | undefined): CelInput {
  if (value === undefined || value === null) return null;
  if (!schema) return celValueOf(value);
  if (Array.isArray(value)) {
    const items = isJsonObject(schema.items) ? schema.items : undefined;
    return value.map((v) => ruleValueOf(v, items));
  }
  if (isJsonObject(value)) {
    const map = new Map<string, CelInput>();
    if (isJsonObject(schema.additionalProperties)) {
      for (const [k, v] of Object.entries(value)) map.set(k, ruleValueOf(v, schema.additionalProperties));
      return map;
    }
    const properties = isJsonObject(schema.properties) ? schema.properties : {};
    for (const [k, v] of Object.entries(value)) {
      const prop = properties[k];
      const name = escapeCelName(k);
      if (!isJsonObject(prop) || !name) continue;
      map.set(name, ruleValueOf(v, prop['x-kubernetes-embedded-resource'] ? withTypeAndObjectMeta(prop) : prop));
    }
    return map;
  }
  return celValueOf(value, schema);
}

// ---------------------------------------------------------------------------------------------
// compilation

const usesIdent = (compiled: CompiledCel, name: string): boolean =>
  JSON.stringify(compiled.ast.expr, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)).includes(`"name":"${name}"`);

/** cel-go's rendering of a checker issue: `ERROR: <input>:1:6: undefined field 'x'` with the source line and a caret. */
function checkerIssue(compiled: CompiledCel, exprId: bigint, text: string): string {
  const info = compiled.ast.sourceInfo;
  const offset = info?.positions[String(exprId)] ?? 0;
  const lineStarts = [0, ...(info?.lineOffsets ?? [])];
  let line = 0;
  while (line + 1 < lineStarts.length && lineStarts[line + 1] <= offset) line++;
  const column = offset - lineStarts[line];
  const sourceLine = compiled.source.split('\n')[line] ?? '';
  return `ERROR: <input>:${line + 1}:${column + 1}: ${text}\n | ${sourceLine}\n | ${'.'.repeat(column)}^`;
}

type CompileOutcome = { compiled: CompiledCel } | { error: string };

function compileAt(source: string, node: Pick<RuleNode, 'selfType'>): CompileOutcome {
  const compiled = compileCel(source);
  if ('compileError' in compiled) {
    const text = compiled.compileError.startsWith('ERROR:') ? compiled.compileError : `ERROR: ${compiled.compileError}`;
    return { error: text };
  }
  const undefinedField = estimateExpression(compiled, node.selfType).undefinedField;
  if (undefinedField) return { error: checkerIssue(compiled, undefinedField.exprId, `undefined field '${undefinedField.field}'`) };
  return { compiled };
}

/**
 * ValidFieldPath: a rule's fieldPath (`.a.b`, `.a['x.y']`, `['a']`) as a field path suffix, or the
 * reason it is not valid for `schema`.
 */
export function normalizeFieldPath(fieldPath: string, schema: JsonObject): { path: string } | { error: string } {
  const tokens = fieldPath.match(/'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g) ?? [];
  let current: JsonObject = schema;
  let path = '';
  const step = (name: string): string | undefined => {
    const properties = isJsonObject(current.properties) ? current.properties : undefined;
    if (properties) {
      const next = properties[name];
      if (!isJsonObject(next)) return 'does not refer to a valid field';
      path = path ? `${path}.${name}` : name;
      current = next;
      return undefined;
    }
    if (isJsonObject(current.additionalProperties)) {
      path = `${path}[${name}]`;
      current = current.additionalProperties;
      return undefined;
    }
    return 'does not refer to a valid field';
  };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok === '.') {
      const name = tokens[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const failure = step(name);
      if (failure) return { error: failure };
    } else if (tok === '[') {
      const quoted = tokens[++i];
      if (!quoted || quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'"))
        return { error: `expected single quoted string but got ${quoted ?? ''}` };
      const failure = step(quoted.slice(1, -1).replace(/\\(.)/g, '$1'));
      if (failure) return { error: failure };
      if (tokens[++i] !== ']') return { error: `expected ] but got ${tokens[i] ?? ''}` };
    } else return { error: `expected [ or . but got: ${tok}` };
  }
  return { path };
}

const compiledValidators = new WeakMap<JsonObject, RuleValidator | null>();

function buildValidator(schema: JsonObject, node: Pick<RuleNode, 'selfType'>, isResourceRoot: boolean): RuleValidator | undefined {
  const selfSchema = isResourceRoot ? withTypeAndObjectMeta(schema) : schema;
  const rules: CompiledRule[] = [];
  for (const v of Array.isArray(schema['x-kubernetes-validations']) ? schema['x-kubernetes-validations'] : []) {
    if (!isJsonObject(v) || typeof v.rule !== 'string' || !v.rule.trim()) continue;
    const outcome = compileAt(v.rule, node);
    if ('error' in outcome) continue; // refused when the CRD was written
    const messageExpression = typeof v.messageExpression === 'string' && v.messageExpression.trim() ? compileCel(v.messageExpression) : undefined;
    const fieldPath = typeof v.fieldPath === 'string' && v.fieldPath ? normalizeFieldPath(v.fieldPath, schema) : undefined;
    rules.push({
      rule: v.rule,
      message: typeof v.message === 'string' && v.message ? v.message : undefined,
      messageExpression: messageExpression && !('compileError' in messageExpression) ? messageExpression : undefined,
      reason: typeof v.reason === 'string' ? v.reason : undefined,
      fieldPath: fieldPath && 'path' in fieldPath && fieldPath.path ? fieldPath.path : undefined,
      program: outcome.compiled,
      usesOldSelf: usesIdent(outcome.compiled, 'oldSelf'),
    });
  }
  const properties = new Map<string, RuleValidator>();
  const selfType = node.selfType;
  for (const [name, prop] of Object.entries(isJsonObject(schema.properties) ? schema.properties : {})) {
    if (!isJsonObject(prop)) continue;
    const escaped = escapeCelName(name);
    const fieldType = escaped ? selfType?.fields?.get(escaped) : undefined;
    const child = buildValidator(prop, { selfType: fieldType }, !!prop['x-kubernetes-embedded-resource']);
    if (child) properties.set(name, child);
  }
  const items = isJsonObject(schema.items)
    ? buildValidator(schema.items, { selfType: selfType?.elem }, !!schema.items['x-kubernetes-embedded-resource'])
    : undefined;
  const additional = isJsonObject(schema.additionalProperties)
    ? buildValidator(schema.additionalProperties, { selfType: selfType?.elem }, !!schema.additionalProperties['x-kubernetes-embedded-resource'])
    : undefined;
  if (!rules.length && !properties.size && !items && !additional) return undefined;
  return { schema, selfSchema, rules, properties, items, additionalProperties: additional };
}

function validatorFor(root: JsonObject): RuleValidator | undefined {
  let v = compiledValidators.get(root);
  if (v === undefined) {
    let rootType: RuleNode['selfType'];
    forEachRuleNode(root, (node) => {
      if (node.path === '') rootType = node.selfType;
    });
    v = buildValidator(root, { selfType: rootType }, true) ?? null;
    compiledValidators.set(root, v);
  }
  return v ?? undefined;
}

// ---------------------------------------------------------------------------------------------
// correlation (ratcheting)

/** common.CorrelatedObject: a new value, the old value at the same place, and whether they are equal. */
class Correlated {
  private equal?: boolean;
  private readonly children = new Map<string | number, Correlated | undefined>();

  constructor(
    readonly value: JsonValue,
    readonly old: JsonValue,
    readonly schema: JsonObject,
  ) {}

  key(field: string): Correlated | undefined {
    if (this.children.has(field)) return this.children.get(field);
    let child: Correlated | undefined;
    const value = isJsonObject(this.value) ? this.value[field] : undefined;
    const old = isJsonObject(this.old) ? this.old[field] : undefined;
    if (value !== undefined && old !== undefined) {
      const props = isJsonObject(this.schema.properties) ? this.schema.properties : {};
      const schema = isJsonObject(props[field]) ? props[field] : isJsonObject(this.schema.additionalProperties) ? this.schema.additionalProperties : undefined;
      if (schema) child = new Correlated(value, old, schema);
    }
    this.children.set(field, child);
    return child;
  }

  index(i: number): Correlated | undefined {
    if (this.children.has(i)) return this.children.get(i);
    let child: Correlated | undefined;
    const items = this.schema.items;
    if (Array.isArray(this.value) && Array.isArray(this.old) && i < this.value.length && isJsonObject(items)) {
      const old = correlatedListItem(this.schema, this.old, this.value[i]);
      if (old !== undefined) child = new Correlated(this.value[i], old, items);
    }
    this.children.set(i, child);
    return child;
  }

  deepEqual(): boolean {
    if (this.equal !== undefined) return this.equal;
    const { value, old } = this;
    let equal: boolean;
    if (Array.isArray(value) && Array.isArray(old)) {
      equal = value.length === old.length;
      for (let i = 0; equal && i < value.length; i++) {
        const child = this.index(i);
        equal = child ? child.deepEqual() : this.schema['x-kubernetes-list-type'] !== 'map' && jsonEqual(value, old);
        if (!child) break;
      }
    } else if (isJsonObject(value) && isJsonObject(old)) {
      const keys = Object.keys(value);
      equal = keys.length === Object.keys(old).length && keys.every((k) => this.key(k)?.deepEqual() ?? false);
    } else equal = jsonEqual(value, old);
    this.equal = equal;
    return equal;
  }
}

/** The old item with the same x-kubernetes-list-map-keys as `item` (only map lists correlate). */
function correlatedListItem(schema: JsonObject, old: JsonValue[], item: JsonValue): JsonValue | undefined {
  if (schema['x-kubernetes-list-type'] !== 'map' || !isJsonObject(item)) return undefined;
  const keys = Array.isArray(schema['x-kubernetes-list-map-keys']) ? schema['x-kubernetes-list-map-keys'].map(textOf) : [];
  return old.find((o) => isJsonObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
}

/** ratchetingOptions: the node's correlation and the nearest correlatable one above it. */
interface Ratchet {
  current?: Correlated;
  nearestParent?: Correlated;
}
const ratchetKey = (r: Ratchet, field: string, atRoot: boolean): Ratchet =>
  !r.current ? r : atRoot && (field === 'apiVersion' || field === 'kind') ? {} : { current: r.current.key(field), nearestParent: r.current };
const ratchetIndex = (r: Ratchet, i: number): Ratchet => (!r.current ? r : { current: r.current.index(i), nearestParent: r.current });
const shouldRatchet = (r: Ratchet): boolean => (r.current ? r.current.deepEqual() : (r.nearestParent?.deepEqual() ?? false));

// ---------------------------------------------------------------------------------------------
// evaluation

const childPath = (path: string, key: string) => (path ? `${path}.${key}` : key);
const shown = (path: string) => path || '<nil>';

interface Outcome {
  errors: FieldError[];
  warnings: string[];
}

function typeOf(schema: JsonObject): string {
  return typeof schema.type === 'string' ? schema.type : '';
}

function failure(rule: CompiledRule, path: string, type: string, detail: string): FieldError {
  switch (rule.reason) {
    case 'FieldValueForbidden':
      return forbiddenValue(path, detail);
    case 'FieldValueRequired':
      return requiredValue(path, detail);
    case 'FieldValueDuplicate':
      return { type: 'FieldValueDuplicate', field: path, text: `Duplicate value: ${JSON.stringify(type)}` };
    default:
      return invalidValue(path, type, detail);
  }
}

/** An evaluation error as cel-go words it (interpreter errors: `no such key: x`, `division by zero`, `no such overload`). */
function celGoErrorText(error: string): string {
  const missing = /^field not found: (.*)$/.exec(error);
  if (missing) return `no such key: ${missing[1]}`;
  if (/divide by zero/.test(error)) return 'division by zero';
  if (/modulus by zero/.test(error)) return 'modulus by zero';
  if (error.startsWith('found no matching overload')) return 'no such overload';
  return error;
}

const ruleErrorString = (rule: CompiledRule) => (rule.message ? rule.message.trim() : rule.rule.trim());

/** evalMessageExpression: the message, or undefined to fall back to `message`/`failed rule: …`. */
function messageOf(rule: CompiledRule, bindings: CelBindings): string | undefined {
  if (!rule.messageExpression) return undefined;
  const outcome = rule.messageExpression.evaluate(bindings);
  if ('error' in outcome || typeof outcome.value !== 'string') return undefined;
  const text = outcome.value.trim();
  if (!text || /\n/.test(text) || new TextEncoder().encode(text).length > MAX_MESSAGE_EXPRESSION_BYTES) return undefined;
  return text;
}

function evaluateNode(v: RuleValidator, path: string, value: JsonValue | undefined, old: JsonValue | undefined, ratchet: Ratchet, out: Outcome): void {
  if (value === undefined || value === null) return;
  const oldValue = old === null ? undefined : old;
  const type = typeOf(v.schema);
  if (v.rules.length) {
    const bindings: CelBindings = { self: ruleValueOf(value, v.selfSchema) };
    if (oldValue !== undefined) bindings.oldSelf = ruleValueOf(oldValue, v.selfSchema);
    for (const rule of v.rules) {
      if (rule.usesOldSelf && oldValue === undefined) continue;
      const result = rule.program.evaluate(bindings);
      if ('error' in result) {
        const text = celGoErrorText(result.error);
        const detail = text.startsWith('no such overload')
          ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`
          : `${text} evaluating rule: ${ruleErrorString(rule)}`;
        out.errors.push(invalidValue(shown(path), type, detail));
        continue;
      }
      if (result.value === true) continue;
      const errorPath = rule.fieldPath ? childPath(path, rule.fieldPath) : path;
      const detail = messageOf(rule, bindings) ?? (rule.message ? rule.message.trim() : `failed rule: ${ruleErrorString(rule)}`);
      const error = failure(rule, shown(errorPath), type, detail);
      if (!rule.usesOldSelf && shouldRatchet(ratchet)) out.warnings.push(`${error.field}: ${error.text}`);
      else out.errors.push(error);
    }
  }
  if (Array.isArray(value) && v.items) {
    const oldList = Array.isArray(oldValue) ? oldValue : [];
    value.forEach((item, i) => evaluateNode(v.items!, `${path}[${i}]`, item, correlatedListItem(v.schema, oldList, item), ratchetIndex(ratchet, i), out));
  } else if (isJsonObject(value)) {
    const oldMap = isJsonObject(oldValue) && v.schema['x-kubernetes-map-type'] !== 'atomic' ? oldValue : {};
    for (const [k, child] of Object.entries(value)) {
      const sub = v.properties.get(k) ?? v.additionalProperties;
      const childKey = v.properties.has(k) ? childPath(path, k) : `${path}[${k}]`;
      if (sub) evaluateNode(sub, childKey, child, oldMap[k], ratchetKey(ratchet, k, path === ''), out);
    }
  }
}

const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/**
 * Evaluates the rules of `schema` (a version's openAPIV3Schema) on `obj` (and `old` on UPDATE).
 * `schemaErrors` are the errors left after schema validation (and its ratcheting): a blocking
 * one skips the rules, as hasBlockingErr does. Ratcheted errors come back as warnings.
 */
export function evaluateRules(obj: JsonObject, old: JsonObject | undefined, schema: JsonObject | undefined, schemaErrors: FieldError[]): Outcome {
  const out: Outcome = { errors: [], warnings: [] };
  const validator = schema ? validatorFor(schema) : undefined;
  if (!validator || !schema) return out;
  if (schemaErrors.some((e) => BLOCKING.has(e.type))) {
    out.errors.push(
      invalidValue('<nil>', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'),
    );
    return out;
  }
  evaluateNode(validator, '', obj, old, old ? { current: new Correlated(obj, old, schema) } : {}, out);
  return out;
}

/**
 * Schema-validation ratcheting on UPDATE (pkg/apiserver/validation/ratcheting.go): drops each
 * error whose nearest correlatable node is unchanged from the old object; list-type duplicates
 * are kept only when the old object had none (strategy.go ValidateListSetsAndMaps).
 */
export function ratchetSchemaErrors(
  errors: FieldError[],
  oldErrors: () => FieldError[],
  obj: JsonObject,
  old: JsonObject,
  schema: JsonObject | undefined,
): FieldError[] {
  if (!errors.length || !schema) return errors;
  const unchanged = new Map<string, boolean>();
  const record = (c: Correlated, path: string) => {
    unchanged.set(path, c.deepEqual());
    if (Array.isArray(c.value))
      c.value.forEach((_item, i) => {
        const child = c.index(i);
        if (child) record(child, `${path}[${i}]`);
      });
    else if (isJsonObject(c.value)) {
      for (const k of Object.keys(c.value)) {
        if (path === '' && (k === 'apiVersion' || k === 'kind')) continue;
        const child = c.key(k);
        if (child) record(child, childPath(path, k));
      }
    }
  };
  record(new Correlated(obj, old, schema), '');
  const oldHadDuplicates = errors.some((e) => e.type === 'FieldValueDuplicate') && oldErrors().some((e) => e.type === 'FieldValueDuplicate');
  return errors.filter((e) => {
    if (e.type === 'FieldValueDuplicate') return !oldHadDuplicates;
    let best = '';
    for (const p of unchanged.keys()) {
      if (p.length > best.length && (e.field === p || e.field.startsWith(`${p}.`) || e.field.startsWith(`${p}[`))) best = p;
    }
    return !unchanged.get(best);
  });
}

// ---------------------------------------------------------------------------------------------
// CRD validation

/** Go's %#v of an apiextensions.ValidationRule, the value a compile error shows. */
function goRuleLiteral(v: JsonObject): string {
  const q = (x: JsonValue | undefined) => JSON.stringify(typeof x === 'string' ? x : '');
  const reason = typeof v.reason === 'string' ? '(*apiextensions.FieldValueErrorReason)(0xc000000000)' : '(*apiextensions.FieldValueErrorReason)(nil)';
  const optional = typeof v.optionalOldSelf === 'boolean' ? '(*bool)(0xc000000000)' : '(*bool)(nil)';
  return `apiextensions.ValidationRule{Rule:${q(v.rule)}, Message:${q(v.message)}, MessageExpression:${q(v.messageExpression)}, Reason:${reason}, FieldPath:${q(v.fieldPath)}, OptionalOldSelf:${optional}}`;
}

const hasNewlines = (s: string) => /[\n\r]/.test(s);

/**
 * The errors the real server gives for the rules of one openAPIV3Schema (at `basePath`, e.g.
 * `spec.validation.openAPIV3Schema`): rule fields, compilation, cost per expression and in total.
 */
export function crdRuleErrors(root: JsonObject, basePath: string): FieldError[] {
  const errors: FieldError[] = [];
  const expensive: Array<{ path: string; cost: number }> = [];
  let total = 0;
  const observe = (path: string, cost: number) => {
    total = Math.min(2 ** 64 - 1, total + cost);
    if (cost >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100) expensive.push({ path, cost });
  };
  forEachRuleNode(root, (node) => {
    const validations = Array.isArray(node.schema['x-kubernetes-validations']) ? node.schema['x-kubernetes-validations'] : [];
    const schemaErrors: FieldError[] = [];
    const at = (i: number, key: string) => `${basePath}${node.path}.x-kubernetes-validations[${i}].${key}`;
    validations.forEach((v, i) => {
      if (!isJsonObject(v)) return;
      const rule = textOf(v.rule ?? '').trim();
      const message = typeof v.message === 'string' ? v.message : '';
      if (!rule) schemaErrors.push(requiredValue(at(i, 'rule'), 'rule is not specified'));
      else if (message && !message.trim()) schemaErrors.push(invalidValue(at(i, 'message'), message, 'message must be non-empty if specified'));
      else if (hasNewlines(message.trim())) schemaErrors.push(invalidValue(at(i, 'message'), message, 'message must not contain line breaks'));
      else if (hasNewlines(rule) && !message.trim())
        schemaErrors.push(requiredValue(at(i, 'message'), 'message must be specified if rule contains line breaks'));
      if (typeof v.messageExpression === 'string' && v.messageExpression && !v.messageExpression.trim()) {
        schemaErrors.push(requiredValue(at(i, 'messageExpression'), 'messageExpression must be non-empty if specified'));
      }
      if (v.reason !== undefined && !SUPPORTED_REASONS.includes(textOf(v.reason)))
        schemaErrors.push(notSupported(at(i, 'reason'), v.reason, SUPPORTED_REASONS));
      if (typeof v.fieldPath === 'string' && v.fieldPath) {
        if (!v.fieldPath.trim()) schemaErrors.push(invalidValue(at(i, 'fieldPath'), v.fieldPath, 'fieldPath must be non-empty if specified'));
        if (hasNewlines(v.fieldPath)) schemaErrors.push(invalidValue(at(i, 'fieldPath'), v.fieldPath, 'fieldPath must not contain line breaks'));
        if ('error' in normalizeFieldPath(v.fieldPath, node.schema))
          schemaErrors.push(invalidValue(at(i, 'fieldPath'), v.fieldPath, 'fieldPath must be a valid path'));
      }
    });
    errors.push(...schemaErrors);
    if (schemaErrors.length || !validations.length) return;
    const cardinality = ruleCardinality(node.boundedCardinality, node.selfType);
    validations.forEach((v, i) => {
      if (!isJsonObject(v) || !textOf(v.rule ?? '').trim()) return;
      if (!node.selfType) {
        errors.push(invalidValue(`${basePath}${node.path}.x-kubernetes-validations`, null, 'failed to convert to declType for CEL validation rules'));
        return;
      }
      const outcome = compileAt(textOf(v.rule), node);
      const cost = 'compiled' in outcome ? Math.min(2 ** 64 - 1, estimateExpression(outcome.compiled, node.selfType).maxCost * cardinality) : 0;
      if (cost > STATIC_ESTIMATED_COST_LIMIT)
        errors.push(forbiddenValue(at(i, 'rule'), costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
      observe(at(i, 'rule'), cost);
      if ('error' in outcome) {
        errors.push({ type: 'FieldValueInvalid', field: at(i, 'rule'), text: `Invalid value: ${goRuleLiteral(v)}: compilation failed: ${outcome.error}` });
        return;
      }
      if (typeof v.messageExpression === 'string' && v.messageExpression.trim()) {
        const message = compileAt(v.messageExpression, node);
        if ('error' in message) {
          errors.push({
            type: 'FieldValueInvalid',
            field: at(i, 'messageExpression'),
            text: `Invalid value: ${goRuleLiteral(v)}: messageExpression compilation failed: ${message.error}`,
          });
        } else {
          const messageCost = Math.min(2 ** 64 - 1, estimateExpression(message.compiled, node.selfType).maxCost * cardinality);
          if (messageCost > STATIC_ESTIMATED_COST_LIMIT) {
            errors.push(
              forbiddenValue(at(i, 'messageExpression'), costErrorMessage('estimated messageExpression cost', messageCost, STATIC_ESTIMATED_COST_LIMIT)),
            );
          }
          observe(at(i, 'messageExpression'), messageCost);
        }
      }
      const usesOldSelf = usesIdent(outcome.compiled, 'oldSelf');
      if (typeof v.optionalOldSelf === 'boolean' && !usesOldSelf) {
        errors.push(invalidValue(at(i, 'optionalOldSelf'), v.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
      } else if (typeof v.optionalOldSelf === 'boolean') {
        errors.push(
          invalidValue(
            at(i, 'optionalOldSelf'),
            v.optionalOldSelf,
            'optionalOldSelf is not supported by the development cluster (its CEL library, @bufbuild/cel, has no optional types)',
          ),
        );
      }
      if (usesOldSelf && node.uncorrelatableWithin !== undefined) {
        errors.push(
          invalidValue(
            at(i, 'rule'),
            textOf(v.rule),
            `oldSelf cannot be used on the uncorrelatable portion of the schema within ${basePath}${node.uncorrelatableWithin}`,
          ),
        );
      }
    });
  });
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    expensive.sort((a, b) => b.cost - a.cost);
    for (const e of expensive.slice(0, 4))
      errors.push(forbiddenValue(e.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errors.push(
      forbiddenValue(
        basePath,
        costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, STATIC_ESTIMATED_CRD_COST_LIMIT),
      ),
    );
  }
  return errors;
}
