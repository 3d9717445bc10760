/**
 * Flink's REST API, as served by a simulated JobManager: routing of method + path to the
 * JobManager's behaviour, Flink's status codes, and Flink's error body `{"errors":[message]}`.
 * Also serves `GET /simulator/lineage`, which is NOT part of Flink's API: the lineage record of
 * the FlinkDeployment the JobManager belongs to (see lineage-recorder.ts).
 *
 * Transport-free: `handleFlinkRequest` takes a parsed request and returns status + JSON body, so
 * the service proxy (HTTP) and unit tests call the same code.
 *
 * Routes: GET /config, GET /overview, GET /jobs, GET /jobs/overview, GET|PATCH /jobs/:jid,
 * GET /jobs/:jid/execution-result, GET /jobs/:jid/exceptions, GET|POST /jobs/:jid/checkpoints,
 * GET /jobs/:jid/checkpoints/config, GET /jobs/:jid/checkpoints/details/:cpid,
 * GET /jobs/:jid/checkpoints/:triggerid, GET /jobs/:jid/metrics, POST /jobs/:jid/savepoints,
 * GET /jobs/:jid/savepoints/:triggerid, POST /jobs/:jid/stop, POST /savepoint-disposal,
 * GET /savepoint-disposal/:triggerid, GET /jobmanager/config, GET|PUT /jobs/:jid/resource-requirements
 * (Flink 1.18+, flink-resource-requirements.ts), GET /simulator/lineage (`?jobid=`:
 * one job's entries); on a session JobManager also GET /jars, POST /jars/upload,
 * DELETE /jars/:jarid, POST /jars/:jarid/run (flink-jar-rest-api.ts).
 */
import type { SimulatedJobManager } from './flink-jobmanager.js';
import { FlinkRestError } from './flink-jobmanager-context.js';
import type { LineageRecorder } from './lineage-recorder.js';
import type { MultipartFormData } from './flink-jar-uploads.js';
import { routeJarRequest } from './flink-jar-rest-api.js';
import { routeResourceRequirements } from './flink-resource-requirements.js';
import {
  asyncOperationResult,
  checkpointDetails,
  checkpointingStatistics,
  dashboardConfiguration,
  executionResult,
  jobDetails,
  jobExceptions,
  jobMetricsResponse,
  jobOverviewEntry,
} from './flink-rest-shapes.js';

export interface FlinkRestRequest {
  readonly method: string;
  /** Path without query string, starting with '/'. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Parsed JSON body (undefined when empty; for a multipart request, its `request` attribute). */
  readonly body: unknown;
  /** A `multipart/form-data` body, decoded (null: it could not be); undefined for other requests. */
  readonly multipart?: MultipartFormData | null;
}

export interface FlinkRestResponse {
  readonly status: number;
  readonly body: unknown;
}

/** Job ids and trigger ids: Flink's AbstractID in hex, 32 digits. */
const HEX_ID = /^[0-9a-fA-F]{32}$/;

function ok(body: unknown, status = 200): FlinkRestResponse {
  return { status, body };
}

function error(status: number, message: string): FlinkRestResponse {
  return { status, body: { errors: [message] } };
}

function str(body: unknown, key: string): string | null {
  if (body === null || typeof body !== 'object') return null;
  const v = (body as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : null;
}

function bool(body: unknown, key: string): boolean {
  if (body === null || typeof body !== 'object') return false;
  return (body as Record<string, unknown>)[key] === true;
}

function requireJobId(raw: string): string {
  if (!HEX_ID.test(raw)) {
    throw new FlinkRestError(400, `Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value "${raw}".`);
  }
  return raw.toLowerCase();
}

/**
 * The fields each request body class has. Flink reads bodies with Jackson's FAIL_ON_UNKNOWN_PROPERTIES
 * (RestMapperUtils' strict mapper): an unknown field, or a body that is not an object, is a 400
 * `Request did not match expected format <class>.` (AbstractHandler); an empty body reads as `{}`.
 */
const REQUEST_BODY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  SavepointTriggerRequestBody: ['target-directory', 'cancel-job', 'formatType', 'triggerId'],
  StopWithSavepointRequestBody: ['targetDirectory', 'drain', 'formatType', 'triggerId'],
  CheckpointTriggerRequestBody: ['checkpointType', 'triggerId'],
  SavepointDisposalRequest: ['savepoint-path'],
  JarRunRequestBody: [
    'allowNonRestoredState',
    'entryClass',
    'flinkConfiguration',
    'jobId',
    'parallelism',
    'programArgs',
    'programArgsList',
    'restoreMode',
    'savepointPath',
  ],
};

function requireBody(body: unknown, className: string): void {
  if (body === undefined) return;
  const fields = REQUEST_BODY_FIELDS[className];
  const fits = body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).every((k) => fields.includes(k));
  if (!fits) throw new FlinkRestError(400, `Request did not match expected format ${className}.`);
}

/** A trigger id path parameter: Flink's TriggerIdPathParameter parses 32 hex digits, else 400 (AbstractHandler). */
function requireTriggerId(raw: string): string {
  if (!HEX_ID.test(raw)) {
    throw new FlinkRestError(400, `Bad request, could not parse parameters: Cannot resolve path parameter (triggerid) from value "${raw}".`);
  }
  return raw.toLowerCase();
}

function jobOr404(jm: SimulatedJobManager, jobId: string) {
  const job = jm.getJob(jobId);
  if (!job) throw new FlinkRestError(404, `Job ${jobId} not found`);
  return job;
}

/** Serves one Flink REST request against `jm`. Never throws: errors become Flink error bodies. */
export function handleFlinkRequest(jm: SimulatedJobManager, request: FlinkRestRequest, lineage: LineageRecorder, now: number = Date.now()): FlinkRestResponse {
  try {
    return route(jm, request, lineage, now);
  } catch (e) {
    if (e instanceof FlinkRestError) return error(e.status, e.message);
    return {
      status: 500,
      body: {
        errors: [
          'Internal server error.',
          `<Exception on server side:\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}\nEnd of exception on server side>`,
        ],
      },
    };
  }
}

function route(jm: SimulatedJobManager, req: FlinkRestRequest, lineage: LineageRecorder, now: number): FlinkRestResponse {
  const path = req.path.length > 1 ? req.path.replace(/\/+$/, '') : req.path;
  const parts = path.split('/').filter((p) => p !== '');
  const method = req.method.toUpperCase();
  const notFound = () => error(404, `Not found: ${req.path}`);

  if (parts[0] === 'simulator' && parts[1] === 'lineage' && parts.length === 2 && method === 'GET') {
    const jobId = req.query.get('jobid');
    if (jobId !== null) return ok(lineage.forJob(jm.deployment.namespace, jm.deployment.name, jobId));
    return ok(lineage.get(jm.deployment.namespace, jm.deployment.name));
  }
  if (parts.length === 1 && parts[0] === 'config' && method === 'GET') {
    return ok(dashboardConfiguration(jm.launch.flinkVersion, jm.launch.args.role === 'session-jobmanager'));
  }
  if (parts[0] === 'jars') {
    if (method === 'POST' && parts.length === 3 && parts[2] === 'run') requireBody(req.body, 'JarRunRequestBody');
    return routeJarRequest(jm, { method, parts, query: req.query, body: req.body, multipart: req.multipart }) ?? notFound();
  }
  if (parts.length === 2 && parts[0] === 'jobmanager' && parts[1] === 'config' && method === 'GET') {
    return ok([...jm.launch.config].map(([key, value]) => ({ key, value })));
  }
  if (parts.length === 1 && parts[0] === 'overview' && method === 'GET') {
    const jobs = jm.listJobs();
    const count = (s: string) => jobs.filter((j) => j.state === s).length;
    return ok({
      taskmanagers: 0,
      'slots-total': 0,
      'slots-available': 0,
      'slots-free-and-blocked': 0,
      'taskmanagers-blocked': 0,
      'jobs-running': count('RUNNING'),
      'jobs-finished': count('FINISHED'),
      'jobs-cancelled': count('CANCELED'),
      'jobs-failed': count('FAILED'),
      'flink-version': jm.launch.flinkVersion,
      'flink-commit': 'simulated',
    });
  }
  if (parts[0] === 'savepoint-disposal') {
    if (parts.length === 1 && method === 'POST') {
      requireBody(req.body, 'SavepointDisposalRequest');
      const path = str(req.body, 'savepoint-path');
      if (path === null) return error(400, 'Request did not match expected format SavepointDisposalRequest.');
      // 200, not 202: SavepointDisposalTriggerHeaders.getResponseStatusCode() is OK (the other triggers answer 202).
      return ok({ 'request-id': jm.disposeSavepoint(path) });
    }
    if (parts.length === 2 && method === 'GET') return ok(asyncOperationResult(jm.operation('savepoint-disposal', requireTriggerId(parts[1]), null)));
    return notFound();
  }
  if (parts[0] !== 'jobs') return notFound();
  if (parts.length === 1 && method === 'GET') return ok({ jobs: jm.listJobs().map((j) => ({ id: j.jobId, status: j.state })) });
  if (parts.length === 2 && parts[1] === 'overview' && method === 'GET') return ok({ jobs: jm.listJobs().map((j) => jobOverviewEntry(j, now)) });
  if (parts.length < 2) return notFound();

  const jobId = requireJobId(parts[1]);
  const sub = parts.slice(2);
  if (sub.length === 0) {
    if (method === 'GET') return ok(jobDetails(jobOr404(jm, jobId), now));
    if (method === 'PATCH') {
      const mode = (req.query.get('mode') ?? 'cancel').toLowerCase();
      if (mode !== 'cancel') return error(400, `Bad request, could not parse parameters: Cannot resolve query parameter (mode) from value "${mode}".`);
      jm.cancel(jobId);
      return ok({}, 202);
    }
    return notFound();
  }
  switch (sub[0]) {
    case 'execution-result':
      if (sub.length === 1 && method === 'GET') {
        const job = jm.getJob(jobId);
        if (!job) return error(404, 'Job could not be found.');
        return ok(executionResult(job));
      }
      return notFound();
    case 'exceptions':
      if (sub.length === 1 && method === 'GET') {
        const max = Number(req.query.get('maxExceptions') ?? '20');
        return ok(jobExceptions(jobOr404(jm, jobId), Number.isFinite(max) && max > 0 ? max : 20, Number(jm.launch.flinkVersion.split('.')[0])));
      }
      return notFound();
    case 'metrics':
      if (sub.length === 1 && method === 'GET') {
        // MetricsFilterParameter: comma-separated ids; `get` may be repeated
        const requested = req.query
          .getAll('get')
          .flatMap((v) => v.split(','))
          .map((v) => v.trim())
          .filter((v) => v !== '');
        return ok(jobMetricsResponse(jm.getJob(jobId), requested, now));
      }
      return notFound();
    case 'savepoints':
      if (sub.length === 1 && method === 'POST') {
        requireBody(req.body, 'SavepointTriggerRequestBody');
        const triggerId = jm.triggerSavepoint(
          jobId,
          {
            targetDirectory: str(req.body, 'target-directory'),
            cancelJob: bool(req.body, 'cancel-job'),
            formatType: str(req.body, 'formatType'),
            triggerId: str(req.body, 'triggerId'),
          },
          'savepoint',
        );
        return ok({ 'request-id': triggerId }, 202);
      }
      if (sub.length === 2 && method === 'GET') return ok(asyncOperationResult(jm.operation('savepoint', requireTriggerId(sub[1]), jobId)));
      return notFound();
    case 'stop':
      if (sub.length === 1 && method === 'POST') {
        requireBody(req.body, 'StopWithSavepointRequestBody');
        const triggerId = jm.triggerSavepoint(
          jobId,
          {
            targetDirectory: str(req.body, 'targetDirectory'),
            drain: bool(req.body, 'drain'),
            formatType: str(req.body, 'formatType'),
            triggerId: str(req.body, 'triggerId'),
          },
          'stop-with-savepoint',
        );
        return ok({ 'request-id': triggerId }, 202);
      }
      return notFound();
    case 'resource-requirements':
      return (sub.length === 1 ? routeResourceRequirements(jm, method, jobId, req.body) : undefined) ?? notFound();
    case 'checkpoints':
      if (sub.length === 1 && method === 'GET') return ok(checkpointingStatistics(jobOr404(jm, jobId)));
      if (sub.length === 1 && method === 'POST') {
        requireBody(req.body, 'CheckpointTriggerRequestBody');
        return ok(
          { 'request-id': jm.triggerCheckpoint(jobId, { checkpointType: str(req.body, 'checkpointType'), triggerId: str(req.body, 'triggerId') }) },
          202,
        );
      }
      if (sub.length === 2 && sub[1] === 'config' && method === 'GET') {
        const job = jobOr404(jm, jobId);
        const s = jm.settingsOf(job);
        return ok({
          mode: 'exactly_once',
          interval: s.checkpointIntervalMs ?? 2 ** 63, // Flink sends Long.MAX_VALUE for "off"; 2^63 is the double JSON.parse makes of it
          timeout: 600000,
          min_pause: 0,
          max_concurrent: 1,
          externalization: { enabled: s.checkpointDir !== null, delete_on_cancellation: false },
          state_backend: 'HashMapStateBackend',
          checkpoint_storage: s.checkpointDir ? 'FileSystemCheckpointStorage' : 'JobManagerCheckpointStorage',
          unaligned_checkpoints: false,
          tolerable_failed_checkpoints: 0,
          aligned_checkpoint_timeout: 0,
          checkpoints_after_tasks_finish: true,
          state_changelog_enabled: false,
          changelog_periodic_materialization_interval: 600000,
          changelog_storage: 'memory',
          job: job.jobId,
        });
      }
      if (sub.length === 3 && sub[1] === 'details' && method === 'GET') {
        const details = checkpointDetails(jobOr404(jm, jobId), Number(sub[2]));
        if (!details) return error(404, `Could not find checkpointing statistics for checkpoint ${sub[2]}.`);
        return ok(details);
      }
      if (sub.length === 2 && method === 'GET') return ok(asyncOperationResult(jm.operation('checkpoint', requireTriggerId(sub[1]), jobId)));
      return notFound();
    default:
      return notFound();
  }
}
