/**
 * Deletion behind the finalizer: with `job.savepoint-on-deletion`, a stop-with-savepoint first (its
 * location in the final Cleanup event), then the JobManager and TaskManager Deployments, then the
 * Services and the Flink ConfigMap, then the finalizer. The state ConfigMap goes with the
 * FlinkDeployment (ownerReference).
 *
 * Guarantees: with `savepoint-on-deletion`, a job that runs is never deleted without its final
 * savepoint because Flink's REST API did not answer: while the JobManager is available and its REST
 * API does not answer, deletion waits and says so (status.error, a Warning event), and tells how to
 * delete without the savepoint. Every write is fenced by the pass's term.
 * Caveats: a state that cannot be read (corrupt, foreign, regressed) skips the savepoint, never the
 * deletion: deleting is what the user asked for.
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { flinkConfigMapName, internalServiceName, restServiceName, taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import type { ReconcileResult } from '../runtime/reconcile.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { deploymentOperatorSettings } from './deployment-operator-settings.js';
import { fencedFlinkApi, type Pass, type PassContext } from './reconcile-pass.js';
import type { SnapshotSteps } from './snapshot-steps.js';
import { buildStatus } from './status-builder.js';

export class DeletionSteps {
  constructor(
    private readonly ctx: PassContext,
    private readonly snapshots: SnapshotSteps,
    /** Observes the JobManager and the job into the pass (the reconciler's observe step). */
    private readonly observe: (pass: Pass) => Promise<void>,
  ) {}

  async cleanup(deployment: FlinkDeploymentV1, fence: SideEffectFence): Promise<ReconcileResult> {
    const d = this.ctx.deps;
    const { namespace, name } = deployment.metadata as { namespace: string; name: string };
    this.ctx.announceOnce(deployment, 'cleanup', 'Normal', 'Cleanup', 'Cleaning up the Flink cluster before deleting the FlinkDeployment');
    const settings = deploymentOperatorSettings(deployment.spec);
    let pass: Pass | undefined;
    try {
      const loaded = await d.store.load(deployment);
      if (loaded.kind === 'found') {
        pass = { deployment, state: loaded.state, outcome: { jobManagerStatus: 'MISSING', deleting: true }, api: fencedFlinkApi(d.flinkApi(deployment), fence), fence, settings };
      }
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
      } else if (pass.restUnreachable && pass.state.deployedJobId) {
        const message =
          `Waiting for Flink's REST API to take the final savepoint of job ${pass.state.deployedJobId} before deleting (kubernetes.operator.job.savepoint-on-deletion): ${pass.restUnreachable}. ` +
          'To delete without it, set kubernetes.operator.job.savepoint-on-deletion: "false" in spec.flinkConfiguration';
        pass.outcome.error = message;
        this.ctx.announceOnce(deployment, `final-savepoint-waits-${pass.state.deployedJobId}`, 'Warning', 'Cleanup', message);
        return this.deleting(pass, d.timings.progressCheckIntervalMs);
      }
    }
    const remaining = await d.cluster.deleteDeployments(namespace, [name, taskManagerDeploymentName(name)], fence);
    if (remaining.length > 0) return pass ? this.deleting(pass, d.timings.progressCheckIntervalMs) : { requeueAfterMs: d.timings.progressCheckIntervalMs };
    await d.cluster.deleteServicesAndConfig(namespace, [restServiceName(name), internalServiceName(name)], flinkConfigMapName(name), fence);
    const last = pass?.state.savepointHistory.at(-1);
    d.events.emit(deployment, 'Normal', 'Cleanup', `Flink cluster deleted` + (settings.savepointOnDeletion && last ? `; last savepoint: ${last.location}` : ''));
    await d.finalizers.remove(deployment, fence);
    d.forgetDeployment(deployment);
    this.ctx.forgetAnnouncements(deployment);
    return {};
  }

  private async deleting(pass: Pass, requeueAfterMs: number): Promise<ReconcileResult> {
    const d = this.ctx.deps;
    await d.status.record(pass.deployment, buildStatus(pass.deployment, pass.state, { ...pass.outcome, deleting: true }, new Date(d.now())), pass.fence);
    return { requeueAfterMs };
  }
}
