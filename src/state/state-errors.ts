/**
 * Why a state load or update refused to act. Each message says what the user can do about it;
 * the reconciler puts the message into `status.error` and an event.
 *
 * (StaleLeaderError, the fencing refusal, lives with the fencing token in src/runtime/fencing-token.ts.)
 */

/** The state object exists but is not controlled by this FlinkDeployment (its uid): never read nor written. */
export class ForeignStateError extends Error {
  constructor(
    readonly objectName: string,
    readonly namespace: string,
    readonly deploymentName: string,
    readonly detail: string,
    readonly ownerKind: string = 'FlinkDeployment',
  ) {
    super(
      `ConfigMap ${namespace}/${objectName} exists but is not owned by ${ownerKind} ${deploymentName} (${detail}); ` +
        `the operator will not read or overwrite it: rename or delete it`,
    );
    this.name = 'ForeignStateError';
  }
}

/** The state object cannot be decoded or fails the schema: no guess, no overwrite until fixed. */
export class CorruptStateError extends Error {
  constructor(
    readonly objectName: string,
    readonly namespace: string,
    readonly key: string,
    readonly detail: string,
    readonly objectKind: string = 'ConfigMap',
  ) {
    super(
      `${objectKind} ${namespace}/${objectName} has invalid operator state in ${objectKind === 'ConfigMap' ? 'key' : 'field'} "${key}": ${detail}; ` +
        (objectKind === 'ConfigMap'
          ? `fix or delete the ConfigMap (deleting it makes the operator rebuild the state from the running deployment)`
          : `fix or remove the field`),
    );
    this.name = 'CorruptStateError';
  }
}

/** The encoded state would exceed the hard size limit even compressed and with history trimmed. */
export class StateTooLargeError extends Error {
  constructor(
    readonly objectName: string,
    readonly totalBytes: number,
    readonly limitBytes: number,
    readonly bytesPerKey: Readonly<Record<string, number>>,
  ) {
    const biggest = Object.entries(bytesPerKey)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    super(
      `operator state for ${objectName} would be ${totalBytes} bytes, over the ${limitBytes}-byte limit even compressed ` +
        `and with savepoint history trimmed (largest keys: ${biggest}); reduce the size of the spec`,
    );
    this.name = 'StateTooLargeError';
  }
}

/** This process holds no leadership (no fencing token): it must not write state. */
export class NotLeaderError extends Error {
  constructor(readonly objectName: string) {
    super(`not writing operator state ${objectName}: this process is not the leader`);
    this.name = 'NotLeaderError';
  }
}

/** The write kept failing (conflicts or transient errors) through every attempt. */
export class StateWriteRetriesExhaustedError extends Error {
  constructor(
    readonly objectName: string,
    readonly attempts: number,
    readonly lastError: unknown,
  ) {
    super(`could not write operator state ${objectName} after ${attempts} attempts: ${lastError instanceof Error ? lastError.message : String(lastError)}`, {
      cause: lastError,
    });
    this.name = 'StateWriteRetriesExhaustedError';
  }
}

/**
 * The state object disappeared while an update was being applied to it (a user deleted it). The
 * update is not applied to an empty state (that would silently forget everything else): the next
 * reconcile finds it missing and rebuilds it from the world.
 */
export class StateDeletedError extends Error {
  constructor(readonly objectName: string) {
    super(`operator state ${objectName} was deleted while being updated; it will be rebuilt from the running deployment on the next reconcile`);
    this.name = 'StateDeletedError';
  }
}

/**
 * The state object went backwards: its revision is older than one this process already wrote or
 * read for the same FlinkDeployment (uid), or than the revision the status says it reflects. That
 * is a restored backup or a re-applied captured manifest: replaying it would repeat old intents
 * (an old job id, an old restore path). Refused like a corrupt state: nothing is overwritten, the
 * job keeps running.
 */
export class RegressedStateError extends Error {
  constructor(
    readonly objectName: string,
    readonly namespace: string,
    readonly found: number,
    readonly newest: number,
    readonly newestSource: string,
  ) {
    super(
      `ConfigMap ${namespace}/${objectName} holds operator state revision ${found}, older than revision ${newest} (${newestSource}): ` +
        `it looks restored from a backup or re-applied from an old manifest, and acting on it would repeat old operations. ` +
        `The operator does not act on it and does not overwrite it; the running job is left alone. To fix it, delete the ConfigMap ` +
        `(the operator rebuilds it from the running cluster and Flink) and stop whatever re-applies it`,
    );
    this.name = 'RegressedStateError';
  }
}

/** The state object's content was written for another FlinkDeployment (its recorded uid differs). */
export class MisplacedStateError extends Error {
  constructor(
    readonly objectName: string,
    readonly namespace: string,
    readonly deploymentName: string,
    readonly contentOwner: string,
    readonly ownerKind: string = 'FlinkDeployment',
  ) {
    super(
      `ConfigMap ${namespace}/${objectName} holds operator state that belongs to ${ownerKind} ${contentOwner}, not to ${namespace}/${deploymentName}; ` +
        `the operator does not act on it and does not overwrite it. Put back this ${ownerKind}'s own state, or delete the ConfigMap ` +
        `(the operator rebuilds it from the running cluster and Flink)`,
    );
    this.name = 'MisplacedStateError';
  }
}

/**
 * An update's precondition no longer held: the state changed (another writer, or a newer term)
 * after the reconcile decided what to do on it. The update was not applied; the caller must decide
 * again on the new state, never apply the old decision to it.
 */
export class StatePreconditionError extends Error {
  constructor(
    readonly objectName: string,
    readonly decidedOn: number,
    readonly found: number,
  ) {
    super(
      `not updating operator state ${objectName}: the decision was made on revision ${decidedOn}, but the state is now at revision ${found}; deciding again`,
    );
    this.name = 'StatePreconditionError';
  }
}
