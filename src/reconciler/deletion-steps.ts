/**
 * Deletion behind the finalizer (the Apache operator's `cleanupInternal`): with
 * `job.savepoint-on-deletion` a stop-with-savepoint first (its location in the final Cleanup
 * event); without it a running job is cancelled, so it ends before its cluster goes. Then the
 * JobManager and TaskManager Deployments, then Flink's HA ConfigMaps, the Services and the Flink
 * ConfigMap, then the finalizer. The state ConfigMap goes with the FlinkDeployment (ownerReference).
 *
 * Guarantees: with `savepoint-on-deletion`, a job that runs is never deleted without its final
 * savepoint because Flink's REST API did not answer: while the JobManager is available and its REST
 * API does not answer, deletion waits and says so (status.error, a Warning event), and tells how to
 * delete without the savepoint. Every write is fenced by the pass's term.
 * Caveats: a state that cannot be read (corrupt, foreign, regressed) skips the savepoint, never the
 * deletion: deleting is what the user asked for. A cancel that Flink does not answer does not hold
 * the deletion up: the JobManager's deletion ends the job too.
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { emptyInternalState, type InternalState } from '../api/internal-state.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
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
    const settings = deploymentOperatorSettings(spec ?? {});
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
      const ctx = stepContext({ deps: d, deployment, observed, api, fence, settings }, passState, (type, reason, key, message) =>
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
    const remaining = await d.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)], fence);
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
