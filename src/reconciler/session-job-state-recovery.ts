/**
 * A FlinkSessionJob whose state ConfigMap is gone (deleted by hand, lost with a namespace restore)
 * while its status says the operator had written one: the state is rebuilt from the session
 * cluster, never started afresh — a fresh NEW state would submit a second job next to the one
 * still running and forget its savepoints.
 *
 * What the world proves: the session cluster's `GET /jobs` and the job's checkpoint statistics.
 * The status' job id is only the key to look the job up with (status never feeds internal state:
 * what is adopted is what Flink answers for that id).
 * - The job runs (or is starting) on the cluster → DEPLOYED/RUNNING with that `deployedJobId`; the
 *   savepoints Flink still knows of it become the history. When the spec generation is the one the
 *   status says was reconciled, that spec is what runs; otherwise the running spec is unknown
 *   and the next pass upgrades the job to the current spec the normal way (a savepoint first).
 * - No such job → STOPPED: the next submission restores from the status' last savepoint (the only
 *   record left; the StateRebuilt event says it is not verified) or starts without state.
 * Guarantees: nothing is written before the cluster answered (RebuildWaitingError: the pass waits
 * and says so); the rebuilt revision continues from `status.stateRef.revision`, so the store does
 * not take it for a restored older state.
 * Caveats: a session job whose ConfigMap was lost before its first status write is taken for a new
 * one (nothing in the world names its job; the pinned id of its first intent is lost with it).
 */
import type { FlinkSessionJobV1 } from '../api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import { emptyInternalState, type SessionJobInternalState } from '../api/internal-state.js';
import type { FlinkCheckpointingStatistics } from '../flink/flink-rest-types.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import { savepointsFromFlink } from '../state/state-rebuild.js';
import { sessionJobStateConfigMapName } from '../state/state-store.js';
import { runningSpec, type SessionJobObservation } from './session-job-decide.js';

/** The state is missing and the session cluster must answer before it can be rebuilt. */
export class SessionJobRebuildWaitingError extends Error {
  constructor(job: FlinkSessionJobV1, reason: string) {
    super(
      `State ConfigMap ${sessionJobStateConfigMapName(job.metadata.name ?? '')} is missing; it is rebuilt from session cluster ` +
        `${job.spec?.deploymentName ?? ''} once it answers (${reason}). Nothing is submitted or stopped meanwhile`,
    );
    this.name = 'SessionJobRebuildWaitingError';
  }
}

/** True when the status says a state was written (its ConfigMap should exist). */
export function hadSessionJobState(job: FlinkSessionJobV1): boolean {
  return (job.status?.stateRef?.revision ?? 0) > 0;
}

export interface RebuiltSessionJobState {
  state: SessionJobInternalState;
  /** For the StateRebuilt event: what was found and what happens next. */
  message: string;
}

/**
 * The rebuilt state of `job` from what was observed of its cluster, and the job's checkpoint
 * statistics when it runs. Throws SessionJobRebuildWaitingError when the cluster did not answer.
 */
export function rebuildSessionJobState(
  job: FlinkSessionJobV1,
  observed: SessionJobObservation,
  checkpoints: FlinkCheckpointingStatistics | undefined,
  now: Date,
): RebuiltSessionJobState {
  if (!observed.jobs) throw new SessionJobRebuildWaitingError(job, observed.restUnreachable ?? `the cluster is ${observed.cluster.kind}`);
  const name = `${job.metadata.namespace ?? ''}/${job.metadata.name ?? ''}`;
  const spec: FlinkSessionJobSpec = job.spec ?? {};
  const state = emptyInternalState();
  state.revision = job.status?.stateRef?.revision ?? 0;
  state.reconciliationTimestamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  state.firstDeployment = false;
  const jobId = job.status?.jobStatus?.jobId;
  const listed = jobId ? observed.jobs.find((j) => j.jobId === jobId) : undefined;
  if (listed && !TERMINAL_JOB_STATES.has(listed.state)) {
    state.phase = listed.state === 'RUNNING' ? 'RUNNING' : 'DEPLOYED';
    state.deployedJobId = listed.jobId;
    state.savepointHistory = savepointsFromFlink(listed.jobId, checkpoints);
    const confirmed = job.status?.observedGeneration !== undefined && job.status.observedGeneration === job.metadata.generation;
    if (confirmed) {
      state.lastReconciledSpec = runningSpec(spec);
      state.lastReconciledGeneration = job.metadata.generation;
      if (state.phase === 'RUNNING') {
        state.lastStableSpec = state.lastReconciledSpec;
        state.lastStableGeneration = state.lastReconciledGeneration;
      }
    }
    return {
      state,
      message:
        `operator state of ${name} was missing; rebuilt from session cluster ${spec.deploymentName ?? ''}: job ${listed.jobId} is ${listed.state}` +
        (state.savepointHistory.length > 0 ? `, newest savepoint ${state.savepointHistory.at(-1)!.location}` : '') +
        (confirmed ? '' : '; the spec it runs is unknown (the spec changed since), so it is upgraded to the current spec with a savepoint first'),
    };
  }
  const offered = spec.job?.upgradeMode !== 'stateless' ? job.status?.jobStatus?.lastSavepoint?.location : undefined;
  state.phase = spec.job?.state === 'suspended' ? 'SUSPENDED' : 'STOPPED';
  if (state.phase === 'SUSPENDED') {
    state.lastReconciledSpec = spec;
    state.lastReconciledGeneration = job.metadata.generation;
  }
  if (offered) state.upgradeSavepointPath = offered;
  return {
    state,
    message:
      `operator state of ${name} was missing and ${jobId ? `job ${jobId} does not run` : 'no job runs'} on session cluster ${spec.deploymentName ?? ''}; ` +
      (offered
        ? `the next submission restores from ${offered}, the savepoint status.jobStatus.lastSavepoint names (not verified: Flink no longer knows the job)`
        : 'the next submission starts without state'),
  };
}
