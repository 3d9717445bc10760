/**
 * How to stop the running job for an upgrade or a suspend (pure; part of decide).
 *
 * By `job.upgradeMode`, following the Apache operator's `getJobUpgrade` / ApplicationReconciler:
 * - stateless: the cluster is replaced (or deleted), no state;
 * - last-state: the same job id, recovered by the new JobManager from Flink's HA metadata — when
 *   the Flink version stays, HA is on, the HA store holds the job with a checkpoint and (for a
 *   running job) that checkpoint is no older than `job.upgrade.last-state.max.allowed.checkpoint.age`;
 *   otherwise as savepoint;
 * - savepoint: a running job is stopped with a savepoint. A job that does not run:
 *   - ended (FAILED, CANCELED, FINISHED): a new job from its newest checkpoint, else the newest savepoint;
 *   - `job.upgrade.last-state-fallback.enabled` (default true) and HA holds it: as last-state;
 *   - its JobManager never started (bad image, …; not for a last-state deployment, not while HA
 *     holds a checkpoint of it): the job never ran, so a new job from what the current deployment
 *     was restored from (`deployedFrom`), else the newest savepoint;
 *   - otherwise it waits, and says what would let it go on.
 *
 * Guarantees: a job that may still hold state the operator cannot read is never replaced by one
 * without that state; every path that starts a new job names where it restores from.
 */
import type { InternalState } from '../api/internal-state.js';
import { TERMINAL_JOB_STATES } from '../flink/flink-rest-types.js';
import type { DecisionInput } from './decide.js';
import { deployedSpecOf, haOn, newestSavepointOf, restorePathFor, restorePathOfDeployment, sameFlinkVersion } from './deployment-specs.js';
import type { Observation } from './observation.js';
import type { Decision } from './reconcile-step.js';

/**
 * Whether Flink's HA store holds `jobId` (with a checkpoint, unless `requireCheckpoint` is false:
 * a new JobManager recovers the job from its graph alone, which is enough to recover a deleted
 * JobManager Deployment but not for an upgrade); undefined until the `ha` fact is gathered.
 */
export function haHoldsJob(observed: Observation, jobId: string, options: { requireCheckpoint?: boolean } = {}): boolean | undefined {
  if (observed.ha === undefined) return undefined;
  if (observed.ha === null) return false;
  return observed.ha.jobIds.includes(jobId) && (observed.ha.hasCheckpoint || options.requireCheckpoint === false);
}

/**
 * The newest point a new job of a stopped or failed job restores from: the newest completed
 * checkpoint or savepoint of that job per Flink's statistics (they hold its latest savepoint too),
 * else the newest savepoint the state knows.
 */
export function newestRestorePath(state: InternalState, observed: Observation): string | undefined {
  return observed.checkpoints?.newestRestorePoint?.path ?? newestSavepointOf(state);
}

export function decideStop(input: DecisionInput, purpose: 'upgrade' | 'suspend'): Decision {
  const { state, desired, desiredGeneration: generation, observed, settings, now } = input;
  const suspend = purpose === 'suspend';
  const mode = desired.job?.upgradeMode ?? 'stateless';
  const jobId = state.deployedJobId;
  const job = observed.job;
  const running = observed.jobManager === 'READY' && job?.state === 'RUNNING';

  const finish = (restoreFrom: string | undefined, keepJobId?: string): Decision => {
    if (suspend) return { step: { kind: 'suspend', spec: desired, generation, ...(restoreFrom ? { savepoint: restoreFrom } : {}) } };
    return {
      step: {
        kind: 'deploy',
        intent: {
          phase: 'DEPLOYING',
          spec: desired,
          generation,
          ...(restoreFrom ? { restoreFrom } : {}),
          ...(keepJobId ? { keepJobId } : {}),
          why: keepJobId ? `last-state upgrade to generation ${generation}` : `upgrade to generation ${generation}`,
        },
      },
    };
  };

  if (mode === 'stateless' || !jobId) return finish(undefined);

  const defaults = input.configurationDefaults;
  const lastStatePossible = sameFlinkVersion(state, desired) && haOn(desired, defaults) && haOn(deployedSpecOf(state) ?? desired, defaults);
  if (mode === 'last-state' && lastStatePossible) {
    const holds = haHoldsJob(observed, jobId);
    if (holds === undefined) return { step: { kind: 'gather', fact: 'ha' } };
    if (holds) {
      const maxAge = settings.lastStateMaxCheckpointAgeMs;
      if (maxAge === undefined || !running) return finish(undefined, jobId);
      if (observed.checkpoints === undefined) return { step: { kind: 'gather', fact: 'checkpoints' } };
      const ack = observed.checkpoints?.newestCompletedAckAt;
      if (ack !== undefined && now - ack <= maxAge) return finish(undefined, jobId);
      // Too old: a savepoint instead (below).
    }
  }
  if (running) return { step: { kind: 'start-savepoint', request: { triggerType: 'UPGRADE', stopJob: true, jobId, spec: desired } } };

  if (job && TERMINAL_JOB_STATES.has(job.state) && observed.jobManager === 'READY') {
    if (observed.checkpoints === undefined) return { step: { kind: 'gather', fact: 'checkpoints' } };
    return finish(newestRestorePath(state, observed));
  }

  const fallback = mode === 'savepoint' && settings.lastStateFallback && lastStatePossible;
  if (fallback) {
    const holds = haHoldsJob(observed, jobId);
    if (holds === undefined) return { step: { kind: 'gather', fact: 'ha' } };
    if (holds) {
      return {
        ...finish(undefined, jobId),
        announce: {
          type: 'Normal',
          reason: 'SpecChanged',
          key: `fallback-${generation}`,
          message: `Job ${jobId} is not running (${job?.state ?? 'not observed'}, JobManager ${observed.jobManager}); upgrading through Flink HA (kubernetes.operator.job.upgrade.last-state-fallback.enabled)`,
        },
      };
    }
  }

  const deployedMode = deployedSpecOf(state)?.job?.upgradeMode ?? 'stateless';
  if (observed.jobManagerNeverStarted && deployedMode !== 'last-state' && observed.jobManager !== 'READY') {
    if (haOn(deployedSpecOf(state) ?? desired, defaults)) {
      const holds = haHoldsJob(observed, jobId);
      if (holds === undefined) return { step: { kind: 'gather', fact: 'ha' } };
      if (holds) return waitFor(input, purpose, `Flink's HA metadata holds a checkpoint of job ${jobId}`);
    }
    const from = restorePathOfDeployment(state) ?? restorePathFor(desired, state);
    return {
      ...finish(from),
      announce: {
        type: 'Warning',
        reason: 'SpecChanged',
        key: `never-started-${jobId}`,
        message: `The JobManager of job ${jobId} never started; it is replaced` + (from ? ` and the job restores from ${from}` : ' (no state to restore)'),
      },
    };
  }
  return waitFor(input, purpose, undefined);
}

function waitFor(input: DecisionInput, purpose: 'upgrade' | 'suspend', extra: string | undefined): Decision {
  const { state, observed, settings, desired } = input;
  const mode = desired.job?.upgradeMode ?? 'stateless';
  const noHa = observed.jobManager === 'MISSING' || observed.jobManager === 'ERROR';
  const options = [
    mode === 'savepoint' && !settings.lastStateFallback
      ? 'set kubernetes.operator.job.upgrade.last-state-fallback.enabled: "true" to upgrade through Flink HA'
      : undefined,
    `set job.upgradeMode: stateless to ${purpose} without state`,
    newestSavepointOf(state) ? `or restore manually: job.initialSavepointPath: ${newestSavepointOf(state)} with a new job.savepointRedeployNonce` : undefined,
  ].filter((o): o is string => o !== undefined);
  const error =
    `Waiting for job ${state.deployedJobId} to run before taking the ${purpose} savepoint (job ${observed.job?.state ?? 'not observed'}, JobManager ${observed.jobManager}` +
    (observed.jobManagerError ? `: ${observed.jobManagerError}` : '') +
    `)${extra ? `; ${extra}` : noHa ? "; Flink's HA metadata does not hold the job, so it cannot be upgraded through HA" : ''}. To go on: ${options.join('; ')}`;
  return { step: { kind: 'wait', requeue: 'progress', error } };
}
