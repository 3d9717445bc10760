/**
 * The one canonical JSON of the project, and the spec equality built on it.
 *
 * `canonicalJson` is what spec hashes and the deployed-spec annotation are computed from
 * (src/flink/deployed-record.ts): changing its output changes every hash on running clusters, so
 * it is frozen. `sameValue` compares two values the way the reconciler compares specs: key order
 * does not matter and a member set to null is the same as an absent one (the Apache operator's
 * JSON writes nulls for unset fields).
 */

/** JSON with object keys sorted at every level (arrays keep their order); undefined members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

function withoutNullMembers(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withoutNullMembers);
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>))
    if (member !== null && member !== undefined) out[key] = withoutNullMembers(member);
  return out;
}

/** Equal as specs: same canonical JSON once null members are dropped (undefined and null are both "absent"). */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(withoutNullMembers(a ?? null)) === canonicalJson(withoutNullMembers(b ?? null));
}
