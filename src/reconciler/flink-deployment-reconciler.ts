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
 * hash). A pass never tears down a running job because the spec is invalid.
 * Assumptions: one key is never reconciled twice at once (the work queue); the state store's
 * update functions here are idempotent (they set fields from values captured before the call).
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { FLINK_DEPLOYMENT_FINALIZER, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { emptyInternalState, type InternalState } from '../api/internal-state.js';
import { formatFieldErrors, validateFlinkDeployment } from '../api/spec-validation.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../runtime/reconcile.js';
import { CorruptStateError, ForeignStateError } from '../state/state-errors.js';
import { stateConfigMapName, type StateUpdateFunction } from '../state/state-store.js';
import { rebuildStateFromWorld } from '../state/state-rebuild.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { ClusterSteps, deployedSpecOf, restorePathFor, withRunningState } from './cluster-steps.js';
import { flinkConfigMapName, internalServiceName, restServiceName, taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import { clusterModeOf } from '../flink/flink-resource-naming.js';
import { deploymentOperatorSettings, dueSavepoint, untilNextPeriodicSavepoint } from './deployment-operator-settings.js';
import { classifyJobManager } from './job-manager-observer.js';
import type { Pass, PassContext, StepResult } from './reconcile-pass.js';
import type { FlinkDeploymentReconcilerDependencies } from './reconciler-dependencies.js';
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

  constructor(private readonly deps: FlinkDeploymentReconcilerDependencies) {
    const context: PassContext = {
      deps,
      save: (pass, fn) => this.save(pass, fn),
      announceOnce: (deployment, key, type, reason, message) => this.announceOnce(deployment, key, type, reason, message),
    };
    this.snapshots = new SnapshotSteps(context);
    this.cluster = new ClusterSteps(context, this.snapshots);
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileResult> {
    const d = this.deps;
    let deployment = d.deployments.get(request.namespace, request.name);
    if (!deployment) return {};
    if (deployment.metadata.deletionTimestamp) return this.cleanup(deployment);

    let state: InternalState;
    try {
      // Before any write through v1: a legacy status would lose its internal fields (design/002).
      if (deployment.status && !deployment.status.stateRef && (await d.store.load(deployment)).kind === 'missing') {
        const migration = await d.legacy.migrateIfLegacy(deployment);
        if (migration.kind === 'migrated' || migration.kind === 'resumed') {
          d.events.emit(deployment, 'Normal', 'Migrated', migration.message);
        } else if (migration.kind !== 'already-migrated') {
          // Nothing may be written through v1 now (it would drop the legacy fields): an event only.
          d.events.emit(deployment, 'Warning', 'MigrationFailed', `${migration.message}; run \`flink-operator migrate -n ${request.namespace}\` after fixing it`);
          return { requeueAfterMs: d.timings.reconcileIntervalMs };
        }
      }
      state = await this.loadState(deployment);
    } catch (error) {
      if (error instanceof ForeignStateError || error instanceof CorruptStateError) return this.refuseState(deployment, error);
      throw error;
    }
    if (!deployment.metadata.finalizers?.includes(FLINK_DEPLOYMENT_FINALIZER)) deployment = await d.finalizers.add(deployment);

    const pass: Pass = { deployment, state, outcome: { jobManagerStatus: 'MISSING' }, api: d.flinkApi(deployment), settings: deploymentOperatorSettings(state.lastReconciledSpec ?? deployment.spec) };
    await this.observe(pass);
    let result: StepResult;
    try {
      result = await this.step(pass);
    } catch (error) {
      if (!(error instanceof FlinkRestError)) throw error;
      pass.outcome.error = `Flink REST call failed: ${error.message}`;
      result = 'progress';
    }
    await d.status.record(pass.deployment, buildStatus(pass.deployment, pass.state, pass.outcome, new Date(d.now())));
    return { requeueAfterMs: this.requeueFor(result, pass) };
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

  private async loadState(deployment: FlinkDeploymentV1): Promise<InternalState> {
    const d = this.deps;
    const loaded = await d.store.load(deployment);
    if (loaded.kind === 'found') return loaded.state;
    const name = deployment.metadata.name!;
    const namespace = deployment.metadata.namespace!;
    const jobManager = d.clusterDeployments.get(namespace, name);
    const lastSavepoint = deployment.status?.jobStatus?.lastSavepoint?.location;
    if (!jobManager && !deployment.status?.stateRef) return emptyInternalState();
    const rebuilt = rebuildStateFromWorld(deployment, { ...(jobManager ? { jobManagerDeployment: jobManager } : {}), ...(lastSavepoint ? { lastSavepoint } : {}) }, new Date(d.now()));
    const written = await d.store.update(deployment, () => rebuilt.state);
    d.events.emit(deployment, 'Warning', 'StateRebuilt', `State ConfigMap ${stateConfigMapName(name)}: ${rebuilt.message}`);
    return written;
  }

  private async save(pass: Pass, fn: StateUpdateFunction): Promise<void> {
    pass.state = await this.deps.store.update(pass.deployment, fn);
  }

  private async refuseState(deployment: FlinkDeploymentV1, error: Error): Promise<ReconcileResult> {
    const d = this.deps;
    d.events.emit(deployment, 'Warning', 'StateError', error.message);
    const previous = deployment.status ?? {};
    const nowText = new Date(d.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const before = previous.conditions?.find((c) => c.type === 'Ready');
    await d.status.record(deployment, {
      ...previous,
      error: error.message,
      conditions: [{ type: 'Ready', status: 'False', reason: 'StateError', message: error.message, lastTransitionTime: before?.status === 'False' ? before.lastTransitionTime : nowText }],
    });
    return { requeueAfterMs: d.timings.reconcileIntervalMs };
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
    if (!state.lastReconciledSpec) {
      if (desired.job?.state === 'suspended') return 'steady';
      return this.cluster.recordDeployIntent(pass, desired, desiredGeneration, desired.job?.initialSavepointPath);
    }

    const reconciledSuspended = state.lastReconciledSpec.job?.state === 'suspended';
    const wantSuspended = desired.job?.state === 'suspended';
    if (reconciledSuspended) {
      if (wantSuspended) return 'steady';
      d.events.emit(deployment, 'Normal', 'SpecChanged', 'Job resumed (job.state: running)');
      return this.cluster.recordDeployIntent(pass, desired, desiredGeneration, restorePathFor(desired, state));
    }
    if (wantSuspended) {
      this.announceOnce(deployment, `suspend-${desiredGeneration}`, 'Normal', 'Suspended', 'Suspending the job (job.state: suspended)');
      return this.cluster.stopJob(pass, desired, desiredGeneration);
    }

    const diff = diffSpecs(state.lastReconciledSpec, desired);
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

  // ---- deletion ----

  /**
   * Deletion behind the finalizer: with `job.savepoint-on-deletion`, a stop-with-savepoint first
   * (its location in the final Cleanup event), then the JobManager and TaskManager Deployments,
   * then Services and Flink ConfigMap, then the finalizer. The state ConfigMap goes with the
   * FlinkDeployment (ownerReference). A state that cannot be read skips the savepoint, never the
   * deletion.
   */
  private async cleanup(deployment: FlinkDeploymentV1): Promise<ReconcileResult> {
    const d = this.deps;
    if (!deployment.metadata.finalizers?.includes(FLINK_DEPLOYMENT_FINALIZER)) return {};
    const { namespace, name } = deployment.metadata as { namespace: string; name: string };
    this.announceOnce(deployment, 'cleanup', 'Normal', 'Cleanup', 'Cleaning up the Flink cluster before deleting the FlinkDeployment');
    const settings = deploymentOperatorSettings(deployment.spec);
    let pass: Pass | undefined;
    try {
      const loaded = await d.store.load(deployment);
      if (loaded.kind === 'found') pass = { deployment, state: loaded.state, outcome: { jobManagerStatus: 'MISSING', deleting: true }, api: d.flinkApi(deployment), settings };
    } catch (error) {
      d.log.warn({ err: (error as Error).message }, 'state unreadable during deletion; deleting without a final savepoint');
    }
    if (pass && settings.savepointOnDeletion) {
      await this.observe(pass);
      const pending = pass.state.pendingSavepoint;
      if (pending?.stopJob) {
        await this.snapshots.progress(pass, pending);
        if (pass.state.pendingSavepoint) return this.deleting(pass, d.timings.progressCheckIntervalMs);
      } else if (pass.outcome.job?.state === 'RUNNING' && pass.state.deployedJobId) {
        await this.snapshots.start(pass, { triggerType: 'UPGRADE', stopJob: true, jobId: pass.state.deployedJobId, spec: deployment.spec });
        return this.deleting(pass, d.timings.progressCheckIntervalMs);
      }
    }
    const remaining = await d.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)]);
    if (remaining.length > 0) return pass ? this.deleting(pass, d.timings.progressCheckIntervalMs) : { requeueAfterMs: d.timings.progressCheckIntervalMs };
    await d.cluster.deleteServicesAndConfig(namespace, [restServiceName(name), internalServiceName(name)], flinkConfigMapName(name));
    const last = pass?.state.savepointHistory.at(-1);
    d.events.emit(deployment, 'Normal', 'Cleanup', `Flink cluster deleted` + (settings.savepointOnDeletion && last ? `; last savepoint: ${last.location}` : ''));
    await d.finalizers.remove(deployment);
    for (const key of [...this.announced.keys()]) if (key.startsWith(`${deployment.metadata.uid}/`)) this.announced.delete(key);
    return {};
  }

  private async deleting(pass: Pass, requeueAfterMs: number): Promise<ReconcileResult> {
    await this.deps.status.record(pass.deployment, buildStatus(pass.deployment, pass.state, { ...pass.outcome, deleting: true }, new Date(this.deps.now())));
    return { requeueAfterMs };
  }

  private announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const uid = deployment.metadata.uid ?? `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const marker = `${reason}:${key}`;
    if (this.announced.get(`${uid}/${reason}`) === marker) return;
    this.announced.set(`${uid}/${reason}`, marker);
    this.deps.events.emit(deployment, type, reason, message);
  }
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

