/**
 * `FlinkStateSnapshot.status`: the Apache Flink Kubernetes operator's, field for field (one
 * layout: the CRD has only v1beta1, and this status is for users and for the operator alike).
 *
 * Source: apache/flink-kubernetes-operator `api/status/FlinkStateSnapshotStatus.java`, the CRD
 * `helm/flink-kubernetes-operator/crds/flinkstatesnapshots.flink.apache.org-v1.yml`,
 * `utils/FlinkStateSnapshotUtils.java` (how the states and timestamps are written) and
 * `controller/FlinkStateSnapshotController.java` (failures and the backoff), commit 6e9caeb4.
 *
 * Guarantees
 * - Every field, type and enum of the Apache CRD's status, and no other field, so a status the
 *   Apache operator wrote is read and stored as it is.
 * - {@link INITIAL_SNAPSHOT_STATE} and {@link INITIAL_SNAPSHOT_FAILURES} are the Apache Java
 *   defaults (`state = TRIGGER_PENDING`, `failures = 0`): a snapshot without status reads as that.
 * Caveats
 * - The timestamps are strings in the Apache operator's format (`DateTimeUtils.kubernetes`:
 *   ISO-8601 instant in UTC, e.g. `2025-01-31T10:15:30.123Z`); the schema declares no `format`,
 *   as the Apache CRD, so a status it wrote is never refused.
 * - COMPLETED, FAILED and ABANDONED are final: the Apache reconciler acts only on TRIGGER_PENDING
 *   (`StateSnapshotReconciler.reconcile`) and observes only IN_PROGRESS.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Int32, StringEnum } from './schema-builders.js';

/** The states of a snapshot (Apache `FlinkStateSnapshotStatus.State`), in the order the Apache CRD lists them. */
export const SNAPSHOT_STATES = ['ABANDONED', 'COMPLETED', 'FAILED', 'IN_PROGRESS', 'TRIGGER_PENDING'] as const;
export type SnapshotState = (typeof SNAPSHOT_STATES)[number];
/** States after which nothing more happens to the snapshot. */
export const FINAL_SNAPSHOT_STATES: readonly SnapshotState[] = ['COMPLETED', 'FAILED', 'ABANDONED'];

/** The state of a snapshot not yet processed (Apache default of `state`). */
export const INITIAL_SNAPSHOT_STATE: SnapshotState = 'TRIGGER_PENDING';
/** The failure count of a fresh snapshot (Apache default of `failures`). */
export const INITIAL_SNAPSHOT_FAILURES = 0;

export const FlinkStateSnapshotStatusSchema = Type.Object(
  {
    state: Type.Optional(
      StringEnum(SNAPSHOT_STATES, {
        description:
          'TRIGGER_PENDING: not triggered yet (default); IN_PROGRESS: triggered, waiting for Flink; COMPLETED: done, see path; FAILED: failed more often than backoffLimit allows; ABANDONED: the job was gone or not running.',
      }),
    ),
    triggerId: Type.Optional(Type.String({ description: 'Id Flink gave the triggered savepoint or checkpoint operation.' })),
    triggerTimestamp: Type.Optional(Type.String({ description: 'When the snapshot was triggered (ISO-8601 instant).' })),
    resultTimestamp: Type.Optional(Type.String({ description: 'When the snapshot last completed, failed or was abandoned (ISO-8601 instant).' })),
    path: Type.Optional(
      Type.String({
        description:
          'Where the completed snapshot is (usable as job.initialSavepointPath); empty until COMPLETED, and may stay empty for a checkpoint whose path Flink did not report.',
      }),
    ),
    error: Type.Optional(Type.String({ description: 'The last error of this snapshot.' })),
    failures: Type.Optional(Int32({ description: 'How many times the snapshot has failed so far (compared with spec.backoffLimit).' })),
  },
  { description: 'Observed state of the snapshot.' },
);
export type FlinkStateSnapshotStatus = Static<typeof FlinkStateSnapshotStatusSchema>;

/** `status.state`, or the state of a snapshot nobody has processed yet. */
export function snapshotStateOf(status: FlinkStateSnapshotStatus | undefined): SnapshotState {
  return status?.state ?? INITIAL_SNAPSHOT_STATE;
}
