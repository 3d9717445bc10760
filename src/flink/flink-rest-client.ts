/**
 * The operator's client of one Flink cluster's REST API (the calls of the Apache operator's
 * AbstractFlinkService, see ../shared/reference/flink-operator.md §5).
 *
 * Guarantees:
 * - Every call has a deadline: `timeouts.requestMs` (default 10 s), `timeouts.cancelMs` for the
 *   cancel call (default 60 s), as the Apache operator's `flink.client.timeout` / `cancel.timeout`.
 * - Only GETs are retried (on connection errors, timeouts, 429 and 5xx answers, with a short backoff):
 *   they have no side effect.
 * - POST and PATCH calls are sent EXACTLY ONCE per method call, never retried here. A savepoint
 *   trigger whose answer is lost (timeout, reset) may or may not have started a savepoint; a blind
 *   retry could start a second one (and stop-with-savepoint twice is worse). The error says so.
 * - Errors are `FlinkRestError`s naming the resource, the call, the URL and what answered; a job
 *   that is missing or already terminal is a *result* of `cancelJob`, not an error.
 * - Jar endpoints (session clusters): a run whose answer is lost may have submitted the job; the
 *   caller looks for its fixed job id, and a repeated run of it is refused (`isDuplicateJobSubmission`).
 *
 * Assumptions:
 * - The caller records its intent (e.g. "savepoint requested for job J") in the operator state
 *   before calling a trigger, and the returned trigger id right after, so a crash between the two
 *   is detectable. To make a retried trigger safe, pass your own `triggerId` (32 hex chars, stored
 *   before the call): Flink ≥ 1.15 then deduplicates the operation by job id + trigger id and a
 *   repeated POST returns the same operation instead of starting a new one.
 *
 * Caveats:
 * - Flink's deduplication lives in the JobManager's memory (completed operations are cached for
 *   `rest.async.store-duration`, 5 min by default): after a JobManager restart, or much later, a
 *   repeated trigger id starts a new operation, and polling an old trigger id answers 404.
 * - Through the API server proxy, an unready JobManager looks like a 503 from the API server;
 *   `FlinkRestError.isUnreachable` covers both that and transport failures.
 */
import { FlinkRestError, FlinkTransportFailure, flinkCauseClasses, parseErrorBody, summarizeMessages } from './flink-rest-error.js';
import { type FlinkRestTransport, multipartJarUpload, statusText, type TransportRequest } from './flink-rest-transport.js';
import type {
  CancelJobResult,
  CheckpointStatus,
  CheckpointType,
  DisposalStatus,
  FlinkAsyncOperationResult,
  FlinkCheckpointingStatistics,
  FlinkCheckpointOperation,
  FlinkDashboardConfig,
  FlinkDisposalOperation,
  FlinkFailureCause,
  FlinkJarFileInfo,
  FlinkJarList,
  FlinkJarRunRequestBody,
  FlinkJarRunResponse,
  FlinkJarUploadResponse,
  FlinkJobDetails,
  FlinkJobExceptions,
  FlinkJobOverview,
  FlinkJobResourceRequirements,
  FlinkJobsOverview,
  FlinkMetricCollection,
  FlinkSavepointOperation,
  FlinkTriggerResponse,
  SavepointFormatType,
  SavepointStatus,
} from './flink-rest-types.js';

export interface FlinkRestTimeouts {
  /** Deadline of every call but cancel, in ms (default 10 000). */
  readonly requestMs: number;
  /** Deadline of PATCH /jobs/:id?mode=cancel, in ms (default 60 000). */
  readonly cancelMs: number;
  /** Deadline of POST /jars/upload, body included, in ms (default 120 000). */
  readonly jarUploadMs: number;
  /** Deadline of POST /jars/:jarid/run, in ms (default 600 000, as the Apache `kubernetes.operator.job.submission.timeout`). */
  readonly jarRunMs: number;
}

export interface FlinkRestRetryPolicy {
  /** Total attempts of a GET (default 3; 1 = no retry). */
  readonly getAttempts: number;
  /** Wait before the 2nd, 3rd... attempt; the last value repeats (default [100, 400] ms). */
  readonly backoffMs: readonly number[];
}

export const DEFAULT_FLINK_REST_TIMEOUTS: FlinkRestTimeouts = { requestMs: 10_000, cancelMs: 60_000, jarUploadMs: 120_000, jarRunMs: 600_000 };
export const DEFAULT_FLINK_REST_RETRY: FlinkRestRetryPolicy = { getAttempts: 3, backoffMs: [100, 400] };

export interface FlinkRestClientOptions {
  /** `namespace/name` of the FlinkDeployment, used in error messages. */
  readonly resource: string;
  readonly timeouts?: Partial<FlinkRestTimeouts>;
  readonly retry?: Partial<FlinkRestRetryPolicy>;
  /** Injected for tests; defaults to setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Called right before a request that changes something (every method but GET) is written, after
   * all asynchronous preparation: the operator passes its leadership fence, so a process paused
   * between deciding and sending does not send once it runs again. A throw is rethrown as is.
   */
  readonly beforeWrite?: (method: string, path: string) => void;
  /**
   * Called once per request sent (every attempt of a retried GET), when its answer arrived or the
   * transport failed: for metrics. A throw is ignored.
   */
  readonly onRequest?: (request: FlinkRestRequestObservation) => void;
}

/** One Flink REST request, as `FlinkRestClientOptions.onRequest` sees it. */
export interface FlinkRestRequestObservation {
  readonly method: string;
  /** The path without its query, ids replaced (`/jobs/:jobid/savepoints/:triggerid`): a low-cardinality label. */
  readonly endpoint: string;
  /** `2xx`, `4xx`, `5xx` (the status class), or `error` when no answer arrived (connection, timeout). */
  readonly outcome: string;
  /** The HTTP status, when there was an answer. */
  readonly status?: number;
  readonly seconds: number;
}

/** Segments after which a path segment is an id, and the placeholder it becomes. */
const ID_AFTER: Readonly<Record<string, string>> = {
  jobs: ':jobid',
  savepoints: ':triggerid',
  checkpoints: ':triggerid',
  'savepoint-disposal': ':triggerid',
  vertices: ':vertexid',
  jars: ':jarid',
};
/** Segments after `jobs` (etc.) that are names, not ids. */
const NOT_IDS = new Set(['overview', 'metrics', 'config', 'details', 'upload']);

/**
 * The endpoint of a Flink REST path, for metric labels: the query dropped and ids replaced,
 * e.g. `/jobs/0123…/savepoints/abc?x=1` → `/jobs/:jobid/savepoints/:triggerid`.
 */
export function flinkRestEndpoint(path: string): string {
  const segments = path.split(/[?#]/, 1)[0].split('/');
  return segments
    .map((segment, i) => {
      if (segment === '') return segment;
      const placeholder = ID_AFTER[segments[i - 1] ?? ''];
      if (placeholder && !NOT_IDS.has(segment)) return placeholder;
      return HEX32.test(segment) ? ':id' : segment;
    })
    .join('/');
}

export interface StopWithSavepointOptions {
  /** Target directory; absent = Flink's configured savepoint directory. */
  readonly targetDirectory?: string;
  /** `true` = emit MAX_WATERMARK and drain (ends event-time windows); default false. */
  readonly drain?: boolean;
  readonly formatType?: SavepointFormatType;
  /** Client-chosen trigger id (32 hex) for idempotent retries; see the module comment. */
  readonly triggerId?: string;
}

/** What POST /jars/:jarid/run submits; every field but `jobId` is sent only when given. */
export interface RunJarRequest {
  /** The job id to submit under (32 hex), fixed and recorded by the caller before the call. */
  readonly jobId: string;
  /** Main class; absent = the jar manifest's `program-class` / `Main-Class`. */
  readonly entryClass?: string;
  /** Program arguments (sent as `programArgsList`). */
  readonly args?: readonly string[];
  /** Positive; absent = `parallelism.default`. */
  readonly parallelism?: number;
  /** Savepoint or checkpoint to restore from. */
  readonly savepointPath?: string;
  readonly allowNonRestoredState?: boolean;
  /** The job's own configuration (Flink >= 1.17; an older JobManager answers 400 to the field). */
  readonly flinkConfiguration?: Readonly<Record<string, string>>;
}

export interface TriggerSavepointOptions {
  readonly targetDirectory?: string;
  readonly formatType?: SavepointFormatType;
  readonly triggerId?: string;
}

const HEX32 = /^[0-9a-fA-F]{32}$/;
const PATH_SAFE = /^[0-9A-Za-z_-]+$/;

/** Job ids and client-chosen trigger ids: Flink's AbstractID, 32 hex characters. */
function checkId(kind: string, id: string): string {
  if (!HEX32.test(id)) throw new Error(`invalid Flink ${kind} "${id}": expected 32 hexadecimal characters`);
  return id;
}

/** Trigger ids Flink handed out: used in a path, so only checked to be path-safe. */
function checkTriggerPathId(id: string): string {
  if (!PATH_SAFE.test(id)) throw new Error(`invalid Flink trigger id "${id}"`);
  return id;
}

/** Jar ids Flink handed out (`<UUID>_<file name>`): one path segment. */
function checkJarId(id: string): string {
  if (id === '' || id === '.' || id === '..' || /[/\\]/.test(id)) throw new Error(`invalid Flink jar id "${id}"`);
  return id;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class FlinkRestClient {
  private readonly timeouts: FlinkRestTimeouts;
  private readonly retry: FlinkRestRetryPolicy;
  private readonly beforeWrite: ((method: string, path: string) => void) | undefined;
  private readonly onRequest: ((request: FlinkRestRequestObservation) => void) | undefined;
  private readonly sleep: (ms: number) => Promise<void>;
  readonly resource: string;

  constructor(
    private readonly transport: FlinkRestTransport,
    options: FlinkRestClientOptions,
  ) {
    this.resource = options.resource;
    this.timeouts = { ...DEFAULT_FLINK_REST_TIMEOUTS, ...options.timeouts };
    this.retry = { ...DEFAULT_FLINK_REST_RETRY, ...options.retry };
    this.beforeWrite = options.beforeWrite;
    this.onRequest = options.onRequest;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /** Base URL the client talks to (for logs and messages). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** GET /config: Flink version and revision of the running JobManager. */
  getConfig(): Promise<FlinkDashboardConfig> {
    return this.getJson<FlinkDashboardConfig>('/config');
  }

  /** GET /jobs/overview: every job the JobManager knows (running and recently terminated). */
  async listJobs(): Promise<FlinkJobOverview[]> {
    const answer = await this.getJson<FlinkJobsOverview>('/jobs/overview');
    return answer.jobs ?? [];
  }

  /** GET /jobs/:id; `undefined` when Flink answers 404 (the JobManager does not know the job). */
  async getJob(jobId: string): Promise<FlinkJobDetails | undefined> {
    try {
      return await this.getJson<FlinkJobDetails>(`/jobs/${checkId('job id', jobId)}`);
    } catch (error) {
      if (error instanceof FlinkRestError && error.isFlinkNotFound) return undefined;
      throw error;
    }
  }

  /**
   * PATCH /jobs/:id?mode=cancel (deadline `timeouts.cancelMs`). Sent once.
   * Flink 404 → `job-not-found`; 409 or "already reached another terminal state" → `already-terminal`.
   */
  async cancelJob(jobId: string): Promise<CancelJobResult> {
    const path = `/jobs/${checkId('job id', jobId)}?mode=cancel`;
    try {
      await this.call({ method: 'PATCH', path, timeoutMs: this.timeouts.cancelMs });
      return { outcome: 'cancelling' };
    } catch (error) {
      if (!(error instanceof FlinkRestError) || error.source !== 'flink') throw error;
      const text = (error.serverMessages ?? []).join('\n');
      if (error.status === 404) return { outcome: 'job-not-found' };
      if (error.status === 409 || text.includes('already reached another terminal state')) {
        return { outcome: 'already-terminal', message: summarizeMessages(error.serverMessages ?? []) };
      }
      throw error;
    }
  }

  /** GET /jobs/:id/resource-requirements (Flink 1.18+; the adaptive scheduler, else Flink answers 500). */
  getResourceRequirements(jobId: string): Promise<FlinkJobResourceRequirements> {
    return this.getJson<FlinkJobResourceRequirements>(`/jobs/${checkId('job id', jobId)}/resource-requirements`);
  }

  /** PUT /jobs/:id/resource-requirements: the job rescales in place. Sent once (never retried); the caller reads the bounds back to settle a lost answer. */
  async updateResourceRequirements(jobId: string, requirements: FlinkJobResourceRequirements): Promise<void> {
    const path = `/jobs/${checkId('job id', jobId)}/resource-requirements`;
    await this.call({ method: 'PUT', path, body: JSON.stringify(requirements), timeoutMs: this.timeouts.requestMs });
  }

  /** POST /jobs/:id/stop: stop-with-savepoint. Sent once (never retried); returns the trigger id. */
  async stopWithSavepoint(jobId: string, options: StopWithSavepointOptions = {}): Promise<string> {
    const body: Record<string, unknown> = { drain: options.drain ?? false, formatType: options.formatType ?? 'CANONICAL' };
    if (options.targetDirectory !== undefined) body.targetDirectory = options.targetDirectory;
    if (options.triggerId !== undefined) body.triggerId = checkId('trigger id', options.triggerId);
    return this.trigger(`/jobs/${checkId('job id', jobId)}/stop`, body);
  }

  /** POST /jobs/:id/savepoints with `cancel-job: false`. Sent once (never retried); returns the trigger id. */
  async triggerSavepoint(jobId: string, options: TriggerSavepointOptions = {}): Promise<string> {
    const body: Record<string, unknown> = { 'cancel-job': false, formatType: options.formatType ?? 'CANONICAL' };
    if (options.targetDirectory !== undefined) body['target-directory'] = options.targetDirectory;
    if (options.triggerId !== undefined) body.triggerId = checkId('trigger id', options.triggerId);
    return this.trigger(`/jobs/${checkId('job id', jobId)}/savepoints`, body);
  }

  /** GET /jobs/:id/savepoints/:triggerId (also the status of a stop-with-savepoint). */
  async getSavepointStatus(jobId: string, triggerId: string): Promise<SavepointStatus> {
    const answer = await this.getJson<FlinkAsyncOperationResult<FlinkSavepointOperation>>(
      `/jobs/${checkId('job id', jobId)}/savepoints/${checkTriggerPathId(triggerId)}`,
    );
    if (answer.status?.id !== 'COMPLETED') return { status: 'IN_PROGRESS' };
    const operation = answer.operation ?? {};
    if ('location' in operation && typeof operation.location === 'string') return { status: 'COMPLETED', location: operation.location };
    return { status: 'COMPLETED', failureCause: failureCauseOf(operation) };
  }

  /** POST /jobs/:id/checkpoints (Flink ≥ 1.17). Sent once (never retried); returns the trigger id. */
  async triggerCheckpoint(jobId: string, checkpointType: CheckpointType = 'CONFIGURED', triggerId?: string): Promise<string> {
    const body: Record<string, unknown> = { checkpointType };
    if (triggerId !== undefined) body.triggerId = checkId('trigger id', triggerId);
    return this.trigger(`/jobs/${checkId('job id', jobId)}/checkpoints`, body);
  }

  /** GET /jobs/:id/checkpoints/:triggerId. */
  async getCheckpointStatus(jobId: string, triggerId: string): Promise<CheckpointStatus> {
    const answer = await this.getJson<FlinkAsyncOperationResult<FlinkCheckpointOperation>>(
      `/jobs/${checkId('job id', jobId)}/checkpoints/${checkTriggerPathId(triggerId)}`,
    );
    if (answer.status?.id !== 'COMPLETED') return { status: 'IN_PROGRESS' };
    const operation = answer.operation ?? {};
    if ('checkpointId' in operation && typeof operation.checkpointId === 'number') return { status: 'COMPLETED', checkpointId: operation.checkpointId };
    return { status: 'COMPLETED', failureCause: failureCauseOf(operation) };
  }

  /** GET /jobs/:id/checkpoints: counts, latest completed/savepoint/failed/restored, history. */
  getCheckpoints(jobId: string): Promise<FlinkCheckpointingStatistics> {
    return this.getJson<FlinkCheckpointingStatistics>(`/jobs/${checkId('job id', jobId)}/checkpoints`);
  }

  /** GET /jobs/:id/exceptions. */
  getExceptions(jobId: string): Promise<FlinkJobExceptions> {
    return this.getJson<FlinkJobExceptions>(`/jobs/${checkId('job id', jobId)}/exceptions`);
  }

  /**
   * GET /jobs/:id/metrics?get=<names>: the current values of the named job metrics (e.g.
   * `numRestarts`, `numberOfCompletedCheckpoints`, `uptime`), by name. A metric the JobManager does
   * not have (unknown name, or a job it does not know: Flink then answers `[]`) is absent from the
   * result; no names → `{}` without a request.
   * Caveat: Flink's metric store refreshes at most every `metrics.fetcher.update-interval` (10 s),
   * so values may lag by that much.
   */
  async getJobMetrics(jobId: string, names: readonly string[]): Promise<Record<string, string>> {
    checkId('job id', jobId);
    if (names.length === 0) return {};
    for (const name of names) {
      if (name === '' || name.includes(',')) throw new Error(`invalid Flink metric name "${name}": it must be non-empty and contain no ','`);
    }
    const answer = await this.getJson<FlinkMetricCollection>(`/jobs/${jobId}/metrics?get=${names.map(encodeURIComponent).join(',')}`);
    if (!Array.isArray(answer)) {
      throw new FlinkRestError(
        `Flink REST API of ${this.resource}: GET /jobs/${jobId}/metrics answered ${JSON.stringify(answer).slice(0, 200)}, not a list of metrics`,
        {
          path: `/jobs/${jobId}/metrics`,
          method: 'GET',
          url: `${this.transport.baseUrl}/jobs/${jobId}/metrics`,
          source: 'flink',
        },
      );
    }
    const values: Record<string, string> = {};
    for (const metric of answer) {
      if (typeof metric?.id === 'string' && typeof metric.value === 'string') values[metric.id] = metric.value;
    }
    return values;
  }

  /** POST /savepoint-disposal `{savepoint-path}`. Sent once; returns the trigger id. */
  disposeSavepoint(savepointPath: string): Promise<string> {
    return this.trigger('/savepoint-disposal', { 'savepoint-path': savepointPath });
  }

  /** GET /savepoint-disposal/:triggerId. */
  async getDisposalStatus(triggerId: string): Promise<DisposalStatus> {
    const answer = await this.getJson<FlinkAsyncOperationResult<FlinkDisposalOperation>>(`/savepoint-disposal/${checkTriggerPathId(triggerId)}`);
    if (answer.status?.id !== 'COMPLETED') return { status: 'IN_PROGRESS' };
    const operation = answer.operation ?? {};
    // Flink answers a successful disposal with `"failure-cause": null`.
    if ('failure-cause' in operation && operation['failure-cause']) return { status: 'COMPLETED', failureCause: failureCauseOf(operation) };
    return { status: 'COMPLETED' };
  }

  // ---- jars (session clusters) ----

  /**
   * POST /jars/upload (deadline `timeouts.jarUploadMs`), sent once: the jar as one multipart file
   * part. Returns the jar id: the last path segment of the answer's `filename` (the stored jar's path
   * on the JobManager), as the Apache operator's runJar derives it.
   */
  async uploadJar(jar: Uint8Array, fileName: string): Promise<string> {
    const path = '/jars/upload';
    const { body, contentType } = multipartJarUpload(jar, fileName);
    const text = await this.call({ method: 'POST', path, body, contentType, timeoutMs: this.timeouts.jarUploadMs });
    const filename = (parseJson(text, 'POST', path, this) as Partial<FlinkJarUploadResponse>).filename;
    const jarId = typeof filename === 'string' ? filename.slice(filename.lastIndexOf('/') + 1) : '';
    if (jarId === '') throw this.unexpectedAnswer('POST', path, 'without a filename', text);
    return jarId;
  }

  /** GET /jars: the jars uploaded to this JobManager, newest first. */
  async listJars(): Promise<FlinkJarFileInfo[]> {
    return (await this.getJson<FlinkJarList>('/jars')).files ?? [];
  }

  /**
   * POST /jars/:jarid/run (deadline `timeouts.jarRunMs`), sent once, NEVER retried: returns the id
   * of the submitted job (Flink's answer; `request.jobId` unless the jar's main method ignores it).
   * A job id the cluster already has is refused with a FlinkRestError that `isDuplicateJobSubmission`
   * recognises.
   */
  async runJar(jarId: string, request: RunJarRequest): Promise<string> {
    const path = `/jars/${encodeURIComponent(checkJarId(jarId))}/run`;
    const body: FlinkJarRunRequestBody = { jobId: checkId('job id', request.jobId) };
    if (request.entryClass !== undefined) body.entryClass = request.entryClass;
    if (request.args !== undefined) body.programArgsList = [...request.args];
    if (request.parallelism !== undefined) {
      if (!Number.isInteger(request.parallelism) || request.parallelism < 1)
        throw new Error(`invalid parallelism ${request.parallelism}: expected a positive integer`);
      body.parallelism = request.parallelism;
    }
    if (request.savepointPath !== undefined) body.savepointPath = request.savepointPath;
    if (request.allowNonRestoredState !== undefined) body.allowNonRestoredState = request.allowNonRestoredState;
    if (request.flinkConfiguration !== undefined) body.flinkConfiguration = { ...request.flinkConfiguration };
    const text = await this.call({ method: 'POST', path, body: JSON.stringify(body), timeoutMs: this.timeouts.jarRunMs });
    const jobId = (parseJson(text, 'POST', path, this) as Partial<FlinkJarRunResponse>).jobid;
    if (typeof jobId !== 'string' || !HEX32.test(jobId)) throw this.unexpectedAnswer('POST', path, 'without a job id', text);
    return jobId;
  }

  /**
   * DELETE /jars/:jarid, sent once. A jar the JobManager does not have counts as deleted (400
   * "File <id> does not exist in <dir>.", JarDeleteHandler; a restarted JobManager has no jars).
   */
  async deleteJar(jarId: string): Promise<void> {
    const path = `/jars/${encodeURIComponent(checkJarId(jarId))}`;
    try {
      await this.call({ method: 'DELETE', path, timeoutMs: this.timeouts.requestMs });
    } catch (error) {
      const gone = `File ${jarId} does not exist in `;
      if (error instanceof FlinkRestError && error.source === 'flink' && error.status === 400 && (error.serverMessages ?? []).some((m) => m.includes(gone)))
        return;
      throw error;
    }
  }

  // ---- plumbing ----

  private async trigger(path: string, body: Record<string, unknown>): Promise<string> {
    const answer = await this.call({ method: 'POST', path, body: JSON.stringify(body), timeoutMs: this.timeouts.requestMs });
    const requestId = (parseJson(answer, 'POST', path, this) as Partial<FlinkTriggerResponse>)['request-id'];
    if (typeof requestId !== 'string' || requestId === '') throw this.unexpectedAnswer('POST', path, 'without a request-id', answer);
    return requestId;
  }

  /** A 2xx answer that lacks what the call returns. */
  private unexpectedAnswer(method: string, path: string, what: string, text: string): FlinkRestError {
    return new FlinkRestError(`Flink REST API of ${this.resource}: ${method} ${path} answered ${what}: ${text.slice(0, 200)}`, {
      path,
      method,
      url: this.transport.baseUrl + path,
      source: 'flink',
    });
  }

  private async getJson<T>(path: string): Promise<T> {
    const text = await this.call({ method: 'GET', path, timeoutMs: this.timeouts.requestMs });
    return parseJson(text, 'GET', path, this) as T;
  }

  /** One call; GETs retried per policy. Returns the body of a 2xx answer, throws FlinkRestError otherwise. */
  private async call(request: TransportRequest): Promise<string> {
    const attempts = request.method === 'GET' ? Math.max(1, this.retry.getAttempts) : 1;
    let lastError: FlinkRestError | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) {
        const backoff = this.retry.backoffMs;
        await this.sleep(backoff.length === 0 ? 0 : backoff[Math.min(attempt - 2, backoff.length - 1)]);
      }
      const { error, body, retriable: canRetry } = await this.attempt(request, attempt);
      if (!error) return body!;
      lastError = error;
      const retriable = canRetry ?? (error.source === 'transport' || error.status === 429 || (error.status !== undefined && error.status >= 500));
      if (!retriable) break;
    }
    throw lastError!;
  }

  private async attempt(request: TransportRequest, attempt: number): Promise<{ error?: FlinkRestError; body?: string; retriable?: boolean }> {
    const url = this.transport.baseUrl + request.path;
    const details = { path: request.path, method: request.method, url, attempts: attempt };
    let response;
    const check = this.beforeWrite;
    const sent: TransportRequest = check && request.method !== 'GET' ? { ...request, beforeWrite: () => check(request.method, request.path) } : request;
    const started = performance.now();
    try {
      response = await this.transport.send(sent);
      this.observe(request, started, response.status);
    } catch (error) {
      // Not a transport failure (the fence refused, or a bug): not Flink's answer, so not a FlinkRestError.
      if (!(error instanceof FlinkTransportFailure)) throw error;
      this.observe(request, started, undefined);
      const failure = error;
      if (failure.code === 'EKUBECONFIG') {
        return {
          error: new FlinkRestError(`Flink REST API of ${this.resource} not called via ${url}: ${failure.message}; check the operator's kubeconfig`, {
            ...details,
            source: 'transport',
            code: failure.code,
          }),
          retriable: false,
        };
      }
      const detail =
        failure.code === 'ETIMEDOUT'
          ? `ETIMEDOUT (${failure.message})`
          : failure.code === failure.message
            ? failure.code
            : `${failure.code} (${failure.message})`;
      const sideEffect = request.method === 'GET' ? '' : ` The ${request.method} was not retried: if it reached the JobManager its effect may have happened.`;
      return {
        error: new FlinkRestError(`Flink REST API of ${this.resource} unreachable via ${url}: ${detail}; is the JobManager running?${sideEffect}`, {
          ...details,
          source: 'transport',
          code: failure.code,
        }),
      };
    }
    if (response.status >= 200 && response.status < 300) return { body: response.body };
    const parsed = parseErrorBody(response.body);
    const summary = summarizeMessages(parsed.messages);
    const fromApiServer = parsed.source === 'apiserver' || (this.transport.mode === 'apiserver-proxy' && parsed.source === 'unknown' && response.status >= 500);
    if (fromApiServer) {
      const hint =
        response.status === 401 || response.status === 403
          ? `the API server refused the proxy request; the operator's credentials need "get" on services/proxy in this namespace`
          : response.status === 404
            ? `the Service or its port "rest" does not exist; is the Flink cluster deployed?`
            : `is the JobManager running?`;
      const verb = response.status === 502 || response.status === 503 || response.status === 504 ? 'unreachable' : 'not reachable';
      return {
        error: new FlinkRestError(
          `Flink REST API of ${this.resource} ${verb} via ${url}: the API server answered ${statusText(response.status)}${summary ? `: ${summary}` : ''}; ${hint}`,
          { ...details, source: 'apiserver', status: response.status, serverMessages: parsed.messages },
        ),
      };
    }
    const causes = flinkCauseClasses(response.body);
    return {
      error: new FlinkRestError(
        `Flink REST API of ${this.resource}: ${request.method} ${request.path} failed with ${statusText(response.status)}${summary ? `: ${summary}` : ''}`,
        { ...details, source: 'flink', status: response.status, serverMessages: parsed.messages, ...(causes.length > 0 ? { causes } : {}) },
      ),
    };
  }

  private observe(request: TransportRequest, started: number, status: number | undefined): void {
    if (!this.onRequest) return;
    try {
      this.onRequest({
        method: request.method,
        endpoint: flinkRestEndpoint(request.path),
        outcome: status === undefined ? 'error' : `${Math.floor(status / 100)}xx`,
        ...(status !== undefined ? { status } : {}),
        seconds: (performance.now() - started) / 1000,
      });
    } catch {
      // metrics must never break a call
    }
  }
}

function parseJson(text: string, method: string, path: string, client: FlinkRestClient): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new FlinkRestError(
      `Flink REST API of ${client.resource}: ${method} ${path} answered invalid JSON (${(error as Error).message}): ${text.slice(0, 200)}`,
      {
        path,
        method,
        url: client.baseUrl + path,
        source: 'flink',
      },
    );
  }
}

function failureCauseOf(operation: object): FlinkFailureCause {
  const cause = (operation as { 'failure-cause'?: FlinkFailureCause })['failure-cause'];
  return cause ?? { class: 'unknown', 'stack-trace': 'Flink reported a completed operation without location or failure cause' };
}
