/**
 * Validation of a FlinkStateSnapshot beyond its schema: the rules of the Apache operator's
 * `DefaultValidator.validateStateSnapshot`, and ours where the Apache operator accepts a snapshot
 * that cannot do what its author meant, each error naming the field and the fix (as
 * flink-session-job-validation.ts does for FlinkSessionJobs).
 *
 *   validateFlinkStateSnapshot({ metadata, spec, status }, { targetFound })
 *   formatFieldErrors(errors)  // from spec-validation.ts
 *
 * Rules, in this order (test/api/flink-state-snapshot-validation.test.ts has one case per rule,
 * with the exact message):
 * - schema (ajv, through schema-validator.ts's validateAgainstSchema): types, the jobReference.kind
 *   and savepoint.formatType enums;
 * - exactly one of spec.savepoint and spec.checkpoint (Apache: "Exactly one of checkpoint or
 *   savepoint configurations has to be set.");
 * - ours: no `alreadyExists` in spec.checkpoint (a checkpoint has no fields: the API server would
 *   drop it and a new checkpoint would be taken instead of recording the existing one);
 * - ours: savepoint.alreadyExists true needs savepoint.path (the Apache operator would record a
 *   COMPLETED snapshot without a path, which nothing can restore from);
 * - spec.jobReference set (Apache: "Job reference must be supplied for this snapshot"), except
 *   for a savepoint with alreadyExists true, which the Apache validator accepts without one
 *   (it only records a path); when set, with a kind and a name (ours: a reference without them
 *   can never be found);
 * - the referenced resource exists, checked only when the caller looked it up (`targetFound`)
 *   and only while the snapshot is not yet processed (no status, or TRIGGER_PENDING), as the
 *   Apache validator ("Target for snapshot <namespace>/<name> was not found"); not for a
 *   savepoint with alreadyExists true;
 * - ours: spec.backoffLimit at least -1 (-1 = retry without limit, 0 = never retry, n = n
 *   retries; the Apache controller treats every negative value as "no limit",
 *   `FlinkStateSnapshotController.updateErrorStatus`, so only -1 is accepted for it).
 *
 * Source: apache/flink-kubernetes-operator `validation/DefaultValidator.java` (`validateStateSnapshot`),
 * `reconciler/snapshot/StateSnapshotReconciler.java`, `controller/FlinkStateSnapshotController.java`,
 * commit 6e9caeb4.
 *
 * Guarantees: pure (no I/O: the caller looks the target up); never throws on any input; errors
 * come in a stable order (schema, then the rules above in order); a field the schema already
 * rejected gets no second message.
 * Caveats: the spec is not compared with an earlier one (the Apache validator has no change rule
 * for snapshots; a snapshot is triggered once, from the spec it had then).
 */
import {
  FlinkStateSnapshotSpecSchema,
  JOB_REFERENCE_KINDS,
  UNLIMITED_SNAPSHOT_BACKOFF_LIMIT,
  type FlinkStateSnapshotSpec,
} from './flink-state-snapshot-spec.js';
import { FlinkStateSnapshotStatusSchema, snapshotStateOf, type FlinkStateSnapshotStatus } from './flink-state-snapshot-status.js';
import { validateAgainstSchema, type FieldError } from './schema-validator.js';

export interface StateSnapshotValidationContext {
  /**
   * Whether the FlinkDeployment / FlinkSessionJob `spec.jobReference` names exists in the
   * snapshot's namespace; undefined when the caller did not look (the rule is skipped).
   */
  readonly targetFound?: boolean;
}

const KINDS_TEXT = JOB_REFERENCE_KINDS.join(' or ');

/** Schema errors of a FlinkStateSnapshot spec; fields are named from `spec`, e.g. `spec.jobReference.kind`. */
export function validateStateSnapshotSpecSchema(spec: unknown): FieldError[] {
  return validateAgainstSchema(FlinkStateSnapshotSpecSchema, spec, 'spec', 'jobReference, savepoint or checkpoint, backoffLimit');
}

/** Schema errors of a FlinkStateSnapshot status (its only version, v1beta1); fields are named from `status`. */
export function validateStateSnapshotStatusSchema(status: unknown): FieldError[] {
  return validateAgainstSchema(FlinkStateSnapshotStatusSchema, status, 'status');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** A savepoint that only records an existing path: the Apache validator's early return. */
function isExistingSavepoint(spec: FlinkStateSnapshotSpec): boolean {
  return isObject(spec.savepoint) && spec.savepoint.alreadyExists === true;
}

function validateSnapshotType(spec: FlinkStateSnapshotSpec): FieldError[] {
  const savepoint = isSet(spec.savepoint);
  const checkpoint = isSet(spec.checkpoint);
  if (!savepoint && !checkpoint) {
    return [
      {
        field: 'spec',
        message: `needs exactly one of savepoint and checkpoint, got neither; add savepoint: {} to take a savepoint, or checkpoint: {} to take a checkpoint`,
      },
    ];
  }
  if (savepoint && checkpoint) {
    return [
      {
        field: 'spec',
        message: 'needs exactly one of savepoint and checkpoint, got both; remove one of them (one FlinkStateSnapshot is one savepoint or one checkpoint)',
      },
    ];
  }
  return [];
}

function validateCheckpoint(spec: FlinkStateSnapshotSpec): FieldError[] {
  const checkpoint: unknown = spec.checkpoint;
  if (!isObject(checkpoint) || !('alreadyExists' in checkpoint)) return [];
  return [
    {
      field: 'spec.checkpoint.alreadyExists',
      message:
        'is not a checkpoint field: an existing checkpoint cannot be recorded, a new one would be taken; to record an existing savepoint use savepoint: {alreadyExists: true, path: <its location>}, to start a job from a checkpoint set its job.initialSavepointPath',
    },
  ];
}

function validateExistingSavepointPath(spec: FlinkStateSnapshotSpec): FieldError[] {
  if (!isExistingSavepoint(spec)) return [];
  const path = isObject(spec.savepoint) ? spec.savepoint.path : undefined;
  if (typeof path === 'string' && path.trim() !== '') return [];
  return [
    {
      field: 'spec.savepoint.path',
      message:
        'is required with alreadyExists: true; set it to the location of the existing savepoint (e.g. s3://bucket/savepoints/savepoint-1a2b3c-4d5e6f7a8b9c), or set alreadyExists: false to take a new savepoint',
    },
  ];
}

function validateJobReference(spec: FlinkStateSnapshotSpec): FieldError[] {
  const reference: unknown = spec.jobReference;
  if (!isSet(reference)) {
    if (isExistingSavepoint(spec)) return [];
    return [
      {
        field: 'spec.jobReference',
        message: `is required; set kind (${KINDS_TEXT}) and name of the resource whose job the snapshot is of, in this namespace`,
      },
    ];
  }
  if (!isObject(reference)) return []; // reported by the schema
  const errors: FieldError[] = [];
  if (!isSet(reference['kind'])) errors.push({ field: 'spec.jobReference.kind', message: `is required; set it to ${KINDS_TEXT}` });
  const name = reference['name'];
  if (!isSet(name) || name === '') {
    errors.push({ field: 'spec.jobReference.name', message: `is required; set it to the name of the ${KINDS_TEXT} in this namespace` });
  }
  return errors;
}

function validateTarget(
  spec: FlinkStateSnapshotSpec,
  status: FlinkStateSnapshotStatus | undefined,
  namespace: string | undefined,
  context: StateSnapshotValidationContext,
): FieldError[] {
  if (context.targetFound !== false || isExistingSavepoint(spec)) return [];
  if (isObject(status) && snapshotStateOf(status) !== 'TRIGGER_PENDING') return [];
  const reference = isObject(spec.jobReference) ? spec.jobReference : {};
  if (typeof reference.kind !== 'string' || typeof reference.name !== 'string' || reference.name === '') return []; // reported above
  const where = namespace ? ` in namespace "${namespace}"` : '';
  return [
    {
      field: 'spec.jobReference',
      message: `names ${reference.kind} "${reference.name}", which does not exist${where}; create it, or point jobReference at an existing ${KINDS_TEXT}`,
    },
  ];
}

function validateBackoffLimit(spec: FlinkStateSnapshotSpec): FieldError[] {
  const limit = spec.backoffLimit;
  if (typeof limit !== 'number' || limit >= UNLIMITED_SNAPSHOT_BACKOFF_LIMIT) return [];
  return [
    {
      field: 'spec.backoffLimit',
      message: `must be ${UNLIMITED_SNAPSHOT_BACKOFF_LIMIT} or more, got ${limit}; use ${UNLIMITED_SNAPSHOT_BACKOFF_LIMIT} to retry without limit, 0 never to retry, or the number of retries`,
    },
  ];
}

/** All problems with a FlinkStateSnapshot; empty when it can be processed. */
export function validateFlinkStateSnapshot(
  snapshot: { metadata?: { name?: string; namespace?: string }; spec: FlinkStateSnapshotSpec; status?: FlinkStateSnapshotStatus },
  context: StateSnapshotValidationContext = {},
): FieldError[] {
  const spec = snapshot.spec;
  const schemaErrors = validateStateSnapshotSpecSchema(spec);
  if (!isObject(spec)) return schemaErrors;
  const rules = [
    ...validateSnapshotType(spec),
    ...validateCheckpoint(spec),
    ...validateExistingSavepointPath(spec),
    ...validateJobReference(spec),
    ...validateTarget(spec, snapshot.status, snapshot.metadata?.namespace, context),
    ...validateBackoffLimit(spec),
  ];
  const badFields = new Set(schemaErrors.map((e) => e.field));
  return [...schemaErrors, ...rules.filter((e) => !badFields.has(e.field))];
}
