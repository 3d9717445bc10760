/**
 * Migration of one FlinkDeployment from the Apache operator's status layout (v1beta1: internal
 * state inside `status`) to the split layout (companion ConfigMap `<name>-operator-state` + a
 * user-facing status with `stateRef`). Used by `flink-operator migrate` and by the operator itself
 * when it meets a legacy status with no ConfigMap: the same function, so both produce the same result.
 *
 * Steps (design/008-migration.md):
 * 1. no legacy field in the status → `already-migrated`, nothing written;
 * 2. decode the legacy status (legacy-status-codec.ts); malformed → `refused`, naming the resource and
 *    the field, nothing written;
 * 3. the state = the decoded state, encoded by the operator's own codec (ownerReference to the
 *    deployment's uid, labels, annotations, writer = `deps.writer`): the operator takes the ConfigMap
 *    over unchanged. The original status JSON is archived verbatim on the same ConfigMap, in the
 *    annotation {@link LEGACY_STATUS_ANNOTATION} (gzip+base64 under `….gz` when large), so a value
 *    whose representation changes (e.g. `"cpu":2.0` inside a spec string) is never lost. The codec
 *    keeps annotations it does not own on every later write, so the archive survives the operator;
 * 4. the ConfigMap: absent → POST it, GET it back and check it decodes to exactly that state;
 *    present, ours and with the same content (revision and writer aside) → an earlier run was
 *    interrupted after writing it: continue; present with other content, foreign or corrupt →
 *    `refused`, never overwritten;
 * 5. PUT the v1beta1 status (locked on the resourceVersion read): user-facing fields exactly as
 *    they were, legacy fields removed, `stateRef` = {ConfigMap, its revision}, the last savepoint kept
 *    as `jobStatus.lastSavepoint`.
 *
 * Guarantees
 * - Nothing is lost at any interruption point: until step 5 succeeds the legacy status is untouched
 *   (and is what a rerun decodes again); after step 4 the ConfigMap holds the state and the verbatim
 *   original status.
 * - Idempotent: a rerun of a migrated resource writes nothing (`already-migrated`); a rerun after an
 *   interruption between 4 and 5 writes only the status (`resumed`).
 * - Never overwrites a ConfigMap: the only ConfigMap write is a POST (409 if the name is taken).
 * - `dryRun` writes nothing and describes what would change (`would-migrate` with a diff).
 * Assumptions
 * - The object was read through the v1beta1 endpoint (v1 prunes the legacy fields) and carries
 *   metadata.uid and resourceVersion.
 * - The Apache operator is stopped: a status it changes between our read and our PUT is a 409, the
 *   rerun sees a different legacy state than the ConfigMap holds and refuses rather than guess.
 * Caveats
 * - A 409 / transient failure re-reads the deployment and starts over, at most `maxAttempts` times
 *   (then `failed`). A lost answer to the POST is handled by the same path (the rerun finds the
 *   ConfigMap with the same content and resumes).
 * - `writer` fencing: the ConfigMap is stamped with `writer`; the CLI uses leaseTransitions 0, so any
 *   operator leader may write it afterwards.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiException, type V1ConfigMap } from '@kubernetes/client-node';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentStatusV1 } from '../api/flink-deployment-status.js';
import { gunzipSync, gzipSync } from 'node:zlib';
import { INTERNAL_STATE_FORMAT_VERSION, type InternalState } from '../api/internal-state.js';
import { decodeLegacyStatus, hasLegacyFields, LegacyStatusError } from '../api/legacy-status-codec.js';
import { describeJsonDiff } from './json-patch-text.js';
import { isConflict, isTransient, KubeApiError, toKubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import type { FlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import type { FencingToken } from '../runtime/fencing-token.js';
import { assertOwnedBy, decodeStateConfigMap, encodeStateConfigMap } from './state-configmap-codec.js';
import { CorruptStateError, ForeignStateError, StateTooLargeError } from './state-errors.js';
import { stateConfigMapName } from './state-store.js';

export interface MigrationDependencies {
  readonly configMaps: ConfigMapClient;
  readonly deployments: FlinkDeploymentClient;
  /** Describe, write nothing. */
  readonly dryRun: boolean;
  /** Stamped as the state's lastWriter: the operator passes its fencing token, the CLI {@link MIGRATE_COMMAND_WRITER}. */
  readonly writer: FencingToken;
  /** Attempts after a 409 or transient failure (first included). Default 5. */
  readonly maxAttempts?: number;
  /** Delay before the 2nd attempt, doubled each time. Default 50 ms. */
  readonly retryDelayMs?: number;
  readonly compressThresholdBytes?: number;
  readonly maxTotalBytes?: number;
}

/** The writer identity of `flink-operator migrate` (term 0: never fences out an operator leader). */
export const MIGRATE_COMMAND_WRITER: FencingToken = { holderIdentity: 'flink-operator-migrate', leaseTransitions: 0 };

interface OutcomeBase {
  /** `namespace/name`. */
  readonly resource: string;
  /** One line for the user: what happened and, for refusals and failures, what to do. */
  readonly message: string;
}

export type MigrationOutcome =
  /** ConfigMap created and verified, status rewritten. */
  | (OutcomeBase & { readonly kind: 'migrated'; readonly configMapName: string; readonly revision: number })
  /** The ConfigMap existed with the same content (an interrupted earlier run); status rewritten. */
  | (OutcomeBase & { readonly kind: 'resumed'; readonly configMapName: string; readonly revision: number })
  /** No legacy field in the status; nothing written. */
  | (OutcomeBase & { readonly kind: 'already-migrated' })
  /** Not migrated, nothing written: malformed legacy status, foreign / different / corrupt ConfigMap, too large. */
  | (OutcomeBase & { readonly kind: 'refused'; readonly field?: string })
  /** Dry run: what would be written. */
  | (OutcomeBase & { readonly kind: 'would-migrate'; readonly configMapName: string; readonly diff: string })
  /** The API kept failing (or the read-back did not match); the legacy status is untouched unless the message says otherwise. */
  | (OutcomeBase & { readonly kind: 'failed'; readonly error: unknown });

export type MigrationOutcomeKind = MigrationOutcome['kind'];

/** The state the migration writes for a legacy status, plus the v1 status (stateRef.revision still the state's). */
export interface MigrationPlan {
  readonly state: InternalState;
  readonly userStatus: FlinkDeploymentStatusV1;
  /** The ConfigMap to create, archive annotation included. */
  readonly configMap: V1ConfigMap;
  /** The original status JSON (see {@link legacyStatusArchiveOf}). */
  readonly archive: string;
  /** InternalState fields decoded from the legacy status that the ConfigMap format does not hold (kept in the archive only). */
  readonly archiveOnly: readonly string[];
}

/**
 * Fields that may be kept in the archive only: `lastStableFirstDeployment` only serves a faithful
 * encoding back to the Apache layout (the Apache operator tests stability by string equality).
 */
const ARCHIVE_ONLY_TOLERATED: readonly string[] = ['lastStableFirstDeployment'];

/** Annotation on the state ConfigMap holding the original legacy status JSON, verbatim. */
export const LEGACY_STATUS_ANNOTATION = 'flink-operator.io/legacy-status';
/** The same, gzip + base64, used instead when the JSON is larger than {@link LEGACY_STATUS_PLAIN_LIMIT_BYTES}. */
export const LEGACY_STATUS_GZ_ANNOTATION = `${LEGACY_STATUS_ANNOTATION}.gz`;
export const LEGACY_STATUS_PLAIN_LIMIT_BYTES = 64 * 1024;
/** Kubernetes' limit on all annotations of an object is 256 KiB; the archive may use this much of it. */
export const LEGACY_STATUS_ARCHIVE_MAX_BYTES = 192 * 1024;

/** The annotation(s) archiving `archive`; throws when even compressed it would not fit. */
export function legacyStatusAnnotations(archive: string, resource: string): Record<string, string> {
  if (Buffer.byteLength(archive, 'utf8') <= LEGACY_STATUS_PLAIN_LIMIT_BYTES) return { [LEGACY_STATUS_ANNOTATION]: archive };
  const packed = gzipSync(Buffer.from(archive, 'utf8')).toString('base64');
  if (packed.length > LEGACY_STATUS_ARCHIVE_MAX_BYTES) {
    throw new LegacyStatusError(
      `${resource}: the legacy status is too large to archive (${packed.length} bytes compressed, limit ${LEGACY_STATUS_ARCHIVE_MAX_BYTES})`,
      'status',
    );
  }
  return { [LEGACY_STATUS_GZ_ANNOTATION]: packed };
}

/** The archived original legacy status JSON of a state ConfigMap, if it has one. */
export function readLegacyStatusArchive(configMap: V1ConfigMap | undefined): string | undefined {
  const annotations = configMap?.metadata?.annotations ?? {};
  if (annotations[LEGACY_STATUS_ANNOTATION] !== undefined) return annotations[LEGACY_STATUS_ANNOTATION];
  const packed = annotations[LEGACY_STATUS_GZ_ANNOTATION];
  if (packed === undefined) return undefined;
  try {
    return gunzipSync(Buffer.from(packed, 'base64')).toString('utf8');
  } catch {
    return undefined;
  }
}

function resourceOf(object: FlinkDeploymentV1beta1): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/** The legacy status as the JSON text to archive: the status exactly as the API server returned it. */
export function legacyStatusArchiveOf(object: FlinkDeploymentV1beta1): string {
  return JSON.stringify(object.status ?? {});
}

/**
 * Decodes the legacy status and encodes the ConfigMap the migration would create (pure).
 * @throws LegacyStatusError (malformed legacy status), StateTooLargeError, Error (no uid)
 */
export function planMigration(
  object: FlinkDeploymentV1beta1,
  deps: Pick<MigrationDependencies, 'writer' | 'compressThresholdBytes' | 'maxTotalBytes'>,
): MigrationPlan {
  const name = object.metadata.name ?? '';
  const decoded = decodeLegacyStatus(object.status ?? {}, resourceOf(object), stateConfigMapName(name));
  const state: InternalState = {
    ...decoded.state,
    formatVersion: INTERNAL_STATE_FORMAT_VERSION,
    lastWriter: { holderIdentity: deps.writer.holderIdentity, leaseTransitions: deps.writer.leaseTransitions },
  };
  const archive = legacyStatusArchiveOf(object);
  const annotations = legacyStatusAnnotations(archive, resourceOf(object));
  const encoded = encodeStateConfigMap(state, {
    deployment: object as unknown as FlinkDeploymentV1,
    compressThresholdBytes: deps.compressThresholdBytes,
    maxTotalBytes: deps.maxTotalBytes,
  });
  // What the ConfigMap can hold: fields the codec does not carry survive only in the archive. Only
  // fields with no effect on this operator's decisions may be lost that way; anything else refuses.
  let held: InternalState;
  try {
    held = decodeStateConfigMap(encoded.configMap);
  } catch (error) {
    if (!(error instanceof CorruptStateError)) throw error;
    // The legacy value decodes but is not a valid state (e.g. a spec the schema rejects): name the legacy field.
    const field = LEGACY_FIELD_OF_STATE_KEY[error.key] ?? 'status';
    throw new LegacyStatusError(`${resourceOf(object)}: ${field} cannot be migrated: ${error.detail}`, field);
  }
  const archiveOnly = differingFields(encoded.state, held);
  const intolerable = archiveOnly.filter((field) => !ARCHIVE_ONLY_TOLERATED.includes(field));
  if (intolerable.length > 0) {
    throw new LegacyStatusError(
      `${resourceOf(object)}: the state ConfigMap format cannot hold ${intolerable.join(', ')} of this legacy status (a bug of this operator version: report it)`,
      'status',
    );
  }
  const configMap: V1ConfigMap = {
    ...encoded.configMap,
    metadata: { ...encoded.configMap.metadata, annotations: { ...encoded.configMap.metadata?.annotations, ...annotations } },
  };
  return { state: held, userStatus: decoded.userStatus, configMap, archive, archiveOnly };
}

/** The legacy status field each state ConfigMap key is decoded from (for refusals). */
const LEGACY_FIELD_OF_STATE_KEY: Readonly<Record<string, string>> = {
  reconciliationState: 'status.reconciliationStatus.state',
  reconciliationTimestamp: 'status.reconciliationStatus.reconciliationTimestamp',
  lastReconciledSpec: 'status.reconciliationStatus.lastReconciledSpec',
  lastReconciledGeneration: 'status.reconciliationStatus.lastReconciledSpec',
  lastStableSpec: 'status.reconciliationStatus.lastStableSpec',
  lastStableGeneration: 'status.reconciliationStatus.lastStableSpec',
  firstDeployment: 'status.reconciliationStatus.lastReconciledSpec',
  pendingOperation: 'status.jobStatus',
  deployedJobId: 'status.jobStatus.jobId',
  savepointHistory: 'status.jobStatus.savepointInfo.savepointHistory',
  lastPeriodicSavepointTimestamp: 'status.jobStatus.savepointInfo.lastPeriodicSavepointTimestamp',
  lastPeriodicCheckpointTimestamp: 'status.jobStatus.checkpointInfo.lastPeriodicCheckpointTimestamp',
};

/** Same content: everything but the store's bookkeeping (revision, lastWriter). */
function sameContent(a: InternalState, b: InternalState): boolean {
  const strip = (s: InternalState) => {
    const { revision: _r, lastWriter: _w, ...rest } = JSON.parse(JSON.stringify(s)) as InternalState;
    return rest;
  };
  return isDeepStrictEqual(strip(a), strip(b));
}

/** The top-level InternalState fields where two states differ (for messages). */
function differingFields(a: InternalState, b: InternalState): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('revision');
  keys.delete('lastWriter');
  return [...keys]
    .filter(
      (k) =>
        !isDeepStrictEqual(
          JSON.parse(JSON.stringify({ v: (a as Record<string, unknown>)[k] })),
          JSON.parse(JSON.stringify({ v: (b as Record<string, unknown>)[k] })),
        ),
    )
    .sort();
}

function v1Status(plan: MigrationPlan, configMapName: string, revision: number): FlinkDeploymentStatusV1 {
  return { ...structuredClone(plan.userStatus), stateRef: { configMapName, revision } };
}

function dryRunDiff(object: FlinkDeploymentV1beta1, plan: MigrationPlan, status: FlinkDeploymentStatusV1, createConfigMap: boolean): string {
  const ns = object.metadata.namespace ?? '';
  const lines = [`FlinkDeployment ${resourceOf(object)} status (v1beta1 PUT .../status):`];
  lines.push(...describeJsonDiff(object.status ?? {}, status, { prefix: 'status' }).map((l) => `  ${l}`));
  const cmName = plan.configMap.metadata?.name ?? '';
  if (createConfigMap) {
    lines.push(`ConfigMap ${ns}/${cmName} (create, owned by FlinkDeployment uid ${object.metadata.uid ?? '?'}):`);
    for (const [key, value] of Object.entries(plan.configMap.data ?? {})) {
      const valueLines = value.split('\n').filter(Boolean);
      const first = valueLines[0] ?? '';
      const more = valueLines.length > 1 ? ` … (${valueLines.length} lines)` : '';
      lines.push(`  + data.${key}: ${first.length > 120 ? `${first.slice(0, 119)}…` : first}${more}`);
    }
    for (const key of Object.keys(plan.configMap.binaryData ?? {})) lines.push(`  + binaryData.${key}: (gzip+base64)`);
  } else {
    lines.push(`ConfigMap ${ns}/${cmName}: exists with the same content (an earlier run was interrupted); not written`);
  }
  return lines.join('\n');
}

type Attempt = { done: MigrationOutcome } | { retry: unknown };

/** What earlier attempts of the same call did. */
interface CallProgress {
  /** This call POSTed the ConfigMap successfully (a later attempt that finds it is not a "resume"). */
  created: boolean;
  /** This call sent the status PUT (its answer may have been lost although it landed). */
  statusSent: boolean;
  /** Whether the ConfigMap this call found or created existed before the call. */
  resumed: boolean;
}

async function attemptOnce(object: FlinkDeploymentV1beta1, deps: MigrationDependencies, progress: CallProgress): Promise<Attempt> {
  const resource = resourceOf(object);
  const namespace = object.metadata.namespace ?? '';
  const name = object.metadata.name ?? '';
  const configMapName = stateConfigMapName(name);
  if (!hasLegacyFields(object.status)) {
    const ref = object.status?.stateRef;
    if (progress.statusSent && ref) {
      // our status write landed although its answer was lost
      return { done: finished(resource, ref.configMapName, ref.revision, progress.resumed) };
    }
    return {
      done: {
        kind: 'already-migrated',
        resource,
        message: `${resource}: no legacy status fields${ref ? ` (state in ConfigMap ${ref.configMapName})` : ''}; nothing to do`,
      },
    };
  }

  let plan: MigrationPlan;
  try {
    plan = planMigration(object, deps);
  } catch (error) {
    if (error instanceof LegacyStatusError) return { done: { kind: 'refused', resource, field: error.field, message: `${error.message}; left untouched` } };
    if (error instanceof StateTooLargeError) return { done: { kind: 'refused', resource, message: `${resource}: ${error.message}; left untouched` } };
    throw error;
  }

  let revision: number;
  let resumed: boolean;
  const existing = await deps.configMaps.get(namespace, configMapName);
  if (existing) {
    let current: InternalState;
    try {
      assertOwnedBy(existing, object as unknown as FlinkDeploymentV1);
      current = decodeStateConfigMap(existing);
    } catch (error) {
      if (error instanceof ForeignStateError || error instanceof CorruptStateError) {
        return { done: { kind: 'refused', resource, message: `${resource}: ${error.message}; the legacy status is left untouched` } };
      }
      throw error;
    }
    const archiveDiffers = readLegacyStatusArchive(existing) !== plan.archive;
    if (!sameContent(current, plan.state) || archiveDiffers) {
      const fields = [...differingFields(current, plan.state), ...(archiveDiffers ? [`annotation ${LEGACY_STATUS_ANNOTATION}`] : [])];
      return {
        done: {
          kind: 'refused',
          resource,
          message:
            `${resource}: ConfigMap ${namespace}/${configMapName} already exists with different content (differs in: ${fields.join(', ')}); ` +
            `not overwriting it and leaving the legacy status untouched. If the old operator is still running, stop it; ` +
            `compare with \`kubectl get configmap ${configMapName} -n ${namespace} -o yaml\`, then delete the ConfigMap to migrate from the status, ` +
            `or remove the legacy status fields to keep the ConfigMap`,
        },
      };
    }
    revision = current.revision;
    resumed = !progress.created;
  } else {
    if (deps.dryRun) {
      const status = v1Status(plan, configMapName, plan.state.revision);
      return {
        done: {
          kind: 'would-migrate',
          resource,
          configMapName,
          diff: dryRunDiff(object, plan, status, true),
          message: `${resource}: would create ConfigMap ${configMapName} and rewrite the status`,
        },
      };
    }
    try {
      await deps.configMaps.create(namespace, plan.configMap);
      progress.created = true;
    } catch (error) {
      // AlreadyExists: a concurrent run, or our own POST whose answer was lost: start over (resume path).
      if (isConflict(error) || isTransient(error)) return { retry: error };
      throw error;
    }
    const readBack = await deps.configMaps.get(namespace, configMapName);
    const decoded = readBack ? decodeStateConfigMap(readBack) : undefined;
    const archived = readLegacyStatusArchive(readBack);
    if (!decoded || !isDeepStrictEqual(JSON.parse(JSON.stringify(decoded)), JSON.parse(JSON.stringify(plan.state))) || archived !== plan.archive) {
      const detail = decoded
        ? `differs in: ${[...differingFields(decoded, plan.state), ...(archived !== plan.archive ? ['the archived legacy status'] : [])].join(', ') || 'revision/writer'}`
        : 'it is gone';
      return {
        done: {
          kind: 'failed',
          resource,
          error: new Error(detail),
          message: `${resource}: ConfigMap ${namespace}/${configMapName} was created but reading it back does not give the state written (${detail}); the legacy status is left untouched (nothing is lost): report this, delete the ConfigMap and rerun`,
        },
      };
    }
    revision = decoded.revision;
    resumed = false;
  }

  const status = v1Status(plan, configMapName, revision);
  if (deps.dryRun) {
    return {
      done: {
        kind: 'would-migrate',
        resource,
        configMapName,
        diff: dryRunDiff(object, plan, status, false),
        message: `${resource}: would finish an interrupted migration (ConfigMap ${configMapName} already written) by rewriting the status`,
      },
    };
  }
  progress.resumed = resumed;
  try {
    progress.statusSent = true;
    await deps.deployments.replaceStatusV1beta1({ ...object, status });
  } catch (error) {
    if (isConflict(error) || isTransient(error)) return { retry: error };
    throw error;
  }
  return { done: finished(resource, configMapName, revision, resumed) };
}

function finished(resource: string, configMapName: string, revision: number, resumed: boolean): MigrationOutcome {
  return resumed
    ? {
        kind: 'resumed',
        resource,
        configMapName,
        revision,
        message: `${resource}: finished an interrupted migration (ConfigMap ${configMapName} was already written; status rewritten, stateRef revision ${revision})`,
      }
    : {
        kind: 'migrated',
        resource,
        configMapName,
        revision,
        message: `${resource}: migrated (ConfigMap ${configMapName} created and verified; status rewritten, stateRef revision ${revision})`,
      };
}

/**
 * Migrates one FlinkDeployment read through the v1beta1 endpoint (see the module comment).
 * Never throws for API failures: they are `failed` outcomes (the caller prints one line per resource).
 */
export async function migrateLegacyDeployment(object: FlinkDeploymentV1beta1, deps: MigrationDependencies): Promise<MigrationOutcome> {
  const maxAttempts = Math.max(1, deps.maxAttempts ?? 5);
  const retryDelayMs = deps.retryDelayMs ?? 50;
  const resource = resourceOf(object);
  let current: FlinkDeploymentV1beta1 = object;
  const progress: CallProgress = { created: false, statusSent: false, resumed: false };
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (attempt > 1) {
      if (retryDelayMs > 0) await new Promise((r) => setTimeout(r, retryDelayMs * 2 ** (attempt - 2)));
      let reread: FlinkDeploymentV1beta1 | undefined;
      try {
        reread = await deps.deployments.getV1beta1(object.metadata.namespace ?? '', object.metadata.name ?? '');
      } catch (error) {
        lastError = error;
        if (isTransient(error)) continue;
        return failed(resource, error);
      }
      if (!reread || (object.metadata.uid && reread.metadata.uid !== object.metadata.uid)) {
        return {
          kind: 'failed',
          resource,
          error: lastError,
          message: `${resource}: the FlinkDeployment was deleted or recreated during the migration; nothing more written`,
        };
      }
      current = reread;
    }
    try {
      const result = await attemptOnce(current, deps, progress);
      if ('done' in result) return result.done;
      lastError = result.retry;
    } catch (error) {
      if (isTransient(error)) {
        lastError = error;
        continue;
      }
      return failed(resource, error);
    }
  }
  return failed(resource, lastError, `gave up after ${maxAttempts} attempts`);
}

function describeError(error: unknown): string {
  if (error instanceof ApiException || error instanceof KubeApiError) return toKubeApiError(error).message;
  if (error instanceof Error) return typeof (error as { code?: unknown }).code === 'string' ? toKubeApiError(error).message : error.message;
  return String(error);
}

function failed(resource: string, error: unknown, context?: string): MigrationOutcome {
  return {
    kind: 'failed',
    resource,
    error,
    message: `${resource}: ${context ? `${context}: ` : ''}${describeError(error)}; nothing was lost: rerun migrate (it resumes where it stopped)`,
  };
}

/**
 * For the operator: GETs the deployment through v1beta1 and migrates it when its status still has
 * legacy fields (`already-migrated` otherwise; `failed` when it no longer exists).
 */
export async function migrateIfLegacy(namespace: string, name: string, deps: MigrationDependencies): Promise<MigrationOutcome> {
  const resource = `${namespace}/${name}`;
  let object: FlinkDeploymentV1beta1 | undefined;
  try {
    object = await deps.deployments.getV1beta1(namespace, name);
  } catch (error) {
    return failed(resource, error);
  }
  if (!object) return { kind: 'failed', resource, error: undefined, message: `${resource}: not found` };
  return migrateLegacyDeployment(object, deps);
}
