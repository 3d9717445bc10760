/**
 * What a session-job pass observes: its session cluster (the FlinkDeployment named by
 * spec.deploymentName, its JobManager Deployment) and, when the JobManager is available, the
 * cluster's jobs (one `GET /jobs/overview`), and the cluster's spec.flinkVersion (whether Flink takes
 * checkpoints on request).
 *
 * The cluster is judged from the world, not from its FlinkDeployment's status: the JobManager
 * Deployment must be available and the REST API must answer (the Apache operator waits for
 * `jobManagerDeploymentStatus: READY`, SessionJobReconciler.sessionClusterReady, which it derives
 * from the same two facts).
 *
 * Guarantees: `jobs` is set only when Flink answered in this pass; an answer that fails is
 * `restUnreachable` with the reason, never an empty list (an empty list would read as "the job is
 * gone" and resubmit it).
 * Caveats: the FlinkDeployment and its JobManager Deployment come from informer caches; a cluster
 * created a moment ago may look missing for one pass (the next event reconciles again).
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkSessionJobV1 } from '../api/flink-session-job.js';
import { flattenFlinkConfiguration, isHighAvailabilityEnabled } from '../api/flink-configuration.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import { jobManagerDeploymentName } from '../flink/flink-resource-naming.js';
import { deploymentOperatorSettings } from './deployment-operator-settings.js';
import { isDeploymentAvailable } from './job-manager-observer.js';
import { checkpointFacts } from './observation.js';
import type { SessionJobFlinkApi, SessionJobReconcilerDependencies } from './session-job-dependencies.js';
import type { SessionClusterView, SessionJobObservation } from './session-job-decide.js';

export interface ObservedSessionCluster {
  observation: SessionJobObservation;
  /** The session cluster's FlinkDeployment, when it exists. */
  cluster?: FlinkDeploymentV1;
}

/** The session cluster of `job` and, when its JobManager is available, its jobs. */
export async function observeSessionJob(
  deps: Pick<SessionJobReconcilerDependencies, 'sessionClusters' | 'clusterDeployments'>,
  job: FlinkSessionJobV1,
  deploymentName: string,
  api: (cluster: FlinkDeploymentV1) => SessionJobFlinkApi,
): Promise<ObservedSessionCluster> {
  const namespace = job.metadata.namespace ?? '';
  const cluster = deploymentName ? deps.sessionClusters.get(namespace, deploymentName) : undefined;
  if (!cluster) return { observation: { cluster: { kind: 'missing' } } };
  if (cluster.spec?.job) return { observation: { cluster: { kind: 'application' } }, cluster };
  const highAvailability = isHighAvailabilityEnabled(flattenFlinkConfiguration(cluster.spec?.flinkConfiguration));
  const jobManager = deps.clusterDeployments.get(namespace, jobManagerDeploymentName(deploymentName));
  const available = jobManager !== undefined && isDeploymentAvailable(jobManager);
  let view: SessionClusterView;
  if (cluster.metadata.deletionTimestamp) {
    view = { kind: 'deleting', blockOnSessionJobs: deploymentOperatorSettings(cluster.spec ?? {}).blockOnSessionJobs, highAvailability };
  } else if (!available) {
    view = { kind: 'not-ready', reason: jobManager ? 'its JobManager is not available' : 'it has no JobManager Deployment yet', highAvailability };
  } else {
    view = { kind: 'ready', highAvailability };
  }
  const version = cluster.spec?.flinkVersion;
  const versioned = version !== undefined ? { clusterFlinkVersion: version } : {};
  if (!available) return { observation: { cluster: view, ...versioned }, cluster };
  try {
    const jobs = (await api(cluster).listJobs()).map((j) => ({
      jobId: j.jid,
      state: j.state,
      name: j.name,
      startTime: j['start-time'],
      updateTime: j['last-modification'],
    }));
    return { observation: { cluster: view, jobs, ...versioned }, cluster };
  } catch (error) {
    if (!(error instanceof FlinkRestError)) throw error;
    return { observation: { cluster: view, restUnreachable: error.message, ...versioned }, cluster };
  }
}

/** The newest completed checkpoint (or savepoint) of a running job, null when it has none. */
export async function latestCheckpointOf(api: Pick<SessionJobFlinkApi, 'getCheckpoints'>, jobId: string): Promise<string | null> {
  return checkpointFacts(await api.getCheckpoints(jobId)).newestRestorePoint?.path ?? null;
}
