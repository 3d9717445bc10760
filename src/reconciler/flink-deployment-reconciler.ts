/**
 * The FlinkDeployment reconciler: observe → validate → one step → status, level-based.
 *
 * Every step follows the write order of design/004: the intent goes to the state ConfigMap
 * before the side effect, the result right after it, the status last. design/005 tabulates each
 * step and what a crash right after it leads to; the invariants (one savepoint per upgrade, no
 * job id submitted twice, the newest savepoint restored, no completed savepoint lost) are
 * checked by the crash test against the simulator's lineage.
 *
 * Guarantees: a pass never repeats a side effect whose intent is recorded without a result; it
 * resolves it by observation (pending-savepoint.ts; the cluster applier compares the rendered
 * hash). A pass never tears down a running job because the spec is invalid. Every side effect of a
 * pass is fenced by the leadership term the pass started in (side-effect-fence.ts): a pass that
 * lost its term (aborted, paused past its lease, superseded) stops before its next side effect;
 * every state write is decided on the revision the pass read (StatePreconditionError otherwise:
 * the pass stops and the next one decides again). Whatever a step throws, the status says so.
 * Assumptions: one key is never reconciled twice at once (the work queue); the state store's
 * update functions here are idempotent (they set fields from values captured before the call).
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { FLINK_DEPLOYMENT_FINALIZER, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { InternalState } from '../api/internal-state.js';
import { formatFieldErrors, validateFlinkDeployment } from '../api/spec-validation.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../runtime/reconcile.js';
import { StaleLeaderError } from '../runtime/fencing-token.js';
import { FencedOutError, type SideEffectFence } from '../runtime/side-effect-fence.js';
import { CorruptStateError, ForeignStateError, MisplacedStateError, NotLeaderError, RegressedStateError, StatePreconditionError } from '../state/state-errors.js';
import type { StateUpdateFunction } from '../state/state-store.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { readDeployedRecord } from '../flink/deployed-record.js';
import { ClusterSteps, deployedSpecOf, restorePathFor, withRunningState } from './cluster-steps.js';
import { clusterModeOf, taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import { deploymentOperatorSettings, dueSavepoint, untilNextPeriodicSavepoint } from './deployment-operator-settings.js';
import { DeletionSteps } from './deletion-steps.js';
import { classifyJobManager } from './job-manager-observer.js';
import { fencedFlinkApi, type Pass, type PassContext, type StepResult } from './reconcile-pass.js';
import type { FlinkDeploymentReconcilerDependencies } from './reconciler-dependencies.js';
import { loadOrRebuildState, RebuildWaitingError } from './state-recovery.js';
import { SnapshotSteps } from './snapshot-steps.js';
import { buildStatus, type ObservedJob } from './status-builder.js';
import { diffSpecs, sameValue } from './spec-diff.js';

/** The spec to record as reconciled in a steady pass: the desired one, but the savepoint nonce only once its savepoint was taken. */
function acknowledgedSpec(desired: FlinkDeploymentSpec, state: InternalState): FlinkDeploymentSpec {
  const spec = withRunningState(desired);
  if (spec.job) {
    const acked = state.lastReconciledSpec?.job?.savepointTriggerNonce;
    if (acked === undefined) delete spec.job.savepointTriggerNonce;
    else spec.job.savepointTriggerNonce = acked;
  }
  return spec;
}

export class FlinkDeploymentReconciler implements Reconciler {
  /** Generation for which SpecChanged / ValidationError was last emitted, by uid (event hygiene only). */
  private readonly announced = new Map<string, string>();

  private readonly snapshots: SnapshotSteps;
  private readonly cluster: ClusterSteps;
  private readonly deletion: DeletionSteps;

  constructor(private readonly deps: FlinkDeploymentReconcilerDependencies) {
    const context: PassContext = {
      deps,
      save: (pass, fn) => this.save(pass, fn),
      announceOnce: (deployment, key, type, reason, message) => this.announceOnce(deployment, key, type, reason, message),
      forgetAnnouncements: (deployment) => {
        for (const key of [...this.announced.keys()]) if (key.startsWith(`${deployment.metadata.uid}/`)) this.announced.delete(key);
      },
    };
    this.snapshots = new SnapshotSteps(context);
    this.cluster = new ClusterSteps(context, this.snapshots);
    this.deletion = new DeletionSteps(context, this.snapshots, (pass) => this.observe(pass));
  }

  /**
   * One pass, fenced: a pass that finds its term gone (FencedOutError, NotLeaderError, or an object
   * stamped by a newer term) stops where it is and does nothing more; one whose state changed under
   * its decision (StatePreconditionError) stops too and is requeued to decide again.
   */
  async reconcile(request: ReconcileRequest, signal: AbortSignal = new AbortController().signal): Promise<ReconcileResult> {
    const d = this.deps;
    const fence = d.fenceFor(signal);
    if (!fence) return {};
    try {
      return await this.reconcileInTerm(request, fence);
    } catch (error) {
      if (error instanceof FencedOutError || error instanceof NotLeaderError || error instanceof StaleLeaderError) {
        d.counters.fencedOut();
        d.log.warn({ reason: error.message }, 'side effect refused by the leadership fence; this pass stops here');
        return { requeueAfterMs: d.timings.progressCheckIntervalMs };
      }
      if (error instanceof StatePreconditionError) {
        d.log.info({ reason: error.message }, 'the state changed under this pass; deciding again');
        return { requeueAfterMs: d.timings.progressCheckIntervalMs };
      }
      throw error;
    }
  }

  private async reconcileInTerm(request: ReconcileRequest, fence: SideEffectFence): Promise<ReconcileResult> {
    const d = this.deps;
    let deployment = d.deployments.get(request.namespace, request.name);
    if (!deployment) return {};
    if (deployment.metadata.deletionTimestamp) {
      if (!deployment.metadata.finalizers?.includes(FLINK_DEPLOYMENT_FINALIZER)) return {};
      return this.deletion.cleanup(deployment, fence);
    }

    let state: InternalState;
    try {
      // Before any write through v1: a legacy status would lose its internal fields (design/002).
      if (deployment.status && !deployment.status.stateRef && (await d.store.load(deployment)).kind === 'missing') {
        fence.check(`migrate the legacy status of ${request.namespace}/${request.name}`);
        const migration = await d.legacy.migrateIfLegacy(deployment);
        if (migration.kind === 'migrated' || migration.kind === 'resumed') {
          d.events.emit(deployment, 'Normal', 'Migrated', migration.message);
        } else if (migration.kind !== 'already-migrated') {
          // Nothing may be written through v1 now (it would drop the legacy fields): an event only.
          d.events.emit(deployment, 'Warning', 'MigrationFailed', `${migration.message}; run \`flink-operator migrate -n ${request.namespace}\` after fixing it`);
          return { requeueAfterMs: d.timings.reconcileIntervalMs };
        }
      }
      state = await loadOrRebuildState(d, deployment, fence);
    } catch (error) {
      if (error instanceof ForeignStateError || error instanceof CorruptStateError || error instanceof RegressedStateError || error instanceof MisplacedStateError) {
        return this.refuseState(deployment, error, fence);
      }
      if (error instanceof RebuildWaitingError) return this.refuseState(deployment, error, fence, d.timings.progressCheckIntervalMs);
      throw error;
    }
    if (!deployment.metadata.finalizers?.includes(FLINK_DEPLOYMENT_FINALIZER)) deployment = await d.finalizers.add(deployment, fence);

    const pass: Pass = {
      deployment,
      state,
      outcome: { jobManagerStatus: 'MISSING' },
      api: fencedFlinkApi(d.flinkApi(deployment), fence),
      fence,
      settings: deploymentOperatorSettings(state.lastReconciledSpec ?? deployment.spec),
    };
    await this.observe(pass);
    let result: StepResult;
    try {
      result = await this.step(pass);
    } catch (error) {
      if (isFencingOrPrecondition(error)) throw error;
      if (!(error instanceof FlinkRestError)) {
        // Not an expected outcome: the status still tells the truth, then the runtime retries with backoff.
        pass.outcome.error = `Reconcile failed: ${(error as Error)?.message ?? String(error)}; retrying with backoff`;
        await this.recordStatus(pass);
        throw error;
      }
      pass.outcome.error = `Flink REST call failed: ${error.message}`;
      result = 'progress';
    }
    await this.recordStatus(pass);
    return { requeueAfterMs: this.requeueFor(result, pass) };
  }

  private async recordStatus(pass: Pass): Promise<void> {
    const d = this.deps;
    await d.status.record(pass.deployment, buildStatus(pass.deployment, pass.state, pass.outcome, new Date(d.now())), pass.fence);
  }

  private requeueFor(result: StepResult, pass: Pass): number {
    const t = this.deps.timings;
    if (result === 'continue') return 0;
    if (result === 'progress') return t.progressCheckIntervalMs;
    const wakeUp = pass.wakeUpInMs !== undefined ? Math.max(pass.wakeUpInMs, 50) : Infinity;
    const steady = pass.state.reconciliationState === 'DEPLOYED' && !pass.state.pendingSavepoint
      && (pass.state.lastReconciledSpec?.job?.state === 'suspended' || (pass.outcome.jobManagerStatus === 'READY' && pass.outcome.job?.state === 'RUNNING'));
    return Math.min(steady ? t.reconcileIntervalMs : t.progressCheckIntervalMs, wakeUp);
  }

  // ---- state ----

  private async save(pass: Pass, fn: StateUpdateFunction): Promise<void> {
    pass.state = await this.deps.store.update(pass.deployment, fn, { fence: pass.fence, basedOnRevision: pass.state.revision });
  }

  private async refuseState(deployment: FlinkDeploymentV1, error: Error, fence: SideEffectFence, requeueAfterMs = this.deps.timings.reconcileIntervalMs): Promise<ReconcileResult> {
    const d = this.deps;
    d.events.emit(deployment, 'Warning', 'StateError', error.message);
    const previous = deployment.status ?? {};
    const nowText = new Date(d.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const before = previous.conditions?.find((c) => c.type === 'Ready');
    await d.status.record(
      deployment,
      {
        ...previous,
        error: error.message,
        conditions: [{ type: 'Ready', status: 'False', reason: 'StateError', message: error.message, lastTransitionTime: before?.status === 'False' ? before.lastTransitionTime : nowText }],
      },
      fence,
    );
    return { requeueAfterMs };
  }

  // ---- observe ----

  private async observe(pass: Pass): Promise<void> {
    const d = this.deps;
    const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
    const jobManager = d.clusterDeployments.get(namespace, name);
    const taskManager = d.clusterDeployments.get(namespace, taskManagerDeploymentName(name));
    if (taskManager) {
      pass.outcome.taskManagerReplicas = taskManager.status?.replicas ?? 0;
    } else if (jobManager && clusterModeOf(deployedSpecOf(pass.state) ?? pass.deployment.spec) === 'native') {
      // Native mode: the JobManager created its TaskManager pods itself (design/009-native-mode.md).
      const pods = await d.cluster.listPods(namespace, `app=${name},component=taskmanager`);
      pass.outcome.taskManagerReplicas = pods.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded').length;
    }
    let observed = classifyJobManager(jobManager, undefined);
    if (observed.status === 'DEPLOYING' && jobManager) {
      observed = classifyJobManager(jobManager, await d.cluster.listPods(namespace, `app=${name},component=jobmanager`));
    }
    pass.outcome.jobManagerStatus = observed.status;
    if (observed.error) pass.outcome.error = observed.error;
    if (observed.status !== 'DEPLOYED_NOT_READY') return;
    try {
      const jobs = await pass.api.listJobs();
      pass.outcome.jobManagerStatus = 'READY';
      const wanted = pass.state.jobIdToSubmit ?? pass.state.deployedJobId;
      const job = jobs.find((j) => j.jid === wanted);
      if (job) pass.outcome.job = toObservedJob(job);
    } catch (error) {
      if (!(error instanceof FlinkRestError)) throw error;
      pass.restUnreachable = error.message;
      d.log.debug({ err: error.message }, 'Flink REST API not answering yet');
    }
  }

  // ---- decide and act ----

  private async step(pass: Pass): Promise<StepResult> {
    const d = this.deps;
    const { deployment } = pass;
    const generation = deployment.metadata.generation ?? 0;
    const errors = validateFlinkDeployment(deployment, pass.state.lastReconciledSpec ? { spec: pass.state.lastReconciledSpec } : undefined);
    let desired: FlinkDeploymentSpec = deployment.spec;
    let desiredGeneration = generation;
    if (errors.length > 0) {
      const message = `Invalid spec (generation ${generation}): ${formatFieldErrors(errors)}. ` +
        (pass.state.lastReconciledSpec ? 'The last valid spec keeps running until the spec is fixed.' : 'Nothing is deployed until the spec is fixed.');
      pass.outcome.error = message;
      this.announceOnce(deployment, `invalid-${generation}`, 'Warning', 'ValidationError', message);
      if (!pass.state.lastReconciledSpec) return 'steady';
      desired = pass.state.lastReconciledSpec;
      desiredGeneration = pass.state.lastReconciledGeneration ?? generation;
    }
    pass.settings = deploymentOperatorSettings(desired);

    const state = pass.state;
    if (state.pendingSavepoint) return this.snapshots.progress(pass, state.pendingSavepoint);
    if (state.reconciliationState === 'UPGRADING' || state.reconciliationState === 'ROLLING_BACK') {
      if (state.jobIdToSubmit) return this.cluster.deploy(pass);
      if (desired.job?.state === 'suspended') return this.cluster.finishSuspend(pass, desired, desiredGeneration);
      return this.cluster.recordDeployIntent(pass, desired, desiredGeneration, restorePathFor(desired, state));
    }
    if (!state.lastReconciledSpec && state.deployedJobId) {
      // Rebuilt without the deployed spec: a job runs an unknown spec. Upgrade it the normal way (a savepoint first).
      this.announceOnce(deployment, `unconfirmed-${state.deployedJobId}`, 'Normal', 'SpecChanged', `Job ${state.deployedJobId} runs a spec the operator cannot confirm; upgrading it to generation ${desiredGeneration} through the normal path`);
      return this.cluster.stopJob(pass, desired, desiredGeneration);
    }
    if (!state.lastReconciledSpec) {
      if (desired.job?.state === 'suspended') return 'steady';
      return this.cluster.recordDeployIntent(pass, desired, desiredGeneration, desired.job?.initialSavepointPath);
    }

    const reconciledSuspended = state.lastReconciledSpec.job?.state === 'suspended';
    const wantSuspended = desired.job?.state === 'suspended';
    if (reconciledSuspended) {
      if (wantSuspended) return 'steady';
      d.events.emit(deployment, 'Normal', 'SpecChanged', 'Job resumed (job.state: running)');
      return this.cluster.resume(pass, desired, desiredGeneration);
    }
    const diff = diffSpecs(state.lastReconciledSpec, desired);
    if ((wantSuspended || diff.type === 'UPGRADE') && state.failedUpgrade?.generation === desiredGeneration) {
      // Its stop-with-savepoint failed: not retried on every pass, only for the next spec change.
      pass.outcome.error = `Generation ${desiredGeneration} is not deployed: ${state.failedUpgrade.reason}`;
      return this.steadyState(pass, state.lastReconciledSpec, state.lastReconciledGeneration ?? desiredGeneration);
    }
    if (wantSuspended) {
      this.announceOnce(deployment, `suspend-${desiredGeneration}`, 'Normal', 'Suspended', 'Suspending the job (job.state: suspended)');
      return this.cluster.stopJob(pass, desired, desiredGeneration);
    }
    if (diff.type !== 'IGNORE') {
      this.announceOnce(deployment, `changed-${desiredGeneration}`, 'Normal', 'SpecChanged', `Spec changed (${diff.type}): ${diff.changedFields.join(', ')}`);
      if (diff.type === 'SCALE') return this.cluster.rescale(pass, desired, desiredGeneration);
      if (diff.type === 'SAVEPOINT_REDEPLOY') return this.cluster.recordDeployIntent(pass, desired, desiredGeneration, desired.job?.initialSavepointPath);
      return this.cluster.stopJob(pass, desired, desiredGeneration);
    }
    return this.steadyState(pass, desired, desiredGeneration);
  }

  /**
   * Nothing to redeploy. In order: roll back a spec that never became ready, restart or report a
   * failed job, take a due savepoint, trim the history, acknowledge ignored changes, promote the
   * stable spec, keep the TaskManager replicas, report a missing JobManager.
   */
  private async steadyState(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const d = this.deps;
    const state = pass.state;
    const now = d.now();
    const job = pass.outcome.job;
    const running = job?.state === 'RUNNING' && pass.outcome.jobManagerStatus === 'READY';

    const drift = this.runningClusterDrift(pass);
    if (drift) return this.repairDrift(pass, desired, generation, drift);
    if (state.reconciliationState === 'DEPLOYED' && this.shouldRollBack(pass, now)) {
      return this.cluster.rollBack(pass, `not ready within ${pass.settings.readinessTimeoutMs / 1000} s (JobManager ${pass.outcome.jobManagerStatus}, job ${job?.state ?? 'not running'})`);
    }
    if (job?.state === 'FAILED' && state.deployedJobId === job.jobId) {
      if (pass.settings.restartFailedJobs) return this.cluster.restartFailedJob(pass, generation);
      await this.reportFailedJob(pass, job.jobId);
    }
    if (running && state.deployedJobId) {
      const due = dueSavepoint(state, desired, pass.settings, now);
      if (due) {
        return this.snapshots.start(pass, {
          triggerType: due.triggerType, stopJob: false, jobId: state.deployedJobId, spec: desired, ...(due.triggerType === 'MANUAL' ? { nonce: due.nonce } : {}),
        });
      }
      const next = untilNextPeriodicSavepoint(state, pass.settings, now);
      if (next !== undefined) pass.wakeUpInMs = next;
      await this.snapshots.trimHistory(pass);
    }

    const acknowledged = acknowledgedSpec(desired, state);
    const ack = state.lastReconciledGeneration !== generation || !sameValue(state.lastReconciledSpec, acknowledged);
    const promote = running && state.reconciliationState === 'DEPLOYED'
      && (!sameValue(state.lastStableSpec, state.lastReconciledSpec) || state.lastStableGeneration !== state.lastReconciledGeneration);
    if ((ack && state.reconciliationState !== 'ROLLED_BACK') || promote) {
      const reconciled = state.lastReconciledSpec;
      await this.save(pass, (s) => {
        const next = { ...s };
        if (ack && s.reconciliationState !== 'ROLLED_BACK') Object.assign(next, { lastReconciledSpec: acknowledged, lastReconciledGeneration: generation });
        if (promote && sameValue(s.lastReconciledSpec, reconciled)) Object.assign(next, { lastStableSpec: next.lastReconciledSpec, lastStableGeneration: next.lastReconciledGeneration, firstDeployment: false });
        return next;
      });
    }
    await this.cluster.ensureTaskManagerReplicas(pass);
    if (pass.outcome.jobManagerStatus === 'MISSING' && state.reconciliationState !== 'UPGRADING') {
      const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
      const message = `JobManager Deployment ${namespace}/${name} is missing; the job is not running. Delete and recreate the FlinkDeployment or change job.savepointRedeployNonce to redeploy from job.initialSavepointPath`;
      pass.outcome.error = message;
      this.announceOnce(pass.deployment, `missing-${state.deployedJobId}`, 'Warning', 'Missing', message);
    }
    return 'steady';
  }

  /**
   * The running cluster is not the one the state says was deployed: the JobManager Deployment's
   * pinned job id (deployed-record.ts) is not `deployedJobId`. Someone (a person, an old manifest,
   * a process that was not fenced) replaced it. Undefined when it matches or cannot be told.
   */
  private runningClusterDrift(pass: Pass): string | undefined {
    const { state } = pass;
    if (state.reconciliationState !== 'DEPLOYED' && state.reconciliationState !== 'ROLLED_BACK') return undefined;
    if (!state.deployedJobId || state.jobIdToSubmit || state.pendingSavepoint) return undefined;
    const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
    const running = readDeployedRecord(this.deps.clusterDeployments.get(namespace, name)).jobId;
    if (running === undefined || running === state.deployedJobId) return undefined;
    return `the JobManager Deployment ${namespace}/${name} runs job id ${running}, but the operator deployed job ${state.deployedJobId}`;
  }

  /** Reports the drift (status.error, a Warning event, a metric) and repairs it through the normal upgrade path: a savepoint first while a job runs. */
  private async repairDrift(pass: Pass, desired: FlinkDeploymentSpec, generation: number, drift: string): Promise<StepResult> {
    const d = this.deps;
    d.counters.driftDetected();
    const message = `The running Flink cluster is not the one the operator deployed: ${drift}. It is redeployed from the spec through a savepoint upgrade`;
    pass.outcome.error = message;
    this.announceOnce(pass.deployment, `drift-${pass.state.deployedJobId}`, 'Warning', 'ClusterDrift', message);
    const jobs = pass.outcome.jobManagerStatus === 'READY' ? await pass.api.listJobs() : [];
    const running = jobs.find((j) => j.state === 'RUNNING');
    if (running && desired.job?.upgradeMode !== 'stateless') {
      return this.snapshots.start(pass, { triggerType: 'UPGRADE', stopJob: true, jobId: running.jid, spec: desired });
    }
    return this.cluster.recordDeployIntent(pass, desired, generation, restorePathFor(desired, pass.state));
  }

  /** The Apache operator's rule: enabled, a non-suspended stable spec to go back to, same Flink version, not ready for longer than the readiness timeout. */
  private shouldRollBack(pass: Pass, now: number): boolean {
    const { state, settings, outcome } = pass;
    if (!settings.rollbackEnabled || !state.lastStableSpec || !state.lastReconciledSpec) return false;
    if (state.lastStableSpec.job?.state === 'suspended' || sameValue(state.lastStableSpec, state.lastReconciledSpec)) return false;
    if (state.lastStableSpec.flinkVersion !== state.lastReconciledSpec.flinkVersion) return false;
    if (outcome.jobManagerStatus === 'READY' && outcome.job?.state === 'RUNNING') return false;
    const since = state.reconciliationTimestamp ? Date.parse(state.reconciliationTimestamp) : now;
    return now - since > settings.readinessTimeoutMs;
  }

  private async reportFailedJob(pass: Pass, jobId: string): Promise<void> {
    let cause = 'see the JobManager logs';
    try {
      const exceptions = await pass.api.getExceptions(jobId);
      const newest = exceptions.exceptionHistory?.entries?.[0];
      cause = (newest?.stacktrace ?? exceptions['root-exception'] ?? cause).split('\n')[0]!.trim();
    } catch (error) {
      this.deps.log.debug({ err: (error as Error).message }, 'no exceptions of the failed job');
    }
    const message = `Job ${jobId} FAILED: ${cause}. Fix the cause and change the spec (or restartNonce) to redeploy; set kubernetes.operator.job.restart.failed: "true" to restart failed jobs automatically`;
    pass.outcome.error = message;
    this.announceOnce(pass.deployment, `failed-${jobId}`, 'Warning', 'JobException', message);
  }

  private announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const uid = deployment.metadata.uid ?? `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const marker = `${reason}:${key}`;
    if (this.announced.get(`${uid}/${reason}`) === marker) return;
    this.announced.set(`${uid}/${reason}`, marker);
    this.deps.events.emit(deployment, type, reason, message);
  }
}

function isFencingOrPrecondition(error: unknown): boolean {
  return error instanceof FencedOutError || error instanceof NotLeaderError || error instanceof StaleLeaderError || error instanceof StatePreconditionError;
}

function toObservedJob(job: { jid: string; name: string; state: string; 'start-time': number; 'last-modification': number }): ObservedJob {
  return {
    jobId: job.jid,
    name: job.name,
    state: job.state as ObservedJob['state'],
    ...(job['start-time'] > 0 ? { startTime: job['start-time'] } : {}),
    ...(job['last-modification'] > 0 ? { updateTime: job['last-modification'] } : {}),
  };
}

