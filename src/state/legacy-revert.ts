/**
 * The way back to the Apache operator: `flink-operator migrate --revert` writes each
 * FlinkDeployment's and FlinkSessionJob's status in the Apache layout again (v1beta1: internal
 * state inside `status`), from the CURRENT state ConfigMap, then deletes that ConfigMap. Written
 * once over a {@link RevertKind} (the kind's codec, StateKind and client): {@link revertDeployment},
 * {@link revertSessionJob}.
 *
 * Steps for one resource (read through v1beta1):
 * 1. status without `stateRef` and no state ConfigMap → `unchanged` (never migrated, or reverted);
 * 2. read and decode the ConfigMap (`<name>-operator-state`, `<name>.sessionjob-state` for a
 *    session job, or the one `stateRef` names); foreign,
 *    corrupt or missing while `stateRef` names it → `refused`, nothing written;
 * 3. the status already has legacy fields and no `stateRef`, and they are what step 4 would write
 *    from this ConfigMap → an earlier revert stopped after its status write: delete the ConfigMap
 *    (`resumed`); legacy fields that do not match → `refused`;
 * 4. the legacy status = {@link revertedLegacyStatus} of the state and the user-facing status;
 *    refused when the state holds an operation in flight the Apache layout cannot express (unless
 *    nothing changed since the migration: the archived original is written back, which holds it);
 * 5. PUT the v1beta1 status (locked on the resourceVersion read); only once that succeeded,
 *    DELETE the ConfigMap (after checking it is still the revision reverted from).
 *
 * Guarantees
 * - Lossless where nothing changed since the migration: when the current state and user status
 *   are the ones the archived original status decodes to, the archive is written back verbatim.
 *   Where the operator has moved on, the current state's values are written, and every legacy
 *   field whose decoded value is unchanged keeps its original text (spec strings with their
 *   envelope and number formatting, `lastStableSpec`'s firstDeployment, savepoint entries with
 *   their original enum values and nonces).
 * - The ConfigMap is deleted only after the status write landed; an interruption between the two is
 *   finished by a rerun (step 3). `dryRun` writes nothing and describes the status it would write.
 * Assumptions
 * - This operator is stopped (else it would migrate the reverted status again), and the CRD in
 *   place still declares the legacy fields (this operator's CRD does; re-apply the Apache CRD after).
 * Caveats
 * - State with no Apache counterpart is not written: `deployedFrom`, `failedUpgrade` (the Apache
 *   operator will try a failed upgrade again), `formatVersion`, `lastWriter`, `revision`.
 * - Savepoints the migration adopted from FlinkStateSnapshot resources (annotation
 *   `flink-operator.io/adopted-snapshot-savepoints`) are left out of the status history: the
 *   resources, never touched, still hold them for the Apache operator.
 * - A session job stopping by cancel (STOPPING / SUSPENDING without a pending savepoint) is an
 *   operation in flight too: the Apache layout records such a cancel with the old spec still
 *   reconciled, which the state no longer holds.
 */
import { isDeepStrictEqual } from 'node:util';
import { FLINK_DEPLOYMENT_KIND, type FlinkDeploymentV1beta1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentStatusV1, FlinkDeploymentStatusV1beta1, LegacySavepoint } from '../api/flink-deployment-status.js';
import { FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1beta1 } from '../api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1, FlinkSessionJobStatusV1beta1 } from '../api/flink-session-job-status.js';
import type { AnyInternalState, InternalState, SessionJobInternalState } from '../api/internal-state.js';
import {
  decodeLegacySessionJobStatus,
  decodeLegacyStatus,
  encodeLegacySessionJobStatus,
  encodeLegacyStatus,
  hasLegacyFields,
} from '../api/legacy-status-codec.js';
import { LegacyStatusError } from '../api/legacy-spec-codec.js';
import { isConflict, isTransient, toKubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import type { FlinkDeploymentClient, FlinkSessionJobClient } from '../kube/flink-deployment-client.js';
import { describeJsonDiff } from './json-patch-text.js';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { readAdoptedSnapshotSavepoints, readLegacyStatusArchive } from './legacy-status-archive.js';
import { assertOwnedBy, decodeStateConfigMap } from './state-configmap-codec.js';
import { FLINK_DEPLOYMENT_STATE, FLINK_SESSION_JOB_STATE, type StateKind } from './state-kinds.js';

export interface RevertDependencies {
  readonly configMaps: ConfigMapClient;
  readonly deployments: FlinkDeploymentClient;
  readonly dryRun: boolean;
}

export interface SessionJobRevertDependencies {
  readonly configMaps: ConfigMapClient;
  readonly sessionJobs: FlinkSessionJobClient;
  readonly dryRun: boolean;
}

interface OutcomeBase {
  readonly resource: string;
  readonly message: string;
}

/** The outcome of reverting one resource; `LegacyStatus` is its kind's v1beta1 status. */
export type RevertOutcome<LegacyStatus = FlinkDeploymentStatusV1beta1> =
  | (OutcomeBase & { readonly kind: 'reverted'; readonly configMapName: string; readonly verbatim: boolean })
  | (OutcomeBase & { readonly kind: 'resumed'; readonly configMapName: string })
  | (OutcomeBase & { readonly kind: 'unchanged' })
  | (OutcomeBase & { readonly kind: 'would-revert'; readonly configMapName: string; readonly diff: string; readonly status: LegacyStatus })
  | (OutcomeBase & { readonly kind: 'refused' })
  | (OutcomeBase & { readonly kind: 'failed'; readonly error: unknown });

export type SessionJobRevertOutcome = RevertOutcome<FlinkSessionJobStatusV1beta1>;

export type RevertOutcomeKind = RevertOutcome['kind'];

/** JSON-normalised copy (undefined properties dropped), for comparisons. */
function norm(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

const same = (a: unknown, b: unknown) => isDeepStrictEqual(norm(a), norm(b));

/** The state without the store's bookkeeping. */
function content(state: AnyInternalState): unknown {
  const { revision: _r, lastWriter: _w, formatVersion: _f, ...rest } = norm(state) as AnyInternalState;
  return rest;
}

/** The user-facing status without stateRef. */
function userPart<UserStatus>(status: object | undefined): UserStatus {
  const { stateRef: _s, ...rest } = (norm(status ?? {}) ?? {}) as { stateRef?: unknown };
  return rest as UserStatus;
}

/**
 * State the Apache layout cannot hold that would change what happens next (a revert would lose an
 * operation in flight): the field names, empty when none.
 */
export function inexpressibleInFlight(state: AnyInternalState): string[] {
  const out: string[] = [];
  if (state.jobIdToSubmit !== undefined) out.push(`jobIdToSubmit (a deployment of job ${state.jobIdToSubmit} is being applied)`);
  if (state.replaceJobManagerUid !== undefined) out.push('replaceJobManagerUid (a JobManager restart is in progress)');
  if (state.pendingSavepoint && !state.pendingSavepoint.triggerId) out.push('pendingSavepoint (requested, not yet accepted by Flink)');
  if (state.pendingCheckpoint && !state.pendingCheckpoint.triggerId) out.push('pendingCheckpoint (requested, not yet accepted by Flink)');
  return out;
}

/** {@link inexpressibleInFlight} for a session job: also a stop by cancel (see the module comment). */
export function inexpressibleSessionJobInFlight(state: SessionJobInternalState): string[] {
  const out = inexpressibleInFlight(state);
  if ((state.phase === 'STOPPING' || state.phase === 'SUSPENDING') && !state.pendingSavepoint)
    out.push(`phase ${state.phase} (job ${state.deployedJobId ?? '?'} is being cancelled)`);
  return out;
}

/** What reverting one kind differs in: its codec, its state ConfigMap and what it cannot express. */
interface RevertKind<Owner extends FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1, State extends AnyInternalState, UserStatus, LegacyStatus> {
  readonly ownerKind: typeof FLINK_DEPLOYMENT_KIND | typeof FLINK_SESSION_JOB_KIND;
  readonly stateKind: StateKind<State>;
  /** `spec` is the resource's (a session job's decode reads it). */
  readonly decode: (status: LegacyStatus, resource: string, configMapName: string, spec: Owner['spec']) => { state: State; userStatus: UserStatus };
  readonly encode: (state: State, userStatus: UserStatus) => LegacyStatus;
  readonly inFlight: (state: State) => string[];
}

const FLINK_DEPLOYMENT_REVERT: RevertKind<FlinkDeploymentV1beta1, InternalState, FlinkDeploymentStatusV1, FlinkDeploymentStatusV1beta1> = {
  ownerKind: FLINK_DEPLOYMENT_KIND,
  stateKind: FLINK_DEPLOYMENT_STATE,
  decode: (status, resource, configMapName) => decodeLegacyStatus(status, resource, configMapName),
  encode: encodeLegacyStatus,
  inFlight: inexpressibleInFlight,
};

const FLINK_SESSION_JOB_REVERT: RevertKind<FlinkSessionJobV1beta1, SessionJobInternalState, FlinkSessionJobStatusV1, FlinkSessionJobStatusV1beta1> = {
  ownerKind: FLINK_SESSION_JOB_KIND,
  stateKind: FLINK_SESSION_JOB_STATE,
  decode: decodeLegacySessionJobStatus,
  encode: encodeLegacySessionJobStatus,
  inFlight: inexpressibleSessionJobInFlight,
};

/**
 * `state` without the savepoints the migration adopted from FlinkStateSnapshot resources: the
 * Apache operator (snapshot resources enabled) keeps those in the resources, which are still there,
 * not in the status history; written there too, its status-history cleanup would dispose of them
 * beside the resources' own lifecycle. The status history's own entries are never in the list (the
 * migration adopts only locations the status history did not have).
 */
function withoutAdoptedSnapshotSavepoints<State extends AnyInternalState>(state: State, configMap: V1ConfigMap): State {
  const adopted = readAdoptedSnapshotSavepoints(configMap);
  if (adopted.size === 0) return state;
  return { ...state, savepointHistory: state.savepointHistory.filter((r) => !adopted.has(r.location)) };
}

/** The legacy status of `state` (see {@link revertedLegacyStatus}), for any kind. */
function revertedWith<Owner extends FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1, State extends AnyInternalState, UserStatus, LegacyStatus>(
  kind: RevertKind<Owner, State, UserStatus, LegacyStatus>,
  state: State,
  userStatus: UserStatus,
  archive: string | undefined,
  resource: string,
  spec: Owner['spec'],
): { status: LegacyStatus; verbatim: boolean } {
  const user = userPart<UserStatus>(userStatus as object);
  const encoded = kind.encode(state, user);
  if (archive === undefined) return { status: encoded, verbatim: false };
  let original: LegacyStatus;
  let decoded: { state: State; userStatus: UserStatus };
  try {
    original = JSON.parse(archive) as LegacyStatus;
    decoded = kind.decode(original, resource, 'archive', spec);
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof LegacyStatusError) return { status: encoded, verbatim: false };
    throw error;
  }
  const was = decoded.state;
  if (same(content(was), content(state)) && same(userPart(decoded.userStatus as object), user)) return { status: original, verbatim: true };

  // Field by field: the original text where the decoded value is unchanged.
  const out = structuredClone(encoded) as FlinkDeploymentStatusV1beta1;
  const orig = original as FlinkDeploymentStatusV1beta1;
  const rs = out.reconciliationStatus;
  const ors = orig.reconciliationStatus;
  if (rs && ors) {
    if (
      ors.lastReconciledSpec !== undefined &&
      same(was.lastReconciledSpec, state.lastReconciledSpec) &&
      same(was.lastReconciledGeneration, state.lastReconciledGeneration) &&
      same(was.firstDeployment, state.firstDeployment)
    )
      rs.lastReconciledSpec = ors.lastReconciledSpec;
    if (ors.lastStableSpec !== undefined && same(was.lastStableSpec, state.lastStableSpec) && same(was.lastStableGeneration, state.lastStableGeneration))
      rs.lastStableSpec = ors.lastStableSpec;
    if (ors.reconciliationTimestamp !== undefined && same(was.reconciliationTimestamp, state.reconciliationTimestamp))
      rs.reconciliationTimestamp = ors.reconciliationTimestamp;
  }
  const osp = orig.jobStatus?.savepointInfo;
  const sp = out.jobStatus?.savepointInfo;
  if (sp && osp) {
    const originals = osp.savepointHistory ?? [];
    const key = (s: LegacySavepoint) => `${s.location ?? ''}\u0000${s.timeStamp ?? 0}`;
    sp.savepointHistory = (sp.savepointHistory ?? []).map((entry, i) => {
      const candidate = originals.find((o) => key(o) === key(entry));
      const record = state.savepointHistory[i];
      const wasRecord = was.savepointHistory.find((r) => record && r.location === record.location && r.timeStamp === record.timeStamp);
      return candidate && wasRecord && same(wasRecord, record) ? structuredClone(candidate) : entry;
    });
    if (sp.lastSavepoint && osp.lastSavepoint && key(sp.lastSavepoint) === key(osp.lastSavepoint)) sp.lastSavepoint = structuredClone(osp.lastSavepoint);
  }
  const ocp = orig.jobStatus?.checkpointInfo;
  const cp = out.jobStatus?.checkpointInfo;
  if (
    cp &&
    ocp?.lastCheckpoint !== undefined &&
    same(was.lastPeriodicCheckpointTimestamp, state.lastPeriodicCheckpointTimestamp) &&
    same(was.pendingCheckpoint, state.pendingCheckpoint) &&
    same(was.lastCheckpoint, state.lastCheckpoint)
  )
    cp.lastCheckpoint = structuredClone(ocp.lastCheckpoint);
  return { status: out as LegacyStatus, verbatim: false };
}

/**
 * The Apache-layout status for `state` and the user-facing `userStatus` (encodeLegacyStatus), with
 * the original text of every legacy field whose value did not change since the migration taken
 * from `archive` (the original status JSON), or the archive itself when nothing changed.
 */
export function revertedLegacyStatus(
  state: InternalState,
  userStatus: FlinkDeploymentStatusV1,
  archive: string | undefined,
  resource = '',
): { status: FlinkDeploymentStatusV1beta1; verbatim: boolean } {
  return revertedWith(FLINK_DEPLOYMENT_REVERT, state, userStatus, archive, resource, {});
}

/** {@link revertedLegacyStatus} for a session job; `spec` is its current spec (the archive is decoded with it). */
export function revertedLegacySessionJobStatus(
  state: SessionJobInternalState,
  userStatus: FlinkSessionJobStatusV1,
  archive: string | undefined,
  resource = '',
  spec: FlinkSessionJobSpec = {},
): { status: FlinkSessionJobStatusV1beta1; verbatim: boolean } {
  return revertedWith(FLINK_SESSION_JOB_REVERT, state, userStatus, archive, resource, spec);
}

function resourceOf(object: FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

function failed(resource: string, error: unknown, context: string): OutcomeBase & { readonly kind: 'failed'; readonly error: unknown } {
  return { kind: 'failed', resource, error, message: `${resource}: ${context}: ${toKubeApiError(error).message}; rerun migrate --revert (it resumes)` };
}

/** The reads and writes of the owners the revert makes. */
interface RevertOwnerClient<Owner> {
  getV1beta1(namespace: string, name: string): Promise<Owner | undefined>;
  replaceStatusV1beta1(owner: Owner): Promise<Owner>;
}

interface RevertRun<Owner extends FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1, State extends AnyInternalState, UserStatus, LegacyStatus> {
  readonly kind: RevertKind<Owner, State, UserStatus, LegacyStatus>;
  readonly configMaps: ConfigMapClient;
  readonly owners: RevertOwnerClient<Owner>;
  readonly dryRun: boolean;
}

async function revertWith<Owner extends FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1, State extends AnyInternalState, UserStatus, LegacyStatus>(
  object: Owner,
  run: RevertRun<Owner, State, UserStatus, LegacyStatus>,
  attempts: number,
): Promise<RevertOutcome<LegacyStatus>> {
  let current = object;
  for (let attempt = 1; ; attempt++) {
    try {
      return await revertOnce(current, run);
    } catch (error) {
      if (!(isConflict(error) || isTransient(error)) || attempt >= attempts) return failed(resourceOf(object), error, 'an API request failed');
      const reread = await run.owners.getV1beta1(object.metadata.namespace ?? '', object.metadata.name ?? '').catch(() => undefined);
      if (!reread || reread.metadata.uid !== object.metadata.uid)
        return failed(resourceOf(object), error, `the ${run.kind.ownerKind} was deleted or recreated`);
      current = reread;
    }
  }
}

/** Reverts one FlinkDeployment (see the module comment). Never throws for API failures. */
export async function revertDeployment(object: FlinkDeploymentV1beta1, deps: RevertDependencies, attempts = 3): Promise<RevertOutcome> {
  return revertWith(object, { kind: FLINK_DEPLOYMENT_REVERT, configMaps: deps.configMaps, owners: deps.deployments, dryRun: deps.dryRun }, attempts);
}

/** Reverts one FlinkSessionJob (see the module comment). Never throws for API failures. */
export async function revertSessionJob(object: FlinkSessionJobV1beta1, deps: SessionJobRevertDependencies, attempts = 3): Promise<SessionJobRevertOutcome> {
  return revertWith(object, { kind: FLINK_SESSION_JOB_REVERT, configMaps: deps.configMaps, owners: deps.sessionJobs, dryRun: deps.dryRun }, attempts);
}

async function revertOnce<Owner extends FlinkDeploymentV1beta1 | FlinkSessionJobV1beta1, State extends AnyInternalState, UserStatus, LegacyStatus>(
  object: Owner,
  run: RevertRun<Owner, State, UserStatus, LegacyStatus>,
): Promise<RevertOutcome<LegacyStatus>> {
  const { kind } = run;
  const resource = resourceOf(object);
  const namespace = object.metadata.namespace ?? '';
  const status = (object.status ?? {}) as LegacyStatus & (FlinkDeploymentStatusV1beta1 | FlinkSessionJobStatusV1beta1);
  const ref = status.stateRef;
  const configMapName = ref?.configMapName ?? kind.stateKind.configMapName(object.metadata.name ?? '');
  const configMap = await run.configMaps.get(namespace, configMapName);
  const legacy = hasLegacyFields(status);
  if (!configMap) {
    if (!ref) {
      return {
        kind: 'unchanged',
        resource,
        message: `${resource}: no state ConfigMap and no stateRef${legacy ? ' (the status is in the Apache layout already)' : ''}; nothing to do`,
      };
    }
    return {
      kind: 'refused',
      resource,
      message: `${resource}: status.stateRef names ConfigMap ${configMapName}, which does not exist: there is no state to revert from; left untouched`,
    };
  }
  let state: State;
  try {
    assertOwnedBy(configMap, object, kind.stateKind);
    state = withoutAdoptedSnapshotSavepoints(decodeStateConfigMap(configMap, kind.stateKind), configMap);
  } catch (error) {
    return { kind: 'refused', resource, message: `${resource}: ${(error as Error).message}; left untouched` };
  }
  const archive = readLegacyStatusArchive(configMap);

  if (legacy && !ref) {
    // An earlier revert wrote the status and stopped before deleting the ConfigMap?
    let user: UserStatus;
    try {
      user = kind.decode(status, resource, configMapName, object.spec).userStatus;
    } catch (error) {
      return { kind: 'refused', resource, message: `${(error as Error).message}; left untouched` };
    }
    const expected = revertedWith(kind, state, user, archive, resource, object.spec).status;
    if (!same(expected, status)) {
      return {
        kind: 'refused',
        resource,
        message:
          `${resource}: the status already has Apache operator fields that differ from ConfigMap ${configMapName} (is the Apache operator running?); ` +
          `left untouched: delete the ConfigMap to keep the status, or remove the legacy status fields and rerun`,
      };
    }
    if (run.dryRun) {
      return {
        kind: 'would-revert',
        resource,
        configMapName,
        status,
        diff: `ConfigMap ${namespace}/${configMapName}: delete (the status was already written back)`,
        message: `${resource}: would finish an interrupted revert by deleting ConfigMap ${configMapName}`,
      };
    }
    await run.configMaps.delete(namespace, configMapName);
    return {
      kind: 'resumed',
      resource,
      configMapName,
      message: `${resource}: finished an interrupted revert (status already in the Apache layout; ConfigMap ${configMapName} deleted)`,
    };
  }

  const { status: reverted, verbatim } = revertedWith(kind, state, status as UserStatus, archive, resource, object.spec);
  // The archived original holds whatever was in flight at the migration (it is the Apache layout of it).
  const inFlight = verbatim ? [] : kind.inFlight(state);
  if (inFlight.length > 0) {
    return {
      kind: 'refused',
      resource,
      message:
        `${resource}: the state holds an operation in flight that the Apache operator's status cannot express: ${inFlight.join(', ')}; ` +
        `left untouched: let this operator finish it (start it, wait for inspect to show no pending operation, stop it), then rerun`,
    };
  }
  if (run.dryRun) {
    const diff = [
      `${kind.ownerKind} ${resource} status (v1beta1 PUT .../status${verbatim ? ', the archived original verbatim' : ', from the current state'}):`,
      ...describeJsonDiff(status, reverted, { prefix: 'status' }).map((l) => `  ${l}`),
      `ConfigMap ${namespace}/${configMapName} (revision ${state.revision}): delete after the status write`,
    ].join('\n');
    return {
      kind: 'would-revert',
      resource,
      configMapName,
      status: reverted,
      diff,
      message: `${resource}: would write the Apache operator status from ConfigMap ${configMapName} (revision ${state.revision}) and delete it`,
    };
  }
  await run.owners.replaceStatusV1beta1({ ...object, status: reverted });
  // The status is written: only now may the ConfigMap go (if it still is the revision reverted from).
  const again = await run.configMaps.get(namespace, configMapName);
  if (again && again.metadata?.resourceVersion !== configMap.metadata?.resourceVersion) {
    return {
      kind: 'failed',
      resource,
      error: undefined,
      message: `${resource}: status written back, but ConfigMap ${configMapName} changed meanwhile (is this operator still running?): not deleted; stop the operator and rerun`,
    };
  }
  try {
    await run.configMaps.delete(namespace, configMapName);
  } catch (error) {
    return failed(resource, error, `status written back, deleting ConfigMap ${configMapName} failed`);
  }
  return {
    kind: 'reverted',
    resource,
    configMapName,
    verbatim,
    message: `${resource}: reverted (status written in the Apache layout from ConfigMap ${configMapName} revision ${state.revision}${verbatim ? ', unchanged since the migration: the original status verbatim' : ''}; ConfigMap deleted)`,
  };
}
