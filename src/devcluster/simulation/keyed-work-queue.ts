/**
 * A per-key work queue for the simulated controllers and kubelet (client-go's workqueue model,
 * reduced): a key is processed by at most one worker at a time; adds of a key that is already
 * queued coalesce; an add while the key is being processed runs it once more afterwards; a failed
 * run is retried with per-key exponential backoff; a run may ask to be repeated after a delay.
 *
 * Guarantees: after the last `add(key)`, `process(key)` runs at least once, starting after that add.
 * Caveats: delayed adds are timers (one per key at most: an earlier due time replaces a later one);
 * `stop()` drops queued work and waits for running work to finish.
 */
export interface WorkResult {
  readonly requeueAfterMs?: number;
}

export interface KeyedWorkQueueOptions {
  readonly concurrency?: number;
  readonly baseRetryMs?: number;
  readonly maxRetryMs?: number;
  readonly onError?: (key: string, error: unknown) => void;
}

export class KeyedWorkQueue {
  /** FIFO of queued keys; `head` indexes the next one (compacted when half consumed, so shift is O(1) amortised). */
  private queue: string[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { due: number; timer: NodeJS.Timeout }>();
  private readonly idleWaiters: Array<() => void> = [];
  private running = 0;
  private stopped = false;
  private readonly concurrency: number;
  private readonly baseRetryMs: number;
  private readonly maxRetryMs: number;

  constructor(
    private readonly process: (key: string) => Promise<WorkResult | void>,
    private readonly options: KeyedWorkQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 8;
    this.baseRetryMs = options.baseRetryMs ?? 20;
    this.maxRetryMs = options.maxRetryMs ?? 5_000;
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.pump();
  }

  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const due = Date.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.due <= due) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { due, timer });
  }

  /** Resolves when nothing is queued or running (delayed adds do not count). */
  idle(): Promise<void> {
    if (this.running === 0 && this.pending() === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.queue = [];
    this.head = 0;
    this.queued.clear();
    this.dirty.clear();
    await this.idle();
  }

  private pump(): void {
    while (!this.stopped && this.running < this.concurrency && this.pending() > 0) {
      const key = this.queue[this.head++];
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.queued.delete(key);
      this.processing.add(key);
      this.running++;
      void this.run(key);
    }
    if (this.running === 0 && this.pending() === 0) {
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private pending(): number {
    return this.queue.length - this.head;
  }

  private async run(key: string): Promise<void> {
    let retryAfter: number | undefined;
    try {
      const result = await this.process(key);
      this.failures.delete(key);
      retryAfter = result?.requeueAfterMs;
    } catch (error) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      retryAfter = Math.min(this.baseRetryMs * 2 ** (n - 1), this.maxRetryMs);
      this.options.onError?.(key, error);
    } finally {
      this.processing.delete(key);
      this.running--;
    }
    if (this.dirty.delete(key)) this.add(key);
    if (retryAfter !== undefined) this.addAfter(key, retryAfter);
    this.pump();
  }
}
