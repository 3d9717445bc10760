/**
 * v1beta1 FlinkSessionJobs as the Apache Flink Kubernetes operator leaves them, one per moment a
 * session-job migration must handle: the YAML files in session-job-variants/ (the README there has
 * the table; each file's header comment says what moment it captures, which Apache source lines
 * wrote each field, and what a lossless migration keeps).
 *
 *   const v = loadSessionJobVariant('mid-upgrade-savepoint');
 *   v.object.status?.reconciliationStatus?.state;        // 'UPGRADING'
 *   for (const name of SESSION_JOB_VARIANTS) ...
 *   variantSessionCluster();                             // the FlinkDeployment they all run on
 *
 * Guarantees
 * - Every load reads and parses the file again: callers get a fresh object they may change.
 * - loadSessionJobVariant throws, naming the file, unless it holds one flink.apache.org/v1beta1
 *   FlinkSessionJob whose metadata.name is the variant's name.
 * - variantSessionCluster() is a fresh session FlinkDeployment (no spec.job) named
 *   DEFAULT_SESSION_CLUSTER_NAME in `default`, the cluster every variant's spec.deploymentName names
 *   (never-deployed assumes it does not exist yet).
 * Assumptions
 * - The files are what Apache operator {@link APACHE_OPERATOR_SOURCE} writes with FlinkStateSnapshot
 *   resources off (`kubernetes.operator.snapshot.resource.enabled: "false"`, set in the session
 *   cluster's configuration here), so pending and completed snapshots are in
 *   status.jobStatus.savepointInfo / checkpointInfo.
 * Caveats
 * - Written from the Apache sources (cited line by line in each file), not captured from a cluster.
 * - never-deployed has no status at all (the Apache operator writes none while the session cluster
 *   is missing), so `object.status` is optional.
 * - The statuses are typed as this project's v1beta1 session-job status; values the Apache operator
 *   writes but this model does not restrict (trigger/format types) are checked by the tests only.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { API_VERSION_V1BETA1, FLINK_DEPLOYMENT_FINALIZER, FLINK_GROUP, type FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1beta1 } from '../../src/api/flink-session-job.js';
import { DEFAULT_SESSION_CLUSTER_NAME } from '../../src/api/flink-session-job-builder.js';

/** The Apache operator release whose code the variants follow. */
export const APACHE_OPERATOR_SOURCE = {
  repository: 'apache/flink-kubernetes-operator',
  release: '1.13.0',
  tag: 'release-1.13.0',
  commit: 'b40c55391ca25fc402b018abb79babe920272e19',
} as const;

export const SESSION_JOB_VARIANT_DIR = fileURLToPath(new URL('./session-job-variants/', import.meta.url));

/** Every variant, in the order of the README table; `<name>.yaml` in {@link SESSION_JOB_VARIANT_DIR}. */
export const SESSION_JOB_VARIANTS = [
  'running-stable',
  'mid-upgrade-savepoint',
  'mid-upgrade-submitting',
  'suspended',
  'manual-savepoint-in-flight',
  'last-state-running',
  'failed-job',
  'never-deployed',
  'first-deploy-failed',
] as const;
export type SessionJobVariantName = (typeof SESSION_JOB_VARIANTS)[number];

/** One line per variant, for test titles (the file header has the whole story). */
export const SESSION_JOB_VARIANT_MOMENTS: Readonly<Record<SessionJobVariantName, string>> = {
  'running-stable': 'RUNNING and STABLE after a savepoint upgrade; history: UPGRADE + PERIODIC',
  'mid-upgrade-savepoint': 'UPGRADING between stop-with-savepoint and redeploy (no job id, upgradeSavepointPath set)',
  'mid-upgrade-submitting': 'UPGRADING while the new job is submitted (its job id recorded, job state still FINISHED)',
  suspended: 'suspended by the user: stopped with a savepoint, job FINISHED, lifecycle SUSPENDED',
  'manual-savepoint-in-flight': 'savepointTriggerNonce bumped, MANUAL savepoint pending (trigger fields set)',
  'last-state-running': 'last-state job RUNNING after a last-state upgrade (restored from a checkpoint), periodic checkpoints',
  'failed-job': 'Flink job FAILED, restart strategy exhausted; error JSON, upgradeSavepointPath = latest checkpoint',
  'never-deployed': 'created while the session cluster did not exist: no status at all',
  'first-deploy-failed': 'first submission failed (jar 404): error JSON, UPGRADING, only the attempt recorded',
};

export interface SessionJobVariant {
  readonly name: SessionJobVariantName;
  /** Absolute path of the YAML file. */
  readonly file: string;
  readonly object: FlinkSessionJobV1beta1;
}

const EXPECTED_API_VERSION = `${FLINK_GROUP}/${API_VERSION_V1BETA1}`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads and parses `<name>.yaml`; see the module comment for what it checks. */
export function loadSessionJobVariant(name: SessionJobVariantName): SessionJobVariant {
  const file = join(SESSION_JOB_VARIANT_DIR, `${name}.yaml`);
  const doc: unknown = parseYaml(readFileSync(file, 'utf8'));
  if (!isObject(doc)) throw new Error(`${file}: expected one YAML mapping (a FlinkSessionJob)`);
  if (doc['apiVersion'] !== EXPECTED_API_VERSION || doc['kind'] !== FLINK_SESSION_JOB_KIND) {
    throw new Error(
      `${file}: expected apiVersion ${EXPECTED_API_VERSION}, kind ${FLINK_SESSION_JOB_KIND}; got ${String(doc['apiVersion'])}, ${String(doc['kind'])}`,
    );
  }
  const metadata = doc['metadata'];
  if (!isObject(metadata) || metadata['name'] !== name) {
    throw new Error(`${file}: metadata.name must be ${JSON.stringify(name)} (the variant's name)`);
  }
  if (!isObject(doc['spec'])) throw new Error(`${file}: spec must be a mapping`);
  return { name, file, object: doc as unknown as FlinkSessionJobV1beta1 };
}

/** Every variant, freshly loaded, in {@link SESSION_JOB_VARIANTS} order. */
export function loadSessionJobVariants(): SessionJobVariant[] {
  return SESSION_JOB_VARIANTS.map(loadSessionJobVariant);
}

/**
 * The session cluster the variants run on: Flink 1.20, native mode, checkpoints and savepoints
 * under s3://flink/, Flink checkpointing every minute (the checkpoints last-state and failed-job
 * point at), and FlinkStateSnapshot resources off for its jobs.
 */
export function variantSessionCluster(): FlinkDeploymentV1beta1 {
  return flinkDeployment(DEFAULT_SESSION_CLUSTER_NAME)
    .withoutJob()
    .withSpec({
      image: 'flink:1.20',
      flinkVersion: 'v1_20',
      mode: 'native',
      flinkConfiguration: {
        'taskmanager.numberOfTaskSlots': '4',
        'execution.checkpointing.dir': 's3://flink/checkpoints',
        'execution.checkpointing.savepoint-dir': 's3://flink/savepoints',
        'execution.checkpointing.interval': '1min',
        'kubernetes.operator.snapshot.resource.enabled': 'false',
      },
    })
    .withGeneration(1)
    .withFinalizers(FLINK_DEPLOYMENT_FINALIZER)
    .buildV1beta1();
}
