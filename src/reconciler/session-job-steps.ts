/**
 * The session-job steps (session-job-decide.ts names them): each is at most one side effect,
 * written intent → effect → result in the state ConfigMap (design/010, "The reconciler").
 *
 * | step | intent (before) | effect | result (after) |
 * |---|---|---|---|
 * | pin | DEPLOYING, new jobIdToSubmit, restore path, reconciled spec | — | — |
 * | submit | (the pin) | upload the jar, run it with jobIdToSubmit | DEPLOYED, deployedJobId |
 * | stop (savepoint) | STOPPING/SUSPENDING, pending savepoint with its trigger id | stop-with-savepoint | (follow-savepoint) |
 * | stop (cancel) | STOPPING/SUSPENDING, restore path (last-state: the newest checkpoint) | cancel | (follow-cancel) |
 * | follow-savepoint | — | (a re-send only when Flink never saw the trigger) | history + STOPPED/SUSPENDED |
 * | follow-cancel | — | cancel again while the job still runs | STOPPED/SUSPENDED |
 * | start-savepoint | pending savepoint with its trigger id | trigger | (follow-savepoint) |
 * | start-checkpoint | pending checkpoint with its trigger id | trigger | (follow-checkpoint) |
 * | follow-checkpoint | — | (a re-send only when Flink does not know the trigger) | nonce acknowledged / periodic time |
 * | release | — | the finalizer removed | — |
 *
 * Guarantees: a crash after any write leaves a state from which the next pass resolves by
 * looking: a pinned job id known to Flink is recorded, never run again; a trigger id is re-sent
 * only when Flink has no trace of it (pending-savepoint.ts), and Flink de-duplicates trigger ids.
 * The run of a jar is never retried within a pass. Checkpoints are the FlinkDeployment's steps
 * (checkpoint-steps.ts) over this pass (checkpointContext).
 * Assumptions: the state update functions here set fields from values captured before the call
 * (idempotent, as the store requires).
 */
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import { FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1 } from '../api/flink-session-job.js';
import { flattenFlinkConfiguration, savepointDirectory } from '../api/flink-configuration.js';
import type { PendingSnapshot, SessionJobInternalState } from '../api/internal-state.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { FlinkRestError, isDuplicateJobSubmission } from '../flink/flink-rest-error.js';
import { StaleLeaderError } from '../runtime/fencing-token.js';
import { NotLeaderError } from '../state/state-errors.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import { FencedOutError, type SideEffectFence } from '../runtime/side-effect-fence.js';
import type { StateUpdateFunction } from '../state/state-store.js';
import { type CheckpointJobView, type CheckpointStepContext, followCheckpoint, startCheckpoint } from './checkpoint-steps.js';
import type { DeploymentOperatorSettings } from './deployment-operator-settings.js';
import { withNonceAcknowledged } from './deployment-specs.js';
import { savepointProgress, savepointTriggerId, savepointTriggerOptions } from './pending-savepoint.js';
import { publishSnapshotResource, type SnapshotResourceStepContext } from './snapshot-resource-steps.js';
import {
  saveUserSnapshotFailure,
  withSavepointRecorded,
  withUserSnapshotCompleted,
  withUserSnapshotRefused,
  withUserSnapshotStarted,
  type SnapshotOwner,
  type UserSnapshotRequest,
} from './snapshot-resources.js';
import type { SessionJobFlinkApi, SessionJobReconcilerDependencies, SessionJobRunRequest } from './session-job-dependencies.js';
import type { SessionJobObservation, SessionJobStep } from './session-job-decide.js';

/** What a step needs: the pass's parts and its state cursor. */
export interface SessionJobStepContext {
  readonly deps: SessionJobReconcilerDependencies;
  readonly job: FlinkSessionJobV1;
  readonly cluster: FlinkDeploymentV1 | undefined;
  /** The session cluster's REST API (fenced); undefined when there is no cluster. */
  readonly api: SessionJobFlinkApi | undefined;
  readonly observed: SessionJobObservation;
  readonly fence: SideEffectFence;
  /** The settings of the job's effective configuration (the cluster's overlaid by the job's). */
  readonly settings: DeploymentOperatorSettings;
  state(): SessionJobInternalState;
  save(fn: StateUpdateFunction<SessionJobInternalState>): Promise<SessionJobInternalState>;
}

export interface SessionJobStepResult {
  requeue: 'continue' | 'progress' | 'steady';
  error?: string;
  wakeUpInMs?: number;
}

const OPERATOR_KEY_PREFIX = 'kubernetes.operator.';

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function apiOf(ctx: SessionJobStepContext): SessionJobFlinkApi {
  if (!ctx.api) throw new Error('no session cluster to call (the decision should have waited)');
  return ctx.api;
}

/** The job's flinkConfiguration as sent with the run: Flink keys only (the operator's own are read, not sent). */
function runConfiguration(spec: FlinkSessionJobSpec): Record<string, string> | undefined {
  const flat = flattenFlinkConfiguration(spec.flinkConfiguration);
  const entries = Object.entries(flat).filter(([key]) => !key.startsWith(OPERATOR_KEY_PREFIX));
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** The run request of the pinned deployment. */
export function runRequestOf(state: SessionJobInternalState): SessionJobRunRequest {
  const spec = state.lastReconciledSpec ?? {};
  const job = spec.job ?? {};
  const configuration = runConfiguration(spec);
  return {
    jobId: state.jobIdToSubmit ?? '',
    ...(job.entryClass ? { entryClass: job.entryClass } : {}),
    ...(job.args && job.args.length > 0 ? { args: job.args } : {}),
    ...(job.parallelism !== undefined ? { parallelism: job.parallelism } : {}),
    ...(state.upgradeSavepointPath ? { savepointPath: state.upgradeSavepointPath } : {}),
    ...(job.allowNonRestoredState !== undefined && job.allowNonRestoredState !== null ? { allowNonRestoredState: job.allowNonRestoredState } : {}),
    ...(configuration ? { flinkConfiguration: configuration } : {}),
  };
}

/** The result write of a submission (or of finding the pinned job already known to Flink). */
function deployed(jobId: string): StateUpdateFunction<SessionJobInternalState> {
  return (s) =>
    s.phase !== 'DEPLOYING' || s.jobIdToSubmit !== jobId
      ? s
      : {
          ...s,
          phase: 'DEPLOYED',
          deployedJobId: jobId,
          jobIdToSubmit: undefined,
          upgradeSavepointPath: undefined,
          ...(s.upgradeSavepointPath ? { deployedFrom: s.upgradeSavepointPath } : { deployedFrom: undefined }),
          firstDeployment: false,
        };
}

export async function executeSessionJobStep(ctx: SessionJobStepContext, step: SessionJobStep): Promise<SessionJobStepResult> {
  const { deps } = ctx;
  switch (step.kind) {
    case 'wait':
      return { requeue: step.requeue, ...(step.error ? { error: step.error } : {}), ...(step.wakeUpInMs !== undefined ? { wakeUpInMs: step.wakeUpInMs } : {}) };
    case 'gather-checkpoint':
      return { requeue: 'progress', error: 'Could not learn the newest checkpoint for a last-state upgrade' };
    case 'pin': {
      const jobId = deps.newJobId();
      const at = rfc3339(deps.now());
      await ctx.save((s) => ({
        ...s,
        phase: 'DEPLOYING',
        jobIdToSubmit: jobId,
        upgradeSavepointPath: step.restoreFrom,
        lastReconciledSpec: step.spec,
        lastReconciledGeneration: step.generation,
        reconciliationTimestamp: at,
        deployedJobId: undefined,
        failedUpgrade: undefined,
        firstDeployment: s.firstDeployment ?? true,
      }));
      return { requeue: 'continue' };
    }
    case 'submit':
      return submit(ctx);
    case 'record-submitted':
      await ctx.save(deployed(ctx.state().jobIdToSubmit ?? ''));
      return { requeue: 'continue' };
    case 'record-running':
      await ctx.save((s) =>
        s.phase !== 'DEPLOYED' ? s : { ...s, phase: 'RUNNING', lastStableSpec: s.lastReconciledSpec, lastStableGeneration: s.lastReconciledGeneration },
      );
      return { requeue: 'steady' };
    case 'acknowledge':
      await ctx.save((s) => ({
        ...s,
        lastReconciledSpec: step.spec,
        lastReconciledGeneration: step.generation,
        // Nothing is resubmitted: while it runs, the running spec stays the stable one, now under this generation.
        ...(s.phase === 'RUNNING' ? { lastStableSpec: step.spec, lastStableGeneration: step.generation } : {}),
      }));
      return { requeue: 'continue' };
    case 'record-finished':
      await ctx.save((s) => ({ ...s, phase: 'FINISHED' }));
      return { requeue: 'steady' };
    case 'record-suspended': {
      const at = rfc3339(deps.now());
      await ctx.save((s) => ({
        ...s,
        phase: 'SUSPENDED',
        lastReconciledSpec: step.spec,
        lastReconciledGeneration: step.generation,
        reconciliationTimestamp: at,
        deployedJobId: undefined,
      }));
      return { requeue: 'steady' };
    }
    case 'stop':
      return stop(ctx, step);
    case 'follow-savepoint':
      return followSavepoint(ctx);
    case 'follow-cancel':
      return followCancel(ctx);
    case 'start-savepoint': {
      const jobId = ctx.state().deployedJobId ?? '';
      const pending = newPendingSavepoint(ctx, { triggerType: step.triggerType, jobId, stopJob: false, nonce: step.nonce, user: step.user });
      const state = await ctx.save((s) => {
        if (s.pendingSavepoint) return s;
        // A user's snapshot: taken up (never again) and shown IN_PROGRESS, in the intent's write.
        return pending.snapshotResource ? withUserSnapshotStarted(s, ownerOf(ctx), pending) : { ...s, pendingSavepoint: pending };
      });
      // An adopted trigger is followed (followSavepoint asks Flink about it), never sent blindly.
      if (step.user?.inFlight) return { requeue: 'continue' };
      return sendSavepoint(ctx, state.pendingSavepoint!);
    }
    case 'publish-snapshot-resource':
      return publishSnapshotResource(snapshotResourceContext(ctx));
    case 'refuse-user-snapshot': {
      await ctx.save((s) => withUserSnapshotRefused(s, ownerOf(ctx), step.snapshot, step.snapshotType, step.error, deps.now()));
      deps.events.emit(ctx.job, 'Warning', 'SnapshotError', `FlinkStateSnapshot ${ctx.job.metadata.namespace}/${step.snapshot.name}: ${step.error}`);
      return { requeue: 'continue' };
    }
    case 'start-checkpoint':
      return startCheckpoint(checkpointContext(ctx), step.request);
    case 'follow-checkpoint':
      return followCheckpoint(checkpointContext(ctx));
    case 'release':
      await deps.finalizers.remove(ctx.job, ctx.fence);
      deps.forgetSessionJob(ctx.job);
      deps.log.info({ namespace: ctx.job.metadata.namespace, name: ctx.job.metadata.name, why: step.why }, 'session job deleted');
      return { requeue: 'steady' };
  }
}

/** The checkpoint steps' view of a session-job pass. */
function checkpointContext(ctx: SessionJobStepContext): CheckpointStepContext<SessionJobInternalState> {
  const { deps } = ctx;
  return {
    api: apiOf(ctx),
    triggerGracePeriodMs: ctx.settings.checkpointTriggerGracePeriodMs,
    now: () => deps.now(),
    newTriggerId: () => deps.newJobId(),
    emit: (type, reason, message) => deps.events.emit(ctx.job, type, reason, message),
    jobView: (jobId) => sessionJobView(ctx.observed, jobId),
    state: () => ctx.state(),
    save: (fn) => ctx.save(fn),
    owner: ownerOf(ctx),
    recordsResources: recordsResources(ctx),
  };
}

/** The session job as the owner of its snapshot resources. */
function ownerOf(ctx: SessionJobStepContext): SnapshotOwner {
  return { kind: FLINK_SESSION_JOB_KIND, namespace: ctx.job.metadata.namespace ?? '', name: ctx.job.metadata.name ?? '' };
}

/** Whether the operator records this session job's snapshots as FlinkStateSnapshot resources. */
function recordsResources(ctx: SessionJobStepContext): boolean {
  return ctx.deps.snapshotResources !== undefined && ctx.settings.snapshotResources;
}

/** The publish step's view of a session-job pass. */
function snapshotResourceContext(ctx: SessionJobStepContext): SnapshotResourceStepContext<SessionJobInternalState> {
  const access = ctx.deps.snapshotResources;
  if (!access) throw new Error('a FlinkStateSnapshot write is owed but this operator does not handle FlinkStateSnapshots (their CRD is not installed)');
  return {
    writer: access.writer,
    namespace: ctx.job.metadata.namespace ?? '',
    check: (what) => ctx.fence.check(what),
    emit: (type, reason, message) => ctx.deps.events.emit(ctx.job, type, reason, message),
    state: () => ctx.state(),
    save: (fn) => ctx.save(fn),
  };
}

/** A pending checkpoint's job in the session cluster's job list of this pass. */
function sessionJobView(observed: SessionJobObservation, jobId: string): CheckpointJobView {
  // The decision follows a checkpoint only once the cluster answered; no list is nothing to judge by.
  if (!observed.jobs) return { kind: 'waiting' };
  const listed = observed.jobs.find((j) => j.jobId === jobId);
  if (!listed) return { kind: 'gone', reason: `job ${jobId} is not running any more` };
  if (listed.state !== 'RUNNING') return { kind: 'gone', reason: `job ${jobId} is ${listed.state}` };
  return { kind: 'running' };
}

async function submit(ctx: SessionJobStepContext): Promise<SessionJobStepResult> {
  const { deps } = ctx;
  const state = ctx.state();
  const api = apiOf(ctx);
  const request = runRequestOf(state);
  const spec = state.lastReconciledSpec ?? {};
  let jar;
  try {
    jar = await deps.fetchJar(spec);
  } catch (error) {
    return { requeue: 'progress', error: `Could not fetch the job jar: ${(error as Error).message}` };
  }
  const jarId = await api.uploadJar(jar.bytes, jar.fileName);
  const cluster = spec.deploymentName ?? '';
  try {
    await api.runJar(jarId, request);
  } catch (error) {
    // A refused fence ends the pass here (the jar stays; the next leader uploads its own).
    if (isFencingRefusal(error)) throw error;
    if (!isDuplicateJobSubmission(error)) {
      await deleteJarQuietly(api, jarId);
      // The run's fate may be unknown (a lost answer): the next pass lists the jobs before anything else.
      return { requeue: 'progress', error: `Flink did not run the job: ${(error as Error).message}` };
    }
  }
  deps.events.emit(
    ctx.job,
    'Normal',
    'Submit',
    `Started job ${request.jobId} on session cluster ${cluster}${request.savepointPath ? ` from ${request.savepointPath}` : ' without state'}`,
  );
  await deleteJarQuietly(api, jarId);
  await ctx.save(deployed(request.jobId));
  return { requeue: 'progress' };
}

function isFencingRefusal(error: unknown): boolean {
  return error instanceof FencedOutError || error instanceof NotLeaderError || error instanceof StaleLeaderError;
}

async function deleteJarQuietly(api: SessionJobFlinkApi, jarId: string): Promise<void> {
  try {
    await api.deleteJar(jarId);
  } catch (error) {
    if (!(error instanceof FlinkRestError)) throw error;
    // An uploaded jar left behind costs disk on the JobManager only; the next upload does not need it.
  }
}

function newPendingSavepoint(
  ctx: SessionJobStepContext,
  request: { triggerType: PendingSnapshot['triggerType']; jobId: string; stopJob: boolean; nonce?: number | undefined; user?: UserSnapshotRequest | undefined },
): PendingSnapshot {
  const flat = {
    ...flattenFlinkConfiguration(ctx.cluster?.spec?.flinkConfiguration),
    ...flattenFlinkConfiguration(ctx.state().lastReconciledSpec?.flinkConfiguration),
  };
  const target = request.user?.targetDirectory ?? savepointDirectory(flat);
  const format = request.user?.formatType ?? flat['kubernetes.operator.savepoint.format.type']?.toUpperCase();
  return {
    kind: 'savepoint',
    triggerType: request.triggerType,
    jobId: request.jobId,
    stopJob: request.stopJob,
    requestedAt: request.user?.inFlight?.triggeredAt ?? ctx.deps.now(),
    triggerId:
      request.user?.inFlight?.triggerId ??
      savepointTriggerId({ triggerType: request.triggerType, jobId: request.jobId, triggerNonce: request.nonce }, ctx.state(), 0, () => ctx.deps.newJobId()),
    ...(target ? { targetDirectory: target } : {}),
    ...(format === 'NATIVE' || format === 'CANONICAL' ? { formatType: format } : {}),
    ...(request.nonce !== undefined ? { triggerNonce: request.nonce } : {}),
    ...(request.user ? { snapshotResource: request.user.ref } : {}),
  };
}

async function sendSavepoint(ctx: SessionJobStepContext, pending: PendingSnapshot): Promise<SessionJobStepResult> {
  const api = apiOf(ctx);
  const options = savepointTriggerOptions(pending);
  if (pending.stopJob) await api.stopWithSavepoint(pending.jobId, { ...options, drain: false });
  else await api.triggerSavepoint(pending.jobId, options);
  return { requeue: 'progress' };
}

async function stop(ctx: SessionJobStepContext, step: Extract<SessionJobStep, { kind: 'stop' }>): Promise<SessionJobStepResult> {
  const { deps } = ctx;
  // DEPLOYING: a submission whose answer was lost may run under the pinned id (deletion stops it too).
  const jobId = ctx.state().deployedJobId ?? ctx.state().jobIdToSubmit ?? '';
  const at = rfc3339(deps.now());
  const phase = step.suspend ? ('SUSPENDING' as const) : ('STOPPING' as const);
  const base = { phase, lastReconciledSpec: step.spec, lastReconciledGeneration: step.generation, reconciliationTimestamp: at };
  deps.events.emit(ctx.job, 'Normal', 'SpecChanged', `${step.why}: ${step.mode === 'savepoint' ? 'stopping job with a savepoint' : 'cancelling job'} ${jobId}`);
  if (step.mode === 'savepoint') {
    const pending = newPendingSavepoint(ctx, { triggerType: 'UPGRADE', jobId, stopJob: true });
    const state = await ctx.save((s) => (s.pendingSavepoint ? s : { ...s, ...base, pendingSavepoint: pending }));
    return sendSavepoint(ctx, state.pendingSavepoint!);
  }
  await ctx.save((s) => ({ ...s, ...base, upgradeSavepointPath: step.restoreFrom }));
  await apiOf(ctx).cancelJob(jobId);
  return { requeue: 'progress' };
}

function stoppedPhase(s: SessionJobInternalState): SessionJobInternalState['phase'] {
  return s.phase === 'SUSPENDING' ? 'SUSPENDED' : s.phase === 'STOPPING' ? 'STOPPED' : s.phase;
}

async function followCancel(ctx: SessionJobStepContext): Promise<SessionJobStepResult> {
  const jobId = ctx.state().deployedJobId ?? ctx.state().jobIdToSubmit;
  const listed = jobId ? ctx.observed.jobs?.find((j) => j.jobId === jobId) : undefined;
  if (listed && !TERMINAL_JOB_STATES.has(listed.state)) {
    if (listed.state === 'CANCELLING') return { requeue: 'progress' };
    // The intent is recorded and the job still runs: the cancel did not reach Flink (Flink takes a repeated cancel as one).
    await apiOf(ctx).cancelJob(listed.jobId);
    return { requeue: 'progress' };
  }
  await ctx.save((s) => (s.phase !== 'STOPPING' && s.phase !== 'SUSPENDING' ? s : { ...s, phase: stoppedPhase(s), deployedJobId: undefined }));
  return { requeue: 'continue' };
}

async function followSavepoint(ctx: SessionJobStepContext): Promise<SessionJobStepResult> {
  const pending = ctx.state().pendingSavepoint!;
  if (pending.notBefore !== undefined && pending.notBefore > ctx.deps.now()) return { requeue: 'progress' };
  const progress = await savepointProgress(apiOf(ctx), pending);
  switch (progress.kind) {
    case 'in-progress':
      return { requeue: 'progress' };
    case 'not-sent':
      return sendSavepoint(ctx, pending);
    case 'completed':
      return completeSavepoint(ctx, pending, progress.location);
    case 'failed':
    case 'lost':
      return pending.snapshotResource ? failUserSnapshot(ctx, pending, progress.kind, progress.reason) : failSavepoint(ctx, pending, progress.reason);
  }
}

/** A user's snapshot failed: retried after its backoff while its backoffLimit allows, then FAILED (userSnapshotFailure). */
async function failUserSnapshot(ctx: SessionJobStepContext, pending: PendingSnapshot, kind: 'failed' | 'lost', reason: string): Promise<SessionJobStepResult> {
  const failure = { kind, reason, now: ctx.deps.now(), newTriggerId: ctx.deps.newJobId() };
  const message = await saveUserSnapshotFailure((fn) => ctx.save(fn), ownerOf(ctx), pending, failure);
  if (message) ctx.deps.events.emit(ctx.job, 'Warning', 'SavepointError', message);
  return { requeue: 'continue' };
}

async function completeSavepoint(ctx: SessionJobStepContext, pending: PendingSnapshot, location: string): Promise<SessionJobStepResult> {
  const now = ctx.deps.now();
  const owner = ownerOf(ctx);
  if (pending.snapshotResource) {
    await ctx.save((s) => (s.pendingSavepoint?.triggerId === pending.triggerId ? withUserSnapshotCompleted(s, owner, pending, location, now) : s));
    ctx.deps.events.emit(
      ctx.job,
      'Normal',
      'SavepointCompleted',
      `savepoint of job ${pending.jobId} for FlinkStateSnapshot ${pending.snapshotResource.name} completed: ${location}`,
    );
    return { requeue: 'continue' };
  }
  const resources = recordsResources(ctx) ? { disposeOnDelete: ctx.settings.savepointDisposeOnDelete } : undefined;
  await ctx.save((s) => {
    if (s.pendingSavepoint?.triggerId !== pending.triggerId) return s;
    const next: SessionJobInternalState = withSavepointRecorded(s, owner, pending, location, now, resources);
    if (pending.stopJob) Object.assign(next, { upgradeSavepointPath: location, phase: stoppedPhase(s), deployedJobId: undefined });
    if (pending.triggerType === 'PERIODIC') next.lastPeriodicSavepointTimestamp = now;
    return pending.triggerType === 'MANUAL' ? withNonceAcknowledged(next, pending.triggerNonce) : next;
  });
  ctx.deps.events.emit(ctx.job, 'Normal', 'SavepointCompleted', `${pending.triggerType} savepoint of job ${pending.jobId} completed: ${location}`);
  return { requeue: 'continue' };
}

/**
 * A failed or lost savepoint. A stop's failure leaves the job running its previous spec (the
 * upgrade is tried again for the next generation); a manual one is acknowledged and a periodic one
 * counted as taken, so neither is retried in a loop. Each is a SavepointError event.
 */
async function failSavepoint(ctx: SessionJobStepContext, pending: PendingSnapshot, reason: string): Promise<SessionJobStepResult> {
  const { deps } = ctx;
  const now = deps.now();
  const message = `${pending.triggerType} savepoint of job ${pending.jobId} failed: ${reason}`;
  deps.events.emit(ctx.job, 'Warning', 'SavepointError', message);
  await ctx.save((s) => {
    if (s.pendingSavepoint?.triggerId !== pending.triggerId) return s;
    const next: SessionJobInternalState = { ...s, pendingSavepoint: undefined };
    if (pending.stopJob) {
      Object.assign(next, {
        phase: s.lastStableSpec ? 'RUNNING' : 'DEPLOYED',
        lastReconciledSpec: s.lastStableSpec ?? s.lastReconciledSpec,
        lastReconciledGeneration: s.lastStableGeneration ?? s.lastReconciledGeneration,
        failedUpgrade: { generation: s.lastReconciledGeneration ?? 0, reason, at: rfc3339(now) },
      });
    }
    if (pending.triggerType === 'PERIODIC') next.lastPeriodicSavepointTimestamp = now;
    return pending.triggerType === 'MANUAL' ? withNonceAcknowledged(next, pending.triggerNonce) : next;
  });
  return { requeue: 'progress', ...(pending.stopJob ? { error: `${message}; the job keeps running its previous spec` } : {}) };
}
