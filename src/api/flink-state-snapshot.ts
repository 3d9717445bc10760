/**
 * The FlinkStateSnapshot custom resource: names, its one version, the object type, and the labels
 * and names the Apache operator gives the snapshots it creates.
 *
 * Names as the Apache operator's CRD (`api/FlinkStateSnapshot.java`: group flink.apache.org,
 * `@ShortNames({"flinksnp"})`, `@Version(CrdConstants.API_VERSION)` = v1beta1), plus our category
 * `flink`. Labels from `api/CrdConstants.java` and `utils/FlinkStateSnapshotUtils.java`
 * (`getSnapshotLabels`), commit 6e9caeb4.
 *
 * Guarantees
 * - Only v1beta1 exists, served and stored, not deprecated: it is the only version the Apache
 *   operator has ever served for this kind, so there is no legacy layout to split off and no v1
 *   (design/011-flink-state-snapshot.md says why no v1 is added).
 * - The label keys are the Apache operator's, so snapshots it created are found by the same
 *   selectors after a migration.
 * Caveats
 * - A snapshot is linked to its job by `spec.jobReference` and labels, never by an ownerReference:
 *   a savepoint must outlive the deployment it came from (the Apache operator sets none either).
 */
import { API_VERSION_V1BETA1, FLINK_GROUP, type FlinkResource } from './flink-deployment.js';
import type { FlinkStateSnapshotSpec } from './flink-state-snapshot-spec.js';
import type { FlinkStateSnapshotStatus } from './flink-state-snapshot-status.js';

export const FLINK_STATE_SNAPSHOT_KIND = 'FlinkStateSnapshot';
export const FLINK_STATE_SNAPSHOT_PLURAL = 'flinkstatesnapshots';
export const FLINK_STATE_SNAPSHOT_SINGULAR = 'flinkstatesnapshot';
/** As the Apache operator's CRD (`@ShortNames({"flinksnp"})`). */
export const FLINK_STATE_SNAPSHOT_SHORT_NAMES = ['flinksnp'] as const;
export const FLINK_STATE_SNAPSHOT_CRD_NAME = `${FLINK_STATE_SNAPSHOT_PLURAL}.${FLINK_GROUP}`;
/** The one version of the kind (the Apache `CrdConstants.API_VERSION`): served and the storage version. */
export const FLINK_STATE_SNAPSHOT_VERSION = API_VERSION_V1BETA1;
/** The finalizer the Apache operator puts on every FlinkStateSnapshot (`<plural>.<group>/finalizer`, JOSDK's default), kept so a migrated resource keeps it. */
export const FLINK_STATE_SNAPSHOT_FINALIZER = `${FLINK_STATE_SNAPSHOT_CRD_NAME}/finalizer`;

/** Label: SAVEPOINT or CHECKPOINT (Apache `CrdConstants.LABEL_SNAPSHOT_TYPE`). */
export const SNAPSHOT_TYPE_LABEL = 'snapshot.type';
/** Label: UPGRADE, PERIODIC, MANUAL or UNKNOWN; a user-created snapshot gets MANUAL (Apache `LABEL_SNAPSHOT_TRIGGER_TYPE`). */
export const SNAPSHOT_TRIGGER_TYPE_LABEL = 'snapshot.trigger-type';
/** Label: the status state, mirrored for selectors (Apache `LABEL_SNAPSHOT_STATE`). */
export const SNAPSHOT_STATE_LABEL = 'snapshot.state';
/** Label: the kind of the referenced job resource (Apache `LABEL_SNAPSHOT_JOB_REFERENCE_KIND`). */
export const SNAPSHOT_JOB_REFERENCE_KIND_LABEL = 'job-reference.kind';
/** Label: the name of the referenced job resource (Apache `LABEL_SNAPSHOT_JOB_REFERENCE_NAME`). */
export const SNAPSHOT_JOB_REFERENCE_NAME_LABEL = 'job-reference.name';
/** The values of {@link SNAPSHOT_TYPE_LABEL} (Apache `SnapshotType`). */
export const SNAPSHOT_TYPES = ['SAVEPOINT', 'CHECKPOINT'] as const;
export type SnapshotType = (typeof SNAPSHOT_TYPES)[number];

export type FlinkStateSnapshotV1beta1 = FlinkResource<
  typeof FLINK_STATE_SNAPSHOT_VERSION,
  typeof FLINK_STATE_SNAPSHOT_KIND,
  FlinkStateSnapshotSpec,
  FlinkStateSnapshotStatus
>;

/** The operator's working type: the v1beta1 object (the only version). */
export type FlinkStateSnapshot = FlinkStateSnapshotV1beta1;

/** The type of snapshot a spec asks for; undefined unless exactly one of savepoint / checkpoint is set. */
export function snapshotTypeOf(spec: FlinkStateSnapshotSpec): SnapshotType | undefined {
  const savepoint = spec.savepoint !== undefined && spec.savepoint !== null;
  const checkpoint = spec.checkpoint !== undefined && spec.checkpoint !== null;
  if (savepoint === checkpoint) return undefined;
  return savepoint ? 'SAVEPOINT' : 'CHECKPOINT';
}
