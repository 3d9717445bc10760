/**
 * The per-deployment operator settings (`kubernetes.operator.*` keys of spec.flinkConfiguration),
 * with the Apache operator's names and defaults, and the pure decisions made from them: is a
 * savepoint due, which savepoints leave the history.
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { flattenFlinkConfiguration, parseFlinkDuration } from '../api/flink-configuration.js';
import type { InternalState, SavepointRecord } from '../api/internal-state.js';

export interface DeploymentOperatorSettings {
  /** `periodic.savepoint.interval`; undefined or 0 = off. */
  periodicSavepointIntervalMs: number | undefined;
  /** `savepoint.history.max.count` (10). */
  historyMaxCount: number;
  /** `savepoint.history.max.age` (24 h). */
  historyMaxAgeMs: number;
  /** `savepoint.cleanup.enabled` (true): dispose savepoints that leave the history. */
  savepointCleanup: boolean;
  /** `savepoint.trigger.grace-period` (1 min): how long failed manual/periodic savepoints are retried. */
  triggerGracePeriodMs: number;
  /** `job.savepoint-on-deletion` (false). */
  savepointOnDeletion: boolean;
  /** `deployment.rollback.enabled` (false). */
  rollbackEnabled: boolean;
  /** `deployment.readiness.timeout` (5 min). */
  readinessTimeoutMs: number;
  /** `job.restart.failed` (false). */
  restartFailedJobs: boolean;
  /** `job.upgrade.last-state.max.allowed.checkpoint.age`; undefined = any age. */
  lastStateMaxCheckpointAgeMs: number | undefined;
}

const PREFIX = 'kubernetes.operator.';

export function deploymentOperatorSettings(spec: FlinkDeploymentSpec): DeploymentOperatorSettings {
  const flat = flattenFlinkConfiguration(spec.flinkConfiguration);
  const get = (key: string) => flat[PREFIX + key]?.trim() || undefined;
  // Never throws: an unparsable value is reported by validation (src/api/spec-validation.ts), and
  // a pass on an invalid spec runs with lastReconciledSpec's settings; here it falls back to the default.
  // A Quartz cron periodic interval (valid in the Apache operator) is not scheduled: periodic stays off.
  const duration = (key: string, fallback: number | undefined) => {
    const value = get(key);
    if (value === undefined) return fallback;
    try {
      return parseFlinkDuration(value);
    } catch {
      return fallback;
    }
  };
  const bool = (key: string, fallback: boolean) => {
    const value = get(key)?.toLowerCase();
    return value === undefined ? fallback : value === 'true';
  };
  const periodic = duration('periodic.savepoint.interval', undefined);
  return {
    periodicSavepointIntervalMs: periodic && periodic > 0 ? periodic : undefined,
    historyMaxCount: Number(get('savepoint.history.max.count') ?? 10),
    historyMaxAgeMs: duration('savepoint.history.max.age', 24 * 3600_000)!,
    savepointCleanup: bool('savepoint.cleanup.enabled', true),
    triggerGracePeriodMs: duration('savepoint.trigger.grace-period', 60_000)!,
    savepointOnDeletion: bool('job.savepoint-on-deletion', false),
    rollbackEnabled: bool('deployment.rollback.enabled', false),
    readinessTimeoutMs: duration('deployment.readiness.timeout', 5 * 60_000)!,
    restartFailedJobs: bool('job.restart.failed', false),
    lastStateMaxCheckpointAgeMs: duration('job.upgrade.last-state.max.allowed.checkpoint.age', undefined),
  };
}

export type DueSavepoint = { triggerType: 'MANUAL'; nonce: number } | { triggerType: 'PERIODIC' };

/**
 * A savepoint the spec asks for now: a new `savepointTriggerNonce` (compared with the last
 * acknowledged one in lastReconciledSpec), else an elapsed periodic interval (counted from the
 * last periodic savepoint, or from the last deployment when there was none).
 */
export function dueSavepoint(state: InternalState, desired: FlinkDeploymentSpec, settings: DeploymentOperatorSettings, now: number): DueSavepoint | undefined {
  const nonce = desired.job?.savepointTriggerNonce;
  if (nonce !== undefined && nonce !== null && nonce !== state.lastReconciledSpec?.job?.savepointTriggerNonce) return { triggerType: 'MANUAL', nonce };
  if (settings.periodicSavepointIntervalMs === undefined) return undefined;
  const since = state.lastPeriodicSavepointTimestamp ?? (state.reconciliationTimestamp ? Date.parse(state.reconciliationTimestamp) : now);
  return now - since >= settings.periodicSavepointIntervalMs ? { triggerType: 'PERIODIC' } : undefined;
}

/** Milliseconds until the next periodic savepoint is due, if periodic savepoints are on. */
export function untilNextPeriodicSavepoint(state: InternalState, settings: DeploymentOperatorSettings, now: number): number | undefined {
  if (settings.periodicSavepointIntervalMs === undefined) return undefined;
  const since = state.lastPeriodicSavepointTimestamp ?? (state.reconciliationTimestamp ? Date.parse(state.reconciliationTimestamp) : now);
  return Math.max(0, since + settings.periodicSavepointIntervalMs - now);
}

/**
 * Savepoints that leave the history: beyond the newest `historyMaxCount`, or older than
 * `historyMaxAgeMs`. The newest savepoint always stays (it is what the next restore uses).
 */
export function expiredSavepoints(history: readonly SavepointRecord[], settings: DeploymentOperatorSettings, now: number): SavepointRecord[] {
  const keepFrom = Math.max(0, history.length - Math.max(1, settings.historyMaxCount));
  return history.filter((record, index) => index < history.length - 1 && (index < keepFrom || now - record.timeStamp > settings.historyMaxAgeMs));
}
