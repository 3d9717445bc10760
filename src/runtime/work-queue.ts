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
  private readonly delayed = new Map<string, { readyAt: number; timer: NodeJS.Timeout }>();
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
    const readyAt = this.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.readyAt <= readyAt) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { readyAt, timer });
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
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
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
