/**
 * When a reconcile key may run again: per-key retry delays for the work queue, and the per-key
 * rate limit of reconciles (`ReconcileRateLimiter`, at the end).
 *
 * Retry delays:
 * `when(key)` is called once per failure of `key` and returns how long to wait before retrying,
 * or undefined once the retries of `key` are exhausted; `forget(key)` (after a success) resets the
 * count. Two policies:
 * - `GenericRetry` (the controller's): the Apache operator's `kubernetes.operator.retry.*` keys with
 *   the semantics of the Java Operator SDK's GenericRetry / GenericRetryExecution (which the Apache
 *   operator configures from them, FlinkOperatorConfiguration.getRetryConfig): the first two
 *   retries wait the initial interval, each later one the previous delay × the multiplier, capped
 *   at the max interval when there is one; after `maxAttempts` retries (`< 0`: never) the next
 *   failure gets no retry. The controller then falls back to the periodic reconcile (controller.ts).
 * - `ItemExponentialRateLimiter`: client-go's `workqueue.TypedItemExponentialFailureRateLimiter`,
 *   `baseDelayMs · 2^n` for the n-th consecutive failure (n from 0), capped at `maxDelayMs`, never
 *   exhausted (the work queue's default when it is built without a limiter).
 *
 * Unlike client-go's default controller limiter there is no global token bucket on top: like
 * controller-runtime ≥ v0.23 (priority queue) only the per-item limiter applies; parallelism is
 * bounded by the number of workers instead (the per-resource `rate-limiter.*` keys are
 * ReconcileRateLimiter's).
 */
export interface RateLimiter {
  /** The delay before the next retry of `key`, counting this call as one more failure; undefined = retries exhausted. */
  when(key: string): number | undefined;
  /** Forget the failures of `key` (call after it was processed successfully). */
  forget(key: string): void;
  /** How many failures are currently counted for `key`. */
  retries(key: string): number;
}

export interface ExponentialRateLimiterOptions {
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

export const DEFAULT_RETRY_BASE_DELAY_MS = 5;
export const DEFAULT_RETRY_MAX_DELAY_MS = 300_000;
/** `kubernetes.operator.retry.interval.multiplier` (Apache's default). */
export const DEFAULT_RETRY_MULTIPLIER = 1.5;
/** `kubernetes.operator.retry.max.attempts` (Apache's default). */
export const DEFAULT_RETRY_MAX_ATTEMPTS = 15;

export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ExponentialRateLimiterOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
    this.maxDelayMs = options.maxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS;
    if (!(this.baseDelayMs > 0) || !(this.maxDelayMs >= this.baseDelayMs)) {
      throw new Error(`invalid retry delays: base ${this.baseDelayMs} ms, max ${this.maxDelayMs} ms`);
    }
  }

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity for large n; Math.min keeps the cap.
    return Math.min(this.baseDelayMs * Math.pow(2, n), this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface GenericRetryOptions {
  /** `retry.initial.interval`: the delay of the first two retries. */
  readonly initialIntervalMs?: number;
  /** `retry.interval.multiplier`: each later delay is the previous one times this. */
  readonly multiplier?: number;
  /** `retry.max.interval`: cap of a delay; undefined = none (Apache's default). */
  readonly maxIntervalMs?: number;
  /** `retry.max.attempts`: retries after consecutive failures; negative = unlimited. */
  readonly maxAttempts?: number;
}

/** The Java Operator SDK's GenericRetry, per key (see the module comment). */
export class GenericRetry implements RateLimiter {
  private readonly failures = new Map<string, { count: number; intervalMs: number }>();
  readonly initialIntervalMs: number;
  readonly multiplier: number;
  readonly maxIntervalMs: number | undefined;
  readonly maxAttempts: number;

  constructor(options: GenericRetryOptions = {}) {
    this.initialIntervalMs = options.initialIntervalMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
    this.multiplier = options.multiplier ?? DEFAULT_RETRY_MULTIPLIER;
    this.maxIntervalMs = options.maxIntervalMs;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_RETRY_MAX_ATTEMPTS;
    if (!(this.initialIntervalMs > 0) || !(this.multiplier >= 1) || (this.maxIntervalMs !== undefined && !(this.maxIntervalMs >= this.initialIntervalMs))) {
      throw new Error(`invalid retry: initial ${this.initialIntervalMs} ms, multiplier ${this.multiplier}, max ${this.maxIntervalMs ?? 'none'} ms`);
    }
  }

  when(key: string): number | undefined {
    const entry = this.failures.get(key) ?? { count: 0, intervalMs: this.initialIntervalMs };
    if (this.exhausted(entry.count)) {
      this.failures.set(key, { ...entry, count: entry.count + 1 });
      return undefined;
    }
    // GenericRetryExecution.nextDelay: the interval grows from the third retry on, truncated to whole milliseconds.
    let intervalMs = entry.count >= 2 ? Math.floor(entry.intervalMs * this.multiplier) : entry.intervalMs;
    if (this.maxIntervalMs !== undefined) intervalMs = Math.min(intervalMs, this.maxIntervalMs);
    this.failures.set(key, { count: entry.count + 1, intervalMs });
    return intervalMs;
  }

  /** True when the next failure of `key` gets no retry (JOSDK RetryInfo.isLastAttempt). */
  isLastAttempt(key: string): boolean {
    return this.exhausted(this.failures.get(key)?.count ?? 0);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key)?.count ?? 0;
  }

  private exhausted(count: number): boolean {
    return this.maxAttempts >= 0 && count >= this.maxAttempts;
  }
}

/**
 * Per-resource rate limiting of reconciles: the Apache operator's `kubernetes.operator.rate-limiter.limit`
 * and `.refresh-period`, with the semantics of the Java Operator SDK's LinearRateLimiter, which the
 * Apache operator configures from them (FlinkOperatorConfiguration.getRateLimiter) and JOSDK's
 * EventProcessor consults before every reconcile of a resource.
 *
 * Guarantees (per key, `limit` > 0): a window opens at the key's first reconcile; up to `limit`
 * reconciles are let through; once the count has reached `limit`, a reconcile is let through (and
 * the window restarts, counting it) only when the window is older than `refreshPeriodMs`; otherwise
 * `acquire` answers how long until it is (at least 50 ms), and the caller reschedules the key after that
 * (EventProcessor.handleRateLimitedSubmission). `limit` ≤ 0 turns the limiter off (Apache's
 * documented meaning), which is this operator's default: see operator-knobs.ts for why.
 * Every reconcile counts, whatever triggered it (an event, a retry, the periodic requeue).
 * Caveat: like JOSDK's, the window restarts lazily: a key that stayed under the limit keeps
 * counting into its first window however old it is; the reconcile after the count reached `limit`
 * then finds that window expired and starts a new one.
 */
/** The least delay of a rate-limited key (JOSDK EventProcessor.MINIMAL_RATE_LIMIT_RESCHEDULE_DURATION). */
export const MIN_RATE_LIMITED_RESCHEDULE_MS = 50;

export interface ReconcileRateLimiterOptions {
  /** Reconciles let through per window; ≤ 0 = no limit. */
  readonly limit: number;
  readonly refreshPeriodMs: number;
  readonly now?: () => number;
}

export class ReconcileRateLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();
  private readonly now: () => number;

  constructor(private readonly options: ReconcileRateLimiterOptions) {
    this.now = options.now ?? Date.now;
    if (!(options.refreshPeriodMs >= 0)) throw new Error(`invalid rate limiter refresh period ${options.refreshPeriodMs} ms`);
  }

  get active(): boolean {
    return this.options.limit > 0;
  }

  /** Counts a reconcile of `key` and returns undefined, or returns the milliseconds to wait before trying again (nothing counted; at least MIN_RATE_LIMITED_RESCHEDULE_MS). */
  acquire(key: string): number | undefined {
    if (!this.active) return undefined;
    const now = this.now();
    const window = this.windows.get(key) ?? { startedAt: now, count: 0 };
    if (window.count < this.options.limit) {
      this.windows.set(key, { ...window, count: window.count + 1 });
      return undefined;
    }
    if (window.startedAt < now - this.options.refreshPeriodMs) {
      this.windows.set(key, { startedAt: now, count: 1 });
      return undefined;
    }
    this.windows.set(key, window);
    return Math.max(MIN_RATE_LIMITED_RESCHEDULE_MS, window.startedAt + this.options.refreshPeriodMs - now);
  }

  /** Drops the window of `key` (its object is gone). */
  forget(key: string): void {
    this.windows.delete(key);
  }
}
