/**
 * The per-deployment operator settings (`kubernetes.operator.*` keys of spec.flinkConfiguration),
 * with the Apache operator's names and defaults, and the pure decisions made from them: is a
 * savepoint or checkpoint due (a new trigger nonce, or the periodic schedule: a duration or a
 * Quartz cron, periodic-snapshot-schedule.ts), which savepoints leave the history.
 */
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { DELETION_PROPAGATIONS, type DeletionPropagation, flattenFlinkConfiguration, parseFlinkDuration } from '../api/flink-configuration.js';
import type { AnyInternalState, SavepointRecord } from '../api/internal-state.js';
import { nextDueAt, type PeriodicSchedule, readPeriodicSchedule } from '../api/periodic-snapshot-schedule.js';

export interface DeploymentOperatorSettings {
  /** `periodic.savepoint.interval` (a duration or a Quartz cron); undefined = off (unset, blank, 0). */
  periodicSavepoint: PeriodicSchedule | undefined;
  /** `periodic.checkpoint.interval` (a duration or a Quartz cron); undefined = off. */
  periodicCheckpoint: PeriodicSchedule | undefined;
  /** `checkpoint.type` (FULL): the type of the checkpoints the operator triggers. */
  checkpointType: 'FULL' | 'INCREMENTAL';
  /** `savepoint.history.max.count` (10). */
  historyMaxCount: number;
  /** `savepoint.history.max.age` (24 h). */
  historyMaxAgeMs: number;
  /** `savepoint.cleanup.enabled` (true): dispose savepoints that leave the history. */
  savepointCleanup: boolean;
  /** `snapshot.resource.enabled` (true): record the operator's savepoints and checkpoints as FlinkStateSnapshot resources (where the operator can). */
  snapshotResources: boolean;
  /** `savepoint.dispose-on-delete` (false): spec.savepoint.disposeOnDelete of the savepoint resources the operator creates. */
  savepointDisposeOnDelete: boolean;
  /** `state.checkpoints.num-retained` (1, a Flink key): how many of the operator's periodic checkpoint resources are kept. */
  retainedCheckpointResources: number;
  /** `savepoint.trigger.grace-period` (1 min): how long failed manual/periodic savepoints are retried. */
  triggerGracePeriodMs: number;
  /** `checkpoint.trigger.grace-period` (1 min): how long failed manual/periodic checkpoints are retried. */
  checkpointTriggerGracePeriodMs: number;
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
  /** `job.upgrade.last-state-fallback.enabled` (true): a savepoint upgrade of a job that does not run goes through HA metadata. */
  lastStateFallback: boolean;
  /** `job.upgrade.inplace-scaling.enabled` (true): a parallelism-overrides change goes through Flink's resource-requirements API (1.18+, adaptive scheduler), else a full upgrade. */
  inPlaceScaling: boolean;
  /** `jm-deployment-recovery.enabled` (true; older key `reconciler.jm-deployment-recovery.enabled`): recreate a deleted JobManager Deployment. */
  jobManagerRecovery: boolean;
  /** `jm-deployment.shutdown-ttl` (1 d): how long the JobManager of a finished job is kept. */
  jobManagerShutdownTtlMs: number;
  /** `cluster.health-check.*`: restart a job that restarts too often or stops checkpointing. */
  healthCheck: ClusterHealthSettings;
  /**
   * `session.deletion.block-on-session-jobs` (true; the issue's `session.block-on-session-jobs` is
   * read too): a session cluster is not deleted while FlinkSessionJobs name it (SessionReconciler).
   */
  blockOnSessionJobs: boolean;
  /** `session.deletion.block-on-unmanaged-jobs` (true; older key `session.block-on-unmanaged-jobs`): nor while jobs no FlinkSessionJob manages still run. */
  blockOnUnmanagedJobs: boolean;
  /**
   * `resource.deletion.propagation` (Foreground; Flink reads enum values case-insensitively): how
   * the JobManager and TaskManager Deployments are deleted (the cluster's deletion, suspend, a
   * finished job's shutdown, a JobManager restart). Foreground: a Deployment stays, marked
   * deleting, until its ReplicaSets and pods are gone, so the operator goes on only once the old
   * cluster has stopped.
   */
  deletionPropagation: DeletionPropagation;
  /**
   * `observer.rest-ready.delay` (this operator: 0; Apache: 10 s): how long after the JobManager
   * Deployment became available (its Available condition) it is still DEPLOYED_NOT_READY, on top
   * of Flink's REST API having to answer (observation.ts).
   */
  restReadyDelayMs: number;
  /** `ingress.manage` (true): render spec.ingress as an Ingress; false: the operator neither creates nor touches Ingresses (Apache OPERATOR_MANAGE_INGRESS). */
  manageIngress: boolean;
}

export interface ClusterHealthSettings {
  /** `cluster.health-check.enabled` (false). */
  enabled: boolean;
  /** `cluster.health-check.restarts.window` (2 min). */
  restartsWindowMs: number;
  /** `cluster.health-check.restarts.threshold` (64): more restarts than this within the window is unhealthy. */
  restartsThreshold: number;
  /**
   * `cluster.health-check.checkpoint-progress.enabled` (true) and `.window`: no checkpoint completed
   * within the window is unhealthy. The window is at least max(interval, timeout) × (tolerable
   * failures + 2), which is also its default; undefined when checkpointing is off and no window is set.
   */
  checkpointProgressWindowMs: number | undefined;
}

const PREFIX = 'kubernetes.operator.';

/**
 * The settings read from each configuration object: a resource without operator-wide defaults
 * passes the informer's own (unchanged until the resource is) every pass, so they are read once per
 * version of the resource, not once per pass. Weakly held: nothing outlives the object.
 */
const settingsOfConfiguration = new WeakMap<object, Readonly<DeploymentOperatorSettings>>();

/**
 * The settings of a resource's (effective) Flink configuration: a FlinkDeployment's, or a session
 * job's over its cluster's. Callers must not change what they get (it may be shared, see above).
 */
export function deploymentOperatorSettings(spec: Pick<FlinkDeploymentSpec, 'flinkConfiguration'>): Readonly<DeploymentOperatorSettings> {
  const configuration = spec.flinkConfiguration;
  if (configuration === undefined || configuration === null || typeof configuration !== 'object') return readSettings(spec);
  const known = settingsOfConfiguration.get(configuration);
  if (known) return known;
  const settings = readSettings(spec);
  settingsOfConfiguration.set(configuration, settings);
  return settings;
}

function readSettings(spec: Pick<FlinkDeploymentSpec, 'flinkConfiguration'>): DeploymentOperatorSettings {
  const flat = flattenFlinkConfiguration(spec.flinkConfiguration);
  const get = (key: string) => flat[PREFIX + key]?.trim() || undefined;
  // Never throws: an unparsable value is reported by validation (src/api/spec-validation.ts), and
  // a pass on an invalid spec runs with lastReconciledSpec's settings; here it falls back to the default.
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
  const schedule = (key: string) => {
    try {
      return readPeriodicSchedule(get(key));
    } catch {
      return undefined;
    }
  };
  return {
    periodicSavepoint: schedule('periodic.savepoint.interval'),
    periodicCheckpoint: schedule('periodic.checkpoint.interval'),
    checkpointType: get('checkpoint.type')?.toUpperCase() === 'INCREMENTAL' ? 'INCREMENTAL' : 'FULL',
    historyMaxCount: Number(get('savepoint.history.max.count') ?? 10),
    historyMaxAgeMs: duration('savepoint.history.max.age', 24 * 3600_000)!,
    savepointCleanup: bool('savepoint.cleanup.enabled', true),
    snapshotResources: bool('snapshot.resource.enabled', true),
    savepointDisposeOnDelete: bool('savepoint.dispose-on-delete', false),
    retainedCheckpointResources: Math.max(1, Number(flat['state.checkpoints.num-retained']?.trim() || 1) || 1),
    triggerGracePeriodMs: duration('savepoint.trigger.grace-period', 60_000)!,
    checkpointTriggerGracePeriodMs: duration('checkpoint.trigger.grace-period', 60_000)!,
    savepointOnDeletion: bool('job.savepoint-on-deletion', false),
    rollbackEnabled: bool('deployment.rollback.enabled', false),
    readinessTimeoutMs: duration('deployment.readiness.timeout', 5 * 60_000)!,
    restartFailedJobs: bool('job.restart.failed', false),
    lastStateMaxCheckpointAgeMs: duration('job.upgrade.last-state.max.allowed.checkpoint.age', undefined),
    lastStateFallback: bool('job.upgrade.last-state-fallback.enabled', true),
    inPlaceScaling: bool('job.upgrade.inplace-scaling.enabled', true),
    jobManagerRecovery: bool('jm-deployment-recovery.enabled', bool('reconciler.jm-deployment-recovery.enabled', true)),
    jobManagerShutdownTtlMs: duration('jm-deployment.shutdown-ttl', 24 * 3600_000)!,
    healthCheck: {
      enabled: bool('cluster.health-check.enabled', false),
      restartsWindowMs: duration('cluster.health-check.restarts.window', 2 * 60_000)!,
      restartsThreshold: Number(get('cluster.health-check.restarts.threshold') ?? 64),
      checkpointProgressWindowMs: bool('cluster.health-check.checkpoint-progress.enabled', true)
        ? checkpointProgressWindow(flat, duration('cluster.health-check.checkpoint-progress.window', undefined))
        : undefined,
    },
    blockOnSessionJobs: bool('session.deletion.block-on-session-jobs', bool('session.block-on-session-jobs', true)),
    blockOnUnmanagedJobs: bool('session.deletion.block-on-unmanaged-jobs', bool('session.block-on-unmanaged-jobs', true)),
    manageIngress: bool('ingress.manage', true),
    deletionPropagation: DELETION_PROPAGATIONS.find((p) => p.toLowerCase() === get('resource.deletion.propagation')?.toLowerCase()) ?? 'Foreground',
    restReadyDelayMs: duration('observer.rest-ready.delay', 0)!,
  };
}

/** Apache's ClusterHealthEvaluator: max(interval, timeout) × (tolerable failures + 2) is the least (and default) window. */
function checkpointProgressWindow(flat: Readonly<Record<string, string>>, configured: number | undefined): number | undefined {
  const parse = (key: string, fallback: number | undefined) => {
    const value = flat[key]?.trim();
    if (!value) return fallback;
    try {
      return parseFlinkDuration(value);
    } catch {
      return fallback;
    }
  };
  const interval = parse('execution.checkpointing.interval', undefined);
  const checkpointing = interval !== undefined && interval > 0;
  if (!checkpointing && configured === undefined) return undefined;
  const timeout = parse('execution.checkpointing.timeout', 10 * 60_000)!;
  const tolerable = Number(flat['execution.checkpointing.tolerable-failed-checkpoints'] ?? 0) || 0;
  const least = checkpointing ? Math.max(interval, timeout) * (tolerable + 2) : 0;
  return configured !== undefined && configured >= least ? configured : least || configured;
}

export type DueSnapshot = { triggerType: 'MANUAL'; nonce: number } | { triggerType: 'PERIODIC' };
/** A savepoint the spec asks for now. */
export type DueSavepoint = DueSnapshot;

/** Where the two snapshot kinds keep their nonce, schedule and last periodic trigger. */
const SNAPSHOT_FIELDS = {
  savepoint: { nonce: 'savepointTriggerNonce', schedule: 'periodicSavepoint', lastPeriodic: 'lastPeriodicSavepointTimestamp' },
  checkpoint: { nonce: 'checkpointTriggerNonce', schedule: 'periodicCheckpoint', lastPeriodic: 'lastPeriodicCheckpointTimestamp' },
} as const;
export type SnapshotKind = keyof typeof SNAPSHOT_FIELDS;

/**
 * A snapshot of `kind` the spec asks for now: a new trigger nonce (compared with the last
 * acknowledged one in lastReconciledSpec), else a periodic one whose schedule came due (counted from
 * the last periodic snapshot, or from the last deployment when there was none; Apache's
 * SnapshotUtils.shouldTriggerSnapshot).
 */
export function dueSnapshot(
  kind: SnapshotKind,
  state: AnyInternalState,
  desired: Pick<FlinkDeploymentSpec, 'job'>,
  settings: DeploymentOperatorSettings,
  now: number,
): DueSnapshot | undefined {
  const fields = SNAPSHOT_FIELDS[kind];
  const nonce = desired.job?.[fields.nonce];
  if (nonce !== undefined && nonce !== null && nonce !== state.lastReconciledSpec?.job?.[fields.nonce]) return { triggerType: 'MANUAL', nonce };
  const next = nextPeriodicAt(kind, state, settings, now);
  return next !== undefined && now >= next ? { triggerType: 'PERIODIC' } : undefined;
}

/** Milliseconds until the next periodic snapshot of `kind` is due; undefined when none is scheduled. */
export function untilNextPeriodicSnapshot(kind: SnapshotKind, state: AnyInternalState, settings: DeploymentOperatorSettings, now: number): number | undefined {
  const next = nextPeriodicAt(kind, state, settings, now);
  return next === undefined ? undefined : Math.max(0, next - now);
}

function nextPeriodicAt(kind: SnapshotKind, state: AnyInternalState, settings: DeploymentOperatorSettings, now: number): number | undefined {
  const fields = SNAPSHOT_FIELDS[kind];
  const schedule = settings[fields.schedule];
  if (schedule === undefined) return undefined;
  const since = state[fields.lastPeriodic] ?? (state.reconciliationTimestamp ? Date.parse(state.reconciliationTimestamp) : now);
  return nextDueAt(schedule, since);
}

/** A savepoint the spec asks for now (dueSnapshot of savepoints). */
export function dueSavepoint(
  state: AnyInternalState,
  desired: Pick<FlinkDeploymentSpec, 'job'>,
  settings: DeploymentOperatorSettings,
  now: number,
): DueSavepoint | undefined {
  return dueSnapshot('savepoint', state, desired, settings, now);
}

/** Milliseconds until the next periodic savepoint is due, if periodic savepoints are on. */
export function untilNextPeriodicSavepoint(state: AnyInternalState, settings: DeploymentOperatorSettings, now: number): number | undefined {
  return untilNextPeriodicSnapshot('savepoint', state, settings, now);
}

/**
 * Savepoints that leave the history: beyond the newest `historyMaxCount`, or older than
 * `historyMaxAgeMs`. The newest savepoint always stays (it is what the next restore uses).
 */
export function expiredSavepoints(history: readonly SavepointRecord[], settings: DeploymentOperatorSettings, now: number): SavepointRecord[] {
  const keepFrom = Math.max(0, history.length - Math.max(1, settings.historyMaxCount));
  return history.filter((record, index) => index < history.length - 1 && (index < keepFrom || now - record.timeStamp > settings.historyMaxAgeMs));
}
