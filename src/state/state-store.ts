/**
 * The contract every store of operator-internal state implements: the companion ConfigMap
 * (configmap-state-store.ts, what the operator uses) and the legacy v1beta1 status layout
 * (legacy-status-state-store.ts, for migration and the comparison benchmark).
 *
 * Guarantees (every implementation):
 * - `load` never returns a guess: a state it cannot trust is an error (ForeignStateError,
 *   CorruptStateError, and for the ConfigMap store RegressedStateError / MisplacedStateError), an
 *   absent state is `{kind: 'missing'}`.
 * - with `basedOnRevision`, `update` never applies a decision to a state it was not made on.
 * - `update` applies `fn` to the state it just read and writes it locked on what it read; a
 *   concurrent write makes it re-read and re-apply `fn` (bounded), never overwrite blindly.
 * - `update` writes nothing when `fn` returns its argument (===) or a deep-equal state.
 * - the returned state is exactly what was written (revision bumped, lastWriter stamped, history
 *   possibly trimmed by the size rules).
 * Assumptions: `fn` is pure and idempotent (`fn(fn(s))` equals `fn(s)`): it may run more than once,
 * and after a write whose answer was lost it runs again on its own result.
 * Caveats: see design/004-sync-protocol.md.
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { AnyInternalState, InternalState } from '../api/internal-state.js';
import { SESSION_JOB_STATE_CONFIGMAP_SUFFIX } from '../api/flink-session-job.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import type { ForeignStateWrite } from './foreign-state-write.js';

export type LoadResult<State extends AnyInternalState = InternalState> = { kind: 'found'; state: State; resourceVersion: string } | { kind: 'missing' };

export type StateUpdateFunction<State extends AnyInternalState = InternalState> = (current: State) => State;

/** What an update is decided on and who makes it. */
export interface StateUpdateOptions {
  /**
   * The revision the caller decided on. When the state read for the write has another revision,
   * `fn` is not applied (StatePreconditionError) — unless `fn` changes nothing on it (our own
   * earlier attempt landed, its answer was lost), which returns the state as it is.
   */
  readonly basedOnRevision?: number;
  /** The pass's side-effect fence: checked before each write attempt; its token is the writer's. */
  readonly fence?: SideEffectFence;
}

/** The store of one kind's state (FlinkDeployment's by default; a FlinkSessionJob's with its owner and state types). */
export interface StateStore<Owner = FlinkDeploymentV1, State extends AnyInternalState = InternalState> {
  /**
   * The current state of the deployment. Throws ForeignStateError (the object exists but is not
   * controlled by this deployment's uid) or CorruptStateError (cannot decode / fails the schema;
   * the message names the key and says "fix or delete the ConfigMap").
   */
  load(deployment: Owner): Promise<LoadResult<State>>;
  /**
   * Applies `fn` to the current state (emptyInternalState() when missing, then creating the object),
   * bumps `revision`, stamps `lastWriter`, writes with optimistic locking, re-reads and re-applies on
   * a conflict or transient failure (bounded). Refuses when not leader (NotLeaderError), fenced out
   * (StaleLeaderError) or too large (StateTooLargeError). Returns the state as written.
   */
  update(deployment: Owner, fn: StateUpdateFunction<State>, options?: StateUpdateOptions): Promise<State>;
  /**
   * The write someone other than the operator made to the state the last load read, once
   * (foreign-state-write.ts); absent in stores that cannot tell (the legacy status store, fakes).
   */
  takeForeignStateWrite?(deployment: Owner): ForeignStateWrite | undefined;
  /** Records a fresh digest over the reported content (fenced), so neither this process nor a successor reports it again. */
  acknowledgeForeignStateWrite?(deployment: Owner, write: ForeignStateWrite, fence: SideEffectFence): Promise<void>;
}

/** The name of a deployment's companion state ConfigMap. */
export function stateConfigMapName(deploymentName: string): string {
  return `${deploymentName}-operator-state`;
}

/** The name of a session job's companion state ConfigMap, `<name>.sessionjob-state`: never a FlinkDeployment's (design/010). */
export function sessionJobStateConfigMapName(sessionJobName: string): string {
  return `${sessionJobName}${SESSION_JOB_STATE_CONFIGMAP_SUFFIX}`;
}
