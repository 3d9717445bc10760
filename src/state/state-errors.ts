/**
 * Why a state load or update refused to act. Each message says what the user can do about it;
 * the reconciler puts the message into `status.error` and an event.
 *
 * (StaleLeaderError, the fencing refusal, lives with the fencing token in src/runtime/fencing-token.ts.)
 */

/** The state object exists but is not controlled by this FlinkDeployment (its uid): never read nor written. */
export class ForeignStateError extends Error {
  constructor(readonly objectName: string, readonly namespace: string, readonly deploymentName: string, readonly detail: string) {
    super(
      `ConfigMap ${namespace}/${objectName} exists but is not owned by FlinkDeployment ${deploymentName} (${detail}); ` +
        `the operator will not read or overwrite it: rename or delete it`,
    );
    this.name = 'ForeignStateError';
  }
}

/** The state object cannot be decoded or fails the schema: no guess, no overwrite until fixed. */
export class CorruptStateError extends Error {
  constructor(readonly objectName: string, readonly namespace: string, readonly key: string, readonly detail: string, readonly objectKind: string = 'ConfigMap') {
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
  constructor(readonly objectName: string, readonly totalBytes: number, readonly limitBytes: number, readonly bytesPerKey: Readonly<Record<string, number>>) {
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
  constructor(readonly objectName: string, readonly attempts: number, readonly lastError: unknown) {
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
