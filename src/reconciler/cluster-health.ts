/**
 * The cluster health check (Apache `kubernetes.operator.cluster.health-check.*`, its
 * ClusterHealthEvaluator): a job is unhealthy when it restarted more than `restarts.threshold`
 * times within `restarts.window`, or completed no checkpoint within the checkpoint-progress window.
 *
 * The evaluator keeps, per deployment, the last valid sample (restart count and when it was
 * taken; completed-checkpoint count and when it last grew) and compares each new observation with
 * it, as Apache's does (a restart count scaled to the window when the samples are further apart).
 *
 * Guarantees: pure over its inputs and the injected clock; a count that went down (a new job, a
 * new JobManager) starts a new window instead of reading as healthy or unhealthy forever.
 * Assumptions: samples come from one job (the tracker is reset with `forget` when the job changes:
 * a new job id starts over).
 * Caveats: the samples live in memory: an operator restart starts every window anew, so an
 * unhealthy job is noticed one window later (the Apache operator keeps them in status.clusterInfo).
 */
import type { ClusterHealthSettings } from './deployment-operator-settings.js';
import type { ClusterHealthVerdict } from './observation.js';

export interface HealthSample {
  jobId: string;
  /** Flink's `numRestarts` job metric. */
  restarts: number;
  /** Completed checkpoints so far (GET /jobs/:id/checkpoints counts.completed); undefined when unknown. */
  completedCheckpoints?: number;
  /** When the job started (its checkpoint window cannot start before). */
  jobStartTime?: number;
}

interface LastValid {
  jobId: string;
  restarts: number;
  restartsAt: number;
  completedCheckpoints: number;
  checkpointsGrewAt: number;
}

export class ClusterHealthEvaluator {
  private readonly lastValid = new Map<string, LastValid>();

  constructor(private readonly now: () => number) {}

  /** Compares `sample` with the last valid one of `key` (a deployment uid) and records what Apache would. */
  evaluate(key: string, sample: HealthSample, settings: ClusterHealthSettings): ClusterHealthVerdict {
    const now = this.now();
    let last = this.lastValid.get(key);
    if (!last || last.jobId !== sample.jobId) {
      last = {
        jobId: sample.jobId,
        restarts: sample.restarts,
        restartsAt: now,
        completedCheckpoints: sample.completedCheckpoints ?? 0,
        checkpointsGrewAt: Math.max(sample.jobStartTime ?? now, now - 1),
      };
      this.lastValid.set(key, last);
      return { healthy: true };
    }
    const restarts = this.evaluateRestarts(last, sample, settings, now);
    if (!restarts.healthy) return restarts;
    return this.evaluateCheckpoints(last, sample, settings, now);
  }

  /** Drops the samples of a deployment (deleted, or its job replaced). */
  forget(key: string): void {
    this.lastValid.delete(key);
  }

  private evaluateRestarts(last: LastValid, sample: HealthSample, settings: ClusterHealthSettings, now: number): ClusterHealthVerdict {
    if (sample.restarts < last.restarts) {
      last.restarts = sample.restarts;
      last.restartsAt = now;
      return { healthy: true };
    }
    const elapsed = Math.max(1, now - last.restartsAt);
    const multiplier = Math.min(1, settings.restartsWindowMs / elapsed);
    const inWindow = Math.floor((sample.restarts - last.restarts) * multiplier);
    const verdict: ClusterHealthVerdict =
      inWindow > settings.restartsThreshold
        ? { healthy: false, reason: `Restart count hit threshold: ${settings.restartsThreshold} restarts within ${settings.restartsWindowMs / 1000} s` }
        : { healthy: true };
    if (last.restartsAt < now - settings.restartsWindowMs) {
      last.restarts = sample.restarts;
      last.restartsAt = now;
    }
    return verdict;
  }

  private evaluateCheckpoints(last: LastValid, sample: HealthSample, settings: ClusterHealthSettings, now: number): ClusterHealthVerdict {
    const window = settings.checkpointProgressWindowMs;
    if (window === undefined || sample.completedCheckpoints === undefined) return { healthy: true };
    if (sample.completedCheckpoints !== last.completedCheckpoints) {
      // Grew (progress), or went down (a restored job counts anew): either way the window starts now.
      last.completedCheckpoints = sample.completedCheckpoints;
      last.checkpointsGrewAt = now;
      return { healthy: true };
    }
    if (last.checkpointsGrewAt + window < now)
      return {
        healthy: false,
        reason: `No checkpoint completed within ${window / 1000} s (kubernetes.operator.cluster.health-check.checkpoint-progress.window)`,
      };
    return { healthy: true };
  }
}
