/**
 * Loading a deployment's internal state at the start of a pass, and rebuilding it from the world
 * when its ConfigMap is missing (src/state/state-rebuild.ts decides what the world proves; this
 * module gathers the observations: the JobManager Deployment from the informer, the Flink
 * ConfigMap with one GET, and Flink's REST API).
 *
 * Guarantees: nothing is written when the world cannot be read well enough: a JobManager that is
 * available but whose REST API does not answer makes the pass wait (RebuildWaitingError, reported
 * in status), because a rebuild without Flink's answer could not know the job's savepoints. A
 * deployment the operator never acted on (no JobManager Deployment, no `status.stateRef`) starts
 * from the empty state, as a new one (a status whose stateRef says revision 0 reflects no write).
 * Caveats: a state ConfigMap deleted before the first status was written, while the JobManager
 * Deployment is not yet in the informer cache, is taken for a new deployment (the pinned job id of
 * the first intent is lost with it; the applier then finds the cluster and replaces it).
 */
import { emptyInternalState, type InternalState } from '../api/internal-state.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import type { FlinkCheckpointingStatistics, FlinkJobOverview } from '../flink/flink-rest-types.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import { jobOfCluster, pinnedJobIdOf, rebuildStateFromWorld } from '../state/state-rebuild.js';
import { stateConfigMapName } from '../state/state-store.js';
import { isDeploymentAvailable } from './job-manager-observer.js';
import type { FlinkDeploymentReconcilerDependencies } from './reconciler-dependencies.js';

/** The state is missing and the running JobManager must answer before it can be rebuilt. */
export class RebuildWaitingError extends Error {
  constructor(deployment: FlinkDeploymentV1, reason: string) {
    const name = deployment.metadata.name ?? '';
    super(
      `State ConfigMap ${stateConfigMapName(name)} is missing; it is rebuilt from the running cluster once Flink's REST API answers (${reason}). ` +
        'Nothing is changed on the running job meanwhile',
    );
    this.name = 'RebuildWaitingError';
  }
}

/** The deployment's state: loaded, empty for a new deployment, or rebuilt from the world (then written, with a StateRebuilt event). */
export async function loadOrRebuildState(
  deps: FlinkDeploymentReconcilerDependencies,
  deployment: FlinkDeploymentV1,
  fence: SideEffectFence,
): Promise<InternalState> {
  const loaded = await deps.store.load(deployment);
  if (loaded.kind === 'found') return loaded.state;
  const name = deployment.metadata.name!;
  const namespace = deployment.metadata.namespace!;
  const jobManager = deps.clusterDeployments.get(namespace, name);
  // Never acted on: no cluster, and no status that reflects a written state (an invalid spec at
  // creation gets a status with revision 0 but no ConfigMap: nothing was lost, nothing to rebuild).
  if (!jobManager && (deployment.status?.stateRef?.revision ?? 0) === 0) return emptyInternalState();
  const flinkConfigMap = await deps.cluster.readFlinkConfigMap(namespace, name);
  let flink: { jobs: FlinkJobOverview[]; checkpoints?: FlinkCheckpointingStatistics } | undefined;
  if (jobManager) {
    const api = deps.flinkApi(deployment, fence);
    try {
      const jobs = await api.listJobs();
      const pinned = pinnedJobIdOf({ jobManagerDeployment: jobManager, ...(flinkConfigMap ? { flinkConfigMap } : {}) });
      const job = jobOfCluster(jobs, pinned);
      flink = { jobs, ...(job ? { checkpoints: await api.getCheckpoints(job.jid) } : {}) };
    } catch (error) {
      if (!(error instanceof FlinkRestError)) throw error;
      if (isDeploymentAvailable(jobManager)) throw new RebuildWaitingError(deployment, error.message);
      deps.log.info({ err: error.message }, 'rebuilding the state without Flink: the JobManager is not available');
    }
  }
  const rebuilt = rebuildStateFromWorld(
    deployment,
    { ...(jobManager ? { jobManagerDeployment: jobManager } : {}), ...(flinkConfigMap ? { flinkConfigMap } : {}), ...(flink ? { flink } : {}) },
    new Date(deps.now()),
  );
  const written = await deps.store.update(deployment, () => rebuilt.state, { fence, basedOnRevision: 0 });
  deps.events.emit(deployment, 'Warning', 'StateRebuilt', `State ConfigMap ${stateConfigMapName(name)}: ${rebuilt.message}`);
  deps.log.info({ specConfirmed: rebuilt.specConfirmed, revision: written.revision }, rebuilt.message);
  return written;
}
