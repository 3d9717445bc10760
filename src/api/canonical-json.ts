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

/**
 * Equal as specs: same canonical JSON once null members are dropped (undefined and null are both
 * "absent"). Decided by walking both values, without building either JSON text (the reconciler asks
 * this of whole specs several times per pass); `sameValueByText` is the definition it must agree with
 * (test/api/canonical-json.test.ts compares them).
 */
export function sameValue(a: unknown, b: unknown): boolean {
  return sameMember(a ?? null, b ?? null);
}

/** The definition of `sameValue`: the canonical JSON texts, null members dropped, compared. */
export function sameValueByText(a: unknown, b: unknown): boolean {
  return canonicalJson(withoutNullMembers(a ?? null)) === canonicalJson(withoutNullMembers(b ?? null));
}

function isAbsent(value: unknown): boolean {
  return value === null || value === undefined;
}

function sameMember(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const aIsObject = a !== null && typeof a === 'object';
  const bIsObject = b !== null && typeof b === 'object';
  // primitives as JSON writes them (NaN is null, -0 is 0; an undefined array element is null)
  if (!aIsObject || !bIsObject) return !aIsObject && !bIsObject && JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameMember(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let members = 0;
  for (const key of Object.keys(left)) {
    const value = left[key];
    if (isAbsent(value)) continue;
    members++;
    const other = right[key];
    if (isAbsent(other) || !Object.prototype.hasOwnProperty.call(right, key) || !sameMember(value, other)) return false;
  }
  for (const key of Object.keys(right)) if (!isAbsent(right[key])) members--;
  return members === 0;
}
