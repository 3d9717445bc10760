/**
 * Observe: what the world says about one FlinkDeployment at the start of a pass — the JobManager
 * and TaskManager Deployments (from the informer), the JobManager's pods (listed only while it is
 * not available), and, once its REST API answers, the job. Facts that cost a request and matter
 * only to some decisions (Flink's HA metadata, the job's checkpoints, its restart count) are
 * gathered on demand: the decision function asks for them with a `gather` step (decide.ts).
 *
 * Guarantees: observing changes nothing (reads only); a Flink REST error is an observation
 * (`restUnreachable`), never an exception; the job observed is the one the state names
 * (`jobIdToSubmit`, else `deployedJobId`), so another job on the same JobManager is never taken
 * for it (drift is told by the JobManager Deployment's pinned job id instead).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_KIND, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkJobState, JobManagerDeploymentStatus } from '../api/flink-deployment-status.js';
import type { InternalState } from '../api/internal-state.js';
import { readDeployedRecord } from '../flink/deployed-record.js';
import { FlinkRestError } from '../flink/flink-rest-error.js';
import type { FlinkCheckpointingStatistics, FlinkJobOverview } from '../flink/flink-rest-types.js';
import type { FlinkBuild } from '../flink/flink-cluster-info.js';
import { clusterModeOf, deploymentKey, taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import type { HaMetadataSummary } from './flink-cluster-applier.js';
import { classifyJobManager } from './job-manager-observer.js';
import type { FlinkDeploymentReconcilerDependencies, FlinkJobApi } from './reconciler-dependencies.js';
import { deployedSpecOf } from './deployment-specs.js';
import { ownCheckpointResources, userSnapshotRequests, type UserSnapshotRequest } from './snapshot-resources.js';

export interface ObservedJob {
  jobId: string;
  name?: string;
  state: FlinkJobState;
  startTime?: number;
  updateTime?: number;
  /** When the job reached a terminal state (Flink's `end-time`), epoch ms. */
  endTime?: number;
}

/** The newest completed checkpoint and savepoint of a job, from GET /jobs/:id/checkpoints. */
export interface CheckpointFacts {
  completedCount: number;
  /** The newest completed checkpoint with an external path (a savepoint counts if it is newer). */
  newestRestorePoint?: { path: string; triggeredAt: number; ackAt: number };
  /** Ack time of the newest completed checkpoint (any kind), epoch ms. */
  newestCompletedAckAt?: number;
  /** `state_size` of the newest completed checkpoint, bytes (status.clusterInfo `state-size`). */
  newestCompletedStateSize?: number;
}

export interface ClusterHealthVerdict {
  healthy: boolean;
  /** Why it is unhealthy, in words, e.g. "Restart count hit threshold: 64". */
  reason?: string;
}

export interface Observation {
  jobManager: JobManagerDeploymentStatus;
  /** For ERROR: what failed, with what to do. */
  jobManagerError?: string;
  /** The JobManager Deployment has never been available since it was created (Apache FlinkUtils.jmPodNeverStarted). */
  jobManagerNeverStarted?: boolean;
  /** The job id the JobManager Deployment is pinned to (its deployed record), if it tells one. */
  pinnedJobId?: string;
  /** Why Flink's REST API could not be asked although the JobManager is available. */
  restUnreachable?: string;
  /** Since when the JobManager Deployment has been available (its Available condition), epoch ms. */
  jobManagerAvailableSince?: number;
  /** DEPLOYED_NOT_READY only for `kubernetes.operator.observer.rest-ready.delay`: it may count as READY in this many ms. */
  restReadyInMs?: number;
  /** The state's job as Flink reports it. */
  job?: ObservedJob;
  /** Every job the JobManager lists (only when its REST API answered). */
  jobs?: FlinkJobOverview[];
  /** The READY JobManager's Flink version and revision (GET /config once per JobManager start, flink-build-observer.ts). */
  flinkBuild?: FlinkBuild;
  /** TaskManagers running (status), and the replicas the TaskManager Deployment asks for. */
  taskManagerReplicas?: number;
  taskManagerDeploymentReplicas?: number;
  /** Savepoints the state's size rules dropped and that still wait for disposal. */
  savepointsAwaitingDisposal: number;
  /** User-created FlinkStateSnapshots this job has to take, oldest first (snapshot-resources.ts); none without snapshot resources. */
  userSnapshots?: UserSnapshotRequest[];
  /** The operator's periodic checkpoint resources of this job, oldest first (decide keeps `state.checkpoints.num-retained`). */
  ownCheckpointResources?: string[];
  /** Gathered on demand: Flink's HA store of the cluster (`null`: none). */
  ha?: HaMetadataSummary | null;
  /** Gathered on demand: the job's checkpoints (`null`: Flink could not say). */
  checkpoints?: CheckpointFacts | null;
  /** Gathered on demand: the cluster health check's verdict. */
  health?: ClusterHealthVerdict;
}

export type GatherableFact = 'ha' | 'checkpoints' | 'health';

/**
 * The observation of the start of a pass (everything but the on-demand facts). `restReadyDelayMs`
 * (`kubernetes.operator.observer.rest-ready.delay`): a JobManager Deployment available for less
 * than this stays DEPLOYED_NOT_READY without asking Flink (Apache's AbstractFlinkDeploymentObserver
 * waits this long after the REST port opens before it counts the JobManager READY; here READY
 * needs Flink's REST API to answer, which the delay comes on top of).
 */
export async function observe(
  deps: FlinkDeploymentReconcilerDependencies,
  deployment: FlinkDeploymentV1,
  state: InternalState,
  api: FlinkJobApi,
  restReadyDelayMs = 0,
): Promise<Observation> {
  const { namespace, name } = deploymentKey(deployment);
  const jobManager = deps.clusterDeployments.get(namespace, name);
  const taskManager = deps.clusterDeployments.get(namespace, taskManagerDeploymentName(name));
  const observation: Observation = { jobManager: 'MISSING', savepointsAwaitingDisposal: deps.countTrimmedSavepoints(deployment) };
  if (deps.snapshotResources) {
    const snapshots = deps.snapshotResources.ofJob(FLINK_DEPLOYMENT_KIND, namespace, name);
    const owner = { kind: FLINK_DEPLOYMENT_KIND as typeof FLINK_DEPLOYMENT_KIND, namespace, name };
    observation.userSnapshots = userSnapshotRequests(snapshots, owner, state);
    observation.ownCheckpointResources = ownCheckpointResources(snapshots, owner);
  }
  if (taskManager) {
    observation.taskManagerReplicas = taskManager.status?.replicas ?? 0;
    observation.taskManagerDeploymentReplicas = taskManager.spec?.replicas ?? 1;
  } else if (jobManager && clusterModeOf(deployedSpecOf(state) ?? deployment.spec) === 'native') {
    // Native mode: the JobManager created its TaskManager pods itself (design/009-native-mode.md).
    const pods = await deps.cluster.listPods(namespace, `app=${name},component=taskmanager`);
    observation.taskManagerReplicas = pods.filter(
      (p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
    ).length;
  }
  if (!jobManager) return observation;
  const pinned = readDeployedRecord(jobManager).jobId;
  if (pinned) observation.pinnedJobId = pinned;
  let classified = classifyJobManager(jobManager, undefined);
  if (classified.status === 'DEPLOYING' && deployingFor(jobManager, state.reconciliationTimestamp, deps.now()) >= POD_DIAGNOSIS_DELAY_MS) {
    const selector = `app=${name},component=jobmanager`;
    const pods = deps.cluster.diagnosePods ? await deps.cluster.diagnosePods(namespace, selector) : await deps.cluster.listPods(namespace, selector);
    if (pods) classified = classifyJobManager(jobManager, pods);
  }
  observation.jobManager = classified.status;
  if (classified.error) observation.jobManagerError = classified.error;
  if (neverAvailable(jobManager, state.reconciliationTimestamp)) observation.jobManagerNeverStarted = true;
  if (classified.status !== 'DEPLOYED_NOT_READY') return observation;
  const available = jobManager.status?.conditions?.find((c) => c.type === 'Available' && c.status === 'True');
  if (available?.lastTransitionTime) observation.jobManagerAvailableSince = new Date(available.lastTransitionTime).getTime();
  const readyIn = restReadyDelayMs - (deps.now() - (observation.jobManagerAvailableSince ?? deps.now()));
  if (restReadyDelayMs > 0 && readyIn > 0) {
    observation.restReadyInMs = readyIn;
    return observation;
  }
  try {
    const jobs = await api.listJobs();
    observation.jobManager = 'READY';
    observation.jobs = jobs;
    const wanted = state.jobIdToSubmit ?? state.deployedJobId;
    const job = jobs.find((j) => j.jid === wanted);
    if (job) observation.job = toObservedJob(job);
  } catch (error) {
    if (!(error instanceof FlinkRestError)) throw error;
    observation.restUnreachable = error.message;
    deps.log.debug({ err: error.message }, 'Flink REST API not answering yet');
  }
  return observation;
}

/** One on-demand fact, added to a copy of the observation. */
export async function gather(
  fact: GatherableFact,
  context: {
    deps: FlinkDeploymentReconcilerDependencies;
    deployment: FlinkDeploymentV1;
    state: InternalState;
    api: FlinkJobApi;
    health: (observed: Observation) => Promise<ClusterHealthVerdict>;
  },
  observed: Observation,
): Promise<Observation> {
  const { deps, deployment, state, api } = context;
  const { namespace, name } = deploymentKey(deployment);
  switch (fact) {
    case 'ha':
      return { ...observed, ha: (await deps.cluster.readHaMetadata(namespace, name)) ?? null };
    case 'checkpoints': {
      const jobId = state.deployedJobId;
      if (!jobId || observed.jobManager !== 'READY') return { ...observed, checkpoints: null };
      try {
        return { ...observed, checkpoints: checkpointFacts(await api.getCheckpoints(jobId)) };
      } catch (error) {
        if (!(error instanceof FlinkRestError)) throw error;
        deps.log.debug({ err: error.message }, 'no checkpoint statistics');
        return { ...observed, checkpoints: null };
      }
    }
    case 'health':
      return { ...observed, health: await context.health(observed) };
  }
}

export function checkpointFacts(statistics: FlinkCheckpointingStatistics): CheckpointFacts {
  const facts: CheckpointFacts = { completedCount: statistics.counts.completed };
  const candidates = [statistics.latest.completed, statistics.latest.savepoint].filter(
    (c): c is NonNullable<typeof c> => c !== null && c !== undefined && c.status === 'COMPLETED',
  );
  const newest = candidates.filter((c) => c.external_path).sort((a, b) => b.trigger_timestamp - a.trigger_timestamp)[0];
  if (newest?.external_path)
    facts.newestRestorePoint = { path: newest.external_path, triggeredAt: newest.trigger_timestamp, ackAt: newest.latest_ack_timestamp };
  if (statistics.latest.completed) facts.newestCompletedAckAt = statistics.latest.completed.latest_ack_timestamp;
  if (statistics.latest.completed?.state_size !== undefined) facts.newestCompletedStateSize = statistics.latest.completed.state_size;
  return facts;
}

/**
 * The JobManager Deployment has not been available since its current deployment was written: its
 * Available condition is False and turned False within NEVER_STARTED_TOLERANCE_MS of the later of
 * its creation and the state's last deployment (`deployedAt`). Apache's `jmPodNeverStarted`
 * compares with the creation time only, because it recreates the Deployment on every upgrade; this
 * operator updates it in place, so the Recreate strategy makes it unavailable at each deployment.
 */
function neverAvailable(deployment: V1Deployment, deployedAt: string | undefined): boolean {
  const available = deployment.status?.conditions?.find((c) => c.type === 'Available');
  if (!available || available.status !== 'False' || !available.lastTransitionTime) return false;
  if ((deployment.status?.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0)) return false;
  const reference = deployedSince(deployment, deployedAt);
  return reference > 0 && new Date(available.lastTransitionTime).getTime() - reference <= NEVER_STARTED_TOLERANCE_MS;
}

/** When the JobManager Deployment's current attempt began: its creation or the operator's last deploy of it, whichever is later (0: unknown). */
function deployedSince(deployment: V1Deployment, deployedAt: string | undefined): number {
  const created = deployment.metadata?.creationTimestamp ? new Date(deployment.metadata.creationTimestamp).getTime() : 0;
  return Math.max(created, deployedAt ? Date.parse(deployedAt) : 0);
}

/**
 * How long a JobManager Deployment has been deploying: since it was created or since the operator
 * last deployed it, whichever is later.
 */
function deployingFor(deployment: V1Deployment, deployedAt: string | undefined, now: number): number {
  const reference = deployedSince(deployment, deployedAt);
  return reference > 0 ? now - reference : Infinity;
}

/**
 * How long a JobManager may be deploying before its pods are listed for a failure reason
 * (CrashLoopBackOff, ImagePullBackOff, Unschedulable...). A healthy JobManager is usually available
 * before that, so its deployment costs no pod LIST; a failing one is reported this much later at
 * most (a crash loop's back-off alone is 10 s; kubelet's first image-pull failure takes seconds).
 */
export const POD_DIAGNOSIS_DELAY_MS = 3_000;

/** How soon after a deployment its JobManager Deployment turns unavailable (old pods go at once with Recreate). */
const NEVER_STARTED_TOLERANCE_MS = 5_000;

export function toObservedJob(job: FlinkJobOverview): ObservedJob {
  return {
    jobId: job.jid,
    name: job.name,
    state: job.state as FlinkJobState,
    ...(job['start-time'] > 0 ? { startTime: job['start-time'] } : {}),
    ...(job['last-modification'] > 0 ? { updateTime: job['last-modification'] } : {}),
    ...(job['end-time'] > 0 ? { endTime: job['end-time'] } : {}),
  };
}
