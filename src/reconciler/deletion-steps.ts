/**
 * Deletion behind the finalizer (the Apache operator's `cleanupInternal`): with
 * `job.savepoint-on-deletion` a stop-with-savepoint first (its location in the final Cleanup
 * event); without it a running job is cancelled, so it ends before its cluster goes. Then the
 * JobManager and TaskManager Deployments, then Flink's HA ConfigMaps, the Services and the Flink
 * ConfigMap, then the finalizer. The state ConfigMap goes with the FlinkDeployment (ownerReference).
 *
 * A session cluster (no spec.job) is not deleted while FlinkSessionJobs name it, nor while jobs no
 * FlinkSessionJob manages still run on it (the Apache SessionReconciler, settings
 * `session.deletion.block-on-session-jobs` and `…block-on-unmanaged-jobs`, both on by default):
 * a CleanupFailed Warning names them, status.error says what to do, and the deletion goes on once
 * they are gone (a session job's deletion enqueues its cluster).
 *
 * Guarantees: with `savepoint-on-deletion`, a job that runs is never deleted without its final
 * savepoint because Flink's REST API did not answer: while the JobManager is available and its REST
 * API does not answer, deletion waits and says so (status.error, a Warning event), and tells how to
 * delete without the savepoint. Every write is fenced by the pass's term.
 * Caveats: a state that cannot be read (corrupt, foreign, regressed) skips the savepoint, never the
 * deletion: deleting is what the user asked for. A cancel that Flink does not answer does not hold
 * the deletion up: the JobManager's deletion ends the job too.
 */
import { withConfigurationDefaults } from '../api/default-flink-configuration.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { emptyInternalState, type InternalState } from '../api/internal-state.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import { deploymentKey, flinkConfigMapName, internalServiceName, restServiceName, taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import type { ReconcileResult } from '../runtime/reconcile.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { deploymentOperatorSettings } from './deployment-operator-settings.js';
import { deployedSpecOf } from './deployment-specs.js';
import { observe, type Observation } from './observation.js';
import type { FlinkDeploymentReconcilerDependencies } from './reconciler-dependencies.js';
import { followSavepoint, startSavepoint } from './snapshot-steps.js';
import { buildStatus } from './status-builder.js';
import { fencedFlinkApi, PassState, stepContext } from './step-context.js';

export interface DeletionHooks {
  announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** Forgets what the reconciler remembers of a deleted deployment (announcements, health samples). */
  forget(deployment: FlinkDeploymentV1): void;
}

export class DeletionSteps {
  constructor(
    private readonly deps: FlinkDeploymentReconcilerDependencies,
    private readonly hooks: DeletionHooks,
  ) {}

  async cleanup(deployment: FlinkDeploymentV1, fence: SideEffectFence): Promise<ReconcileResult> {
    const d = this.deps;
    const { namespace, name } = deploymentKey(deployment);
    this.hooks.announceOnce(deployment, 'cleanup', 'Normal', 'Cleanup', 'Cleaning up the Flink cluster before deleting the FlinkDeployment');
    const spec = deployment.spec as FlinkDeploymentSpec | undefined;
    const configurationDefaults = d.configurationDefaults(namespace, spec?.flinkVersion);
    const settings = deploymentOperatorSettings(withConfigurationDefaults(spec ?? {}, configurationDefaults));
    if (spec && !spec.job) {
      const blocked = await this.sessionJobsBlocking(deployment, settings, fence);
      if (blocked) return blocked;
    }
    let state: InternalState | undefined;
    try {
      const loaded = await d.store.load(deployment);
      if (loaded.kind === 'found') state = loaded.state;
    } catch (error) {
      d.log.warn({ err: (error as Error).message }, 'state unreadable during deletion; deleting without a final savepoint');
    }
    const api = fencedFlinkApi(d.flinkApi(deployment, fence), fence);
    const observed = state ? await observe(d, deployment, state, api) : undefined;
    if (state && observed && spec) {
      const passState = new PassState(d, deployment, fence, state);
      const ctx = stepContext({ deps: d, deployment, observed, api, fence, settings, configurationDefaults }, passState, (type, reason, key, message) =>
        this.hooks.announceOnce(deployment, key, type, reason, message),
      );
      // A session cluster runs no job of its own: nothing to cancel or to take a final savepoint of.
      const jobId = (deployedSpecOf(state) ?? spec).job ? state.deployedJobId : undefined;
      const running = observed.job?.state === 'RUNNING' && observed.jobManager === 'READY';
      if (settings.savepointOnDeletion) {
        if (state.pendingSavepoint) {
          await followSavepoint(ctx);
          if (passState.get().pendingSavepoint) return this.deleting(deployment, passState.get(), observed, undefined, fence);
        } else if (running && jobId) {
          await startSavepoint(ctx, { triggerType: 'UPGRADE', stopJob: true, jobId, spec });
          return this.deleting(deployment, passState.get(), observed, undefined, fence);
        } else if (observed.restUnreachable && jobId) {
          const message =
            `Waiting for Flink's REST API to take the final savepoint of job ${jobId} before deleting (kubernetes.operator.job.savepoint-on-deletion): ${observed.restUnreachable}. ` +
            'To delete without it, set kubernetes.operator.job.savepoint-on-deletion: "false" in spec.flinkConfiguration';
          this.hooks.announceOnce(deployment, `final-savepoint-waits-${jobId}`, 'Warning', 'Cleanup', message);
          return this.deleting(deployment, passState.get(), observed, message, fence);
        }
      } else if (running && jobId) {
        // The Apache operator cancels the job (stateless) before it deletes the cluster.
        try {
          await api.cancelJob(jobId);
          d.events.emit(deployment, 'Normal', 'Cleanup', `Job ${jobId} cancelled (no kubernetes.operator.job.savepoint-on-deletion)`);
        } catch (error) {
          if (!(error instanceof FlinkRestError)) throw error;
          d.log.warn({ err: error.message }, 'cancel before deletion failed; the JobManager is deleted anyway');
        }
      }
      state = passState.get();
    }
    const remaining = await d.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)], fence, settings.deletionPropagation);
    if (remaining.length > 0)
      return state && observed ? this.deleting(deployment, state, observed, undefined, fence) : { requeueAfterMs: d.timings.progressCheckIntervalMs };
    // The job is gone with its JobManager: Flink's HA metadata of it would only mislead a new cluster of the same name.
    await d.cluster.deleteHaMetadata(namespace, name, fence);
    await d.cluster.deleteServicesAndConfig(namespace, [restServiceName(name), internalServiceName(name)], flinkConfigMapName(name), fence);
    const last = state?.savepointHistory.at(-1);
    d.events.emit(
      deployment,
      'Normal',
      'Cleanup',
      `Flink cluster deleted` + (settings.savepointOnDeletion && last ? `; last savepoint: ${last.location}` : ''),
    );
    await d.finalizers.remove(deployment, fence);
    d.forgetDeployment(deployment);
    this.hooks.forget(deployment);
    return {};
  }

  /**
   * A session cluster's deletion waits for its session jobs, then for jobs nobody manages (the
   * Apache texts: "The session jobs [a, b] should be deleted first", "The session cluster has non
   * terminated jobs [...] that should be cancelled first"). A cluster whose REST API does not answer
   * has no jobs to wait for (as the Apache operator: it counts none).
   */
  private async sessionJobsBlocking(
    deployment: FlinkDeploymentV1,
    settings: ReturnType<typeof deploymentOperatorSettings>,
    fence: SideEffectFence,
  ): Promise<ReconcileResult | undefined> {
    if (!settings.blockOnSessionJobs) return undefined;
    const d = this.deps;
    const { namespace, name } = deploymentKey(deployment);
    const sessionJobs = [...d.sessionJobsOf(namespace, name)].sort();
    let message: string | undefined;
    if (sessionJobs.length > 0) {
      message =
        `The session jobs [${sessionJobs.join(', ')}] should be deleted first: ${name} is not deleted while FlinkSessionJobs run on it ` +
        '(kubectl delete flinksessionjob …, or set kubernetes.operator.session.deletion.block-on-session-jobs: "false" to delete it with them)';
    } else if (settings.blockOnUnmanagedJobs) {
      let unmanaged: string[] = [];
      try {
        unmanaged = (await d.flinkApi(deployment, fence).listJobs()).filter((j) => !TERMINAL_JOB_STATES.has(j.state)).map((j) => j.jid);
      } catch (error) {
        if (!(error instanceof FlinkRestError)) throw error;
      }
      if (unmanaged.length > 0)
        message =
          `The session cluster has non terminated jobs [${unmanaged.join(', ')}] that should be cancelled first ` +
          '(or set kubernetes.operator.session.deletion.block-on-unmanaged-jobs: "false")';
    }
    if (!message) return undefined;
    this.hooks.announceOnce(deployment, message, 'Warning', 'CleanupFailed', message);
    let state: InternalState = emptyInternalState();
    try {
      const loaded = await d.store.load(deployment);
      if (loaded.kind === 'found') state = loaded.state;
    } catch (error) {
      d.log.warn({ err: (error as Error).message }, 'state unreadable while the deletion waits for session jobs');
    }
    const observed = await observe(d, deployment, state, fencedFlinkApi(d.flinkApi(deployment, fence), fence));
    return this.deleting(deployment, state, observed, message, fence);
  }

  private async deleting(
    deployment: FlinkDeploymentV1,
    state: InternalState,
    observed: Observation,
    error: string | undefined,
    fence: SideEffectFence,
  ): Promise<ReconcileResult> {
    const d = this.deps;
    await d.status.record(
      deployment,
      buildStatus(deployment, state ?? emptyInternalState(), { observed, deleting: true, ...(error ? { error } : {}) }, new Date(d.now())),
      fence,
    );
    return { requeueAfterMs: d.timings.progressCheckIntervalMs };
  }
}
