/**
 * The one comparison of resourceVersions in this code base.
 *
 * Kubernetes documents resourceVersion as opaque; KEP-5504 (Kubernetes 1.35) makes it a comparable
 * decimal integer on etcd-backed servers: compare by length first, then lexically, and treat
 * anything that is not a plain decimal without leading zeros as not comparable.
 *
 * Guarantees: `compareResourceVersions(a, b)` is a total order on comparable versions, and returns
 * undefined (never a guess) when either side is not comparable.
 * Assumptions: the server is etcd-backed (or emulates it, as our development cluster does).
 * Caveat: callers must treat `undefined` as "unknown order" and fall back to the conservative
 * choice (for the read-your-writes overlay: keep our own copy only while the informer still holds
 * the version we wrote over, and evict on any event).
 */
const DECIMAL = /^[1-9][0-9]*$/;

export function isComparableResourceVersion(rv: string | undefined | null): rv is string {
  return typeof rv === 'string' && DECIMAL.test(rv);
}

/** -1 if a is older than b, 0 if equal, 1 if newer; undefined if either is not comparable. */
export function compareResourceVersions(a: string | undefined | null, b: string | undefined | null): -1 | 0 | 1 | undefined {
  if (!isComparableResourceVersion(a) || !isComparableResourceVersion(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** True when `a` is known to be at least as new as `b`. */
export function isAtLeast(a: string | undefined | null, b: string | undefined | null): boolean {
  const order = compareResourceVersions(a, b);
  return order !== undefined && order >= 0;
}
