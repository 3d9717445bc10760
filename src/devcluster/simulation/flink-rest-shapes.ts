/**
 * Flink REST API response bodies, built from the simulated job model with the field names and
 * nesting of Flink's REST API (docs/static/generated/rest_v1_dispatcher.yml in apache/flink, and
 * the Jackson serializers of JobResult and SerializedThrowable).
 *
 * Caveats: `serialized-throwable` carries base64 of the stack-trace text, not a Java-serialized
 * object; the job graph is one simulated vertex; vertex metrics are zeros; job metrics
 * ({@link jobMetrics}) are computed at request time (Flink's metric store lags by up to
 * `metrics.fetcher.update-interval`, 10 s).
 */
import { createHash } from 'node:crypto';
import {
  ALL_JOB_STATUSES,
  type CompletedCheckpoint,
  type FailedCheckpoint,
  type JobStatus,
  type PendingCheckpoint,
  SIMULATED_VERTEX_ID,
  type SimulatedException,
  type SimulatedFlinkJob,
} from './flink-job.js';
import type { AsyncOperation } from './flink-jobmanager-context.js';

const EXECUTION_STATES = [
  'created',
  'scheduled',
  'deploying',
  'running',
  'finished',
  'canceling',
  'canceled',
  'failed',
  'reconciling',
  'initializing',
] as const;

/** The ExecutionState of the job's tasks implied by the job's JobStatus. */
function taskState(state: JobStatus): (typeof EXECUTION_STATES)[number] {
  switch (state) {
    case 'RUNNING':
      return 'running';
    case 'FINISHED':
      return 'finished';
    case 'CANCELLING':
      return 'canceling';
    case 'CANCELED':
      return 'canceled';
    case 'FAILED':
    case 'FAILING':
      return 'failed';
    default:
      return 'created';
  }
}

/**
 * Tasks per ExecutionState. `/jobs/overview` (JobDetails' own serializer) writes the state names in
 * lower case; `/jobs/:jobid` (JobDetailsInfo's `Map<ExecutionState, Integer>`, Jackson's enum keys)
 * writes them as the enum names, upper case.
 */
function taskCounts(job: SimulatedFlinkJob, keys: 'lower' | 'upper' = 'lower'): Record<string, number> {
  const counts: Record<string, number> = {};
  const key = (s: string) => (keys === 'upper' ? s.toUpperCase() : s);
  for (const s of EXECUTION_STATES) counts[key(s)] = 0;
  counts[key(taskState(job.state))] = job.parallelism;
  return counts;
}

function duration(job: SimulatedFlinkJob, now: number): number {
  return (job.endTime >= 0 ? job.endTime : now) - job.startTime;
}

/** One entry of GET /jobs/overview (JobDetails). */
export function jobOverviewEntry(job: SimulatedFlinkJob, now: number): Record<string, unknown> {
  return {
    jid: job.jobId,
    name: job.name,
    state: job.state,
    'start-time': job.startTime,
    'end-time': job.endTime,
    duration: duration(job, now),
    'last-modification': job.lastModified,
    tasks: { total: job.parallelism, ...taskCounts(job) },
    'pending-operators': 0,
  };
}

/** GET /jobs/:jobid (JobDetailsInfo). */
export function jobDetails(job: SimulatedFlinkJob, now: number): Record<string, unknown> {
  const timestamps: Record<string, number> = {};
  for (const s of ALL_JOB_STATUSES) timestamps[s] = job.timestamps.get(s) ?? 0;
  const vertexState = taskState(job.state).toUpperCase();
  const running = job.timestamps.get('RUNNING') ?? -1;
  return {
    jid: job.jobId,
    name: job.name,
    isStoppable: false,
    state: job.state,
    'job-type': 'STREAMING',
    'start-time': job.startTime,
    'end-time': job.endTime,
    duration: duration(job, now),
    maxParallelism: -1,
    now,
    timestamps,
    vertices: [
      {
        id: SIMULATED_VERTEX_ID,
        name: 'Source: Simulated Source -> Simulated Sink',
        maxParallelism: job.maxParallelism,
        parallelism: job.parallelism,
        status: vertexState,
        'start-time': running,
        'end-time': job.endTime,
        duration: running < 0 ? -1 : (job.endTime >= 0 ? job.endTime : now) - running,
        tasks: taskCounts(job, 'upper'),
        metrics: {
          'read-bytes': 0,
          'read-bytes-complete': true,
          'write-bytes': 0,
          'write-bytes-complete': true,
          'read-records': 0,
          'read-records-complete': true,
          'write-records': 0,
          'write-records-complete': true,
          'accumulated-backpressured-time': 0,
          'accumulated-idle-time': 0,
          'accumulated-busy-time': 0,
        },
      },
    ],
    'status-counts': taskCounts(job, 'upper'),
    plan: {
      jid: job.jobId,
      name: job.name,
      type: 'STREAMING',
      nodes: [
        {
          id: SIMULATED_VERTEX_ID,
          parallelism: job.parallelism,
          operator: '',
          operator_strategy: '',
          description: 'Source: Simulated Source -> Simulated Sink',
          optimizer_properties: {},
        },
      ],
    },
  };
}

/** Flink's JSON form of a SerializedThrowable. */
export function serializedThrowable(e: SimulatedException): Record<string, unknown> {
  return { class: e.className, 'stack-trace': e.stackTrace, 'serialized-throwable': Buffer.from(e.stackTrace).toString('base64') };
}

/** GET /jobs/:jobid/exceptions (JobExceptionsInfoWithHistory). Flink 2.x dropped the deprecated top-level fields. */
export function jobExceptions(job: SimulatedFlinkJob, maxExceptions: number, flinkMajor: number): Record<string, unknown> {
  // taskName, location, endpoint and taskManagerId are @JsonInclude(NON_NULL) in Flink's
  // ExceptionInfo: a global failure (no task) has none of them, so they are left out, not null.
  const entries = job.exceptions.slice(0, maxExceptions).map((e) => ({
    exceptionName: e.className,
    stacktrace: e.stackTrace,
    timestamp: e.timestamp,
    failureLabels: {},
    concurrentExceptions: [],
  }));
  const history = { entries, truncated: job.exceptions.length > maxExceptions };
  if (flinkMajor >= 2) return { exceptionHistory: history };
  const root = job.exceptions[0];
  return {
    'root-exception': root?.stackTrace ?? null,
    timestamp: root?.timestamp ?? null,
    'all-exceptions': [],
    truncated: false,
    exceptionHistory: history,
  };
}

function completedStatistics(c: CompletedCheckpoint, parallelism: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    className: 'completed',
    id: c.id,
    status: 'COMPLETED',
    is_savepoint: c.kind !== 'CHECKPOINT',
    trigger_timestamp: c.triggerTimestamp,
    latest_ack_timestamp: c.completedTimestamp,
    checkpointed_size: c.stateSize,
    state_size: c.stateSize,
    end_to_end_duration: c.completedTimestamp - c.triggerTimestamp,
    alignment_buffered: 0,
    processed_data: 0,
    persisted_data: 0,
    num_subtasks: parallelism,
    num_acknowledged_subtasks: parallelism,
    checkpoint_type: c.kind,
    tasks: {},
    external_path: c.externalPath ?? '<checkpoint-not-externally-addressable>',
    discarded: c.discarded,
  };
  if (c.savepointFormat !== null) out['savepointFormat'] = c.savepointFormat;
  return out;
}

function failedStatistics(f: FailedCheckpoint, parallelism: number): Record<string, unknown> {
  return {
    className: 'failed',
    id: f.id,
    status: 'FAILED',
    is_savepoint: f.kind !== 'CHECKPOINT',
    trigger_timestamp: f.triggerTimestamp,
    latest_ack_timestamp: -1,
    checkpointed_size: 0,
    state_size: 0,
    end_to_end_duration: f.failureTimestamp - f.triggerTimestamp,
    alignment_buffered: 0,
    processed_data: 0,
    persisted_data: 0,
    num_subtasks: parallelism,
    num_acknowledged_subtasks: 0,
    checkpoint_type: f.kind,
    tasks: {},
    failure_timestamp: f.failureTimestamp,
    failure_message: f.failureMessage,
  };
}

function summary(values: readonly number[]): Record<string, number> {
  if (values.length === 0) return { min: 0, max: 0, avg: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  const avg = Math.round(sorted.reduce((a, b) => a + b, 0) / sorted.length);
  return { min: sorted[0], max: sorted[sorted.length - 1], avg, p50: pct(0.5), p90: pct(0.9), p95: pct(0.95), p99: pct(0.99), p999: pct(0.999) };
}

/** An in-flight entry of the history (PendingCheckpointStatistics, className `in_progress`). */
function pendingStatistics(p: PendingCheckpoint, parallelism: number): Record<string, unknown> {
  return {
    className: 'in_progress',
    id: p.id,
    status: 'IN_PROGRESS',
    is_savepoint: p.kind !== 'CHECKPOINT',
    trigger_timestamp: p.triggerTimestamp,
    latest_ack_timestamp: -1,
    checkpointed_size: 0,
    state_size: 0,
    end_to_end_duration: 0,
    alignment_buffered: 0,
    processed_data: 0,
    persisted_data: 0,
    num_subtasks: parallelism,
    num_acknowledged_subtasks: 0,
    checkpoint_type: p.kind,
    tasks: {},
  };
}

/**
 * GET /jobs/:jobid/checkpoints (CheckpointingStatistics). Snapshots still in flight lead the
 * history with status IN_PROGRESS (Flink's CheckpointStatsHistory lists pending checkpoints first);
 * a job that ended has none (Flink aborts them).
 */
export function checkpointingStatistics(job: SimulatedFlinkJob): Record<string, unknown> {
  const zero = summary([]);
  const pending = job.isTerminal ? [] : [...job.pending.values()].sort((a, b) => b.id - a.id);
  return {
    counts: {
      restored: job.restored ? 1 : 0,
      total: job.completedCount + job.failedCount + pending.length,
      in_progress: pending.length,
      completed: job.completedCount,
      failed: job.failedCount,
    },
    summary: {
      checkpointed_size: summary(job.stateSizes),
      state_size: summary(job.stateSizes),
      end_to_end_duration: zero,
      alignment_buffered: zero,
      processed_data: zero,
      persisted_data: zero,
    },
    latest: {
      completed: job.latestCompleted ? completedStatistics(job.latestCompleted, job.parallelism) : null,
      savepoint: job.latestSavepoint ? completedStatistics(job.latestSavepoint, job.parallelism) : null,
      failed: job.latestFailed ? failedStatistics(job.latestFailed, job.parallelism) : null,
      restored: job.restored
        ? {
            id: job.restored.id,
            restore_timestamp: job.restored.restoreTimestamp,
            is_savepoint: job.restored.isSavepoint,
            external_path: job.restored.externalPath,
          }
        : null,
    },
    history: [
      ...pending.map((p) => pendingStatistics(p, job.parallelism)),
      ...job.history.map((h) => ('failureMessage' in h ? failedStatistics(h, job.parallelism) : completedStatistics(h, job.parallelism))),
    ],
  };
}

/** GET /jobs/:jobid/checkpoints/details/:checkpointid, or null when the id is not in the history. */
export function checkpointDetails(job: SimulatedFlinkJob, checkpointId: number): Record<string, unknown> | null {
  const entry = job.history.find((h) => h.id === checkpointId);
  if (!entry) return null;
  return 'failureMessage' in entry ? failedStatistics(entry, job.parallelism) : completedStatistics(entry, job.parallelism);
}

/** GET /jobs/:jobid/execution-result (JobExecutionResultResponseBody). */
export function executionResult(job: SimulatedFlinkJob): Record<string, unknown> {
  if (!job.isTerminal) return { status: { id: 'IN_PROGRESS' } };
  const applicationStatus = job.state === 'FINISHED' ? 'SUCCEEDED' : job.state === 'CANCELED' ? 'CANCELED' : 'FAILED';
  const result: Record<string, unknown> = {
    id: job.jobId,
    'application-status': applicationStatus,
    'accumulator-results': {},
    'net-runtime': job.endTime - job.startTime,
  };
  if (job.failureCause) result['failure-cause'] = serializedThrowable(job.failureCause);
  else if (job.state === 'CANCELED') {
    result['failure-cause'] = serializedThrowable({
      className: 'org.apache.flink.runtime.client.JobCancellationException',
      message: `Job ${job.jobId} was cancelled.`,
      stackTrace: `org.apache.flink.runtime.client.JobCancellationException: Job ${job.jobId} was cancelled.`,
      timestamp: job.endTime,
    });
  }
  return { status: { id: 'COMPLETED' }, 'job-execution-result': result };
}

/**
 * GET of an asynchronous operation (savepoint, stop, checkpoint, disposal) by trigger id.
 * `operation` is null while IN_PROGRESS (AsynchronousOperationResult includes nulls); the operation
 * objects omit null fields (SavepointInfo, CheckpointInfo, AsynchronousOperationInfo are NON_NULL).
 * Checkpoint failures are `failureCause` (camelCase, CheckpointInfo), the others `failure-cause`.
 */
export function asyncOperationResult(op: AsyncOperation): Record<string, unknown> {
  if (op.status === 'IN_PROGRESS') return { status: { id: 'IN_PROGRESS' }, operation: null };
  let operation: Record<string, unknown>;
  if (op.kind === 'checkpoint') {
    operation = op.failure ? { failureCause: serializedThrowable(op.failure) } : { checkpointId: op.checkpointId };
  } else if (op.kind === 'savepoint-disposal') {
    operation = op.failure ? { 'failure-cause': serializedThrowable(op.failure) } : {}; // AsynchronousOperationInfo is NON_NULL
  } else {
    operation = op.failure ? { 'failure-cause': serializedThrowable(op.failure) } : { location: op.location };
  }
  return { status: { id: 'COMPLETED' }, operation };
}

/**
 * The `flink-revision` a simulated JobManager of `flinkVersion` reports: Flink's format, the
 * abbreviated commit id and the commit date (`b2ca390 @ 2022-02-03T14:54:22+01:00`, Flink's
 * EnvironmentInformation.RevisionInformation as DashboardConfiguration joins it); the commit id is
 * derived from the version, so each simulated version has its own, the same on every run.
 */
export function simulatedFlinkRevision(flinkVersion: string): string {
  return `${createHash('sha1').update(`flink-${flinkVersion}`).digest('hex').slice(0, 7)} @ 1970-01-01T00:00:00+00:00`;
}

/**
 * GET /config (DashboardConfiguration); `webSubmit`: jars can be uploaded and run (a session
 * cluster, `web.submit.enable` true). `features.web-rescale` exists from Flink 1.19 (before, the
 * features are submit, cancel and history; the Apache operator's RestResponseTest shows a 1.14
 * JobManager's `{"web-submit":false,"web-cancel":false}`).
 */
export function dashboardConfiguration(flinkVersion: string, webSubmit = false): Record<string, unknown> {
  const [major = 1, minor = 0] = flinkVersion.split('.').map(Number);
  const rescale = major > 1 || minor >= 19;
  return {
    'refresh-interval': 3000,
    'timezone-name': 'Coordinated Universal Time',
    'timezone-offset': 0,
    'flink-version': flinkVersion,
    'flink-revision': simulatedFlinkRevision(flinkVersion),
    features: { 'web-submit': webSubmit, 'web-cancel': false, ...(rescale ? { 'web-rescale': false } : {}), 'web-history': false },
  };
}

/**
 * The job-scope metrics of `job` at `now` (Flink's availability and checkpointing metrics, values
 * as strings, as the metric store keeps them):
 * `numRestarts`; `uptime` (ms in RUNNING since the last (re)start, 0 when not running, -1 when
 * terminal); `downtime` (ms since a fail-over began while RESTARTING/FAILING, else 0, -1 when
 * terminal); `restartingTime` (the current restart so far, else the last restart's duration, else
 * 0); `numberOfCompletedCheckpoints`, `numberOfFailedCheckpoints`, `numberOfInProgressCheckpoints`,
 * `totalNumberOfCheckpoints` (savepoints included, as Flink counts them); `lastCheckpointDuration`,
 * `lastCheckpointSize` (the newest completed checkpoint or savepoint, -1 before one);
 * `lastCheckpointRestoreTimestamp` (-1 when not restored).
 */
export function jobMetrics(job: SimulatedFlinkJob, now: number): Map<string, string> {
  const since = (state: JobStatus) => job.timestamps.get(state) ?? now;
  const terminal = job.isTerminal;
  const restartedAt = job.timestamps.get('RESTARTING');
  const runningAt = job.timestamps.get('RUNNING');
  const restarting =
    job.state === 'RESTARTING'
      ? now - since('RESTARTING')
      : restartedAt !== undefined && runningAt !== undefined && runningAt >= restartedAt
        ? runningAt - restartedAt
        : 0;
  const failingSince = job.state === 'RESTARTING' || job.state === 'FAILING' ? since(job.state) : undefined;
  const newest = [job.latestCompleted, job.latestSavepoint].filter((c): c is CompletedCheckpoint => c !== null).sort((a, b) => b.id - a.id)[0];
  const inProgress = terminal ? 0 : job.pending.size;
  const values: Array<[string, number]> = [
    ['numRestarts', job.restarts],
    ['uptime', terminal ? -1 : job.state === 'RUNNING' ? now - since('RUNNING') : 0],
    ['downtime', terminal ? -1 : failingSince !== undefined ? now - failingSince : 0],
    ['restartingTime', restarting],
    ['numberOfCompletedCheckpoints', job.completedCount],
    ['numberOfFailedCheckpoints', job.failedCount],
    ['numberOfInProgressCheckpoints', inProgress],
    ['totalNumberOfCheckpoints', job.completedCount + job.failedCount + inProgress],
    ['lastCheckpointDuration', newest ? newest.completedTimestamp - newest.triggerTimestamp : -1],
    ['lastCheckpointSize', newest ? newest.stateSize : -1],
    ['lastCheckpointRestoreTimestamp', job.restored ? job.restored.restoreTimestamp : -1],
  ];
  return new Map(values.map(([id, value]) => [id, String(value)]));
}

/**
 * GET /jobs/:jobid/metrics (Flink's JobMetricsHandler / AbstractMetricsHandler): a bare JSON array
 * (MetricCollectionResponseBody is serialized as a list, not as the `{"metrics": [...]}` of the
 * generated OpenAPI spec). Without `get`: the available metric ids `[{"id": "numRestarts"}, ...]`;
 * with `get=a,b`: `[{"id": "a", "value": "3"}, ...]` for the requested ids the job has (unknown ids
 * are left out); an unknown job: `[]`.
 */
export function jobMetricsResponse(job: SimulatedFlinkJob | undefined, requested: readonly string[], now: number): Array<{ id: string; value?: string }> {
  if (!job) return [];
  const metrics = jobMetrics(job, now);
  if (requested.length === 0) return [...metrics.keys()].map((id) => ({ id }));
  return [...new Set(requested)].filter((id) => metrics.has(id)).map((id) => ({ id, value: metrics.get(id)! }));
}
