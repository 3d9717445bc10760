/**
 * Decide: the pure heart of the reconciler. `decide(input)` looks at the phase, the spec to carry
 * out, what was observed and the settings, and names the one step the pass performs
 * (reconcile-step.ts). It reads no clock (`now` is given), sends no request and writes nothing; a
 * fact it needs that costs a request is asked for with a `gather` step, and it is asked again.
 *
 * Order, by phase (design/005 "Decision order"):
 * - a pending savepoint is followed first, whatever the phase;
 * - DEPLOYING / ROLLING_BACK apply the pinned deployment; STOPPED records the next one (or the
 *   suspend); SUSPENDING deletes the cluster; NEW deploys the first time (from
 *   `job.initialSavepointPath`); SUSPENDED waits or resumes; FINISHED waits for a new spec;
 * - DEPLOYED / RUNNING / ROLLED_BACK: suspend or spec change (stop-decision.ts picks how to stop),
 *   then the steady checks: drift, a missing JobManager (recovery), rollback, a failed job, the
 *   health check, a finished job's shutdown, promotion to RUNNING, due savepoints, then due
 *   checkpoints (a pending checkpoint is followed right after a pending savepoint), history trim,
 *   acknowledging ignored changes, TaskManager replicas.
 *
 * Guarantees: the same input gives the same decision; a decision never starts anything from an
 * invalid spec (the caller passes lastReconciledSpec as `desired` then, with `specInvalid`).
 */
import { sameValue } from '../api/canonical-json.js';
import { isDeployedPhase } from '../api/deployment-phase.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { InternalState } from '../api/internal-state.js';
import { checkpointTriggerRefusal, checkpointTriggerSupported } from '../api/periodic-snapshot-schedule.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import { taskManagerReplicas } from '../flink/taskmanager-deployment.js';
import { acknowledgedSpec, deployedGenerationOf, deployedSpecOf, haOn, newestSavepointOf, restorePathFor, sameFlinkVersion } from './deployment-specs.js';
import { type DeploymentOperatorSettings, dueSnapshot, expiredSavepoints, untilNextPeriodicSnapshot } from './deployment-operator-settings.js';
import type { Observation } from './observation.js';
import type { Decision, DeployIntent } from './reconcile-step.js';
import { inPlaceScalingRefusal } from './inplace-scaling-steps.js';
import { diffSpecs } from './spec-diff.js';
import { decideStop, haHoldsJob, newestRestorePath } from './stop-decision.js';

export interface DecisionInput {
  state: InternalState;
  /** The spec to carry out: the user's, or lastReconciledSpec while the user's is invalid. */
  desired: FlinkDeploymentSpec;
  desiredGeneration: number;
  /** The user's spec is invalid (validation reports it); nothing is started from it. */
  specInvalid: boolean;
  observed: Observation;
  settings: DeploymentOperatorSettings;
  /**
   * The operator's default configuration for this resource (flat, already scoped to its namespace
   * and Flink version): what its specs' own flinkConfiguration is read over (HA, directories).
   */
  configurationDefaults: Readonly<Record<string, string>>;
  now: number;
  /** `namespace/name`, for messages. */
  resource: string;
}

/** How long a just-deployed JobManager Deployment may be missing from the informer before it counts as deleted. */
export const JOB_MANAGER_APPEARANCE_GRACE_MS = 10_000;

export function decide(input: DecisionInput): Decision {
  const { state } = input;
  // Owed FlinkStateSnapshot writes first: they are quick, and a user's snapshot shows IN_PROGRESS while it is followed.
  if (state.snapshotResourceWrites?.length) return { step: { kind: 'publish-snapshot-resource' } };
  if (state.pendingSavepoint) return { step: { kind: 'follow-savepoint' } };
  if (state.pendingCheckpoint) return { step: { kind: 'follow-checkpoint' } };
  if (state.inPlaceScaling && state.inPlaceScaling.refused === undefined) return { step: { kind: 'follow-in-place-scaling' } };
  switch (state.phase) {
    case 'DEPLOYING':
    case 'ROLLING_BACK':
      return state.jobIdToSubmit ? { step: { kind: 'apply-pinned' } } : decideStopped(input);
    case 'STOPPING':
    case 'STOPPED':
      return decideStopped(input);
    case 'SUSPENDING':
      return { step: { kind: 'shut-down', then: 'SUSPENDED' } };
    case 'NEW':
      return decideNew(input);
    case 'SUSPENDED':
      return decideSuspended(input);
    case 'FINISHED':
      return decideFinished(input);
    case 'DEPLOYED':
    case 'RUNNING':
    case 'ROLLED_BACK':
      return decideDeployed(input);
  }
}

function decideNew(input: DecisionInput): Decision {
  const { desired, desiredGeneration, specInvalid } = input;
  if (specInvalid || desired.job?.state === 'suspended') return { step: { kind: 'wait', requeue: 'steady' } };
  const from = desired.job?.initialSavepointPath ?? undefined;
  return deploy({ phase: 'DEPLOYING', spec: desired, generation: desiredGeneration, ...(from ? { restoreFrom: from } : {}), why: 'first deployment' });
}

/** The old job is stopped (or gone): record the next deployment, or finish a suspend. */
function decideStopped(input: DecisionInput): Decision {
  const { state, desired, desiredGeneration, specInvalid } = input;
  if (specInvalid && !state.lastReconciledSpec) return { step: { kind: 'wait', requeue: 'steady' } };
  const from = restorePathFor(desired, state);
  if (desired.job?.state === 'suspended')
    return { step: { kind: 'suspend', spec: desired, generation: desiredGeneration, ...(from ? { savepoint: from } : {}) } };
  return deploy({
    phase: 'DEPLOYING',
    spec: desired,
    generation: desiredGeneration,
    ...(from ? { restoreFrom: from } : {}),
    why: `upgrade to generation ${desiredGeneration}`,
  });
}

function decideSuspended(input: DecisionInput): Decision {
  const { state, desired, desiredGeneration } = input;
  if (desired.job?.state === 'suspended') {
    if (state.lastReconciledGeneration !== desiredGeneration || !sameValue(state.lastReconciledSpec, desired))
      return { step: { kind: 'acknowledge', spec: desired, generation: desiredGeneration } };
    return { step: { kind: 'wait', requeue: 'steady' } };
  }
  const announce = { type: 'Normal' as const, reason: 'SpecChanged', key: `resume-${desiredGeneration}`, message: 'Job resumed (job.state: running)' };
  if (
    (desired.job?.upgradeMode ?? 'stateless') === 'last-state' &&
    state.deployedJobId &&
    sameFlinkVersion(state, desired) &&
    haOn(desired, input.configurationDefaults)
  ) {
    const holds = haHoldsJob(input.observed, state.deployedJobId);
    if (holds === undefined) return { step: { kind: 'gather', fact: 'ha' } };
    if (holds)
      return {
        ...deploy({
          phase: 'DEPLOYING',
          spec: desired,
          generation: desiredGeneration,
          keepJobId: state.deployedJobId,
          why: 'resume from the latest checkpoint in Flink HA',
        }),
        announce,
      };
  }
  const from = restorePathFor(desired, state);
  return { ...deploy({ phase: 'DEPLOYING', spec: desired, generation: desiredGeneration, ...(from ? { restoreFrom: from } : {}), why: 'resume' }), announce };
}

function decideFinished(input: DecisionInput): Decision {
  const { state, desired, desiredGeneration, observed } = input;
  if (desired.job?.state === 'suspended') return { step: { kind: 'suspend', spec: desired, generation: desiredGeneration } };
  // The shutdown is recorded first: a JobManager still there is what is left of it.
  if (observed.jobManager !== 'MISSING') return { step: { kind: 'shut-down', then: 'FINISHED' } };
  if (state.lastReconciledSpec && diffSpecs(state.lastReconciledSpec, desired).type !== 'IGNORE') {
    const from = restorePathFor(desired, state);
    return deploy({
      phase: 'DEPLOYING',
      spec: desired,
      generation: desiredGeneration,
      ...(from ? { restoreFrom: from } : {}),
      why: `new spec (generation ${desiredGeneration}) after the job finished`,
    });
  }
  if (state.lastReconciledGeneration !== desiredGeneration) return { step: { kind: 'acknowledge', spec: desired, generation: desiredGeneration } };
  return { step: { kind: 'wait', requeue: 'steady' } };
}

function decideDeployed(input: DecisionInput): Decision {
  const { state, desired, desiredGeneration: generation } = input;
  if (!state.lastReconciledSpec) {
    if (!state.deployedJobId) return decideNew(input);
    // Rebuilt without the deployed spec: a job runs a spec the operator cannot confirm; upgrade it the normal way.
    const decision = decideStop(input, 'upgrade');
    return {
      ...decision,
      announce: decision.announce ?? {
        type: 'Normal',
        reason: 'SpecChanged',
        key: `unconfirmed-${state.deployedJobId}`,
        message: `Job ${state.deployedJobId} runs a spec the operator cannot confirm; upgrading it to generation ${generation} through the normal path`,
      },
    };
  }
  const wantSuspended = desired.job?.state === 'suspended';
  const diff = diffSpecs(state.lastReconciledSpec, desired);
  const blocked = state.failedUpgrade?.generation === generation && (wantSuspended || diff.type === 'UPGRADE' || diff.type === 'SCALE');
  if (blocked) {
    const error = `Generation ${generation} is not deployed: ${state.failedUpgrade!.reason}`;
    // The old spec keeps running: the steady checks run on it, the new generation stays unacknowledged.
    const decision = decideSteady({ ...input, desired: state.lastReconciledSpec, desiredGeneration: state.lastReconciledGeneration ?? generation }, error);
    return { ...decision, error: decision.error ?? error };
  }
  if (wantSuspended) {
    const decision = decideStop(input, 'suspend');
    return {
      ...decision,
      announce: decision.announce ?? {
        type: 'Normal',
        reason: 'Suspended',
        key: `suspend-${generation}`,
        message: 'Suspending the job (job.state: suspended)',
      },
    };
  }
  if (diff.type !== 'IGNORE') {
    const announce = {
      type: 'Normal' as const,
      reason: 'SpecChanged',
      key: `changed-${generation}`,
      message: `Spec changed (${diff.type}): ${diff.changedFields.join(', ')}`,
    };
    if (diff.type === 'SCALE' && desired.mode === 'standalone') return { step: { kind: 'rescale', spec: desired, generation }, announce };
    if (diff.type === 'SCALE') {
      // Native mode: the parallelism overrides, in place where Flink can (inplace-scaling-steps.ts), else the full upgrade below.
      const notInPlace = inPlaceScalingRefusal(input);
      if (notInPlace === undefined) return { step: { kind: 'scale-in-place', spec: desired, generation }, announce };
      announce.message += `; not in place (${notInPlace}), a full upgrade`;
    }
    if (diff.type === 'SAVEPOINT_REDEPLOY') {
      const from = desired.job?.initialSavepointPath ?? undefined;
      return {
        ...deploy({
          phase: 'DEPLOYING',
          spec: desired,
          generation,
          ...(from ? { restoreFrom: from } : {}),
          why: 'savepoint redeploy (job.savepointRedeployNonce)',
        }),
        announce,
      };
    }
    const decision = decideStop(input, 'upgrade');
    return { ...decision, announce: decision.announce ?? announce };
  }
  return decideSteady(input, undefined);
}

/** Nothing to redeploy for the spec: the checks of a deployed cluster, in order. */
function decideSteady(input: DecisionInput, carriedError: string | undefined): Decision {
  const { state, desired, desiredGeneration: generation, observed, settings, now } = input;
  const deployedSpec = deployedSpecOf(state)!;
  const job = observed.job;
  const hasJob = deployedSpec.job !== undefined;
  const running = observed.jobManager === 'READY' && (!hasJob || job?.state === 'RUNNING');

  const drift = driftOf(input);
  if (drift) return drift;
  if (observed.jobManager === 'MISSING') {
    const recovery = decideRecovery(input);
    if (recovery) return recovery;
  }
  if (state.phase === 'DEPLOYED' && shouldRollBack(input)) {
    const reason = `not ready within ${settings.readinessTimeoutMs / 1000} s (JobManager ${observed.jobManager}, job ${job?.state ?? 'not running'})`;
    const from = restorePathFor(state.lastStableSpec!, state);
    return {
      ...deploy({ phase: 'ROLLING_BACK', ...(from ? { restoreFrom: from } : {}), why: 'rollback to the last stable spec' }),
      announce: {
        type: 'Warning',
        reason: 'Rollback',
        key: `rollback-${state.deployedJobId}`,
        message: `Rolling back to the last stable spec (generation ${state.lastStableGeneration}): ${reason}`,
      },
    };
  }
  if (job?.state === 'FAILED' && job.jobId === state.deployedJobId) {
    if (!settings.restartFailedJobs) return { step: { kind: 'report-failed-job', jobId: job.jobId } };
    if (observed.checkpoints === undefined) return { step: { kind: 'gather', fact: 'checkpoints' } };
    const mode = deployedSpec.job?.upgradeMode ?? 'stateless';
    const from = mode === 'stateless' ? undefined : newestRestorePath(state, observed);
    return {
      ...deploy(redeployOf(state, { ...(from ? { restoreFrom: from } : {}), why: `restart of failed job ${job.jobId}` })),
      announce: {
        type: 'Normal',
        reason: 'RestartFailedJob',
        key: `restart-${job.jobId}`,
        message: `Job ${job.jobId} FAILED; restarting it` + (from ? ` from ${from}` : ' without state'),
      },
    };
  }
  if (settings.healthCheck.enabled && observed.jobManager === 'READY' && job && !TERMINAL_JOB_STATES.has(job.state)) {
    if (observed.health === undefined) return { step: { kind: 'gather', fact: 'health' } };
    if (!observed.health.healthy) {
      const restart = decideUnhealthyRestart(input, observed.health.reason ?? 'unhealthy');
      if (restart) return restart;
    }
  }
  if (job?.state === 'FINISHED' && job.jobId === state.deployedJobId) {
    const left = (job.endTime ?? job.updateTime ?? now) + settings.jobManagerShutdownTtlMs - now;
    if (left <= 0) return { step: { kind: 'shut-down', then: 'FINISHED' } };
    return { step: { kind: 'wait', requeue: 'steady', wakeUpInMs: left } };
  }
  if (state.phase === 'DEPLOYED' && running) return { step: { kind: 'mark-running' } };
  if (running && hasJob && state.deployedJobId) {
    const user = userSnapshotStep(input, state.deployedJobId, checkpointTriggerSupported(deployedSpec.flinkVersion));
    if (user) return user;
    const due = dueSnapshot('savepoint', state, desired, settings, now);
    if (due) {
      return {
        step: {
          kind: 'start-savepoint',
          request: {
            triggerType: due.triggerType,
            stopJob: false,
            jobId: state.deployedJobId,
            spec: desired,
            ...(due.triggerType === 'MANUAL' ? { nonce: due.nonce } : {}),
          },
        },
      };
    }
    const checkpoint = checkpointTriggerSupported(deployedSpec.flinkVersion) ? dueSnapshot('checkpoint', state, desired, settings, now) : undefined;
    if (checkpoint) {
      return {
        step: {
          kind: 'start-checkpoint',
          request: {
            triggerType: checkpoint.triggerType,
            jobId: state.deployedJobId,
            checkpointType: settings.checkpointType,
            ...(checkpoint.triggerType === 'MANUAL' ? { nonce: checkpoint.nonce } : {}),
          },
        },
      };
    }
  }
  if (state.phase !== 'ROLLED_BACK') {
    const acknowledged = acknowledgedSpec(desired, state);
    if (state.lastReconciledGeneration !== generation || !sameValue(state.lastReconciledSpec, acknowledged))
      return { step: { kind: 'acknowledge', spec: acknowledged, generation } };
  }
  const wantedReplicas = taskManagerReplicas(deployedSpec);
  if (observed.taskManagerDeploymentReplicas !== undefined && observed.taskManagerDeploymentReplicas !== wantedReplicas)
    return { step: { kind: 'scale-task-managers', replicas: wantedReplicas } };
  const ownCheckpoints = observed.ownCheckpointResources ?? [];
  if (running && settings.savepointCleanup && ownCheckpoints.length > settings.retainedCheckpointResources)
    return { step: { kind: 'trim-checkpoint-resources', names: ownCheckpoints.slice(0, ownCheckpoints.length - settings.retainedCheckpointResources) } };
  if (running && hasJob && (observed.savepointsAwaitingDisposal > 0 || expiredSavepoints(state.savepointHistory, settings, now).length > 0))
    return { step: { kind: 'trim-history' } };
  const steady = running && (state.phase === 'RUNNING' || state.phase === 'ROLLED_BACK');
  const next = running ? nextPeriodicSnapshotIn(input, checkpointTriggerSupported(deployedSpec.flinkVersion)) : undefined;
  const error = carriedError ?? missingJobManagerError(input);
  return { step: { kind: 'wait', requeue: steady ? 'steady' : 'progress', ...(error ? { error } : {}), ...(next !== undefined ? { wakeUpInMs: next } : {}) } };
}

/**
 * The oldest user-created FlinkStateSnapshot of this job not yet taken up: a savepoint (into its
 * spec.savepoint.path, else the configured directory) or a checkpoint; one Flink cannot take
 * (a checkpoint before 1.19) is refused.
 */
function userSnapshotStep(input: DecisionInput, jobId: string, checkpointsOnRequest: boolean): Decision | undefined {
  const request = input.observed.userSnapshots?.[0];
  if (!request) return undefined;
  if (request.snapshotType === 'SAVEPOINT')
    return {
      step: {
        kind: 'start-savepoint',
        request: {
          triggerType: 'MANUAL',
          stopJob: false,
          jobId,
          spec: input.desired,
          snapshotResource: request.ref,
          ...(request.targetDirectory ? { targetDirectory: request.targetDirectory } : {}),
          ...(request.formatType ? { formatType: request.formatType } : {}),
          ...(request.inFlight ? { inFlight: request.inFlight } : {}),
        },
      },
    };
  if (!checkpointsOnRequest)
    return {
      step: {
        kind: 'refuse-user-snapshot',
        snapshot: request.ref,
        snapshotType: 'CHECKPOINT',
        error: checkpointTriggerRefusal(`Flink ${deployedSpecOf(input.state)?.flinkVersion ?? ''}`),
      },
    };
  return {
    step: { kind: 'start-checkpoint', request: { triggerType: 'MANUAL', jobId, checkpointType: input.settings.checkpointType, snapshotResource: request.ref } },
  };
}

/** Milliseconds until the sooner of the next periodic savepoint and (where Flink can take one on request) checkpoint. */
function nextPeriodicSnapshotIn(input: DecisionInput, checkpoints: boolean): number | undefined {
  const { state, settings, now } = input;
  const times = [
    untilNextPeriodicSnapshot('savepoint', state, settings, now),
    checkpoints ? untilNextPeriodicSnapshot('checkpoint', state, settings, now) : undefined,
  ];
  const due = times.filter((t): t is number => t !== undefined);
  return due.length > 0 ? Math.min(...due) : undefined;
}

/**
 * The running cluster is not the one the state says was deployed: the JobManager Deployment is
 * pinned to another job id. Reported, and repaired through the normal upgrade path (a savepoint of
 * whatever runs there first).
 */
function driftOf(input: DecisionInput): Decision | undefined {
  const { state, observed, desired, desiredGeneration } = input;
  if (!isDeployedPhase(state.phase) || !state.deployedJobId || state.jobIdToSubmit) return undefined;
  // Right after a deployment the informer may still list the JobManager it replaced.
  if (state.phase !== 'RUNNING' && withinAppearanceGrace(input)) return undefined;
  if (observed.pinnedJobId === undefined || observed.pinnedJobId === state.deployedJobId) return undefined;
  const message =
    `The running Flink cluster is not the one the operator deployed: the JobManager Deployment ${input.resource} runs job id ${observed.pinnedJobId}, ` +
    `but the operator deployed job ${state.deployedJobId}. It is redeployed from the spec through a savepoint upgrade`;
  const base = {
    error: message,
    count: 'drift' as const,
    announce: { type: 'Warning' as const, reason: 'ClusterDrift', key: `drift-${state.deployedJobId}`, message },
  };
  const runningThere = observed.jobs?.find((j) => j.state === 'RUNNING');
  if (runningThere && (desired.job?.upgradeMode ?? 'stateless') !== 'stateless') {
    return { ...base, step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId: runningThere.jid, spec: desired } } };
  }
  const from = restorePathFor(desired, state);
  return {
    ...base,
    ...deploy({ phase: 'DEPLOYING', spec: desired, generation: desiredGeneration, ...(from ? { restoreFrom: from } : {}), why: 'repair of a drifted cluster' }),
  };
}

/**
 * The JobManager Deployment of a deployed job is gone (Apache `jm-deployment-recovery.enabled`):
 * recreated with the same job id when Flink's HA store holds it (the new JobManager recovers it
 * from its latest checkpoint), or with a new job id without state in stateless mode. Otherwise it
 * is reported, never redeployed from an older savepoint behind the user's back.
 */
function decideRecovery(input: DecisionInput): Decision | undefined {
  const { state, observed, settings } = input;
  if (state.phase !== 'RUNNING' && withinAppearanceGrace(input)) return undefined;
  if (!settings.jobManagerRecovery || !state.deployedJobId) return undefined;
  const deployedSpec = deployedSpecOf(state)!;
  const announce = {
    type: 'Warning' as const,
    reason: 'RecoverDeployment',
    key: `recover-${state.deployedJobId}-${state.reconciliationTimestamp ?? ''}`,
    message: `Recovering the deleted JobManager Deployment ${input.resource}`,
  };
  if ((deployedSpec.job?.upgradeMode ?? 'stateless') === 'stateless' || !deployedSpec.job) {
    return { ...deploy(redeployOf(state, { why: 'recovery of the deleted JobManager Deployment' })), announce };
  }
  if (!haOn(deployedSpec, input.configurationDefaults)) return undefined;
  const holds = haHoldsJob(observed, state.deployedJobId, { requireCheckpoint: false });
  if (holds === undefined) return { step: { kind: 'gather', fact: 'ha' } };
  if (!holds) return undefined;
  return { ...deploy(redeployOf(state, { keepJobId: state.deployedJobId, why: 'recovery of the deleted JobManager Deployment through Flink HA' })), announce };
}

function missingJobManagerError(input: DecisionInput): string | undefined {
  const { state, observed, settings } = input;
  if (observed.jobManager !== 'MISSING' || !isDeployedPhase(state.phase)) return observed.jobManagerError;
  if (state.phase !== 'RUNNING' && withinAppearanceGrace(input)) return undefined;
  const deployedSpec = deployedSpecOf(state)!;
  const newest = newestSavepointOf(state);
  const how = newest
    ? `set job.initialSavepointPath: ${newest} and change job.savepointRedeployNonce to redeploy from the newest savepoint`
    : 'change job.savepointRedeployNonce (with job.initialSavepointPath) or delete and recreate the FlinkDeployment to redeploy';
  let why: string;
  if (!settings.jobManagerRecovery) why = 'kubernetes.operator.jm-deployment-recovery.enabled is false';
  else if (!haOn(deployedSpec, input.configurationDefaults))
    why = 'Flink HA is off, so the job cannot be recovered with its state (the Apache operator recovers only with HA or in stateless mode)';
  else if (observed.ha !== undefined && !haHoldsJob(observed, state.deployedJobId ?? '', { requireCheckpoint: false }))
    why = `Flink's HA metadata of job ${state.deployedJobId} is gone`;
  else return `JobManager Deployment ${input.resource} is missing; it is being recreated`;
  return `JobManager Deployment ${input.resource} is missing and the job is not running; it is not recreated: ${why}. To redeploy, ${how}`;
}

/** Apache's cluster health check said unhealthy: restart in stateless mode, or through HA; else report. */
function decideUnhealthyRestart(input: DecisionInput, reason: string): Decision | undefined {
  const { state, observed } = input;
  const deployedSpec = deployedSpecOf(state)!;
  const announce = {
    type: 'Warning' as const,
    reason: 'RestartUnhealthyJob',
    key: `unhealthy-${state.deployedJobId}-${state.reconciliationTimestamp ?? ''}`,
    message: `Restarting the unhealthy job ${state.deployedJobId}: ${reason}`,
  };
  if ((deployedSpec.job?.upgradeMode ?? 'stateless') === 'stateless')
    return { ...deploy(redeployOf(state, { replaceRunningCluster: true, why: `restart of the unhealthy job (${reason})` })), announce };
  if (!haOn(deployedSpec, input.configurationDefaults) || !state.deployedJobId)
    return {
      step: {
        kind: 'wait',
        requeue: 'progress',
        error: `The job is unhealthy (${reason}) but is not restarted: Flink HA is off, so its state could not be recovered`,
      },
    };
  const holds = haHoldsJob(observed, state.deployedJobId, { requireCheckpoint: false });
  if (holds === undefined) return { step: { kind: 'gather', fact: 'ha' } };
  if (!holds)
    return {
      step: {
        kind: 'wait',
        requeue: 'progress',
        error: `The job is unhealthy (${reason}) but is not restarted: Flink's HA metadata does not hold job ${state.deployedJobId}`,
      },
    };
  return {
    ...deploy(
      redeployOf(state, { keepJobId: state.deployedJobId, replaceRunningCluster: true, why: `restart of the unhealthy job through Flink HA (${reason})` }),
    ),
    announce,
  };
}

/** Less than JOB_MANAGER_APPEARANCE_GRACE_MS since the phase last changed to a deployment (the informer may lag the write). */
function withinAppearanceGrace(input: DecisionInput): boolean {
  const since = input.state.reconciliationTimestamp ? Date.parse(input.state.reconciliationTimestamp) : input.now;
  return input.now - since < JOB_MANAGER_APPEARANCE_GRACE_MS;
}

/** The Apache operator's rule: enabled, a non-suspended stable spec to go back to, same Flink version, not ready for longer than the readiness timeout. */
function shouldRollBack(input: DecisionInput): boolean {
  const { state, settings, observed, now } = input;
  if (!settings.rollbackEnabled || !state.lastStableSpec || !state.lastReconciledSpec) return false;
  if (state.lastStableSpec.job?.state === 'suspended' || sameValue(state.lastStableSpec, state.lastReconciledSpec)) return false;
  if (state.lastStableSpec.flinkVersion !== state.lastReconciledSpec.flinkVersion) return false;
  // Ready: the job runs, or (a session cluster, no job of its own) the JobManager answers.
  if (observed.jobManager === 'READY' && (!state.lastReconciledSpec.job || observed.job?.state === 'RUNNING')) return false;
  const since = state.reconciliationTimestamp ? Date.parse(state.reconciliationTimestamp) : now;
  return now - since > settings.readinessTimeoutMs;
}

/** A redeploy of what the cluster runs now (recovery, restart): the rolled-back spec stays rolled back. */
function redeployOf(state: InternalState, rest: Omit<DeployIntent, 'phase' | 'spec' | 'generation'>): DeployIntent {
  if (state.phase === 'ROLLED_BACK') return { phase: 'ROLLING_BACK', ...rest };
  return { phase: 'DEPLOYING', spec: state.lastReconciledSpec!, generation: deployedGenerationOf(state) ?? 0, ...rest };
}

function deploy(intent: DeployIntent): Decision {
  return { step: { kind: 'deploy', intent } };
}
