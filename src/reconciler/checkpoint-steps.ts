/**
 * Checkpoint steps: a manual (`job.checkpointTriggerNonce`) or periodic
 * (`kubernetes.operator.periodic.checkpoint.interval`) checkpoint through Flink's trigger endpoint
 * (POST /jobs/:id/checkpoints, GET /jobs/:id/checkpoints/:triggerid), the way snapshot-steps.ts takes
 * savepoints. One implementation for both resources: a FlinkDeployment's job (step-executor.ts) and
 * a FlinkSessionJob (session-job-steps.ts) reach it through CheckpointStepContext.
 *
 * Write order (design/005):
 * - start: the intent (pendingCheckpoint, with the trigger id chosen here) goes to the state
 *   ConfigMap; then the trigger is sent with that id, so a re-send after a crash is the same
 *   operation for Flink (it de-duplicates trigger ids).
 * - completion: in one write, the intent is cleared, the nonce acknowledged in lastReconciledSpec
 *   (MANUAL; in lastStableSpec too while RUNNING) or lastPeriodicCheckpointTimestamp set
 *   (PERIODIC), and lastCheckpoint recorded (status jobStatus.lastCheckpoint); then a
 *   CheckpointCompleted event.
 *
 * Failures: as savepoints (Apache's SnapshotObserver treats both alike): retried with a new trigger
 * id within `checkpoint.trigger.grace-period` (Apache: CHECKPOINT_TRIGGER_GRACE_PERIOD), then reported (CheckpointError) and acknowledged so
 * the job is not asked again and again; a checkpoint never stops or restarts the job.
 *
 * Assumptions: the spec was validated (spec-validation.ts refuses checkpoint triggers before Flink
 * 1.19; for a session job, against its session cluster's flinkVersion). Caveats: Flink forgets
 * trigger ids when its JobManager restarts; an intent Flink does not know is re-sent (with the same
 * id) while the job runs, so a checkpoint taken just before such a restart may be taken twice.
 * Checkpoints are not recorded in the savepoint history (they are not restore points the operator
 * manages: Flink retains and subsumes them itself).
 */
import type { AnyInternalState, CheckpointRecord, PendingSnapshot } from '../api/internal-state.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { withNonceAcknowledged } from './deployment-specs.js';
import type { CheckpointRequest } from './reconcile-step.js';
import type { FlinkJobApi } from './reconciler-dependencies.js';
import {
  operatorCheckpointWrite,
  saveUserSnapshotFailure,
  withSnapshotWrite,
  withUserSnapshotCompleted,
  withUserSnapshotStarted,
  type SnapshotOwner,
} from './snapshot-resources.js';

/** Whether the job a pending checkpoint was asked of can still take it. */
export type CheckpointJobView =
  /** The job runs (or nothing says otherwise): ask Flink about the trigger. */
  | { kind: 'running' }
  /** Its JobManager is on its way: look again later. */
  | { kind: 'waiting' }
  /** The checkpoint cannot complete any more: `reason` says why. */
  | { kind: 'gone'; reason: string };

/** What the checkpoint steps need of a pass, whichever resource it reconciles. */
export interface CheckpointStepContext<S extends AnyInternalState> {
  /** The job's Flink REST API; triggerCheckpoint is fenced. */
  readonly api: Pick<FlinkJobApi, 'triggerCheckpoint' | 'getCheckpointStatus'>;
  /** `kubernetes.operator.checkpoint.trigger.grace-period` in ms. */
  readonly triggerGracePeriodMs: number;
  now(): number;
  /** A fresh id (the trigger id of a checkpoint). */
  newTriggerId(): string;
  /** Emits a Kubernetes event on the reconciled resource. */
  emit(type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** Whether job `jobId` is still there to take its pending checkpoint. */
  jobView(jobId: string): CheckpointJobView;
  /** The state as last read or written in this pass. */
  state(): S;
  /** Writes through the state store; the result becomes the pass's state. */
  save(fn: (current: S) => S): Promise<S>;
  /** The resource whose job this is, as the owner of its FlinkStateSnapshots. */
  readonly owner: SnapshotOwner;
  /** Record completed checkpoints as FlinkStateSnapshot resources (snapshot.resource.enabled, the CRD installed). */
  readonly recordsResources: boolean;
}

/** What a checkpoint step asks of the pass next: a quick look again, or decide again at once. */
export interface CheckpointStepResult {
  requeue: 'progress' | 'continue';
}

/** Records the intent, then sends the trigger. */
export async function startCheckpoint<S extends AnyInternalState>(ctx: CheckpointStepContext<S>, request: CheckpointRequest): Promise<CheckpointStepResult> {
  const pending: PendingSnapshot = {
    kind: 'checkpoint',
    triggerType: request.triggerType,
    checkpointType: request.checkpointType,
    jobId: request.jobId,
    stopJob: false,
    requestedAt: request.inFlight?.triggeredAt ?? ctx.now(),
    triggerId: request.inFlight?.triggerId ?? ctx.newTriggerId(),
    ...(request.nonce !== undefined ? { triggerNonce: request.nonce } : {}),
    ...(request.snapshotResource ? { snapshotResource: request.snapshotResource } : {}),
  };
  const state = await ctx.save((s) => {
    if (s.pendingCheckpoint) return s;
    const next: S = { ...s, pendingCheckpoint: pending };
    // A user's snapshot: taken up (never again) and shown IN_PROGRESS, in the intent's write.
    return pending.snapshotResource ? withUserSnapshotStarted(next, ctx.owner, pending) : next;
  });
  // An adopted trigger is followed (followCheckpoint asks Flink about it), never sent blindly.
  if (request.inFlight) return { requeue: 'continue' };
  return send(ctx, state.pendingCheckpoint!);
}

async function send<S extends AnyInternalState>(ctx: CheckpointStepContext<S>, pending: PendingSnapshot): Promise<CheckpointStepResult> {
  const type = pending.checkpointType === 'INCREMENTAL' ? 'INCREMENTAL' : 'FULL';
  await ctx.api.triggerCheckpoint(pending.jobId, type, pending.triggerId);
  return { requeue: 'progress' };
}

function isUnknownTrigger(error: unknown): boolean {
  return error instanceof FlinkRestError && error.source === 'flink' && (error.status === 404 || error.status === 400);
}

/** Follows the pending checkpoint to its end. */
export async function followCheckpoint<S extends AnyInternalState>(ctx: CheckpointStepContext<S>): Promise<CheckpointStepResult> {
  const pending = ctx.state().pendingCheckpoint!;
  const wait = pending.notBefore !== undefined ? pending.notBefore - ctx.now() : 0;
  if (wait > 0) return { requeue: 'progress' };
  const view = ctx.jobView(pending.jobId);
  if (view.kind === 'gone') return fail(ctx, pending, 'lost', view.reason);
  if (view.kind === 'waiting') return { requeue: 'progress' };
  let answer;
  try {
    answer = await ctx.api.getCheckpointStatus(pending.jobId, pending.triggerId!);
  } catch (error) {
    if (!isUnknownTrigger(error)) throw error;
    // Never sent (a crash between intent and trigger), or forgotten by a restarted JobManager.
    return send(ctx, pending);
  }
  if (answer.status === 'IN_PROGRESS') return { requeue: 'progress' };
  if ('checkpointId' in answer) return complete(ctx, pending, answer.checkpointId);
  const cause = answer.failureCause;
  return fail(ctx, pending, 'failed', cause['stack-trace']?.split('\n')[0] ?? cause.class ?? 'unknown cause');
}

function settled<S extends AnyInternalState>(s: S, pending: PendingSnapshot, now: number): S {
  let next: S = { ...s, pendingCheckpoint: undefined };
  if (pending.triggerType === 'PERIODIC') next = { ...next, lastPeriodicCheckpointTimestamp: now };
  if (pending.triggerType === 'MANUAL') next = withNonceAcknowledged(next, pending.triggerNonce, 'checkpointTriggerNonce');
  return next;
}

async function complete<S extends AnyInternalState>(
  ctx: CheckpointStepContext<S>,
  pending: PendingSnapshot,
  checkpointId: number,
): Promise<CheckpointStepResult> {
  const now = ctx.now();
  const lastCheckpoint: CheckpointRecord = {
    timeStamp: now,
    triggerType: pending.triggerType,
    ...(pending.checkpointType ? { formatType: pending.checkpointType } : {}),
    checkpointId,
    jobId: pending.jobId,
    ...(pending.triggerType === 'MANUAL' && pending.triggerNonce !== undefined ? { triggerNonce: pending.triggerNonce } : {}),
  };
  await ctx.save((s) => {
    if (s.pendingCheckpoint?.triggerId !== pending.triggerId) return s;
    const next: S = { ...settled(s, pending, now), lastCheckpoint };
    if (pending.snapshotResource) return withUserSnapshotCompleted(next, ctx.owner, pending, undefined, now);
    return ctx.recordsResources ? withSnapshotWrite(next, operatorCheckpointWrite(ctx.owner, pending, now, undefined)) : next;
  });
  ctx.emit('Normal', 'CheckpointCompleted', `${pending.triggerType} checkpoint ${checkpointId} of job ${pending.jobId} completed`);
  return { requeue: 'continue' };
}

async function fail<S extends AnyInternalState>(
  ctx: CheckpointStepContext<S>,
  pending: PendingSnapshot,
  kind: 'failed' | 'lost',
  reason: string,
): Promise<CheckpointStepResult> {
  const now = ctx.now();
  const attempt = (pending.failures ?? 0) + 1;
  if (pending.snapshotResource) return failUserCheckpoint(ctx, pending, kind, reason, now);
  if (kind === 'failed' && now - pending.requestedAt < ctx.triggerGracePeriodMs) {
    const retry: PendingSnapshot = { ...pending, triggerId: ctx.newTriggerId(), failures: attempt };
    ctx.emit(
      'Warning',
      'CheckpointError',
      `${pending.triggerType} checkpoint of job ${pending.jobId} failed (attempt ${attempt}): ${reason}; retrying until ${new Date(pending.requestedAt + ctx.triggerGracePeriodMs).toISOString()} (kubernetes.operator.checkpoint.trigger.grace-period)`,
    );
    const state = await ctx.save((s) => (s.pendingCheckpoint?.triggerId === pending.triggerId ? { ...s, pendingCheckpoint: retry } : s));
    if (state.pendingCheckpoint?.triggerId !== retry.triggerId) return { requeue: 'continue' };
    return send(ctx, retry);
  }
  const message = `${pending.triggerType} checkpoint of job ${pending.jobId} ${kind === 'failed' ? 'failed' : 'was lost'}${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${reason}; it is not retried further`;
  ctx.emit('Warning', 'CheckpointError', message);
  await ctx.save((s) => (s.pendingCheckpoint?.triggerId === pending.triggerId ? settled(s, pending, now) : s));
  return { requeue: 'continue' };
}

/** A user's checkpoint failed: retried after its backoff while its backoffLimit allows, then FAILED (userSnapshotFailure). */
async function failUserCheckpoint<S extends AnyInternalState>(
  ctx: CheckpointStepContext<S>,
  pending: PendingSnapshot,
  kind: 'failed' | 'lost',
  reason: string,
  now: number,
): Promise<CheckpointStepResult> {
  const message = await saveUserSnapshotFailure<S>((fn) => ctx.save(fn), ctx.owner, pending, { kind, reason, now, newTriggerId: ctx.newTriggerId() });
  if (message) ctx.emit('Warning', 'CheckpointError', message);
  return { requeue: 'continue' };
}
