/**
 * The Apache operator's status layout (v1beta1) ⇄ this operator's split (InternalState + v1 status).
 *
 * Used by the migration (`flink-operator migrate`, and the operator when it meets an unmigrated
 * resource), by the legacy-layout state store and by the benchmark. design/002-state-split.md lists
 * every field and where it goes.
 *
 * Both kinds that keep internal state are handled by one decoder and one encoder over a
 * {@link LegacyLayout}: FlinkDeployment ({@link decodeLegacyStatus}, {@link encodeLegacyStatus})
 * and FlinkSessionJob ({@link decodeLegacySessionJobStatus}, {@link encodeLegacySessionJobStatus}).
 * The Apache operator writes the same classes for both (CommonStatus, JobStatus, SavepointInfo,
 * CheckpointInfo, ReconciliationStatus); a session job's status lacks the cluster fields
 * (jobManagerDeploymentStatus, clusterInfo, taskManager), its spec strings hold a
 * FlinkSessionJobSpec, and its reconciliation state means what the Apache session-job reconciler
 * makes it mean (see {@link sessionJobPhase}).
 *
 * The Apache operator stores `reconciliationStatus.lastReconciledSpec` / `lastStableSpec` as JSON
 * strings; {@link parseLegacySpec} (legacy-spec-codec.ts) reads every format it ever wrote:
 *
 * | variant | shape | written by |
 * |---|---|---|
 * | `bare` | `{<spec>}` | v1beta1 introduction (PR #159, 2022-04) |
 * | `top-level-apiVersion` | `{<spec>, "apiVersion": "..."}` | shortly after |
 * | `resource_metadata-with-generation` | `{"spec":{…},"resource_metadata":{"apiVersion":…,"metadata":{"generation":N},"firstDeployment":b}}` | FLINK-27820 (2022-06) … PR #834 (2024-08) |
 * | `resource_metadata` | `{"spec":{…},"resource_metadata":{"apiVersion":…,"firstDeployment":b}}` | current |
 *
 * Guarantees
 * - decode never loses a value the split layout has a place for, and never guesses: malformed JSON
 *   or an impossible shape throws {@link LegacyStatusError} naming the resource and the field, and
 *   so does a session job's UPGRADING status whose situation the Apache layout leaves open.
 * - Round trip: `decode(encode(decode(x)))` deep-equals `decode(x)`, and `encode(decode(x))` has the
 *   same user-facing fields and the same specs (as objects, nulls dropped; for a session job
 *   `"parallelism":0` too, Jackson's value of an unset int) as `x`.
 * - encode writes the current Apache format (`resource_metadata`, plus `metadata.generation` when a
 *   generation is known, which current Apache readers ignore), so the result is readable by the
 *   Apache operator too.
 * Assumptions
 * - The legacy status was written by the Apache operator (or a faithful mirror such as CMF's): a
 *   pending trigger is one with a non-empty `triggerId`.
 * Caveats (values with no place in the split layout; the migration also keeps the original legacy
 * status verbatim, so nothing is lost for good)
 * - The envelope variant and `apiVersion` inside `resource_metadata` are not kept (encode writes the
 *   current format with `flink.apache.org/v1beta1`).
 * - `jobStatus.checkpointInfo.lastCheckpoint` becomes `lastCheckpoint` in the state (timeStamp,
 *   triggerType, triggerNonce) without its `formatType` (or older `checkpointType`), which the state
 *   record has no place for; encode writes it back without one (Apache reads that as UNKNOWN).
 *   The v1 `jobStatus.lastCheckpoint` is not filled by decode: status builders derive it from the
 *   state on the first pass. `savepointInfo.lastSavepoint.triggerNonce` is kept only when the same
 *   savepoint is in the history.
 * - Status keys neither layout declares (e.g. CMF's `cfkInternalState`, `cmfSync`) are dropped: a
 *   real API server prunes them anyway.
 * - On encode, state with no legacy counterpart is dropped: `formatVersion`, `lastWriter`,
 *   `jobIdToSubmit`, `replaceJobManagerUid`, `deployedFrom`, `deployedJobId` (only used when the
 *   user status has no jobId), and a pending snapshot that has no triggerId yet (an intent: the
 *   Apache layout cannot express one). The phase is written as the Apache reconciliation state
 *   (deployment-phase.ts) and read back from it and the fields that tell UPGRADING's cases apart.
 */
import { sameValue } from './canonical-json.js';
import { phaseFromReconciliationState, reconciliationStateOfPhase } from './deployment-phase.js';
import type { FlinkSessionJobSpec } from './flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1, FlinkSessionJobStatusV1beta1 } from './flink-session-job-status.js';
import { FLINK_SESSION_JOB_KIND } from './flink-session-job.js';
import {
  CHECKPOINT_TYPES,
  RECONCILIATION_STATES,
  type ReconciliationState,
  SAVEPOINT_FORMAT_TYPES,
  SNAPSHOT_TRIGGER_TYPES,
  type FlinkDeploymentStatusV1,
  type FlinkDeploymentStatusV1beta1,
  type JobStatusV1,
  type JobStatusV1beta1,
  type LastSavepoint,
  type LegacyCheckpoint,
  type LegacyCheckpointInfo,
  type LegacySavepoint,
  type LegacySavepointInfo,
  type LegacyReconciliationStatus,
} from './flink-deployment-status.js';
import {
  emptyInternalState,
  type AnyInternalState,
  type CheckpointRecord,
  type InternalState,
  type PendingSnapshot,
  type SavepointRecord,
  type SessionJobInternalState,
} from './internal-state.js';
import { FLINK_DEPLOYMENT_KIND } from './flink-deployment.js';
import { LegacyStatusError, parseLegacySpec, serializeLegacySpec, type LegacyOwnerKind } from './legacy-spec-codec.js';

/** The revision decode gives the state: the first revision of a ConfigMap created by migration. */
export const MIGRATED_STATE_REVISION = 1;

/** Either kind's v1beta1 status (a session job's has the same fields minus the cluster ones). */
type LegacyStatus = FlinkDeploymentStatusV1beta1 | FlinkSessionJobStatusV1beta1;

/** True when the status carries any Apache operator-internal field (so the resource still needs migration). */
export function hasLegacyFields(status: LegacyStatus | undefined): boolean {
  if (!status) return false;
  const job = status.jobStatus;
  return (
    status.reconciliationStatus !== undefined ||
    job?.upgradeSavepointPath !== undefined ||
    job?.savepointInfo !== undefined ||
    job?.checkpointInfo !== undefined
  );
}

export interface DecodedLegacyStatus {
  state: InternalState;
  userStatus: FlinkDeploymentStatusV1;
}

export interface DecodedLegacySessionJobStatus {
  state: SessionJobInternalState;
  userStatus: FlinkSessionJobStatusV1;
}

function epochMillisToRfc3339(ms: number, field: string, resource: string): string {
  const date = new Date(ms);
  if (!Number.isFinite(ms) || Number.isNaN(date.getTime())) {
    throw new LegacyStatusError(`${resource}: ${field} must be epoch milliseconds, got ${JSON.stringify(ms)}`, field);
  }
  return date.toISOString();
}

/** A legacy enum value if it is one this model knows, else UNKNOWN (the legacy schema is lenient, the state schema is not). */
function known<const T extends readonly string[]>(values: T, value: string | undefined): T[number] | undefined {
  if (value === undefined || value === null) return undefined;
  return (values as readonly string[]).includes(value) ? value : 'UNKNOWN';
}

function savepointRecordFromLegacy(sp: LegacySavepoint): SavepointRecord {
  const record: SavepointRecord = {
    location: sp.location ?? '',
    timeStamp: sp.timeStamp ?? 0,
    triggerType: known(SNAPSHOT_TRIGGER_TYPES, sp.triggerType) ?? 'UNKNOWN',
  };
  const formatType = known(SAVEPOINT_FORMAT_TYPES, sp.formatType);
  if (formatType !== undefined) record.formatType = formatType;
  if (sp.triggerNonce !== undefined && sp.triggerNonce !== null) record.triggerNonce = sp.triggerNonce;
  return record;
}

/** Apache's Checkpoint (api/status/Checkpoint.java: timeStamp defaults to 0, triggerType to UNKNOWN) as the state records it. */
function checkpointRecordFromLegacy(cp: LegacyCheckpoint): CheckpointRecord {
  const record: CheckpointRecord = { timeStamp: cp.timeStamp ?? 0, triggerType: known(SNAPSHOT_TRIGGER_TYPES, cp.triggerType) ?? 'UNKNOWN' };
  const format = known(CHECKPOINT_TYPES, cp.formatType);
  if (format) record.formatType = format;
  if (cp.triggerNonce !== undefined && cp.triggerNonce !== null) record.triggerNonce = cp.triggerNonce;
  return record;
}

function legacyCheckpointFromRecord(record: CheckpointRecord): LegacyCheckpoint {
  const out: LegacyCheckpoint = { timeStamp: record.timeStamp, triggerType: record.triggerType };
  if (record.formatType) out.formatType = record.formatType;
  if (record.triggerNonce !== undefined) out.triggerNonce = record.triggerNonce;
  return out;
}

function lastSavepointFromLegacy(sp: LegacySavepoint | undefined): LastSavepoint | undefined {
  if (!sp || sp.location === undefined || sp.location === null) return undefined;
  const out: LastSavepoint = { location: sp.location, timeStamp: sp.timeStamp ?? 0 };
  const triggerType = known(SNAPSHOT_TRIGGER_TYPES, sp.triggerType);
  if (triggerType !== undefined) out.triggerType = triggerType;
  const formatType = known(SAVEPOINT_FORMAT_TYPES, sp.formatType);
  if (formatType !== undefined) out.formatType = formatType;
  return out;
}

function pendingFrom(
  kind: 'savepoint' | 'checkpoint',
  info: LegacySavepointInfo | LegacyCheckpointInfo,
  jobId: string | undefined,
  field: string,
  resource: string,
): PendingSnapshot | undefined {
  if (typeof info.triggerId !== 'string' || info.triggerId === '') return undefined;
  if (!jobId) {
    throw new LegacyStatusError(
      `${resource}: ${field}.triggerId is set (${info.triggerId}) but status.jobStatus.jobId is missing, so the pending ${kind} cannot be followed; ` +
        `clear ${field}.triggerId if that ${kind} is no longer needed, or set jobStatus.jobId to the job it was taken of`,
      `${field}.triggerId`,
    );
  }
  const triggerType = known(SNAPSHOT_TRIGGER_TYPES, info.triggerType) ?? 'UNKNOWN';
  const pending: PendingSnapshot = {
    kind,
    triggerType,
    jobId,
    stopJob: kind === 'savepoint' && triggerType === 'UPGRADE',
    requestedAt: info.triggerTimestamp ?? 0,
    triggerId: info.triggerId,
  };
  if (kind === 'savepoint') {
    const formatType = known(SAVEPOINT_FORMAT_TYPES, info.formatType);
    if (formatType !== undefined) pending.formatType = formatType;
  } else {
    const checkpointType = known(CHECKPOINT_TYPES, info.formatType);
    if (checkpointType !== undefined) pending.checkpointType = checkpointType;
  }
  return pending;
}

const USER_JOB_STATUS_KEYS = ['jobName', 'jobId', 'state', 'startTime', 'updateTime'] as const;

function copyKeys<T extends object>(from: T | undefined, keys: readonly string[]): Partial<T> {
  const out: Record<string, unknown> = {};
  if (!from) return out as Partial<T>;
  const source = from as Record<string, unknown>;
  for (const key of keys) if (source[key] !== undefined) out[key] = structuredClone(source[key]);
  return out as Partial<T>;
}

/**
 * What the two kinds' Apache statuses differ in. `State` is the kind's internal state; the decoder
 * and encoder below are written once over it.
 */
interface LegacyLayout<State extends AnyInternalState> {
  readonly ownerKind: LegacyOwnerKind;
  /** The user-facing top-level status keys, copied as they are (jobStatus aside). */
  readonly userStatusKeys: readonly string[];
  /** The spec as the state holds it, from the parsed (nulls dropped) legacy spec. */
  readonly specFromLegacy: (spec: NonNullable<State['lastReconciledSpec']>) => NonNullable<State['lastReconciledSpec']>;
  /**
   * Sets `state.phase` (and whatever the phase implies) from the Apache reconciliation state and
   * the decoded fields; throws LegacyStatusError for a status whose meaning cannot be told.
   */
  readonly decodePhase: (reconciliationState: ReconciliationState, state: State, status: LegacyStatus, resource: string) => void;
}

/** The phase by deployment-phase.ts from the decoded fields; `finished`: the Apache status says the job is over for good. */
function phaseOfDecoded(reconciliationState: ReconciliationState, state: AnyInternalState, finished: boolean): AnyInternalState['phase'] {
  return phaseFromReconciliationState(reconciliationState, {
    lastReconciledSpec: state.lastReconciledSpec,
    lastStableSpec: state.lastStableSpec,
    deployedJobId: state.deployedJobId,
    pendingSavepoint: state.pendingSavepoint,
    reconciledIsStable: state.lastStableSpec !== undefined && sameValue(state.lastStableSpec, state.lastReconciledSpec),
    finishedAndShutDown: finished,
  });
}

function decodePhaseOfDeployment(reconciliationState: ReconciliationState, state: InternalState, status: LegacyStatus): void {
  const jobManagerGone = (status as FlinkDeploymentStatusV1beta1).jobManagerDeploymentStatus === 'MISSING';
  state.phase = phaseOfDecoded(reconciliationState, state, status.jobStatus?.state === 'FINISHED' && jobManagerGone);
}

const FLINK_DEPLOYMENT_LAYOUT: LegacyLayout<InternalState> = {
  ownerKind: FLINK_DEPLOYMENT_KIND,
  userStatusKeys: ['observedGeneration', 'lifecycleState', 'jobManagerDeploymentStatus', 'error', 'clusterInfo', 'taskManager', 'conditions'],
  specFromLegacy: (spec) => spec,
  decodePhase: decodePhaseOfDeployment,
};

/**
 * A session job's phase. The Apache session-job reconciler (1.10 – 1.13,
 * op/reconciler/deployment/AbstractJobReconciler.reconcileSpecChange with
 * op/reconciler/sessionjob/SessionJobReconciler) leaves `UPGRADING` in these situations, told apart
 * by the reconciled spec's job.state and `jobStatus.jobId`:
 *
 * | reconciled job.state | jobStatus.jobId | jobStatus.state | situation | phase |
 * |---|---|---|---|---|
 * | running | set | (CANCELLING) | an asynchronous cancel (stateless / last-state upgrade or suspend) not yet seen to end; the checkpoint to restore from is recorded only once it has | refused |
 * | suspended | set | CANCELED, CANCELLING | either the cancelled job (before the redeploy) or the id of the new one (`SessionJobReconciler.deploy` patches it before submitting) | refused |
 * | suspended | set | other / none | the id `deploy` recorded before submitting (a first attempt, or the redeploy after a stop-with-savepoint, which clears the old id) | DEPLOYING, `jobIdToSubmit` = that id |
 * | suspended | – | | stopped for an upgrade (a stop-with-savepoint is synchronous for session jobs; a user suspend is recorded DEPLOYED), the redeploy restores from `upgradeSavepointPath` | STOPPED |
 *
 * DEPLOYING adopts the id when the session cluster lists it and submits it otherwise: what the
 * Apache operator does on restart (op/observer/sessionjob/FlinkSessionJobObserver.checkIfAlreadyUpgraded
 * adopts a listed job that is not CANCELLING/CANCELED), never a second job under another id. A
 * pending stop-with-savepoint and every other reconciliation state are read as for FlinkDeployments
 * (deployment-phase.ts), with a FINISHED job under DEPLOYED as FINISHED (a session job has no
 * JobManager of its own to shut down).
 */
function sessionJobPhase(reconciliationState: ReconciliationState, state: SessionJobInternalState, status: LegacyStatus, resource: string): void {
  const job = status.jobStatus ?? {};
  const reconciled = state.lastReconciledSpec;
  if (reconciliationState === 'UPGRADING' && reconciled && !state.pendingSavepoint?.stopJob) {
    const suspended = reconciled.job?.state === 'suspended';
    if (job.jobId && !suspended) {
      throw new LegacyStatusError(
        `${resource}: job ${job.jobId} is being cancelled for an upgrade or suspend (status.reconciliationStatus.state UPGRADING with a running lastReconciledSpec, jobStatus.state ${job.state ?? 'unset'}); ` +
          'the checkpoint to restore from is recorded only once the cancel is seen to end, so migrate cannot carry the upgrade on: ' +
          'start the Apache operator again until lifecycleState is DEPLOYED, STABLE or SUSPENDED, stop it, then rerun migrate',
        'status.reconciliationStatus.state',
      );
    }
    if (job.jobId && (job.state === 'CANCELED' || job.state === 'CANCELLING')) {
      throw new LegacyStatusError(
        `${resource}: status.jobStatus.jobId ${job.jobId} is either the job cancelled for the upgrade or the one the Apache operator was about to submit ` +
          `(status.reconciliationStatus.state UPGRADING, jobStatus.state ${job.state}); migrate cannot tell which. Look it up on the session cluster (GET /jobs/${job.jobId}): ` +
          'if it runs, set status.jobStatus.state to RUNNING; if it is CANCELED or unknown, remove status.jobStatus.jobId; then rerun migrate',
        'status.jobStatus.jobId',
      );
    }
    if (job.jobId) {
      state.phase = 'DEPLOYING';
      state.jobIdToSubmit = job.jobId;
      delete state.deployedJobId;
      return;
    }
    if (suspended) {
      state.phase = 'STOPPED';
      return;
    }
  }
  state.phase = phaseOfDecoded(reconciliationState, state, job.state === 'FINISHED');
}

/**
 * Apache's JobSpec.parallelism is a Java int: Jackson writes 0 when it is unset, and 0 means "not
 * set" to the Apache operator (op/service/AbstractFlinkService submits a session job with
 * `parallelism > 0 ? parallelism : null`); the state holds it as absent.
 */
function sessionJobSpecFromLegacy(spec: FlinkSessionJobSpec): FlinkSessionJobSpec {
  if (spec.job?.parallelism !== 0) return spec;
  const { parallelism: _unset, ...job } = spec.job;
  return { ...spec, job };
}

const FLINK_SESSION_JOB_LAYOUT: LegacyLayout<SessionJobInternalState> = {
  ownerKind: FLINK_SESSION_JOB_KIND,
  userStatusKeys: ['observedGeneration', 'lifecycleState', 'error', 'conditions'],
  specFromLegacy: sessionJobSpecFromLegacy,
  decodePhase: sessionJobPhase,
};

/** The user status of either kind as the codec handles it (jobStatus and stateRef are alike). */
interface AnyUserStatus {
  jobStatus?: JobStatusV1;
  stateRef?: { configMapName: string; revision: number };
}

function decodeWithLayout<State extends AnyInternalState, UserStatus extends AnyUserStatus>(
  layout: LegacyLayout<State>,
  status: LegacyStatus,
  resource: string,
  configMapName: string,
): { state: State; userStatus: UserStatus } {
  type Spec = NonNullable<State['lastReconciledSpec']>;
  const state = { ...emptyInternalState(), revision: MIGRATED_STATE_REVISION } as State;
  const rs: LegacyReconciliationStatus = status.reconciliationStatus ?? {};
  let reconciliationState: ReconciliationState = 'UPGRADING';
  if (rs.state !== undefined) {
    if (!(RECONCILIATION_STATES as readonly string[]).includes(rs.state)) {
      throw new LegacyStatusError(
        `${resource}: status.reconciliationStatus.state is ${JSON.stringify(rs.state)}, not one of ${RECONCILIATION_STATES.join(', ')}; set it to the state the last reconcile reached (UPGRADING when unsure)`,
        'status.reconciliationStatus.state',
      );
    }
    reconciliationState = rs.state;
  }
  if (rs.reconciliationTimestamp !== undefined && rs.reconciliationTimestamp !== null) {
    state.reconciliationTimestamp = epochMillisToRfc3339(rs.reconciliationTimestamp, 'status.reconciliationStatus.reconciliationTimestamp', resource);
  }
  if (typeof rs.lastReconciledSpec === 'string' && rs.lastReconciledSpec !== '') {
    const env = parseLegacySpec<Spec>(rs.lastReconciledSpec, 'status.reconciliationStatus.lastReconciledSpec', resource, layout.ownerKind);
    state.lastReconciledSpec = layout.specFromLegacy(env.spec);
    // Since Apache PR #834 the generation is no longer in the envelope: status.observedGeneration,
    // written together with lastReconciledSpec (FLINK-33803), is the generation of that spec.
    const generation = env.generation ?? status.observedGeneration;
    if (generation !== undefined && generation !== null) state.lastReconciledGeneration = generation;
    if (env.firstDeployment !== undefined) state.firstDeployment = env.firstDeployment;
  }
  if (typeof rs.lastStableSpec === 'string' && rs.lastStableSpec !== '') {
    const env = parseLegacySpec<Spec>(rs.lastStableSpec, 'status.reconciliationStatus.lastStableSpec', resource, layout.ownerKind);
    state.lastStableSpec = layout.specFromLegacy(env.spec);
    if (env.generation !== undefined) state.lastStableGeneration = env.generation;
    if (env.firstDeployment !== undefined) state.lastStableFirstDeployment = env.firstDeployment;
  }

  const job: JobStatusV1beta1 = status.jobStatus ?? {};
  if (typeof job.upgradeSavepointPath === 'string') state.upgradeSavepointPath = job.upgradeSavepointPath;
  if (job.jobId) state.deployedJobId = job.jobId;
  const sp = job.savepointInfo;
  if (sp) {
    state.savepointHistory = (sp.savepointHistory ?? []).map(savepointRecordFromLegacy);
    if (sp.lastPeriodicSavepointTimestamp !== undefined && sp.lastPeriodicSavepointTimestamp !== null)
      state.lastPeriodicSavepointTimestamp = sp.lastPeriodicSavepointTimestamp;
    const pending = pendingFrom('savepoint', sp, job.jobId, 'status.jobStatus.savepointInfo', resource);
    if (pending) state.pendingSavepoint = pending;
  }
  const cp = job.checkpointInfo;
  if (cp) {
    if (cp.lastPeriodicCheckpointTimestamp !== undefined && cp.lastPeriodicCheckpointTimestamp !== null)
      state.lastPeriodicCheckpointTimestamp = cp.lastPeriodicCheckpointTimestamp;
    // Apache writes `lastCheckpoint: null` until the operator has taken one.
    if (cp.lastCheckpoint !== undefined && cp.lastCheckpoint !== null) state.lastCheckpoint = checkpointRecordFromLegacy(cp.lastCheckpoint);
    const pending = pendingFrom('checkpoint', cp, job.jobId, 'status.jobStatus.checkpointInfo', resource);
    if (pending) state.pendingCheckpoint = pending;
  }

  layout.decodePhase(reconciliationState, state, status, resource);

  const userStatus = copyKeys(status, layout.userStatusKeys) as UserStatus;
  if (status.jobStatus !== undefined) {
    const jobStatus: JobStatusV1 = copyKeys(job, USER_JOB_STATUS_KEYS);
    const lastSavepoint = job.lastSavepoint ? structuredClone(job.lastSavepoint) : lastSavepointFromLegacy(sp?.lastSavepoint);
    if (lastSavepoint) jobStatus.lastSavepoint = lastSavepoint;
    // A jobStatus holding only legacy bookkeeping has nothing for users.
    if (Object.keys(jobStatus).length > 0) userStatus.jobStatus = jobStatus;
  }
  userStatus.stateRef = { configMapName, revision: state.revision };
  return { state, userStatus };
}

/**
 * Splits a v1beta1 (Apache layout) status into the internal state and the v1 user status.
 *
 * - userStatus: the user-facing fields exactly as they were, `jobStatus.lastSavepoint` from
 *   `jobStatus.lastSavepoint` or else `savepointInfo.lastSavepoint`, and `stateRef = {configMapName,
 *   revision: state.revision}`.
 * - state: reconciliation state (Apache's default UPGRADING when absent) and timestamp (epoch ms →
 *   RFC 3339), both specs as objects with their generation (lastReconciledSpec: from its envelope,
 *   else status.observedGeneration) and firstDeployment, upgradeSavepointPath,
 *   pending savepoint/checkpoint (legacy trigger fields with a triggerId; jobId from jobStatus.jobId),
 *   savepoint history, periodic timestamps, lastCheckpoint (from checkpointInfo.lastCheckpoint),
 *   deployedJobId = jobStatus.jobId;
 *   revision {@link MIGRATED_STATE_REVISION}.
 *
 * @param resource `namespace/name`, for error messages.
 * @throws LegacyStatusError for a malformed spec string or timestamp, or a pending trigger without a job id.
 */
export function decodeLegacyStatus(status: FlinkDeploymentStatusV1beta1, resource: string, configMapName: string): DecodedLegacyStatus {
  return decodeWithLayout<InternalState, FlinkDeploymentStatusV1>(FLINK_DEPLOYMENT_LAYOUT, status, resource, configMapName);
}

/**
 * {@link decodeLegacyStatus} for a FlinkSessionJob: the same fields (no cluster ones), specs as
 * FlinkSessionJobSpecs (`parallelism: 0` read as unset), the phase by {@link sessionJobPhase}.
 * `spec` is the resource's current spec: a pending MANUAL savepoint answers its
 * `job.savepointTriggerNonce` (the Apache layout does not record the nonce with the trigger; its
 * observer acknowledges the spec's nonce when the savepoint completes,
 * op/observer/SnapshotObserver.observeTriggeredSavepoint), so it is recorded with the pending one
 * and acknowledged on completion instead of asked for again.
 *
 * @throws LegacyStatusError as decodeLegacyStatus, and for an UPGRADING status whose meaning
 *   cannot be told (see sessionJobPhase).
 */
export function decodeLegacySessionJobStatus(
  status: FlinkSessionJobStatusV1beta1,
  resource: string,
  configMapName: string,
  spec?: FlinkSessionJobSpec,
): DecodedLegacySessionJobStatus {
  const decoded = decodeWithLayout<SessionJobInternalState, FlinkSessionJobStatusV1>(FLINK_SESSION_JOB_LAYOUT, status, resource, configMapName);
  const pending = decoded.state.pendingSavepoint;
  const nonce = spec?.job?.savepointTriggerNonce;
  if (pending?.triggerType === 'MANUAL' && nonce !== undefined && nonce !== null) pending.triggerNonce = nonce;
  return decoded;
}

function legacySavepointFromRecord(record: SavepointRecord): LegacySavepoint {
  const out: LegacySavepoint = { timeStamp: record.timeStamp, location: record.location, triggerType: record.triggerType };
  if (record.formatType !== undefined) out.formatType = record.formatType;
  if (record.triggerNonce !== undefined) out.triggerNonce = record.triggerNonce;
  return out;
}

/** What encoding needs of a layout (nothing that depends on the state's spec type). */
type LegacyEncoding = Pick<LegacyLayout<AnyInternalState>, 'ownerKind' | 'userStatusKeys'>;

function encodeWithLayout<LegacyOut extends LegacyStatus>(layout: LegacyEncoding, state: AnyInternalState, userStatus: AnyUserStatus): LegacyOut {
  const out = copyKeys(userStatus, layout.userStatusKeys) as LegacyOut;
  const user = userStatus.jobStatus;
  const job: JobStatusV1beta1 = copyKeys(user, USER_JOB_STATUS_KEYS);
  if (job.jobId === undefined && state.deployedJobId !== undefined) job.jobId = state.deployedJobId;
  if (state.upgradeSavepointPath !== undefined) job.upgradeSavepointPath = state.upgradeSavepointPath;

  const savepointInfo: LegacySavepointInfo = { savepointHistory: state.savepointHistory.map(legacySavepointFromRecord) };
  if (user?.lastSavepoint) {
    const last: LegacySavepoint = { ...structuredClone(user.lastSavepoint) };
    const same = state.savepointHistory.find((r) => r.location === last.location && r.timeStamp === last.timeStamp);
    if (same?.triggerNonce !== undefined) last.triggerNonce = same.triggerNonce;
    savepointInfo.lastSavepoint = last;
  }
  if (state.lastPeriodicSavepointTimestamp !== undefined) savepointInfo.lastPeriodicSavepointTimestamp = state.lastPeriodicSavepointTimestamp;
  const ps = state.pendingSavepoint;
  if (ps?.triggerId) {
    savepointInfo.triggerId = ps.triggerId;
    savepointInfo.triggerTimestamp = ps.requestedAt;
    savepointInfo.triggerType = ps.triggerType;
    if (ps.formatType !== undefined) savepointInfo.formatType = ps.formatType;
  }
  job.savepointInfo = savepointInfo;

  const checkpointInfo: LegacyCheckpointInfo = {};
  if (state.lastCheckpoint !== undefined) checkpointInfo.lastCheckpoint = legacyCheckpointFromRecord(state.lastCheckpoint);
  if (state.lastPeriodicCheckpointTimestamp !== undefined) checkpointInfo.lastPeriodicCheckpointTimestamp = state.lastPeriodicCheckpointTimestamp;
  const pc = state.pendingCheckpoint;
  if (pc?.triggerId) {
    checkpointInfo.triggerId = pc.triggerId;
    checkpointInfo.triggerTimestamp = pc.requestedAt;
    checkpointInfo.triggerType = pc.triggerType;
    if (pc.checkpointType !== undefined) checkpointInfo.formatType = pc.checkpointType;
  }
  job.checkpointInfo = checkpointInfo;
  out.jobStatus = job;

  const observedGeneration = (userStatus as { observedGeneration?: number }).observedGeneration;
  const rs: LegacyReconciliationStatus = { state: reconciliationStateOfPhase(state.phase) };
  if (state.reconciliationTimestamp !== undefined) rs.reconciliationTimestamp = Date.parse(state.reconciliationTimestamp);
  if (state.lastReconciledSpec !== undefined) {
    rs.lastReconciledSpec = serializeLegacySpec(
      {
        spec: state.lastReconciledSpec,
        // Written only when observedGeneration does not already say it (the current Apache format has none).
        ...(state.lastReconciledGeneration !== undefined && state.lastReconciledGeneration !== observedGeneration
          ? { generation: state.lastReconciledGeneration }
          : {}),
        ...(state.firstDeployment !== undefined ? { firstDeployment: state.firstDeployment } : {}),
      },
      layout.ownerKind,
    );
  }
  if (state.lastStableSpec !== undefined) {
    rs.lastStableSpec = serializeLegacySpec(
      {
        spec: state.lastStableSpec,
        ...(state.lastStableGeneration !== undefined ? { generation: state.lastStableGeneration } : {}),
        ...(state.lastStableFirstDeployment !== undefined ? { firstDeployment: state.lastStableFirstDeployment } : {}),
      },
      layout.ownerKind,
    );
  }
  out.reconciliationStatus = rs;
  return out;
}

/**
 * The inverse of {@link decodeLegacyStatus}: the Apache layout of a state and a user status (used
 * by the legacy-layout state store and the benchmark). `stateRef` is not written (the legacy layout
 * has no ConfigMap); see the module comment for what else has no legacy counterpart.
 */
export function encodeLegacyStatus(state: InternalState, userStatus: FlinkDeploymentStatusV1): FlinkDeploymentStatusV1beta1 {
  return encodeWithLayout<FlinkDeploymentStatusV1beta1>(FLINK_DEPLOYMENT_LAYOUT, state, userStatus);
}

/** The inverse of {@link decodeLegacySessionJobStatus}, as {@link encodeLegacyStatus} (specs in the Apache FlinkSessionJobSpec field order). */
export function encodeLegacySessionJobStatus(state: SessionJobInternalState, userStatus: FlinkSessionJobStatusV1): FlinkSessionJobStatusV1beta1 {
  return encodeWithLayout<FlinkSessionJobStatusV1beta1>(FLINK_SESSION_JOB_LAYOUT, state, userStatus);
}
