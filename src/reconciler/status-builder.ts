/**
 * Builds the user-facing v1 status from the internal state and what this pass observed.
 *
 * The status is always *derived*: recomputed in full on every pass from the state ConfigMap and
 * observation, never read back to make decisions. So a status that someone else edited, or that
 * lags its state after a crash, is simply rewritten on the next pass (the recorder patches what
 * differs and nothing when it is equal).
 *
 * The lifecycle state follows the Apache operator's `CommonStatus.getLifecycleState()`.
 */
import type { Condition, FlinkDeploymentStatusV1, LastCheckpoint, LastSavepoint, LifecycleState } from '../api/flink-deployment-status.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { CheckpointRecord, InternalState, SavepointRecord } from '../api/internal-state.js';
import { stateConfigMapName } from '../state/state-store.js';
import type { Observation } from './observation.js';
import { runningCondition } from './status-conditions.js';

/** What a pass knows for the status: the observation (with what its step changed) and its error. */
export interface PassOutcome {
  observed: Observation;
  /** What went wrong in this pass, with what to do about it; undefined when all is well. */
  error?: string;
  /** The error is that Flink's REST API does not answer: whether the job is ready is unknown. */
  flinkUnreachable?: boolean;
  deleting?: boolean;
  /**
   * A warning that is no failure (a flinkConfiguration typo): in status.error after the error, on
   * its own line, or alone; never in the conditions or the lifecycle state, which follow `error`.
   */
  note?: string;
  /** status.clusterInfo as this pass leaves it (flink-cluster-info.ts); undefined: the previous one stays. */
  clusterInfo?: Record<string, string>;
}

/** The Apache lifecycle state, from the phase and what was observed. */
export function lifecycleState(state: InternalState, outcome: PassOutcome): LifecycleState {
  if (outcome.deleting) return 'DELETING';
  const job = outcome.observed.job;
  switch (state.phase) {
    case 'NEW':
      return 'CREATED';
    case 'DEPLOYING':
      return 'UPGRADING';
    case 'STOPPING':
    case 'STOPPED':
    case 'SUSPENDING':
      return 'UPGRADING';
    case 'SUSPENDED':
      return 'SUSPENDED';
    case 'ROLLING_BACK':
      return 'ROLLING_BACK';
    case 'ROLLED_BACK':
      return job?.state === 'FAILED' ? 'FAILED' : 'ROLLED_BACK';
    case 'FINISHED':
      return 'STABLE';
    case 'DEPLOYED':
      return job?.state === 'FAILED' ? 'FAILED' : 'DEPLOYED';
    case 'RUNNING':
      if (job?.state === 'FAILED') return 'FAILED';
      return outcome.observed.jobManager === 'MISSING' ? 'DEPLOYED' : 'STABLE';
  }
}

function readyCondition(
  state: InternalState,
  lifecycle: LifecycleState,
  outcome: PassOutcome,
  hasJob: boolean,
  generation: number | undefined,
  previous: Condition[] | undefined,
  now: string,
): Condition {
  const { observed } = outcome;
  const job = observed.job;
  const finished = state.phase === 'FINISHED' || (job?.state === 'FINISHED' && job.jobId === state.deployedJobId);
  let status: Condition['status'];
  let reason: string;
  let message: string;
  if (outcome.error && outcome.flinkUnreachable) {
    status = 'Unknown';
    reason = 'FlinkUnreachable';
    message = outcome.error;
  } else if (outcome.error) {
    status = 'False';
    reason = 'Error';
    message = outcome.error;
  } else if (lifecycle === 'SUSPENDED') {
    status = 'True';
    reason = 'Suspended';
    message = 'The job is suspended as requested';
  } else if (finished) {
    status = 'False';
    reason = 'JobFinished';
    message =
      `Job ${state.deployedJobId ?? ''} finished` +
      (state.phase === 'FINISHED' ? '; its cluster is shut down' : '; its JobManager is shut down after kubernetes.operator.jm-deployment.shutdown-ttl');
  } else if (observed.jobManager === 'READY' && (!hasJob || (job?.state === 'RUNNING' && job.jobId === state.deployedJobId))) {
    status = 'True';
    reason = hasJob ? 'JobRunning' : 'ClusterReady';
    message = hasJob ? `Job ${job?.jobId ?? ''} is running` : 'The session cluster is ready';
  } else {
    status = lifecycle === 'FAILED' ? 'False' : 'Unknown';
    reason = lifecycle === 'FAILED' ? 'JobFailed' : 'Progressing';
    message = `Lifecycle state ${lifecycle}, job ${job?.state ?? 'not running'}, JobManager ${observed.jobManager}`;
  }
  const before = previous?.find((c) => c.type === 'Ready');
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return { type: 'Ready', status, reason, message, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** A history record as the status shows it (jobStatus.lastSavepoint), for either kind. */
export function lastSavepointOf(record: SavepointRecord): LastSavepoint {
  return {
    location: record.location,
    timeStamp: record.timeStamp,
    triggerType: record.triggerType,
    ...(record.formatType ? { formatType: record.formatType } : {}),
    ...(record.triggerNonce !== undefined ? { triggerNonce: record.triggerNonce } : {}),
  };
}

/**
 * The newest checkpoint as the status shows it (jobStatus.lastCheckpoint), for either kind: the
 * fields of Apache's status Checkpoint (api/status/Checkpoint.java). The checkpoint id, job id and
 * location stay in the state.
 */
export function lastCheckpointOf(record: CheckpointRecord): LastCheckpoint {
  return {
    timeStamp: record.timeStamp,
    triggerType: record.triggerType,
    ...(record.formatType ? { formatType: record.formatType } : {}),
    ...(record.triggerNonce !== undefined ? { triggerNonce: record.triggerNonce } : {}),
  };
}

/** The complete v1 status for this pass. */
export function buildStatus(deployment: FlinkDeploymentV1, state: InternalState, outcome: PassOutcome, now = new Date()): FlinkDeploymentStatusV1 {
  const lifecycle = lifecycleState(state, outcome);
  const name = deployment.metadata.name ?? '';
  const lastSavepoint = state.savepointHistory.at(-1);
  const jobId = state.jobIdToSubmit ?? state.deployedJobId;
  const previous = deployment.status;
  const nowText = now.toISOString().replace(/\.\d{3}Z$/, 'Z');

  const observed = outcome.observed;
  const status: FlinkDeploymentStatusV1 = {
    lifecycleState: lifecycle,
    jobManagerDeploymentStatus: observed.jobManager,
    ...(state.lastReconciledGeneration !== undefined ? { observedGeneration: state.lastReconciledGeneration } : {}),
    ...(outcome.error || outcome.note ? { error: [outcome.error, outcome.note].filter((line) => line).join('\n') } : {}),
    stateRef: { configMapName: stateConfigMapName(name), revision: state.revision },
    taskManager: {
      labelSelector: `component=taskmanager,app=${name}`,
      ...(observed.taskManagerReplicas !== undefined ? { replicas: observed.taskManagerReplicas } : {}),
    },
    ...(outcome.clusterInfo ? { clusterInfo: outcome.clusterInfo } : previous?.clusterInfo ? { clusterInfo: previous.clusterInfo } : {}),
  };
  const hasJob = (deployment.spec as FlinkDeploymentV1['spec'] | undefined)?.job !== undefined;
  if (hasJob) {
    const job = observed.job && observed.job.jobId === jobId ? observed.job : undefined;
    const jobState = state.phase === 'SUSPENDED' ? 'SUSPENDED' : state.phase === 'FINISHED' ? 'FINISHED' : (job?.state ?? 'RECONCILING');
    status.jobStatus = {
      ...(jobId ? { jobId } : {}),
      ...(job?.name ? { jobName: job.name } : previous?.jobStatus?.jobName ? { jobName: previous.jobStatus.jobName } : {}),
      state: jobState,
      ...(job?.startTime
        ? { startTime: String(job.startTime) }
        : state.phase === 'FINISHED' && previous?.jobStatus?.startTime
          ? { startTime: previous.jobStatus.startTime }
          : {}),
      ...(job?.updateTime
        ? { updateTime: String(job.updateTime) }
        : state.phase === 'FINISHED' && previous?.jobStatus?.updateTime
          ? { updateTime: previous.jobStatus.updateTime }
          : {}),
      ...(lastSavepoint
        ? {
            lastSavepoint: lastSavepointOf(lastSavepoint),
          }
        : previous?.jobStatus?.lastSavepoint
          ? { lastSavepoint: previous.jobStatus.lastSavepoint }
          : {}),
      ...(state.lastCheckpoint ? { lastCheckpoint: lastCheckpointOf(state.lastCheckpoint) } : {}),
    };
  }
  status.conditions = [readyCondition(state, lifecycle, outcome, hasJob, state.lastReconciledGeneration, previous?.conditions, nowText)];
  const running = runningCondition(
    {
      deployed: state.lastReconciledSpec !== undefined,
      hasJob,
      jobManager: observed.jobManager,
      ...(status.jobStatus?.state ? { jobState: status.jobStatus.state } : {}),
    },
    previous?.conditions,
    nowText,
  );
  if (running) status.conditions.push(running);
  return status;
}
