/**
 * `FlinkStateSnapshot.spec`: the Apache Flink Kubernetes operator's, field for field: one
 * savepoint or checkpoint of the job a `jobReference` names (a FlinkDeployment or a
 * FlinkSessionJob in the same namespace), retried up to `backoffLimit` times.
 *
 * Source: apache/flink-kubernetes-operator `api/spec/FlinkStateSnapshotSpec.java`,
 * `api/spec/SavepointSpec.java`, `api/spec/CheckpointSpec.java`, `api/spec/JobReference.java`,
 * `api/spec/JobKind.java`, the CRD `helm/flink-kubernetes-operator/crds/flinkstatesnapshots.flink.apache.org-v1.yml`
 * and `docs/content/docs/custom-resource/snapshots.md` (commit 6e9caeb4, 1.16-SNAPSHOT).
 *
 * Guarantees
 * - Every field, type and enum of the Apache CRD's spec, and no other field (test/api/crd-generator.test.ts
 *   compares the field paths and types with the Apache CRD).
 * - The Apache operator's defaults are Java field initialisers, not CRD defaults (its CRD declares
 *   none, so the API server never fills them in); they are the constants below, and
 *   {@link savepointSpecWithDefaults} / {@link backoffLimitOf} apply them where a reader needs them.
 *   The schema declares no `default` either, so applying this CRD changes no stored object.
 * - Nothing is `required` in the schema (the Apache CRD requires nothing);
 *   flink-state-snapshot-validation.ts reports what is missing, with the fix.
 * Caveats
 * - `checkpoint` has no fields: its presence alone asks for a checkpoint. The API server prunes
 *   anything written inside it (or refuses it under `fieldValidation=Strict`, kubectl's default).
 */
import { Type, type Static } from '@sinclair/typebox';
import { FLINK_DEPLOYMENT_KIND } from './flink-deployment.js';
import { SAVEPOINT_FORMAT_TYPES, type SavepointFormatType } from './flink-deployment-status.js';
import { FLINK_SESSION_JOB_KIND } from './flink-session-job.js';
import { Int32, StringEnum } from './schema-builders.js';

/** The kinds a snapshot can be taken of (Apache `JobKind`, serialised as the kind names). */
export const JOB_REFERENCE_KINDS = [FLINK_DEPLOYMENT_KIND, FLINK_SESSION_JOB_KIND] as const;
export type JobReferenceKind = (typeof JOB_REFERENCE_KINDS)[number];

/** `backoffLimit` when unset: retry without limit (Apache `FlinkStateSnapshotSpec.backoffLimit = -1`). */
export const DEFAULT_SNAPSHOT_BACKOFF_LIMIT = -1;
/** The `backoffLimit` that means "no limit" (Apache `FlinkStateSnapshotController.updateErrorStatus` stops retrying only when `backoffLimit >= 0`). */
export const UNLIMITED_SNAPSHOT_BACKOFF_LIMIT = -1;
/** `savepoint.formatType` when unset (Apache `SavepointSpec.formatType = CANONICAL`). */
export const DEFAULT_SNAPSHOT_SAVEPOINT_FORMAT_TYPE: SavepointFormatType = 'CANONICAL';
/** `savepoint.disposeOnDelete` when unset on a user-written snapshot (Apache `SavepointSpec.disposeOnDelete = true`). */
export const DEFAULT_SNAPSHOT_DISPOSE_ON_DELETE = true;
/** `savepoint.alreadyExists` when unset (Apache `SavepointSpec.alreadyExists = false`). */
export const DEFAULT_SNAPSHOT_ALREADY_EXISTS = false;

export const JobReferenceSchema = Type.Object(
  {
    kind: Type.Optional(StringEnum(JOB_REFERENCE_KINDS, { description: 'Kind of the resource running the job: FlinkDeployment or FlinkSessionJob.' })),
    name: Type.Optional(Type.String({ description: 'Name of that FlinkDeployment or FlinkSessionJob, in the namespace of this snapshot.' })),
  },
  {
    description:
      'The FlinkDeployment or FlinkSessionJob whose job the snapshot is taken of. Required, except for a savepoint with alreadyExists: true (which only records a path).',
  },
);
export type JobReference = Static<typeof JobReferenceSchema>;

export const SnapshotSavepointSpecSchema = Type.Object(
  {
    path: Type.Optional(
      Type.String({
        description:
          "Directory to write the savepoint to (default: the job's savepoint directory); with alreadyExists: true, the location of the existing savepoint (required then).",
      }),
    ),
    formatType: Type.Optional(
      StringEnum(SAVEPOINT_FORMAT_TYPES, { description: 'Savepoint format: CANONICAL (default; portable across state backends) or NATIVE (faster).' }),
    ),
    disposeOnDelete: Type.Optional(
      Type.Boolean({ description: 'Delete the savepoint data when this resource is deleted (default true; needs the job to be running then).' }),
    ),
    alreadyExists: Type.Optional(
      Type.Boolean({
        description: 'true: the savepoint at path exists already; nothing is triggered, the snapshot is recorded as COMPLETED (default false).',
      }),
    ),
  },
  { description: 'Take a savepoint (exactly one of savepoint and checkpoint).' },
);
export type SnapshotSavepointSpec = Static<typeof SnapshotSavepointSpecSchema>;

export const SnapshotCheckpointSpecSchema = Type.Object(
  {},
  { description: 'Take a checkpoint (exactly one of savepoint and checkpoint); has no fields: write checkpoint: {}. Checkpoint data belongs to Flink.' },
);
export type SnapshotCheckpointSpec = Static<typeof SnapshotCheckpointSpecSchema>;

export const FlinkStateSnapshotSpecSchema = Type.Object(
  {
    jobReference: Type.Optional(JobReferenceSchema),
    savepoint: Type.Optional(SnapshotSavepointSpecSchema),
    checkpoint: Type.Optional(SnapshotCheckpointSpecSchema),
    backoffLimit: Type.Optional(
      Int32({ description: 'How many times a failed snapshot is retried before it is FAILED: -1 without limit (default), 0 never.' }),
    ),
  },
  { description: 'The snapshot to take (or, for an existing savepoint, to record) and of which job.' },
);
export type FlinkStateSnapshotSpec = Static<typeof FlinkStateSnapshotSpecSchema>;

/** The savepoint spec with the Apache operator's defaults filled in (what its Java object holds after reading the same YAML). */
export function savepointSpecWithDefaults(
  savepoint: SnapshotSavepointSpec,
): Required<Omit<SnapshotSavepointSpec, 'path'>> & Pick<SnapshotSavepointSpec, 'path'> {
  return {
    ...(savepoint.path !== undefined ? { path: savepoint.path } : {}),
    formatType: savepoint.formatType ?? DEFAULT_SNAPSHOT_SAVEPOINT_FORMAT_TYPE,
    disposeOnDelete: savepoint.disposeOnDelete ?? DEFAULT_SNAPSHOT_DISPOSE_ON_DELETE,
    alreadyExists: savepoint.alreadyExists ?? DEFAULT_SNAPSHOT_ALREADY_EXISTS,
  };
}

/** `spec.backoffLimit`, or its default. */
export function backoffLimitOf(spec: FlinkStateSnapshotSpec): number {
  return spec.backoffLimit ?? DEFAULT_SNAPSHOT_BACKOFF_LIMIT;
}
