/**
 * The FlinkSessionJob custom resource: names, versions, the object types under each version, and
 * the name of its companion state ConfigMap.
 *
 * Names as the Apache operator's CRD (`api/FlinkSessionJob.java`: group flink.apache.org,
 * shortName `sessionjob`); versions as FlinkDeployment's (v1 read and written by this operator,
 * v1beta1 served for the Apache layout; flink-deployment.ts).
 *
 * Guarantees (design/010-flink-session-job.md, "The state ConfigMap name")
 * - {@link SESSION_JOB_STATE_CONFIGMAP_SUFFIX} contains a '.', which no FlinkDeployment name and
 *   no name derived from one can contain (FlinkDeployment names are DNS-1035 labels), so a session
 *   job's state ConfigMap never collides with a ConfigMap of any FlinkDeployment, whatever the
 *   two names; two session jobs' names never collide either (a fixed suffix is injective).
 * - A name of at most {@link MAX_SESSION_JOB_NAME_LENGTH} characters keeps the ConfigMap name
 *   within {@link MAX_DERIVED_NAME_LENGTH} (the limit every derived name keeps, usable as a label
 *   value); flink-session-job-validation.ts enforces it.
 * Caveats
 * - The name function itself is `sessionJobStateConfigMapName` in src/state/state-store.ts, next
 *   to the FlinkDeployment one; this module holds the one definition of the suffix both use.
 */
import { FLINK_GROUP, MAX_DERIVED_NAME_LENGTH, type FlinkResource } from './flink-deployment.js';
import type { FlinkSessionJobSpec } from './flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1, FlinkSessionJobStatusV1beta1 } from './flink-session-job-status.js';

export const FLINK_SESSION_JOB_KIND = 'FlinkSessionJob';
export const FLINK_SESSION_JOB_PLURAL = 'flinksessionjobs';
export const FLINK_SESSION_JOB_SINGULAR = 'flinksessionjob';
/** As the Apache operator's CRD (`@ShortNames({"sessionjob"})`). */
export const FLINK_SESSION_JOB_SHORT_NAMES = ['sessionjob'] as const;
export const FLINK_SESSION_JOB_CRD_NAME = `${FLINK_SESSION_JOB_PLURAL}.${FLINK_GROUP}`;
/** The finalizer the Apache operator puts on every FlinkSessionJob (`<plural>.<group>/finalizer`, JOSDK's default), kept so a migrated resource keeps it. */
export const FLINK_SESSION_JOB_FINALIZER = `${FLINK_SESSION_JOB_CRD_NAME}/finalizer`;

/** Appended to a session job's name to name its companion state ConfigMap: `orders` → `orders.sessionjob-state`. */
export const SESSION_JOB_STATE_CONFIGMAP_SUFFIX = '.sessionjob-state';
/** The longest FlinkSessionJob name whose state ConfigMap name fits {@link MAX_DERIVED_NAME_LENGTH} (46). */
export const MAX_SESSION_JOB_NAME_LENGTH = MAX_DERIVED_NAME_LENGTH - SESSION_JOB_STATE_CONFIGMAP_SUFFIX.length;

export type FlinkSessionJobV1 = FlinkResource<'v1', typeof FLINK_SESSION_JOB_KIND, FlinkSessionJobSpec, FlinkSessionJobStatusV1>;
export type FlinkSessionJobV1beta1 = FlinkResource<'v1beta1', typeof FLINK_SESSION_JOB_KIND, FlinkSessionJobSpec, FlinkSessionJobStatusV1beta1>;

/** The operator's working type: the v1 object. */
export type FlinkSessionJob = FlinkSessionJobV1;
