/**
 * Fixture builder for FlinkStateSnapshot objects, for tests and examples:
 *
 *   flinkStateSnapshot('orders-backup').of('FlinkSessionJob', 'orders').inNamespace('team-a').build()
 *   flinkStateSnapshot('nightly').asCheckpoint().withBackoffLimit(3).build()
 *   flinkStateSnapshot('imported').asExistingSavepoint('s3://bucket/savepoints/savepoint-1').build()
 *
 * Guarantees
 * - Starts from a small spec that validates (flink-state-snapshot-validation.ts): a savepoint of
 *   the FlinkDeployment `flinkDeployment()` builds by default (`basic-example`), everything else
 *   left to the defaults, as a user would write it.
 * - Deep-merges what the test says over it (arrays replace), as the other builders do;
 *   `asSavepoint` / `asCheckpoint` replace the other kind of snapshot, so the result still asks
 *   for exactly one. `build()` returns fresh copies, so one builder can make many objects.
 * Caveats
 * - The kind has one version (v1beta1), so `build()` is the v1beta1 object and `withStatus` sets
 *   its status; the inherited `withFlinkConfiguration` means nothing for a snapshot (no such field).
 */
import { CustomResourceBuilder, mergeDeep } from './custom-resource-builder.js';
import { FLINK_STATE_SNAPSHOT_KIND, type FlinkStateSnapshotV1beta1 } from './flink-state-snapshot.js';
import type { FlinkStateSnapshotSpec, JobReferenceKind, SnapshotSavepointSpec } from './flink-state-snapshot-spec.js';
import type { FlinkStateSnapshotStatus } from './flink-state-snapshot-status.js';

/** The FlinkDeployment the default spec takes a savepoint of (`flinkDeployment()`'s default name). */
export const DEFAULT_SNAPSHOT_TARGET_NAME = 'basic-example';

export function defaultStateSnapshotSpec(): FlinkStateSnapshotSpec {
  return {
    jobReference: { kind: 'FlinkDeployment', name: DEFAULT_SNAPSHOT_TARGET_NAME },
    savepoint: {},
  };
}

export class FlinkStateSnapshotBuilder extends CustomResourceBuilder<
  typeof FLINK_STATE_SNAPSHOT_KIND,
  FlinkStateSnapshotSpec,
  FlinkStateSnapshotStatus,
  FlinkStateSnapshotStatus
> {
  constructor(name: string) {
    super(name, FLINK_STATE_SNAPSHOT_KIND, defaultStateSnapshotSpec());
  }

  /** Sets spec.jobReference: the snapshot is of this FlinkDeployment or FlinkSessionJob. */
  of(kind: JobReferenceKind, name: string): this {
    this.spec = { ...this.spec, jobReference: { kind, name } };
    return this;
  }
  /** A savepoint (replacing a checkpoint); deep-merges `savepoint` over the current one. */
  asSavepoint(savepoint: SnapshotSavepointSpec = {}): this {
    const { checkpoint: _checkpoint, ...rest } = this.spec;
    this.spec = { ...rest, savepoint: mergeDeep(rest.savepoint ?? {}, savepoint) };
    return this;
  }
  /** A savepoint that exists already at `path` (alreadyExists: true): recorded, never triggered. */
  asExistingSavepoint(path: string): this {
    return this.asSavepoint({ path, alreadyExists: true });
  }
  /** A checkpoint (replacing a savepoint). */
  asCheckpoint(): this {
    const { savepoint: _savepoint, ...rest } = this.spec;
    this.spec = { ...rest, checkpoint: {} };
    return this;
  }
  withBackoffLimit(backoffLimit: number): this {
    this.spec = { ...this.spec, backoffLimit };
    return this;
  }
  /** Deep-merges `spec` over the current spec (arrays replace). */
  withSpec(spec: Partial<FlinkStateSnapshotSpec>): this {
    this.spec = mergeDeep(this.spec, spec);
    return this;
  }
  /** The status of the built object (the only version's). */
  override withStatus(status: FlinkStateSnapshotStatus): this {
    super.withStatus(status);
    return this.withLegacyStatus(status);
  }

  /** The v1beta1 object (the kind's only version). */
  build(): FlinkStateSnapshotV1beta1 {
    return this.buildV1beta1Object();
  }
}

export function flinkStateSnapshot(name = 'basic-savepoint'): FlinkStateSnapshotBuilder {
  return new FlinkStateSnapshotBuilder(name);
}
