/**
 * Validation of a FlinkSessionJob beyond its schema: the rules the Apache operator's
 * `DefaultValidator.validateSessionJob` applies, and ours that keep the state ConfigMap name in
 * bounds, each error naming the field and the fix (as spec-validation.ts does for FlinkDeployments).
 *
 *   validateFlinkSessionJob({ metadata, spec }, { sessionCluster, previous, allowedJarSchemes })
 *   formatFieldErrors(errors)  // from spec-validation.ts
 *
 * Rules (test/api/invalid-session-jobs/ has one document per rule, with the exact message):
 * - metadata.name: a DNS-1123 subdomain (what Kubernetes requires of any custom resource name) of
 *   at most {@link MAX_SESSION_JOB_NAME_LENGTH} characters, so `<name>.sessionjob-state` fits 63;
 * - schema (ajv, schema-validator.ts);
 * - spec.deploymentName: set, and a possible FlinkDeployment name (DNS-1035, at most
 *   MAX_DEPLOYMENT_NAME_LENGTH); unchanged against the last reconciled spec;
 * - spec.job: set ("The job spec should not be empty"); parallelism >= 1 when set;
 * - spec.job.jarURI: an absolute URI whose scheme the operator allows (`allowedJarSchemes`,
 *   default https only, as the Apache operator since 1.15: `kubernetes.operator.user.artifacts.
 *   allowed-schemes`); never `local://` (the operator fetches the jar, it is not in its image);
 *   http(s) with a host;
 * - with the session cluster known (`sessionCluster`): it is a session cluster (no spec.job);
 *   job.parallelism or parallelism.default set; upgradeMode savepoint / last-state need a
 *   checkpoint directory, savepoint (and manual or periodic savepoints) a savepoint directory,
 *   all read from the effective configuration (the cluster's flinkConfiguration overlaid by the
 *   job's, as `FlinkConfigManager.getSessionJobConfig`); last-state needs no high availability
 *   (Apache operator >= 1.10, FLINK-35414: a session job's last-state suspend is a cancel, and the
 *   restore uses the latest checkpoint); a cluster older than Flink 1.17 takes no per-job
 *   configuration on submission, so the job's own Flink keys are refused there;
 * - changes: savepointRedeployNonce needs initialSavepointPath; no nonce change together with or
 *   during a suspend (validateJobChange, shared with FlinkDeployments).
 *
 * Guarantees: pure (no I/O: the restricted-host check of http(s) jarURIs the Apache operator makes
 * by resolving the host belongs to the fetch, not here); never throws on any input; errors come in
 * a stable order (name, schema, then the rules above in order); a field the schema already
 * rejected gets no second message.
 * Caveats: without `sessionCluster` the configuration rules are skipped (as the Apache operator
 * skips them while the session cluster does not exist); the reconciler validates again with it.
 */
import { REMOTE_JAR_SCHEMES, DNS_1035_LABEL, MAX_DEPLOYMENT_NAME_LENGTH, validateCheckpointTriggers, validateJobChange } from './spec-validation.js';
import { FLINK_VERSIONS, type FlinkDeploymentSpec, type FlinkVersion } from './flink-deployment-spec.js';
import { MAX_DERIVED_NAME_LENGTH } from './flink-deployment.js';
import { checkpointDirectory, flattenFlinkConfiguration, savepointDirectory } from './flink-configuration.js';
import { MAX_SESSION_JOB_NAME_LENGTH, SESSION_JOB_STATE_CONFIGMAP_SUFFIX } from './flink-session-job.js';
import type { FlinkSessionJobSpec } from './flink-session-job-spec.js';
import { validateSessionJobSpecSchema, type FieldError } from './schema-validator.js';

/** jarURI schemes the operator allows when its configuration says nothing: https only (the Apache operator's default since 1.15). */
export const DEFAULT_SESSION_JOB_JAR_SCHEMES: readonly string[] = ['https'];
/** Every scheme a session job's jar can be fetched from: http(s), and the Flink filesystems (the Apache ArtifactManager). */
export const SESSION_JOB_JAR_SCHEMES: readonly string[] = REMOTE_JAR_SCHEMES;
/** The oldest Flink whose jar-run request takes the job's own configuration (JarRunRequestBody.flinkConfiguration). */
const OLDEST_PER_JOB_CONFIGURATION_VERSION: FlinkVersion = 'v1_17';
/** Keys the operator reads itself; they are never sent to Flink, so any Flink version takes them. */
const OPERATOR_KEY_PREFIX = 'kubernetes.operator.';

const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DIRECTORY_HINT = "in the session cluster's or this job's flinkConfiguration";

export interface SessionJobValidationContext {
  /** The FlinkDeployment `spec.deploymentName` names, when it exists: enables the rules on the effective configuration. */
  readonly sessionCluster?: { readonly metadata: { readonly name?: string }; readonly spec: FlinkDeploymentSpec };
  /** The last reconciled spec (from the internal state), for the change rules. */
  readonly previous?: { readonly spec: FlinkSessionJobSpec };
  /** jarURI schemes the operator configuration allows (lower case); default {@link DEFAULT_SESSION_JOB_JAR_SCHEMES}. */
  readonly allowedJarSchemes?: readonly string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateName(name: string | undefined): FieldError[] {
  if (!name) return [{ field: 'metadata.name', message: 'is required; give the FlinkSessionJob a name' }];
  if (!DNS_1123_SUBDOMAIN.test(name)) {
    return [
      {
        field: 'metadata.name',
        message: `must consist of lower-case letters, digits, '-' and '.', and start and end with a letter or digit, got "${name}"; rename it`,
      },
    ];
  }
  if (name.length > MAX_SESSION_JOB_NAME_LENGTH) {
    const configMap = `${name}${SESSION_JOB_STATE_CONFIGMAP_SUFFIX}`;
    return [
      {
        field: 'metadata.name',
        message: `is ${name.length} characters; at most ${MAX_SESSION_JOB_NAME_LENGTH} fit, because its state ConfigMap name "${configMap}" (${configMap.length}) must fit ${MAX_DERIVED_NAME_LENGTH}; use a shorter name`,
      },
    ];
  }
  return [];
}

function validateDeploymentName(spec: FlinkSessionJobSpec, previous: FlinkSessionJobSpec | undefined): FieldError[] {
  const name = spec.deploymentName;
  const field = 'spec.deploymentName';
  if (name === undefined || name === '') {
    return [{ field, message: "is required; set it to the name of the session cluster's FlinkDeployment (one without spec.job) in this namespace" }];
  }
  if (typeof name !== 'string') return []; // reported by the schema
  if (!DNS_1035_LABEL.test(name) || name.length > MAX_DEPLOYMENT_NAME_LENGTH) {
    return [
      {
        field,
        message: `must be a FlinkDeployment name (a lower-case letter first, then lower-case letters, digits and '-', not ending with '-', at most ${MAX_DEPLOYMENT_NAME_LENGTH} characters), got "${name}"; set it to the name of the session cluster's FlinkDeployment`,
      },
    ];
  }
  const before = previous?.deploymentName;
  if (typeof before === 'string' && before !== '' && before !== name) {
    return [
      {
        field,
        message: `cannot change from "${before}" to "${name}"; set it back to "${before}", or delete this FlinkSessionJob and create a new one for the other session cluster`,
      },
    ];
  }
  return [];
}

function validateJob(spec: FlinkSessionJobSpec): FieldError[] {
  if (spec.job === undefined) {
    return [
      {
        field: 'spec.job',
        message: 'is required; set job.jarURI (or job.entryClass of a class on the session cluster classpath) and job.parallelism',
      },
    ];
  }
  const p = isObject(spec.job) ? spec.job.parallelism : undefined;
  if (typeof p === 'number' && p < 1) return [{ field: 'spec.job.parallelism', message: `must be at least 1, got ${p}; set it to 1 or more` }];
  return [];
}

function validateJarUri(spec: FlinkSessionJobSpec, allowed: readonly string[]): FieldError[] {
  const uri = isObject(spec.job) ? spec.job.jarURI : undefined;
  if (typeof uri !== 'string') return [];
  const field = 'spec.job.jarURI';
  const allowedText = allowed.join(', ');
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)(.*)$/.exec(uri);
  if (!match) {
    const hint = uri.startsWith('/')
      ? '; a path in the session cluster image cannot be fetched: put the jar in /opt/flink/lib of the image, omit jarURI and set entryClass'
      : '; write e.g. https://repo.example.com/jobs/job.jar';
    return [{ field, message: `must be an absolute URI with a scheme, got "${uri}"${hint}` }];
  }
  const scheme = match[1].toLowerCase();
  if (scheme === 'local') {
    return [
      {
        field,
        message: `local:// names a file inside a Flink image, but a session job's jar is fetched by the operator and uploaded to the session cluster, got "${uri}"; use a URI the operator can fetch (${allowedText}), or for a jar already in the session cluster image (/opt/flink/lib) omit jarURI and set entryClass`,
      },
    ];
  }
  if (!SESSION_JOB_JAR_SCHEMES.includes(scheme)) {
    return [{ field, message: `scheme "${scheme}" is not supported, got "${uri}"; use one the operator allows: ${allowedText}` }];
  }
  if (!allowed.includes(scheme)) {
    return [
      {
        field,
        message: `scheme "${scheme}" is not allowed by the operator configuration (allowed: ${allowedText}), got "${uri}"; use one of those, or ask the operator's administrator to allow ${scheme}`,
      },
    ];
  }
  if ((scheme === 'http' || scheme === 'https') && match[2] === '') {
    return [{ field, message: `needs a host, got "${uri}"; write ${scheme}://<host>/<path to the jar>` }];
  }
  return [];
}

function versionAtLeast(version: FlinkVersion | undefined, oldest: FlinkVersion): boolean {
  return version === undefined || !FLINK_VERSIONS.includes(version) || FLINK_VERSIONS.indexOf(version) >= FLINK_VERSIONS.indexOf(oldest);
}

function changed(now: number | undefined, before: number | undefined): boolean {
  return now !== undefined && now !== null && now !== before;
}

/** The rules that need the session cluster: what it is, and the effective configuration. */
function validateAgainstCluster(
  spec: FlinkSessionJobSpec,
  cluster: NonNullable<SessionJobValidationContext['sessionCluster']>,
  previous: FlinkSessionJobSpec | undefined,
): FieldError[] {
  const clusterSpec = isObject(cluster.spec) ? cluster.spec : {};
  if (clusterSpec.job !== undefined) {
    return [
      {
        field: 'spec.deploymentName',
        message: `names "${cluster.metadata.name ?? spec.deploymentName}", an application cluster (its spec.job is set); a session job runs only on a session cluster: point deploymentName at a FlinkDeployment without spec.job`,
      },
    ];
  }
  const own = isObject(spec.flinkConfiguration) ? flattenFlinkConfiguration(spec.flinkConfiguration) : {};
  const clusterConfig = isObject(clusterSpec.flinkConfiguration) ? flattenFlinkConfiguration(clusterSpec.flinkConfiguration) : {};
  const flat = { ...clusterConfig, ...own };
  const errors: FieldError[] = [];
  const job = isObject(spec.job) ? spec.job : undefined;
  if (job && job.parallelism === undefined && !(Number(flat['parallelism.default']) >= 1)) {
    errors.push({
      field: 'spec.job.parallelism',
      message: "is required; set it to 1 or more (or set parallelism.default in the session cluster's or this job's flinkConfiguration)",
    });
  }
  const mode = job?.upgradeMode;
  if ((mode === 'last-state' || mode === 'savepoint') && !checkpointDirectory(flat)) {
    errors.push({
      field: 'spec.job.upgradeMode',
      message: `${mode} needs a checkpoint directory; set execution.checkpointing.dir (or state.checkpoints.dir) ${DIRECTORY_HINT}, or use upgradeMode stateless`,
    });
  }
  if (!savepointDirectory(flat)) {
    if (mode === 'savepoint') {
      errors.push({
        field: 'spec.job.upgradeMode',
        message: `savepoint needs a savepoint directory; set execution.checkpointing.savepoint-dir (or state.savepoints.dir) ${DIRECTORY_HINT}, or use upgradeMode stateless`,
      });
    }
    // A nonce present at the first deployment is recorded, not acted on (as for FlinkDeployments).
    if (previous && changed(job?.savepointTriggerNonce, isObject(previous.job) ? previous.job.savepointTriggerNonce : undefined)) {
      errors.push({
        field: 'spec.job.savepointTriggerNonce',
        message: `asks for a manual savepoint, but no savepoint directory is configured; set execution.checkpointing.savepoint-dir (or state.savepoints.dir) ${DIRECTORY_HINT}`,
      });
    }
    const periodic = flat['kubernetes.operator.periodic.savepoint.interval'];
    if (periodic !== undefined && periodic.trim() !== '' && periodic.trim() !== '0') {
      errors.push({
        field: 'spec.flinkConfiguration["kubernetes.operator.periodic.savepoint.interval"]',
        message: `periodic savepoints need a savepoint directory; set execution.checkpointing.savepoint-dir (or state.savepoints.dir) ${DIRECTORY_HINT}, or remove the interval`,
      });
    }
  }
  const version = clusterSpec.flinkVersion;
  // Checkpoints on request: the FlinkDeployment's rules, judged by the Flink the session cluster runs.
  errors.push(...validateCheckpointTriggers({ job, flinkVersion: version }, flat, previous && { job: isObject(previous.job) ? previous.job : undefined }));
  if (!versionAtLeast(version, OLDEST_PER_JOB_CONFIGURATION_VERSION)) {
    for (const key of Object.keys(own)) {
      if (key.startsWith(OPERATOR_KEY_PREFIX)) continue;
      errors.push({
        field: `spec.flinkConfiguration[${JSON.stringify(key)}]`,
        message: `cannot reach the job: the session cluster runs flinkVersion ${version}, and Flink takes a job's own configuration on submission only from 1.17; set it in the session cluster's flinkConfiguration, or upgrade the session cluster to Flink 1.17 or newer`,
      });
    }
  }
  return errors;
}

/**
 * All problems with a FlinkSessionJob; empty when it can be reconciled (on the session cluster
 * given in `context`, when one is given).
 */
export function validateFlinkSessionJob(
  sessionJob: { metadata: { name?: string; namespace?: string }; spec: FlinkSessionJobSpec },
  context: SessionJobValidationContext = {},
): FieldError[] {
  const errors: FieldError[] = [...validateName(sessionJob.metadata?.name)];
  const spec = sessionJob.spec;
  const schemaErrors = validateSessionJobSpecSchema(spec);
  errors.push(...schemaErrors);
  if (!isObject(spec)) return errors;
  const previous = isObject(context.previous?.spec) ? context.previous.spec : undefined;
  const allowed = (context.allowedJarSchemes ?? DEFAULT_SESSION_JOB_JAR_SCHEMES).map((s) => s.toLowerCase());
  const shared = validateJobChange(spec, previous);
  const rules = [
    ...validateDeploymentName(spec, previous),
    ...validateJob(spec),
    ...validateJarUri(spec, allowed),
    ...(context.sessionCluster ? validateAgainstCluster(spec, context.sessionCluster, previous) : []),
    ...shared.redeploy,
    ...shared.whileSuspended,
  ];
  const badFields = new Set(schemaErrors.map((e) => e.field));
  errors.push(...rules.filter((e) => !badFields.has(e.field)));
  return errors;
}
