/**
 * `FlinkDeployment.status` in its two layouts.
 *
 * - **v1 (split layout)**, what this operator writes: user-facing fields only, plus `stateRef`,
 *   which names the companion ConfigMap and the revision of internal state the status reflects.
 * - **v1beta1 (legacy layout)**, what the Apache operator writes: the same user-facing fields plus
 *   its operator-internal bookkeeping (`reconciliationStatus`, `jobStatus.upgradeSavepointPath`,
 *   trigger fields and history in `jobStatus.savepointInfo` / `checkpointInfo`).
 *
 * The v1beta1 *schema* is the union of both layouts: v1beta1 is the storage version (design/002
 * explains why), and a real API server prunes every write by the storage version's schema, so
 * every field either layout writes must be declared there.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Int64, LenientStringEnum, StringEnum, StringMap } from './schema-builders.js';

export const LIFECYCLE_STATES = [
  'CREATED',
  'SUSPENDED',
  'UPGRADING',
  'DEPLOYED',
  'STABLE',
  'ROLLING_BACK',
  'ROLLED_BACK',
  'FAILED',
  'DELETING',
  'DELETED',
] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

export const JOB_MANAGER_DEPLOYMENT_STATUSES = ['READY', 'DEPLOYED_NOT_READY', 'DEPLOYING', 'MISSING', 'ERROR'] as const;
export type JobManagerDeploymentStatus = (typeof JOB_MANAGER_DEPLOYMENT_STATUSES)[number];

/** Flink's job states, plus the operator's RECONCILING ("unknown or deploying"). */
export const FLINK_JOB_STATES = [
  'INITIALIZING',
  'CREATED',
  'RUNNING',
  'FAILING',
  'FAILED',
  'CANCELLING',
  'CANCELED',
  'FINISHED',
  'RESTARTING',
  'SUSPENDED',
  'RECONCILING',
] as const;
export type FlinkJobState = (typeof FLINK_JOB_STATES)[number];

export const SNAPSHOT_TRIGGER_TYPES = ['MANUAL', 'PERIODIC', 'UPGRADE', 'UNKNOWN'] as const;
export type SnapshotTriggerType = (typeof SNAPSHOT_TRIGGER_TYPES)[number];

export const SAVEPOINT_FORMAT_TYPES = ['CANONICAL', 'NATIVE', 'UNKNOWN'] as const;
export type SavepointFormatType = (typeof SAVEPOINT_FORMAT_TYPES)[number];

export const CHECKPOINT_TYPES = ['FULL', 'INCREMENTAL', 'UNKNOWN'] as const;

export const RECONCILIATION_STATES = ['DEPLOYED', 'UPGRADING', 'ROLLING_BACK', 'ROLLED_BACK'] as const;
export type ReconciliationState = (typeof RECONCILIATION_STATES)[number];

/** metav1.Condition. */
export const ConditionSchema = Type.Object({
  type: Type.String({ description: 'Condition type in PascalCase, e.g. Ready.' }),
  status: StringEnum(['True', 'False', 'Unknown'] as const, { description: 'True, False or Unknown.' }),
  observedGeneration: Type.Optional(Int64({ description: 'The metadata.generation the condition was set for.' })),
  lastTransitionTime: Type.String({ format: 'date-time', description: 'When status last changed.' }),
  reason: Type.String({ description: 'CamelCase reason for the condition.' }),
  message: Type.String({ description: 'Human-readable details.' }),
});
export type Condition = Static<typeof ConditionSchema>;

export const TaskManagerInfoSchema = Type.Object(
  {
    labelSelector: Type.Optional(Type.String({ description: 'Label selector of the TaskManager pods (scale subresource).' })),
    replicas: Type.Optional(Type.Integer({ description: 'Current TaskManager replicas (scale subresource).' })),
  },
  { description: 'TaskManager pods; backs the scale subresource.' },
);

export const LastSavepointSchema = Type.Object(
  {
    location: Type.String({ description: 'Where the savepoint was written.' }),
    timeStamp: Int64({ description: 'When it completed, epoch milliseconds.' }),
    triggerType: Type.Optional(
      StringEnum(SNAPSHOT_TRIGGER_TYPES, { description: 'What triggered it: MANUAL (savepointTriggerNonce), PERIODIC, UPGRADE or UNKNOWN.' }),
    ),
    formatType: Type.Optional(StringEnum(SAVEPOINT_FORMAT_TYPES, { description: 'Savepoint format: CANONICAL or NATIVE.' })),
    triggerNonce: Type.Optional(Int64({ description: 'For a MANUAL savepoint: the job.savepointTriggerNonce it answered.' })),
  },
  { description: 'The newest completed savepoint of the job.' },
);
export type LastSavepoint = Static<typeof LastSavepointSchema>;

/** The v1 form of Apache's status Checkpoint (api/status/Checkpoint.java; v1beta1 `jobStatus.checkpointInfo.lastCheckpoint`). */
export const LastCheckpointSchema = Type.Object(
  {
    timeStamp: Int64({ description: 'When the operator saw it complete, epoch milliseconds.' }),
    triggerType: StringEnum(SNAPSHOT_TRIGGER_TYPES, {
      description: 'What triggered it: MANUAL (checkpointTriggerNonce), PERIODIC (kubernetes.operator.periodic.checkpoint.interval) or UNKNOWN.',
    }),
    formatType: Type.Optional(StringEnum(CHECKPOINT_TYPES, { description: 'Checkpoint format: FULL or INCREMENTAL.' })),
    triggerNonce: Type.Optional(Int64({ description: 'For a MANUAL checkpoint: the job.checkpointTriggerNonce it answered.' })),
  },
  { description: 'The newest checkpoint the operator took of the job (checkpoints Flink takes on its own are not shown).' },
);
export type LastCheckpoint = Static<typeof LastCheckpointSchema>;

const userJobStatusFields = {
  jobName: Type.Optional(Type.String({ description: 'Name of the Flink job.' })),
  jobId: Type.Optional(Type.String({ description: 'Flink job id of the current job.' })),
  state: Type.Optional(StringEnum(FLINK_JOB_STATES, { description: 'Flink job state; RECONCILING while unknown or deploying.' })),
  startTime: Type.Optional(Type.String({ description: 'Job start time, epoch milliseconds.' })),
  updateTime: Type.Optional(Type.String({ description: 'Last job status update, epoch milliseconds.' })),
};

export const StateRefSchema = Type.Object(
  {
    configMapName: Type.String({ description: 'The companion ConfigMap holding the operator-internal state of this deployment.' }),
    revision: Int64({ description: 'The revision of internal state this status reflects; it lags the ConfigMap while an update is in flight.' }),
  },
  { description: 'Where the operator-internal state lives (kubectl get configmap <configMapName> -o yaml).' },
);
export type StateRef = Static<typeof StateRefSchema>;

const userStatusFields = {
  observedGeneration: Type.Optional(Int64({ description: 'The spec generation the operator last reconciled.' })),
  lifecycleState: Type.Optional(StringEnum(LIFECYCLE_STATES, { description: 'Lifecycle state of the deployment.' })),
  jobManagerDeploymentStatus: Type.Optional(StringEnum(JOB_MANAGER_DEPLOYMENT_STATUSES, { description: 'Health of the JobManager deployment.' })),
  error: Type.Optional(Type.String({ description: 'The last error, with what to do about it.' })),
  clusterInfo: Type.Optional(StringMap({ description: 'Flink cluster information: flink-version, flink-revision, total-cpu, total-memory, state-size.' })),
  taskManager: Type.Optional(TaskManagerInfoSchema),
  conditions: Type.Optional(
    Type.Array(ConditionSchema, {
      description: 'Observations of the deployment (Running, ...); one per type.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
  ),
};

export const JobStatusV1Schema = Type.Object(
  { ...userJobStatusFields, lastSavepoint: Type.Optional(LastSavepointSchema), lastCheckpoint: Type.Optional(LastCheckpointSchema) },
  { description: 'Status of the Flink job.' },
);
export type JobStatusV1 = Static<typeof JobStatusV1Schema>;

export const FlinkDeploymentStatusV1Schema = Type.Object(
  { ...userStatusFields, jobStatus: Type.Optional(JobStatusV1Schema), stateRef: Type.Optional(StateRefSchema) },
  { description: 'Observed state of the deployment, for users. Operator-internal state lives in the ConfigMap named by stateRef.' },
);
export type FlinkDeploymentStatusV1 = Static<typeof FlinkDeploymentStatusV1Schema>;

// ---- v1beta1: the Apache operator's layout ----
// Trigger and format types here are lenient (any string, typed as the known union): these fields
// were written by some Apache operator version, and one unexpected value must not make every status
// write of an unmigrated resource fail validation. legacy-status-codec.ts normalises unknown values.

export const LegacySavepointSchema = Type.Object(
  {
    timeStamp: Type.Optional(Int64({ description: 'Completion time, epoch milliseconds.' })),
    location: Type.Optional(Type.String({ description: 'Where the savepoint was written.' })),
    triggerType: Type.Optional(LenientStringEnum(SNAPSHOT_TRIGGER_TYPES)),
    formatType: Type.Optional(LenientStringEnum(SAVEPOINT_FORMAT_TYPES)),
    triggerNonce: Type.Optional(Int64({ description: 'The savepointTriggerNonce a manual savepoint answered.' })),
  },
  { description: 'A completed savepoint (legacy layout).' },
);
export type LegacySavepoint = Static<typeof LegacySavepointSchema>;

export const LegacySavepointInfoSchema = Type.Object(
  {
    lastSavepoint: Type.Optional(LegacySavepointSchema),
    triggerId: Type.Optional(Type.String({ description: 'Flink trigger id of the pending savepoint.' })),
    triggerTimestamp: Type.Optional(Int64({ description: 'When the pending savepoint was triggered, epoch milliseconds.' })),
    triggerType: Type.Optional(LenientStringEnum(SNAPSHOT_TRIGGER_TYPES)),
    formatType: Type.Optional(LenientStringEnum(SAVEPOINT_FORMAT_TYPES)),
    savepointHistory: Type.Optional(Type.Array(LegacySavepointSchema, { description: 'Completed savepoints, oldest first.' })),
    lastPeriodicSavepointTimestamp: Type.Optional(Int64({ description: 'When the last periodic savepoint was triggered, epoch milliseconds.' })),
  },
  { description: 'Legacy (Apache operator) savepoint bookkeeping; moved to the state ConfigMap by migration.' },
);
export type LegacySavepointInfo = Static<typeof LegacySavepointInfoSchema>;

/** The Apache operator's CRD declares formatType (FULL/INCREMENTAL) and triggerType here; older code wrote checkpointType. */
export const LegacyCheckpointSchema = Type.Object(
  {
    timeStamp: Type.Optional(Int64({ description: 'Completion time, epoch milliseconds.' })),
    checkpointType: Type.Optional(LenientStringEnum(CHECKPOINT_TYPES)),
    formatType: Type.Optional(LenientStringEnum(CHECKPOINT_TYPES)),
    triggerType: Type.Optional(LenientStringEnum(SNAPSHOT_TRIGGER_TYPES)),
    triggerNonce: Type.Optional(Int64({ description: 'The checkpointTriggerNonce a manual checkpoint answered.' })),
  },
  { description: 'The last completed checkpoint (legacy layout).' },
);
export type LegacyCheckpoint = Static<typeof LegacyCheckpointSchema>;

export const LegacyCheckpointInfoSchema = Type.Object(
  {
    lastCheckpoint: Type.Optional(LegacyCheckpointSchema),
    triggerId: Type.Optional(Type.String({ description: 'Flink trigger id of the pending checkpoint.' })),
    triggerTimestamp: Type.Optional(Int64({ description: 'When the pending checkpoint was triggered, epoch milliseconds.' })),
    triggerType: Type.Optional(LenientStringEnum(SNAPSHOT_TRIGGER_TYPES)),
    formatType: Type.Optional(LenientStringEnum(CHECKPOINT_TYPES)),
    lastPeriodicCheckpointTimestamp: Type.Optional(Int64({ description: 'When the last periodic checkpoint was triggered, epoch milliseconds.' })),
  },
  { description: 'Legacy (Apache operator) checkpoint bookkeeping; moved to the state ConfigMap by migration.' },
);
export type LegacyCheckpointInfo = Static<typeof LegacyCheckpointInfoSchema>;

export const LegacyReconciliationStatusSchema = Type.Object(
  {
    reconciliationTimestamp: Type.Optional(Int64({ description: 'When the last reconcile acted, epoch milliseconds.' })),
    lastReconciledSpec: Type.Optional(Type.String({ description: 'JSON of the last reconciled spec (Apache operator format).' })),
    lastStableSpec: Type.Optional(Type.String({ description: 'JSON of the last stable spec (Apache operator format).' })),
    state: Type.Optional(StringEnum(RECONCILIATION_STATES, { description: 'Reconciliation state: DEPLOYED, UPGRADING, ROLLING_BACK or ROLLED_BACK.' })),
  },
  { description: 'Legacy (Apache operator) reconciliation bookkeeping; moved to the state ConfigMap by migration.' },
);
export type LegacyReconciliationStatus = Static<typeof LegacyReconciliationStatusSchema>;

export const JobStatusV1beta1Schema = Type.Object(
  {
    ...userJobStatusFields,
    lastSavepoint: Type.Optional(LastSavepointSchema),
    lastCheckpoint: Type.Optional(LastCheckpointSchema),
    upgradeSavepointPath: Type.Optional(Type.String({ description: 'Legacy: savepoint the next deployment restores from.' })),
    savepointInfo: Type.Optional(LegacySavepointInfoSchema),
    checkpointInfo: Type.Optional(LegacyCheckpointInfoSchema),
  },
  { description: 'Status of the Flink job (legacy fields included).' },
);
export type JobStatusV1beta1 = Static<typeof JobStatusV1beta1Schema>;

export const FlinkDeploymentStatusV1beta1Schema = Type.Object(
  {
    ...userStatusFields,
    jobStatus: Type.Optional(JobStatusV1beta1Schema),
    reconciliationStatus: Type.Optional(LegacyReconciliationStatusSchema),
    stateRef: Type.Optional(StateRefSchema),
  },
  { description: 'Observed state; under v1beta1 it may still carry the Apache operator internal fields until `flink-operator migrate` moves them.' },
);
export type FlinkDeploymentStatusV1beta1 = Static<typeof FlinkDeploymentStatusV1beta1Schema>;
