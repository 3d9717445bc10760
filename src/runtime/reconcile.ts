/**
 * The reconcile contract: the one interface between the controller runtime and the domain logic.
 *
 * A reconciler is *level-based*: it is told only *which* object to look at, never *what happened*.
 * It reads the current world (caches, the state store, Flink) and moves it one step towards the
 * desired state. Because no event payload reaches it, a missed, duplicated or coalesced event can
 * never make it act wrongly; at worst it runs once more than needed and finds nothing to do.
 *
 * Guarantees (given by the runtime, see work-queue.ts and controller.ts):
 * - one key is never reconciled by two workers at once;
 * - a key that changes while it is being reconciled is reconciled again afterwards;
 * - a thrown error requeues the key with per-key backoff (`kubernetes.operator.retry.*`); once the
 *   retries are exhausted, the periodic reconcile takes over (`request.retry` tells a pass which);
 * - `requeueAfterMs` schedules the key again after that delay (an earlier event still wins).
 *
 * Assumptions: reconcile is idempotent; everything it needs to remember between runs is written
 * to the API server (the state ConfigMap, the status), never kept only in memory.
 */
export interface ReconcileRequest {
  readonly namespace: string;
  readonly name: string;
  /** Set when this pass retries after failures (JOSDK RetryInfo); absent on a first attempt. */
  readonly retry?: RetryInfo;
}

export interface RetryInfo {
  /** Consecutive failures so far. */
  readonly attempt: number;
  /** If this pass fails too, no retry follows: the key is next looked at by the periodic reconcile (or an event). */
  readonly lastAttempt: boolean;
}

export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (jittered by the runtime). */
  readonly requeueAfterMs?: number;
}

export interface Reconciler {
  reconcile(request: ReconcileRequest, signal: AbortSignal): Promise<ReconcileResult>;
}

/** What follows a pass that fails with an unexpected error, as its status says it (`Reconcile failed: …<this>`). */
export function afterFailureNote(request: ReconcileRequest): string {
  if (!request.retry?.lastAttempt) return '; retrying with backoff';
  return `; retries exhausted after ${request.retry.attempt + 1} failures in a row (kubernetes.operator.retry.max.attempts): tried again at every periodic reconcile and on every change`;
}

/** `namespace/name`: the work-queue key of a request. */
export function requestKey(request: ReconcileRequest): string {
  return `${request.namespace}/${request.name}`;
}

export function parseRequestKey(key: string): ReconcileRequest {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) throw new Error(`invalid reconcile key "${key}": expected "namespace/name"`);
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
