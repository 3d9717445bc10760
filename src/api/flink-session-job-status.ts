/**
 * `FlinkSessionJob.status` in its two layouts, as flink-deployment-status.ts defines them for
 * FlinkDeployments.
 *
 * - **v1 (split layout)**, what this operator writes: user-facing fields only (lifecycle, job
 *   status, error, observedGeneration, conditions) plus `stateRef`, naming the session job's
 *   companion ConfigMap (`<name>.sessionjob-state`, design/010) and the revision it reflects.
 * - **v1beta1 (legacy layout)**, what the Apache operator writes (`FlinkSessionJobStatus` =
 *   `CommonStatus` + `reconciliationStatus`): the same user-facing fields plus its internal
 *   bookkeeping (`reconciliationStatus`, `jobStatus.upgradeSavepointPath`, `jobStatus.savepointInfo`,
 *   `jobStatus.checkpointInfo`), so a migration can read them.
 *
 * Guarantees
 * - The v1beta1 schema is the union of both layouts (v1beta1 is the storage version, and a real
 *   API server prunes every write by the storage version's schema): it declares every status
 *   field the Apache session-job CRD declares (test/api/flink-session-job-crd.test.ts checks each).
 * - Every sub-schema is the FlinkDeployment one where the Apache operator uses the same class
 *   (JobStatus, SavepointInfo, CheckpointInfo, ReconciliationStatus); a session job simply has no
 *   JobManager, TaskManager or clusterInfo of its own (those belong to its session cluster).
 * Caveats
 * - `conditions` is ours (the Apache session-job status has none); it is declared in both layouts.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  ConditionSchema,
  JobStatusV1beta1Schema,
  JobStatusV1Schema,
  LegacyReconciliationStatusSchema,
  LIFECYCLE_STATES,
  StateRefSchema,
} from './flink-deployment-status.js';
import { Int64, StringEnum } from './schema-builders.js';

/** stateRef with a session job's wording (the same fields and type as the FlinkDeployment one). */
export const SessionJobStateRefSchema = Type.Object(
  {
    configMapName: Type.String({ description: 'The companion ConfigMap holding the operator-internal state of this session job.' }),
    revision: StateRefSchema.properties.revision,
  },
  { description: StateRefSchema.description },
);

const userStatusFields = {
  observedGeneration: Type.Optional(Int64({ description: 'The spec generation the operator last reconciled.' })),
  lifecycleState: Type.Optional(StringEnum(LIFECYCLE_STATES, { description: 'Lifecycle state of the session job.' })),
  error: Type.Optional(Type.String({ description: 'The last error, with what to do about it.' })),
  conditions: Type.Optional(
    Type.Array(ConditionSchema, {
      description: 'Observations of the session job (Ready, ...); one per type.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
  ),
};

export const FlinkSessionJobStatusV1Schema = Type.Object(
  { ...userStatusFields, jobStatus: Type.Optional(JobStatusV1Schema), stateRef: Type.Optional(SessionJobStateRefSchema) },
  { description: 'Observed state of the session job, for users. Operator-internal state lives in the ConfigMap named by stateRef.' },
);
export type FlinkSessionJobStatusV1 = Static<typeof FlinkSessionJobStatusV1Schema>;

export const FlinkSessionJobStatusV1beta1Schema = Type.Object(
  {
    ...userStatusFields,
    jobStatus: Type.Optional(JobStatusV1beta1Schema),
    reconciliationStatus: Type.Optional(LegacyReconciliationStatusSchema),
    stateRef: Type.Optional(SessionJobStateRefSchema),
  },
  {
    description: 'Observed state; under v1beta1 it may still carry the Apache operator internal fields until `flink-operator migrate` moves them.',
  },
);
export type FlinkSessionJobStatusV1beta1 = Static<typeof FlinkSessionJobStatusV1beta1Schema>;
