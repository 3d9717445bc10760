/**
 * The API server's objects are JSON values (request bodies parsed from JSON or YAML, stored objects
 * derived from them): their types, the one place parsed text gets them, small readers that narrow
 * them, deep copies and deep equality.
 *
 * Typing rule: untyped text becomes a {@link JsonValue} in {@link parseJsonText} only; everything
 * else narrows JsonValues with the guards and readers here (or with `typeof`), never with casts.
 *
 * Why `cloneJson` and not `structuredClone`: it goes through V8's serializer and was the largest
 * single cost of an update in the dev cluster (a 2 KB Deployment: 10 µs per copy against 1.2 µs
 * here, and an update copies it two or three times; design/performance.md, finding 8).
 *
 * Guarantees of cloneJson: plain objects and arrays are copied recursively (own enumerable keys, in
 * order; `undefined` members kept, as structuredClone keeps them); primitives are returned as they
 * are. Anything else (a Date, a Buffer, a Map: not JSON, not expected here) is handed to
 * structuredClone, so a copy is never silently wrong.
 *
 * Guarantees of jsonEqual: the answer of `util.isDeepStrictEqual` for JSON values (so it may
 * replace it on them): key order does not matter, `undefined` members count as keys (`{a:
 * undefined}` is not `{}`), primitives compare with Object.is (`0` is not `-0`); what is not a
 * plain object, dense array or primitive (a Date, a Buffer) goes to isDeepStrictEqual itself.
 * Caveat: symbol-keyed members (never JSON) are not compared. Why: isDeepStrictEqual's
 * generality (prototypes, symbols, cycles, Maps) made it the largest single cost of a write's
 * "did this change anything" checks (design/performance.md); a JSON walk allocates nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/**
 * A JSON object. A member may be `undefined` while an object is built or changed (JSON.stringify
 * leaves such members out; cloneJson keeps them).
 */
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

/**
 * Parses a request or patch body (YAML when `yaml`). JSON.parse and YAML.parse (yaml's default
 * core schema) build only JSON values, so this is where their untyped result is typed, once.
 * Throws the parser's error on malformed text.
 */
export function parseJsonText(text: string, yaml = false): JsonValue {
  const value: unknown = yaml ? YAML.parse(text) : JSON.parse(text);
  return value as JsonValue;
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value if it is a JSON object, else undefined. */
export function asObject(value: JsonValue | undefined): JsonObject | undefined {
  return isJsonObject(value) ? value : undefined;
}

/** The value if it is an array, else an empty list. */
export function asArray(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

/** The value if it is a string, else undefined. */
export function asString(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The value at `path` inside `value`, as `value?.[a]?.[b]…` reads it for JSON: each step goes into
 * an object by key (or an array by index); a step into anything else gives undefined.
 */
export function valueAt(value: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let cur = value;
  for (const key of path) {
    if (isJsonObject(cur)) cur = cur[key];
    else if (Array.isArray(cur) && /^\d+$/.test(key)) cur = cur[Number(key)];
    else return undefined;
  }
  return cur;
}

/**
 * A JSON value as text (messages, keys, comparisons with strings): a string as it is, other scalars
 * (and undefined) as String() renders them, objects and arrays as JSON.
 */
export function textOf(value: JsonValue | undefined): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

/** A deep copy of a JSON value (guarantees above). */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = cloneJson((value as Record<string, unknown>)[key]);
  return copy as T;
}

/** Deep equality of JSON values, exactly as isDeepStrictEqual answers it (guarantees above). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return a !== 0 || Object.is(a, b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return Object.is(a, b);
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (aIsArray) {
    const bList = b as unknown[];
    if (a.length !== bList.length) return false;
    for (let i = 0; i < a.length; i++) {
      // holes are not JSON: an array with one is left to isDeepStrictEqual
      if (!(i in a) || !(i in bList)) return isDeepStrictEqual(a, b);
      if (!jsonEqual(a[i], bList[i])) return false;
    }
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(a);
  if (proto !== Object.getPrototypeOf(b) || (proto !== Object.prototype && proto !== null)) return isDeepStrictEqual(a, b);
  const aRecord = a as Record<string, unknown>;
  const bRecord = b as Record<string, unknown>;
  const keys = Object.keys(aRecord);
  if (keys.length !== Object.keys(bRecord).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(bRecord, key) || !jsonEqual(aRecord[key], bRecord[key])) return false;
  }
  return true;
}
