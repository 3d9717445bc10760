/**
 * Response and request shapes of the Flink REST API (Flink 1.20 / 2.x, `flink-runtime`
 * `org.apache.flink.runtime.rest.messages.*`), only the parts the operator reads.
 * Field names are Flink's exactly (kebab-case where Flink uses it).
 */

/** Job states of `JobStatus` (plus the REST-only INITIALIZING). */
export type FlinkJobState =
  'INITIALIZING' | 'CREATED' | 'RUNNING' | 'FAILING' | 'FAILED' | 'CANCELLING' | 'CANCELED' | 'FINISHED' | 'RESTARTING' | 'SUSPENDED' | 'RECONCILING';

export const TERMINAL_JOB_STATES: ReadonlySet<string> = new Set(['FAILED', 'CANCELED', 'FINISHED', 'SUSPENDED']);

/** GET /config (`DashboardConfiguration`). */
export interface FlinkDashboardConfig {
  'refresh-interval': number;
  'timezone-name'?: string;
  'timezone-offset'?: number;
  'flink-version': string;
  'flink-revision'?: string;
  features?: Record<string, boolean>;
}

/** One entry of GET /jobs/overview (`JobDetails`). */
export interface FlinkJobOverview {
  jid: string;
  name: string;
  /** A FlinkJobState, or a state a newer Flink added (decoded as text, not trusted to be one of ours). */
  state: string;
  'start-time': number;
  /** When the job reached a globally terminal state (FINISHED, CANCELED, FAILED), epoch ms; -1 before. */
  'end-time': number;
  duration: number;
  'last-modification': number;
  tasks?: Record<string, number>;
}

/** GET /jobs/overview (`MultipleJobsDetails`). */
export interface FlinkJobsOverview {
  jobs: FlinkJobOverview[];
}

/** GET /jobs/:id (`JobDetailsInfo`), the fields the operator reads. */
export interface FlinkJobDetails {
  jid: string;
  name: string;
  /** A FlinkJobState, or a state a newer Flink added (decoded as text, not trusted to be one of ours). */
  state: string;
  'start-time': number;
  'end-time': number;
  duration: number;
  now?: number;
  timestamps?: Record<string, number>;
  vertices?: unknown[];
  'status-counts'?: Record<string, number>;
  [key: string]: unknown;
}

/** `{"request-id": "<hex>"}` answered by asynchronous operations (savepoints, checkpoints, disposal). */
/** GET/PUT /jobs/:id/resource-requirements (JobResourceRequirementsBody, Flink 1.18+): job vertex id → its parallelism bounds. */
export type FlinkJobResourceRequirements = Record<string, { parallelism: { lowerBound: number; upperBound: number } }>;

export interface FlinkTriggerResponse {
  'request-id': string;
}

/** `SerializedThrowable` as Flink renders it in an asynchronous operation's failure. */
export interface FlinkFailureCause {
  class?: string;
  'stack-trace'?: string;
  'serialized-throwable'?: string;
}

/** GET /jobs/:id/savepoints/:triggerId and GET /savepoint-disposal/:triggerId (`AsynchronousOperationResult`). */
export interface FlinkAsyncOperationResult<Op> {
  status: { id: 'IN_PROGRESS' | 'COMPLETED' };
  operation?: Op | null;
}

export type FlinkSavepointOperation = { location: string } | { 'failure-cause': FlinkFailureCause };
export type FlinkCheckpointOperation = { checkpointId: number } | { 'failure-cause': FlinkFailureCause };
export type FlinkDisposalOperation = Record<string, never> | { 'failure-cause': FlinkFailureCause };

/** One checkpoint of GET /jobs/:id/checkpoints (`CheckpointStatistics`), the fields the operator reads. */
export interface FlinkCheckpointStatistics {
  id: number;
  /** IN_PROGRESS, COMPLETED or FAILED (text: a newer Flink may add more). */
  status: string;
  is_savepoint: boolean;
  savepointFormat?: string | null;
  trigger_timestamp: number;
  latest_ack_timestamp: number;
  checkpointed_size?: number;
  state_size?: number;
  end_to_end_duration?: number;
  external_path?: string;
  discarded?: boolean;
  checkpoint_type?: string;
  failure_timestamp?: number;
  failure_message?: string;
  [key: string]: unknown;
}

/** `latest.restored` of GET /jobs/:id/checkpoints (`RestoredCheckpointStatistics`). */
export interface FlinkRestoredCheckpoint {
  id: number;
  restore_timestamp: number;
  is_savepoint: boolean;
  external_path?: string;
  [key: string]: unknown;
}

/** GET /jobs/:id/checkpoints (`CheckpointingStatistics`). */
export interface FlinkCheckpointingStatistics {
  counts: { restored: number; total: number; in_progress: number; completed: number; failed: number };
  summary: Record<string, unknown>;
  latest: {
    completed: FlinkCheckpointStatistics | null;
    savepoint: FlinkCheckpointStatistics | null;
    failed: FlinkCheckpointStatistics | null;
    restored: FlinkRestoredCheckpoint | null;
  };
  history: FlinkCheckpointStatistics[];
}

/** One entry of `exceptionHistory.entries` of GET /jobs/:id/exceptions. */
export interface FlinkExceptionEntry {
  exceptionName: string;
  stacktrace: string;
  timestamp: number;
  taskName?: string | null;
  location?: string | null;
  endpoint?: string | null;
  taskManagerId?: string | null;
  failureLabels?: Record<string, string>;
  concurrentExceptions?: FlinkExceptionEntry[];
}

/** GET /jobs/:id/exceptions (`JobExceptionsInfoWithHistory`; the root-* fields are gone in Flink 2.x). */
export interface FlinkJobExceptions {
  'root-exception'?: string | null;
  timestamp?: number | null;
  'all-exceptions'?: unknown[];
  truncated?: boolean;
  exceptionHistory: { entries: FlinkExceptionEntry[]; truncated: boolean };
}

/**
 * One metric of GET /jobs/:id/metrics (`Metric`): `{id}` in the list of available metrics (no
 * `get` parameter), `{id, value}` for requested ones. Values are strings, also for numbers.
 */
export interface FlinkMetric {
  id: string;
  value?: string;
}

/**
 * GET /jobs/:id/metrics (`MetricCollectionResponseBody`): a bare JSON array, not the
 * `{"metrics": [...]}` object the generated OpenAPI spec shows (the class is a list, serialized as
 * one: MetricCollectionResponseBody in flink-runtime).
 */
export type FlinkMetricCollection = FlinkMetric[];

/** Savepoint format of POST /jobs/:id/stop and /jobs/:id/savepoints. */
export type SavepointFormatType = 'CANONICAL' | 'NATIVE';
/** Checkpoint type of POST /jobs/:id/checkpoints (Flink ≥ 1.17). */
export type CheckpointType = 'CONFIGURED' | 'FULL' | 'INCREMENTAL';

/** POST /jars/upload (`JarUploadResponseBody`): `filename` is the stored jar's path on the JobManager; its last segment is the jar id. */
export interface FlinkJarUploadResponse {
  filename: string;
  /** `success` (UploadStatus). */
  status: string;
}

/** One entry point of an uploaded jar (`JarListInfo.JarEntryInfo`). */
export interface FlinkJarEntryInfo {
  name: string;
  description?: string | null;
}

/** One jar of GET /jars (`JarListInfo.JarFileInfo`). */
export interface FlinkJarFileInfo {
  /** The jar id (`<UUID>_<original file name>`), the `:jarid` of the jar endpoints. */
  id: string;
  /** The original file name. */
  name: string;
  /** Upload time, epoch ms. */
  uploaded: number;
  entry: FlinkJarEntryInfo[];
}

/** GET /jars (`JarListInfo`). */
export interface FlinkJarList {
  address: string;
  files: FlinkJarFileInfo[];
}

/**
 * POST /jars/:jarid/run (`JarRunRequestBody`), the fields the operator sends. Flink reads it with
 * FAIL_ON_UNKNOWN_PROPERTIES: a field an older JobManager does not know is a 400, so a field is
 * only sent when the caller gives it (`flinkConfiguration` exists from Flink 1.17).
 */
export interface FlinkJarRunRequestBody {
  entryClass?: string;
  programArgsList?: string[];
  parallelism?: number;
  jobId?: string;
  allowNonRestoredState?: boolean;
  savepointPath?: string;
  flinkConfiguration?: Record<string, string>;
}

/** POST /jars/:jarid/run answer (`JarRunResponseBody`). */
export interface FlinkJarRunResponse {
  jobid: string;
}

// ---- What the client returns (operator-facing, not Flink's shapes) ----

/** Outcome of PATCH /jobs/:id?mode=cancel. Job missing/terminal are answers, not errors. */
export type CancelJobResult = { outcome: 'cancelling' } | { outcome: 'job-not-found' } | { outcome: 'already-terminal'; message: string };

/** A savepoint (or stop-with-savepoint) operation as polled. */
export type SavepointStatus = { status: 'IN_PROGRESS' } | { status: 'COMPLETED'; location: string } | { status: 'COMPLETED'; failureCause: FlinkFailureCause };

export type CheckpointStatus =
  { status: 'IN_PROGRESS' } | { status: 'COMPLETED'; checkpointId: number } | { status: 'COMPLETED'; failureCause: FlinkFailureCause };

export type DisposalStatus = { status: 'IN_PROGRESS' } | { status: 'COMPLETED' } | { status: 'COMPLETED'; failureCause: FlinkFailureCause };
