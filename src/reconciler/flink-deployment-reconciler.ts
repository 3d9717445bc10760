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
import { emptyInternalState, type InternalState, type PendingSnapshot, type SavepointRecord } from '../api/internal-state.js';
import { savepointDirectory, flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { formatFieldErrors, validateFlinkDeployment } from '../api/spec-validation.js';
import type { ReconcileRequest, ReconcileResult, Reconciler } from '../runtime/reconcile.js';
import { CorruptStateError, ForeignStateError } from '../state/state-errors.js';
import type { StateUpdateFunction } from '../state/state-store.js';
import { rebuildStateFromWorld } from '../state/state-rebuild.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { classifyJobManager } from './job-manager-observer.js';
import { savepointProgress } from './pending-savepoint.js';
import type { FlinkDeploymentReconcilerDependencies, FlinkJobApi } from './reconciler-dependencies.js';
import { buildStatus, type ObservedJob, type PassOutcome } from './status-builder.js';
import { diffSpecs, sameValue } from './spec-diff.js';

const TERMINAL_JOB_STATES = new Set(['FAILED', 'CANCELED', 'FINISHED', 'SUSPENDED']);

function taskManagerName(name: string): string {
  return `${name}-taskmanager`;
}

/** Outcome of one step: requeue now (`continue`), after the progress interval, or the steady interval. */
type StepResult = 'continue' | 'progress' | 'steady';

/** Mutable context of one reconcile pass. */
interface Pass {
  deployment: FlinkDeploymentV1;
  state: InternalState;
  outcome: PassOutcome;
  api: FlinkJobApi;
}

export class FlinkDeploymentReconciler implements Reconciler {
  /** Generation for which SpecChanged / ValidationError was last emitted, by uid (event hygiene only). */
  private readonly announced = new Map<string, string>();

  constructor(private readonly deps: FlinkDeploymentReconcilerDependencies) {}

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

    const pass: Pass = { deployment, state, outcome: { jobManagerStatus: 'MISSING' }, api: d.flinkApi(deployment) };
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
    const steady = pass.state.reconciliationState === 'DEPLOYED' && !pass.state.pendingSavepoint
      && (pass.state.lastReconciledSpec?.job?.state === 'suspended' || (pass.outcome.jobManagerStatus === 'READY' && pass.outcome.job?.state === 'RUNNING'));
    return steady ? t.reconcileIntervalMs : t.progressCheckIntervalMs;
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
    d.events.emit(deployment, 'Warning', 'StateRebuilt', `State ConfigMap ${name}-operator-state: ${rebuilt.message}`);
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
    const taskManager = d.clusterDeployments.get(namespace, taskManagerName(name));
    if (taskManager) pass.outcome.taskManagerReplicas = taskManager.status?.replicas ?? 0;
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

    const state = pass.state;
    if (state.pendingSavepoint) return this.progressPendingSavepoint(pass, state.pendingSavepoint);
    if (state.reconciliationState === 'UPGRADING') {
      if (state.jobIdToSubmit) return this.deploy(pass);
      if (desired.job?.state === 'suspended') return this.finishSuspend(pass, desired, desiredGeneration);
      return this.recordDeployIntent(pass, desired, desiredGeneration, this.restorePathFor(desired, state));
    }
    if (!state.lastReconciledSpec) {
      if (desired.job?.state === 'suspended') return 'steady';
      return this.recordDeployIntent(pass, desired, desiredGeneration, desired.job?.initialSavepointPath);
    }

    const reconciledSuspended = state.lastReconciledSpec.job?.state === 'suspended';
    const wantSuspended = desired.job?.state === 'suspended';
    if (reconciledSuspended) {
      if (wantSuspended) return 'steady';
      d.events.emit(deployment, 'Normal', 'SpecChanged', 'Job resumed (job.state: running)');
      return this.recordDeployIntent(pass, desired, desiredGeneration, this.restorePathFor(desired, state));
    }
    if (wantSuspended) {
      this.announceOnce(deployment, `suspend-${desiredGeneration}`, 'Normal', 'Suspended', 'Suspending the job (job.state: suspended)');
      return this.stopJob(pass, desired, desiredGeneration);
    }

    const diff = diffSpecs(state.lastReconciledSpec, desired);
    if (diff.type !== 'IGNORE') {
      this.announceOnce(deployment, `changed-${desiredGeneration}`, 'Normal', 'SpecChanged', `Spec changed (${diff.type}): ${diff.changedFields.join(', ')}`);
      return this.stopJob(pass, desired, desiredGeneration);
    }
    return this.steadyState(pass, desired, desiredGeneration);
  }

  /** Nothing to deploy: acknowledge ignored changes, promote the stable spec, watch the JobManager. */
  private async steadyState(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const d = this.deps;
    const state = pass.state;
    const ack = state.lastReconciledGeneration !== generation || !sameValue(state.lastReconciledSpec, withRunningState(desired));
    const promote = pass.outcome.job?.state === 'RUNNING' && state.reconciliationState === 'DEPLOYED'
      && (!sameValue(state.lastStableSpec, state.lastReconciledSpec) || state.lastStableGeneration !== state.lastReconciledGeneration);
    if (ack || promote) {
      const spec = withRunningState(desired);
      const reconciled = state.lastReconciledSpec;
      await this.save(pass, (s) => {
        const next = { ...s };
        if (ack) Object.assign(next, { lastReconciledSpec: spec, lastReconciledGeneration: generation });
        if (promote && sameValue(s.lastReconciledSpec, reconciled)) Object.assign(next, { lastStableSpec: ack ? spec : s.lastReconciledSpec, lastStableGeneration: ack ? generation : s.lastReconciledGeneration, firstDeployment: false });
        return next;
      });
    }
    if (pass.outcome.jobManagerStatus === 'MISSING' && state.reconciliationState === 'DEPLOYED') {
      const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
      const message = `JobManager Deployment ${namespace}/${name} is missing; the job is not running. Delete and recreate the FlinkDeployment or change job.savepointRedeployNonce to redeploy from job.initialSavepointPath`;
      pass.outcome.error = message;
      this.announceOnce(pass.deployment, `missing-${state.deployedJobId}`, 'Warning', 'Missing', message);
    }
    return 'steady';
  }

  private restorePathFor(desired: FlinkDeploymentSpec, state: InternalState): string | undefined {
    const mode = desired.job?.upgradeMode ?? 'stateless';
    return mode === 'stateless' ? undefined : state.upgradeSavepointPath ?? state.savepointHistory.at(-1)?.location;
  }

  /** Step 1 of a deployment: pin the spec, the job id and the restore path (design/005). */
  private async recordDeployIntent(pass: Pass, desired: FlinkDeploymentSpec, generation: number, restoreFrom: string | undefined): Promise<StepResult> {
    const jobId = this.deps.newJobId();
    const spec = withRunningState(desired);
    const timestamp = new Date(this.deps.now()).toISOString();
    await this.save(pass, (s) => ({
      ...s,
      reconciliationState: 'UPGRADING',
      lastReconciledSpec: spec,
      lastReconciledGeneration: generation,
      jobIdToSubmit: s.jobIdToSubmit ?? jobId,
      upgradeSavepointPath: restoreFrom,
      firstDeployment: s.lastReconciledSpec === undefined ? true : s.firstDeployment,
      reconciliationTimestamp: timestamp,
    }));
    return this.deploy(pass);
  }

  /** Steps 2–3 (6–7): apply the cluster with the pinned job id, then record it as deployed. */
  private async deploy(pass: Pass): Promise<StepResult> {
    const d = this.deps;
    const state = pass.state;
    const spec = state.lastReconciledSpec!;
    const jobId = state.jobIdToSubmit!;
    const restoreFrom = state.upgradeSavepointPath;
    const objects = d.cluster.render(pass.deployment, {
      spec,
      generation: state.lastReconciledGeneration ?? pass.deployment.metadata.generation ?? 0,
      specHash: d.specHash(spec),
      jobId,
      ...(restoreFrom ? { restoreFrom } : {}),
      ...(spec.job?.allowNonRestoredState ? { allowNonRestoredState: true } : {}),
    });
    const applied = await d.cluster.apply(objects);
    if (applied.written.length > 0) {
      d.events.emit(pass.deployment, 'Normal', 'Submit', `Deploying job ${jobId}` + (restoreFrom ? ` from savepoint ${restoreFrom}` : ' without state'));
    }
    // The restore path is spent once the deployment carries it (its args say --fromSavepoint).
    await this.save(pass, (s) => (s.jobIdToSubmit === jobId ? { ...s, reconciliationState: 'DEPLOYED', deployedJobId: jobId, jobIdToSubmit: undefined, upgradeSavepointPath: undefined } : s));
    pass.outcome.jobManagerStatus = 'DEPLOYING';
    pass.outcome.job = undefined;
    return 'progress';
  }

  /** Stops the running job for an upgrade or a suspend, with a savepoint when the mode asks for one. */
  private async stopJob(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const state = pass.state;
    const mode = desired.job?.upgradeMode ?? 'stateless';
    const job = pass.outcome.job;
    const suspend = desired.job?.state === 'suspended';
    if (mode === 'stateless') {
      if (suspend) return this.finishSuspend(pass, desired, generation);
      return this.recordDeployIntent(pass, desired, generation, undefined);
    }
    if (job?.state === 'RUNNING' && state.deployedJobId) {
      const pending: PendingSnapshot = {
        kind: 'savepoint',
        triggerType: 'UPGRADE',
        jobId: state.deployedJobId,
        stopJob: true,
        requestedAt: this.deps.now(),
        // Chosen here and recorded with the intent, so a trigger re-sent after a crash is the same operation for Flink.
        triggerId: this.deps.newJobId(),
        ...(savepointTarget(desired) ? { targetDirectory: savepointTarget(desired)! } : {}),
        ...(formatTypeOf(desired) ? { formatType: formatTypeOf(desired)! } : {}),
      };
      await this.save(pass, (s) => (s.pendingSavepoint ? s : { ...s, reconciliationState: 'UPGRADING', pendingSavepoint: pending }));
      return this.sendSavepointTrigger(pass, pass.state.pendingSavepoint!);
    }
    if (job && TERMINAL_JOB_STATES.has(job.state) && this.restorePathFor(desired, state)) {
      // The job already ended: nothing to stop; restore from the newest known savepoint.
      await this.save(pass, (s) => ({ ...s, reconciliationState: 'UPGRADING', upgradeSavepointPath: s.upgradeSavepointPath ?? s.savepointHistory.at(-1)?.location }));
      return 'continue';
    }
    pass.outcome.error = `Waiting for job ${state.deployedJobId ?? ''} to run before taking the ${suspend ? 'suspend' : 'upgrade'} savepoint (job ${job?.state ?? 'not observed'}, JobManager ${pass.outcome.jobManagerStatus}); set job.upgradeMode: stateless to ${suspend ? 'suspend' : 'upgrade'} without state`;
    return 'progress';
  }

  /**
   * Side effect of a recorded savepoint intent. The trigger id was recorded with the intent, so
   * there is no result to write: Flink answers for that id from now on, and sending it again
   * (after a crash right here) names the same operation.
   */
  private async sendSavepointTrigger(pass: Pass, pending: PendingSnapshot): Promise<StepResult> {
    const options = {
      ...(pending.targetDirectory ? { targetDirectory: pending.targetDirectory } : {}),
      ...(pending.formatType && pending.formatType !== 'UNKNOWN' ? { formatType: pending.formatType } : {}),
      ...(pending.triggerId ? { triggerId: pending.triggerId } : {}),
    };
    if (pending.stopJob) await pass.api.stopWithSavepoint(pending.jobId, { ...options, drain: false });
    else await pass.api.triggerSavepoint(pending.jobId, options);
    return 'progress';
  }

  private async progressPendingSavepoint(pass: Pass, pending: PendingSnapshot): Promise<StepResult> {
    const d = this.deps;
    if (pass.outcome.jobManagerStatus !== 'READY') return 'progress';
    const progress = await savepointProgress(pass.api, pending);
    const same = (s: InternalState) => s.pendingSavepoint?.requestedAt === pending.requestedAt;
    switch (progress.kind) {
      case 'in-progress':
        return 'progress';
      case 'not-sent':
        return this.sendSavepointTrigger(pass, pending);
      case 'completed': {
        const record: SavepointRecord = {
          location: progress.location,
          timeStamp: d.now(),
          triggerType: pending.triggerType,
          ...(pending.formatType ? { formatType: pending.formatType } : {}),
          ...(pending.triggerNonce !== undefined ? { triggerNonce: pending.triggerNonce } : {}),
          jobId: pending.jobId,
        };
        await this.save(pass, (s) => (same(s)
          ? { ...s, pendingSavepoint: undefined, savepointHistory: [...s.savepointHistory, record], upgradeSavepointPath: pending.stopJob ? record.location : s.upgradeSavepointPath }
          : s));
        d.events.emit(pass.deployment, 'Normal', 'SavepointCompleted', `Savepoint ${record.location} completed (${pending.triggerType})`);
        return 'continue';
      }
      case 'failed':
      case 'lost': {
        const message = progress.kind === 'failed'
          ? `Savepoint of job ${pending.jobId} failed: ${progress.reason}; the job keeps its previous spec, the next change retries (or set job.upgradeMode: stateless)`
          : `Upgrade failed: ${progress.reason}; manual restore required: set job.initialSavepointPath and change job.savepointRedeployNonce`;
        d.events.emit(pass.deployment, 'Warning', progress.kind === 'failed' ? 'SavepointError' : 'UpgradeFailed', message);
        pass.outcome.error = message;
        await this.save(pass, (s) => (same(s) ? { ...s, pendingSavepoint: undefined, reconciliationState: 'DEPLOYED' } : s));
        return 'steady';
      }
    }
  }

  /** The job is stopped (or stateless): record the suspended spec, then delete the JobManager and TaskManagers. */
  private async finishSuspend(pass: Pass, desired: FlinkDeploymentSpec, generation: number): Promise<StepResult> {
    const spec = structuredClone(desired);
    const timestamp = new Date(this.deps.now()).toISOString();
    await this.save(pass, (s) => ({ ...s, reconciliationState: 'UPGRADING', lastReconciledSpec: spec, lastReconciledGeneration: generation, reconciliationTimestamp: timestamp }));
    const { namespace, name } = pass.deployment.metadata as { namespace: string; name: string };
    const remaining = await this.deps.cluster.deleteDeployments(namespace, [name, taskManagerName(name)]);
    if (remaining.length > 0) return 'progress';
    await this.save(pass, (s) => ({ ...s, reconciliationState: 'DEPLOYED' }));
    pass.outcome.job = undefined;
    return 'steady';
  }

  // ---- deletion ----

  private async cleanup(deployment: FlinkDeploymentV1): Promise<ReconcileResult> {
    const d = this.deps;
    if (!deployment.metadata.finalizers?.includes(FLINK_DEPLOYMENT_FINALIZER)) return {};
    const { namespace, name } = deployment.metadata as { namespace: string; name: string };
    this.announceOnce(deployment, 'cleanup', 'Normal', 'Cleanup', 'Cleaning up the Flink cluster before deleting the FlinkDeployment');
    const remaining = await d.cluster.deleteDeployments(namespace, [name, taskManagerName(name)]);
    if (remaining.length > 0) {
      await d.status.record(deployment, { ...deployment.status, lifecycleState: 'DELETING' });
      return { requeueAfterMs: d.timings.progressCheckIntervalMs };
    }
    await d.cluster.deleteServicesAndConfig(namespace, [`${name}-rest`, name], `flink-config-${name}`);
    await d.finalizers.remove(deployment);
    this.announced.delete(deployment.metadata.uid ?? '');
    return {};
  }

  private announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const uid = deployment.metadata.uid ?? `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const marker = `${reason}:${key}`;
    if (this.announced.get(`${uid}/${reason}`) === marker) return;
    this.announced.set(`${uid}/${reason}`, marker);
    this.deps.events.emit(deployment, type, reason, message);
  }
}

function withRunningState(spec: FlinkDeploymentSpec): FlinkDeploymentSpec {
  const copy = structuredClone(spec);
  if (copy.job) copy.job.state = 'running';
  return copy;
}

function savepointTarget(spec: FlinkDeploymentSpec): string | undefined {
  return savepointDirectory(flattenFlinkConfiguration(spec.flinkConfiguration));
}

function formatTypeOf(spec: FlinkDeploymentSpec): 'CANONICAL' | 'NATIVE' | undefined {
  const value = flattenFlinkConfiguration(spec.flinkConfiguration)['kubernetes.operator.savepoint.format.type']?.toUpperCase();
  return value === 'NATIVE' || value === 'CANONICAL' ? value : undefined;
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

