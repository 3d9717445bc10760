/**
 * The shell both reconcilers (FlinkDeployment, FlinkSessionJob) run their passes in: the pass's
 * side-effect fence, what ends a pass early, how long to wait before the next one, and the
 * once-per-situation event rule.
 *
 * Guarantees: a pass whose term is gone (FencedOutError, NotLeaderError, or an object stamped by a
 * newer term) stops where it is, is counted and logged once, and is requeued after the progress
 * interval; one whose state changed under its decision (StatePreconditionError) is requeued to
 * decide again; every other error is the caller's (the runtime retries it with backoff).
 */
import { StaleLeaderError } from '../runtime/fencing-token.js';
import type { ReconcileResult } from '../runtime/reconcile.js';
import { FencedOutError, type SideEffectFence } from '../runtime/side-effect-fence.js';
import { NotLeaderError, StatePreconditionError } from '../state/state-errors.js';
import type { ReconcilerLog, ReconcilerTimings } from './reconciler-dependencies.js';

export interface FencedPassDependencies {
  fenceFor(signal: AbortSignal): SideEffectFence | undefined;
  counters: { fencedOut(): void };
  log: ReconcilerLog;
  timings: ReconcilerTimings;
}

/** Runs `pass` under the fence of `signal`'s term (nothing when this instance does not lead). */
export async function runFencedPass(
  deps: FencedPassDependencies,
  signal: AbortSignal,
  pass: (fence: SideEffectFence) => Promise<ReconcileResult>,
): Promise<ReconcileResult> {
  const fence = deps.fenceFor(signal);
  if (!fence) return {};
  try {
    return await pass(fence);
  } catch (error) {
    if (error instanceof FencedOutError || error instanceof NotLeaderError || error instanceof StaleLeaderError) {
      deps.counters.fencedOut();
      deps.log.warn({ reason: error.message }, 'side effect refused by the leadership fence; this pass stops here');
      return { requeueAfterMs: deps.timings.progressCheckIntervalMs };
    }
    if (error instanceof StatePreconditionError) {
      deps.log.info({ reason: error.message }, 'the state changed under this pass; deciding again');
      return { requeueAfterMs: deps.timings.progressCheckIntervalMs };
    }
    throw error;
  }
}

/** The errors that end a pass at once, never reported as a step's failure. */
export function isFencingOrPrecondition(error: unknown): boolean {
  return error instanceof FencedOutError || error instanceof NotLeaderError || error instanceof StaleLeaderError || error instanceof StatePreconditionError;
}

/** What a step asks for next: at once, after the progress interval, or after the steady one (or sooner, `wakeUpInMs`). */
export interface NextPass {
  requeue: 'continue' | 'progress' | 'steady';
  wakeUpInMs?: number;
}

export function requeueAfterMs(next: NextPass, timings: ReconcilerTimings): number {
  if (next.requeue === 'continue') return 0;
  const interval = next.requeue === 'progress' ? timings.progressCheckIntervalMs : timings.reconcileIntervalMs;
  return next.wakeUpInMs !== undefined ? Math.min(interval, Math.max(next.wakeUpInMs, 50)) : interval;
}

/**
 * Event hygiene: an event is emitted once per (resource uid, reason, situation key) in this
 * process; a new situation for the same reason emits again.
 */
export class OncePerSituation {
  /**
   * uid → [reason, situation key, reason, situation key, …]: one small array per resource (a
   * resource has a handful of reasons), not a `uid/reason` key string per pair.
   */
  private readonly last = new Map<string, string[]>();

  /** True the first time `key` is seen for (uid, reason) since another key was. */
  firstTime(uid: string, reason: string, key: string): boolean {
    const pairs = this.last.get(uid);
    if (!pairs) {
      this.last.set(uid, [reason, key]);
      return true;
    }
    for (let i = 0; i < pairs.length; i += 2) {
      if (pairs[i] !== reason) continue;
      if (pairs[i + 1] === key) return false;
      pairs[i + 1] = key;
      return true;
    }
    pairs.push(reason, key);
    return true;
  }

  /** Forgets a resource (deleted). */
  forget(uid: string): void {
    this.last.delete(uid);
  }
}
