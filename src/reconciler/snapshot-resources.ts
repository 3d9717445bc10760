/**
 * FlinkStateSnapshot resources as a job's reconciler sees them: the names and objects of the
 * snapshots the operator records, the outbox entries (`snapshotResourceWrites`) that publish them,
 * and which user-created snapshots a job has still to take. Pure: no request, no clock.
 *
 * The state ConfigMap stays the source of truth (design/011 "Snapshots the operator takes"): a
 * completed savepoint goes into the savepoint history and, in the same write, an outbox entry owes
 * its resource; a user's snapshot is taken up by recording its uid (`takenSnapshots`) with the
 * intent, and its status is owed the same way. snapshot-resource-steps.ts carries the entries out.
 *
 * Guarantees
 * - A resource's name is fixed in the entry before it is created, so a crash between the create and
 *   the removal of the entry creates nothing twice (the repeat finds the object by that name).
 * - A user's snapshot whose uid is in `takenSnapshots` is never offered again, whatever its status
 *   or the cache says.
 * Assumptions
 * - Names: `<resource>-<savepoint|checkpoint>-<trigger type>-<epoch ms>`, the Apache operator's
 *   (`FlinkStateSnapshotUtils.getFlinkStateSnapshotName`); the owner's name is cut so the whole
 *   stays a valid object name (253 characters).
 * Caveats
 * - `takenSnapshots` keeps the newest MAX_TAKEN_SNAPSHOTS uids: a snapshot older than that many
 *   others and still TRIGGER_PENDING (it cannot be: each is taken up in turn) would be offered again.
 */
import {
  FLINK_STATE_SNAPSHOT_FINALIZER,
  FLINK_STATE_SNAPSHOT_KIND,
  FLINK_STATE_SNAPSHOT_VERSION,
  snapshotTypeOf,
  type FlinkStateSnapshot,
} from '../api/flink-state-snapshot.js';
import {
  SNAPSHOT_JOB_REFERENCE_KIND_LABEL,
  SNAPSHOT_JOB_REFERENCE_NAME_LABEL,
  SNAPSHOT_STATE_LABEL,
  SNAPSHOT_TRIGGER_TYPE_LABEL,
  SNAPSHOT_TYPE_LABEL,
} from '../api/flink-state-snapshot.js';
import { backoffLimitOf, savepointSpecWithDefaults, type JobReferenceKind } from '../api/flink-state-snapshot-spec.js';
import { snapshotStateOf, type FlinkStateSnapshotStatus } from '../api/flink-state-snapshot-status.js';
import { completedSavepointRecord } from './pending-savepoint.js';
import type { AnyInternalState, PendingSnapshot, SavepointRecord, SnapshotResourceRef, SnapshotResourceWrite } from '../api/internal-state.js';
import { FLINK_GROUP } from '../api/flink-deployment.js';

/** How many taken-up user snapshots a state remembers. */
export const MAX_TAKEN_SNAPSHOTS = 32;
/** The first retry of a failed user snapshot waits this long, doubling per failure (Apache `FlinkStateSnapshotController`: 10 s · 2^(failures-1)). */
export const SNAPSHOT_RETRY_BASE_MS = 10_000;
/** Retries never wait longer than this (ours; Apache doubles without bound). */
export const SNAPSHOT_RETRY_MAX_MS = 5 * 60_000;

/** Whose snapshots these are: the resource that runs the job. */
export interface SnapshotOwner {
  kind: JobReferenceKind;
  namespace: string;
  name: string;
}

/** A user-created snapshot the job has to take (design/011), as the decision needs it. */
export interface UserSnapshotRequest {
  ref: SnapshotResourceRef;
  snapshotType: 'SAVEPOINT' | 'CHECKPOINT';
  /** Savepoints: spec.savepoint.path (the target directory) and formatType. */
  targetDirectory?: string;
  formatType?: 'CANONICAL' | 'NATIVE';
  /**
   * Already triggered (IN_PROGRESS with a trigger id) by a state that is gone (a lost ConfigMap, or
   * the Apache operator before a migration): adopted, and resolved by asking Flink about that
   * trigger id, never triggered blindly again.
   */
  inFlight?: { triggerId: string; triggeredAt: number };
}

/** ISO-8601 instant with milliseconds, as the Apache operator writes snapshot timestamps (`DateTimeUtils.kubernetes`). */
export function snapshotTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** The name of a resource the operator creates for its own snapshot. */
export function operatorSnapshotName(owner: string, type: 'SAVEPOINT' | 'CHECKPOINT', triggerType: string, epochMs: number): string {
  const suffix = `-${type.toLowerCase()}-${triggerType.toLowerCase()}-${epochMs}`;
  return owner.slice(0, 253 - suffix.length).replace(/[-.]+$/, '') + suffix;
}

/** The user's snapshots `owner`'s job still has to take, oldest first: unprocessed, valid enough to take, not yet taken up. */
export function userSnapshotRequests(snapshots: readonly FlinkStateSnapshot[], owner: SnapshotOwner, state: AnyInternalState): UserSnapshotRequest[] {
  const taken = new Set(state.takenSnapshots ?? []);
  const requests: Array<UserSnapshotRequest & { created: string }> = [];
  for (const snapshot of snapshots) {
    const { metadata, spec, status } = snapshot;
    if (!metadata.uid || !metadata.name || metadata.deletionTimestamp || taken.has(metadata.uid)) continue;
    if (metadata.namespace !== owner.namespace || spec?.jobReference?.kind !== owner.kind || spec.jobReference.name !== owner.name) continue;
    const state = snapshotStateOf(status);
    const inFlight =
      state === 'IN_PROGRESS' && status?.triggerId ? { triggerId: status.triggerId, triggeredAt: Date.parse(status.triggerTimestamp ?? '') || 0 } : undefined;
    if (!inFlight && (state !== 'TRIGGER_PENDING' || status?.triggerId)) continue;
    const type = snapshotTypeOf(spec);
    if (!type) continue;
    const savepoint = spec.savepoint ? savepointSpecWithDefaults(spec.savepoint) : undefined;
    if (savepoint?.alreadyExists) continue;
    const ref = { name: metadata.name, uid: metadata.uid, backoffLimit: backoffLimitOf(spec) };
    const format = savepoint?.formatType === 'NATIVE' ? 'NATIVE' : savepoint ? 'CANONICAL' : undefined;
    requests.push({
      ref,
      snapshotType: type,
      ...(savepoint?.path ? { targetDirectory: savepoint.path } : {}),
      ...(format ? { formatType: format } : {}),
      ...(inFlight ? { inFlight } : {}),
      created: metadata.creationTimestamp ? new Date(metadata.creationTimestamp).toISOString() : '',
    });
  }
  requests.sort((a, b) => (a.created === b.created ? a.ref.name.localeCompare(b.ref.name) : a.created < b.created ? -1 : 1));
  return requests.map(({ created: _created, ...request }) => request);
}

/** The operator's own periodic checkpoint resources of `owner`'s job, oldest first (Apache trims PERIODIC and UPGRADE ones only). */
export function ownCheckpointResources(snapshots: readonly FlinkStateSnapshot[], owner: SnapshotOwner): string[] {
  return snapshots
    .filter(
      (s) =>
        s.metadata.namespace === owner.namespace &&
        !s.metadata.deletionTimestamp &&
        s.spec?.checkpoint &&
        s.spec.jobReference?.kind === owner.kind &&
        s.spec.jobReference.name === owner.name &&
        s.metadata.labels?.[SNAPSHOT_TRIGGER_TYPE_LABEL] === 'PERIODIC' &&
        snapshotStateOf(s.status) === 'COMPLETED',
    )
    .sort(
      (a, b) =>
        (a.status?.resultTimestamp ?? '').localeCompare(b.status?.resultTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    )
    .map((s) => s.metadata.name ?? '');
}

/** `takenSnapshots` with `uid` added (newest last, bounded). */
export function withSnapshotTaken<S extends AnyInternalState>(state: S, uid: string): S {
  const taken = (state.takenSnapshots ?? []).filter((u) => u !== uid);
  return { ...state, takenSnapshots: [...taken, uid].slice(-MAX_TAKEN_SNAPSHOTS) };
}

/** `state` with `write` owed (appended to the outbox). */
export function withSnapshotWrite<S extends AnyInternalState>(state: S, write: SnapshotResourceWrite): S {
  return { ...state, snapshotResourceWrites: [...(state.snapshotResourceWrites ?? []), write] };
}

/** A status write owed to the user's snapshot a pending snapshot was taken for. */
export function userSnapshotStatusWrite(owner: SnapshotOwner, pending: PendingSnapshot, status: FlinkStateSnapshotStatus): SnapshotResourceWrite {
  const ref = pending.snapshotResource!;
  return {
    name: ref.name,
    uid: ref.uid,
    action: 'publish',
    snapshotType: pending.kind === 'savepoint' ? 'SAVEPOINT' : 'CHECKPOINT',
    triggerType: 'MANUAL',
    jobReference: { kind: owner.kind, name: owner.name },
    status,
  };
}

/** The status of a user's snapshot once its trigger was sent (IN_PROGRESS with the trigger id). */
export function inProgressStatus(pending: PendingSnapshot): FlinkStateSnapshotStatus {
  return {
    state: 'IN_PROGRESS',
    triggerId: pending.triggerId,
    triggerTimestamp: snapshotTimestamp(pending.requestedAt),
    failures: pending.failures ?? 0,
  };
}

/** How long a user snapshot waits after its `failures`-th failure before the next attempt. */
export function snapshotRetryDelayMs(failures: number): number {
  return Math.min(SNAPSHOT_RETRY_MAX_MS, SNAPSHOT_RETRY_BASE_MS * 2 ** Math.min(30, Math.max(0, failures - 1)));
}

/** Whether a user snapshot that failed `failures` times is given up (Apache: `backoffLimit >= 0 && failures > backoffLimit`). */
export function snapshotRetriesExhausted(ref: SnapshotResourceRef, failures: number): boolean {
  return ref.backoffLimit >= 0 && failures > ref.backoffLimit;
}

/** The entry that records the operator's own completed savepoint as a resource (the record names it). */
export function operatorSavepointWrite(
  owner: SnapshotOwner,
  record: SavepointRecord & { snapshotResource: string },
  pending: PendingSnapshot,
  disposeOnDelete: boolean,
): SnapshotResourceWrite {
  return {
    name: record.snapshotResource,
    action: 'publish',
    snapshotType: 'SAVEPOINT',
    triggerType: record.triggerType,
    jobReference: { kind: owner.kind, name: owner.name },
    ...(record.formatType ? { formatType: record.formatType } : {}),
    disposeOnDelete,
    status: {
      state: 'COMPLETED',
      path: record.location,
      ...(pending.triggerId ? { triggerId: pending.triggerId } : {}),
      triggerTimestamp: snapshotTimestamp(pending.requestedAt),
      resultTimestamp: snapshotTimestamp(record.timeStamp),
      failures: pending.failures ?? 0,
    },
  };
}

/** The entry that records the operator's own completed checkpoint as a resource. */
export function operatorCheckpointWrite(owner: SnapshotOwner, pending: PendingSnapshot, now: number, path: string | undefined): SnapshotResourceWrite {
  return {
    name: operatorSnapshotName(owner.name, 'CHECKPOINT', pending.triggerType, now),
    action: 'publish',
    snapshotType: 'CHECKPOINT',
    triggerType: pending.triggerType,
    jobReference: { kind: owner.kind, name: owner.name },
    status: {
      state: 'COMPLETED',
      ...(path ? { path } : {}),
      ...(pending.triggerId ? { triggerId: pending.triggerId } : {}),
      triggerTimestamp: snapshotTimestamp(pending.requestedAt),
      resultTimestamp: snapshotTimestamp(now),
      failures: pending.failures ?? 0,
    },
  };
}

/** The entry that deletes a resource the operator created (its savepoint left the history, or an old checkpoint). */
export function deleteSnapshotWrite(
  owner: SnapshotOwner,
  name: string,
  snapshotType: 'SAVEPOINT' | 'CHECKPOINT',
  triggerType: SavepointRecord['triggerType'],
): SnapshotResourceWrite {
  return { name, action: 'delete', snapshotType, triggerType, jobReference: { kind: owner.kind, name: owner.name } };
}

/** The labels the Apache operator puts on a snapshot (`FlinkStateSnapshotUtils.getSnapshotLabels`). */
export function snapshotLabels(write: SnapshotResourceWrite): Record<string, string> {
  return {
    [SNAPSHOT_TYPE_LABEL]: write.snapshotType,
    [SNAPSHOT_TRIGGER_TYPE_LABEL]: write.triggerType,
    ...(write.status?.state ? { [SNAPSHOT_STATE_LABEL]: write.status.state } : {}),
    [SNAPSHOT_JOB_REFERENCE_KIND_LABEL]: write.jobReference.kind,
    [SNAPSHOT_JOB_REFERENCE_NAME_LABEL]: write.jobReference.name,
  };
}

/**
 * The object the operator creates for its own snapshot: `jobReference` and labels link it to the
 * job, no ownerReference (a savepoint outlives its deployment); a savepoint is `alreadyExists: true`
 * with its path, so nothing triggers it again (Apache does so for upgrade savepoints; ours are all
 * taken before the resource exists).
 */
export function operatorSnapshotObject(namespace: string, write: SnapshotResourceWrite): FlinkStateSnapshot {
  const jobReference = { kind: write.jobReference.kind, name: write.jobReference.name };
  return {
    apiVersion: `${FLINK_GROUP}/${FLINK_STATE_SNAPSHOT_VERSION}`,
    kind: FLINK_STATE_SNAPSHOT_KIND,
    // With the snapshot controller's finalizer from the start (it would add it at once otherwise: one request saved).
    metadata: { name: write.name, namespace, labels: snapshotLabels(write), finalizers: [FLINK_STATE_SNAPSHOT_FINALIZER] },
    spec:
      write.snapshotType === 'SAVEPOINT'
        ? {
            jobReference,
            savepoint: {
              ...(write.status?.path ? { path: write.status.path } : {}),
              ...(write.formatType ? { formatType: write.formatType } : {}),
              disposeOnDelete: write.disposeOnDelete ?? false,
              alreadyExists: true,
            },
          }
        : { jobReference, checkpoint: {} },
  };
}

/** Whether `snapshot` is the one `write` is about: the same job reference (and uid, for a user's). */
export function isSnapshotOf(snapshot: FlinkStateSnapshot, write: SnapshotResourceWrite): boolean {
  if (write.uid) return snapshot.metadata.uid === write.uid;
  const reference = snapshot.spec?.jobReference;
  return reference?.kind === write.jobReference.kind && reference.name === write.jobReference.name;
}

/** The pending field a snapshot of `kind` lives in. */
function pendingField(pending: PendingSnapshot): 'pendingSavepoint' | 'pendingCheckpoint' {
  return pending.kind === 'savepoint' ? 'pendingSavepoint' : 'pendingCheckpoint';
}

/** `state` with the user's snapshot `pending` taken up and IN_PROGRESS owed to it: the intent write of a user's snapshot. */
export function withUserSnapshotStarted<S extends AnyInternalState>(state: S, owner: SnapshotOwner, pending: PendingSnapshot): S {
  const ref = pending.snapshotResource!;
  return withSnapshotWrite(
    withSnapshotTaken({ ...state, [pendingField(pending)]: pending }, ref.uid),
    userSnapshotStatusWrite(owner, pending, inProgressStatus(pending)),
  );
}

/** `state` with the user's snapshot `pending` COMPLETED (at `path`, when known) owed to its resource and the intent cleared. */
export function withUserSnapshotCompleted<S extends AnyInternalState>(
  state: S,
  owner: SnapshotOwner,
  pending: PendingSnapshot,
  path: string | undefined,
  now: number,
): S {
  const status: FlinkStateSnapshotStatus = {
    ...inProgressStatus(pending),
    state: 'COMPLETED',
    ...(path ? { path } : {}),
    resultTimestamp: snapshotTimestamp(now),
  };
  return withSnapshotWrite({ ...state, [pendingField(pending)]: undefined }, userSnapshotStatusWrite(owner, pending, status));
}

/**
 * A user's snapshot failed (`reason`): while its backoffLimit allows (Apache: retried unless
 * `backoffLimit >= 0 && failures > backoffLimit`), the intent gets a new trigger id to send after
 * the backoff (`notBefore`; `requestedAt` moves with it, so the failed attempt is not taken for the
 * new one); then FAILED. Either way the resource's status is owed in the same write.
 */
export function userSnapshotFailure<S extends AnyInternalState>(
  state: S,
  owner: SnapshotOwner,
  pending: PendingSnapshot,
  failure: { kind: 'failed' | 'lost'; reason: string; now: number; newTriggerId: string },
): { state: S; message: string } {
  const ref = pending.snapshotResource!;
  const failures = (pending.failures ?? 0) + 1;
  const error = `${pending.kind} of job ${pending.jobId} ${failure.kind === 'failed' ? 'failed' : 'was lost'}: ${failure.reason}`;
  if (failure.kind === 'failed' && !snapshotRetriesExhausted(ref, failures)) {
    const notBefore = failure.now + snapshotRetryDelayMs(failures);
    const retry: PendingSnapshot = { ...pending, triggerId: failure.newTriggerId, failures, requestedAt: notBefore, notBefore };
    return {
      state: withSnapshotWrite(
        { ...state, [pendingField(pending)]: retry },
        userSnapshotStatusWrite(owner, pending, { ...inProgressStatus(pending), failures, error }),
      ),
      message: `${error} (FlinkStateSnapshot ${ref.name}, failure ${failures}); retrying at ${new Date(notBefore).toISOString()}`,
    };
  }
  const status: FlinkStateSnapshotStatus = { ...inProgressStatus(pending), state: 'FAILED', failures, error, resultTimestamp: snapshotTimestamp(failure.now) };
  return {
    state: withSnapshotWrite({ ...state, [pendingField(pending)]: undefined }, userSnapshotStatusWrite(owner, pending, status)),
    message: `${error}; FlinkStateSnapshot ${ref.name} FAILED after ${failures} failure(s) (backoffLimit ${ref.backoffLimit})`,
  };
}

/** `state` with a user's snapshot this job cannot take taken up, and FAILED with `error` owed to it. */
export function withUserSnapshotRefused<S extends AnyInternalState>(
  state: S,
  owner: SnapshotOwner,
  snapshot: SnapshotResourceRef,
  snapshotType: 'SAVEPOINT' | 'CHECKPOINT',
  error: string,
  now: number,
): S {
  return withSnapshotWrite(withSnapshotTaken(state, snapshot.uid), {
    name: snapshot.name,
    uid: snapshot.uid,
    action: 'publish',
    snapshotType,
    triggerType: 'MANUAL',
    jobReference: { kind: owner.kind, name: owner.name },
    status: { state: 'FAILED', error, failures: 0, resultTimestamp: snapshotTimestamp(now) },
  });
}

/**
 * Records a user's snapshot failure (userSnapshotFailure) through `save`, only while `pending` is
 * still the pending snapshot of its kind; the Warning message to emit, or undefined when the state
 * had moved on. The one failure write of both kinds' savepoint steps and of the checkpoint steps.
 */
export async function saveUserSnapshotFailure<S extends AnyInternalState>(
  save: (fn: (current: S) => S) => Promise<S>,
  owner: SnapshotOwner,
  pending: PendingSnapshot,
  failure: { kind: 'failed' | 'lost'; reason: string; now: number; newTriggerId: string },
): Promise<string | undefined> {
  let message: string | undefined;
  await save((s) => {
    if (s[pendingField(pending)]?.triggerId !== pending.triggerId) return s;
    const failed = userSnapshotFailure(s, owner, pending, failure);
    message = failed.message;
    return failed.state;
  });
  return message;
}

/**
 * `state` with the operator's own savepoint `pending` completed at `location`: the intent cleared,
 * the record appended to the history and — when the operator records snapshot resources
 * (`resources` given) — the record names its FlinkStateSnapshot and the resource is owed, all in
 * the one completion write. The kind-specific rest (a stop's phase, the nonce, the periodic time)
 * is the caller's.
 */
export function withSavepointRecorded<S extends AnyInternalState>(
  state: S,
  owner: SnapshotOwner,
  pending: PendingSnapshot,
  location: string,
  now: number,
  resources: { disposeOnDelete: boolean } | undefined,
): S {
  const record = completedSavepointRecord(pending, location, now);
  const next: S = { ...state, pendingSavepoint: undefined, savepointHistory: [...state.savepointHistory, record] };
  if (!resources) return next;
  const recorded = { ...record, snapshotResource: operatorSnapshotName(owner.name, 'SAVEPOINT', pending.triggerType, now) };
  return withSnapshotWrite(
    { ...next, savepointHistory: [...state.savepointHistory, recorded] },
    operatorSavepointWrite(owner, recorded, pending, resources.disposeOnDelete),
  );
}
