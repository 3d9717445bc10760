/**
 * Watch fan-out and the bounded event history watches resume from.
 *
 * Guarantees:
 * - Every committed write is published exactly once, in resourceVersion order, to every watcher
 *   of its group resource whose filter matches the old or the new state (selector transitions
 *   become ADDED/DELETED as the real watch cache does).
 * - Each event is encoded once per (encoding, event type) and the same string is written to all
 *   watchers sharing that encoding: no per-watcher clone or stringify on the hot path.
 * - A watch from resourceVersion N replays every retained event with RV > N, then streams. The
 *   history of each group resource is a {@link WatchWindow} sized like the real watch cache; a
 *   watch from an RV the window no longer reaches throws 410 `too old resource version: N (M)`
 *   (the real `getAllEventsSinceLocked` rule and wording).
 * - A MODIFIED that takes an object out of a watcher's selectors is delivered as DELETED showing
 *   the previous state with the event's resourceVersion (the real `convertToWatchEvent`).
 * - Fan-out cost: watchers that declare an equality label requirement (`labels` with `k=v`) are
 *   indexed by it, so an event only visits the watchers whose required value the object (or its
 *   previous state) carries, plus the unindexed ones — not every watcher of the group resource.
 *   N label-filtered watches and N writes cost O(N), not O(N²). Each watcher still decides with
 *   its own `matches`; the index only skips watchers that cannot match, so no event is lost.
 * Assumptions: single-threaded (Node); publish is called synchronously from the store's commit,
 * so a subscribe that replays history cannot miss or duplicate an event. A watcher's `labels`
 * never change after subscribe and are implied by its `matches`.
 * Caveats: one window per group resource (as the real cacher has one per resource), not per
 * version; `eventsAfter` serves older list states only as far back as that window reaches (the
 * real server reads those from etcd, kept until its 5-minute compaction).
 */
import { gone } from './errors.js';
import type { KubeObject } from './resource-types.js';
import type { LabelSelector } from './selectors.js';
import { WatchWindow, type WatchWindowOptions } from './watch-window.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  rv: number;
  groupResource: string;
  namespace: string;
  obj: KubeObject;
  /** the state before a MODIFIED (for selector transitions) or a DELETED (to rebuild older list states) */
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
  private readonly history = new Map<string, WatchWindow>();

  constructor(private readonly windowOptions: WatchWindowOptions) {}

  publish(ev: StoreEvent): void {
    let window = this.history.get(ev.groupResource);
    if (!window) {
      window = new WatchWindow(this.windowOptions);
      this.history.set(ev.groupResource, window);
    }
    window.push(ev);
    const group = this.watchers.get(ev.groupResource);
    if (!group || group.all.size === 0) return;
    // the encodings live only for this fan-out: retained history must not pin the encoded lines
    const cache: EncodingCache = new Map();
    for (const w of group.candidates(ev.obj, ev.prev)) this.deliver(w, ev, cache);
  }

  private deliver(w: Watcher, ev: StoreEvent, cache: EncodingCache): void {
    if (w.namespace !== undefined && w.namespace !== ev.namespace) return;
    let type: WatchEventType | undefined;
    let shown = ev.obj;
    if (ev.type === 'MODIFIED') {
      const now = w.matches(ev.obj);
      const before = ev.prev ? w.matches(ev.prev) : now;
      type = now && before ? 'MODIFIED' : now ? 'ADDED' : before ? 'DELETED' : undefined;
      // leaving the selectors: the previous state, at the event's resourceVersion
      if (type === 'DELETED' && ev.prev) shown = { ...ev.prev, metadata: { ...ev.prev.metadata, resourceVersion: String(ev.rv) } };
    } else if (w.matches(ev.obj)) type = ev.type;
    if (!type) return;
    const key = `${w.encodingKey}|${type}`;
    let line = cache.get(key);
    if (line === undefined) {
      line = w.encode(type, shown);
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
      const window = this.history.get(w.groupResource);
      const oldest = window?.tooOldForWatch(fromRv);
      if (oldest !== undefined) throw gone(`too old resource version: ${fromRv} (${oldest})`);
      if (window) for (const ev of window.after(fromRv)) this.deliver(w, ev, new Map());
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

  /** RV of the newest event of this group resource no longer retained (0: none dropped). */
  compactedRevision(groupResource: string): number {
    return this.history.get(groupResource)?.compactedRv ?? 0;
  }

  /**
   * The retained events of a group resource after `rv`, in order, or undefined when some of them
   * were already dropped (an older state can then no longer be rebuilt from the window).
   */
  eventsAfter(groupResource: string, rv: number): Iterable<StoreEvent> | undefined {
    const window = this.history.get(groupResource);
    if (!window) return [];
    return window.complete(rv) ? window.after(rv) : undefined;
  }

  /** Current capacity of a group resource's window (the lower bound before its first event). */
  windowCapacity(groupResource: string): number {
    return this.history.get(groupResource)?.capacity ?? this.windowOptions.lowerBoundCapacity;
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
