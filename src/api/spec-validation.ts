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
import {
  CHANGE_MESSAGES,
  COUNT_MESSAGES,
  DNS_1035_LABEL,
  JAR_URI_MESSAGES,
  LONGEST_DERIVED_NAME_PATTERN,
  MAX_DEPLOYMENT_NAME_LENGTH,
  NAME_LIMITS,
  NAME_MESSAGES,
  NONCE_RULES,
  OLDEST_REMOTE_JAR_VERSION,
  REMOTE_JAR_SCHEMES,
  suggestName,
  VERSION_FACTS,
  VERSION_MESSAGES,
} from './spec-validation-messages.js';
import { ingressTemplateProblem } from '../flink/flink-ingress.js';
import { REST_SERVICE_EXPOSED_TYPE_KEY, restServiceExposedTypeProblem } from '../flink/flink-services.js';

export type { FieldError } from './schema-validator.js';

export { DERIVED_NAME_PATTERNS, DNS_1035_LABEL, MAX_DEPLOYMENT_NAME_LENGTH, REMOTE_JAR_SCHEMES } from './spec-validation-messages.js';

function versionIndex(version: FlinkVersion): number {
  return FLINK_VERSIONS.indexOf(version);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateName(name: string | undefined): FieldError[] {
  if (!name) return [{ field: 'metadata.name', message: NAME_MESSAGES.required.text({}) }];
  if (!DNS_1035_LABEL.test(name)) return [{ field: 'metadata.name', message: NAME_MESSAGES.notDns1035.text({ name, suggestion: suggestName(name) }) }];
  if (name.length > MAX_DEPLOYMENT_NAME_LENGTH) {
    const longest = LONGEST_DERIVED_NAME_PATTERN.text(name);
    return [
      {
        field: 'metadata.name',
        message: NAME_MESSAGES.tooLong.text({ ...NAME_LIMITS, length: String(name.length), longest, longestLength: String(longest.length) }),
      },
    ];
  }
  return [];
}

function validateFlinkVersion(spec: FlinkDeploymentSpec): FieldError[] {
  const version = spec.flinkVersion;
  if (version === undefined) {
    return [{ field: 'spec.flinkVersion', message: VERSION_MESSAGES.required.text({}) }];
  }
  if (!FLINK_VERSIONS.includes(version)) return []; // reported by the schema
  if (versionIndex(version) < versionIndex(OLDEST_SUPPORTED_FLINK_VERSION)) {
    return [{ field: 'spec.flinkVersion', message: VERSION_MESSAGES.unsupported.text({ ...VERSION_FACTS, version }) }];
  }
  return [];
}

function validateCounts(spec: FlinkDeploymentSpec, flat: Record<string, string>): FieldError[] {
  const errors: FieldError[] = [];
  const job = spec.job;
  if (isObject(job)) {
    const p = job.parallelism;
    if (typeof p === 'number') {
      if (p < 1) errors.push({ field: 'spec.job.parallelism', message: COUNT_MESSAGES.parallelismTooLow.text({ value: String(p) }) });
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
      errors.push({ field: `spec.${component}.replicas`, message: COUNT_MESSAGES.replicasTooLow[component].text({ value: String(replicas) }) });
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
    const hint = uri.startsWith('/') ? JAR_URI_MESSAGES.absolutePathHint.text({ uri }) : JAR_URI_MESSAGES.exampleHint;
    return [{ field: 'spec.job.jarURI', message: JAR_URI_MESSAGES.noScheme.text({ uri, hint }) }];
  }
  const scheme = match[1].toLowerCase();
  if (scheme === 'local') {
    return match[2].startsWith('/') ? [] : [{ field: 'spec.job.jarURI', message: JAR_URI_MESSAGES.localNotAbsolute.text({ uri, rest: match[2] }) }];
  }
  if (!(REMOTE_JAR_SCHEMES as readonly string[]).includes(scheme)) {
    return [{ field: 'spec.job.jarURI', message: JAR_URI_MESSAGES.unsupportedScheme.text({ scheme, uri, schemes: REMOTE_JAR_SCHEMES.join(', ') }) }];
  }
  const version = spec.flinkVersion;
  if (version !== undefined && FLINK_VERSIONS.includes(version) && versionIndex(version) < versionIndex(OLDEST_REMOTE_JAR_VERSION)) {
    return [{ field: 'spec.job.jarURI', message: JAR_URI_MESSAGES.remoteOnOldFlink.text({ scheme, version }) }];
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
    errors.push({ field: 'spec.job.checkpointTriggerNonce', message: CHANGE_MESSAGES.checkpointOnOldFlink.text({ version: String(spec.flinkVersion) }) });
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
    redeploy.push({ field: 'spec.job.savepointRedeployNonce', message: CHANGE_MESSAGES.redeployWithoutPath.text({}) });
  }
  if (previous && job?.state === 'suspended') {
    const suspending = (previous.job?.state ?? 'running') !== 'suspended';
    const valueOf = (fields: JobChangeFields, field: (typeof NONCE_RULES)[number]['field']): number | undefined =>
      field === 'restartNonce' ? fields.restartNonce : fields.job?.[field.slice('job.'.length) as 'savepointTriggerNonce'];
    for (const { field, what } of NONCE_RULES) {
      if (!changed(valueOf(spec, field), valueOf(previous, field))) continue;
      const message = suspending ? CHANGE_MESSAGES.whileSuspending : CHANGE_MESSAGES.whileSuspended;
      whileSuspended.push({ field: `spec.${field}`, message: message.text({ what, field }) });
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
        ? { field: 'spec.job', message: CHANGE_MESSAGES.jobRemoved.text({}) }
        : { field: 'spec.job', message: CHANGE_MESSAGES.jobAdded.text({}) },
    );
  }
  if ((previous.mode ?? 'native') !== (spec.mode ?? 'native')) {
    errors.push({ field: 'spec.mode', message: CHANGE_MESSAGES.modeChanged.text({ from: previous.mode ?? 'native', to: spec.mode ?? 'native' }) });
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
