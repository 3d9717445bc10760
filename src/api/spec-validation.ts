/**
 * Validation of a FlinkDeployment beyond its schema: the rules the Apache operator's
 * `DefaultValidator` applies that matter here, each error naming the field and the fix.
 *
 *   validateFlinkDeployment({ metadata, spec }, previous?)  // previous = { spec: lastReconciledSpec }
 *   formatFieldErrors(errors)  // "spec.job.parallelism: must be at least 1, got 0; set it to 1 or more"
 *
 * Rules (the invalid-spec corpus in test/api/invalid-specs/ has one document per rule, with the
 * exact message):
 * - schema (ajv, schema-validator.ts);
 * - metadata.name: a DNS-1035 label short enough that every resource derived from it fits 63
 *   characters ({@link DERIVED_NAME_PATTERNS});
 * - spec.flinkVersion: set, and v1_15 or newer;
 * - spec.job.parallelism >= 1 (or parallelism.default set), replicas >= 1;
 * - spec.job.jarURI: an absolute URI with a supported scheme (remote schemes need Flink >= 1.19);
 * - upgradeMode last-state: high availability configured; savepoint / last-state: a checkpoint
 *   directory; savepoint (and manual or periodic savepoints): a savepoint directory;
 * - high availability: a storage directory; more than one JobManager: high availability;
 * - Flink 1.15–1.18 (configuration rendered into `flink-conf.yaml`, Flink's legacy flat format):
 *   every flinkConfiguration key and value, and the spec fields rendered into that file
 *   (job.jarURI, job.initialSavepointPath; native: job.entryClass, job.args), must survive Flink
 *   1.x's reading of it (no line break, no '#', no surrounding whitespace, not empty);
 * - changes against the last reconciled spec: no switch between application and session cluster
 *   or between native and standalone; no restart / savepoint / checkpoint / redeploy nonce change in
 *   the same edit that suspends the job; savepointRedeployNonce needs initialSavepointPath;
 * - spec.ingress.template: set, and a host and/or path Kubernetes takes once {{name}} and
 *   {{namespace}} are replaced (src/flink/flink-ingress.ts);
 * - kubernetes.rest-service.exposed.type: one of Flink's values (src/flink/flink-services.ts).
 *
 * Guarantees: pure (no I/O); never throws on any input (a spec of the wrong shape yields schema
 * errors); errors come in a stable order (schema first, then the rules above in order).
 */
import { MAX_DERIVED_NAME_LENGTH } from './flink-deployment.js';
import type { FlinkDeploymentSpec, JobSpec } from './flink-deployment-spec.js';
import { FLINK_VERSIONS, OLDEST_SUPPORTED_FLINK_VERSION, type FlinkVersion } from './flink-deployment-spec.js';
import {
  checkpointDirectory,
  DELETION_PROPAGATION_KEY,
  DELETION_PROPAGATIONS,
  flattenFlinkConfiguration,
  flinkConfigFileOf,
  isHighAvailabilityEnabled,
  LEGACY_FLINK_CONFIG_FILE,
  legacyFlinkConfKeyProblem,
  legacyFlinkConfValueProblem,
  type LegacyFlinkConfProblem,
  savepointDirectory,
} from './flink-configuration.js';
import { checkpointTriggerSupported, periodicScheduleProblem, readPeriodicSchedule } from './periodic-snapshot-schedule.js';
import { validateSpecSchema, type FieldError } from './schema-validator.js';
import { ingressTemplateProblem } from '../flink/flink-ingress.js';
import { REST_SERVICE_EXPOSED_TYPE_KEY, restServiceExposedTypeProblem } from '../flink/flink-services.js';

export type { FieldError } from './schema-validator.js';

/**
 * Every name derived from a FlinkDeployment's name (`%s` = the name): the JobManager Deployment and
 * internal Service (`%s`), the REST Service, the TaskManager Deployment, Flink's configuration
 * ConfigMap, the operator state ConfigMap, and the `app=%s` label value.
 */
export const DERIVED_NAME_PATTERNS = ['%s', '%s-rest', '%s-taskmanager', 'flink-config-%s', '%s-operator-state'] as const;
/** The longest FlinkDeployment name whose derived names all fit {@link MAX_DERIVED_NAME_LENGTH}. */
export const MAX_DEPLOYMENT_NAME_LENGTH = MAX_DERIVED_NAME_LENGTH - Math.max(...DERIVED_NAME_PATTERNS.map((p) => p.length - 2));

/** Schemes Flink can fetch a job jar from (artifact fetching, Flink >= 1.19), besides `local`. */
export const REMOTE_JAR_SCHEMES = ['http', 'https', 's3', 's3a', 's3p', 'gs', 'hdfs', 'abfs', 'abfss', 'wasb', 'wasbs', 'oss', 'file'] as const;
const OLDEST_REMOTE_JAR_VERSION: FlinkVersion = 'v1_19';

/** A DNS-1035 label (what a FlinkDeployment name must be: its name is also a Service name). */
export const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

function versionIndex(version: FlinkVersion): number {
  return FLINK_VERSIONS.indexOf(version);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateName(name: string | undefined): FieldError[] {
  if (!name) return [{ field: 'metadata.name', message: 'is required; give the FlinkDeployment a name' }];
  if (!DNS_1035_LABEL.test(name)) {
    return [
      {
        field: 'metadata.name',
        message: `must start with a lower-case letter and contain only lower-case letters, digits and '-' (not ending with '-'), got "${name}"; rename it, e.g. "${suggestName(name)}"`,
      },
    ];
  }
  if (name.length > MAX_DEPLOYMENT_NAME_LENGTH) {
    const longest = DERIVED_NAME_PATTERNS.map((p) => p.replace('%s', name)).sort((a, b) => b.length - a.length)[0];
    return [
      {
        field: 'metadata.name',
        message: `is ${name.length} characters; at most ${MAX_DEPLOYMENT_NAME_LENGTH} fit, because derived names such as "${longest}" (${longest.length}) must fit ${MAX_DERIVED_NAME_LENGTH}; use a shorter name`,
      },
    ];
  }
  return [];
}

function suggestName(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '');
  return (cleaned || 'flink-job').slice(0, MAX_DEPLOYMENT_NAME_LENGTH).replace(/-+$/, '');
}

function validateFlinkVersion(spec: FlinkDeploymentSpec): FieldError[] {
  const version = spec.flinkVersion;
  if (version === undefined) {
    return [{ field: 'spec.flinkVersion', message: `is required; set it to the Flink version of the image, e.g. v1_20 or v2_2` }];
  }
  if (!FLINK_VERSIONS.includes(version)) return []; // reported by the schema
  if (versionIndex(version) < versionIndex(OLDEST_SUPPORTED_FLINK_VERSION)) {
    return [
      {
        field: 'spec.flinkVersion',
        message: `${version} is not supported (the oldest supported is ${OLDEST_SUPPORTED_FLINK_VERSION}); move the job to a Flink ${OLDEST_SUPPORTED_FLINK_VERSION.slice(1).replace('_', '.')} or newer image and set flinkVersion accordingly`,
      },
    ];
  }
  return [];
}

function validateCounts(spec: FlinkDeploymentSpec, flat: Record<string, string>): FieldError[] {
  const errors: FieldError[] = [];
  const job = spec.job;
  if (isObject(job)) {
    const p = job.parallelism;
    if (typeof p === 'number') {
      if (p < 1) errors.push({ field: 'spec.job.parallelism', message: `must be at least 1, got ${p}; set it to 1 or more` });
    } else if (p === undefined && !(Number(flat['parallelism.default']) >= 1)) {
      errors.push({
        field: 'spec.job.parallelism',
        message: 'is required for an application cluster; set it to 1 or more (or set parallelism.default in flinkConfiguration)',
      });
    }
  }
  for (const component of ['jobManager', 'taskManager'] as const) {
    const replicas = spec[component]?.replicas;
    if (typeof replicas === 'number' && replicas < 1) {
      errors.push({
        field: `spec.${component}.replicas`,
        message: `must be at least 1, got ${replicas}; set it to 1 or more${component === 'jobManager' ? '' : ', or suspend the job with job.state: suspended'}`,
      });
    }
  }
  const slots = flat['taskmanager.numberOfTaskSlots'];
  if (slots !== undefined && !(/^\d+$/.test(slots.trim()) && Number(slots) >= 1)) {
    errors.push({
      field: 'spec.flinkConfiguration["taskmanager.numberOfTaskSlots"]',
      message: `must be a whole number of at least 1, got "${slots}"; set it to 1 or more`,
    });
  }
  return errors;
}

function validateJarUri(spec: FlinkDeploymentSpec): FieldError[] {
  const uri = spec.job?.jarURI;
  if (typeof uri !== 'string') return [];
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/.exec(uri);
  if (!match) {
    const hint = uri.startsWith('/') ? `; for a jar inside the image write local://${uri}` : '; write e.g. local:///opt/flink/usrlib/job.jar';
    return [{ field: 'spec.job.jarURI', message: `must be an absolute URI with a scheme, got "${uri}"${hint}` }];
  }
  const scheme = match[1].toLowerCase();
  if (scheme === 'local') {
    return match[2].startsWith('/') ? [] : [{ field: 'spec.job.jarURI', message: `local:// needs an absolute path, got "${uri}"; write local:///${match[2]}` }];
  }
  if (!(REMOTE_JAR_SCHEMES as readonly string[]).includes(scheme)) {
    return [
      {
        field: 'spec.job.jarURI',
        message: `scheme "${scheme}" is not supported, got "${uri}"; use local:// for a jar in the image, or one of ${REMOTE_JAR_SCHEMES.join(', ')}`,
      },
    ];
  }
  const version = spec.flinkVersion;
  if (version !== undefined && FLINK_VERSIONS.includes(version) && versionIndex(version) < versionIndex(OLDEST_REMOTE_JAR_VERSION)) {
    return [
      {
        field: 'spec.job.jarURI',
        message: `fetching a jar from ${scheme}:// needs Flink 1.19 or newer (flinkVersion is ${version}); put the jar in the image and use local://, or upgrade Flink`,
      },
    ];
  }
  return [];
}

function validateStateConfiguration(spec: FlinkDeploymentSpec, flat: Record<string, string>, previous: FlinkDeploymentSpec | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const ha = isHighAvailabilityEnabled(flat);
  const mode = spec.job?.upgradeMode;
  if (mode === 'last-state' && !ha) {
    errors.push({
      field: 'spec.job.upgradeMode',
      message:
        'last-state needs Flink high availability; set flinkConfiguration high-availability.type: kubernetes and high-availability.storageDir, or use upgradeMode savepoint',
    });
  }
  if ((mode === 'last-state' || mode === 'savepoint') && !checkpointDirectory(flat)) {
    errors.push({
      field: 'spec.job.upgradeMode',
      message: `${mode} needs a checkpoint directory; set flinkConfiguration execution.checkpointing.dir (or state.checkpoints.dir), or use upgradeMode stateless`,
    });
  }
  if (!savepointDirectory(flat)) {
    if (mode === 'savepoint') {
      errors.push({
        field: 'spec.job.upgradeMode',
        message:
          'savepoint needs a savepoint directory; set flinkConfiguration execution.checkpointing.savepoint-dir (or state.savepoints.dir), or use upgradeMode stateless',
      });
    }
    // A nonce present at the first deployment is recorded, not acted on (as in the Apache operator).
    if (previous && changed(spec.job?.savepointTriggerNonce, previous.job?.savepointTriggerNonce)) {
      errors.push({
        field: 'spec.job.savepointTriggerNonce',
        message:
          'asks for a manual savepoint, but no savepoint directory is configured; set flinkConfiguration execution.checkpointing.savepoint-dir (or state.savepoints.dir)',
      });
    }
    const periodic = flat['kubernetes.operator.periodic.savepoint.interval'];
    if (periodic !== undefined && periodic.trim() !== '' && periodic.trim() !== '0') {
      errors.push({
        field: 'spec.flinkConfiguration["kubernetes.operator.periodic.savepoint.interval"]',
        message: 'periodic savepoints need a savepoint directory; set execution.checkpointing.savepoint-dir (or state.savepoints.dir), or remove the interval',
      });
    }
  }
  // A duration, or a Quartz cron expression (6 or 7 fields), as the Apache operator accepts (periodic-snapshot-schedule.ts).
  const intervalProblem = periodicScheduleProblem(flat['kubernetes.operator.periodic.savepoint.interval']);
  if (intervalProblem) errors.push({ field: 'spec.flinkConfiguration["kubernetes.operator.periodic.savepoint.interval"]', message: intervalProblem });
  if (ha && !flat['high-availability.storageDir']?.trim()) {
    errors.push({
      field: 'spec.flinkConfiguration["high-availability.storageDir"]',
      message: 'is required when high availability is enabled; set it to a durable directory, e.g. s3://bucket/flink-ha',
    });
  }
  const jmReplicas = spec.jobManager?.replicas;
  if (typeof jmReplicas === 'number' && jmReplicas > 1 && !ha) {
    errors.push({
      field: 'spec.jobManager.replicas',
      message: `${jmReplicas} JobManagers need high availability; set flinkConfiguration high-availability.type: kubernetes, or set replicas to 1`,
    });
  }
  return errors;
}

/**
 * Manual and periodic checkpoints (`job.checkpointTriggerNonce`, `kubernetes.operator.periodic.checkpoint.interval`):
 * a valid schedule, and a Flink that takes checkpoints on request. Exported for the session-job
 * validation, which passes its cluster's flinkVersion.
 */
export function validateCheckpointTriggers(
  spec: Pick<FlinkDeploymentSpec, 'job' | 'flinkVersion'>,
  flat: Record<string, string>,
  previous: Pick<FlinkDeploymentSpec, 'job'> | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  const field = 'spec.flinkConfiguration["kubernetes.operator.periodic.checkpoint.interval"]';
  const problem = periodicScheduleProblem(flat['kubernetes.operator.periodic.checkpoint.interval']);
  if (problem) errors.push({ field, message: problem });
  if (checkpointTriggerSupported(spec.flinkVersion)) return errors;
  const why = `needs Flink 1.19 or newer, which takes checkpoints on request (flinkVersion is ${spec.flinkVersion})`;
  if (!problem && readPeriodicSchedule(flat['kubernetes.operator.periodic.checkpoint.interval']))
    errors.push({ field, message: `periodic checkpoints ${why}; remove the interval and rely on execution.checkpointing.interval, or upgrade Flink` });
  // A nonce present at the first deployment is recorded, not acted on (as in the Apache operator).
  if (previous && changed(spec.job?.checkpointTriggerNonce, previous.job?.checkpointTriggerNonce))
    errors.push({ field: 'spec.job.checkpointTriggerNonce', message: `a manual checkpoint ${why}; undo the change, or upgrade Flink` });
  return errors;
}

/**
 * Flink 1.15–1.18 read their configuration only from `flink-conf.yaml`, whose flat format loses
 * some values (flink-configuration.ts, legacyFlinkConfValueProblem): refuse them here rather than
 * deploy a configuration Flink reads differently.
 */
function validateLegacyConfigurationFile(spec: FlinkDeploymentSpec, flat: Record<string, string>): FieldError[] {
  const version = spec.flinkVersion;
  if (version === undefined || !FLINK_VERSIONS.includes(version) || versionIndex(version) < versionIndex(OLDEST_SUPPORTED_FLINK_VERSION)) return [];
  if (flinkConfigFileOf(version) !== LEGACY_FLINK_CONFIG_FILE) return [];
  const message = (problem: LegacyFlinkConfProblem) =>
    `${problem.reason} (flinkVersion ${version} reads its configuration from ${LEGACY_FLINK_CONFIG_FILE}); ${problem.fix}, or move to Flink 1.19 or newer (flinkVersion v1_19 or later reads config.yaml)`;
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(flat)) {
    const problem = legacyFlinkConfKeyProblem(key) ?? legacyFlinkConfValueProblem(value);
    if (problem) errors.push({ field: `spec.flinkConfiguration[${JSON.stringify(key)}]`, message: message(problem) });
  }
  // Spec fields the operator writes into the same file (flink-config-builder.ts, native-application-cluster.ts).
  const job = isObject(spec.job) ? spec.job : undefined;
  const native = spec.mode !== 'standalone';
  const rendered: Array<[string, unknown]> = [
    ['spec.job.jarURI', job?.jarURI],
    ['spec.job.initialSavepointPath', job?.initialSavepointPath],
    ...(native
      ? ([
          ['spec.job.entryClass', job?.entryClass],
          ['spec.job.args', Array.isArray(job?.args) && job.args.length > 0 ? job.args.join(';') : undefined],
        ] as Array<[string, unknown]>)
      : []),
  ];
  for (const [field, value] of rendered) {
    // An empty field is not rendered as a value (or is another rule's error).
    const problem = typeof value === 'string' && value !== '' ? legacyFlinkConfValueProblem(value) : undefined;
    if (problem) errors.push({ field, message: message(problem) });
  }
  return errors;
}

function changed(now: number | undefined, before: number | undefined): boolean {
  return now !== undefined && now !== null && now !== before;
}

/** The fields the job change rules read; a FlinkDeployment spec and a FlinkSessionJob spec both have them. */
export interface JobChangeFields {
  restartNonce?: number;
  job?: JobSpec;
}

/**
 * The job rules a FlinkDeployment and a FlinkSessionJob share (field names from `spec`):
 * savepointRedeployNonce needs initialSavepointPath; no restart / savepoint / checkpoint / redeploy
 * nonce change in the change that suspends the job or while it is suspended.
 */
export function validateJobChange(spec: JobChangeFields, previous: JobChangeFields | undefined): { redeploy: FieldError[]; whileSuspended: FieldError[] } {
  const redeploy: FieldError[] = [];
  const whileSuspended: FieldError[] = [];
  const job = spec.job;
  if (job?.savepointRedeployNonce !== undefined && job.savepointRedeployNonce !== previous?.job?.savepointRedeployNonce && !job.initialSavepointPath) {
    redeploy.push({
      field: 'spec.job.savepointRedeployNonce',
      message: 'redeploys from job.initialSavepointPath, which is not set; set initialSavepointPath to the savepoint to start from',
    });
  }
  if (previous && job?.state === 'suspended') {
    const suspending = (previous.job?.state ?? 'running') !== 'suspended';
    const nonces: Array<[string, number | undefined, number | undefined, string]> = [
      ['spec.restartNonce', spec.restartNonce, previous.restartNonce, 'a restart'],
      ['spec.job.savepointTriggerNonce', job.savepointTriggerNonce, previous.job?.savepointTriggerNonce, 'a manual savepoint'],
      ['spec.job.checkpointTriggerNonce', job.checkpointTriggerNonce, previous.job?.checkpointTriggerNonce, 'a manual checkpoint'],
      ['spec.job.savepointRedeployNonce', job.savepointRedeployNonce, previous.job?.savepointRedeployNonce, 'a redeploy from savepoint'],
    ];
    for (const [field, now, before, what] of nonces) {
      if (!changed(now, before)) continue;
      whileSuspended.push({
        field,
        message: suspending
          ? `asks for ${what} in the same change that suspends the job (job.state: suspended); make them separate changes: revert ${field.replace('spec.', '')} now and change it after the job is running again, or keep the job running`
          : `asks for ${what} while the job is suspended; set job.state: running in the same change, or revert ${field.replace('spec.', '')}`,
      });
    }
  }
  return { redeploy, whileSuspended };
}

function validateChange(spec: FlinkDeploymentSpec, previous: FlinkDeploymentSpec | undefined): FieldError[] {
  const job = spec.job;
  const shared = validateJobChange(spec, previous);
  const errors: FieldError[] = [...shared.redeploy];
  if (!previous) return errors;
  if ((previous.job === undefined) !== (job === undefined)) {
    errors.push(
      job === undefined
        ? {
            field: 'spec.job',
            message:
              'was removed, which would turn an application cluster into a session cluster; that is not supported: restore spec.job, or delete and recreate the FlinkDeployment',
          }
        : {
            field: 'spec.job',
            message:
              'was added, which would turn a session cluster into an application cluster; that is not supported: create a new FlinkDeployment for the job',
          },
    );
  }
  if ((previous.mode ?? 'native') !== (spec.mode ?? 'native')) {
    errors.push({
      field: 'spec.mode',
      message: `cannot change from ${previous.mode ?? 'native'} to ${spec.mode ?? 'native'} on an existing deployment; set it back to ${previous.mode ?? 'native'}, or delete and recreate the FlinkDeployment`,
    });
  }
  errors.push(...shared.whileSuspended);
  return errors;
}

/** The Ingress of spec.ingress and the REST Service it routes to: a template that renders, a REST Service type Flink knows. */
function validateExposure(spec: FlinkDeploymentSpec, flat: Record<string, string>, name: string | undefined, namespace: string | undefined): FieldError[] {
  const errors: FieldError[] = [];
  if (isObject(spec.ingress)) {
    const problem = ingressTemplateProblem(spec.ingress.template, name || 'name', namespace || 'default');
    if (problem) errors.push({ field: 'spec.ingress.template', message: problem });
  }
  const typeProblem = restServiceExposedTypeProblem(flat[REST_SERVICE_EXPOSED_TYPE_KEY]);
  if (typeProblem) errors.push({ field: `spec.flinkConfiguration["${REST_SERVICE_EXPOSED_TYPE_KEY}"]`, message: typeProblem });
  const propagation = flat[DELETION_PROPAGATION_KEY]?.trim();
  if (propagation && !DELETION_PROPAGATIONS.some((p) => p.toLowerCase() === propagation.toLowerCase()))
    errors.push({
      field: `spec.flinkConfiguration["${DELETION_PROPAGATION_KEY}"]`,
      message: `"${propagation}" is not a deletion propagation policy; use one of ${DELETION_PROPAGATIONS.join(', ')} (Foreground, the default, waits for the pods)`,
    });
  return errors;
}

/**
 * All problems with a FlinkDeployment; empty when it can be reconciled.
 * @param previous the last reconciled spec (from the internal state), for the change rules.
 */
export function validateFlinkDeployment(
  deployment: { metadata: { name?: string; namespace?: string }; spec: FlinkDeploymentSpec },
  previous?: { spec: FlinkDeploymentSpec },
): FieldError[] {
  const errors: FieldError[] = [...validateName(deployment.metadata?.name)];
  const spec = deployment.spec;
  const schemaErrors = validateSpecSchema(spec);
  errors.push(...schemaErrors);
  if (!isObject(spec)) return errors;
  const flat = isObject(spec.flinkConfiguration) ? flattenFlinkConfiguration(spec.flinkConfiguration) : {};
  const badFields = new Set(schemaErrors.map((e) => e.field));
  const previousSpec = isObject(previous?.spec) ? previous.spec : undefined;
  const rules = [
    ...validateFlinkVersion(spec),
    ...validateCounts(spec, flat),
    ...validateJarUri(spec),
    ...validateStateConfiguration(spec, flat, previousSpec),
    ...validateCheckpointTriggers(spec, flat, previousSpec),
    ...validateLegacyConfigurationFile(spec, flat),
    ...validateChange(spec, previousSpec),
    ...validateExposure(spec, flat, deployment.metadata?.name, deployment.metadata?.namespace),
  ];
  // A field the schema already rejected gets no second message.
  errors.push(...rules.filter((e) => !badFields.has(e.field)));
  return errors;
}

/** One line per error: `spec.job.parallelism: must be at least 1, got 0; set it to 1 or more`. */
export function formatFieldErrors(errors: FieldError[]): string {
  return errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('\n');
}
