/**
 * Checkpoint steps: a manual (`job.checkpointTriggerNonce`) or periodic
 * (`kubernetes.operator.periodic.checkpoint.interval`) checkpoint through Flink's trigger endpoint
 * (POST /jobs/:id/checkpoints, GET /jobs/:id/checkpoints/:triggerid), the way snapshot-steps.ts takes
 * savepoints.
 *
 * Write order (design/005):
 * - start: the intent (pendingCheckpoint, with the trigger id chosen here) goes to the state
 *   ConfigMap; then the trigger is sent with that id, so a re-send after a crash is the same
 *   operation for Flink (it de-duplicates trigger ids).
 * - completion: in one write, the intent is cleared, the nonce acknowledged in lastReconciledSpec
 *   (MANUAL) or lastPeriodicCheckpointTimestamp set (PERIODIC); then a CheckpointCompleted event.
 *
 * Failures: as savepoints (Apache's SnapshotObserver treats both alike): retried with a new trigger
 * id within `savepoint.trigger.grace-period`, then reported (CheckpointError) and acknowledged so
 * the job is not asked again and again; a checkpoint never stops or restarts the job.
 *
 * Assumptions: the spec was validated (spec-validation.ts refuses checkpoint triggers before Flink
 * 1.19). Caveats: Flink forgets trigger ids when its JobManager restarts; an intent Flink does not
 * know is re-sent (with the same id) while the job runs, so a checkpoint taken just before such a
 * restart may be taken twice. Checkpoints are not recorded in the savepoint history (they are not
 * restore points the operator manages: Flink retains and subsumes them itself).
 */
import type { InternalState, PendingSnapshot } from '../api/internal-state.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { withNonceAcknowledged } from './deployment-specs.js';
import type { CheckpointRequest, StepResult } from './reconcile-step.js';
import type { StepContext } from './step-context.js';

/** Records the intent, then sends the trigger. */
export async function startCheckpoint(ctx: StepContext, request: CheckpointRequest): Promise<StepResult> {
  const pending: PendingSnapshot = {
    kind: 'checkpoint',
    triggerType: request.triggerType,
    checkpointType: request.checkpointType,
    jobId: request.jobId,
    stopJob: false,
    requestedAt: ctx.deps.now(),
    triggerId: ctx.deps.newJobId(),
    ...(request.nonce !== undefined ? { triggerNonce: request.nonce } : {}),
  };
  const state = await ctx.save((s) => (s.pendingCheckpoint ? s : { ...s, pendingCheckpoint: pending }));
  return send(ctx, state.pendingCheckpoint!);
}

async function send(ctx: StepContext, pending: PendingSnapshot): Promise<StepResult> {
  const type = pending.checkpointType === 'INCREMENTAL' ? 'INCREMENTAL' : 'FULL';
  await ctx.api.triggerCheckpoint(pending.jobId, type, pending.triggerId);
  return { requeue: 'progress' };
}

function isUnknownTrigger(error: unknown): boolean {
  return error instanceof FlinkRestError && error.source === 'flink' && (error.status === 404 || error.status === 400);
}

/** Follows the pending checkpoint to its end. */
export async function followCheckpoint(ctx: StepContext): Promise<StepResult> {
  const pending = ctx.state().pendingCheckpoint!;
  const jobManager = ctx.observed.jobManager;
  if (jobManager === 'MISSING' || jobManager === 'ERROR') return fail(ctx, pending, 'lost', 'the JobManager is not running');
  if (jobManager !== 'READY') return { requeue: 'progress' };
  const job = ctx.observed.job;
  if (job && job.jobId === pending.jobId && job.state !== 'RUNNING') return fail(ctx, pending, 'lost', `job ${pending.jobId} is ${job.state}`);
  if (job && job.jobId !== pending.jobId) return fail(ctx, pending, 'lost', `job ${pending.jobId} is not running any more`);
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

function settled(s: InternalState, pending: PendingSnapshot, now: number): InternalState {
  let next: InternalState = { ...s, pendingCheckpoint: undefined };
  if (pending.triggerType === 'PERIODIC') next.lastPeriodicCheckpointTimestamp = now;
  if (pending.triggerType === 'MANUAL') next = withNonceAcknowledged(next, pending.triggerNonce, 'checkpointTriggerNonce');
  return next;
}

async function complete(ctx: StepContext, pending: PendingSnapshot, checkpointId: number): Promise<StepResult> {
  const now = ctx.deps.now();
  await ctx.save((s) => (s.pendingCheckpoint?.triggerId === pending.triggerId ? settled(s, pending, now) : s));
  ctx.deps.events.emit(ctx.deployment, 'Normal', 'CheckpointCompleted', `${pending.triggerType} checkpoint ${checkpointId} of job ${pending.jobId} completed`);
  return { requeue: 'continue' };
}

async function fail(ctx: StepContext, pending: PendingSnapshot, kind: 'failed' | 'lost', reason: string): Promise<StepResult> {
  const { deps } = ctx;
  const now = deps.now();
  const attempt = (pending.failures ?? 0) + 1;
  if (kind === 'failed' && now - pending.requestedAt < ctx.settings.triggerGracePeriodMs) {
    const retry: PendingSnapshot = { ...pending, triggerId: deps.newJobId(), failures: attempt };
    deps.events.emit(
      ctx.deployment,
      'Warning',
      'CheckpointError',
      `${pending.triggerType} checkpoint of job ${pending.jobId} failed (attempt ${attempt}): ${reason}; retrying until ${new Date(pending.requestedAt + ctx.settings.triggerGracePeriodMs).toISOString()} (kubernetes.operator.savepoint.trigger.grace-period)`,
    );
    const state = await ctx.save((s) => (s.pendingCheckpoint?.triggerId === pending.triggerId ? { ...s, pendingCheckpoint: retry } : s));
    if (state.pendingCheckpoint?.triggerId !== retry.triggerId) return { requeue: 'continue' };
    return send(ctx, retry);
  }
  const message = `${pending.triggerType} checkpoint of job ${pending.jobId} ${kind === 'failed' ? 'failed' : 'was lost'}${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${reason}; it is not retried further`;
  deps.events.emit(ctx.deployment, 'Warning', 'CheckpointError', message);
  await ctx.save((s) => (s.pendingCheckpoint?.triggerId === pending.triggerId ? settled(s, pending, now) : s));
  return { requeue: 'continue' };
}
