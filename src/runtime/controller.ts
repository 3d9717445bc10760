import type { Logger } from 'pino';
import { parseRequestKey, type ReconcileRequest, type Reconciler } from './reconcile.js';
import { WorkQueue } from './work-queue.js';
import { GenericRetry, ReconcileRateLimiter } from './rate-limiter.js';
import { newReconcileId, withReconcileContext } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import { KubeApiError } from '../kube/api-errors.js';
import type { OperatorConfig } from './operator-config.js';

/**
 * The controller: a work queue, a fixed number of workers running the reconciler, and the
 * periodic requeue.
 *
 * Guarantees:
 * - at most `parallelism` reconciles run at once, never two for the same key (work-queue.ts);
 * - success → the key's backoff is reset and it is requeued after `requeueAfterMs` if the
 *   reconciler asked, else after `reconcileIntervalMs` (the periodic reconcile), both stretched by
 *   a random jitter of up to `requeueJitter` (default 10 %) so thousands of keys do not fire
 *   together; keys whose object is gone (`exists` says false) are not requeued periodically;
 * - failure (throw) → requeued with per-key backoff (GenericRetry, `kubernetes.operator.retry.*`),
 *   logged as a WARN with its stack; once `retryMaxAttempts` retries failed in a row, no more
 *   backoff: the key is requeued after `reconcileIntervalMs` (jittered) like a healthy one, and
 *   every later failure again, until a pass succeeds (which resets the count) — the Apache
 *   operator (JOSDK) then waits for an event or its max reconciliation interval (10 h) instead; the pass
 *   is told it is the last retry (`request.retry.lastAttempt`) so the status it writes says so;
 *   an expected outcome (a KubeApiError 404 NotFound or 409 Conflict: something changed between
 *   read and write) is logged as one INFO line without a stack, and a 404 on the reconciled object
 *   itself (e.g. the finalizer removal of a FlinkDeployment deleted meanwhile) is a success: the
 *   object is gone, nothing is left to do, it is not retried;
 * - with a per-key rate limit (`rateLimit.limit` > 0, rate-limiter.ts ReconcileRateLimiter) a
 *   reconcile over the limit does not run: the key is requeued for when the window allows it;
 * - `stop(graceMs)` stops handing out work at once, lets running reconciles finish for up to
 *   `graceMs`, then aborts their signals and returns; `stop(0)` (lost leadership) aborts at once.
 * Assumptions: the reconciler honours its AbortSignal reasonably promptly and is idempotent.
 * Caveats: a reconcile that ignores its signal keeps running after `stop()` returns; its result
 * is ignored (the queue is shut down).
 */
export interface ControllerOptions {
  readonly reconciler: Reconciler;
  readonly parallelism: number;
  readonly reconcileIntervalMs: number;
  readonly requeueJitter?: number;
  /** `kubernetes.operator.retry.initial.interval`. */
  readonly retryBaseDelayMs?: number;
  /** `kubernetes.operator.retry.max.interval`; undefined = none. */
  readonly retryMaxDelayMs?: number;
  /** `kubernetes.operator.retry.interval.multiplier`. */
  readonly retryMultiplier?: number;
  /** `kubernetes.operator.retry.max.attempts` (negative = unlimited). */
  readonly retryMaxAttempts?: number;
  /** `kubernetes.operator.rate-limiter.*`: reconciles per key per refresh period (limit ≤ 0 = off). */
  readonly rateLimit?: { readonly limit: number; readonly refreshPeriodMs: number };
  readonly now?: () => number;
  readonly logger: Logger;
  readonly metrics?: OperatorMetrics;
  /** Whether the primary object of a key still exists (for the periodic requeue). */
  readonly exists?: (key: string) => boolean;
  readonly random?: () => number;
  /** Called when a reconcile throws (e.g. to record a Warning Event). Must not throw. */
  readonly onError?: (key: string, error: unknown) => void;
}

export class Controller {
  readonly queue: WorkQueue;
  private readonly inFlight = new Map<string, AbortController>();
  private workers: Promise<void>[] = [];
  private started = false;
  private readonly idleWaiters = new Set<() => void>();
  private readonly retry: GenericRetry;
  private readonly rateLimiter: ReconcileRateLimiter;

  constructor(private readonly options: ControllerOptions) {
    const metrics = options.metrics;
    this.retry = new GenericRetry({
      initialIntervalMs: options.retryBaseDelayMs,
      maxIntervalMs: options.retryMaxDelayMs,
      multiplier: options.retryMultiplier,
      maxAttempts: options.retryMaxAttempts,
    });
    this.rateLimiter = new ReconcileRateLimiter({ limit: 0, refreshPeriodMs: 0, ...options.rateLimit, now: options.now });
    this.queue = new WorkQueue({
      rateLimiter: this.retry,
      ...(options.now ? { now: options.now } : {}),
      observer: metrics
        ? {
            depthChanged: (depth) => metrics.queueDepth.set(depth),
            handedOut: (_key, waitedMs) => metrics.queueWait.observe(waitedMs / 1000),
            added: () => metrics.queueAdds.inc(),
            retried: () => metrics.queueRetries.inc(),
          }
        : {},
    });
  }

  /** Asks for a reconcile of `key` (`namespace/name`). */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.options.parallelism; i++) this.workers.push(this.worker());
  }

  /** Reconciles running now. */
  inFlightKeys(): string[] {
    return [...this.inFlight.keys()];
  }

  /** See the class comment. Resolves when every worker has exited (or the grace period ended). */
  async stop(graceMs: number): Promise<void> {
    this.queue.shutDown();
    if (graceMs > 0 && this.inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.idleWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, graceMs);
        this.idleWaiters.add(done);
      });
    }
    for (const controller of this.inFlight.values()) controller.abort(new Error('controller stopped'));
    // Workers blocked in get() were released by shutDown; running ones exit after their reconcile.
    await Promise.race([Promise.all(this.workers), new Promise((r) => setTimeout(r, 50))]);
  }

  private async worker(): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (!item) return;
      try {
        await this.process(item.key);
      } finally {
        this.queue.done(item.key);
        if (this.inFlight.size === 0) for (const wake of [...this.idleWaiters]) wake();
      }
    }
  }

  private async process(key: string): Promise<void> {
    const { reconciler, logger, metrics } = this.options;
    let request: ReconcileRequest;
    try {
      request = parseRequestKey(key);
    } catch (error) {
      logger.error({ key, err: error }, 'dropping an invalid key');
      this.queue.forget(key);
      return;
    }
    const waitMs = this.rateLimiter.acquire(key);
    if (waitMs !== undefined) {
      logger.debug({ namespace: request.namespace, name: request.name, waitMs }, 'rate limited (kubernetes.operator.rate-limiter.*); reconciling later');
      this.queue.addAfter(key, waitMs);
      return;
    }
    const attempt = this.retry.retries(key);
    if (attempt > 0) request = { ...request, retry: { attempt, lastAttempt: this.retry.isLastAttempt(key) } };
    const abort = new AbortController();
    this.inFlight.set(key, abort);
    metrics?.inFlight.set(this.inFlight.size);
    const started = performance.now();
    const context = { namespace: request.namespace, name: request.name, reconcileId: newReconcileId() };
    await withReconcileContext(context, async () => {
      let result: 'success' | 'error' | 'aborted' = 'success';
      try {
        logger.debug('reconcile started');
        const outcome = await reconciler.reconcile(request, abort.signal);
        if (abort.signal.aborted) {
          result = 'aborted';
          return;
        }
        this.queue.forget(key);
        const requested = outcome?.requeueAfterMs;
        if (requested !== undefined && requested >= 0) this.queue.addAfter(key, this.jitter(requested));
        else if (!this.options.exists || this.options.exists(key)) this.queue.addAfter(key, this.jitter(this.options.reconcileIntervalMs));
        else this.rateLimiter.forget(key);
      } catch (error) {
        if (abort.signal.aborted) {
          result = 'aborted';
          return;
        }
        const expected = expectedOutcome(error, request);
        if (expected === 'gone') {
          this.queue.forget(key);
          this.rateLimiter.forget(key);
          logger.info({ error: (error as Error).message }, 'the object is gone; nothing left to do');
          return;
        }
        result = 'error';
        metrics?.reconcileErrors.inc({ error: (error as Error)?.name ?? 'Error' });
        const retrying = this.queue.addRateLimited(key);
        const exhausted = !retrying && !this.queue.isShuttingDown();
        if (exhausted && (!this.options.exists || this.options.exists(key))) this.queue.addAfter(key, this.jitter(this.options.reconcileIntervalMs));
        try {
          this.options.onError?.(key, error);
        } catch {
          // reporting must never break the retry
        }
        if (exhausted) {
          logger.error(
            { err: error, failures: this.queue.numRequeues(key), nextInMs: this.options.reconcileIntervalMs },
            'reconcile failed; retries exhausted (kubernetes.operator.retry.max.attempts), trying again at the periodic reconcile',
          );
        } else if (expected) {
          const { code, reason, message } = error as KubeApiError;
          logger.info({ error: message, code, reason, retries: this.queue.numRequeues(key) }, 'reconcile interrupted by a concurrent change; retrying');
        } else logger.warn({ err: error, retries: this.queue.numRequeues(key) }, 'reconcile failed; retrying with backoff');
      } finally {
        const seconds = (performance.now() - started) / 1000;
        metrics?.reconcileTotal.inc({ result });
        metrics?.reconcileDuration.observe({ result }, seconds);
        this.inFlight.delete(key);
        metrics?.inFlight.set(this.inFlight.size);
        logger.debug({ result, durationMs: Math.round(seconds * 1000) }, 'reconcile finished');
      }
    });
  }

  private jitter(ms: number): number {
    if (ms <= 0) return ms;
    const fraction = this.options.requeueJitter ?? 0.1;
    return Math.round(ms * (1 + fraction * (this.options.random ?? Math.random)()));
  }
}

type RetrySettings = 'retryBaseDelayMs' | 'retryMaxDelayMs' | 'retryMultiplier' | 'retryMaxAttempts' | 'rateLimiterLimit' | 'rateLimiterRefreshPeriodMs';

/** The controller options of the operator's `kubernetes.operator.retry.*` and `rate-limiter.*` settings. */
export function retryOptions(
  config: Pick<OperatorConfig, RetrySettings>,
): Pick<ControllerOptions, 'retryBaseDelayMs' | 'retryMaxDelayMs' | 'retryMultiplier' | 'retryMaxAttempts' | 'rateLimit'> {
  return {
    retryBaseDelayMs: config.retryBaseDelayMs,
    retryMaxDelayMs: config.retryMaxDelayMs,
    retryMultiplier: config.retryMultiplier,
    retryMaxAttempts: config.retryMaxAttempts,
    rateLimit: { limit: config.rateLimiterLimit, refreshPeriodMs: config.rateLimiterRefreshPeriodMs },
  };
}

/**
 * `gone`: a 404 on the reconciled object itself (its Status details name it); `expected`: another
 * 404 or a 409 (the world changed between a read and a write; the next pass reads again);
 * undefined: a real failure.
 */
function expectedOutcome(error: unknown, request: { namespace: string; name: string }): 'gone' | 'expected' | undefined {
  if (!(error instanceof KubeApiError) || (error.code !== 404 && error.code !== 409)) return undefined;
  if (error.code === 409) return 'expected';
  const details = error.status?.details as { name?: unknown; kind?: unknown } | undefined;
  const primary = details?.name === request.name && typeof details.kind === 'string' && /^flinkdeployments?$/i.test(details.kind.split('.')[0]);
  return primary ? 'gone' : 'expected';
}
