/**
 * The FlinkSessionJob reconciler: observe → decide → act → record, level-based, as the
 * FlinkDeployment reconciler (flink-deployment-reconciler.ts) and under the same contract
 * (src/runtime/reconcile.ts).
 *
 * One pass: load the state from the companion ConfigMap `<name>.sessionjob-state` (migrating an
 * Apache v1beta1 status first), add the finalizer, validate the spec against its session cluster,
 * observe the cluster and its jobs (session-job-observation.ts), ask the pure decision function
 * for one step (session-job-decide.ts), perform it (session-job-steps.ts), record the status in
 * one minimal patch (session-job-status.ts).
 *
 * Guarantees: as the FlinkDeployment reconciler's: every side effect is fenced by the term the
 * pass started in and every state write is decided on the revision it read; a pass never submits
 * a job id twice, never stops a running job for an invalid spec, and whatever a step throws the
 * status says so.
 * Assumptions: one key is never reconciled twice at once (the work queue).
 */
import { FLINK_SESSION_JOB_FINALIZER, FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1 } from '../api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import { validateFlinkSessionJob } from '../api/flink-session-job-validation.js';
import { FlinkConfigurationTypoMemo, flinkConfigurationTypoNote } from '../api/flink-configuration-typos.js';
import { emptyInternalState, type SessionJobInternalState } from '../api/internal-state.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { formatFieldErrors } from '../api/spec-validation.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { afterFailureNote, type ReconcileRequest, type ReconcileResult, type Reconciler } from '../runtime/reconcile.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { CorruptStateError, ForeignStateError, MisplacedStateError, RegressedStateError } from '../state/state-errors.js';
import { reportForeignStateWrite } from '../state/foreign-state-write.js';
import { isFencingOrPrecondition, OncePerSituation, requeueAfterMs, runFencedPass } from './fenced-pass.js';
import { deploymentOperatorSettings } from './deployment-operator-settings.js';
import type { SessionJobFlinkApi, SessionJobReconcilerDependencies } from './session-job-dependencies.js';
import { decideSessionJob, type SessionJobDecision, type SessionJobObservation } from './session-job-decide.js';
import { latestCheckpointOf, observeSessionJob } from './session-job-observation.js';
import { hadSessionJobState, rebuildSessionJobState, SessionJobRebuildWaitingError } from './session-job-state-recovery.js';
import { buildSessionJobStatus } from './session-job-status.js';
import { executeSessionJobStep, type SessionJobStepResult } from './session-job-steps.js';
import { userSnapshotRequests } from './snapshot-resources.js';

export class FlinkSessionJobReconciler implements Reconciler {
  private readonly announced = new OncePerSituation();
  /** The flinkConfiguration typos of each session job's current generation (event and status.error note). */
  private readonly typos = new FlinkConfigurationTypoMemo();

  constructor(private readonly deps: SessionJobReconcilerDependencies) {}

  async reconcile(request: ReconcileRequest, signal: AbortSignal = new AbortController().signal): Promise<ReconcileResult> {
    return runFencedPass(this.deps, signal, (fence) => this.reconcileInTerm(request, fence));
  }

  private async reconcileInTerm(request: ReconcileRequest, fence: SideEffectFence): Promise<ReconcileResult> {
    const d = this.deps;
    let job = d.sessionJobs.get(request.namespace, request.name);
    if (!job) return {};
    const deleting = job.metadata.deletionTimestamp !== undefined && job.metadata.deletionTimestamp !== null;
    if (deleting && !job.metadata.finalizers?.includes(FLINK_SESSION_JOB_FINALIZER)) return {};

    let state: SessionJobInternalState;
    try {
      // Before any write through v1: a legacy status would lose its internal fields (design/002).
      if (job.status && !job.status.stateRef && (await d.store.load(job)).kind === 'missing') {
        fence.check(`migrate the legacy status of FlinkSessionJob ${request.namespace}/${request.name}`);
        const migration = await d.legacy.migrateIfLegacy(job);
        if (migration.kind === 'migrated' || migration.kind === 'resumed') {
          d.events.emit(job, 'Normal', 'Migrated', migration.message);
          job = d.sessionJobs.get(request.namespace, request.name) ?? job;
        } else if (migration.kind !== 'already-migrated') {
          d.events.emit(job, 'Warning', 'MigrationFailed', `${migration.message}; run \`flink-operator migrate -n ${request.namespace}\` after fixing it`);
          return { requeueAfterMs: d.timings.reconcileIntervalMs };
        }
      }
      state = await this.loadOrRebuild(job, fence);
    } catch (error) {
      if (error instanceof SessionJobRebuildWaitingError) {
        await d.status.record(job, { ...(job.status ?? {}), error: error.message }, fence);
        return { requeueAfterMs: d.timings.progressCheckIntervalMs };
      }
      if (
        error instanceof ForeignStateError ||
        error instanceof CorruptStateError ||
        error instanceof RegressedStateError ||
        error instanceof MisplacedStateError
      ) {
        d.events.emit(job, 'Warning', 'StateError', error.message);
        await d.status.record(job, { ...(job.status ?? {}), error: error.message }, fence);
        return { requeueAfterMs: d.timings.reconcileIntervalMs };
      }
      throw error;
    }
    // A state ConfigMap edited by someone else: said once, before the pass acts on it (design/003).
    await reportForeignStateWrite(d.store, job, (...event) => d.events.emit(...event), fence);
    if (!deleting && !job.metadata.finalizers?.includes(FLINK_SESSION_JOB_FINALIZER)) job = await d.finalizers.add(job, fence);
    const current = job;

    // Validate against the session cluster; an invalid spec is reported and the last valid one kept.
    const generation = current.metadata.generation ?? 0;
    const userSpec = current.spec as FlinkSessionJobSpec | undefined;
    const deploymentName = userSpec?.deploymentName ?? state.lastReconciledSpec?.deploymentName ?? '';
    const sessionCluster = deploymentName ? d.sessionClusters.get(request.namespace, deploymentName) : undefined;
    const errors = validateFlinkSessionJob(
      { metadata: current.metadata, spec: userSpec ?? {} },
      {
        ...(sessionCluster && !sessionCluster.spec?.job ? { sessionCluster } : {}),
        ...(state.lastReconciledSpec ? { previous: { spec: state.lastReconciledSpec } } : {}),
        allowedJarSchemes: d.allowedJarSchemes,
      },
    );
    let validationError: string | undefined;
    if (errors.length > 0) {
      validationError =
        `Invalid spec (generation ${generation}): ${formatFieldErrors(errors)}. ` +
        (state.lastReconciledSpec ? 'The last valid spec keeps running until the spec is fixed.' : 'Nothing is submitted until the spec is fixed.');
      this.announceOnce(current, `invalid-${generation}`, 'Warning', 'ValidationError', validationError);
    }
    const typos = this.typosOf(current);
    if (typos.length > 0)
      this.announceOnce(current, `typos-${generation}`, 'Warning', 'UnknownFlinkOption', `spec.flinkConfiguration: ${typos.map((t) => t.message).join('; ')}`);
    if (validationError && !state.lastReconciledSpec && !deleting) {
      await this.record(current, state, { cluster: { kind: 'missing' } }, validationError, fence, false);
      return { requeueAfterMs: d.timings.reconcileIntervalMs };
    }
    const desired = validationError ? state.lastReconciledSpec! : userSpec!;
    const desiredGeneration = validationError ? (state.lastReconciledGeneration ?? generation) : generation;

    // Observe the session cluster and its jobs.
    const apiFor = this.apisFor(fence);
    const seen = await observeSessionJob(d, current, desired.deploymentName ?? '', apiFor);
    let observed: SessionJobObservation = seen.observation;
    if (d.snapshotResources) {
      const owner = { kind: FLINK_SESSION_JOB_KIND as typeof FLINK_SESSION_JOB_KIND, namespace: request.namespace, name: request.name };
      observed = {
        ...observed,
        userSnapshots: userSnapshotRequests(d.snapshotResources.ofJob(FLINK_SESSION_JOB_KIND, request.namespace, request.name), owner, state),
      };
    }
    const api = seen.cluster && !seen.cluster.spec?.job ? apiFor(seen.cluster) : undefined;
    const effective = { flinkConfiguration: effectiveConfiguration(seen.cluster, desired) };
    const settings = deploymentOperatorSettings(effective);
    const resource = `${request.namespace}/${request.name}`;

    let decision: SessionJobDecision = decideSessionJob({ state, desired, desiredGeneration, observed, settings, deleting, now: d.now(), resource });
    if (decision.step.kind === 'gather-checkpoint' && api && state.deployedJobId) {
      try {
        observed = { ...observed, latestCheckpoint: await latestCheckpointOf(api, state.deployedJobId) };
        decision = decideSessionJob({ state, desired, desiredGeneration, observed, settings, deleting, now: d.now(), resource });
      } catch (error) {
        if (!(error instanceof FlinkRestError)) throw error;
      }
    }
    if (decision.announce) this.announceOnce(current, decision.announce.key, decision.announce.type, decision.announce.reason, decision.announce.message);

    // Act: one step.
    let passState = state;
    const context = {
      deps: d,
      job: current,
      cluster: seen.cluster,
      api,
      observed,
      fence,
      settings,
      state: () => passState,
      save: async (fn: (s: SessionJobInternalState) => SessionJobInternalState) =>
        (passState = await d.store.update(current, fn, { fence, basedOnRevision: passState.revision })),
    };
    let result: SessionJobStepResult;
    try {
      result = await executeSessionJobStep(context, decision.step);
    } catch (error) {
      if (isFencingOrPrecondition(error)) throw error;
      if (!(error instanceof FlinkRestError)) {
        await this.record(
          current,
          passState,
          observed,
          validationError ?? `Reconcile failed: ${(error as Error)?.message ?? String(error)}${afterFailureNote(request)}`,
          fence,
          deleting,
        );
        throw error;
      }
      result = { requeue: 'progress', error: `Flink REST call failed: ${error.message}` };
    }
    if (decision.step.kind === 'release') return {};
    if (result.requeue === 'continue' && passState.revision === state.revision) result = { ...result, requeue: 'progress' };

    // Record.
    const error = validationError ?? result.error;
    if (decision.step.kind !== 'wait' || error !== undefined) {
      d.log.info(
        { namespace: request.namespace, name: request.name, phase: state.phase, step: decision.step.kind, ...(error !== undefined ? { error } : {}) },
        `session job step ${decision.step.kind}`,
      );
    }
    await this.record(current, passState, observed, error, fence, deleting);
    return { requeueAfterMs: requeueAfterMs(result, d.timings) };
  }

  /** The session clusters' REST clients of one pass, one per cluster. */
  private apisFor(fence: SideEffectFence): (cluster: FlinkDeploymentV1) => SessionJobFlinkApi {
    const apis = new Map<string, SessionJobFlinkApi>();
    return (cluster) => {
      const key = cluster.metadata.uid ?? '';
      let api = apis.get(key);
      if (!api) apis.set(key, (api = this.deps.flinkApi(cluster, fence)));
      return api;
    };
  }

  /**
   * The state: loaded; empty for a job the operator never wrote state for; rebuilt from the session
   * cluster (and written, with a StateRebuilt warning) when the status says a state existed and its
   * ConfigMap is gone (session-job-state-recovery.ts).
   */
  private async loadOrRebuild(job: FlinkSessionJobV1, fence: SideEffectFence): Promise<SessionJobInternalState> {
    const d = this.deps;
    const loaded = await d.store.load(job);
    if (loaded.kind === 'found') return loaded.state;
    if (!hadSessionJobState(job)) return emptyInternalState();
    const apiFor = this.apisFor(fence);
    const seen = await observeSessionJob(d, job, job.spec?.deploymentName ?? '', apiFor);
    const jobId = job.status?.jobStatus?.jobId;
    const listed = jobId ? seen.observation.jobs?.find((j) => j.jobId === jobId) : undefined;
    let checkpoints;
    if (listed && seen.cluster) {
      try {
        checkpoints = await apiFor(seen.cluster).getCheckpoints(listed.jobId);
      } catch (error) {
        if (!(error instanceof FlinkRestError)) throw error;
        throw new SessionJobRebuildWaitingError(job, error.message);
      }
    }
    const rebuilt = rebuildSessionJobState(job, seen.observation, checkpoints, new Date(d.now()));
    const state = await d.store.update(job, () => rebuilt.state, { fence, basedOnRevision: 0 });
    d.events.emit(job, 'Warning', 'StateRebuilt', rebuilt.message);
    return state;
  }

  private async record(
    job: FlinkSessionJobV1,
    state: SessionJobInternalState,
    observed: SessionJobObservation,
    error: string | undefined,
    fence: SideEffectFence,
    deleting: boolean,
  ): Promise<void> {
    const note = flinkConfigurationTypoNote(this.typosOf(job));
    const status = buildSessionJobStatus(job, state, { observed, ...(error ? { error } : {}), ...(note ? { note } : {}), deleting }, new Date(this.deps.now()));
    await this.deps.status.record(job, status, fence);
  }

  /** The flinkConfiguration typos of the job's current generation (computed once per generation). */
  private typosOf(job: FlinkSessionJobV1) {
    const spec = job.spec as FlinkSessionJobSpec | undefined;
    const configuration = spec && typeof spec === 'object' ? spec.flinkConfiguration : undefined;
    return this.typos.typos(job.metadata.uid ?? `${job.metadata.namespace}/${job.metadata.name}`, job.metadata.generation ?? 0, configuration);
  }

  private announceOnce(job: FlinkSessionJobV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const uid = job.metadata.uid ?? `${job.metadata.namespace}/${job.metadata.name}`;
    if (this.announced.firstTime(uid, reason, key)) this.deps.events.emit(job, type, reason, message);
  }
}

/** The session job's effective configuration: its cluster's, flattened, overlaid by its own (FlinkConfigManager.getSessionJobConfig). */
export function effectiveConfiguration(cluster: FlinkDeploymentV1 | undefined, spec: FlinkSessionJobSpec): Record<string, string> {
  return { ...flattenFlinkConfiguration(cluster?.spec?.flinkConfiguration), ...flattenFlinkConfiguration(spec.flinkConfiguration) };
}
