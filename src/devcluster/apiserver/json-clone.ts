/**
 * The API server's objects are JSON values (request bodies parsed from JSON or YAML, stored objects
 * derived from them): their types, the one place parsed text gets them, small readers that narrow
 * them, and deep copies.
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
 */
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
