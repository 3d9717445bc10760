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
 * Assumptions: single-threaded (Node); publish is called synchronously from the store's commit,
 * so a subscribe that replays history cannot miss or duplicate an event.
 * Caveats: the history is per group resource (`watchHistorySize` events each), not global.
 */
import { gone, type JsonObject } from './errors.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  rv: number;
  groupResource: string;
  namespace: string;
  obj: JsonObject;
  /** the state before a MODIFIED (for selector transitions) */
  prev?: JsonObject;
}

/** Encoded lines of one event during one fan-out, keyed by `${encodingKey}|${type}`. */
type EncodingCache = Map<string, string>;

export interface Watcher {
  groupResource: string;
  /** only events of this namespace (undefined: all) */
  namespace?: string;
  matches(obj: JsonObject): boolean;
  /** watchers with the same key share encoded lines */
  encodingKey: string;
  /** one JSON line (without newline) for this event */
  encode(type: WatchEventType, obj: JsonObject): string;
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
    this.items = new Array(capacity);
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

export class WatchHub {
  private readonly watchers = new Map<string, Set<Watcher>>();
  private readonly history = new Map<string, EventRing>();

  constructor(private readonly historySize: number) {}

  publish(ev: StoreEvent): void {
    let ring = this.history.get(ev.groupResource);
    if (!ring) {
      ring = new EventRing(this.historySize);
      this.history.set(ev.groupResource, ring);
    }
    ring.push(ev);
    const set = this.watchers.get(ev.groupResource);
    if (!set || set.size === 0) return;
    // the encodings live only for this fan-out: retained history must not pin the encoded lines
    const cache: EncodingCache = new Map();
    for (const w of set) this.deliver(w, ev, cache);
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
    let set = this.watchers.get(w.groupResource);
    if (!set) {
      set = new Set();
      this.watchers.set(w.groupResource, set);
    }
    set.add(w);
    return () => {
      set!.delete(w);
    };
  }

  /** Oldest RV a watch may still resume from for this group resource. */
  compactedRevision(groupResource: string): number {
    return this.history.get(groupResource)?.compactedRv ?? 0;
  }

  watcherCount(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }

  /** Closes every open watch (clients see the stream end and re-watch). */
  closeAll(): void {
    for (const set of this.watchers.values()) {
      for (const w of [...set]) w.close();
      set.clear();
    }
  }

  /** Forgets the history of a group resource (its CRD was deleted). Open watches are closed. */
  dropGroupResource(groupResource: string): void {
    const set = this.watchers.get(groupResource);
    if (set) for (const w of [...set]) w.close();
    this.watchers.delete(groupResource);
    this.history.delete(groupResource);
  }
}
