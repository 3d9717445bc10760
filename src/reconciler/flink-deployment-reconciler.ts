/**
 * The FlinkDeployment reconciler: observe → decide → act → record, level-based.
 *
 * One pass: load the state (migrating a legacy status, rebuilding a lost ConfigMap), observe the
 * world (observation.ts), validate the spec, ask the pure decision function for one step
 * (decide.ts; it may ask for more facts first), perform that step (step-executor.ts), and record
 * the user-facing status (status-builder.ts) in one minimal patch.
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
import { attributeDefaultedErrors, withConfigurationDefaults } from '../api/default-flink-configuration.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { unhonouredOperatorKeys } from '../runtime/apache-option-catalog.js';
import { FlinkConfigurationTypoMemo, flinkConfigurationTypoNote } from '../api/flink-configuration-typos.js';
import { formatFieldErrors, validateFlinkDeployment } from '../api/spec-validation.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { afterFailureNote, type ReconcileRequest, type ReconcileResult, type Reconciler } from '../runtime/reconcile.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { CorruptStateError, ForeignStateError, MisplacedStateError, RegressedStateError } from '../state/state-errors.js';
import { reportForeignStateWrite } from '../state/foreign-state-write.js';
import { isFencingOrPrecondition, OncePerSituation, requeueAfterMs, runFencedPass } from './fenced-pass.js';
import { ClusterHealthEvaluator } from './cluster-health.js';
import { decide } from './decide.js';
import { DeletionSteps } from './deletion-steps.js';
import { type DeploymentOperatorSettings, deploymentOperatorSettings } from './deployment-operator-settings.js';
import { type ClusterHealthVerdict, gather, type Observation, observe, POD_DIAGNOSIS_DELAY_MS } from './observation.js';
import type { Decision, StepResult } from './reconcile-step.js';
import type { FlinkDeploymentReconcilerDependencies, FlinkJobApi } from './reconciler-dependencies.js';
import { loadOrRebuildState, RebuildWaitingError } from './state-recovery.js';
import { buildStatus } from './status-builder.js';
import { clusterResourceTotals, mergeClusterInfo } from '../flink/flink-cluster-info.js';
import { deployedSpecOf } from './deployment-specs.js';
import { FlinkBuildObserver } from './flink-build-observer.js';
import { RUNNING_CONDITION_TYPE } from './status-conditions.js';
import { fencedFlinkApi, PassState, stepContext } from './step-context.js';
import { executeStep } from './step-executor.js';
import { ObservationHold } from './observation-hold.js';

/** A state the store refuses to act on (design/004): reported in status and an event, never overwritten. */
function isRefusedState(error: unknown): error is Error {
  return (
    error instanceof ForeignStateError || error instanceof CorruptStateError || error instanceof RegressedStateError || error instanceof MisplacedStateError
  );
}

export class FlinkDeploymentReconciler implements Reconciler {
  /** Which situation each event reason was last emitted for, by uid (event hygiene only). */
  private readonly announced = new OncePerSituation();
  /** The flinkConfiguration typos of each resource's current generation (event and status.error note). */
  private readonly typos = new FlinkConfigurationTypoMemo();
  private readonly health: ClusterHealthEvaluator;
  private readonly deletion: DeletionSteps;
  /** The Flink version and revision of each JobManager start (status.clusterInfo). */
  private readonly flinkBuilds: FlinkBuildObserver;
  /** Observation-only status changes waiting for the next transition's patch. */
  private readonly observationHold: ObservationHold;

  constructor(private readonly deps: FlinkDeploymentReconcilerDependencies) {
    this.health = new ClusterHealthEvaluator(() => deps.now());
    this.flinkBuilds = new FlinkBuildObserver(deps.log);
    this.observationHold = new ObservationHold(deps.timings.observationHoldMs ?? 0);
    this.deletion = new DeletionSteps(deps, {
      announceOnce: (deployment, key, type, reason, message) => this.announceOnce(deployment, key, type, reason, message),
      forget: (deployment) => {
        this.announced.forget(deployment.metadata.uid ?? '');
        this.health.forget(deployment.metadata.uid ?? '');
        this.typos.forget(announcedUid(deployment));
        this.flinkBuilds.forget(deployment.metadata.uid ?? '');
        this.observationHold.release(deployment.metadata.uid ?? '');
      },
    });
  }

  /**
   * One pass, fenced: a pass that finds its term gone (FencedOutError, NotLeaderError, or an object
   * stamped by a newer term) stops where it is and does nothing more; one whose state changed under
   * its decision (StatePreconditionError) stops too and is requeued to decide again.
   */
  async reconcile(request: ReconcileRequest, signal: AbortSignal = new AbortController().signal): Promise<ReconcileResult> {
    return runFencedPass(this.deps, signal, (fence) => this.reconcileInTerm(request, fence));
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
          d.events.emit(
            deployment,
            'Warning',
            'MigrationFailed',
            `${migration.message}; run \`flink-operator migrate -n ${request.namespace}\` after fixing it`,
          );
          return { requeueAfterMs: d.timings.reconcileIntervalMs };
        }
      }
      state = await loadOrRebuildState(d, deployment, fence);
    } catch (error) {
      if (isRefusedState(error)) return this.refuseState(deployment, error, fence);
      if (error instanceof RebuildWaitingError) return this.refuseState(deployment, error, fence, d.timings.progressCheckIntervalMs);
      throw error;
    }
    // A state ConfigMap edited by someone else: said once, before the pass acts on it (design/003).
    await reportForeignStateWrite(d.store, deployment, (...event) => d.events.emit(...event), fence);
    if (!deployment.metadata.finalizers?.includes(FLINK_DEPLOYMENT_FINALIZER)) deployment = await d.finalizers.add(deployment, fence);
    const current = deployment;

    // Validate: an invalid spec is reported and the last valid one keeps being carried out.
    const generation = current.metadata.generation ?? 0;
    const userSpec = current.spec as FlinkDeploymentSpec | undefined;
    // The operator's defaults (scoped to this namespace and Flink version) under the spec's own
    // configuration: what is validated, rendered and read for settings. The specs recorded in the
    // state stay the user's (a change of the defaults alone is not a spec change).
    const configurationDefaults = d.configurationDefaults(request.namespace, (userSpec ?? state.lastReconciledSpec)?.flinkVersion);
    const effective = (spec: FlinkDeploymentSpec) => withConfigurationDefaults(spec, configurationDefaults);
    const errors = attributeDefaultedErrors(
      validateFlinkDeployment(
        userSpec && typeof userSpec === 'object' ? { ...current, spec: effective(userSpec) } : current,
        state.lastReconciledSpec ? { spec: effective(state.lastReconciledSpec) } : undefined,
      ),
      userSpec,
      configurationDefaults,
    );
    let validationError: string | undefined;
    if (errors.length > 0 || !userSpec) {
      validationError =
        `Invalid spec (generation ${generation}): ${userSpec ? formatFieldErrors(errors) : 'spec: required; a FlinkDeployment needs at least spec.image, spec.flinkVersion and spec.jobManager/taskManager resources'}. ` +
        (state.lastReconciledSpec ? 'The last valid spec keeps running until the spec is fixed.' : 'Nothing is deployed until the spec is fixed.');
      this.announceOnce(current, `invalid-${generation}`, 'Warning', 'ValidationError', validationError);
    }
    if (userSpec && typeof userSpec === 'object') this.reportUnsupportedOptions(current, userSpec, generation);
    this.reportFlinkConfigurationTypos(current, generation);
    const specInvalid = validationError !== undefined;
    if (specInvalid && (!state.lastReconciledSpec || !userSpec)) {
      const observed: Observation = { jobManager: 'MISSING', savepointsAwaitingDisposal: 0 };
      await this.recordStatus(current, state, observed, validationError, fence);
      return { requeueAfterMs: d.timings.reconcileIntervalMs };
    }
    const desired = specInvalid ? state.lastReconciledSpec! : userSpec!;
    const desiredGeneration = specInvalid ? (state.lastReconciledGeneration ?? generation) : generation;
    const settings = deploymentOperatorSettings(effective(desired));
    const api = fencedFlinkApi(d.flinkApi(current, fence), fence);
    const passState = new PassState(d, current, fence, state);

    // Observe, then decide (gathering the facts the decision asks for).
    let observed = await this.flinkBuilds.observe(current, await observe(d, current, state, api, settings.restReadyDelayMs), api);
    const resource = `${request.namespace}/${request.name}`;
    let decision: Decision;
    for (let asked = 0; ; asked++) {
      decision = decide({ state, desired, desiredGeneration, specInvalid, observed, settings, configurationDefaults, now: d.now(), resource });
      if (decision.step.kind !== 'gather' || asked >= GATHERABLE_FACTS) break;
      observed = await gather(
        decision.step.fact,
        { deps: d, deployment: current, state, api, health: (o) => this.evaluateHealth(current, state, api, settings, o) },
        observed,
      );
    }
    if (decision.step.kind === 'gather')
      decision = { step: { kind: 'wait', requeue: 'progress', error: `Could not gather ${decision.step.fact} for the decision` } };
    if (decision.announce) this.announceOnce(current, decision.announce.key, decision.announce.type, decision.announce.reason, decision.announce.message);
    if (decision.count === 'drift') d.counters.driftDetected();

    // Act: exactly one step.
    const context = stepContext(
      { deps: d, deployment: current, observed, api, fence, settings, configurationDefaults },
      passState,
      (type, reason, key, message) => this.announceOnce(current, key, type, reason, message),
    );
    let result: StepResult;
    try {
      result = await executeStep(context, decision.step);
    } catch (error) {
      if (isFencingOrPrecondition(error)) throw error;
      // a state the load could not see (a new resource's first write meets a foreign or corrupt ConfigMap): refused as at load
      if (isRefusedState(error)) return this.refuseState(current, error, fence);
      if (!(error instanceof FlinkRestError)) {
        // Not an expected outcome: the status still tells the truth, then the runtime retries with backoff.
        const message = `Reconcile failed: ${(error as Error)?.message ?? String(error)}${afterFailureNote(request)}`;
        await this.recordStatus(current, passState.get(), observed, validationError ?? message, fence);
        throw error;
      }
      result = { requeue: 'progress', error: `Flink REST call failed: ${error.message}` };
    }
    // A step that asks to go on at once but changed nothing would spin: look again after the progress interval.
    if (result.requeue === 'continue' && passState.get().revision === state.revision) result = { ...result, requeue: 'progress' };

    // Record.
    const finalObserved: Observation = { ...observed, ...result.observed };
    // A JobManager that just became available may not answer yet: only a silence that lasts is reported.
    const silentFor = finalObserved.jobManagerAvailableSince !== undefined ? d.now() - finalObserved.jobManagerAvailableSince : Infinity;
    const blind =
      finalObserved.restUnreachable !== undefined && silentFor >= FLINK_UNREACHABLE_GRACE_MS
        ? this.flinkUnreachable(current, finalObserved.restUnreachable)
        : undefined;
    const error = validationError ?? result.error ?? decision.error ?? blind;
    // One line per pass that acts (a wait without an error is the steady state: not logged).
    if (decision.step.kind !== 'wait' || error !== undefined) {
      const announce = decision.announce;
      const why = decision.step.kind === 'deploy' ? decision.step.intent.why : announce ? `${announce.reason}: ${announce.message}` : undefined;
      d.log.info(
        {
          namespace: request.namespace,
          name: request.name,
          phase: state.phase,
          step: decision.step.kind,
          ...(why !== undefined ? { why } : {}),
          ...(error !== undefined ? { error } : {}),
        },
        `reconcile step ${decision.step.kind}`,
      );
    }
    // status.clusterInfo (Apache AbstractFlinkDeploymentObserver.observeClusterInfo): cpu and memory while the JobManager is READY.
    const deployedSpec = deployedSpecOf(passState.get()) ?? desired;
    const clusterInfo = mergeClusterInfo(current.status?.clusterInfo, {
      ...(finalObserved.flinkBuild ? { build: finalObserved.flinkBuild } : {}),
      ...(finalObserved.jobManager === 'READY' ? { totals: clusterResourceTotals(effective(deployedSpec), finalObserved.taskManagerReplicas ?? 0) } : {}),
      ...(finalObserved.checkpoints?.newestCompletedStateSize !== undefined ? { stateSize: finalObserved.checkpoints.newestCompletedStateSize } : {}),
    });
    const transitioned = passState.get().revision !== state.revision;
    const heldMs = await this.recordStatus(current, passState.get(), finalObserved, error, fence, error !== undefined && error === blind, clusterInfo, {
      transitioned,
    });
    // A deploying JobManager's Deployment reports its progress itself (its informer events start a
    // pass): polled only as often as its pods may be diagnosed. observer.rest-ready.delay: look again
    // when the JobManager may count as READY; a held observation is written by then.
    const progress = requeueAfterMs(result, d.timings);
    const next = result.requeue === 'progress' && finalObserved.jobManager === 'DEPLOYING' ? Math.max(progress, POD_DIAGNOSIS_DELAY_MS) : progress;
    const requeue = Math.min(next, finalObserved.restReadyInMs ?? Infinity, heldMs ?? Infinity);
    return { requeueAfterMs: requeue };
  }

  private async recordStatus(
    deployment: FlinkDeploymentV1,
    state: InternalState,
    observed: Observation,
    error: string | undefined,
    fence: SideEffectFence,
    blind = false,
    clusterInfo?: Record<string, string>,
    holdable?: { transitioned: boolean },
  ): Promise<number | undefined> {
    const d = this.deps;
    const note = flinkConfigurationTypoNote(this.typosOf(deployment));
    const outcome = {
      observed,
      ...(error ? { error } : {}),
      ...(blind ? { flinkUnreachable: true } : {}),
      ...(clusterInfo ? { clusterInfo } : {}),
      ...(note ? { note } : {}),
    };
    const status = buildStatus(deployment, state, outcome, new Date(d.now()));
    const uid = deployment.metadata.uid ?? '';
    if (holdable && d.status.pendingChanges) {
      const verdict = this.observationHold.verdict(uid, d.status.pendingChanges(deployment, status), holdable.transitioned, d.now());
      if (verdict.hold) return verdict.remainingMs;
    }
    await d.status.record(deployment, status, fence);
    this.observationHold.release(uid);
    return undefined;
  }

  /**
   * The JobManager is available but its REST API does not answer: the operator cannot see the job,
   * so it must not let the status look healthy. Says so (the message, a Warning event once per
   * cause, a metric) and what to check.
   */
  private flinkUnreachable(deployment: FlinkDeploymentV1, reason: string): string {
    const d = this.deps;
    d.counters.flinkUnreachable();
    const how =
      d.flinkRestAccess === 'direct'
        ? 'The operator reaches it directly (<name>-rest.<namespace>.svc): outside the cluster network run it with --flink-rest-access apiserver-proxy (or auto)'
        : "The operator reaches it through the API server's service proxy: check the <name>-rest Service and the operator's RBAC on services/proxy";
    const message = `Flink's REST API does not answer (${reason}); the operator cannot see the job and changes nothing until it answers. ${how}`;
    this.announceOnce(deployment, `unreachable-${d.flinkRestAccess}`, 'Warning', 'FlinkUnreachable', message);
    return message;
  }

  /** Samples the job's restarts and checkpoints for the cluster health check (cluster-health.ts). */
  private async evaluateHealth(
    deployment: FlinkDeploymentV1,
    state: InternalState,
    api: FlinkJobApi,
    settings: DeploymentOperatorSettings,
    observed: Observation,
  ): Promise<ClusterHealthVerdict> {
    const jobId = state.deployedJobId;
    if (!jobId) return { healthy: true };
    try {
      const metrics = await api.getJobMetrics(jobId, ['numRestarts']);
      const checkpoints = settings.healthCheck.checkpointProgressWindowMs !== undefined ? (await api.getCheckpoints(jobId)).counts.completed : undefined;
      return this.health.evaluate(
        deployment.metadata.uid ?? '',
        {
          jobId,
          restarts: Number(metrics.numRestarts ?? 0),
          ...(checkpoints !== undefined ? { completedCheckpoints: checkpoints } : {}),
          ...(observed.job?.startTime ? { jobStartTime: observed.job.startTime } : {}),
        },
        settings.healthCheck,
      );
    } catch (error) {
      if (!(error instanceof FlinkRestError)) throw error;
      return { healthy: true };
    }
  }

  // ---- state ----

  private async refuseState(
    deployment: FlinkDeploymentV1,
    error: Error,
    fence: SideEffectFence,
    requeueAfterMs = this.deps.timings.reconcileIntervalMs,
  ): Promise<ReconcileResult> {
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
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'StateError',
            message: error.message,
            lastTransitionTime: before?.status === 'False' ? before.lastTransitionTime : nowText,
          },
          // The state cannot be read: Running stays as last observed.
          ...(previous.conditions ?? []).filter((c) => c.type === RUNNING_CONDITION_TYPE),
        ],
      },
      fence,
    );
    return { requeueAfterMs };
  }

  /**
   * `kubernetes.operator.*` keys of the spec this operator does not honour: not an error (Apache ignores
   * them too), but never silent. Looked at once per generation (not on every pass), one Warning if any.
   */
  private reportUnsupportedOptions(deployment: FlinkDeploymentV1, spec: FlinkDeploymentSpec, generation: number): void {
    if (!this.announced.firstTime(announcedUid(deployment), 'UnsupportedOption', `unhonoured-${generation}`)) return;
    const unhonoured = unhonouredOperatorKeys(flattenFlinkConfiguration(spec.flinkConfiguration), 'resource');
    if (unhonoured.length === 0) return;
    const list = unhonoured.map((u) => `${u.key} ${u.message}`).join('; ');
    this.deps.events.emit(deployment, 'Warning', 'UnsupportedOption', `spec.flinkConfiguration: ${list}`);
  }

  /** The flinkConfiguration typos of the resource's current generation (computed once per generation). */
  private typosOf(deployment: FlinkDeploymentV1) {
    const spec = deployment.spec as FlinkDeploymentSpec | undefined;
    const configuration = spec && typeof spec === 'object' ? spec.flinkConfiguration : undefined;
    return this.typos.typos(announcedUid(deployment), deployment.metadata.generation ?? 0, configuration);
  }

  /** Keys of spec.flinkConfiguration that look like typos: a warning (UnknownFlinkOption) once per generation, never a rejection. */
  private reportFlinkConfigurationTypos(deployment: FlinkDeploymentV1, generation: number): void {
    const typos = this.typosOf(deployment);
    if (typos.length === 0 || !this.announced.firstTime(announcedUid(deployment), 'UnknownFlinkOption', `typos-${generation}`)) return;
    this.deps.events.emit(deployment, 'Warning', 'UnknownFlinkOption', `spec.flinkConfiguration: ${typos.map((t) => t.message).join('; ')}`);
  }

  private announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.announced.firstTime(announcedUid(deployment), reason, key)) this.deps.events.emit(deployment, type, reason, message);
  }
}

/** Whose events `announced` counts: the uid, or namespace/name before the API server gave one. */
function announcedUid(deployment: FlinkDeploymentV1): string {
  return deployment.metadata.uid ?? `${deployment.metadata.namespace}/${deployment.metadata.name}`;
}

/** How long an available JobManager may leave its REST API unanswered (starting up) before the status says the operator is blind. */
export const FLINK_UNREACHABLE_GRACE_MS = 10_000;

/** At most this many facts are gathered in one pass (one of each kind). */
const GATHERABLE_FACTS = 3;
