/**
 * Steps that change the running Flink cluster: deploy (intent, apply, result), stop the job for
 * an upgrade or suspend, finish a suspend, rescale, roll back, restart a failed job.
 *
 * Every step writes its intent to the state ConfigMap before its side effect and its result right
 * after (design/005 tabulates each one with what a crash after it leads to). Update functions set
 * fields from values captured before the call, so re-applying one (after a conflict or a lost
 * answer) changes nothing more.
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { flattenFlinkConfiguration, isHighAvailabilityEnabled } from '../api/flink-configuration.js';
import type { InternalState } from '../api/internal-state.js';
import { taskManagerReplicas } from '../flink/taskmanager-deployment.js';
import { taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import type { Pass, PassContext, StepResult } from './reconcile-pass.js';
import type { SnapshotSteps } from './snapshot-steps.js';

export function withRunningState(spec: FlinkDeploymentSpec): FlinkDeploymentSpec {
  const copy = structuredClone(spec);
  if (copy.job) copy.job.state = 'running';
  return copy;
}

/** The spec the cluster runs: the last stable one while rolling back or rolled back, else the reconciled one. */
export function deployedSpecOf(state: InternalState): FlinkDeploymentSpec | undefined {
  return state.reconciliationState === 'ROLLING_BACK' || state.reconciliationState === 'ROLLED_BACK' ? state.lastStableSpec : state.lastReconciledSpec;
}

/** Where a new job of `desired` restores from: nothing when stateless, else the newest savepoint. */
export function restorePathFor(desired: FlinkDeploymentSpec, state: InternalState): string | undefined {
  const mode = desired.job?.upgradeMode ?? 'stateless';
  return mode === 'stateless' ? undefined : state.upgradeSavepointPath ?? state.savepointHistory.at(-1)?.location;
}

export class ClusterSteps {
  constructor(
    private readonly ctx: PassContext,
    private readonly snapshots: SnapshotSteps,
  ) {}

  /** Pins the spec, a new job id and the restore path (the intent), then deploys. */
  async recordDeployIntent(pass: Pass, desired: FlinkDeploymentSpec, generation: number, restoreFrom: string | undefined, keepJobId?: string): Promise<StepResult> {
    const jobId = keepJobId ?? this.ctx.deps.newJobId();
    const spec = withRunningState(desired);
    const timestamp = new Date(this.ctx.deps.now()).toISOString();
    await this.ctx.save(pass, (s) => ({
      ...s,
      reconciliationState: 'UPGRADING',
      lastReconciledSpec: spec,
      lastReconciledGeneration: generation,
      jobIdToSubmit: s.jobIdToSubmit ?? jobId,
      upgradeSavepointPath: restoreFrom,
      firstDeployment: s.lastReconciledSpec === undefined ? true : s.firstDeployment,
      reconciliationTimestamp: timestamp,
      failedUpgrade: undefined,
    }));
    return this.deploy(pass);
  }

  /** Applies the cluster with the pinned job id, then records it as deployed (or rolled back). */
  async deploy(pass: Pass): Promise<StepResult> {
    const { deps } = this.ctx;
    const state = pass.state;
    const spec = deployedSpecOf(state)!;
    const jobId = state.jobIdToSubmit!;
    const restoreFrom = state.upgradeSavepointPath;
    const generation = (state.reconciliationState === 'ROLLING_BACK' ? state.lastStableGeneration : state.lastReconciledGeneration) ?? pass.deployment.metadata.generation ?? 0;
    const objects = deps.cluster.render(pass.deployment, {
      spec,
      generation,
      specHash: deps.specHash(spec),
      jobId,
      ...(restoreFrom ? { restoreFrom } : {}),
      ...(spec.job?.allowNonRestoredState ? { allowNonRestoredState: true } : {}),
    });
    // Last-state keeps the job id: the new JobManager recovers that job from Flink's HA metadata.
    // Any other new job must not find the old job's HA metadata. Without HA in the deployed spec the
    // new JobManager reads no HA metadata, so none is looked for (a leftover from an earlier spec
    // with HA is deleted by the next deployment that turns HA on again, which gets a new job id).
    const resetHaMetadata = jobId !== state.deployedJobId && isHighAvailabilityEnabled(flattenFlinkConfiguration(spec.flinkConfiguration));
    const applied = await deps.cluster.apply(objects, { resetHaMetadata, fence: pass.fence });
    if (applied.waitingFor !== undefined) {
      // Native mode: the previous cluster is still going away; the intent stays, the next pass applies again.
      deps.log.info({ waitingFor: applied.waitingFor }, 'native redeploy waits for the previous cluster to shut down');
      pass.outcome.jobManagerStatus = 'DEPLOYING';
      pass.outcome.job = undefined;
      return 'progress';
    }
    if (applied.written.length > 0) {
      deps.events.emit(pass.deployment, 'Normal', 'Submit', `Deploying job ${jobId}` + (restoreFrom ? ` from ${restoreFrom}` : ' without state'));
    }
    // The restore path is spent once the deployment carries it (its args say --fromSavepoint).
    await this.ctx.save(pass, (s) => (s.jobIdToSubmit === jobId
      ? { ...s, reconciliationState: s.reconciliationState === 'ROLLING_BACK' ? 'ROLLED_BACK' : 'DEPLOYED', deployedJobId: jobId, jobIdToSubmit: undefined, upgradeSavepointPath: undefined }
      : s));
    pass.outcome.jobManagerStatus = 'DEPLOYING';
    pass.outcome.job = undefined;
    return 'progress';
  }

  /** Stops the running job for an upgrade or a suspend, with a savepoint when the mode asks for one. */
  async stopJob(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const state = pass.state;
    const mode = desired.job?.upgradeMode ?? 'stateless';
    const job = pass.outcome.job;
    const suspend = desired.job?.state === 'suspended';
    if (mode === 'stateless') {
      if (suspend) return this.finishSuspend(pass, desired, generation);
      return this.recordDeployIntent(pass, desired, generation, undefined);
    }
    if (mode === 'last-state' && state.deployedJobId && (await this.lastStateAvailable(pass, desired))) {
      // Suspend: the cluster goes, Flink's HA metadata stays; the resume recovers the same job from its latest checkpoint.
      if (suspend) return this.finishSuspend(pass, desired, generation);
      return this.recordDeployIntent(pass, desired, generation, undefined, state.deployedJobId);
    }
    if (job?.state === 'RUNNING' && state.deployedJobId) {
      return this.snapshots.start(pass, { triggerType: 'UPGRADE', stopJob: true, jobId: state.deployedJobId, spec: desired });
    }
    if (job && TERMINAL_JOB_STATES.has(job.state) && restorePathFor(desired, state)) {
      // The job already ended: nothing to stop; restore from the newest known savepoint.
      await this.ctx.save(pass, (s) => ({ ...s, reconciliationState: 'UPGRADING', upgradeSavepointPath: s.upgradeSavepointPath ?? s.savepointHistory.at(-1)?.location }));
      return 'continue';
    }
    pass.outcome.error = `Waiting for job ${state.deployedJobId ?? ''} to run before taking the ${suspend ? 'suspend' : 'upgrade'} savepoint ` +
      `(job ${job?.state ?? 'not observed'}, JobManager ${pass.outcome.jobManagerStatus}); set job.upgradeMode: stateless to ${suspend ? 'suspend' : 'upgrade'} without state`;
    return 'progress';
  }

  /**
   * Resume after a suspend. Last-state, when Flink's HA store still holds the suspended job with a
   * checkpoint (a last-state suspend kept it): the same job id, recovered from its latest checkpoint.
   * Otherwise a new job from the newest savepoint (savepoint and last-state modes) or without state.
   */
  async resume(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const state = pass.state;
    if ((desired.job?.upgradeMode ?? 'stateless') === 'last-state' && state.deployedJobId && (await this.haHoldsDeployedJob(pass, desired))) {
      return this.recordDeployIntent(pass, desired, generation, undefined, state.deployedJobId);
    }
    return this.recordDeployIntent(pass, desired, generation, restorePathFor(desired, state));
  }

  /**
   * Last-state is possible when the Flink version stays, HA is on and Flink's HA store holds the
   * job with a checkpoint no older than `job.upgrade.last-state.max.allowed.checkpoint.age`
   * (when set). Otherwise the upgrade falls back to a savepoint, as the Apache operator does.
   */
  private async lastStateAvailable(pass: Pass, desired: FlinkDeploymentSpec): Promise<boolean> {
    const state = pass.state;
    if (!(await this.haHoldsDeployedJob(pass, desired))) return false;
    const maxAge = pass.settings.lastStateMaxCheckpointAgeMs;
    if (maxAge === undefined) return true;
    if (pass.outcome.jobManagerStatus !== 'READY') return false;
    const latest = (await pass.api.getCheckpoints(state.deployedJobId!)).latest.completed;
    return latest !== null && this.ctx.deps.now() - latest.latest_ack_timestamp <= maxAge;
  }

  /** The same Flink version, HA on, and Flink's HA store holds the deployed job with a checkpoint: a new JobManager can recover it. */
  private async haHoldsDeployedJob(pass: Pass, desired: FlinkDeploymentSpec): Promise<boolean> {
    const state = pass.state;
    if (!state.deployedJobId || desired.flinkVersion !== state.lastReconciledSpec?.flinkVersion) return false;
    if (!isHighAvailabilityEnabled(flattenFlinkConfiguration(desired.flinkConfiguration))) return false;
    const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
    const ha = await this.ctx.deps.cluster.readHaMetadata(namespace, name);
    return ha !== undefined && ha.hasCheckpoint && ha.jobIds.includes(state.deployedJobId);
  }

  /** The job is stopped (or stateless): record the suspended spec, then delete the JobManager and TaskManagers. */
  async finishSuspend(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const spec = structuredClone(desired);
    const timestamp = new Date(this.ctx.deps.now()).toISOString();
    await this.ctx.save(pass, (s) => ({ ...s, reconciliationState: 'UPGRADING', lastReconciledSpec: spec, lastReconciledGeneration: generation, reconciliationTimestamp: timestamp }));
    const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
    // The world keeps the suspend savepoint too, so a lost state ConfigMap is rebuilt from it, never from the status.
    const stoppedWith = restorePathFor(desired, pass.state);
    if (stoppedWith && this.ctx.deps.clusterDeployments.get(namespace, name)) await this.ctx.deps.cluster.recordLastSavepoint(namespace, name, stoppedWith, pass.fence);
    const remaining = await this.ctx.deps.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)], pass.fence);
    if (remaining.length > 0) return 'progress';
    await this.ctx.save(pass, (s) => ({ ...s, reconciliationState: 'DEPLOYED' }));
    pass.outcome.job = undefined;
    return 'steady';
  }

  /** SCALE (standalone, reactive scheduler): record the new spec, then set the TaskManager replicas; no restart. */
  async rescale(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const spec = withRunningState(desired);
    await this.ctx.save(pass, (s) => ({ ...s, lastReconciledSpec: spec, lastReconciledGeneration: generation }));
    await this.ensureTaskManagerReplicas(pass);
    this.ctx.deps.events.emit(pass.deployment, 'Normal', 'Scaling', `Rescaling to ${taskManagerReplicas(spec)} TaskManagers without a restart (reactive mode)`);
    return 'progress';
  }

  /** Level-based half of a rescale: the TaskManager Deployment has the replicas the deployed spec asks for. */
  async ensureTaskManagerReplicas(pass: Pass): Promise<void> {
    const spec = deployedSpecOf(pass.state);
    if (!spec) return;
    const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
    const current = this.ctx.deps.clusterDeployments.get(namespace, taskManagerDeploymentName(name));
    const wanted = taskManagerReplicas(spec);
    if (current && current.spec?.replicas !== wanted) await this.ctx.deps.cluster.scaleTaskManagers(namespace, name, wanted, pass.fence);
  }

  /** Rollback to lastStableSpec (intent ROLLING_BACK with a new job id and the newest savepoint), then deploy it. */
  async rollBack(pass: Pass, reason: string): Promise<StepResult> {
    const { deps } = this.ctx;
    const stable = pass.state.lastStableSpec!;
    const jobId = deps.newJobId();
    const restoreFrom = restorePathFor(stable, pass.state);
    deps.events.emit(pass.deployment, 'Warning', 'Rollback', `Rolling back to the last stable spec (generation ${pass.state.lastStableGeneration}): ${reason}`);
    await this.ctx.save(pass, (s) => (s.reconciliationState === 'DEPLOYED'
      ? { ...s, reconciliationState: 'ROLLING_BACK', jobIdToSubmit: s.jobIdToSubmit ?? jobId, upgradeSavepointPath: restoreFrom }
      : s));
    return this.deploy(pass);
  }

  /** `job.restart.failed`: a new job from the newest checkpoint (else savepoint) of the failed one. */
  async restartFailedJob(pass: Pass, generation: number): Promise<StepResult> {
    const { deps } = this.ctx;
    const failedJob = pass.state.deployedJobId!;
    let restoreFrom = pass.state.savepointHistory.at(-1)?.location;
    try {
      const checkpoints = await pass.api.getCheckpoints(failedJob);
      const latest = checkpoints.latest.completed;
      if (latest?.external_path && (!checkpoints.latest.savepoint || latest.trigger_timestamp >= checkpoints.latest.savepoint.trigger_timestamp)) restoreFrom = latest.external_path;
      else if (checkpoints.latest.savepoint?.external_path) restoreFrom = checkpoints.latest.savepoint.external_path;
    } catch (error) {
      deps.log.warn({ err: (error as Error).message }, 'no checkpoint statistics of the failed job; restarting from the last savepoint');
    }
    const spec = deployedSpecOf(pass.state)!;
    const mode = spec.job?.upgradeMode ?? 'stateless';
    deps.events.emit(pass.deployment, 'Normal', 'RestartFailedJob', `Job ${failedJob} FAILED; restarting it` + (mode !== 'stateless' && restoreFrom ? ` from ${restoreFrom}` : ' without state'));
    return this.recordDeployIntent(pass, spec, generation, mode === 'stateless' ? undefined : restoreFrom);
  }
}
