/**
 * Act: performs the one step a decision named (reconcile-step.ts), through the step modules
 * (cluster-steps.ts, snapshot-steps.ts, checkpoint-steps.ts through checkpointContext). Each step is intent → side effect → result in the state
 * ConfigMap; `gather` is resolved by the reconciler before it gets here.
 */
import { FLINK_DEPLOYMENT_KIND } from '../api/flink-deployment.js';
import type { InternalState, SnapshotResourceRef } from '../api/internal-state.js';
import { type CheckpointJobView, type CheckpointStepContext, followCheckpoint, startCheckpoint } from './checkpoint-steps.js';
import { acknowledge, applyPinned, deploy, markRunning, reportFailedJob, rescale, scaleTaskManagers, shutDown, suspend } from './cluster-steps.js';
import { followInPlaceScaling, scaleInPlace } from './inplace-scaling-steps.js';
import type { ReconcileStep, StepResult } from './reconcile-step.js';
import { followSavepoint, recordsSnapshotResources, startSavepoint, trimHistory } from './snapshot-steps.js';
import { publishSnapshotResource, type SnapshotResourceStepContext } from './snapshot-resource-steps.js';
import { withUserSnapshotRefused } from './snapshot-resources.js';
import type { StepContext } from './step-context.js';

export async function executeStep(ctx: StepContext, step: ReconcileStep): Promise<StepResult> {
  switch (step.kind) {
    case 'gather':
      throw new Error('a gather step is resolved by the reconciler, not executed');
    case 'wait':
      return { requeue: step.requeue, ...(step.error ? { error: step.error } : {}), ...(step.wakeUpInMs !== undefined ? { wakeUpInMs: step.wakeUpInMs } : {}) };
    case 'deploy':
      return deploy(ctx, step.intent);
    case 'apply-pinned':
      return applyPinned(ctx);
    case 'start-savepoint':
      return startSavepoint(ctx, step.request);
    case 'follow-savepoint':
      return followSavepoint(ctx);
    case 'start-checkpoint':
      return startCheckpoint(checkpointContext(ctx), step.request);
    case 'follow-checkpoint':
      return followCheckpoint(checkpointContext(ctx));
    case 'suspend':
      return suspend(ctx, step.spec, step.generation, step.savepoint);
    case 'shut-down':
      return shutDown(ctx, step.then);
    case 'rescale':
      return rescale(ctx, step.spec, step.generation);
    case 'scale-task-managers':
      return scaleTaskManagers(ctx, step.replicas);
    case 'scale-in-place':
      return scaleInPlace(ctx, step.spec, step.generation);
    case 'follow-in-place-scaling':
      return followInPlaceScaling(ctx);
    case 'mark-running':
      return markRunning(ctx);
    case 'acknowledge':
      return acknowledge(ctx, step.spec, step.generation);
    case 'trim-history':
      return trimHistory(ctx);
    case 'report-failed-job':
      return reportFailedJob(ctx, step.jobId);
    case 'publish-snapshot-resource':
      return publishSnapshotResource(snapshotResourceContext(ctx));
    case 'refuse-user-snapshot':
      return refuseUserSnapshot(ctx, step.snapshot, step.snapshotType, step.error);
    case 'trim-checkpoint-resources':
      return trimCheckpointResources(ctx, step.names);
  }
}

/** The publish step's view of a FlinkDeployment pass (only decided when the deployment has snapshot resources). */
function snapshotResourceContext(ctx: StepContext): SnapshotResourceStepContext<InternalState> {
  const access = ctx.deps.snapshotResources;
  if (!access) throw new Error('a FlinkStateSnapshot write is owed but this operator does not handle FlinkStateSnapshots (their CRD is not installed)');
  return {
    writer: access.writer,
    namespace: ctx.deployment.metadata.namespace ?? '',
    check: (what) => ctx.fence.check(what),
    emit: (type, reason, message) => ctx.deps.events.emit(ctx.deployment, type, reason, message),
    state: () => ctx.state(),
    save: (fn) => ctx.save(fn),
  };
}

/** A user's snapshot this job cannot take: taken up, and FAILED owed to it, in one write. */
async function refuseUserSnapshot(
  ctx: StepContext,
  snapshot: SnapshotResourceRef,
  snapshotType: 'SAVEPOINT' | 'CHECKPOINT',
  error: string,
): Promise<StepResult> {
  const { namespace = '', name = '' } = ctx.deployment.metadata;
  await ctx.save((s) => withUserSnapshotRefused(s, { kind: FLINK_DEPLOYMENT_KIND, namespace, name }, snapshot, snapshotType, error, ctx.deps.now()));
  ctx.deps.events.emit(ctx.deployment, 'Warning', 'SnapshotError', `FlinkStateSnapshot ${namespace}/${snapshot.name}: ${error}`);
  return { requeue: 'continue' };
}

/** Deletes the operator's own checkpoint resources past the retained count (each a record only: Flink keeps its checkpoints). */
async function trimCheckpointResources(ctx: StepContext, names: readonly string[]): Promise<StepResult> {
  const access = ctx.deps.snapshotResources;
  if (!access) return { requeue: 'steady' };
  const namespace = ctx.deployment.metadata.namespace ?? '';
  for (const name of names) {
    ctx.fence.check(`delete FlinkStateSnapshot ${name}`);
    await access.writer.delete(namespace, name);
  }
  // Not at once: the cache shows them deleting only once their watch events arrive.
  return { requeue: 'progress' };
}

/** The checkpoint steps' view of a FlinkDeployment pass. */
function checkpointContext(ctx: StepContext): CheckpointStepContext<InternalState> {
  return {
    api: ctx.api,
    triggerGracePeriodMs: ctx.settings.checkpointTriggerGracePeriodMs,
    now: () => ctx.deps.now(),
    newTriggerId: () => ctx.deps.newJobId(),
    emit: (type, reason, message) => ctx.deps.events.emit(ctx.deployment, type, reason, message),
    jobView: (jobId) => deploymentJobView(ctx, jobId),
    state: () => ctx.state(),
    save: (fn) => ctx.save(fn),
    owner: { kind: FLINK_DEPLOYMENT_KIND, namespace: ctx.deployment.metadata.namespace ?? '', name: ctx.deployment.metadata.name ?? '' },
    recordsResources: recordsSnapshotResources(ctx),
  };
}

/** A pending checkpoint's job as this pass observed it: its JobManager first, then the job. */
function deploymentJobView(ctx: StepContext, jobId: string): CheckpointJobView {
  const jobManager = ctx.observed.jobManager;
  if (jobManager === 'MISSING' || jobManager === 'ERROR') return { kind: 'gone', reason: 'the JobManager is not running' };
  if (jobManager !== 'READY') return { kind: 'waiting' };
  const job = ctx.observed.job;
  if (job && job.jobId === jobId && job.state !== 'RUNNING') return { kind: 'gone', reason: `job ${jobId} is ${job.state}` };
  if (job && job.jobId !== jobId) return { kind: 'gone', reason: `job ${jobId} is not running any more` };
  return { kind: 'running' };
}
