import { ItemExponentialRateLimiter, type RateLimiter } from './rate-limiter.js';

/**
 * A work queue of reconcile keys with client-go's semantics (`util/workqueue`: Type, delaying and
 * rate-limiting queues in one class).
 *
 * Guarantees:
 * - fair: keys are handed out in the order they became ready (FIFO);
 * - stingy: a key is held at most once while waiting (`add` of a queued key is a no-op);
 * - a key handed out by `get` is never handed out again until `done(key)`: one key is never
 *   processed by two workers at once;
 * - a key added while it is being processed is marked dirty and queued again at `done`, so a change
 *   during a reconcile is never lost;
 * - `addAfter(key, ms)` makes the key ready after the delay; of several pending delays for a key
 *   the earliest wins, and an immediate `add` still processes it at once (level-based: the delayed
 *   entry then just causes one more, harmless run);
 * - `addRateLimited(key)` = `addAfter(key, rateLimiter.when(key))`: per-key backoff;
 *   `forget(key)` resets it; once the limiter's retries are exhausted it schedules nothing and
 *   answers false (the caller decides when to look again).
 * - after `shutDown()` nothing is added, pending delays are cancelled, waiting `get`s resolve to
 *   undefined, and keys already queued are dropped (the work is level-based and will be re-derived
 *   by whoever processes it next).
 * Assumptions: every `get` that returned a key is followed by exactly one `done(key)`.
 * Caveats: delayed adds share one timer over a min-heap (a timer per key cost ~0.5 KiB of heap per
 * FlinkDeployment, each holding its reconcile's async context); their due times are on the
 * `Date.now()` clock, and one due within the next millisecond is added with the batch due now.
 */
export interface WorkQueueObserver {
  /** The number of keys waiting (not delayed, not processing) changed. */
  depthChanged?(depth: number): void;
  /** A key was handed out after waiting `waitedMs` since it became ready. */
  handedOut?(key: string, waitedMs: number): void;
  added?(key: string): void;
  retried?(key: string): void;
}

export interface QueueItem {
  readonly key: string;
  /** How long the key waited in the queue (ready → handed out). */
  readonly waitedMs: number;
}

export interface WorkQueueOptions {
  readonly rateLimiter?: RateLimiter;
  readonly observer?: WorkQueueObserver;
  readonly now?: () => number;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly readySince = new Map<string, number>();
  /** key → when its pending delayed add is due (epoch ms, Date.now(): the clock setTimeout's mocks move) */
  private readonly delayed = new Map<string, number>();
  /** one timer for all delayed adds (one per key cost ~0.5 KiB of heap per key), over a min-heap of them */
  private readonly dueHeap = new DueHeap();
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = Infinity;
  private readonly waiters: Array<(item: QueueItem | undefined) => void> = [];
  private readonly rateLimiter: RateLimiter;
  private readonly observer: WorkQueueObserver;
  private readonly now: () => number;
  private shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.rateLimiter = options.rateLimiter ?? new ItemExponentialRateLimiter();
    this.observer = options.observer ?? {};
    this.now = options.now ?? Date.now;
  }

  /** Marks `key` as needing processing (no-op if already waiting, deferred if processing). */
  add(key: string): void {
    if (this.shuttingDown) return;
    this.observer.added?.(key);
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    this.readySince.set(key, this.now());
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Adds `key` after `delayMs` (≤ 0: now). Keeps the earliest of several pending delays. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const dueAt = Date.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending !== undefined && pending <= dueAt) return;
    this.delayed.set(key, dueAt);
    this.dueHeap.push(dueAt, key);
    if (this.dueHeap.size > 2 * this.delayed.size + 64) this.dueHeap.rebuild(this.delayed);
    this.armTimer();
  }

  /** (Re)arms the one timer for the earliest pending delayed add. */
  private armTimer(): void {
    const next = this.dueHeap.peekDue();
    if (next >= this.timerDueAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDueAt = next;
    this.timer = next === Infinity ? undefined : setTimeout(() => this.fireDue(next), Math.max(0, next - Date.now()));
  }

  /** Adds every key whose delay has passed (entries replaced by an earlier delay are skipped). */
  private fireDue(armedFor: number): void {
    this.timer = undefined;
    this.timerDueAt = Infinity;
    // the timer's own (monotonic) clock says `armedFor` is due even if the wall clock stepped back;
    // timers run on a millisecond clock: one due within the next millisecond is due now
    const now = Math.max(armedFor, Date.now() + 1);
    while (this.dueHeap.peekDue() <= now) {
      const [dueAt, key] = this.dueHeap.pop();
      if (this.delayed.get(key) !== dueAt) continue;
      this.delayed.delete(key);
      this.add(key);
    }
    this.armTimer();
  }

  /** Retries `key` after its per-key backoff; false (nothing scheduled) when its retries are exhausted or the queue is shut down. */
  addRateLimited(key: string): boolean {
    if (this.shuttingDown) return false;
    const delayMs = this.rateLimiter.when(key);
    if (delayMs === undefined) return false;
    this.observer.retried?.(key);
    this.addAfter(key, delayMs);
    return true;
  }

  /** Resets the backoff of `key` (call after it was processed successfully). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.retries(key);
  }

  /** The next ready key, waiting for one if needed; undefined once the queue is shut down. */
  get(): Promise<QueueItem | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const item = this.take();
    if (item) return Promise.resolve(item);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends processing of `key`; re-queues it if it was added meanwhile. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.enqueue(key);
  }

  /** Stops the queue: see the class comment. Idempotent. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDueAt = Infinity;
    this.delayed.clear();
    this.dueHeap.rebuild(this.delayed);
    this.queue.length = 0;
    this.dirty.clear();
    this.readySince.clear();
    this.observer.depthChanged?.(0);
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Keys waiting to be handed out. */
  len(): number {
    return this.queue.length;
  }

  /** Keys currently handed out and not yet done. */
  processingCount(): number {
    return this.processing.size;
  }

  /** Keys with a pending delayed add. */
  delayedCount(): number {
    return this.delayed.size;
  }

  private enqueue(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      this.queue.push(key);
      waiter(this.take());
      return;
    }
    this.queue.push(key);
    this.observer.depthChanged?.(this.queue.length);
  }

  private take(): QueueItem | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    this.dirty.delete(key);
    const since = this.readySince.get(key) ?? this.now();
    this.readySince.delete(key);
    const waitedMs = Math.max(0, this.now() - since);
    this.observer.depthChanged?.(this.queue.length);
    this.observer.handedOut?.(key, waitedMs);
    return { key, waitedMs };
  }
}

/** A binary min-heap of (due time, key) pairs in two parallel arrays. */
class DueHeap {
  private due: number[] = [];
  private keys: string[] = [];

  get size(): number {
    return this.due.length;
  }

  /** The earliest due time, or Infinity when empty. */
  peekDue(): number {
    return this.due.length > 0 ? this.due[0] : Infinity;
  }

  push(dueAt: number, key: string): void {
    let i = this.due.length;
    this.due.push(dueAt);
    this.keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.due[parent] <= dueAt) break;
      this.move(parent, i);
      i = parent;
    }
    this.due[i] = dueAt;
    this.keys[i] = key;
  }

  /** Removes and returns the earliest pair (call only when not empty). */
  pop(): [number, string] {
    const top: [number, string] = [this.due[0], this.keys[0]];
    const lastDue = this.due.pop()!;
    const lastKey = this.keys.pop()!;
    const n = this.due.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.due[child + 1] < this.due[child]) child++;
      if (this.due[child] >= lastDue) break;
      this.move(child, i);
      i = child;
    }
    this.due[i] = lastDue;
    this.keys[i] = lastKey;
    return top;
  }

  /** Replaces the contents with exactly the pending delays (drops entries replaced by earlier ones). */
  rebuild(pending: ReadonlyMap<string, number>): void {
    this.due = [];
    this.keys = [];
    for (const [key, dueAt] of pending) this.push(dueAt, key);
  }

  private move(from: number, to: number): void {
    this.due[to] = this.due[from]!;
    this.keys[to] = this.keys[from]!;
  }
}
