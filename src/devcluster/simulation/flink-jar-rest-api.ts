/**
 * The jar endpoints of a simulated session JobManager's REST API (Flink 1.19's
 * WebSubmissionExtension; shapes from rest_v1_dispatcher.yml): `GET /jars` (JarListInfo),
 * `POST /jars/upload` (multipart, JarUploadResponseBody), `DELETE /jars/:jarid` (empty body),
 * `POST /jars/:jarid/run` (JarRunRequestBody → JarRunResponseBody).
 *
 * Guarantees, as Flink answers them:
 * - upload: anything but exactly one file → 400 "Exactly 1 file must be sent, received N."; a file
 *   whose name does not end in `.jar` → 400 "Only Jar files are allowed." (JarUploadHandler); a
 *   multipart body that cannot be decoded → 500 "File upload failed." (FileUploadHandler);
 * - delete of an unknown jar → 400 "File <id> does not exist in <upload dir>." (JarDeleteHandler);
 * - run: body fields over query parameters (`entry-class`, `parallelism`, `program-args`,
 *   `programArg`, `savepointPath`, `allowNonRestoredState`; JarHandlerUtils
 *   `fromRequestBodyOrQueryParameter`); `programArgs` together with `programArgsList` → 400
 *   "Confusing request: ..."; a field of the wrong type (a job id that is not 32 hex digits, a
 *   restore mode that is not CLAIM/NO_CLAIM/LEGACY) → 400 "Request did not match expected format
 *   JarRunRequestBody." (Jackson); an unknown jar → 400 "Jar file <path> does not exist"; a
 *   duplicate job id → 400 "Could not execute application." caused by
 *   DuplicateJobSubmissionException (flink-jobmanager.ts `runJar`).
 * Errors from handlers are Flink ≥ 1.15's stringified RestHandlerException (restHandlerErrorText).
 * Only session JobManagers serve these routes; an application JobManager answers 404 as before.
 * Caveats: `POST /jars/:jarid/plan` is not simulated (404).
 */
import { FlinkRestError, restHandlerErrorText, type JarRunRequest } from './flink-jobmanager-context.js';
import type { SimulatedJobManager } from './flink-jobmanager.js';
import type { MultipartFormData } from './flink-jar-uploads.js';

export interface JarRestRequest {
  readonly method: string;
  /** Path segments, starting with `jars`. */
  readonly parts: readonly string[];
  readonly query: URLSearchParams;
  readonly body: unknown;
  /** The decoded multipart body; undefined when the request was not multipart, null when it could not be decoded. */
  readonly multipart?: MultipartFormData | null;
}

const RUN_BODY = 'JarRunRequestBody';
const RESTORE_MODES = ['CLAIM', 'NO_CLAIM', 'LEGACY'];

function malformedBody(): FlinkRestError {
  return new FlinkRestError(400, `Request did not match expected format ${RUN_BODY}.`);
}

/** Flink's JarHandlerUtils.tokenizeArguments: whitespace-separated, quotes group (and are dropped). */
function tokenizeArguments(args: string): string[] {
  return [...args.matchAll(/([^"'\s]\S*|".+?"|'.+?')\s*/g)].map((m) => m[0].trim().replace(/["']/g, ''));
}

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw malformedBody();
  return value === '' ? null : value;
}

/** The JarRunRequestBody fields with their JSON types checked (the unknown-field check is the caller's). */
function readRunRequest(jarId: string, rawBody: unknown, query: URLSearchParams): JarRunRequest {
  const body = (rawBody ?? {}) as Record<string, unknown>;
  const queryString = (name: string) => {
    const value = query.get(name);
    return value === null || value === '' ? null : value;
  };
  const entryClass = optionalString(body, 'entryClass') ?? queryString('entry-class');
  const programArgs = optionalString(body, 'programArgs') ?? queryString('program-args');
  let programArgsList: string[] = [];
  if (body.programArgsList !== undefined && body.programArgsList !== null) {
    if (!Array.isArray(body.programArgsList) || !body.programArgsList.every((a) => typeof a === 'string')) throw malformedBody();
    programArgsList = body.programArgsList;
  } else if (query.has('programArg')) {
    programArgsList = query.getAll('programArg').flatMap((v) => v.split(','));
  }
  if (programArgsList.length > 0 && programArgs !== null && tokenizeArguments(programArgs).length > 0) {
    throw new FlinkRestError(400, restHandlerErrorText('Confusing request: programArgs and programArgsList are specified, please, use only programArgsList'));
  }
  let parallelism: number | null = null;
  if (body.parallelism !== undefined && body.parallelism !== null) {
    if (!Number.isInteger(body.parallelism)) throw malformedBody();
    parallelism = body.parallelism as number;
  } else if (queryString('parallelism') !== null) {
    parallelism = Number(queryString('parallelism'));
    if (!Number.isInteger(parallelism))
      throw new FlinkRestError(
        400,
        `Bad request, could not parse parameters: Cannot resolve query parameter (parallelism) from value "${queryString('parallelism')}".`,
      );
  }
  if (parallelism !== null && parallelism <= 0) parallelism = null; // ExecutionConfig.PARALLELISM_DEFAULT (-1): the configuration decides
  const jobId = optionalString(body, 'jobId');
  if (jobId !== null && !/^[0-9a-fA-F]{32}$/.test(jobId)) throw malformedBody();
  const restoreMode = optionalString(body, 'restoreMode');
  if (restoreMode !== null && !RESTORE_MODES.includes(restoreMode)) throw malformedBody();
  let allowNonRestoredState = false;
  if (body.allowNonRestoredState !== undefined && body.allowNonRestoredState !== null) {
    if (typeof body.allowNonRestoredState !== 'boolean') throw malformedBody();
    allowNonRestoredState = body.allowNonRestoredState;
  } else if (query.has('allowNonRestoredState')) {
    allowNonRestoredState = query.get('allowNonRestoredState') === 'true';
  }
  const flinkConfiguration = new Map<string, string>();
  if (body.flinkConfiguration !== undefined && body.flinkConfiguration !== null) {
    const config = body.flinkConfiguration;
    if (typeof config !== 'object' || Array.isArray(config)) throw malformedBody();
    for (const [key, value] of Object.entries(config as Record<string, unknown>)) {
      if (typeof value !== 'string') throw malformedBody();
      flinkConfiguration.set(key, value);
    }
  }
  return {
    jarId,
    entryClass,
    programArgs: programArgsList.length > 0 ? programArgsList : programArgs === null ? [] : tokenizeArguments(programArgs),
    parallelism,
    jobId: jobId?.toLowerCase() ?? null,
    savepointPath: optionalString(body, 'savepointPath') ?? queryString('savepointPath'),
    allowNonRestoredState,
    restoreMode,
    flinkConfiguration,
  };
}

/** Serves a `/jars…` request on a session JobManager; undefined when no jar route matches (404 for the caller). */
export function routeJarRequest(jm: SimulatedJobManager, req: JarRestRequest): { status: number; body: unknown } | undefined {
  if (jm.launch.args.role !== 'session-jobmanager') return undefined;
  const { parts, method } = req;
  if (parts.length === 1 && method === 'GET') {
    const address = `http://${jm.launch.config.get('rest.address') ?? jm.pod.name}:${jm.launch.settings.restPort}`;
    return {
      status: 200,
      body: { address, files: jm.jars.list().map((jar) => ({ id: jar.id, name: jar.name, uploaded: jar.uploaded, entry: [] })) },
    };
  }
  if (parts.length === 2 && parts[1] === 'upload' && method === 'POST') {
    if (req.multipart === null) return { status: 500, body: { errors: ['File upload failed.'] } };
    const files = req.multipart?.files ?? [];
    if (files.length !== 1) throw new FlinkRestError(400, restHandlerErrorText(`Exactly 1 file must be sent, received ${files.length}.`));
    if (!files[0].filename.endsWith('.jar')) throw new FlinkRestError(400, restHandlerErrorText('Only Jar files are allowed.'));
    const jar = jm.jars.add(files[0]);
    return { status: 200, body: { filename: jm.jars.pathOf(jar.id), status: 'success' } };
  }
  if (parts.length === 2 && method === 'DELETE') {
    const jarId = decodeURIComponent(parts[1]);
    if (!jm.jars.remove(jarId)) throw new FlinkRestError(400, restHandlerErrorText(`File ${jarId} does not exist in ${jm.jars.directory}.`));
    return { status: 200, body: {} };
  }
  if (parts.length === 3 && parts[2] === 'run' && method === 'POST') {
    const jobid = jm.runJar(readRunRequest(decodeURIComponent(parts[1]), req.body, req.query));
    return { status: 200, body: { jobid } };
  }
  return undefined;
}
