/**
 * Flink's resource-requirements endpoint (FLIP-291, Flink 1.18+) as a simulated JobManager serves
 * it: `GET /jobs/:jobid/resource-requirements` answers each job vertex's parallelism bounds,
 * `PUT` sets new ones and the adaptive scheduler rescales the job in place: the same job (same id,
 * no new submission) restarts with the new parallelism from its own state.
 *
 * Faithful to Flink (../shared/reference/flink-rest-v1-dispatcher.yml; Flink's
 * JobResourceRequirementsHandler / JobResourceRequirementsUpdateHandler, Dispatcher
 * .updateJobResourceRequirements, JobResourceRequirements.validate, SchedulerNG, AdaptiveScheduler):
 * - before 1.18 the route does not exist: 404 `Not found: <path>` (Flink's router);
 * - a job the JobManager does not run (unknown, or ended): 404, as the Dispatcher has no JobMaster for it;
 * - without the adaptive scheduler both calls fail on the JobMaster: SchedulerNG's default
 *   `The DefaultScheduler does not support changing the parallelism without a job restart. …`,
 *   which the REST handler answers as 500 `Internal server error.` with the exception;
 * - in reactive mode the PUT fails the same way: `Cannot change the parallelism of a job running in reactive mode.`;
 * - the body is `{ "<vertex id>": { "parallelism": { "lowerBound": n, "upperBound": m } } }`: not
 *   that shape is 400 `Request did not match expected format JobResourceRequirementsBody.`, an
 *   empty one 400 `Request body does not specify resource requirements.`; the validation errors
 *   (unknown vertex, missing vertex, lower bound above upper bound, upper bound above the vertex's
 *   max parallelism) are one 400, joined by newlines;
 * - GET answers lowerBound = the vertex's min parallelism (1 unless a PUT set it), upperBound = its parallelism;
 * - a PUT of the bounds the job already has changes nothing (no restart).
 * Caveats: the job has one vertex (SIMULATED_VERTEX_ID); the new parallelism is the upper bound
 * whatever the slots (TaskManagers are not required for the simulated job to run), and native-mode
 * TaskManager pods are not added or removed for it.
 */
import { SIMULATED_VERTEX_ID, type SimulatedFlinkJob } from './flink-job.js';
import type { SimulatedJobManager } from './flink-jobmanager.js';
import { FlinkRestError } from './flink-jobmanager-context.js';
import type { FlinkRestResponse } from './flink-rest-api.js';

export interface VertexParallelism {
  readonly lowerBound: number;
  readonly upperBound: number;
}

const FIRST_VERSION = [1, 18];

/** Whether the JobManager's Flink version serves the endpoint (1.18 and newer). */
export function servesResourceRequirements(jm: SimulatedJobManager): boolean {
  const [major = 0, minor = 0] = jm.launch.flinkVersion.split('.').map((part) => Number.parseInt(part, 10));
  return major > FIRST_VERSION[0] || (major === FIRST_VERSION[0] && minor >= FIRST_VERSION[1]);
}

/** The JobMaster's call failed: AbstractHandler answers an exception that is not a RestHandlerException with 500 and the exception. */
class JobMasterFailure extends Error {}

function unsupported(message: string): JobMasterFailure {
  return new JobMasterFailure(`java.util.concurrent.CompletionException: java.lang.UnsupportedOperationException: ${message}`);
}

function schedulerRefusal(): JobMasterFailure {
  return unsupported(
    'The DefaultScheduler does not support changing the parallelism without a job restart. This feature is currently only expected to work with the AdaptiveScheduler.',
  );
}

/**
 * GET and PUT /jobs/:jobid/resource-requirements; undefined for any other method, or a Flink
 * version without the route (the caller answers 404 then). FlinkRestErrors are thrown as by the
 * other handlers.
 */
export function routeResourceRequirements(jm: SimulatedJobManager, method: string, jobId: string, body: unknown): FlinkRestResponse | undefined {
  if (!servesResourceRequirements(jm) || (method !== 'GET' && method !== 'PUT')) return undefined;
  try {
    if (method === 'GET') return { status: 200, body: getResourceRequirements(jm, jobId) };
    updateResourceRequirements(jm, jobId, body);
    return { status: 200, body: {} };
  } catch (error) {
    if (!(error instanceof JobMasterFailure)) throw error;
    return { status: 500, body: { errors: ['Internal server error.', `<Exception on server side:\n${error.message}\nEnd of exception on server side>`] } };
  }
}

function runningJob(jm: SimulatedJobManager, jobId: string): SimulatedFlinkJob {
  const job = jm.getJob(jobId);
  if (!job || job.isTerminal) throw new FlinkRestError(404, `Job ${jobId} not found`);
  return job;
}

/** GET /jobs/:jobid/resource-requirements (JobResourceRequirementsBody). */
export function getResourceRequirements(jm: SimulatedJobManager, jobId: string): Record<string, { parallelism: VertexParallelism }> {
  const job = runningJob(jm, jobId);
  if (!jm.settingsOf(job).adaptiveScheduler) throw schedulerRefusal();
  return { [SIMULATED_VERTEX_ID]: { parallelism: { lowerBound: job.parallelismLowerBound, upperBound: job.parallelism } } };
}

/** PUT /jobs/:jobid/resource-requirements: validated as Flink validates it, then the job rescales in place. */
export function updateResourceRequirements(jm: SimulatedJobManager, jobId: string, body: unknown): void {
  const requested = parseBody(body);
  const job = runningJob(jm, jobId);
  const errors = validationErrors(requested, job);
  if (errors.length > 0) throw new FlinkRestError(400, errors.join('\n'));
  const settings = jm.settingsOf(job);
  if (!settings.adaptiveScheduler) throw schedulerRefusal();
  if (settings.reactive) throw unsupported('Cannot change the parallelism of a job running in reactive mode.');
  jm.rescaleJob(job, requested.get(SIMULATED_VERTEX_ID)!);
}

const BAD_FORMAT = 'Request did not match expected format JobResourceRequirementsBody.';

function parseBody(body: unknown): Map<string, VertexParallelism> {
  if (body === undefined) throw new FlinkRestError(400, 'Request body does not specify resource requirements.');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new FlinkRestError(400, BAD_FORMAT);
  const requested = new Map<string, VertexParallelism>();
  for (const [vertexId, value] of Object.entries(body as Record<string, unknown>)) {
    // JobVertexID is 32 hex digits; JobVertexResourceRequirements has the one field `parallelism`.
    if (!/^[0-9a-fA-F]{32}$/.test(vertexId) || value === null || typeof value !== 'object') throw new FlinkRestError(400, BAD_FORMAT);
    const fields = value as Record<string, unknown>;
    const parallelism = fields.parallelism as Record<string, unknown> | null | undefined;
    if (Object.keys(fields).some((k) => k !== 'parallelism') || parallelism === null || typeof parallelism !== 'object')
      throw new FlinkRestError(400, BAD_FORMAT);
    const { lowerBound, upperBound } = parallelism;
    if (!Number.isInteger(lowerBound) || !Number.isInteger(upperBound)) throw new FlinkRestError(400, BAD_FORMAT);
    requested.set(vertexId.toLowerCase(), { lowerBound: lowerBound as number, upperBound: upperBound as number });
  }
  if (requested.size === 0) throw new FlinkRestError(400, 'Request body does not specify resource requirements.');
  return requested;
}

/** JobResourceRequirements.validate against the job's one vertex. */
function validationErrors(requested: ReadonlyMap<string, VertexParallelism>, job: SimulatedFlinkJob): string[] {
  const errors: string[] = [];
  for (const [vertexId, { lowerBound, upperBound }] of requested) {
    if (vertexId !== SIMULATED_VERTEX_ID) {
      errors.push(`Job vertex [${vertexId}] was not found in the JobGraph.`);
      continue;
    }
    if (lowerBound > upperBound)
      errors.push(`The requested lower bound [${lowerBound}] for job vertex [${vertexId}] is higher than the upper bound [${upperBound}].`);
    if (job.maxParallelism < upperBound)
      errors.push(`The newly requested parallelism ${upperBound} for the job vertex ${vertexId} exceeds its maximum parallelism ${job.maxParallelism}.`);
  }
  if (!requested.has(SIMULATED_VERTEX_ID)) errors.push(`The request is incomplete, missing job vertex [${SIMULATED_VERTEX_ID}] resource requirements.`);
  return errors;
}
