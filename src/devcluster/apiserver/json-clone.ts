/**
 * Deep copies of the API server's objects, which are JSON values (request bodies parsed from JSON
 * or YAML, stored objects derived from them).
 *
 * Why not `structuredClone`: it goes through V8's serializer and was the largest single cost of an
 * update in the dev cluster (a 2 KB Deployment: 10 µs per copy against 1.2 µs here, and an update
 * copies it two or three times; design/performance.md, finding 8).
 *
 * Guarantees: plain objects and arrays are copied recursively (own enumerable keys, in order;
 * `undefined` members kept, as structuredClone keeps them); primitives are returned as they are.
 * Anything else (a Date, a Buffer, a Map: not JSON, not expected here) is handed to
 * structuredClone, so a copy is never silently wrong.
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = cloneJson((value as Record<string, unknown>)[key]);
  return copy as T;
}
