/**
 * Savepoint steps: start one (intent, then trigger), follow it to its end, trim the history.
 *
 * Write order (design/004, design/005):
 * - start: the intent, with the trigger id chosen here, goes to the state ConfigMap; then the
 *   trigger is sent with that id. No result write is needed: Flink answers for that id, and a
 *   trigger re-sent after a crash is the same operation for Flink (it de-duplicates trigger ids).
 * - completion: the location goes into the history (and, for a stop, into upgradeSavepointPath)
 *   in one write, before anything else happens, so a completed savepoint is never lost.
 * - history trim: a savepoint is disposed first and leaves the history only once Flink confirmed
 *   the disposal (a crash in between disposes it again, which Flink answers as done).
 *
 * Failures: manual and periodic savepoints are retried with a new trigger id within
 * `savepoint.trigger.grace-period`, then reported (SavepointError) and acknowledged so they are not
 * retried forever; a failed stop (upgrade, suspend) leaves the job running the old spec.
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { effectiveFlatConfiguration } from '../api/default-flink-configuration.js';
import { savepointDirectory } from '../api/flink-configuration.js';
import { FLINK_DEPLOYMENT_KIND } from '../api/flink-deployment.js';
import type { InternalState, PendingSnapshot } from '../api/internal-state.js';
import { expiredSavepoints } from './deployment-operator-settings.js';
import { newestSavepointOf, withNonceAcknowledged } from './deployment-specs.js';
import { disposeSavepointAndConfirm, savepointProgress, savepointTriggerId, savepointTriggerOptions } from './pending-savepoint.js';
import type { SavepointRequest, StepResult } from './reconcile-step.js';
import {
  deleteSnapshotWrite,
  saveUserSnapshotFailure,
  withSavepointRecorded,
  withSnapshotWrite,
  withUserSnapshotCompleted,
  withUserSnapshotStarted,
  type SnapshotOwner,
} from './snapshot-resources.js';
import type { StepContext } from './step-context.js';

/** The deployment as the owner of its snapshot resources. */
function ownerOf(ctx: StepContext): SnapshotOwner {
  return { kind: FLINK_DEPLOYMENT_KIND, namespace: ctx.deployment.metadata.namespace ?? '', name: ctx.deployment.metadata.name ?? '' };
}

/** Whether the operator records this deployment's snapshots as FlinkStateSnapshot resources. */
export function recordsSnapshotResources(ctx: StepContext): boolean {
  return ctx.deps.snapshotResources !== undefined && ctx.settings.snapshotResources;
}

function formatTypeOf(spec: FlinkDeploymentSpec, defaults: Readonly<Record<string, string>>): 'CANONICAL' | 'NATIVE' | undefined {
  const value = effectiveFlatConfiguration(spec, defaults)['kubernetes.operator.savepoint.format.type']?.toUpperCase();
  return value === 'NATIVE' || value === 'CANONICAL' ? value : undefined;
}

/** Records the intent (STOPPING too when the job is to stop), then sends the trigger. */
export async function startSavepoint(ctx: StepContext, request: SavepointRequest): Promise<StepResult> {
  const target = request.targetDirectory ?? savepointDirectory(effectiveFlatConfiguration(request.spec, ctx.configurationDefaults));
  const format = request.formatType ?? formatTypeOf(request.spec, ctx.configurationDefaults);
  const pending: PendingSnapshot = {
    kind: 'savepoint',
    triggerType: request.triggerType,
    jobId: request.jobId,
    stopJob: request.stopJob,
    requestedAt: request.inFlight?.triggeredAt ?? ctx.deps.now(),
    triggerId:
      request.inFlight?.triggerId ??
      savepointTriggerId({ triggerType: request.triggerType, jobId: request.jobId, triggerNonce: request.nonce }, ctx.state(), 0, () => ctx.deps.newJobId()),
    ...(target ? { targetDirectory: target } : {}),
    ...(format ? { formatType: format } : {}),
    ...(request.nonce !== undefined ? { triggerNonce: request.nonce } : {}),
    ...(request.snapshotResource ? { snapshotResource: request.snapshotResource } : {}),
  };
  const state = await ctx.save((s) => {
    if (s.pendingSavepoint) return s;
    const next: InternalState = { ...s, pendingSavepoint: pending, ...(request.stopJob ? { phase: 'STOPPING' as const } : {}) };
    // A user's snapshot: taken up (never again) and shown IN_PROGRESS, in the intent's write.
    return pending.snapshotResource ? withUserSnapshotStarted(next, ownerOf(ctx), pending) : next;
  });
  // An adopted trigger is followed (followSavepoint asks Flink about it), never sent blindly.
  if (request.inFlight) return { requeue: 'continue' };
  return send(ctx, state.pendingSavepoint!);
}

/** The side effect of a recorded intent (see the module comment: no result write). */
async function send(ctx: StepContext, pending: PendingSnapshot): Promise<StepResult> {
  const options = savepointTriggerOptions(pending);
  if (pending.stopJob) await ctx.api.stopWithSavepoint(pending.jobId, { ...options, drain: false });
  else await ctx.api.triggerSavepoint(pending.jobId, options);
  return { requeue: 'progress' };
}

/** Follows the pending savepoint; resolves an intent without an answer by asking Flink. */
export async function followSavepoint(ctx: StepContext): Promise<StepResult> {
  const pending = ctx.state().pendingSavepoint!;
  const wait = pending.notBefore !== undefined ? pending.notBefore - ctx.deps.now() : 0;
  if (wait > 0) return { requeue: 'progress', wakeUpInMs: wait };
  const jobManager = ctx.observed.jobManager;
  if (jobManager !== 'READY') {
    if (!pending.stopJob && (jobManager === 'MISSING' || jobManager === 'ERROR')) return fail(ctx, pending, 'lost', 'the JobManager is not running');
    if (pending.stopJob && jobManager === 'MISSING') return jobManagerGone(ctx, pending);
    return { requeue: 'progress' };
  }
  const progress = await savepointProgress(ctx.api, pending);
  switch (progress.kind) {
    case 'in-progress':
      return { requeue: 'progress' };
    case 'not-sent':
      return send(ctx, pending);
    case 'completed':
      return complete(ctx, pending, progress.location);
    case 'failed':
    case 'lost':
      return fail(ctx, pending, progress.kind, progress.reason);
  }
}

async function complete(ctx: StepContext, pending: PendingSnapshot, location: string): Promise<StepResult> {
  const now = ctx.deps.now();
  const owner = ownerOf(ctx);
  if (pending.snapshotResource) return completeUserSnapshot(ctx, pending, location, now);
  const resources = recordsSnapshotResources(ctx) ? { disposeOnDelete: ctx.settings.savepointDisposeOnDelete } : undefined;
  await ctx.save((s) => {
    if (s.pendingSavepoint?.triggerId !== pending.triggerId) return s;
    let next: InternalState = withSavepointRecorded(s, owner, pending, location, now, resources);
    if (pending.stopJob) Object.assign(next, { upgradeSavepointPath: location, phase: s.phase === 'STOPPING' ? 'STOPPED' : s.phase });
    if (pending.triggerType === 'PERIODIC') next.lastPeriodicSavepointTimestamp = now;
    if (pending.triggerType === 'MANUAL') next = withNonceAcknowledged(next, pending.triggerNonce);
    return next;
  });
  ctx.deps.events.emit(ctx.deployment, 'Normal', 'SavepointCompleted', `${pending.triggerType} savepoint of job ${pending.jobId} completed: ${location}`);
  return { requeue: 'continue' };
}

/**
 * A user's snapshot completed: its resource gets COMPLETED with the path (owed in this write). The
 * savepoint is the resource's, not the history's: it is disposed when the user deletes the
 * resource (spec.savepoint.disposeOnDelete), never trimmed by the operator.
 */
async function completeUserSnapshot(ctx: StepContext, pending: PendingSnapshot, location: string, now: number): Promise<StepResult> {
  await ctx.save((s) => (s.pendingSavepoint?.triggerId === pending.triggerId ? withUserSnapshotCompleted(s, ownerOf(ctx), pending, location, now) : s));
  ctx.deps.events.emit(
    ctx.deployment,
    'Normal',
    'SavepointCompleted',
    `savepoint of job ${pending.jobId} for FlinkStateSnapshot ${pending.snapshotResource!.name} completed: ${location}`,
  );
  return { requeue: 'continue' };
}

/** A user's snapshot failed: retried after its backoff while its backoffLimit allows, then FAILED (userSnapshotFailure). */
async function failUserSnapshot(ctx: StepContext, pending: PendingSnapshot, kind: 'failed' | 'lost', reason: string): Promise<StepResult> {
  const failure = { kind, reason, now: ctx.deps.now(), newTriggerId: ctx.deps.newJobId() };
  const message = await saveUserSnapshotFailure((fn) => ctx.save(fn), ownerOf(ctx), pending, failure);
  if (message) ctx.deps.events.emit(ctx.deployment, 'Warning', 'SavepointError', message);
  return { requeue: 'continue' };
}

/**
 * A failed or lost savepoint. Manual and periodic ones are retried with a new trigger id within
 * `savepoint.trigger.grace-period` (each failed attempt is a SavepointError event), then given up
 * (acknowledged): the job keeps running and stays Ready — a savepoint failure is reported by events,
 * not by flipping the status of a healthy job. A failed stop leaves the job running its old spec and
 * is tried again only for the next spec change (failedUpgrade); that one is in status.error.
 */
async function fail(ctx: StepContext, pending: PendingSnapshot, kind: 'failed' | 'lost', reason: string): Promise<StepResult> {
  if (pending.snapshotResource) return failUserSnapshot(ctx, pending, kind, reason);
  const { deps } = ctx;
  const now = deps.now();
  const attempt = (pending.failures ?? 0) + 1;
  if (!pending.stopJob && kind === 'failed' && now - pending.requestedAt < ctx.settings.triggerGracePeriodMs) {
    const retry: PendingSnapshot = { ...pending, triggerId: savepointTriggerId(pending, ctx.state(), attempt, () => deps.newJobId()), failures: attempt };
    deps.events.emit(
      ctx.deployment,
      'Warning',
      'SavepointError',
      `${pending.triggerType} savepoint of job ${pending.jobId} failed (attempt ${attempt}): ${reason}; retrying until ${new Date(pending.requestedAt + ctx.settings.triggerGracePeriodMs).toISOString()} (kubernetes.operator.savepoint.trigger.grace-period)`,
    );
    const state = await ctx.save((s) => (s.pendingSavepoint?.triggerId === pending.triggerId ? { ...s, pendingSavepoint: retry } : s));
    if (state.pendingSavepoint?.triggerId !== retry.triggerId) return { requeue: 'continue' };
    return send(ctx, retry);
  }
  const generation = ctx.deployment.metadata.generation ?? 0;
  const what = pending.stopJob
    ? `the job keeps running its previous spec; the upgrade to generation ${generation} is tried again on the next spec change (or set job.upgradeMode: stateless)`
    : 'it is not retried further; the job keeps running';
  const message = `${pending.triggerType} savepoint of job ${pending.jobId} ${kind === 'failed' ? 'failed' : 'was lost'}${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${reason}; ${what}`;
  deps.events.emit(ctx.deployment, 'Warning', 'SavepointError', message);
  await ctx.save((s) => {
    if (s.pendingSavepoint?.triggerId !== pending.triggerId) return s;
    let next: InternalState = { ...s, pendingSavepoint: undefined };
    if (pending.stopJob)
      Object.assign(next, {
        failedUpgrade: { generation, reason: message, at: new Date(now).toISOString() },
        phase: s.phase === 'STOPPING' ? 'DEPLOYED' : s.phase,
      });
    if (pending.triggerType === 'PERIODIC') next.lastPeriodicSavepointTimestamp = now;
    if (pending.triggerType === 'MANUAL') next = withNonceAcknowledged(next, pending.triggerNonce);
    return next;
  });
  return pending.stopJob ? { requeue: 'continue', error: message } : { requeue: 'continue' };
}

/**
 * The JobManager Deployment disappeared while its job was being stopped with a savepoint: the job
 * is gone with it and Flink can no longer say whether the savepoint completed. The stop is over;
 * the upgrade (or suspend) goes on from the newest savepoint the state knows, and says so.
 */
async function jobManagerGone(ctx: StepContext, pending: PendingSnapshot): Promise<StepResult> {
  const newest = newestSavepointOf(ctx.state());
  const message =
    `The JobManager Deployment disappeared while job ${pending.jobId} was being stopped with a savepoint; that savepoint cannot be confirmed. ` +
    (newest ? `Continuing from the newest known savepoint ${newest}` : 'No savepoint is known: continuing without state');
  ctx.deps.events.emit(ctx.deployment, 'Warning', 'SavepointError', message);
  await ctx.save((s) => (s.pendingSavepoint?.triggerId === pending.triggerId ? { ...s, pendingSavepoint: undefined, phase: 'STOPPED' } : s));
  return { requeue: 'continue' };
}

/** Disposes savepoints past the history limits (and those the size rules dropped), then drops them from the history. */
export async function trimHistory(ctx: StepContext): Promise<StepResult> {
  const { deps } = ctx;
  await disposeTrimmedForSize(ctx);
  const expired = expiredSavepoints(ctx.state().savepointHistory, ctx.settings, deps.now());
  if (expired.length === 0) return { requeue: 'steady' };
  let leaving = expired;
  if (ctx.settings.savepointCleanup) {
    if (ctx.observed.jobManager !== 'READY') return { requeue: 'steady' };
    leaving = [];
    for (const record of expired) if (await dispose(ctx, record.location)) leaving.push(record);
    if (leaving.length === 0) return { requeue: 'steady' };
  }
  const gone = new Set(leaving.map((r) => r.location));
  const owner = ownerOf(ctx);
  await ctx.save((s) => {
    if (!s.savepointHistory.some((r) => gone.has(r.location))) return s;
    let next: InternalState = { ...s, savepointHistory: s.savepointHistory.filter((r) => !gone.has(r.location)) };
    // Their resources go too (Apache deletes its PERIODIC and UPGRADE snapshot resources past the limits).
    for (const record of s.savepointHistory)
      if (gone.has(record.location) && record.snapshotResource)
        next = withSnapshotWrite(next, deleteSnapshotWrite(owner, record.snapshotResource, 'SAVEPOINT', record.triggerType));
    return next;
  });
  return { requeue: 'continue' };
}

/** Savepoints the state's size rules dropped (configmap-state-store.ts): disposed like expired ones, when cleanup is on. */
async function disposeTrimmedForSize(ctx: StepContext): Promise<void> {
  const { deps } = ctx;
  const trimmed = deps.takeTrimmedSavepoints(ctx.deployment);
  if (trimmed.length === 0 || !ctx.settings.savepointCleanup) return;
  if (ctx.observed.jobManager !== 'READY') {
    deps.returnTrimmedSavepoints(ctx.deployment, trimmed);
    return;
  }
  const left = [];
  for (const record of trimmed) if (!(await dispose(ctx, record.location))) left.push(record);
  deps.returnTrimmedSavepoints(ctx.deployment, left);
}

/** True once Flink confirmed the savepoint is gone (disposed now, or it did not exist any more). */
async function dispose(ctx: StepContext, location: string): Promise<boolean> {
  const outcome = await disposeSavepointAndConfirm(ctx.api, location);
  if (outcome.outcome === 'disposed') return true;
  if (outcome.outcome === 'refused')
    ctx.deps.events.emit(ctx.deployment, 'Warning', 'SavepointError', `could not dispose savepoint ${location}: ${outcome.reason}`);
  else ctx.deps.log.warn({ err: outcome.reason, location }, 'savepoint disposal failed; retried on a later pass');
  return false;
}
