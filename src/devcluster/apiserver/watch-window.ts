/**
 * The watch cache window of one resource type: the recent events a watch (or a list at an older
 * revision) can be served from, sized like kube-apiserver 1.32's watch cache
 * (`staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go`).
 *
 * Guarantees:
 * - Capacity starts at the lower bound (default 100) and adapts as the real `resizeCacheLocked`
 *   does on every new event: when the window is full and its oldest event is younger than the
 *   event fresh duration (default 75 s) the capacity doubles (up to the upper bound, default
 *   102,400); when it is full and the event a quarter of the capacity back is older than that
 *   duration, it halves (down to the lower bound) and the oldest events are dropped. A full window
 *   drops its oldest event for each new one. Nothing is dropped by time alone: a quiet resource
 *   type keeps its last events however old they are, as on the real server.
 * - `tooOldForWatch(rv)` is the real `getAllEventsSinceLocked` rule: once an event was dropped, a
 *   watch from an RV below `oldest - 1` is `too old resource version: RV (oldest-1)`.
 * - `after(rv)` yields the retained events with a greater RV in order (binary search);
 *   `complete(rv)` tells whether every event after `rv` is still retained (no dropped event is
 *   newer than `rv`), which is what rebuilding an older state from the window needs.
 * Caveats: the clock is injected (`now`), defaulting to `Date.now`; times are milliseconds.
 */
import type { StoreEvent } from './watch-hub.js';

export interface WatchWindowOptions {
  /** the smallest capacity (default 100, the real `defaultLowerBoundCapacity`) */
  lowerBoundCapacity: number;
  /** the largest capacity (default 100 * 1024, the real `defaultUpperBoundCapacity`) */
  upperBoundCapacity: number;
  /** events younger than this make a full window grow (default 75 s, the real `eventFreshDuration`) */
  eventFreshDurationMs: number;
  /** the clock (milliseconds), injectable for tests */
  now: () => number;
}

export const DEFAULT_WATCH_WINDOW: WatchWindowOptions = {
  lowerBoundCapacity: 100,
  upperBoundCapacity: 100 * 1024,
  eventFreshDurationMs: 75_000,
  now: () => Date.now(),
};

/** Options from a bare count (the `watchHistorySize` of DevClusterOptions: the upper bound) and/or partial options. */
export function watchWindowOptions(upperBound?: number, partial: Partial<WatchWindowOptions> = {}): WatchWindowOptions {
  const upperBoundCapacity = partial.upperBoundCapacity ?? upperBound ?? DEFAULT_WATCH_WINDOW.upperBoundCapacity;
  const lowerBoundCapacity = Math.min(partial.lowerBoundCapacity ?? DEFAULT_WATCH_WINDOW.lowerBoundCapacity, upperBoundCapacity);
  if (!(lowerBoundCapacity >= 1)) throw new Error(`watch window capacity must be at least 1, got ${lowerBoundCapacity}`);
  return {
    lowerBoundCapacity,
    upperBoundCapacity,
    eventFreshDurationMs: partial.eventFreshDurationMs ?? DEFAULT_WATCH_WINDOW.eventFreshDurationMs,
    now: partial.now ?? DEFAULT_WATCH_WINDOW.now,
  };
}

interface TimedEvent {
  ev: StoreEvent;
  recordedAt: number;
}

export class WatchWindow {
  private items: (TimedEvent | undefined)[];
  private capacityNow: number;
  /** absolute indexes: retained events are [startIndex, endIndex) */
  private startIndex = 0;
  private endIndex = 0;
  /** RV of the newest dropped event (0: none dropped yet) */
  private droppedRv = 0;

  constructor(private readonly options: WatchWindowOptions) {
    this.capacityNow = options.lowerBoundCapacity;
    this.items = new Array<TimedEvent | undefined>(this.capacityNow);
  }

  get size(): number {
    return this.endIndex - this.startIndex;
  }

  get capacity(): number {
    return this.capacityNow;
  }

  /** RV of the newest event no longer retained (0 while none was dropped). */
  get compactedRv(): number {
    return this.droppedRv;
  }

  push(ev: StoreEvent): void {
    const recordedAt = this.options.now();
    this.resize(recordedAt);
    if (this.isFull()) this.dropOldest(1);
    this.items[this.endIndex % this.capacityNow] = { ev, recordedAt };
    this.endIndex++;
  }

  /** The real rule for a watch from `rv`: the error message's `(M)` when too old, else undefined. */
  tooOldForWatch(rv: number): number | undefined {
    if (this.droppedRv === 0 || this.size === 0) return undefined;
    const oldest = this.at(this.startIndex).ev.rv;
    return rv < oldest - 1 ? oldest - 1 : undefined;
  }

  /** Every event after `rv` is retained. */
  complete(rv: number): boolean {
    return rv >= this.droppedRv;
  }

  *after(rv: number): Iterable<StoreEvent> {
    let lo = this.startIndex;
    let hi = this.endIndex;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.at(mid).ev.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    // snapshot the bound: events published while the caller iterates are not part of this replay
    const end = this.endIndex;
    for (let i = lo; i < end; i++) yield this.at(i).ev;
  }

  private at(index: number): TimedEvent {
    return this.items[index % this.capacityNow]!;
  }

  private isFull(): boolean {
    return this.size === this.capacityNow;
  }

  private resize(eventTime: number): void {
    if (!this.isFull()) return;
    const { lowerBoundCapacity, upperBoundCapacity, eventFreshDurationMs } = this.options;
    if (eventTime - this.at(this.startIndex).recordedAt < eventFreshDurationMs) {
      const grown = Math.min(this.capacityNow * 2, upperBoundCapacity);
      if (grown > this.capacityNow) this.reallocate(grown);
      return;
    }
    const quarterBack = this.at(this.endIndex - Math.floor(this.capacityNow / 4));
    if (eventTime - quarterBack.recordedAt > eventFreshDurationMs) {
      const shrunk = Math.max(Math.floor(this.capacityNow / 2), lowerBoundCapacity);
      if (shrunk < this.capacityNow) {
        this.dropOldest(this.size - shrunk);
        this.reallocate(shrunk);
      }
    }
  }

  private dropOldest(n: number): void {
    for (let i = 0; i < n; i++) {
      const slot = this.startIndex % this.capacityNow;
      this.droppedRv = this.items[slot]!.ev.rv;
      this.items[slot] = undefined;
      this.startIndex++;
    }
  }

  private reallocate(capacity: number): void {
    const next = new Array<TimedEvent | undefined>(capacity);
    for (let i = this.startIndex; i < this.endIndex; i++) next[i % capacity] = this.items[i % this.capacityNow];
    this.items = next;
    this.capacityNow = capacity;
  }
}
