/**
 * The CEL environment of the emulated API server: one place that compiles and evaluates the CEL
 * expressions kube-apiserver evaluates (CRD `x-kubernetes-validations` in
 * crd-validation-rules.ts, ValidatingAdmissionPolicy in validating-admission-policy.ts), with
 * `@bufbuild/cel` (Buf's CEL implementation, checked against the cel-spec conformance suite;
 * design/007) and Go RE2 regular expressions (`@bufbuild/re2`), as cel-go has.
 *
 *   const compiled = compileCel("self.replicas <= 5");
 *   if ('compileError' in compiled) …;
 *   compiled.evaluate({ self: celValueOf(obj.spec, schema) });  // { value } | { error }
 *
 * Values: JSON is handed to CEL as kube-apiserver's unstructured-to-CEL conversion does
 * (k8s.io/apiserver/pkg/cel/common/values.go): objects become maps (field selection and `has()` on
 * them), arrays lists, and a number is an `int` where the schema says `integer` (or, without a
 * schema, where it is a whole number, as the JSON decoder's int64) and a `double` otherwise.
 *
 * Functions: CEL's standard library, the `strings` extension kube-apiserver enables (`lowerAscii`,
 * `split`, `join`, `replace`, `indexOf`, `trim`, …), and the Kubernetes library functions listed in
 * {@link KUBERNETES_LIBRARY}.
 *
 * Caveats: expressions are parsed, not type-checked, so an expression naming an unknown variable is
 * refused when it runs ("unresolved attribute"), not when it is compiled as cel-go's checker would;
 * optional types (`?.`, `optionalOldSelf`) are not supported by the library; a JSON `1.0` without a
 * schema is an `int` (JavaScript cannot tell it from `1`); date-time strings stay strings.
 */
import { celEnv, celFunc, celMethod, CelScalar, isCelError, isCelList, isCelMap, listType, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { RE2JS } from '@bufbuild/re2';
import type { ParsedExpr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';

/** The variables an expression is evaluated with (`self`, `oldSelf`, `object`, `request`, …). */
export type CelBindings = Record<string, CelInput>;

/** What one evaluation gave: a value, or the evaluation error's message (no such key, division by zero, a bad regex). */
export type CelOutcome = { value: CelValue } | { error: string };

export interface CompiledCel {
  readonly source: string;
  /** the parsed expression, for the cost estimate (cel-cost-estimate.ts) */
  readonly ast: ParsedExpr;
  evaluate(bindings: CelBindings): CelOutcome;
}

/**
 * The Kubernetes CEL library functions this environment adds to the standard library
 * (k8s.io/apiserver/pkg/cel/library: lists.go, regex.go, urls.go), those the shipped rules and
 * policies use or a user is most likely to write.
 */
export const KUBERNETES_LIBRARY = [
  // regex.go
  celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
    return new RegExp(pattern, 'u').exec(this)?.[0] ?? '';
  }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (pattern) {
    return [...this.matchAll(new RegExp(pattern, 'gu'))].map((m) => m[0]);
  }),
  // urls.go: isURL(string) is true for an absolute URI that Go's url.ParseRequestURI accepts
  celFunc('isURL', [CelScalar.STRING], CelScalar.BOOL, (text) => isRequestUri(text)),
];

function isRequestUri(text: string): boolean {
  if (text.startsWith('/')) return !/\s/.test(text);
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]*$/.test(text);
}

/**
 * `matches` with each pattern compiled once: the library's own compiles its RE2 program on every
 * call, and the rules of a CRD run on every write of every object (the root `metadata.name` rule
 * alone is one `matches` per FlinkDeployment write). Patterns come from installed rules and
 * policies, so the cache is bounded by what is installed (and capped, for safety).
 */
const MAX_CACHED_PATTERNS = 1_000;
const compiledPatterns = new Map<string, RE2JS>();
const CACHING_RE2 = {
  compile(pattern: string): RE2JS {
    let compiled = compiledPatterns.get(pattern);
    if (compiled === undefined) {
      compiled = RE2JS.compile(pattern);
      if (compiledPatterns.size >= MAX_CACHED_PATTERNS) compiledPatterns.clear();
      compiledPatterns.set(pattern, compiled);
    }
    return compiled;
  },
};

const ENVIRONMENT = celEnv({ funcs: [...strings, ...KUBERNETES_LIBRARY], re2: CACHING_RE2 });

/**
 * Parses `source` and prepares it for evaluation; `{ compileError }` carries cel-go's wording of a
 * syntax error (`<input>:1:8: found + but expecting end of input`) when it does not parse.
 */
export function compileCel(source: string): CompiledCel | { compileError: string } {
  let ast: ParsedExpr;
  try {
    ast = parse(source);
  } catch (e) {
    return { compileError: e instanceof Error ? e.message : String(e) };
  }
  const program = plan(ENVIRONMENT, ast);
  return {
    source,
    ast,
    evaluate(bindings: CelBindings): CelOutcome {
      let result: CelValue | Error;
      try {
        result = program(bindings);
      } catch (e) {
        return { error: e instanceof Error ? e.message : String(e) };
      }
      if (isCelError(result)) return { error: result.message };
      return result instanceof Error ? { error: result.message } : { value: result };
    },
  };
}

/** The schema node of `key` under an object schema node (a declared property, else additionalProperties). */
function childSchema(schema: JsonObject | undefined, key: string): JsonObject | undefined {
  if (!schema) return undefined;
  const properties = schema.properties;
  if (isJsonObject(properties) && isJsonObject(properties[key])) return properties[key];
  return isJsonObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
}

/**
 * A JSON value as CEL sees it under `schema` (an OpenAPI v3 schema node, or undefined for
 * schemaless data such as `x-kubernetes-preserve-unknown-fields` subtrees and admission requests).
 */
export function celValueOf(value: JsonValue | undefined, schema?: JsonObject): CelInput {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') {
    const type = schema?.type;
    if (type === 'integer' || (type !== 'number' && Number.isInteger(value))) return BigInt(Math.trunc(value));
    return value;
  }
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) {
    const items = schema && isJsonObject(schema.items) ? schema.items : undefined;
    return value.map((item) => celValueOf(item, items));
  }
  const map = new Map<string, CelInput>();
  for (const [key, child] of Object.entries(value)) map.set(key, celValueOf(child, childSchema(schema, key)));
  return map;
}

/** A CEL result as JSON (for a messageExpression's string, a policy's audit value): ints become numbers. */
export function jsonOfCel(value: CelValue): JsonValue {
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (isCelList(value)) return [...value].map((item) => jsonOfCel(item));
  if (isCelMap(value)) {
    const out: JsonObject = {};
    for (const [k, v] of value.entries()) out[typeof k === 'string' ? k : JSON.stringify(jsonOfCel(k))] = jsonOfCel(v);
    return out;
  }
  return JSON.stringify(value) ?? null;
}
