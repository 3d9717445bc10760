/**
 * Watch fan-out and the bounded event history watches resume from.
 *
 * Guarantees:
 * - Every committed write is published exactly once, in resourceVersion order, to every watcher
 *   of its group resource whose filter matches the old or the new state (selector transitions
 *   become ADDED/DELETED as the real watch cache does).
 * - Each event is encoded once per (encoding, event type) and the same string is written to all
 *   watchers sharing that encoding: no per-watcher clone or stringify on the hot path.
 * - A watch from resourceVersion N replays every retained event with RV > N, then streams; when an
 *   event the watch would need was already dropped from the bounded history, subscribe throws 410.
 * - Fan-out cost: watchers that declare an equality label requirement (`labels` with `k=v`) are
 *   indexed by it, so an event only visits the watchers whose required value the object (or its
 *   previous state) carries, plus the unindexed ones — not every watcher of the group resource.
 *   N label-filtered watches and N writes cost O(N), not O(N²). Each watcher still decides with
 *   its own `matches`; the index only skips watchers that cannot match, so no event is lost.
 * Assumptions: single-threaded (Node); publish is called synchronously from the store's commit,
 * so a subscribe that replays history cannot miss or duplicate an event. A watcher's `labels`
 * never change after subscribe and are implied by its `matches`.
 * Caveats: the history is per group resource (`watchHistorySize` events each), not global.
 */
import { gone } from './errors.js';
import type { KubeObject } from './resource-types.js';
import type { LabelSelector } from './selectors.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  rv: number;
  groupResource: string;
  namespace: string;
  obj: KubeObject;
  /** the state before a MODIFIED (for selector transitions) */
  prev?: KubeObject;
}

/** Encoded lines of one event during one fan-out, keyed by `${encodingKey}|${type}`. */
type EncodingCache = Map<string, string>;

export interface Watcher {
  groupResource: string;
  /** only events of this namespace (undefined: all) */
  namespace?: string;
  matches(obj: KubeObject): boolean;
  /** the label selector `matches` applies (optional; lets the hub index the watcher) */
  labels?: LabelSelector;
  /** watchers with the same key share encoded lines */
  encodingKey: string;
  /** one JSON line (without newline) for this event */
  encode(type: WatchEventType, obj: KubeObject): string;
  write(line: string): void;
  close(): void;
}

class EventRing {
  private items: (StoreEvent | undefined)[];
  private start = 0;
  size = 0;
  /** RV of the newest event dropped from the ring (0: nothing dropped yet) */
  compactedRv = 0;
  constructor(private readonly capacity: number) {
    this.items = new Array<StoreEvent | undefined>(capacity);
  }
  push(ev: StoreEvent): void {
    if (this.size === this.capacity) {
      const dropped = this.items[this.start]!;
      this.compactedRv = dropped.rv;
      this.items[this.start] = ev;
      this.start = (this.start + 1) % this.capacity;
    } else {
      this.items[(this.start + this.size) % this.capacity] = ev;
      this.size++;
    }
  }
  *after(rv: number): Iterable<StoreEvent> {
    // binary search for the first event with rv > given
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.items[(this.start + mid) % this.capacity]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.size; i++) yield this.items[(this.start + i) % this.capacity]!;
  }
  oldestRv(): number | undefined {
    return this.size ? this.items[this.start]!.rv : undefined;
  }
}

/**
 * The watchers of one group resource: every one in `all`; those with an equality label
 * requirement also under `byLabel[key][value]` (exactly one entry each), the rest in `unindexed`.
 */
class WatcherGroup {
  readonly all = new Set<Watcher>();
  private readonly unindexed = new Set<Watcher>();
  private readonly byLabel = new Map<string, Map<string, Set<Watcher>>>();

  add(w: Watcher): void {
    this.all.add(w);
    const req = indexRequirement(w.labels);
    if (!req) {
      this.unindexed.add(w);
      return;
    }
    let byValue = this.byLabel.get(req.key);
    if (!byValue) this.byLabel.set(req.key, (byValue = new Map<string, Set<Watcher>>()));
    let set = byValue.get(req.value);
    if (!set) byValue.set(req.value, (set = new Set()));
    set.add(w);
  }

  delete(w: Watcher): void {
    if (!this.all.delete(w)) return;
    const req = indexRequirement(w.labels);
    if (!req) {
      this.unindexed.delete(w);
      return;
    }
    const byValue = this.byLabel.get(req.key);
    const set = byValue?.get(req.value);
    if (!byValue || !set) return;
    set.delete(w);
    if (set.size === 0) byValue.delete(req.value);
    if (byValue.size === 0) this.byLabel.delete(req.key);
  }

  /** Each watcher that may match `obj` or `prev`, once (sets under different values are disjoint). */
  *candidates(obj: KubeObject, prev: KubeObject | undefined): Iterable<Watcher> {
    yield* this.unindexed;
    for (const [key, byValue] of this.byLabel) {
      const now = labelValue(obj, key);
      if (now !== undefined) {
        const set = byValue.get(now);
        if (set) yield* set;
      }
      const before = prev ? labelValue(prev, key) : undefined;
      if (before !== undefined && before !== now) {
        const set = byValue.get(before);
        if (set) yield* set;
      }
    }
  }
}

/** The requirement a watcher is indexed by: its first `k=v` (or single-valued `k in (v)`). */
function indexRequirement(labels: LabelSelector | undefined): { key: string; value: string } | undefined {
  for (const r of labels ?? []) {
    if (r.op === 'eq') return { key: r.key, value: r.value };
    if (r.op === 'in' && r.values.size === 1) return { key: r.key, value: [...r.values][0] };
  }
  return undefined;
}

function labelValue(obj: KubeObject, key: string): string | undefined {
  const labels = obj.metadata?.labels;
  if (!labels || typeof labels !== 'object' || !Object.prototype.hasOwnProperty.call(labels, key)) return undefined;
  const v = labels[key];
  return typeof v === 'string' ? v : undefined;
}

export class WatchHub {
  private readonly watchers = new Map<string, WatcherGroup>();
  private readonly history = new Map<string, EventRing>();

  constructor(private readonly historySize: number) {}

  publish(ev: StoreEvent): void {
    let ring = this.history.get(ev.groupResource);
    if (!ring) {
      ring = new EventRing(this.historySize);
      this.history.set(ev.groupResource, ring);
    }
    ring.push(ev);
    const group = this.watchers.get(ev.groupResource);
    if (!group || group.all.size === 0) return;
    // the encodings live only for this fan-out: retained history must not pin the encoded lines
    const cache: EncodingCache = new Map();
    for (const w of group.candidates(ev.obj, ev.prev)) this.deliver(w, ev, cache);
  }

  private deliver(w: Watcher, ev: StoreEvent, cache: EncodingCache): void {
    if (w.namespace !== undefined && w.namespace !== ev.namespace) return;
    let type: WatchEventType | undefined;
    if (ev.type === 'MODIFIED') {
      const now = w.matches(ev.obj);
      const before = ev.prev ? w.matches(ev.prev) : now;
      type = now && before ? 'MODIFIED' : now ? 'ADDED' : before ? 'DELETED' : undefined;
    } else if (w.matches(ev.obj)) type = ev.type;
    if (!type) return;
    const key = `${w.encodingKey}|${type}`;
    let line = cache.get(key);
    if (line === undefined) {
      line = w.encode(type, ev.obj);
      // per-watcher encodings (tables) are not worth caching
      if (!w.encodingKey.startsWith('!')) cache.set(key, line);
    }
    w.write(line);
  }

  /**
   * Registers a watcher. With `fromRv` set, first replays the retained events after it.
   * Throws 410 Expired when events after `fromRv` were already dropped.
   */
  subscribe(w: Watcher, fromRv: number | undefined): () => void {
    if (fromRv !== undefined) {
      const ring = this.history.get(w.groupResource);
      if (ring && fromRv < ring.compactedRv) {
        throw gone(`too old resource version: ${fromRv} (${ring.oldestRv() ?? ring.compactedRv + 1})`);
      }
      if (ring) for (const ev of ring.after(fromRv)) this.deliver(w, ev, new Map());
    }
    let group = this.watchers.get(w.groupResource);
    if (!group) {
      group = new WatcherGroup();
      this.watchers.set(w.groupResource, group);
    }
    group.add(w);
    return () => {
      group.delete(w);
    };
  }

  /** Oldest RV a watch may still resume from for this group resource. */
  compactedRevision(groupResource: string): number {
    return this.history.get(groupResource)?.compactedRv ?? 0;
  }

  watcherCount(): number {
    let n = 0;
    for (const g of this.watchers.values()) n += g.all.size;
    return n;
  }

  /** Closes every open watch (clients see the stream end and re-watch). */
  closeAll(): void {
    for (const group of this.watchers.values()) {
      for (const w of [...group.all]) {
        w.close();
        group.delete(w);
      }
    }
  }

  /** Forgets the history of a group resource (its CRD was deleted). Open watches are closed. */
  dropGroupResource(groupResource: string): void {
    const group = this.watchers.get(groupResource);
    if (group) for (const w of [...group.all]) w.close();
    this.watchers.delete(groupResource);
    this.history.delete(groupResource);
  }
}
