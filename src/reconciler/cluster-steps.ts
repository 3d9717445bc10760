/**
 * Steps that change the Flink cluster's Kubernetes resources: deploy (intent, apply, result),
 * suspend, shut down, rescale, scale the TaskManagers, and the state-only steps that go with a
 * deployed cluster (mark it RUNNING, acknowledge a change).
 *
 * Every step writes its intent to the state ConfigMap before its side effect and its result right
 * after (design/005 tabulates each one with what a crash after it leads to). The steps that record
 * a new lastReconciledSpec first bring the Ingress in line with it (ingress-steps.ts). Update functions set
 * fields from values captured before the call, so re-applying one (after a conflict or a lost
 * answer) changes nothing more.
 */
import { withConfigurationDefaults } from '../api/default-flink-configuration.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { InternalState } from '../api/internal-state.js';
import { deploymentKey, taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import { taskManagerReplicas } from '../flink/taskmanager-deployment.js';
import { deployedGenerationOf, deployedSpecOf, haOn, withRunningState } from './deployment-specs.js';
import { syncIngress } from './ingress-steps.js';
import type { DeployIntent, StepResult } from './reconcile-step.js';
import type { StepContext } from './step-context.js';

const DEPLOYING_NOW = { jobManager: 'DEPLOYING' as const, job: undefined };

/** Records the intent (the phase, the spec, a pinned job id and the restore path), then applies it. */
export async function deploy(ctx: StepContext, intent: DeployIntent): Promise<StepResult> {
  const { deps } = ctx;
  const jobId = intent.keepJobId ?? deps.newJobId();
  const timestamp = new Date(deps.now()).toISOString();
  const spec = intent.spec ? withRunningState(intent.spec) : undefined;
  const { namespace, name } = deploymentKey(ctx.deployment);
  const replaceUid = intent.replaceRunningCluster ? deps.clusterDeployments.get(namespace, name)?.metadata?.uid : undefined;
  if (intent.phase === 'DEPLOYING' && spec) await syncIngress(ctx, ctx.state().lastReconciledSpec, spec, 'deploy');
  await ctx.save((s) => {
    if (s.jobIdToSubmit) return s;
    const next: InternalState = {
      ...s,
      phase: intent.phase,
      jobIdToSubmit: jobId,
      upgradeSavepointPath: intent.restoreFrom,
      replaceJobManagerUid: replaceUid,
      reconciliationTimestamp: timestamp,
      failedUpgrade: undefined,
      inPlaceScaling: undefined,
    };
    if (intent.phase === 'DEPLOYING' && spec) {
      next.lastReconciledSpec = spec;
      next.lastReconciledGeneration = intent.generation;
      next.firstDeployment = s.lastReconciledSpec === undefined ? true : s.firstDeployment;
    }
    return next;
  });
  return applyPinned(ctx);
}

/** Applies the cluster with the pinned job id, then records it as deployed (or rolled back). */
export async function applyPinned(ctx: StepContext): Promise<StepResult> {
  const { deps } = ctx;
  const state = ctx.state();
  const spec = deployedSpecOf(state)!;
  const jobId = state.jobIdToSubmit!;
  const restoreFrom = state.upgradeSavepointPath;
  const { namespace, name } = deploymentKey(ctx.deployment);
  if (state.replaceJobManagerUid) {
    // A restart of an unchanged cluster: the JobManager it replaces goes first (its uid is the precondition).
    const live = deps.clusterDeployments.get(namespace, name);
    if (live && live.metadata?.uid === state.replaceJobManagerUid) {
      await deps.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)], ctx.fence, ctx.settings.deletionPropagation);
      return { requeue: 'progress', observed: DEPLOYING_NOW };
    }
  }
  const generation = deployedGenerationOf(state) ?? ctx.deployment.metadata.generation ?? 0;
  const objects = deps.cluster.render(ctx.deployment, {
    // Rendered with the operator's defaults under the spec's own configuration; the hash is the spec's own.
    spec: withConfigurationDefaults(spec, ctx.configurationDefaults),
    generation,
    specHash: deps.specHash(spec),
    jobId,
    ...(restoreFrom ? { restoreFrom } : {}),
    ...(spec.job?.allowNonRestoredState ? { allowNonRestoredState: true } : {}),
  });
  // Last-state keeps the job id: the new JobManager recovers that job from Flink's HA metadata.
  // Any other new job must not find the old job's HA metadata. Without HA in the deployed spec the
  // new JobManager reads no HA metadata, so none is looked for.
  const resetHaMetadata = jobId !== state.deployedJobId && haOn(spec, ctx.configurationDefaults);
  const applied = await deps.cluster.apply(objects, { resetHaMetadata, fence: ctx.fence });
  if (applied.waitingFor !== undefined) {
    // Native mode: the previous cluster is still going away; the intent stays, the next pass applies again.
    deps.log.info({ waitingFor: applied.waitingFor }, 'native redeploy waits for the previous cluster to shut down');
    return { requeue: 'progress', observed: DEPLOYING_NOW };
  }
  if (applied.written.length > 0) {
    deps.events.emit(
      ctx.deployment,
      'Normal',
      'Submit',
      !spec.job
        ? 'Deploying the session cluster'
        : `Deploying job ${jobId}` + (restoreFrom ? ` from ${restoreFrom}` : jobId === state.deployedJobId ? ' (recovered from Flink HA)' : ' without state'),
    );
  }
  // The restore path is spent once the deployment carries it (its args say --fromSavepoint); it is kept as deployedFrom.
  await ctx.save((s) =>
    s.jobIdToSubmit === jobId
      ? {
          ...s,
          phase: s.phase === 'ROLLING_BACK' ? 'ROLLED_BACK' : 'DEPLOYED',
          deployedJobId: jobId,
          deployedFrom: restoreFrom,
          jobIdToSubmit: undefined,
          upgradeSavepointPath: undefined,
          replaceJobManagerUid: undefined,
        }
      : s,
  );
  return { requeue: 'progress', observed: DEPLOYING_NOW };
}

/**
 * The job is stopped (or stateless, or last-state keeping HA): record the suspended spec
 * (SUSPENDING), keep the suspend savepoint on the Flink ConfigMap (a lost state is rebuilt from
 * it, never from the status), then delete the JobManager and TaskManagers (SUSPENDED).
 */
export async function suspend(ctx: StepContext, spec: FlinkDeploymentSpec, generation: number, savepoint: string | undefined): Promise<StepResult> {
  const timestamp = new Date(ctx.deps.now()).toISOString();
  const suspended = structuredClone(spec);
  await syncIngress(ctx, ctx.state().lastReconciledSpec, suspended, 'change');
  await ctx.save((s) => ({
    ...s,
    phase: 'SUSPENDING',
    lastReconciledSpec: suspended,
    lastReconciledGeneration: generation,
    upgradeSavepointPath: savepoint ?? s.upgradeSavepointPath,
    reconciliationTimestamp: timestamp,
    failedUpgrade: undefined,
  }));
  const { namespace, name } = deploymentKey(ctx.deployment);
  if (savepoint && ctx.deps.clusterDeployments.get(namespace, name)) await ctx.deps.cluster.recordLastSavepoint(namespace, name, savepoint, ctx.fence);
  return shutDown(ctx, 'SUSPENDED');
}

/**
 * Deletes the JobManager and TaskManager Deployments (idempotent), then enters `then`. A finished
 * job's shutdown records FINISHED first (the intent: once its JobManager is gone the job can no
 * longer be observed as finished, and a missing JobManager must not read as one to recover).
 */
export async function shutDown(ctx: StepContext, then: 'SUSPENDED' | 'FINISHED'): Promise<StepResult> {
  const { namespace, name } = deploymentKey(ctx.deployment);
  if (then === 'FINISHED' && ctx.state().phase !== 'FINISHED') {
    await ctx.save((s) => ({ ...s, phase: 'FINISHED' }));
    ctx.deps.events.emit(
      ctx.deployment,
      'Normal',
      'Cleanup',
      `Job ${ctx.state().deployedJobId ?? ''} finished; its JobManager is shut down (kubernetes.operator.jm-deployment.shutdown-ttl)`,
    );
  }
  const remaining = await ctx.deps.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)], ctx.fence, ctx.settings.deletionPropagation);
  if (remaining.length > 0) return { requeue: 'progress' };
  await ctx.save((s) => (s.phase === then ? s : { ...s, phase: then }));
  return { requeue: 'steady', observed: { jobManager: 'MISSING' } };
}

/** SCALE (standalone, reactive scheduler): record the new spec, then set the TaskManager replicas; no restart. */
export async function rescale(ctx: StepContext, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
  const spec = withRunningState(desired);
  await syncIngress(ctx, ctx.state().lastReconciledSpec, spec, 'change');
  await ctx.save((s) => ({
    ...s,
    lastReconciledSpec: spec,
    lastReconciledGeneration: generation,
    ...(s.phase === 'RUNNING' ? { lastStableSpec: spec, lastStableGeneration: generation } : {}),
  }));
  await scaleTaskManagers(ctx, taskManagerReplicas(spec));
  ctx.deps.events.emit(ctx.deployment, 'Normal', 'Scaling', `Rescaling to ${taskManagerReplicas(spec)} TaskManagers without a restart (reactive mode)`);
  return { requeue: 'progress' };
}

/** The TaskManager Deployment gets the replicas the deployed spec asks for (level-based half of a rescale). */
export async function scaleTaskManagers(ctx: StepContext, replicas: number): Promise<StepResult> {
  const { namespace, name } = deploymentKey(ctx.deployment);
  await ctx.deps.cluster.scaleTaskManagers(namespace, name, replicas, ctx.fence);
  return { requeue: 'progress' };
}

/** DEPLOYED → RUNNING: the deployed spec ran; it becomes the stable spec (the rollback target). */
export async function markRunning(ctx: StepContext): Promise<StepResult> {
  await ctx.save((s) =>
    s.phase !== 'DEPLOYED'
      ? s
      : { ...s, phase: 'RUNNING', lastStableSpec: s.lastReconciledSpec, lastStableGeneration: s.lastReconciledGeneration, firstDeployment: false },
  );
  return { requeue: 'continue' };
}

/** Records a change that needs no redeploy (in RUNNING the stable spec follows: the running spec stays the stable one). */
export async function acknowledge(ctx: StepContext, spec: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
  await syncIngress(ctx, ctx.state().lastReconciledSpec, spec, 'change');
  await ctx.save((s) => ({
    ...s,
    lastReconciledSpec: spec,
    lastReconciledGeneration: generation,
    ...(s.phase === 'RUNNING' ? { lastStableSpec: spec, lastStableGeneration: generation } : {}),
  }));
  return { requeue: 'continue' };
}

/** The job FAILED and is not restarted automatically: its newest exception, with what to do. */
export async function reportFailedJob(ctx: StepContext, jobId: string): Promise<StepResult> {
  let cause = 'see the JobManager logs';
  try {
    const exceptions = await ctx.api.getExceptions(jobId);
    const newest = exceptions.exceptionHistory?.entries?.[0];
    cause = (newest?.stacktrace ?? exceptions['root-exception'] ?? cause).split('\n')[0].trim();
  } catch (error) {
    ctx.deps.log.debug({ err: (error as Error).message }, 'no exceptions of the failed job');
  }
  const message = `Job ${jobId} FAILED: ${cause}. Fix the cause and change the spec (or restartNonce) to redeploy; set kubernetes.operator.job.restart.failed: "true" to restart failed jobs automatically`;
  ctx.announceOnce('Warning', 'JobException', `failed-${jobId}`, message);
  return { requeue: 'steady', error: message };
}
