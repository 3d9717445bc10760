/**
 * The static cost estimate kube-apiserver makes of a CRD's `x-kubernetes-validations` rules when
 * the CRD is written, and the two budgets it refuses a CRD over.
 *
 * What is emulated (Kubernetes 1.33):
 * - the declared type of each schema node with its maximum size (k8s.io/apiserver/pkg/cel/common/schemas.go
 *   SchemaDeclType): a string's size is `maxLength × 4` bytes, else the size of the largest
 *   enum value, else 3 MiB − 2 (the request limit, celconfig.MaxRequestSizeBytes); a list holds
 *   `maxItems`, else (3 MiB − 2) / (minimum item size + 1); a map `maxProperties`, else
 *   (3 MiB − 2) / (minimum value size + 6); the root (and every x-kubernetes-embedded-resource)
 *   also has `apiVersion`, `kind` and `metadata.{name,generateName}`;
 * - cel-go's checker cost (cel-go/checker/cost.go) with the Kubernetes library costs
 *   (k8s.io/apiserver/pkg/cel/library/cost.go): an identifier or field selection costs 1, `has()`
 *   1, a constant 0, `&&`/`||` the sum of both sides, `?:` the condition plus the dearer branch,
 *   string equality/ordering ⌈0.1 × size⌉, `in` a list its size, `+` of strings ⌈0.1 × both
 *   sizes⌉, `matches`/`find`/`findAll` ⌈0.1 × size(string)⌉ × ⌈0.25 × size(regex)⌉,
 *   `contains`/`lowerAscii`/`upperAscii`/`trim`/`indexOf`/`split` ⌈0.1 × size(receiver)⌉,
 *   `startsWith`/`endsWith` ⌈0.1 × size(argument)⌉, `size`/`string()`/`int()`/arithmetic 1, a
 *   list literal 10 + its items, a map literal 30 + its entries; a comprehension (`all`, `exists`,
 *   `exists_one`, `map`, `filter`) costs its range plus size(range) × (condition + step);
 * - the rule's cost is that estimate × the node's cardinality (how often the rule can run in one
 *   object: the product of the `maxItems`/`maxProperties` above it, or, where one is missing,
 *   3 MiB / (minimum size of the node + 1)) (apiextensions validation.go getExpressionCost,
 *   cel_validation.go, compilation.go maxCardinality);
 * - the limits StaticEstimatedCostLimit (10,000,000 per expression) and
 *   StaticEstimatedCRDCostLimit (100,000,000 for all rules of one schema), with the real message
 *   (`estimated rule cost exceeds budget by factor of …`).
 *
 * Caveats: costs are estimated as maxima only (the real estimate also tracks minima, unused by
 * the budget check). A function this file does not know is estimated conservatively: 1 plus the
 * full size of each string or list argument (factor 1, ten times the traversal factor), and a
 * result of unknown size (such a function's result) counts as the largest size there is, so a rule
 * built on one may be refused where the real server accepts it. Formats `date-time`, `duration`
 * and `byte` are sized as the real server sizes them but typed as strings (see cel-environment.ts).
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { compileCel, type CompiledCel } from './cel-environment.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';

/** Per-expression limit (apiextensions validation.go StaticEstimatedCostLimit). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Per-schema limit for all rules together (StaticEstimatedCRDCostLimit). */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
/** celconfig.MaxRequestSizeBytes: 3 MiB, the request size the unbounded estimates derive from. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;
/** math.MaxUint64, where the estimate saturates (as multiplyWithOverflowGuard does). */
const SATURATED = 2 ** 64 - 1;

const STRING_TRAVERSAL_FACTOR = 0.1;
const REGEX_LENGTH_FACTOR = 0.25;
const MIN_STRING_SIZE = 2;

/** The declared type of a schema node, as SchemaDeclType builds it (only what the estimate needs). */
export interface DeclType {
  kind: 'object' | 'map' | 'list' | 'string' | 'int' | 'double' | 'bool' | 'dyn';
  /** declared fields of an object, by escaped name */
  fields?: Map<string, DeclType>;
  /** item type of a list, value type of a map */
  elem?: DeclType;
  /** the most elements (bytes of a string, items of a list, entries of a map) */
  maxElements: number;
  minSerializedSize: number;
  /** the schema node the type was made from */
  schema?: JsonObject;
}

const INT: DeclType = { kind: 'int', maxElements: 0, minSerializedSize: 1 };
const DOUBLE: DeclType = { kind: 'double', maxElements: 0, minSerializedSize: 1 };
const BOOL: DeclType = { kind: 'bool', maxElements: 0, minSerializedSize: 4 };

const CEL_RESERVED = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(' '),
);

/**
 * A property name as CEL field selection spells it (k8s.io/apiserver/pkg/cel/escaping.go Escape):
 * keywords become `__{kw}__`, `__` `__underscores__`, `.` `__dot__`, `-` `__dash__`, `/`
 * `__slash__`; undefined for a name that cannot be escaped (a leading digit, another character).
 */
export function escapeCelName(name: string): string | undefined {
  // asked for every property of every object a rule sees, on every write: names come from schemas and objects, so remembered (bounded)
  if (escapedNames.has(name)) return escapedNames.get(name);
  const escaped = escapeName(name);
  if (escapedNames.size >= MAX_ESCAPED_NAMES) escapedNames.clear();
  escapedNames.set(name, escaped);
  return escaped;
}

const MAX_ESCAPED_NAMES = 10_000;
const escapedNames = new Map<string, string | undefined>();

function escapeName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  let ok = true;
  const escaped = name.replace(/__|[-./]|[^a-zA-Z0-9_]/g, (s) => {
    if (s === '__') return '__underscores__';
    if (s === '.') return '__dot__';
    if (s === '-') return '__dash__';
    if (s === '/') return '__slash__';
    ok = false;
    return '';
  });
  return ok ? escaped : undefined;
}

/** The schema a root (or embedded resource) node is compiled with: apiVersion, kind, metadata.{name,generateName}. */
export function withTypeAndObjectMeta(schema: JsonObject): JsonObject {
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  // kept as declared when it already has all four (schemas.go WithTypeAndObjectMeta): a declared
  // `metadata.name` with a maxLength then bounds the rules' cost
  const typed = (node: JsonValue | undefined, type: string) => isJsonObject(node) && node.type === type;
  const metadata = properties.metadata;
  if (
    typed(properties.kind, 'string') &&
    typed(properties.apiVersion, 'string') &&
    isJsonObject(metadata) &&
    typed(metadata, 'object') &&
    isJsonObject(metadata.properties) &&
    typed(metadata.properties.name, 'string') &&
    typed(metadata.properties.generateName, 'string')
  ) {
    return schema;
  }
  return {
    ...schema,
    properties: {
      ...properties,
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
    },
  };
}

function stringMax(schema: JsonObject): number {
  if (typeof schema.maxLength === 'number') return Math.max(0, schema.maxLength) * (schema.format === 'byte' ? 1 : 4);
  if (schema.format === 'duration' || schema.format === 'date-time') return 32;
  if (schema.format === 'date') return 12;
  if (Array.isArray(schema.enum) && schema.enum.length) return Math.max(0, ...schema.enum.map((e) => (typeof e === 'string' ? e.length : 0)));
  return MAX_REQUEST_SIZE_BYTES - 2;
}

/** SchemaDeclType: the declared type of `schema` (undefined where the real server has none, e.g. no `type`). */
export function declTypeOf(schema: JsonObject | undefined, isResourceRoot: boolean): DeclType | undefined {
  if (!schema) return undefined;
  if (schema['x-kubernetes-int-or-string']) return { kind: 'dyn', maxElements: MAX_REQUEST_SIZE_BYTES - 2, minSerializedSize: 1, schema };
  const s = isResourceRoot ? withTypeAndObjectMeta(schema) : schema;
  switch (s.type) {
    case 'array': {
      const items = isJsonObject(s.items) ? declTypeOf(s.items, !!s.items['x-kubernetes-embedded-resource']) : undefined;
      if (!items) return undefined;
      const max = typeof s.maxItems === 'number' ? Math.max(0, s.maxItems) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (items.minSerializedSize + 1));
      return { kind: 'list', elem: items, maxElements: max, minSerializedSize: 2, schema: s };
    }
    case 'object': {
      if (isJsonObject(s.additionalProperties)) {
        const values = declTypeOf(s.additionalProperties, !!s.additionalProperties['x-kubernetes-embedded-resource']);
        if (!values) return undefined;
        const max =
          typeof s.maxProperties === 'number' ? Math.max(0, s.maxProperties) : Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (values.minSerializedSize + 6));
        return { kind: 'map', elem: values, maxElements: max, minSerializedSize: 2, schema: s };
      }
      const fields = new Map<string, DeclType>();
      const required = new Set(Array.isArray(s.required) ? s.required.filter((r) => typeof r === 'string') : []);
      let minSize = 2;
      for (const [name, prop] of Object.entries(isJsonObject(s.properties) ? s.properties : {})) {
        if (!isJsonObject(prop)) continue;
        const type = declTypeOf(prop, !!prop['x-kubernetes-embedded-resource']);
        if (!type) continue;
        const escaped = escapeCelName(name);
        if (escaped) fields.set(escaped, type);
        if (required.has(name) && prop.default === undefined) minSize += name.length + type.minSerializedSize + 4;
      }
      return { kind: 'object', fields, maxElements: 0, minSerializedSize: minSize, schema: s };
    }
    case 'string': {
      const min = s.format === 'date-time' ? 21 : s.format === 'duration' ? 3 : s.format === 'date' ? 12 : MIN_STRING_SIZE;
      return { kind: 'string', maxElements: stringMax(s), minSerializedSize: min, schema: s };
    }
    case 'boolean':
      return BOOL;
    case 'number':
      return DOUBLE;
    case 'integer':
      return INT;
    default:
      return undefined;
  }
}

/** What the estimate found of one expression. */
export interface ExpressionEstimate {
  /** the most it can cost in one evaluation */
  maxCost: number;
  /** the first field selected on a declared object that the object does not declare, as cel-go's checker reports it */
  undefinedField?: { field: string; exprId: bigint };
}

interface Estimated {
  cost: number;
  /** the most elements of the value (bytes of a string, items of a list); SATURATED when unknown */
  size: number;
  type?: DeclType;
}

const add = (...costs: number[]) =>
  Math.min(
    SATURATED,
    costs.reduce((a, b) => a + b, 0),
  );
const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : Math.min(SATURATED, a * b));
const factor = (size: number, f: number) => Math.min(SATURATED, Math.ceil(size * f));

type Scope = Map<string, DeclType | undefined>;

class CostWalker {
  undefinedField?: { field: string; exprId: bigint };

  constructor(private readonly variables: Scope) {}

  walk(expr: Expr | undefined, scope: Scope): Estimated {
    if (!expr) return { cost: 0, size: 0 };
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr': {
        const c = kind.value.constantKind;
        if (c.case === 'stringValue')
          return { cost: 0, size: new TextEncoder().encode(c.value).length, type: { kind: 'string', maxElements: 0, minSerializedSize: 2 } };
        if (c.case === 'bytesValue') return { cost: 0, size: c.value.length };
        if (c.case === 'boolValue') return { cost: 0, size: 0, type: BOOL };
        if (c.case === 'int64Value' || c.case === 'uint64Value') return { cost: 0, size: 0, type: INT };
        return { cost: 0, size: 0, type: c.case === 'doubleValue' ? DOUBLE : undefined };
      }
      case 'identExpr': {
        const type = scope.has(kind.value.name) ? scope.get(kind.value.name) : this.variables.get(kind.value.name);
        return { cost: 1, size: type ? sizeOf(type) : SATURATED, type };
      }
      case 'selectExpr': {
        const operand = this.walk(kind.value.operand, scope);
        if (kind.value.testOnly) {
          this.fieldOf(operand.type, kind.value.field, expr.id);
          return { cost: add(operand.cost, 1), size: 0, type: BOOL };
        }
        const field = this.fieldOf(operand.type, kind.value.field, expr.id);
        return { cost: add(operand.cost, 1), size: field ? sizeOf(field) : SATURATED, type: field };
      }
      case 'listExpr': {
        const items = kind.value.elements.map((e) => this.walk(e, scope));
        return {
          cost: add(10, ...items.map((i) => i.cost)),
          size: items.length,
          type: { kind: 'list', elem: items[0]?.type, maxElements: items.length, minSerializedSize: 2 },
        };
      }
      case 'structExpr': {
        const entries = kind.value.entries.map((e) =>
          add(this.walk(e.keyKind.case === 'mapKey' ? e.keyKind.value : undefined, scope).cost, this.walk(e.value, scope).cost),
        );
        return {
          cost: add(kind.value.messageName ? 40 : 30, ...entries),
          size: entries.length,
          type: { kind: 'map', maxElements: entries.length, minSerializedSize: 2 },
        };
      }
      case 'comprehensionExpr': {
        const c = kind.value;
        const range = this.walk(c.iterRange, scope);
        const init = this.walk(c.accuInit, scope);
        const inner: Scope = new Map(scope);
        inner.set(c.iterVar, range.type?.kind === 'map' ? { kind: 'string', maxElements: MAX_REQUEST_SIZE_BYTES - 2, minSerializedSize: 2 } : range.type?.elem);
        if (c.iterVar2) inner.set(c.iterVar2, range.type?.elem);
        inner.set(c.accuVar, init.type);
        const loop = add(this.walk(c.loopCondition, inner).cost, this.walk(c.loopStep, inner).cost);
        const result = this.walk(c.result, inner);
        const isList = init.type?.kind === 'list';
        return {
          cost: add(range.cost, init.cost, result.cost, mul(range.size, loop)),
          size: isList ? range.size : result.size,
          type: isList ? { kind: 'list', elem: range.type?.elem, maxElements: range.size, minSerializedSize: 2 } : result.type,
        };
      }
      case 'callExpr':
        return this.call(kind.value.function, kind.value.target, kind.value.args, scope);
      default:
        return { cost: 1, size: SATURATED };
    }
  }

  private fieldOf(type: DeclType | undefined, field: string, exprId: bigint): DeclType | undefined {
    if (!type) return undefined;
    if (type.kind === 'map') return type.elem;
    if (type.kind !== 'object') return undefined;
    const found = type.fields?.get(field);
    if (!found && !this.undefinedField) this.undefinedField = { field, exprId };
    return found;
  }

  private call(fn: string, targetExpr: Expr | undefined, argExprs: Expr[], scope: Scope): Estimated {
    if (fn === '_&&_' || fn === '_||_') {
      const [l, r] = argExprs.map((a) => this.walk(a, scope));
      return { cost: add(l?.cost ?? 0, r?.cost ?? 0), size: 0, type: BOOL };
    }
    if (fn === '_?_:_') {
      const [c, t, f] = argExprs.map((a) => this.walk(a, scope));
      const dearer = (t?.cost ?? 0) >= (f?.cost ?? 0) ? t : f;
      return { cost: add(c?.cost ?? 0, dearer?.cost ?? 0), size: Math.max(t?.size ?? 0, f?.size ?? 0), type: t?.type ?? f?.type };
    }
    const target = targetExpr ? this.walk(targetExpr, scope) : undefined;
    const args = argExprs.map((a) => this.walk(a, scope));
    const argCost = add(target?.cost ?? 0, ...args.map((a) => a.cost));
    const [a0, a1] = args;
    const own = (cost: number, size: number, type?: DeclType): Estimated => ({ cost: add(argCost, cost), size, type });
    const isText = (e?: Estimated) => e?.type?.kind === 'string';
    switch (fn) {
      case '_==_':
      case '_!=_':
      case '_<_':
      case '_<=_':
      case '_>_':
      case '_>=_':
        if (isText(a0) || isText(a1)) return own(Math.max(1, factor(Math.min(a0?.size ?? 0, a1?.size ?? 0), STRING_TRAVERSAL_FACTOR)), 0, BOOL);
        if (a0?.type?.kind === 'list' || a0?.type?.kind === 'map') return own(Math.max(1, Math.min(a0.size, a1?.size ?? 0)), 0, BOOL);
        return own(1, 0, BOOL);
      case '@in':
        return own(a1?.type?.kind === 'map' ? 1 : Math.max(1, a1?.size ?? SATURATED), 0, BOOL);
      case '_+_':
        if (isText(a0) || isText(a1)) {
          const size = add(a0?.size ?? 0, a1?.size ?? 0);
          return own(Math.max(1, factor(size, STRING_TRAVERSAL_FACTOR)), size, { kind: 'string', maxElements: size, minSerializedSize: 2 });
        }
        if (a0?.type?.kind === 'list') {
          const size = add(a0.size, a1?.size ?? 0);
          return own(1, size, { kind: 'list', elem: a0.type.elem ?? a1?.type?.elem, maxElements: size, minSerializedSize: 2 });
        }
        return own(1, 0, a0?.type);
      case '_-_':
      case '_*_':
      case '_/_':
      case '_%_':
      case '-_':
        return own(1, 0, a0?.type);
      case '!_':
      case '@not_strictly_false':
        return own(fn === '!_' ? 1 : 0, 0, BOOL);
      case '_[_]':
        return own(1, a0?.type?.elem ? sizeOf(a0.type.elem) : SATURATED, a0?.type?.elem);
      case 'size':
        return own(1, 0, INT);
      case 'int':
      case 'uint':
      case 'double':
      case 'bool':
        return own(1, 0, fn === 'int' || fn === 'uint' ? INT : fn === 'bool' ? BOOL : DOUBLE);
      case 'string': {
        const size = isText(a0) ? (a0?.size ?? 0) : 20;
        return own(1, size, { kind: 'string', maxElements: size, minSerializedSize: 2 });
      }
      case 'matches':
      case 'find':
      case 'findAll': {
        const text = target ?? a0;
        const regex = target ? a0 : a1;
        const cost = mul(factor(text?.size ?? SATURATED, STRING_TRAVERSAL_FACTOR), factor(regex?.size ?? SATURATED, REGEX_LENGTH_FACTOR));
        if (fn === 'matches') return own(cost, 0, BOOL);
        return own(
          cost,
          text?.size ?? SATURATED,
          fn === 'find' ? text?.type : { kind: 'list', elem: text?.type, maxElements: text?.size ?? 0, minSerializedSize: 2 },
        );
      }
      case 'contains':
      case 'indexOf':
      case 'lastIndexOf':
        return own(Math.max(1, factor(target?.size ?? SATURATED, STRING_TRAVERSAL_FACTOR)), 0, fn === 'contains' ? BOOL : INT);
      case 'startsWith':
      case 'endsWith':
        return own(Math.max(1, factor(a0?.size ?? SATURATED, STRING_TRAVERSAL_FACTOR)), 0, BOOL);
      case 'lowerAscii':
      case 'upperAscii':
      case 'trim':
        return own(Math.max(1, factor(target?.size ?? SATURATED, STRING_TRAVERSAL_FACTOR)), target?.size ?? SATURATED, target?.type);
      case 'split': {
        const size = target?.size ?? SATURATED;
        return own(Math.max(1, factor(size, STRING_TRAVERSAL_FACTOR)), size, { kind: 'list', elem: target?.type, maxElements: size, minSerializedSize: 2 });
      }
      case 'substring':
      case 'charAt':
        return own(Math.max(1, factor(target?.size ?? SATURATED, STRING_TRAVERSAL_FACTOR)), fn === 'charAt' ? 4 : (target?.size ?? SATURATED), target?.type);
      case 'replace': {
        // library/cost.go: the result is at most the receiver with each match grown to the replacement
        const size = target?.size ?? SATURATED;
        const growth = Math.max(1, Math.ceil((a1?.size ?? SATURATED) / Math.max(1, a0?.type?.maxElements === 0 ? (a0?.size ?? 1) : 1)));
        const result = mul(size, growth);
        return own(Math.max(1, factor(add(size, result), STRING_TRAVERSAL_FACTOR)), result, target?.type);
      }
      case 'join': {
        const size = add(mul(target?.size ?? SATURATED, target?.type?.elem ? sizeOf(target.type.elem) : SATURATED), a0?.size ?? 0);
        return own(Math.max(1, factor(size, STRING_TRAVERSAL_FACTOR)), size, { kind: 'string', maxElements: size, minSerializedSize: 2 });
      }
      case 'isURL':
        return own(Math.max(1, factor((target ?? a0)?.size ?? SATURATED, STRING_TRAVERSAL_FACTOR)), 0, BOOL);
      default: {
        // not known here: conservative (see Caveats)
        const sized = [target, ...args].filter((e) => e && (e.type?.kind === 'string' || e.type?.kind === 'list' || !e.type));
        return own(add(1, ...sized.map((e) => e?.size ?? SATURATED)), SATURATED);
      }
    }
  }
}

function sizeOf(type: DeclType): number {
  return type.kind === 'dyn' || type.kind === 'string' || type.kind === 'list' || type.kind === 'map' ? type.maxElements : 0;
}

/** Estimates one compiled expression with `self` (and `oldSelf`) of type `selfType`. */
export function estimateExpression(compiled: CompiledCel, selfType: DeclType | undefined): ExpressionEstimate {
  const walker = new CostWalker(
    new Map([
      ['self', selfType],
      ['oldSelf', selfType],
    ]),
  );
  const result = walker.walk(compiled.ast.expr, new Map());
  return { maxCost: result.cost, undefinedField: walker.undefinedField };
}

/**
 * How often a rule at a node can run in one object (CELSchemaContext.MaxCardinality, else
 * compilation.go maxCardinality from the node's minimum size).
 */
export function ruleCardinality(boundedCardinality: number | undefined, selfType: DeclType | undefined): number {
  if (boundedCardinality !== undefined) return boundedCardinality;
  return Math.floor(MAX_REQUEST_SIZE_BYTES / ((selfType?.minSerializedSize ?? 0) + 1));
}

/** extractMaxElements: how many of a child one occurrence of `schema` holds (undefined: unbounded). */
export function maxChildElements(schema: JsonObject): number | undefined {
  if (schema.type === 'object') {
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      return typeof schema.maxProperties === 'number' ? Math.max(0, schema.maxProperties) : undefined;
    }
    return 1;
  }
  if (schema.type === 'array') return typeof schema.maxItems === 'number' ? Math.max(0, schema.maxItems) : undefined;
  return 1;
}

/** getCostErrorMessage of apiextensions validation.go. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const exceed = cost / limit;
  const factorText = exceed > 100 ? 'more than 100x' : exceed < 1.5 ? `${exceed.toFixed(6)}x` : `${exceed.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factorText} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** One schema node that may carry rules, as the CRD validation walks them. */
export interface RuleNode {
  schema: JsonObject;
  /** the path below openAPIV3Schema, as CRD validation errors name it: `.properties[spec].items` */
  path: string;
  /** the type `self` has at this node (undefined: the real server has none, rules cannot compile) */
  selfType: DeclType | undefined;
  /** the product of maxItems/maxProperties above this node; undefined where one is unbounded */
  boundedCardinality: number | undefined;
  /** the path of the nearest list above whose items do not correlate with old ones (not x-kubernetes-list-type map) */
  uncorrelatableWithin?: string;
}

/** Visits every schema node (root, properties, items, additionalProperties) with its type and cardinality. */
export function forEachRuleNode(root: JsonObject, visit: (node: RuleNode) => void): void {
  const walk = (
    schema: JsonObject,
    path: string,
    selfType: DeclType | undefined,
    cardinality: number | undefined,
    parent?: JsonObject,
    uncorrelatable?: string,
  ) => {
    let bounded = cardinality;
    if (parent) {
      const max = cardinality === undefined ? undefined : maxChildElements(parent);
      bounded = max === undefined || cardinality === undefined ? undefined : mul(cardinality, max);
    }
    visit({ schema, path, selfType, boundedCardinality: bounded, uncorrelatableWithin: uncorrelatable });
    if (isJsonObject(schema.properties)) {
      for (const [name, prop] of Object.entries(schema.properties)) {
        if (!isJsonObject(prop)) continue;
        const escaped = escapeCelName(name);
        const fieldType = escaped ? selfType?.fields?.get(escaped) : declTypeOf(prop, !!prop['x-kubernetes-embedded-resource']);
        walk(prop, `${path}.properties[${name}]`, fieldType, bounded, schema, uncorrelatable);
      }
    }
    if (isJsonObject(schema.items)) {
      const correlates = schema['x-kubernetes-list-type'] === 'map';
      walk(schema.items, `${path}.items`, selfType?.elem, bounded, schema, uncorrelatable ?? (correlates ? undefined : path));
    }
    if (isJsonObject(schema.additionalProperties)) {
      walk(schema.additionalProperties, `${path}.additionalProperties`, selfType?.elem, bounded, schema, uncorrelatable);
    }
  };
  walk(root, '', declTypeOf(root, true), 1);
}

/** One rule's figure in {@link estimateRuleCosts}. */
export interface RuleCost {
  /** `.properties[spec].x-kubernetes-validations[0].rule` (below openAPIV3Schema) */
  path: string;
  rule: string;
  /** the estimate × the node's cardinality, as the budget check compares it */
  cost: number;
}

/** The cost of one rule (or messageExpression) source at a node, or undefined when it does not parse. */
export function ruleCostAt(node: RuleNode, source: string): number | undefined {
  const compiled = compileCel(source);
  if ('compileError' in compiled) return undefined;
  return mul(estimateExpression(compiled, node.selfType).maxCost, ruleCardinality(node.boundedCardinality, node.selfType));
}

/**
 * The estimated cost of every rule (and messageExpression) of an openAPIV3Schema and their total,
 * the figures kube-apiserver compares with {@link STATIC_ESTIMATED_COST_LIMIT} and
 * {@link STATIC_ESTIMATED_CRD_COST_LIMIT}. Rules that do not parse are left out.
 */
export function estimateRuleCosts(openAPIV3Schema: JsonObject): { rules: RuleCost[]; total: number } {
  const rules: RuleCost[] = [];
  forEachRuleNode(openAPIV3Schema, (node) => {
    const validations = Array.isArray(node.schema['x-kubernetes-validations']) ? node.schema['x-kubernetes-validations'] : [];
    validations.forEach((v, i) => {
      if (!isJsonObject(v)) return;
      for (const key of ['rule', 'messageExpression'] as const) {
        const source = v[key];
        if (typeof source !== 'string' || !source.trim()) continue;
        const cost = ruleCostAt(node, source);
        if (cost !== undefined) rules.push({ path: `${node.path}.x-kubernetes-validations[${i}].${key}`, rule: source, cost });
      }
    });
  });
  return {
    rules,
    total: Math.min(
      SATURATED,
      rules.reduce((sum, r) => sum + r.cost, 0),
    ),
  };
}
