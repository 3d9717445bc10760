/**
 * Kind strategies (defaults, PrepareForCreate/Update, Validate) of the batch/v1,
 * networking.k8s.io/v1 and policy/v1 kinds, as far as a user or kubectl would notice them:
 * - Job: SetDefaults_Job (pkg/apis/batch/v1/defaults.go: completions/parallelism 1, backoffLimit 6,
 *   completionMode NonIndexed, suspend false; plus manualSelector false and podReplacementPolicy
 *   TerminatingOrFailed of 1.32) and jobStrategy.PrepareForCreate's generated selector
 *   (pkg/registry/batch/job/strategy.go generateSelector: template labels
 *   `batch.kubernetes.io/controller-uid`, `batch.kubernetes.io/job-name`, `controller-uid`,
 *   `job-name`; selector matchLabels `batch.kubernetes.io/controller-uid`); the job's own labels
 *   default to the template labels; restartPolicy must be OnFailure or Never;
 * - CronJob: SetDefaults_CronJob (concurrencyPolicy Allow, suspend false, history limits 3 and 1);
 *   schedule required; the job template validated like a Job's;
 * - Ingress: pathType required (`pathType must be specified`), supported path types, absolute
 *   paths for Exact/Prefix, a backend per path, defaultBackend or rules (pkg/apis/networking/validation);
 * - IngressClass: spec.controller required;
 * - PodDisruptionBudget: minAvailable and maxUnavailable exclusive (pkg/apis/policy/validation).
 * Status is reset on create as each strategy's PrepareForCreate does.
 *
 * Caveats: no update validation (immutable Job template/selector, immutable IngressClass
 * controller); cron schedule syntax, percent values and most nested fields are not checked.
 */
import { invalidValue, notSupported, requiredValue, type FieldError } from './errors.js';
import { asArray, asObject, type JsonObject, type JsonValue } from './json-clone.js';
import type { KubeObject } from './resource-types.js';
import { objectField, podSpecDefaults } from './builtin-strategies.js';

/** The label keys the Job strategy generates (k8s.io/api/batch/v1 types.go). */
export const JOB_CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
const LEGACY_JOB_NAME_LABEL = 'job-name';

/** SetDefaults_Job on a Job spec (also a CronJob's jobTemplate.spec). */
function jobSpecDefaults(spec: JsonObject): void {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed';
  const template = objectField(spec, 'template');
  if (template) podSpecDefaults(objectField(template, 'spec'));
}

/** generateSelector of the Job strategy (create only, unless manualSelector). */
function generateJobSelector(job: KubeObject, spec: JsonObject): void {
  if (spec.manualSelector === true) return;
  const template = objectField(spec, 'template');
  const meta = template && objectField(template, 'metadata');
  if (!meta) return;
  const labels = objectField(meta, 'labels') ?? {};
  const uid = job.metadata.uid ?? '';
  labels[LEGACY_JOB_NAME_LABEL] ??= job.metadata.name;
  labels[JOB_NAME_LABEL] ??= job.metadata.name;
  labels[LEGACY_CONTROLLER_UID_LABEL] ??= uid;
  labels[JOB_CONTROLLER_UID_LABEL] ??= uid;
  const selector = objectField(spec, 'selector');
  const matchLabels = selector && objectField(selector, 'matchLabels');
  if (matchLabels) matchLabels[JOB_CONTROLLER_UID_LABEL] ??= uid;
}

/** ValidateJobSpec's checks of the pod template (path: `spec` or `spec.jobTemplate.spec`). */
function validateJobSpec(spec: JsonObject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const podSpec = asObject(asObject(spec.template)?.spec) ?? {};
  const containers = podSpec.containers;
  if (!Array.isArray(containers) || containers.length === 0) errs.push(requiredValue(`${path}.template.spec.containers`));
  const restartPolicy = podSpec.restartPolicy;
  if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') {
    errs.push(notSupported(`${path}.template.spec.restartPolicy`, restartPolicy ?? '', ['OnFailure', 'Never']));
  }
  for (const field of ['parallelism', 'completions', 'backoffLimit']) {
    const v = spec[field];
    if (typeof v === 'number' && v < 0) errs.push(invalidValue(`${path}.${field}`, v, 'must be greater than or equal to 0'));
  }
  return errs;
}

function prepareJob(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = objectField(obj, 'spec');
  if (!spec) return [requiredValue('spec')];
  jobSpecDefaults(spec);
  if (!old) {
    generateJobSelector(obj, spec);
    obj.status = {};
  }
  const templateLabels = asObject(asObject(asObject(spec.template)?.metadata)?.labels);
  if (templateLabels && Object.keys(obj.metadata.labels ?? {}).length === 0) {
    const copied: Record<string, string> = {};
    for (const [k, v] of Object.entries(templateLabels)) if (typeof v === 'string') copied[k] = v;
    obj.metadata.labels = copied;
  }
  return validateJobSpec(spec, 'spec');
}

function prepareCronJob(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const spec = objectField(obj, 'spec');
  if (!spec) return [requiredValue('spec')];
  spec.concurrencyPolicy ??= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  const jobTemplate = objectField(spec, 'jobTemplate');
  const jobSpec = jobTemplate && objectField(jobTemplate, 'spec');
  if (jobSpec) jobSpecDefaults(jobSpec);
  if (!old) obj.status = {};
  const errs: FieldError[] = [];
  if (typeof spec.schedule !== 'string' || spec.schedule === '') errs.push(requiredValue('spec.schedule'));
  const policy = spec.concurrencyPolicy;
  if (policy !== 'Allow' && policy !== 'Forbid' && policy !== 'Replace') {
    errs.push(notSupported('spec.concurrencyPolicy', policy, ['Allow', 'Forbid', 'Replace']));
  }
  if (jobSpec) errs.push(...validateJobSpec(jobSpec, 'spec.jobTemplate.spec'));
  return errs;
}

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];

function validateIngressBackend(backend: JsonValue | undefined, path: string): FieldError[] {
  const b = asObject(backend);
  if (!b) return [requiredValue(path)];
  const service = asObject(b.service);
  if (service && b.resource) return [invalidValue(path, '', 'cannot set both resource and service backends')];
  if (!service && !b.resource) return [invalidValue(path, '', 'resource or service backend is required')];
  if (!service) return [];
  const errs: FieldError[] = [];
  if (typeof service.name !== 'string' || service.name === '') errs.push(requiredValue(`${path}.service.name`));
  const port = asObject(service.port);
  const hasName = typeof port?.name === 'string' && port.name !== '';
  const hasNumber = typeof port?.number === 'number' && port.number !== 0;
  if (hasName && hasNumber) errs.push(invalidValue(`${path}.service.port`, '', 'cannot set both port name & port number'));
  else if (!hasName && !hasNumber) errs.push(requiredValue(`${path}.service.port.name`, 'port name or number is required'));
  return errs;
}

function prepareIngress(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!old) obj.status = { loadBalancer: {} };
  const spec = asObject(obj.spec) ?? {};
  const errs: FieldError[] = [];
  const rules = asArray(spec.rules);
  if (spec.defaultBackend !== undefined && spec.defaultBackend !== null) errs.push(...validateIngressBackend(spec.defaultBackend, 'spec.defaultBackend'));
  else if (rules.length === 0) errs.push(invalidValue('spec.rules', '', 'either `defaultBackend` or `rules` must be specified'));
  rules.forEach((rule, i) => {
    const http = asObject(asObject(rule)?.http);
    if (!http) return;
    const paths = asArray(http.paths);
    if (paths.length === 0) errs.push(requiredValue(`spec.rules[${i}].http.paths`));
    paths.forEach((p, j) => {
      const at = `spec.rules[${i}].http.paths[${j}]`;
      const entry = asObject(p) ?? {};
      if (entry.pathType === undefined || entry.pathType === null) {
        errs.push(requiredValue(`${at}.pathType`, 'pathType must be specified'));
        return;
      }
      if (typeof entry.pathType !== 'string' || !PATH_TYPES.includes(entry.pathType)) {
        errs.push(notSupported(`${at}.pathType`, entry.pathType, PATH_TYPES));
        return;
      }
      const path = typeof entry.path === 'string' ? entry.path : '';
      if ((entry.pathType === 'Exact' || entry.pathType === 'Prefix') && !path.startsWith('/')) {
        errs.push(invalidValue(`${at}.path`, path, 'must be an absolute path'));
      } else if (entry.pathType === 'ImplementationSpecific' && path !== '' && !path.startsWith('/')) {
        errs.push(invalidValue(`${at}.path`, path, 'must be an absolute path'));
      }
      errs.push(...validateIngressBackend(entry.backend, `${at}.backend`));
    });
  });
  return errs;
}

function preparePodDisruptionBudget(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!old) obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  const spec = asObject(obj.spec) ?? {};
  const set = (v: JsonValue | undefined) => v !== undefined && v !== null;
  if (set(spec.minAvailable) && set(spec.maxUnavailable)) return [invalidValue('spec', spec, 'minAvailable and maxUnavailable cannot be both set')];
  return [];
}

/** Defaults and validation of a served-group kind; returns the field errors (the caller throws 422). */
export function prepareServedGroupKind(groupResource: string, obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  switch (groupResource) {
    case 'batch/jobs':
      return prepareJob(obj, old);
    case 'batch/cronjobs':
      return prepareCronJob(obj, old);
    case 'networking.k8s.io/ingresses':
      return prepareIngress(obj, old);
    case 'networking.k8s.io/ingressclasses': {
      const controller = asObject(obj.spec)?.controller;
      return typeof controller === 'string' && controller !== '' ? [] : [requiredValue('spec.controller')];
    }
    case 'policy/poddisruptionbudgets':
      return preparePodDisruptionBudget(obj, old);
    default:
      return [];
  }
}
