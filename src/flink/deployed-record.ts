/**
 * The deployed record: what every rendered cluster says about itself, so that the operator can
 * tell from the world alone which spec and which job id a running cluster was deployed with (when
 * its state ConfigMap is lost, or to notice a cluster that is not the one the state says).
 *
 * | where | annotation | value |
 * |---|---|---|
 * | JobManager Deployment | `flinkdeployment.flink.apache.org/generation` | metadata.generation the rendering belongs to |
 * | JobManager Deployment | `flink-operator.io/spec-hash` | `specHash` of the deployed spec |
 * | JobManager Deployment, Flink ConfigMap | `flink-operator.io/job-id` | the pinned job id (`$internal.pipeline.job-id`) |
 * | Flink ConfigMap `flink-config-<name>` | `flink-operator.io/deployed-spec` | the deployed spec, canonical JSON (omitted above 128 KiB) |
 * | Flink ConfigMap, written when a suspend removes the JobManager | `flink-operator.io/last-savepoint` | the savepoint the resume restores from (the suspend's stop-with-savepoint, or the newest known) |
 *
 * The spec is the one the reconciler recorded as `lastReconciledSpec` (or `lastStableSpec` for a
 * rollback) when it deployed, with its rewrites (`job.state: running`, acknowledged nonces): the
 * spec the running cluster renders, not whatever the FlinkDeployment says now.
 *
 * Guarantees: `specHash` is stable across processes and versions (sorted keys, undefined members
 * dropped); `readDeployedRecord` never returns a spec whose hash differs from the JobManager's
 * spec-hash annotation (a hand-edited or truncated record is ignored, not trusted).
 * Caveats: the deployed spec lives on the Flink ConfigMap, which has no informer: reading it costs
 * one GET, done only when the state is rebuilt.
 */
import { createHash } from 'node:crypto';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { canonicalJson } from '../api/canonical-json.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { GENERATION_ANNOTATION, SPEC_HASH_ANNOTATION } from './flink-resource-naming.js';

/** Annotation on the JobManager Deployment and the Flink ConfigMap: the job id pinned in the configuration. */
export const JOB_ID_ANNOTATION = 'flink-operator.io/job-id';
/** Annotation on the Flink ConfigMap: the deployed spec as canonical JSON. */
export const DEPLOYED_SPEC_ANNOTATION = 'flink-operator.io/deployed-spec';
/** Annotation on the Flink ConfigMap of a suspended cluster: the savepoint its job was stopped with. */
export const LAST_SAVEPOINT_ANNOTATION = 'flink-operator.io/last-savepoint';
/** Above this, the deployed spec is not recorded (annotations are limited to 256 KiB in all). */
export const DEPLOYED_SPEC_MAX_BYTES = 128 * 1024;

/** sha256 of the canonical JSON of the spec, first 16 hex digits. */
export function specHash(spec: FlinkDeploymentSpec): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
}

/** The annotations the Flink ConfigMap carries for `spec` and `jobId`. */
export function configMapRecordAnnotations(spec: FlinkDeploymentSpec, jobId: string): Record<string, string> {
  const json = canonicalJson(spec);
  return { [JOB_ID_ANNOTATION]: jobId, ...(Buffer.byteLength(json) <= DEPLOYED_SPEC_MAX_BYTES ? { [DEPLOYED_SPEC_ANNOTATION]: json } : {}) };
}

export interface DeployedRecord {
  /** The pinned job id of the running cluster. */
  readonly jobId?: string;
  /** The deployed spec, when recorded and consistent with the JobManager's spec hash. */
  readonly spec?: FlinkDeploymentSpec;
  readonly generation?: number;
  readonly specHash?: string;
  /** A suspended cluster's stop savepoint (written by the operator, fenced, when it removed the JobManager). */
  readonly lastSavepoint?: string;
}

/** What the JobManager Deployment (and, when read, the Flink ConfigMap) say was deployed. */
export function readDeployedRecord(jobManager: V1Deployment | undefined, configMap?: V1ConfigMap): DeployedRecord {
  const jm = jobManager?.metadata?.annotations ?? {};
  const cm = configMap?.metadata?.annotations ?? {};
  const hash = jm[SPEC_HASH_ANNOTATION];
  const generationText = jm[GENERATION_ANNOTATION];
  const generation = generationText !== undefined && /^[0-9]+$/.test(generationText) ? Number(generationText) : undefined;
  const jobId = jm[JOB_ID_ANNOTATION] ?? cm[JOB_ID_ANNOTATION];
  let spec: FlinkDeploymentSpec | undefined;
  const specText = cm[DEPLOYED_SPEC_ANNOTATION];
  if (specText !== undefined && (jobId === undefined || cm[JOB_ID_ANNOTATION] === jobId)) {
    try {
      const parsed = JSON.parse(specText) as FlinkDeploymentSpec;
      if (hash === undefined || specHash(parsed) === hash) spec = parsed;
    } catch {
      // not trusted: a record that does not parse is as good as none
    }
  }
  return {
    ...(jobId !== undefined && /^[0-9a-f]{32}$/.test(jobId) ? { jobId } : {}),
    ...(spec !== undefined ? { spec } : {}),
    ...(generation !== undefined ? { generation } : {}),
    ...(hash !== undefined ? { specHash: hash } : {}),
    ...(cm[LAST_SAVEPOINT_ANNOTATION] ? { lastSavepoint: cm[LAST_SAVEPOINT_ANNOTATION] } : {}),
  };
}
