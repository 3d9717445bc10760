/**
 * Read-your-writes overlay over an informer: after we write an object, no read through this
 * overlay returns an older version of it than the one the server gave back to us.
 *
 * `recordWrite(obj)` stores the server's response of our write (without `metadata.managedFields`, as
 * the informer caches objects). `get` returns that copy until the
 * informer's own copy is at least as new (then the entry is dropped and the informer answers).
 * `observe(event)` — subscribe it to the informer — evicts entries the informer has caught up with.
 *
 * Eviction rules (resourceVersions compared only by `isAtLeast`, src/kube/resource-version.ts):
 * - added/updated at or past the cached version → evict (the informer has it, or something newer);
 *   older → keep (a stale event); incomparable versions → evict (conservative JOSDK 5.1 rule);
 * - deleted with the cached uid, or with a delete version at or past ours → evict; a delete of an
 *   earlier incarnation (other uid, older version) arriving after our create → keep;
 * - relisted: keep only entries the new list holds in an older version; evict the rest (absent from
 *   the list → the object was deleted after our write, or the caller falls back to a GET).
 *
 * - recordDeleted (a GET found nothing): the informer's copies of that incarnation are hidden
 *   (tombstone by uid) until its delete event or a relist without it.
 *
 * Guarantees: after `recordWrite(v)`, `get` returns v or a version at least as new, until the object
 * is deleted (same uid), absent from a relist, or versions are incomparable. After
 * `recordDeleted`, `get` never returns the deleted incarnation again.
 * Assumptions: the inner reader is the informer whose events are passed to `observe`, in order.
 * Caveats: callers that need certainty after an eviction (the state store) GET when the informer
 * does not have the object; an evicted entry is never resurrected by a later `recordWrite` of an
 * older version.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { withoutManagedFields, type ObjectEvent, type ObjectReader } from '../kube/object-reader.js';
import { compareResourceVersions, isAtLeast } from '../kube/resource-version.js';

function keyOf(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

function rvOf(object: KubernetesObject | undefined): string | undefined {
  return object?.metadata?.resourceVersion;
}

/** An empty reader, for an overlay used as a pure own-write cache (no informer). */
export const EMPTY_READER: ObjectReader<never> = { get: () => undefined, list: () => [] };

export class ReadYourWritesCache<T extends KubernetesObject> implements ObjectReader<T> {
  private readonly entries = new Map<string, T>();
  /** Incarnations (uids) we know are deleted while the informer may still hold them. */
  private readonly tombstones = new Map<string, Set<string>>();

  constructor(private readonly inner: ObjectReader<T> = EMPTY_READER) {}

  /**
   * Remembers the server's answer to our write (or a fresh GET). Ignored when we already hold a
   * newer copy or when the informer is already at least as new.
   */
  recordWrite(object: T): void {
    const rv = rvOf(object);
    if (!rv) return;
    const key = keyOf(object.metadata?.namespace, object.metadata?.name);
    const held = this.entries.get(key);
    if (held && compareResourceVersions(rvOf(held), rv) === 1) return;
    const informerCopy = this.inner.get(object.metadata?.namespace ?? '', object.metadata?.name ?? '');
    if (informerCopy && isAtLeast(rvOf(informerCopy), rv)) {
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, withoutManagedFields(structuredClone(object)));
  }

  /** Drops our copy (after our own delete, or when the caller knows it is wrong). */
  forget(namespace: string, name: string): void {
    this.entries.delete(keyOf(namespace, name));
  }

  /**
   * The object is known to be gone (a GET answered 404): drops our copy and hides the informer's
   * copies of the same incarnation(s) until the informer reports the delete. A new incarnation
   * (another uid) is visible at once.
   */
  recordDeleted(namespace: string, name: string): void {
    const key = keyOf(namespace, name);
    const uids = this.tombstones.get(key) ?? new Set<string>();
    for (const known of [this.entries.get(key), this.inner.get(namespace, name)]) {
      const uid = known?.metadata?.uid;
      if (uid) uids.add(uid);
    }
    this.entries.delete(key);
    if (uids.size > 0) this.tombstones.set(key, uids);
  }

  private buried(key: string, object: T | undefined): boolean {
    const uid = object?.metadata?.uid;
    return uid !== undefined && (this.tombstones.get(key)?.has(uid) ?? false);
  }

  /** Our copy if the informer has not caught up with it, else the informer's. */
  get(namespace: string, name: string): T | undefined {
    const key = keyOf(namespace, name);
    const held = this.entries.get(key);
    const found = this.inner.get(namespace, name);
    const informerCopy = this.buried(key, found) ? undefined : found;
    if (!held) return informerCopy;
    if (informerCopy && isAtLeast(rvOf(informerCopy), rvOf(held))) {
      this.entries.delete(key);
      return informerCopy;
    }
    return structuredClone(held);
  }

  list(namespace?: string): T[] {
    const merged = new Map<string, T>();
    for (const object of this.inner.list(namespace)) {
      const key = keyOf(object.metadata?.namespace, object.metadata?.name);
      if (!this.buried(key, object)) merged.set(key, object);
    }
    for (const [key, held] of this.entries) {
      if (namespace !== undefined && held.metadata?.namespace !== namespace) continue;
      const informerCopy = merged.get(key);
      if (!informerCopy || !isAtLeast(rvOf(informerCopy), rvOf(held))) merged.set(key, structuredClone(held));
    }
    return [...merged.values()];
  }

  /** True while we hold a copy newer than the informer's for this object. */
  holds(namespace: string, name: string): boolean {
    return this.entries.has(keyOf(namespace, name));
  }

  /** How many entries are held (for tests and metrics). */
  size(): number {
    return this.entries.size;
  }

  /** Feed every informer event here, in order. */
  observe(event: ObjectEvent<T>): void {
    if (event.type === 'relisted') {
      const listed = new Map<string, T>();
      for (const object of event.objects) listed.set(keyOf(object.metadata?.namespace, object.metadata?.name), object);
      for (const key of [...this.tombstones.keys()]) if (!this.buried(key, listed.get(key))) this.tombstones.delete(key);
      for (const [key, held] of [...this.entries]) {
        const copy = listed.get(key);
        const listedIsOlder = copy !== undefined && compareResourceVersions(rvOf(copy), rvOf(held)) === -1;
        if (!listedIsOlder) this.entries.delete(key);
      }
      return;
    }
    const object = event.object;
    const key = keyOf(object.metadata?.namespace, object.metadata?.name);
    if (event.type === 'deleted' && object.metadata?.uid) {
      const uids = this.tombstones.get(key);
      uids?.delete(object.metadata.uid);
      if (uids?.size === 0) this.tombstones.delete(key);
    }
    const held = this.entries.get(key);
    if (!held) return;
    const order = compareResourceVersions(rvOf(object), rvOf(held));
    if (event.type === 'deleted') {
      const sameIncarnation = object.metadata?.uid !== undefined && object.metadata.uid === held.metadata?.uid;
      if (sameIncarnation || order === undefined || order >= 0) this.entries.delete(key);
      return;
    }
    if (order === undefined || order >= 0) this.entries.delete(key);
  }
}
