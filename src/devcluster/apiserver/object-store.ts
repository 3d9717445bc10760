/**
 * In-memory storage with one global resourceVersion counter, like etcd's revision.
 *
 * Guarantees:
 * - Every commit (put/remove) takes the next revision; the object's `metadata.resourceVersion`
 *   is that revision, and the event published to the {@link WatchHub} carries it. A DELETED event's
 *   object carries the delete revision, as on the real server.
 * - Objects are indexed by group resource, then namespace ('' for cluster-scoped), then name, so a
 *   namespaced list touches only its namespace.
 * - Stored objects are never mutated after commit: writers build a new object. This lets readers
 *   and watchers share them and lets serialization be cached per object ({@link cachedJson}).
 * - Events carry the previous state (MODIFIED and DELETED), so an older state of a resource type
 *   can be rebuilt from the watch window ({@link stateAt}) for lists at an older revision.
 * - An owner index (ownerReferences[].uid → dependents) is kept in step with every commit, for the
 *   garbage collector.
 * Assumptions: callers hold no reference they mutate after put().
 */
import type { KubeObject } from './resource-types.js';
import { WatchHub } from './watch-hub.js';
import { watchWindowOptions, type WatchWindowOptions } from './watch-window.js';

export interface ObjectKey {
  groupResource: string;
  namespace: string;
  name: string;
}

const jsonCache = new WeakMap<KubeObject, Map<string, string>>();

/** Memoizes an encoding of a (never mutated) stored object. */
export function cachedJson(obj: KubeObject, key: string, encode: () => string): string {
  let m = jsonCache.get(obj);
  if (!m) {
    m = new Map();
    jsonCache.set(obj, m);
  }
  let s = m.get(key);
  if (s === undefined) {
    s = encode();
    m.set(key, s);
  }
  return s;
}

function keyString(k: ObjectKey): string {
  return `${k.groupResource}\u0000${k.namespace}\u0000${k.name}`;
}

export function parseKeyString(s: string): ObjectKey {
  const [groupResource, namespace, name] = s.split('\u0000');
  return { groupResource, namespace, name };
}

export class ObjectStore {
  private revision: number;
  private readonly buckets = new Map<string, Map<string, Map<string, KubeObject>>>();
  private readonly ownerIndex = new Map<string, Set<string>>();
  private readonly uidIndex = new Map<string, string>();
  readonly watchHub: WatchHub;

  /** `history`: the watch window of each resource type (watch-window.ts), or just its upper bound capacity. */
  constructor(history: number | WatchWindowOptions, initialRevision = 0) {
    this.watchHub = new WatchHub(typeof history === 'number' ? watchWindowOptions(history) : history);
    this.revision = initialRevision;
  }

  currentRevision(): number {
    return this.revision;
  }

  get(groupResource: string, namespace: string, name: string): KubeObject | undefined {
    return this.buckets.get(groupResource)?.get(namespace)?.get(name);
  }

  /** All objects of a group resource, in one namespace or (namespace undefined) all. */
  *list(groupResource: string, namespace?: string): Iterable<KubeObject> {
    const byNs = this.buckets.get(groupResource);
    if (!byNs) return;
    if (namespace !== undefined) {
      const m = byNs.get(namespace);
      if (m) yield* m.values();
      return;
    }
    for (const m of byNs.values()) yield* m.values();
  }

  count(groupResource: string, namespace?: string): number {
    const byNs = this.buckets.get(groupResource);
    if (!byNs) return 0;
    if (namespace !== undefined) return byNs.get(namespace)?.size ?? 0;
    let n = 0;
    for (const m of byNs.values()) n += m.size;
    return n;
  }

  /** Group resources having at least one object in the namespace. */
  groupResourcesIn(namespace: string): string[] {
    const out: string[] = [];
    for (const [gr, byNs] of this.buckets) if ((byNs.get(namespace)?.size ?? 0) > 0) out.push(gr);
    return out;
  }

  /**
   * Commits a create or update: stamps the next revision into `obj.metadata.resourceVersion`
   * (obj must be a fresh object owned by the store from now on) and publishes the event.
   */
  put(groupResource: string, obj: KubeObject): KubeObject {
    const namespace = obj.metadata.namespace ?? '';
    const name = obj.metadata.name;
    let byNs = this.buckets.get(groupResource);
    if (!byNs) {
      byNs = new Map();
      this.buckets.set(groupResource, byNs);
    }
    let m = byNs.get(namespace);
    if (!m) {
      m = new Map();
      byNs.set(namespace, m);
    }
    const prev = m.get(name);
    const rv = ++this.revision;
    obj.metadata.resourceVersion = String(rv);
    m.set(name, obj);
    const key = keyString({ groupResource, namespace, name });
    if (prev) this.unindexOwners(key, prev);
    this.indexOwners(key, obj);
    if (obj.metadata.uid) this.uidIndex.set(obj.metadata.uid, key);
    this.watchHub.publish({ type: prev ? 'MODIFIED' : 'ADDED', rv, groupResource, namespace, obj, prev });
    return obj;
  }

  /**
   * Removes an object; publishes DELETED carrying the delete revision. `finalState` (e.g. the
   * object with its last finalizer removed) is what the DELETED event shows; default: the stored one.
   */
  remove(groupResource: string, namespace: string, name: string, finalState?: KubeObject): KubeObject | undefined {
    const m = this.buckets.get(groupResource)?.get(namespace);
    const prev = m?.get(name);
    if (!m || !prev) return undefined;
    m.delete(name);
    const rv = ++this.revision;
    const base = finalState ?? prev;
    const obj: KubeObject = { ...base, metadata: { ...base.metadata, resourceVersion: String(rv) } };
    this.unindexOwners(keyString({ groupResource, namespace, name }), prev);
    if (prev.metadata.uid) this.uidIndex.delete(prev.metadata.uid);
    this.watchHub.publish({ type: 'DELETED', rv, groupResource, namespace, obj, prev });
    return obj;
  }

  /**
   * The objects of a group resource as they were at revision `rv` (namespace undefined: all), or
   * undefined when the watch window no longer holds every event since `rv`. Unordered.
   */
  stateAt(groupResource: string, rv: number, namespace?: string): KubeObject[] | undefined {
    const events = this.watchHub.eventsAfter(groupResource, rv);
    if (!events) return undefined;
    // the state before the first event after rv of each key is the state at rv
    const before = new Map<string, KubeObject | undefined>();
    for (const ev of events) {
      if (namespace !== undefined && ev.namespace !== namespace) continue;
      const key = `${ev.namespace}\u0000${ev.obj.metadata.name}`;
      if (!before.has(key)) before.set(key, ev.type === 'ADDED' ? undefined : ev.prev);
    }
    const out: KubeObject[] = [];
    for (const o of this.list(groupResource, namespace)) {
      if (!before.has(`${o.metadata.namespace ?? ''}\u0000${o.metadata.name}`)) out.push(o);
    }
    for (const o of before.values()) if (o) out.push(o);
    return out;
  }

  /** Where the object with this uid lives, if it exists. */
  keyOfUid(uid: string): ObjectKey | undefined {
    const k = this.uidIndex.get(uid);
    return k === undefined ? undefined : parseKeyString(k);
  }

  /** Objects whose ownerReferences name this uid. */
  dependentsOf(uid: string): ObjectKey[] {
    const s = this.ownerIndex.get(uid);
    return s ? [...s].map(parseKeyString) : [];
  }

  private indexOwners(key: string, obj: KubeObject): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      if (!ref?.uid) continue;
      let s = this.ownerIndex.get(ref.uid);
      if (!s) {
        s = new Set();
        this.ownerIndex.set(ref.uid, s);
      }
      s.add(key);
    }
  }

  private unindexOwners(key: string, obj: KubeObject): void {
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const s = this.ownerIndex.get(ref?.uid);
      if (!s) continue;
      s.delete(key);
      if (s.size === 0) this.ownerIndex.delete(ref.uid);
    }
  }

  /** Drops the (empty) storage of a group resource whose CRD is gone. */
  dropGroupResource(groupResource: string): void {
    this.buckets.delete(groupResource);
    this.watchHub.dropGroupResource(groupResource);
  }
}
