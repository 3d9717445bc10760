/**
 * The side-effect fence: the check every reconcile makes immediately before each thing it does to
 * the world (a Kubernetes write or delete, a Flink REST call that changes something, a status
 * patch, a finalizer change).
 *
 * A fence is made once per reconcile pass from the leadership term the pass started in and the
 * pass's AbortSignal. `check(what)` throws `FencedOutError` when
 * - the pass was aborted (the controller stopped: leadership lost, shutdown);
 * - leadership was lost or changed hands since the pass started (the current token is not the one
 *   the pass started with);
 * - the lease, as this process last renewed it, does not stay valid for at least `marginMs` more.
 *   "Valid until" is the moment the leader's own watchdog would give up (the start of its last
 *   successful renewal + renewDeadline), measured on the local clock, so a process that was paused
 *   (SIGSTOP, a long GC pause, a frozen VM) finds its lease expired the instant it runs again, before
 *   its timers get a chance to fire.
 *
 * Guarantees: a side effect is only started while this process holds a lease term that no other
 * candidate can have taken over yet (others wait a full leaseDuration > renewDeadline after the
 * last renewal they observed), and only by a pass that started in that same term.
 * Assumptions: local clocks advance at about the same rate on every candidate (no wall-clock
 * agreement needed); `marginMs` covers the time one call takes to reach the API server or Flink.
 * Caveats: a request already sent when the process is paused can still land after a successor has
 * taken over; the second line of defence is the term stamped on every object the operator writes
 * (LEADER_ANNOTATION, checked before replacing or deleting it) and the resourceVersion-locked state
 * write (configmap-state-store.ts). The check costs no request: it reads what the elector already
 * knows. With label-selector shards the manager wraps each pass's fence with `shardFence`
 * (shard.ts): it also refuses once the resource left this shard, and stamps the shard's token.
 */
import { formatFencingToken, type FencingToken } from './fencing-token.js';

/** What a fence needs from leadership (leader-election.ts implements it). */
export interface LeaseTerm {
  /** The token of the current term; undefined = not leading. */
  currentToken(): FencingToken | undefined;
  /** Epoch ms (local clock) until which the current term is valid; 0 when not leading. */
  leaseValidUntil(): number;
}

export class FencedOutError extends Error {
  constructor(
    readonly what: string,
    readonly reason: string,
  ) {
    super(`not doing ${what}: ${reason}`);
    this.name = 'FencedOutError';
  }
}

export interface SideEffectFence {
  /** The term this pass acts in (stamped on everything it writes). */
  readonly token: FencingToken;
  /** Throws FencedOutError unless the pass may still act (see the module comment). */
  check(what: string): void;
}

export interface FenceOptions {
  readonly term: LeaseTerm;
  readonly signal: AbortSignal;
  /** How long the lease must stay valid after the check (covers one call). */
  readonly marginMs: number;
  readonly now?: () => number;
}

/** A fence for one pass, or undefined when the process does not lead right now. */
export function fenceForPass(options: FenceOptions): SideEffectFence | undefined {
  const token = options.term.currentToken();
  if (!token) return undefined;
  const now = options.now ?? Date.now;
  return {
    token,
    check(what: string): void {
      if (options.signal.aborted) throw new FencedOutError(what, 'the reconcile was aborted (leadership lost or shutting down)');
      const current = options.term.currentToken();
      if (!current) throw new FencedOutError(what, `this instance no longer leads (the pass started in term ${formatFencingToken(token)})`);
      if (current.holderIdentity !== token.holderIdentity || current.leaseTransitions !== token.leaseTransitions) {
        throw new FencedOutError(what, `the leadership term changed from ${formatFencingToken(token)} to ${formatFencingToken(current)} during the pass`);
      }
      const left = options.term.leaseValidUntil() - now();
      if (left < options.marginMs) {
        throw new FencedOutError(
          what,
          `the lease of term ${formatFencingToken(token)} is valid for ${Math.max(0, left)} ms only (needs ${options.marginMs} ms; was this process paused?)`,
        );
      }
    },
  };
}

/** A fence that never refuses: for tools that act outside any leadership (migrate, tests of pure steps). */
export function unfenced(token: FencingToken): SideEffectFence {
  return { token, check: () => {} };
}
