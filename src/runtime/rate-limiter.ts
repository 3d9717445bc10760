/**
 * Per-key retry delays for the work queue (client-go `workqueue.TypedItemExponentialFailureRateLimiter`).
 *
 * `when(key)` is called once per failure of `key` and returns how long to wait before retrying:
 * `baseDelayMs · 2^n` for the n-th consecutive failure (n from 0), capped at `maxDelayMs`.
 * `forget(key)` (after a success) resets the count. With the client-go defaults (5 ms, cap
 * 1000 s) the delays are 5, 10, 20, 40 ms … ; this operator defaults the cap to 300 s (see
 * operator-config.ts), configurable.
 *
 * Unlike client-go's default controller limiter there is no global token bucket on top: like
 * controller-runtime ≥ v0.23 (priority queue) only the per-item limiter applies; parallelism is
 * bounded by the number of workers instead.
 */
export interface RateLimiter {
  /** The delay before the next retry of `key`, counting this call as one more failure. */
  when(key: string): number;
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
