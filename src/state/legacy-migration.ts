/**
 * Migration of one FlinkDeployment or FlinkSessionJob from the Apache operator's status layout
 * (v1beta1: internal state inside `status`) to the split layout (companion ConfigMap
 * `<name>-operator-state`, for a session job `<name>.sessionjob-state`, + a user-facing status with
 * `stateRef`). Used by `flink-operator migrate` and by the operator itself when it meets a legacy
 * status with no ConfigMap: the same function, so both produce the same result. The steps are
 * written once, over a {@link MigrationKind} (the kind's codec, its StateKind and its client):
 * {@link migrateLegacyDeployment} / {@link migrateIfLegacy} for FlinkDeployments,
 * {@link migrateLegacySessionJob} / {@link migrateIfLegacySessionJob} for FlinkSessionJobs.
 *
 * Steps (design/008-migration.md):
 * 1. no legacy field in the status → `already-migrated`, nothing written;
 * 2. decode the legacy status (legacy-status-codec.ts); malformed → `refused`, naming the resource and
 *    the field, nothing written;
 * 3. the state = the decoded state, encoded by the operator's own codec (ownerReference to the
 *    owner's uid and kind, labels, annotations, writer = `deps.writer`): the operator takes the ConfigMap
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
 * - A 409 / transient failure re-reads the resource and starts over, at most `maxAttempts` times
 *   (then `failed`). A lost answer to the POST is handled by the same path (the rerun finds the
 *   ConfigMap with the same content and resumes).
 * - `writer` fencing: the ConfigMap is stamped with `writer`; the CLI uses leaseTransitions 0, so any
 *   operator leader may write it afterwards.
 * - A session job's legacy status is decoded with its current spec (decodeLegacySessionJobStatus:
 *   a pending manual savepoint answers the spec's nonce), so a spec edit between the read and the
 *   status write is a 409 like any other and the rerun plans again.
 * - With `deps.snapshots`, the Apache operator's FlinkStateSnapshot resources naming the owner are
 *   listed after step 1 and their completed savepoints merged into the state's savepointHistory
 *   (snapshot-history-adoption.ts); the resources are never written. A rerun lists them again, so
 *   an interrupted run resumes only if they are unchanged (else `refused`, as for a changed status).
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_KIND, type FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentStatusV1 } from '../api/flink-deployment-status.js';
import { FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1beta1 } from '../api/flink-session-job.js';
import type { FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import type { FlinkSessionJobStatusV1 } from '../api/flink-session-job-status.js';
import { INTERNAL_STATE_FORMAT_VERSION, type AnyInternalState, type InternalState, type SessionJobInternalState } from '../api/internal-state.js';
import { decodeLegacySessionJobStatus, decodeLegacyStatus, hasLegacyFields } from '../api/legacy-status-codec.js';
import { LegacyStatusError } from '../api/legacy-spec-codec.js';
import { describeJsonDiff } from './json-patch-text.js';
import { isConflict, isTransient, KubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import type { FlinkDeploymentClient, FlinkSessionJobClient } from '../kube/flink-deployment-client.js';
import type { FlinkStateSnapshotLister } from '../kube/flink-state-snapshot-client.js';
import type { FencingToken } from '../runtime/fencing-token.js';
import { assertOwnedBy, decodeStateConfigMap, encodeStateConfigMap } from './state-configmap-codec.js';
import { CorruptStateError, ForeignStateError, StateTooLargeError } from './state-errors.js';
import { FLINK_DEPLOYMENT_STATE, FLINK_SESSION_JOB_STATE, type StateKind } from './state-kinds.js';
import { failed, finished, withAdoption, type MigrationOutcome } from './legacy-migration-outcome.js';
import {
  ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION,
  LEGACY_STATUS_ANNOTATION,
  legacyStatusAnnotations,
  legacyStatusArchiveOf,
  readLegacyStatusArchive,
} from './legacy-status-archive.js';
import { adoptSnapshots, describeAdoptedRecords, NO_SNAPSHOT_CRD, type SnapshotAdoption } from './snapshot-history-adoption.js';

/** What a migration run needs besides the owners' client (the same for both kinds). */
export interface MigrationSettings {
  readonly configMaps: ConfigMapClient;
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
  /** Lists the namespace's FlinkStateSnapshots to adopt their savepoints; absent: the status history only. */
  readonly snapshots?: FlinkStateSnapshotLister;
}

export interface MigrationDependencies extends MigrationSettings {
  readonly deployments: FlinkDeploymentClient;
}

export interface SessionJobMigrationDependencies extends MigrationSettings {
  readonly sessionJobs: FlinkSessionJobClient;
}

/** The writer identity of `flink-operator migrate` (term 0: never fences out an operator leader). */
export const MIGRATE_COMMAND_WRITER: FencingToken = { holderIdentity: 'flink-operator-migrate', leaseTransitions: 0 };

/** The state the migration writes for a legacy status, plus the v1 status (stateRef.revision still the state's). */
export interface MigrationPlan<State extends AnyInternalState = InternalState, UserStatus = FlinkDeploymentStatusV1> {
  readonly state: State;
  readonly userStatus: UserStatus;
  /** The ConfigMap to create, archive annotation included. */
  readonly configMap: V1ConfigMap;
  /** The original status JSON (see {@link legacyStatusArchiveOf}). */
  readonly archive: string;
  /** InternalState fields decoded from the legacy status that the ConfigMap format does not hold (kept in the archive only). */
  readonly archiveOnly: readonly string[];
  /** The FlinkStateSnapshot savepoints merged into the history (undefined: none were listed). */
  readonly adoption?: SnapshotAdoption;
}

/** The FlinkStateSnapshots of the owner's namespace as listed, or `crd-not-installed` (the list was a 404). */
export type ListedSnapshots = readonly FlinkStateSnapshot[] | 'crd-not-installed';

/** A v1beta1 object of either kind, as read through the v1beta1 endpoint. */
type LegacyOwner = FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1;

/** The reads and writes of the owners the migration makes (both kinds' clients have them). */
interface LegacyOwnerClient<Owner extends LegacyOwner> {
  getV1beta1(namespace: string, name: string): Promise<Owner | undefined>;
  replaceStatusV1beta1(owner: Owner): Promise<Owner>;
}

/** What the migration of one kind differs in: its codec and its state ConfigMap. */
interface MigrationKind<Owner extends LegacyOwner, State extends AnyInternalState, UserStatus> {
  readonly ownerKind: typeof FLINK_DEPLOYMENT_KIND | typeof FLINK_SESSION_JOB_KIND;
  readonly stateKind: StateKind<State>;
  /** The legacy status of `object` split into state and user status (throws LegacyStatusError). */
  readonly decode: (object: Owner, resource: string, configMapName: string) => { state: State; userStatus: UserStatus };
}

const FLINK_DEPLOYMENT_MIGRATION: MigrationKind<FlinkDeploymentV1beta1, InternalState, FlinkDeploymentStatusV1> = {
  ownerKind: FLINK_DEPLOYMENT_KIND,
  stateKind: FLINK_DEPLOYMENT_STATE,
  decode: (object, resource, configMapName) => decodeLegacyStatus(object.status ?? {}, resource, configMapName),
};

const FLINK_SESSION_JOB_MIGRATION: MigrationKind<FlinkSessionJobV1beta1, SessionJobInternalState, FlinkSessionJobStatusV1> = {
  ownerKind: FLINK_SESSION_JOB_KIND,
  stateKind: FLINK_SESSION_JOB_STATE,
  decode: (object, resource, configMapName) => decodeLegacySessionJobStatus(object.status ?? {}, resource, configMapName, object.spec),
};

/** The migration of one kind with its owners' client: what the steps below run on. */
interface MigrationRun<Owner extends LegacyOwner, State extends AnyInternalState, UserStatus> extends MigrationSettings {
  readonly kind: MigrationKind<Owner, State, UserStatus>;
  readonly owners: LegacyOwnerClient<Owner>;
}

/**
 * Fields that may be kept in the archive only: `lastStableFirstDeployment` only serves a faithful
 * encoding back to the Apache layout (the Apache operator tests stability by string equality).
 */
const ARCHIVE_ONLY_TOLERATED: readonly string[] = ['lastStableFirstDeployment'];

function resourceOf(object: LegacyOwner): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/** Decodes the legacy status and encodes the ConfigMap the migration would create (pure); see {@link planMigration}. */
function planWith<Owner extends LegacyOwner, State extends AnyInternalState, UserStatus>(
  kind: MigrationKind<Owner, State, UserStatus>,
  object: Owner,
  deps: Pick<MigrationSettings, 'writer' | 'compressThresholdBytes' | 'maxTotalBytes'>,
  snapshots?: ListedSnapshots,
): MigrationPlan<State, UserStatus> {
  const name = object.metadata.name ?? '';
  const decoded = kind.decode(object, resourceOf(object), kind.stateKind.configMapName(name));
  let adoption: SnapshotAdoption | undefined;
  let savepointHistory = decoded.state.savepointHistory;
  if (snapshots === 'crd-not-installed') adoption = NO_SNAPSHOT_CRD;
  else if (snapshots !== undefined) ({ history: savepointHistory, adoption } = adoptSnapshots(snapshots, kind.ownerKind, name, savepointHistory));
  const state: State = {
    ...decoded.state,
    savepointHistory,
    formatVersion: INTERNAL_STATE_FORMAT_VERSION,
    lastWriter: { holderIdentity: deps.writer.holderIdentity, leaseTransitions: deps.writer.leaseTransitions },
  };
  const archive = legacyStatusArchiveOf(object);
  const annotations = legacyStatusAnnotations(archive, resourceOf(object));
  if (adoption && adoption.adopted.length > 0) {
    annotations[ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION] = JSON.stringify(adoption.adopted.map((a) => a.record.location));
  }
  const encoded = encodeStateConfigMap(state, {
    deployment: object,
    kind: kind.stateKind,
    compressThresholdBytes: deps.compressThresholdBytes,
    maxTotalBytes: deps.maxTotalBytes,
  });
  // What the ConfigMap can hold: fields the codec does not carry survive only in the archive. Only
  // fields with no effect on this operator's decisions may be lost that way; anything else refuses.
  let held: State;
  try {
    held = decodeStateConfigMap(encoded.configMap, kind.stateKind);
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
  return { state: held, userStatus: decoded.userStatus, configMap, archive, archiveOnly, adoption };
}

/**
 * Decodes the legacy status of a FlinkDeployment and encodes the ConfigMap the migration would create (pure).
 * @throws LegacyStatusError (malformed legacy status), StateTooLargeError, Error (no uid)
 */
export function planMigration(
  object: FlinkDeploymentV1beta1,
  deps: Pick<MigrationSettings, 'writer' | 'compressThresholdBytes' | 'maxTotalBytes'>,
  snapshots?: ListedSnapshots,
): MigrationPlan {
  return planWith(FLINK_DEPLOYMENT_MIGRATION, object, deps, snapshots);
}

/** {@link planMigration} for a FlinkSessionJob (ConfigMap `<name>.sessionjob-state`, owned by the session job). */
export function planSessionJobMigration(
  object: FlinkSessionJobV1beta1,
  deps: Pick<MigrationSettings, 'writer' | 'compressThresholdBytes' | 'maxTotalBytes'>,
  snapshots?: ListedSnapshots,
): MigrationPlan<SessionJobInternalState, FlinkSessionJobStatusV1> {
  return planWith(FLINK_SESSION_JOB_MIGRATION, object, deps, snapshots);
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
function sameContent(a: AnyInternalState, b: AnyInternalState): boolean {
  const strip = (s: AnyInternalState) => {
    const { revision: _r, lastWriter: _w, ...rest } = JSON.parse(JSON.stringify(s)) as AnyInternalState;
    return rest;
  };
  return isDeepStrictEqual(strip(a), strip(b));
}

/** The top-level InternalState fields where two states differ (for messages). */
function differingFields(a: AnyInternalState, b: AnyInternalState): string[] {
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

function v1Status<UserStatus>(plan: MigrationPlan<AnyInternalState, UserStatus>, configMapName: string, revision: number): UserStatus {
  return { ...structuredClone(plan.userStatus), stateRef: { configMapName, revision } };
}

function dryRunDiff(ownerKind: string, object: LegacyOwner, plan: MigrationPlan<AnyInternalState, unknown>, status: unknown, createConfigMap: boolean): string {
  const ns = object.metadata.namespace ?? '';
  const lines = [`${ownerKind} ${resourceOf(object)} status (v1beta1 PUT .../status):`];
  lines.push(...describeJsonDiff(object.status ?? {}, status, { prefix: 'status' }).map((l) => `  ${l}`));
  const cmName = plan.configMap.metadata?.name ?? '';
  if (createConfigMap) {
    lines.push(`ConfigMap ${ns}/${cmName} (create, owned by ${ownerKind} uid ${object.metadata.uid ?? '?'}):`);
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
  lines.push(...describeAdoptedRecords(plan.adoption));
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
  /** What the snapshot resources gave the last attempt that planned (for an outcome found after a lost answer). */
  adoption?: SnapshotAdoption;
}

async function attemptOnce<Owner extends LegacyOwner, State extends AnyInternalState, UserStatus>(
  object: Owner,
  run: MigrationRun<Owner, State, UserStatus>,
  progress: CallProgress,
): Promise<Attempt> {
  const { kind } = run;
  const resource = resourceOf(object);
  const namespace = object.metadata.namespace ?? '';
  const name = object.metadata.name ?? '';
  const configMapName = kind.stateKind.configMapName(name);
  if (!hasLegacyFields(object.status)) {
    const ref = object.status?.stateRef;
    if (progress.statusSent && ref) {
      // our status write landed although its answer was lost
      return { done: finished(resource, ref.configMapName, ref.revision, progress.resumed, progress.adoption) };
    }
    return {
      done: {
        kind: 'already-migrated',
        resource,
        message: `${resource}: no legacy status fields${ref ? ` (state in ConfigMap ${ref.configMapName})` : ''}; nothing to do`,
      },
    };
  }

  let listed: ListedSnapshots | undefined;
  if (run.snapshots) {
    try {
      listed = (await run.snapshots.listInNamespace(namespace)) ?? 'crd-not-installed';
    } catch (error) {
      // Migrating without them would drop the savepoint history they hold: refuse, and say which permission is missing.
      if (!(error instanceof KubeApiError) || error.code !== 403) throw error;
      const message = `${resource}: may not list FlinkStateSnapshots in namespace ${namespace} (403: ${error.message}); their savepoint history would be lost, so nothing was migrated: grant list on flinkstatesnapshots.flink.apache.org (the manifests/ roles do) and run migrate again`;
      return { done: { kind: 'refused', resource, message } };
    }
  }
  let plan: MigrationPlan<State, UserStatus>;
  try {
    plan = planWith(kind, object, run, listed);
    progress.adoption = plan.adoption;
  } catch (error) {
    if (error instanceof LegacyStatusError) return { done: { kind: 'refused', resource, field: error.field, message: `${error.message}; left untouched` } };
    if (error instanceof StateTooLargeError) return { done: { kind: 'refused', resource, message: `${resource}: ${error.message}; left untouched` } };
    throw error;
  }

  let revision: number;
  let resumed: boolean;
  const existing = await run.configMaps.get(namespace, configMapName);
  if (existing) {
    let current: State;
    try {
      assertOwnedBy(existing, object, kind.stateKind);
      current = decodeStateConfigMap(existing, kind.stateKind);
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
    if (run.dryRun) {
      const status = v1Status(plan, configMapName, plan.state.revision);
      return {
        done: {
          kind: 'would-migrate',
          resource,
          configMapName,
          diff: dryRunDiff(kind.ownerKind, object, plan, status, true),
          message: withAdoption(`${resource}: would create ConfigMap ${configMapName} and rewrite the status`, plan.adoption),
          adoption: plan.adoption,
        },
      };
    }
    try {
      await run.configMaps.create(namespace, plan.configMap);
      progress.created = true;
    } catch (error) {
      // AlreadyExists: a concurrent run, or our own POST whose answer was lost: start over (resume path).
      if (isConflict(error) || isTransient(error)) return { retry: error };
      throw error;
    }
    const readBack = await run.configMaps.get(namespace, configMapName);
    const decoded = readBack ? decodeStateConfigMap(readBack, kind.stateKind) : undefined;
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
  if (run.dryRun) {
    return {
      done: {
        kind: 'would-migrate',
        resource,
        configMapName,
        diff: dryRunDiff(kind.ownerKind, object, plan, status, false),
        message: withAdoption(
          `${resource}: would finish an interrupted migration (ConfigMap ${configMapName} already written) by rewriting the status`,
          plan.adoption,
        ),
        adoption: plan.adoption,
      },
    };
  }
  progress.resumed = resumed;
  try {
    progress.statusSent = true;
    // The v1 user status is a v1beta1 status without the legacy fields.
    await run.owners.replaceStatusV1beta1({ ...object, status });
  } catch (error) {
    if (isConflict(error) || isTransient(error)) return { retry: error };
    throw error;
  }
  return { done: finished(resource, configMapName, revision, resumed, plan.adoption) };
}

/** `message` followed by what the FlinkStateSnapshot resources gave, if they were listed. */
/** The attempts of one migration call: retries after a 409 or transient failure re-read the object first. */
async function migrateWith<Owner extends LegacyOwner, State extends AnyInternalState, UserStatus>(
  object: Owner,
  run: MigrationRun<Owner, State, UserStatus>,
): Promise<MigrationOutcome> {
  const maxAttempts = Math.max(1, run.maxAttempts ?? 5);
  const retryDelayMs = run.retryDelayMs ?? 50;
  const resource = resourceOf(object);
  let current: Owner = object;
  const progress: CallProgress = { created: false, statusSent: false, resumed: false };
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (attempt > 1) {
      if (retryDelayMs > 0) await new Promise((r) => setTimeout(r, retryDelayMs * 2 ** (attempt - 2)));
      let reread: Owner | undefined;
      try {
        reread = await run.owners.getV1beta1(object.metadata.namespace ?? '', object.metadata.name ?? '');
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
          message: `${resource}: the ${run.kind.ownerKind} was deleted or recreated during the migration; nothing more written`,
        };
      }
      current = reread;
    }
    try {
      const result = await attemptOnce(current, run, progress);
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

/**
 * Migrates one FlinkDeployment read through the v1beta1 endpoint (see the module comment).
 * Never throws for API failures: they are `failed` outcomes (the caller prints one line per resource).
 */
export async function migrateLegacyDeployment(object: FlinkDeploymentV1beta1, deps: MigrationDependencies): Promise<MigrationOutcome> {
  return migrateWith(object, { ...deps, kind: FLINK_DEPLOYMENT_MIGRATION, owners: deps.deployments });
}

/** {@link migrateLegacyDeployment} for a FlinkSessionJob read through v1beta1: ConfigMap `<name>.sessionjob-state`, owned by the session job. */
export async function migrateLegacySessionJob(object: FlinkSessionJobV1beta1, deps: SessionJobMigrationDependencies): Promise<MigrationOutcome> {
  return migrateWith(object, { ...deps, kind: FLINK_SESSION_JOB_MIGRATION, owners: deps.sessionJobs });
}

/** GETs the object through v1beta1 and migrates it; `failed` when it no longer exists. */
async function migrateIfLegacyWith<Owner extends LegacyOwner, State extends AnyInternalState, UserStatus>(
  namespace: string,
  name: string,
  run: MigrationRun<Owner, State, UserStatus>,
): Promise<MigrationOutcome> {
  const resource = `${namespace}/${name}`;
  let object: Owner | undefined;
  try {
    object = await run.owners.getV1beta1(namespace, name);
  } catch (error) {
    return failed(resource, error);
  }
  if (!object) return { kind: 'failed', resource, error: undefined, message: `${resource}: not found` };
  return migrateWith(object, run);
}

/**
 * For the operator: GETs the deployment through v1beta1 and migrates it when its status still has
 * legacy fields (`already-migrated` otherwise; `failed` when it no longer exists).
 */
export async function migrateIfLegacy(namespace: string, name: string, deps: MigrationDependencies): Promise<MigrationOutcome> {
  return migrateIfLegacyWith(namespace, name, { ...deps, kind: FLINK_DEPLOYMENT_MIGRATION, owners: deps.deployments });
}

/** {@link migrateIfLegacy} for a FlinkSessionJob (the session-job reconciler's entry point). */
export async function migrateIfLegacySessionJob(namespace: string, name: string, deps: SessionJobMigrationDependencies): Promise<MigrationOutcome> {
  return migrateIfLegacyWith(namespace, name, { ...deps, kind: FLINK_SESSION_JOB_MIGRATION, owners: deps.sessionJobs });
}
