/**
 * The user-facing status of a FlinkSessionJob, derived from its internal state and what the pass
 * observed (never the other way round: design/002).
 *
 * Fields, as the Apache operator fills them for session jobs: `lifecycleState`, `jobStatus`
 * (jobId, jobName, state, startTime, updateTime, lastSavepoint; lastCheckpoint, Apache's
 * `checkpointInfo.lastCheckpoint`), `error`, `observedGeneration`;
 * ours: the `Ready` condition and `stateRef` (the companion ConfigMap and the revision this status
 * reflects).
 *
 * Guarantees: `jobStatus.jobId` is the job the operator submitted or is about to submit, never a
 * job of another resource on the same cluster; `jobStatus.state` is RECONCILING while the job is
 * pinned but not yet seen, SUSPENDED / FINISHED from the phase, else what Flink answered.
 */
import { FLINK_JOB_STATES, type Condition, type LifecycleState } from '../api/flink-deployment-status.js';
import type { FlinkSessionJobStatusV1 } from '../api/flink-session-job-status.js';
import type { FlinkSessionJobV1 } from '../api/flink-session-job.js';
import type { SessionJobInternalState } from '../api/internal-state.js';
import { sessionJobStateConfigMapName } from '../state/state-store.js';
import { lastCheckpointOf, lastSavepointOf } from './status-builder.js';
import type { ListedJob, SessionJobObservation } from './session-job-decide.js';

export interface SessionJobPassOutcome {
  observed: SessionJobObservation;
  error?: string;
  /** A warning that is not an error (flinkConfiguration typos): a further line of status.error, never a failure. */
  note?: string;
  deleting?: boolean;
}

/** The Apache lifecycle state of a session job. */
export function sessionJobLifecycleState(state: SessionJobInternalState, job: ListedJob | undefined, deleting: boolean): LifecycleState {
  if (deleting) return 'DELETING';
  switch (state.phase) {
    case 'NEW':
      return 'CREATED';
    case 'SUSPENDED':
      return 'SUSPENDED';
    case 'FINISHED':
      return 'STABLE';
    case 'DEPLOYED':
      return job?.state === 'FAILED' ? 'FAILED' : 'DEPLOYED';
    case 'RUNNING':
    case 'ROLLED_BACK':
      return job?.state === 'FAILED' ? 'FAILED' : 'STABLE';
    default:
      return 'UPGRADING';
  }
}

function readyCondition(
  state: SessionJobInternalState,
  lifecycle: LifecycleState,
  job: ListedJob | undefined,
  error: string | undefined,
  previous: readonly Condition[] | undefined,
  now: string,
): Condition {
  let status: Condition['status'];
  let reason: string;
  let message: string;
  if (error) {
    status = 'False';
    reason = 'Error';
    message = error;
  } else if (lifecycle === 'SUSPENDED') {
    status = 'True';
    reason = 'Suspended';
    message = 'The job is suspended as requested';
  } else if (state.phase === 'FINISHED') {
    status = 'False';
    reason = 'JobFinished';
    message = `Job ${state.deployedJobId ?? ''} finished`;
  } else if (job?.state === 'RUNNING' && job.jobId === state.deployedJobId) {
    status = 'True';
    reason = 'JobRunning';
    message = `Job ${job.jobId} is running`;
  } else {
    status = lifecycle === 'FAILED' ? 'False' : 'Unknown';
    reason = lifecycle === 'FAILED' ? 'JobFailed' : 'Progressing';
    message = `Lifecycle state ${lifecycle}, job ${job?.state ?? 'not running'}`;
  }
  const before = previous?.find((c) => c.type === 'Ready');
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return {
    type: 'Ready',
    status,
    reason,
    message,
    lastTransitionTime,
    ...(state.lastReconciledGeneration !== undefined ? { observedGeneration: state.lastReconciledGeneration } : {}),
  };
}

/** A job state Flink answered, as the status schema knows it; RECONCILING for none (or one a newer Flink added). */
function knownJobState(state: string | undefined): (typeof FLINK_JOB_STATES)[number] {
  return (FLINK_JOB_STATES as readonly string[]).includes(state ?? '') ? (state as (typeof FLINK_JOB_STATES)[number]) : 'RECONCILING';
}

/** The complete v1 status for this pass. */
export function buildSessionJobStatus(
  sessionJob: FlinkSessionJobV1,
  state: SessionJobInternalState,
  outcome: SessionJobPassOutcome,
  now = new Date(),
): FlinkSessionJobStatusV1 {
  const jobId = state.jobIdToSubmit ?? state.deployedJobId;
  const job = jobId ? outcome.observed.jobs?.find((j) => j.jobId === jobId) : undefined;
  const lifecycle = sessionJobLifecycleState(state, job, outcome.deleting ?? false);
  const previous = sessionJob.status;
  const lastSavepoint = state.savepointHistory.at(-1);
  const nowText = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const jobState = state.phase === 'SUSPENDED' ? 'SUSPENDED' : state.phase === 'FINISHED' ? 'FINISHED' : knownJobState(job?.state);
  const jobName = job?.name ?? previous?.jobStatus?.jobName;
  return {
    lifecycleState: lifecycle,
    ...(state.lastReconciledGeneration !== undefined ? { observedGeneration: state.lastReconciledGeneration } : {}),
    ...(outcome.error || outcome.note ? { error: [outcome.error, outcome.note].filter((line) => line).join('\n') } : {}),
    jobStatus: {
      ...(jobId ? { jobId } : {}),
      ...(jobName ? { jobName } : {}),
      state: jobState,
      ...(job?.startTime !== undefined && job.startTime > 0 ? { startTime: String(job.startTime) } : {}),
      ...(job?.updateTime !== undefined && job.updateTime > 0 ? { updateTime: String(job.updateTime) } : {}),
      ...(lastSavepoint ? { lastSavepoint: lastSavepointOf(lastSavepoint) } : {}),
      ...(state.lastCheckpoint ? { lastCheckpoint: lastCheckpointOf(state.lastCheckpoint) } : {}),
    },
    conditions: [readyCondition(state, lifecycle, job, outcome.error, previous?.conditions, nowText)],
    // No stateRef before the first state write: it would name a ConfigMap that does not exist yet.
    ...(state.revision > 0 ? { stateRef: { configMapName: sessionJobStateConfigMapName(sessionJob.metadata.name ?? ''), revision: state.revision } } : {}),
  };
}
