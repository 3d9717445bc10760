/**
 * The session-job decision function: from the state, the desired spec and what was observed, the
 * one step a pass takes. Pure (no I/O, no clock but `now`), so design/010's table is tested row by
 * row (test/reconciler/session-job-decide.test.ts).
 *
 * The phases are the FlinkDeployment's (deployment-phase.ts) without the cluster ones: a session
 * job goes NEW → DEPLOYING (job id pinned, restore path chosen) → DEPLOYED (submitted) → RUNNING;
 * an upgrade or suspend goes STOPPING (a stop-with-savepoint or a cancel in flight) → STOPPED (the
 * next deployment is pinned from there) or SUSPENDED. Between the stop and the new submission the
 * reconciled spec is the new one with `job.state: suspended` — what the Apache operator records in
 * `lastReconciledSpec` at that point, so a migrated status caught mid-upgrade means the same.
 *
 * Guarantees
 * - A job id is submitted only from DEPLOYING, only after it was recorded (`pin` is a state write
 *   only), and only when Flink was asked and does not know it: a lost answer to a submission is
 *   resolved by looking (`record-submitted`), never by submitting again.
 * - A running job is stopped only by a recorded intent (`stop`), and a savepoint-mode stop is a
 *   stop-with-savepoint: no job is stopped without its savepoint unless its upgrade mode is
 *   stateless or last-state (restored from its newest checkpoint), or it is being deleted.
 * - Nothing is decided while the session cluster cannot be asked (missing, not ready, REST silent)
 *   except what needs no cluster: recording a suspended first spec, and the deletion rules below.
 * - Deletion (the Apache SessionJobReconciler.cleanupInternal rules): a job that does not run, a
 *   missing cluster, a cluster being deleted without `block-on-session-jobs`, or a cluster that is
 *   not ready and has no HA (its jobs cannot survive) release the finalizer at once; a running
 *   job is cancelled, or stopped with a savepoint with `job.savepoint-on-deletion`.
 * - A manual checkpoint nonce is acknowledged only with its checkpoint (acknowledgedSpec holds it
 *   back); checkpoints are asked only of a RUNNING job on a session cluster whose flinkVersion
 *   takes them on request (checkpointTriggerSupported), after any due savepoint.
 * Assumptions: `observed.jobs` is one `GET /jobs` of the session cluster in this pass.
 */
import type { DeploymentPhase } from '../api/deployment-phase.js';
import type { FlinkVersion } from '../api/flink-deployment-spec.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import type { SessionJobInternalState } from '../api/internal-state.js';
import { isDeepStrictEqual } from 'node:util';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import type { SnapshotResourceRef } from '../api/internal-state.js';
import type { UserSnapshotRequest } from './snapshot-resources.js';
import { checkpointTriggerRefusal, checkpointTriggerSupported } from '../api/periodic-snapshot-schedule.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import {
  type DeploymentOperatorSettings,
  dueSavepoint,
  dueSnapshot,
  untilNextPeriodicSavepoint,
  untilNextPeriodicSnapshot,
} from './deployment-operator-settings.js';
import type { CheckpointRequest } from './reconcile-step.js';

/** The session cluster as this pass found it. */
export type SessionClusterView =
  | { kind: 'missing' }
  /** A FlinkDeployment with `spec.job`: an application cluster, which runs no session jobs. */
  | { kind: 'application' }
  | { kind: 'deleting'; blockOnSessionJobs: boolean; highAvailability: boolean }
  | { kind: 'not-ready'; reason: string; highAvailability: boolean }
  | { kind: 'ready'; highAvailability: boolean };

/** One job the session cluster's `GET /jobs` listed. */
export interface ListedJob {
  jobId: string;
  state: string;
  name?: string;
  /** Epoch ms. */
  startTime?: number;
  /** Epoch ms of the last state change. */
  updateTime?: number;
}

export interface SessionJobObservation {
  cluster: SessionClusterView;
  /** The cluster's jobs; undefined when the cluster was not asked or did not answer. */
  jobs?: readonly ListedJob[];
  /** Why the cluster's REST API did not answer, if it did not. */
  restUnreachable?: string;
  /** The newest completed checkpoint of the running job (asked only for a last-state stop). */
  latestCheckpoint?: string | null;
  /** The session cluster FlinkDeployment's spec.flinkVersion (whether Flink takes checkpoints on request). */
  clusterFlinkVersion?: FlinkVersion;
  /** User-created FlinkStateSnapshots this job has to take, oldest first (snapshot-resources.ts). */
  userSnapshots?: UserSnapshotRequest[];
}

export interface SessionJobDecisionInput {
  state: SessionJobInternalState;
  desired: FlinkSessionJobSpec;
  desiredGeneration: number;
  observed: SessionJobObservation;
  settings: DeploymentOperatorSettings;
  deleting: boolean;
  now: number;
  /** `namespace/name`, for messages. */
  resource: string;
}

export type SessionJobStep =
  | { kind: 'wait'; requeue: 'progress' | 'steady'; error?: string; wakeUpInMs?: number }
  /** Ask the running job's newest checkpoint (a last-state stop needs it); decide again with it. */
  | { kind: 'gather-checkpoint' }
  /** State only: DEPLOYING, a new job id pinned, `spec` recorded as reconciled, the restore path chosen. */
  | { kind: 'pin'; spec: FlinkSessionJobSpec; generation: number; restoreFrom?: string; why: string }
  /** Upload the jar and run it with the pinned job id; then record DEPLOYED. */
  | { kind: 'submit' }
  /** The pinned job id is known to Flink (an earlier pass's submission landed): record DEPLOYED. */
  | { kind: 'record-submitted' }
  /** DEPLOYED and the job runs: RUNNING, the spec promoted stable. */
  | { kind: 'record-running' }
  | { kind: 'record-finished' }
  /** A spec change that needs no new submission (a savepoint nonce, operator settings): recorded as reconciled, the nonce not yet acknowledged. */
  | { kind: 'acknowledge'; spec: FlinkSessionJobSpec; generation: number }
  /** NEW and the spec asks for a suspended job: record it without submitting anything. */
  | { kind: 'record-suspended'; spec: FlinkSessionJobSpec; generation: number }
  /**
   * Intent then the call: STOPPING (SUSPENDING for a suspend) with the spec it stops for, then a
   * stop-with-savepoint (`savepoint`) or a cancel (`cancel`, restoring from `restoreFrom`).
   */
  | {
      kind: 'stop';
      mode: 'savepoint' | 'cancel';
      spec: FlinkSessionJobSpec;
      generation: number;
      suspend: boolean;
      restoreFrom?: string;
      why: string;
    }
  /** Follow the pending savepoint (a stop's or a manual/periodic one). */
  | { kind: 'follow-savepoint' }
  /** STOPPING by cancel: cancel again (Flink treats it as one) until the job has ended, then STOPPED / SUSPENDED. */
  | { kind: 'follow-cancel' }
  /** Intent (pendingSavepoint with its trigger id; a user's snapshot taken up with it) then the trigger. */
  | { kind: 'start-savepoint'; triggerType: 'MANUAL' | 'PERIODIC'; nonce?: number; user?: UserSnapshotRequest }
  /** Carry out the oldest FlinkStateSnapshot write the state owes (snapshot-resource-steps.ts). */
  | { kind: 'publish-snapshot-resource' }
  /** A user's FlinkStateSnapshot this job cannot take: taken up and FAILED with `error`, in one write. */
  | { kind: 'refuse-user-snapshot'; snapshot: SnapshotResourceRef; snapshotType: 'SAVEPOINT' | 'CHECKPOINT'; error: string }
  /** Intent (pendingCheckpoint with its trigger id) then the trigger (checkpoint-steps.ts). */
  | { kind: 'start-checkpoint'; request: CheckpointRequest }
  /** Follow the pending checkpoint (checkpoint-steps.ts). */
  | { kind: 'follow-checkpoint' }
  /** Deletion: remove the finalizer (the state ConfigMap goes with the owner). */
  | { kind: 'release'; why: string };

export interface SessionJobDecision {
  step: SessionJobStep;
  /** Event to emit once for this situation. */
  announce?: { type: 'Normal' | 'Warning'; reason: string; key: string; message: string };
}

const STOPPING_PHASES: readonly DeploymentPhase[] = ['STOPPING', 'SUSPENDING'];

/** The spec with the job suspended: what is reconciled between a stop and the next submission. */
export function suspendedSpec(spec: FlinkSessionJobSpec): FlinkSessionJobSpec {
  return { ...spec, job: { ...spec.job, state: 'suspended' } };
}

/** The spec with the job running (a pinned deployment records it so). */
export function runningSpec(spec: FlinkSessionJobSpec): FlinkSessionJobSpec {
  return { ...spec, job: { ...spec.job, state: 'running' } };
}

/**
 * The spec without what never needs a new submission: the manual savepoint nonce, the job state,
 * and the operator's own settings (`kubernetes.operator.*`, read by the operator, never sent to
 * Flink — the Apache operator's IGNORE diff for them).
 */
function upgradeRelevant(spec: FlinkSessionJobSpec | undefined): unknown {
  if (!spec) return undefined;
  // The JobSpec fields the Apache operator marks @SpecDiff(IGNORE), and the job state (a suspend is its own step).
  const {
    savepointTriggerNonce: _savepointNonce,
    checkpointTriggerNonce: _checkpointNonce,
    initialSavepointPath: _initial,
    upgradeMode: _mode,
    allowNonRestoredState: _nonRestored,
    autoscalerResetNonce: _autoscaler,
    state: _state,
    ...job
  } = spec.job ?? {};
  const flinkConfiguration = Object.entries(flattenFlinkConfiguration(spec.flinkConfiguration))
    .filter(([key]) => !key.startsWith(OPERATOR_KEY_PREFIX))
    .sort(([a], [b]) => a.localeCompare(b));
  return JSON.parse(JSON.stringify({ ...spec, job, flinkConfiguration })) as unknown;
}

const OPERATOR_KEY_PREFIX = 'kubernetes.operator.';

/**
 * The spec to record as reconciled without a new submission: the desired one, running, its
 * savepoint and checkpoint nonces only once their snapshot was taken (the acknowledged ones are kept).
 */
export function acknowledgedSpec(desired: FlinkSessionJobSpec, state: SessionJobInternalState): FlinkSessionJobSpec {
  const spec = runningSpec(desired);
  const { savepointTriggerNonce: _savepointNonce, checkpointTriggerNonce: _checkpointNonce, ...job } = spec.job ?? {};
  const savepointAcked = state.lastReconciledSpec?.job?.savepointTriggerNonce;
  const checkpointAcked = state.lastReconciledSpec?.job?.checkpointTriggerNonce;
  return {
    ...spec,
    job: {
      ...job,
      ...(savepointAcked !== undefined ? { savepointTriggerNonce: savepointAcked } : {}),
      ...(checkpointAcked !== undefined ? { checkpointTriggerNonce: checkpointAcked } : {}),
    },
  };
}

/** True when `desired` must be submitted anew to replace what `reconciled` runs. */
export function needsNewSubmission(reconciled: FlinkSessionJobSpec | undefined, desired: FlinkSessionJobSpec): boolean {
  return !isDeepStrictEqual(upgradeRelevant(reconciled), upgradeRelevant(desired));
}

function wantsSuspended(spec: FlinkSessionJobSpec | undefined): boolean {
  return spec?.job?.state === 'suspended';
}

/**
 * Where a job that no longer runs comes back from: the path its last stop (or the Apache
 * operator, at a failure) recorded, unless a savepoint the history holds is newer than that moment.
 */
export function restorePathOf(state: SessionJobInternalState): string | undefined {
  const newest = state.savepointHistory.at(-1);
  const recordedAt = state.reconciliationTimestamp ? Date.parse(state.reconciliationTimestamp) : undefined;
  if (state.upgradeSavepointPath && !(newest && recordedAt !== undefined && newest.timeStamp > recordedAt)) return state.upgradeSavepointPath;
  return newest?.location;
}

function clusterProblem(cluster: SessionClusterView, deploymentName: string, resource: string): string | undefined {
  const namespace = resource.split('/')[0];
  switch (cluster.kind) {
    case 'missing':
      return `Session cluster ${deploymentName} not found in namespace ${namespace}: create a FlinkDeployment ${deploymentName} without spec.job (a session cluster), or fix spec.deploymentName`;
    case 'application':
      return `FlinkDeployment ${deploymentName} is an application cluster (it has spec.job) and runs no session jobs: point spec.deploymentName at a session cluster`;
    case 'deleting':
      return `Session cluster ${deploymentName} is being deleted`;
    case 'not-ready':
      return `Session cluster ${deploymentName} is not ready (${cluster.reason}); waiting for it`;
    case 'ready':
      return undefined;
  }
}

/** The one step of this pass. */
export function decideSessionJob(input: SessionJobDecisionInput): SessionJobDecision {
  if (input.deleting) return decideDeletion(input);
  const { state, desired, desiredGeneration, observed, settings, now } = input;
  // Owed FlinkStateSnapshot writes first: they are quick, and a user's snapshot shows IN_PROGRESS while it is followed.
  if (state.snapshotResourceWrites?.length) return { step: { kind: 'publish-snapshot-resource' } };
  const deploymentName = desired.deploymentName ?? '';
  const problem = clusterProblem(observed.cluster, deploymentName, input.resource);

  if (state.phase === 'NEW' && wantsSuspended(desired)) return { step: { kind: 'record-suspended', spec: desired, generation: desiredGeneration } };
  if (problem) return { step: { kind: 'wait', requeue: 'progress', error: problem } };
  if (!observed.jobs) {
    return {
      step: { kind: 'wait', requeue: 'progress', error: `Session cluster ${deploymentName} does not answer (${observed.restUnreachable ?? 'not asked'})` },
    };
  }
  const listed = (jobId: string | undefined) => (jobId ? observed.jobs?.find((j) => j.jobId === jobId) : undefined);

  if (state.pendingSavepoint) return { step: { kind: 'follow-savepoint' } };
  if (state.pendingCheckpoint) return { step: { kind: 'follow-checkpoint' } };
  if (STOPPING_PHASES.includes(state.phase)) return { step: { kind: 'follow-cancel' } };

  switch (state.phase) {
    case 'NEW':
      return {
        step: {
          kind: 'pin',
          spec: runningSpec(desired),
          generation: desiredGeneration,
          ...(desired.job?.initialSavepointPath ? { restoreFrom: desired.job.initialSavepointPath } : {}),
          why: 'first submission',
        },
      };
    case 'DEPLOYING':
      return listed(state.jobIdToSubmit) ? { step: { kind: 'record-submitted' } } : { step: { kind: 'submit' } };
    case 'STOPPED':
    case 'SUSPENDED': {
      // Stopped for an upgrade, or suspended; either way the user may ask for a suspend, or for no state.
      const resume = state.phase === 'SUSPENDED';
      if (wantsSuspended(desired))
        return resume ? { step: { kind: 'wait', requeue: 'steady' } } : { step: { kind: 'record-suspended', spec: desired, generation: desiredGeneration } };
      return {
        step: {
          kind: 'pin',
          spec: runningSpec(desired),
          generation: desiredGeneration,
          ...(desired.job?.upgradeMode !== 'stateless' && state.upgradeSavepointPath ? { restoreFrom: state.upgradeSavepointPath } : {}),
          why: resume ? 'resume' : `upgrade to generation ${desiredGeneration}`,
        },
      };
    }
    default:
      return decideRunning(input, listed(state.deployedJobId), settings, now);
  }
}

/** DEPLOYED, RUNNING, FINISHED (and anything else that has a deployed job). */
function decideRunning(input: SessionJobDecisionInput, job: ListedJob | undefined, settings: DeploymentOperatorSettings, now: number): SessionJobDecision {
  const { state, desired, desiredGeneration } = input;
  const jobId = state.deployedJobId ?? '';
  if (!job) {
    if (state.phase === 'FINISHED') return respec(input) ?? { step: { kind: 'wait', requeue: 'steady' } };
    // The session cluster answers and does not know the job: it was restarted without HA (or the
    // job was cancelled by hand). Submit it again, under a new job id, from its newest savepoint.
    const restoreFrom = desired.job?.upgradeMode === 'stateless' ? undefined : restorePathOf(state);
    return {
      step: {
        kind: 'pin',
        spec: runningSpec(state.lastReconciledSpec ?? desired),
        generation: state.lastReconciledGeneration ?? desiredGeneration,
        ...(restoreFrom ? { restoreFrom } : {}),
        why: `job ${jobId} is gone from the session cluster`,
      },
      announce: {
        type: 'Warning',
        reason: 'JobLost',
        key: jobId,
        message:
          `Job ${jobId} is not known to session cluster ${desired.deploymentName ?? ''} any more (the cluster restarted without high availability, or the job was cancelled outside the operator); ` +
          `submitting it again ${restoreFrom ? `from ${restoreFrom}` : 'without state'}`,
      },
    };
  }
  const terminal = TERMINAL_JOB_STATES.has(job.state);
  const change = respec(input, job);
  if (change) return change;
  if (job.state === 'FINISHED' && state.phase !== 'FINISHED') return { step: { kind: 'record-finished' } };
  if (job.state === 'RUNNING' && state.phase === 'DEPLOYED') return { step: { kind: 'record-running' } };
  if (state.lastReconciledGeneration !== desiredGeneration)
    return { step: { kind: 'acknowledge', spec: acknowledgedSpec(desired, state), generation: desiredGeneration } };
  if (job.state === 'RUNNING') {
    const user = input.observed.userSnapshots?.[0];
    if (user?.snapshotType === 'SAVEPOINT') return { step: { kind: 'start-savepoint', triggerType: 'MANUAL', user } };
    if (user && checkpointTriggerSupported(input.observed.clusterFlinkVersion))
      return {
        step: {
          kind: 'start-checkpoint',
          request: {
            triggerType: 'MANUAL',
            jobId,
            checkpointType: settings.checkpointType,
            snapshotResource: user.ref,
            ...(user.inFlight ? { inFlight: user.inFlight } : {}),
          },
        },
      };
    if (user)
      return {
        step: {
          kind: 'refuse-user-snapshot',
          snapshot: user.ref,
          snapshotType: 'CHECKPOINT',
          error: checkpointTriggerRefusal(`the session cluster's Flink ${input.observed.clusterFlinkVersion ?? ''}`),
        },
      };
    const due = dueSavepoint(state, desired, settings, now);
    if (due) return { step: { kind: 'start-savepoint', ...due } };
    const checkpoints = checkpointTriggerSupported(input.observed.clusterFlinkVersion);
    const checkpoint = checkpoints ? dueSnapshot('checkpoint', state, desired, settings, now) : undefined;
    if (checkpoint) {
      const request: CheckpointRequest = {
        triggerType: checkpoint.triggerType,
        jobId,
        checkpointType: settings.checkpointType,
        ...(checkpoint.triggerType === 'MANUAL' ? { nonce: checkpoint.nonce } : {}),
      };
      return { step: { kind: 'start-checkpoint', request } };
    }
    const wake = soonest(
      untilNextPeriodicSavepoint(state, settings, now),
      checkpoints ? untilNextPeriodicSnapshot('checkpoint', state, settings, now) : undefined,
    );
    return { step: { kind: 'wait', requeue: 'steady', ...(wake !== undefined ? { wakeUpInMs: wake } : {}) } };
  }
  if (terminal && job.state !== 'FINISHED') {
    return { step: { kind: 'wait', requeue: 'steady', error: `Job ${jobId} is ${job.state}; change the spec (or restartNonce) to submit it again` } };
  }
  return { step: { kind: 'wait', requeue: 'progress' } };
}

/** The sooner of two wake-ups, either of which may be unscheduled. */
function soonest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/**
 * A spec change (or restart, or suspend) of a deployed job: the stop that carries it out, or a
 * direct new pin when the job no longer runs. Undefined when nothing changed.
 */
function respec(input: SessionJobDecisionInput, job?: ListedJob): SessionJobDecision | undefined {
  const { state, desired, desiredGeneration, observed } = input;
  const reconciled = state.lastReconciledSpec;
  const suspend = wantsSuspended(desired);
  const restart = desired.restartNonce !== reconciled?.restartNonce;
  if (!suspend && !restart && !needsNewSubmission(reconciled, desired)) return undefined;
  if (state.failedUpgrade && state.failedUpgrade.generation === desiredGeneration) {
    return { step: { kind: 'wait', requeue: 'steady', error: `The upgrade to generation ${desiredGeneration} failed: ${state.failedUpgrade.reason}` } };
  }
  const why = suspend ? 'suspend' : restart ? 'restart (restartNonce changed)' : `upgrade to generation ${desiredGeneration}`;
  const mode = desired.job?.upgradeMode ?? 'stateless';
  const running = job !== undefined && !TERMINAL_JOB_STATES.has(job.state);
  if (!running) {
    // Nothing to stop: carry the change out from what is remembered.
    if (suspend) return { step: { kind: 'record-suspended', spec: desired, generation: desiredGeneration } };
    const restoreFrom = mode === 'stateless' ? undefined : restorePathOf(state);
    return { step: { kind: 'pin', spec: runningSpec(desired), generation: desiredGeneration, ...(restoreFrom ? { restoreFrom } : {}), why } };
  }
  // savepointRedeployNonce (the Apache SAVEPOINT_REDEPLOY diff): cancel, then submit from initialSavepointPath.
  const redeployNonce = desired.job?.savepointRedeployNonce;
  if (!suspend && redeployNonce !== undefined && redeployNonce !== null && redeployNonce !== reconciled?.job?.savepointRedeployNonce) {
    return {
      step: {
        kind: 'stop',
        mode: 'cancel',
        spec: suspendedSpec(desired),
        generation: desiredGeneration,
        suspend: false,
        ...(desired.job?.initialSavepointPath ? { restoreFrom: desired.job.initialSavepointPath } : {}),
        why: `redeploy from ${desired.job?.initialSavepointPath ?? '(no initialSavepointPath)'} (savepointRedeployNonce changed)`,
      },
    };
  }
  const target = suspend ? desired : suspendedSpec(desired);
  if (mode === 'savepoint') return { step: { kind: 'stop', mode: 'savepoint', spec: target, generation: desiredGeneration, suspend, why } };
  if (mode === 'last-state') {
    if (observed.latestCheckpoint === undefined) return { step: { kind: 'gather-checkpoint' } };
    // No completed checkpoint yet: a savepoint is the only way to keep the state.
    if (observed.latestCheckpoint === null) return { step: { kind: 'stop', mode: 'savepoint', spec: target, generation: desiredGeneration, suspend, why } };
    return { step: { kind: 'stop', mode: 'cancel', spec: target, generation: desiredGeneration, suspend, restoreFrom: observed.latestCheckpoint, why } };
  }
  return { step: { kind: 'stop', mode: 'cancel', spec: target, generation: desiredGeneration, suspend, why } };
}

function decideDeletion(input: SessionJobDecisionInput): SessionJobDecision {
  const { state, observed, settings, desired } = input;
  const release = (why: string): SessionJobDecision => ({ step: { kind: 'release', why } });
  const jobId = state.deployedJobId ?? state.jobIdToSubmit;
  if (!jobId || state.phase === 'NEW' || state.phase === 'SUSPENDED' || state.phase === 'FINISHED') return release('no job runs');
  const cluster = observed.cluster;
  if (cluster.kind === 'missing' || cluster.kind === 'application') return release('the session cluster is gone');
  if (cluster.kind === 'deleting' && !cluster.blockOnSessionJobs) return release('the session cluster is being deleted and does not wait for its jobs');
  if (cluster.kind === 'not-ready' || !observed.jobs) {
    if (!cluster.highAvailability) return release('the session cluster is not running and has no high availability: its jobs are gone');
    return {
      step: { kind: 'wait', requeue: 'progress', error: `Deleting: waiting for session cluster ${desired.deploymentName ?? ''} to cancel job ${jobId}` },
    };
  }
  if (state.pendingSavepoint) return { step: { kind: 'follow-savepoint' } };
  if (STOPPING_PHASES.includes(state.phase)) return { step: { kind: 'follow-cancel' } };
  const job = observed.jobs.find((j) => j.jobId === jobId);
  if (!job || TERMINAL_JOB_STATES.has(job.state)) return release(`job ${jobId} does not run`);
  const spec = state.lastReconciledSpec ?? desired;
  return {
    step: {
      kind: 'stop',
      mode: settings.savepointOnDeletion ? 'savepoint' : 'cancel',
      spec: suspendedSpec(spec),
      generation: state.lastReconciledGeneration ?? input.desiredGeneration,
      suspend: true,
      why: 'deletion',
    },
  };
}
