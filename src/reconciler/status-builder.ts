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
import type { Condition, FlinkDeploymentStatusV1, FlinkJobState, JobManagerDeploymentStatus, LifecycleState } from '../api/flink-deployment-status.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { InternalState } from '../api/internal-state.js';
import { stateConfigMapName } from '../state/state-store.js';
import { sameValue } from './spec-diff.js';

export interface ObservedJob {
  jobId: string;
  name?: string;
  state: FlinkJobState;
  startTime?: number;
  updateTime?: number;
}

export interface PassOutcome {
  jobManagerStatus: JobManagerDeploymentStatus;
  job?: ObservedJob;
  /** What went wrong in this pass, with what to do about it; undefined when all is well. */
  error?: string;
  deleting?: boolean;
  clusterInfo?: Record<string, string>;
  taskManagerReplicas?: number;
}

export function lifecycleState(state: InternalState, outcome: PassOutcome): LifecycleState {
  if (outcome.deleting) return 'DELETING';
  if (state.reconciliationState === 'UPGRADING') return state.lastReconciledSpec ? 'UPGRADING' : 'CREATED';
  if (state.reconciliationState === 'ROLLING_BACK') return 'ROLLING_BACK';
  if (!state.lastReconciledSpec) return state.deployedJobId ? 'DEPLOYED' : 'CREATED';
  if (state.lastReconciledSpec.job?.state === 'suspended') return 'SUSPENDED';
  if (outcome.job?.state === 'FAILED') return 'FAILED';
  if (state.reconciliationState === 'ROLLED_BACK') return 'ROLLED_BACK';
  if (state.lastStableSpec && sameValue(state.lastStableSpec, state.lastReconciledSpec)) return 'STABLE';
  return 'DEPLOYED';
}

function readyCondition(lifecycle: LifecycleState, outcome: PassOutcome, generation: number | undefined, previous: Condition[] | undefined, now: string): Condition {
  let status: Condition['status'];
  let reason: string;
  let message: string;
  if (outcome.error) {
    status = 'False';
    reason = 'Error';
    message = outcome.error;
  } else if (lifecycle === 'STABLE' || (lifecycle === 'DEPLOYED' && outcome.job?.state === 'RUNNING')) {
    status = 'True';
    reason = 'JobRunning';
    message = `Job ${outcome.job?.jobId ?? ''} is running`.replace('  ', ' ');
  } else if (lifecycle === 'SUSPENDED') {
    status = 'True';
    reason = 'Suspended';
    message = 'The job is suspended as requested';
  } else {
    status = lifecycle === 'FAILED' ? 'False' : 'Unknown';
    reason = lifecycle === 'FAILED' ? 'JobFailed' : 'Progressing';
    message = `Lifecycle state ${lifecycle}, job ${outcome.job?.state ?? 'not running'}, JobManager ${outcome.jobManagerStatus}`;
  }
  const before = previous?.find((c) => c.type === 'Ready');
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return { type: 'Ready', status, reason, message, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** The complete v1 status for this pass. */
export function buildStatus(deployment: FlinkDeploymentV1, state: InternalState, outcome: PassOutcome, now = new Date()): FlinkDeploymentStatusV1 {
  const lifecycle = lifecycleState(state, outcome);
  const name = deployment.metadata.name ?? '';
  const lastSavepoint = state.savepointHistory.at(-1);
  const jobId = state.jobIdToSubmit ?? state.deployedJobId;
  const previous = deployment.status;
  const nowText = now.toISOString().replace(/\.\d{3}Z$/, 'Z');

  const status: FlinkDeploymentStatusV1 = {
    lifecycleState: lifecycle,
    jobManagerDeploymentStatus: outcome.jobManagerStatus,
    ...(state.lastReconciledGeneration !== undefined ? { observedGeneration: state.lastReconciledGeneration } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
    stateRef: { configMapName: stateConfigMapName(name), revision: state.revision },
    taskManager: {
      labelSelector: `component=taskmanager,app=${name}`,
      ...(outcome.taskManagerReplicas !== undefined ? { replicas: outcome.taskManagerReplicas } : {}),
    },
    ...(outcome.clusterInfo ? { clusterInfo: outcome.clusterInfo } : previous?.clusterInfo ? { clusterInfo: previous.clusterInfo } : {}),
  };
  if (deployment.spec.job) {
    const observed = outcome.job && outcome.job.jobId === jobId ? outcome.job : undefined;
    const suspended = state.lastReconciledSpec?.job?.state === 'suspended' && state.reconciliationState === 'DEPLOYED';
    status.jobStatus = {
      ...(jobId ? { jobId } : {}),
      ...(observed?.name ? { jobName: observed.name } : previous?.jobStatus?.jobName ? { jobName: previous.jobStatus.jobName } : {}),
      state: suspended ? 'SUSPENDED' : observed?.state ?? 'RECONCILING',
      ...(observed?.startTime ? { startTime: String(observed.startTime) } : {}),
      ...(observed?.updateTime ? { updateTime: String(observed.updateTime) } : {}),
      ...(lastSavepoint
        ? { lastSavepoint: { location: lastSavepoint.location, timeStamp: lastSavepoint.timeStamp, triggerType: lastSavepoint.triggerType, ...(lastSavepoint.formatType ? { formatType: lastSavepoint.formatType } : {}) } }
        : previous?.jobStatus?.lastSavepoint
          ? { lastSavepoint: previous.jobStatus.lastSavepoint }
          : {}),
    };
  }
  status.conditions = [readyCondition(lifecycle, outcome, state.lastReconciledGeneration, previous?.conditions, nowText)];
  return status;
}
