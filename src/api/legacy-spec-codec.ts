/**
 * The Apache operator's spec strings: `reconciliationStatus.lastReconciledSpec` / `lastStableSpec`
 * are JSON strings of the spec with `resource_metadata`, in every envelope the Apache operator ever
 * wrote (the table in legacy-status-codec.ts). Read by {@link parseLegacySpec}, written in the
 * current format by {@link serializeLegacySpec}, for FlinkDeployment and FlinkSessionJob specs.
 *
 * Guarantees: parse never guesses (malformed JSON or an impossible shape is a
 * {@link LegacyStatusError} naming the resource and the field); serialize writes Apache's field
 * order, nulls dropped, so the Apache operator reads the result as it reads its own.
 */
import type { FlinkDeploymentSpec } from './flink-deployment-spec.js';
import { FLINK_SESSION_JOB_KIND } from './flink-session-job.js';
import { FLINK_DEPLOYMENT_KIND, FLINK_GROUP, API_VERSION_V1BETA1 } from './flink-deployment.js';

/** The Apache operator's default `resource_metadata.apiVersion`. */
export const LEGACY_SPEC_API_VERSION = `${FLINK_GROUP}/${API_VERSION_V1BETA1}`;

/** A legacy status that cannot be decoded. `field` is the status path, e.g. `status.reconciliationStatus.lastReconciledSpec`. */
export class LegacyStatusError extends Error {
  override readonly name = 'LegacyStatusError';
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/** The kinds whose Apache status this codec reads. */
export type LegacyOwnerKind = typeof FLINK_DEPLOYMENT_KIND | typeof FLINK_SESSION_JOB_KIND;

export interface LegacySpecEnvelope<Spec = FlinkDeploymentSpec> {
  spec: Spec;
  apiVersion?: string;
  firstDeployment?: boolean;
  generation?: number;
  variant: 'bare' | 'top-level-apiVersion' | 'resource_metadata' | 'resource_metadata-with-generation';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy without null-valued object properties (Jackson writes every unset field as null). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (inner !== null && inner !== undefined) out[key] = withoutNulls(inner);
  }
  return out;
}

/**
 * Parses a `lastReconciledSpec` / `lastStableSpec` string in any format the Apache operator wrote.
 * `field` is the status path and `resource` is `namespace/name`; both end up in the error message:
 * `default/orders: status.reconciliationStatus.lastReconciledSpec is not valid JSON (Unexpected token …)`.
 * `ownerKind` only words the messages (the envelope is the same for both kinds).
 */
export function parseLegacySpec<Spec = FlinkDeploymentSpec>(
  json: string,
  field: string,
  resource: string,
  ownerKind: LegacyOwnerKind = FLINK_DEPLOYMENT_KIND,
): LegacySpecEnvelope<Spec> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new LegacyStatusError(`${resource}: ${field} is not valid JSON (${(error as Error).message})`, field);
  }
  if (!isPlainObject(parsed)) {
    throw new LegacyStatusError(
      `${resource}: ${field} must be a JSON object holding a ${ownerKind} spec, got ${Array.isArray(parsed) ? 'an array' : String(parsed)}`,
      field,
    );
  }
  const metadata = parsed['resource_metadata'];
  if (metadata !== undefined && metadata !== null) {
    if (!isPlainObject(metadata)) throw new LegacyStatusError(`${resource}: ${field}: resource_metadata must be an object`, field);
    const spec = parsed['spec'];
    if (!isPlainObject(spec)) throw new LegacyStatusError(`${resource}: ${field}: "spec" must be an object next to resource_metadata`, field);
    const envelope: LegacySpecEnvelope<Spec> = { spec: withoutNulls(spec) as Spec, variant: 'resource_metadata' };
    if (typeof metadata['apiVersion'] === 'string') envelope.apiVersion = metadata['apiVersion'];
    if (typeof metadata['firstDeployment'] === 'boolean') envelope.firstDeployment = metadata['firstDeployment'];
    const innerMeta = metadata['metadata'];
    if (isPlainObject(innerMeta) && innerMeta['generation'] !== undefined && innerMeta['generation'] !== null) {
      const generation = innerMeta['generation'];
      if (typeof generation !== 'number' || !Number.isInteger(generation)) {
        throw new LegacyStatusError(
          `${resource}: ${field}: resource_metadata.metadata.generation must be an integer, got ${JSON.stringify(generation)}`,
          field,
        );
      }
      envelope.generation = generation;
      envelope.variant = 'resource_metadata-with-generation';
    }
    return envelope;
  }
  // Old formats: the object is the spec itself, possibly with a top-level apiVersion (the Apache reader strips it).
  const { apiVersion, ...spec } = parsed;
  if (apiVersion !== undefined) {
    const envelope: LegacySpecEnvelope<Spec> = { spec: withoutNulls(spec) as Spec, variant: 'top-level-apiVersion' };
    if (typeof apiVersion === 'string') envelope.apiVersion = apiVersion;
    return envelope;
  }
  return { spec: withoutNulls(parsed) as Spec, variant: 'bare' };
}

/** Apache's (Jackson's) field order, so encoded specs read like the ones the Apache operator writes. */
const SPEC_ORDER = [
  'job',
  'restartNonce',
  'flinkConfiguration',
  'image',
  'imagePullPolicy',
  'serviceAccount',
  'flinkVersion',
  'ingress',
  'podTemplate',
  'jobManager',
  'taskManager',
  'logConfiguration',
  'mode',
];
/** FlinkSessionJobSpec: AbstractFlinkSpec's fields, then its own (api/spec/FlinkSessionJobSpec.java). */
const SESSION_JOB_SPEC_ORDER = ['job', 'restartNonce', 'flinkConfiguration', 'deploymentName'];
const JOB_ORDER = [
  'jarURI',
  'parallelism',
  'entryClass',
  'args',
  'state',
  'savepointTriggerNonce',
  'initialSavepointPath',
  'checkpointTriggerNonce',
  'upgradeMode',
  'allowNonRestoredState',
  'savepointRedeployNonce',
  'autoscalerResetNonce',
];
const COMPONENT_ORDER = ['resource', 'resources', 'replicas', 'podTemplate'];
const RESOURCE_ORDER = ['cpu', 'memory', 'ephemeralStorage'];

function ordered(value: unknown, order: readonly string[]): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of order) if (key in value) out[key] = value[key];
  for (const [key, inner] of Object.entries(value)) if (!(key in out)) out[key] = inner;
  return out;
}

function orderedSpec(spec: unknown, specOrder: readonly string[]): Record<string, unknown> {
  const out = ordered(withoutNulls(spec), specOrder) as Record<string, unknown>;
  if (out['job'] !== undefined) out['job'] = ordered(out['job'], JOB_ORDER);
  for (const component of ['jobManager', 'taskManager']) {
    if (out[component] === undefined) continue;
    const c = ordered(out[component], COMPONENT_ORDER) as Record<string, unknown>;
    if (c['resource'] !== undefined) c['resource'] = ordered(c['resource'], RESOURCE_ORDER);
    out[component] = c;
  }
  return out;
}

/**
 * Serializes a spec in the current Apache format: compact JSON
 * `{"spec":{…},"resource_metadata":{"apiVersion":…,["metadata":{"generation":N},]"firstDeployment":b}}`.
 * Nulls are not written; `metadata.generation` only when `generation` is set; `firstDeployment` only when set.
 * `ownerKind` picks the Apache field order of the spec.
 */
export function serializeLegacySpec<Spec = FlinkDeploymentSpec>(
  envelope: Omit<LegacySpecEnvelope<Spec>, 'variant'>,
  ownerKind: LegacyOwnerKind = FLINK_DEPLOYMENT_KIND,
): string {
  const resourceMetadata: Record<string, unknown> = { apiVersion: envelope.apiVersion ?? LEGACY_SPEC_API_VERSION };
  if (envelope.generation !== undefined) resourceMetadata['metadata'] = { generation: envelope.generation };
  if (envelope.firstDeployment !== undefined) resourceMetadata['firstDeployment'] = envelope.firstDeployment;
  const specOrder = ownerKind === FLINK_SESSION_JOB_KIND ? SESSION_JOB_SPEC_ORDER : SPEC_ORDER;
  return JSON.stringify({ spec: orderedSpec(envelope.spec, specOrder), resource_metadata: resourceMetadata });
}
