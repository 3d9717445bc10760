/**
 * The operator-internal state of one FlinkDeployment: the contents of its companion ConfigMap
 * `<name>-operator-state` (the store and its ConfigMap codec live in src/state/).
 *
 * Everything the operator must remember between reconciles, and must never lose across a crash,
 * is here; the user-facing status (flink-deployment-status.ts) is derived from it and from
 * observation. design/002-state-split.md lists each field with the legacy field it comes from.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { FlinkDeploymentSpecSchema } from './flink-deployment-spec.js';
import { FlinkSessionJobSpecSchema } from './flink-session-job-spec.js';
import { DEPLOYMENT_PHASES } from './deployment-phase.js';
import { CHECKPOINT_TYPES, SAVEPOINT_FORMAT_TYPES, SNAPSHOT_TRIGGER_TYPES } from './flink-deployment-status.js';
import { FlinkStateSnapshotStatusSchema } from './flink-state-snapshot-status.js';
import { JOB_REFERENCE_KINDS } from './flink-state-snapshot-spec.js';
import { Int64, StringEnum } from './schema-builders.js';

/**
 * Bumped when the ConfigMap layout changes incompatibly; readers refuse newer formats and read the
 * older ones. 2: `phase` replaces `reconciliationState` (a format-1 state is read through
 * phaseFromReconciliationState, deployment-phase.ts).
 */
export const INTERNAL_STATE_FORMAT_VERSION = 2;

export const SavepointRecordSchema = Type.Object({
  location: Type.String(),
  /** Completion time, epoch milliseconds. */
  timeStamp: Int64(),
  triggerType: StringEnum(SNAPSHOT_TRIGGER_TYPES),
  formatType: Type.Optional(StringEnum(SAVEPOINT_FORMAT_TYPES)),
  /** The savepointTriggerNonce a MANUAL savepoint answered. */
  triggerNonce: Type.Optional(Int64()),
  jobId: Type.Optional(Type.String()),
  /** The FlinkStateSnapshot the operator recorded this savepoint as (snapshot-resources.ts); trimming the record deletes it. */
  snapshotResource: Type.Optional(Type.String()),
});
export type SavepointRecord = Static<typeof SavepointRecordSchema>;

/** A user-created FlinkStateSnapshot a pending snapshot was triggered for. */
export const SnapshotResourceRefSchema = Type.Object({
  name: Type.String(),
  uid: Type.String(),
  /** Its spec.backoffLimit when it was taken up (-1: no limit). */
  backoffLimit: Type.Integer(),
});
export type SnapshotResourceRef = Static<typeof SnapshotResourceRefSchema>;

/**
 * A write to a FlinkStateSnapshot resource the operator owes (an outbox entry, snapshot-resources.ts).
 * Recorded in the same state write as the fact it publishes (a completed savepoint, a user's
 * snapshot taken up), then carried out and removed: a crash in between repeats the write, which
 * lands on the same name, so the resource is neither lost nor duplicated.
 */
export const SnapshotResourceWriteSchema = Type.Object({
  /** metadata.name of the resource, fixed before anything is written. */
  name: Type.String(),
  /** publish: create it when missing (the operator's own) and write its status; delete: delete it. */
  action: StringEnum(['publish', 'delete'] as const),
  /** Set for a user-created resource: only the object with this uid is written, never created. */
  uid: Type.Optional(Type.String()),
  snapshotType: StringEnum(['SAVEPOINT', 'CHECKPOINT'] as const),
  triggerType: StringEnum(SNAPSHOT_TRIGGER_TYPES),
  /** The resource whose job the snapshot is of. */
  jobReference: Type.Object({ kind: StringEnum(JOB_REFERENCE_KINDS), name: Type.String() }),
  /** The operator's own savepoints: spec.savepoint.formatType and disposeOnDelete. */
  formatType: Type.Optional(StringEnum(SAVEPOINT_FORMAT_TYPES)),
  disposeOnDelete: Type.Optional(Type.Boolean()),
  /** The status to write (publish). */
  status: Type.Optional(FlinkStateSnapshotStatusSchema),
});
export type SnapshotResourceWrite = Static<typeof SnapshotResourceWriteSchema>;

/** The newest checkpoint the operator took or saw complete (status jobStatus.lastCheckpoint). */
export const CheckpointRecordSchema = Type.Object({
  /** Completion time, epoch milliseconds. */
  timeStamp: Int64(),
  triggerType: StringEnum(SNAPSHOT_TRIGGER_TYPES),
  /** FULL or INCREMENTAL (Apache's Checkpoint.formatType). */
  formatType: Type.Optional(StringEnum(CHECKPOINT_TYPES)),
  checkpointId: Type.Optional(Int64()),
  /** Its external path, when Flink reported one. */
  location: Type.Optional(Type.String()),
  /** The checkpointTriggerNonce a MANUAL checkpoint answered. */
  triggerNonce: Type.Optional(Int64()),
  jobId: Type.Optional(Type.String()),
});
export type CheckpointRecord = Static<typeof CheckpointRecordSchema>;

/**
 * A snapshot (savepoint or checkpoint) the operator has decided to take.
 *
 * Written *before* calling Flink (intent: no triggerId yet), then again with Flink's triggerId the
 * moment Flink answers. A pending trigger without a triggerId after a crash is resolved by asking
 * Flink (the job's savepoint/checkpoint history), never by blindly triggering again.
 */
export const PendingSnapshotSchema = Type.Object({
  kind: StringEnum(['savepoint', 'checkpoint'] as const),
  triggerType: StringEnum(SNAPSHOT_TRIGGER_TYPES),
  /** Savepoints: the savepoint format. */
  formatType: Type.Optional(StringEnum(SAVEPOINT_FORMAT_TYPES)),
  /** Checkpoints: FULL or INCREMENTAL. */
  checkpointType: Type.Optional(StringEnum(CHECKPOINT_TYPES)),
  /** The job the snapshot is taken of. */
  jobId: Type.String(),
  /** True for stop-with-savepoint (an upgrade or suspend): the job ends when it completes. */
  stopJob: Type.Boolean(),
  /** When the intent was recorded, epoch milliseconds. */
  requestedAt: Int64(),
  /** Flink's trigger (request) id, once Flink accepted the trigger. */
  triggerId: Type.Optional(Type.String()),
  /** The nonce that asked for a MANUAL snapshot. */
  triggerNonce: Type.Optional(Int64()),
  /** How many times Flink reported this trigger failed and it was retried. */
  failures: Type.Optional(Type.Integer()),
  /** Target directory passed to Flink. */
  targetDirectory: Type.Optional(Type.String()),
  /** Taken for this user-created FlinkStateSnapshot (its failures count against its backoffLimit). */
  snapshotResource: Type.Optional(SnapshotResourceRefSchema),
  /** Epoch ms before which a failed trigger is not sent again (a snapshot resource's backoff). */
  notBefore: Type.Optional(Int64()),
});
export type PendingSnapshot = Static<typeof PendingSnapshotSchema>;

/** The leader that last wrote the state (fencing: a stale leader's write is refused). */
export const WriterSchema = Type.Object({
  holderIdentity: Type.String(),
  leaseTransitions: Type.Integer(),
});

/**
 * The internal-state schema of a resource whose spec is `spec`: FlinkDeployments and
 * FlinkSessionJobs keep the same fields (a session job has no cluster of its own, so it never sets
 * replaceJobManagerUid or the rollback fields; its deployedFrom is what its running job was
 * submitted from), each with its own spec type.
 */
function internalStateSchema<Spec extends TSchema>(spec: Spec) {
  return Type.Object({
    formatVersion: Type.Integer({ description: 'Layout version of this state.' }),
    /** Monotonic: +1 on every write; the status' stateRef.revision says which revision it reflects. */
    revision: Type.Integer(),
    /** Where the reconciler is (deployment-phase.ts); the Apache reconciliationState is derived from it. */
    phase: StringEnum(DEPLOYMENT_PHASES),
    /** RFC 3339: when the phase last changed to a deployment, a stop or a suspend (the readiness timeout counts from it). */
    reconciliationTimestamp: Type.Optional(Type.String()),
    /** The spec last acted on, with the rewrites the Apache operator makes (job.state after reconcile, upgradeMode used, last acknowledged nonces). */
    lastReconciledSpec: Type.Optional(spec),
    /** metadata.generation of the spec in lastReconciledSpec. */
    lastReconciledGeneration: Type.Optional(Int64()),
    /** The last spec that ran stably (job RUNNING), the rollback target. */
    lastStableSpec: Type.Optional(spec),
    lastStableGeneration: Type.Optional(Int64()),
    /** The firstDeployment flag recorded with lastStableSpec (the Apache format keeps one per spec; carried for a faithful legacy encoding). */
    lastStableFirstDeployment: Type.Optional(Type.Boolean()),
    /** True until the first deployment has been made and observed. */
    firstDeployment: Type.Optional(Type.Boolean()),
    /** The savepoint (or last-state marker) the next deployment restores from. */
    upgradeSavepointPath: Type.Optional(Type.String()),
    /** The job id pinned for the next submission ($internal.pipeline.job-id), recorded before submitting. */
    jobIdToSubmit: Type.Optional(Type.String()),
    /** With jobIdToSubmit: the uid of the JobManager Deployment the deployment replaces even when unchanged (a restart). */
    replaceJobManagerUid: Type.Optional(Type.String()),
    /** The job id of the job the current deployment runs. */
    deployedJobId: Type.Optional(Type.String()),
    /** The savepoint or checkpoint the current deployment restored from (a JobManager that never started is redeployed from it). */
    deployedFrom: Type.Optional(Type.String()),
    pendingSavepoint: Type.Optional(PendingSnapshotSchema),
    pendingCheckpoint: Type.Optional(PendingSnapshotSchema),
    /** Newest last. */
    savepointHistory: Type.Array(SavepointRecordSchema),
    lastPeriodicSavepointTimestamp: Type.Optional(Int64()),
    lastPeriodicCheckpointTimestamp: Type.Optional(Int64()),
    /** The newest checkpoint taken (status jobStatus.lastCheckpoint). */
    lastCheckpoint: Type.Optional(CheckpointRecordSchema),
    /** FlinkStateSnapshot writes owed, oldest first (snapshot-resources.ts). */
    snapshotResourceWrites: Type.Optional(Type.Array(SnapshotResourceWriteSchema)),
    /**
     * The uids of user-created FlinkStateSnapshots taken up, newest last (at most
     * MAX_TAKEN_SNAPSHOTS): recorded with the intent, so a snapshot is never triggered twice
     * whatever its status says.
     */
    takenSnapshots: Type.Optional(Type.Array(Type.String())),
    /**
     * An upgrade (or suspend) whose stop-with-savepoint failed: the job keeps running its previous
     * spec, and the upgrade is tried again only for a newer generation (the next spec change).
     */
    failedUpgrade: Type.Optional(
      Type.Object({
        /** metadata.generation whose upgrade failed. */
        generation: Int64(),
        reason: Type.String(),
        /** RFC 3339. */
        at: Type.String(),
      }),
    ),
    /**
     * An in-place rescale through Flink's resource-requirements API (inplace-scaling-steps.ts):
     * recorded with the bounds and the spec before the PUT, settled (spec reconciled, field gone)
     * once Flink shows the bounds; `refused` when Flink refused it or did not show it, and the
     * change of that generation then goes through the full upgrade.
     */
    inPlaceScaling: Type.Optional(
      Type.Object({
        generation: Int64(),
        jobId: Type.String(),
        /** Job vertex id → the parallelism bounds sent. */
        requirements: Type.Optional(Type.Record(Type.String(), Type.Object({ lowerBound: Type.Integer(), upperBound: Type.Integer() }))),
        /** The spec recorded as reconciled once Flink shows the bounds. */
        spec: Type.Optional(spec),
        refused: Type.Optional(Type.String()),
      }),
    ),
    lastWriter: Type.Optional(WriterSchema),
  });
}

export const InternalStateSchema = internalStateSchema(FlinkDeploymentSpecSchema);
/** A FlinkSessionJob's internal state: the fields of InternalState, its specs FlinkSessionJobSpecs. */
export const SessionJobInternalStateSchema = internalStateSchema(FlinkSessionJobSpecSchema);
export type InternalState = Static<typeof InternalStateSchema>;
export type SessionJobInternalState = Static<typeof SessionJobInternalStateSchema>;
/** The internal state of either kind: what the state store, its codec and the migration handle alike. */
export type AnyInternalState = InternalState | SessionJobInternalState;

/** The state of a deployment the operator has never acted on. */
export function emptyInternalState(): InternalState & SessionJobInternalState {
  return {
    formatVersion: INTERNAL_STATE_FORMAT_VERSION,
    revision: 0,
    phase: 'NEW',
    savepointHistory: [],
  };
}

/** Phases in which `upgradeSavepointPath` is what the next deployment restores from. */
const RESTORE_PENDING_PHASES: ReadonlySet<AnyInternalState['phase']> = new Set(['NEW', 'DEPLOYING', 'STOPPING', 'STOPPED', 'ROLLING_BACK']);

/**
 * What `upgradeSavepointPath` means now: `pending` (a deployment or submission is pinned or about to
 * be: it restores from it), `on-resume` (suspended: a resume restores from it), `spent` (a job is
 * deployed: the path is left over, e.g. from an Apache operator status, where it stays after the
 * upgrade), `none`.
 */
export function restorePathRole(state: Pick<AnyInternalState, 'upgradeSavepointPath' | 'jobIdToSubmit' | 'phase'>): 'pending' | 'on-resume' | 'spent' | 'none' {
  if (!state.upgradeSavepointPath) return 'none';
  if (state.jobIdToSubmit || RESTORE_PENDING_PHASES.has(state.phase)) return 'pending';
  if (state.phase === 'SUSPENDING' || state.phase === 'SUSPENDED') return 'on-resume';
  return 'spent';
}
