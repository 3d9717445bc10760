/**
 * Session clusters on the simulated Flink JobManager: a JobManager started with Flink's session
 * entrypoint has no job, takes jars through POST /jars/upload and runs them through
 * POST /jars/:jarid/run, several jobs side by side, each with its own savepoints and lineage.
 * Time is node:test's mocked clock (setTimeout, setInterval and Date), so nothing sleeps.
 *
 * Real behaviour asserted, with its source (apache/flink, flink-runtime-web unless said otherwise):
 * - JarUploadHandler: exactly one file ("Exactly 1 file must be sent, received N."), `.jar` only
 *   ("Only Jar files are allowed."), stored as `<upload dir>/<UUID>_<name>`, answer
 *   `{filename: <that path>, status: "success"}`;
 * - JarListHandler: `{address, files: [{id, name, uploaded, entry}]}`, newest first;
 * - JarDeleteHandler: unknown jar → 400 "File <id> does not exist in <dir>.";
 * - JarRunHandler + JarHandlerUtils: body wins over query parameters; `programArgs` with
 *   `programArgsList` → 400 "Confusing request…"; unknown jar → 400 "Jar file <path> does not exist";
 *   a failed program → 400 "Could not execute application.";
 * - flink-runtime Dispatcher.submitJob / DuplicateJobSubmissionException: a job id the cluster has
 *   (running or globally terminal) → "Job has already been submitted.";
 * - flink-runtime AbstractHandler.handleException (Flink ≥ 1.15): the error is the stringified
 *   RestHandlerException;
 * - StandaloneSessionClusterEntrypoint / KubernetesSessionClusterEntrypoint start no job.
 */
import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildJobManagerLaunch } from '../../../src/devcluster/simulation/jobmanager-launch.js';
import { parseFlinkConfigYaml } from '../../../src/devcluster/simulation/flink-configuration.js';
import { SimulatedJobManager } from '../../../src/devcluster/simulation/flink-jobmanager.js';
import type { JobManagerTiming } from '../../../src/devcluster/simulation/flink-jobmanager-context.js';
import { handleFlinkRequest, type FlinkRestResponse } from '../../../src/devcluster/simulation/flink-rest-api.js';
import { multipartBoundary, parseMultipartFormData, type MultipartFormData } from '../../../src/devcluster/simulation/flink-jar-uploads.js';
import { LineageRecorder } from '../../../src/devcluster/simulation/lineage-recorder.js';
import { SnapshotStorage } from '../../../src/devcluster/simulation/snapshot-storage.js';
import { InMemoryHaMetadataStore } from '../../../src/devcluster/simulation/ha-metadata.js';
import { seededRandom } from '../../../src/devcluster/simulation/simulation-random.js';

const TIMING: JobManagerTiming = {
  jobStartDelayMs: 10,
  savepointDurationMs: 20,
  cancelDurationMs: 5,
  disposalDurationMs: 5,
  defaultCheckpointIntervalMs: null,
};
const JOB_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1';
const JOB_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2';
const JOB_C = 'ccccccccccccccccccccccccccccccc3';

interface Session {
  readonly jm: SimulatedJobManager;
  readonly lineage: LineageRecorder;
  call(method: string, path: string, body?: unknown, multipart?: MultipartFormData | null): FlinkRestResponse;
}

let started: SimulatedJobManager[] = [];

beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_700_000_000_000 }));
afterEach(() => {
  for (const jm of started) jm.stop();
  started = [];
  mock.timers.reset();
});

async function session(args: string[] = ['jobmanager'], config: Record<string, string> = {}): Promise<Session> {
  const yaml = Object.entries({ 'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints', 'parallelism.default': '2', ...config })
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join('\n');
  const lineage = new LineageRecorder();
  const jm = new SimulatedJobManager({
    pod: { namespace: 'ns1', name: 'shared-jm-0', uid: 'uid-0' },
    deployment: { namespace: 'ns1', name: 'shared' },
    launch: buildJobManagerLaunch(args, parseFlinkConfigYaml(yaml), 'flink:1.19'),
    storage: new SnapshotStorage(),
    lineage,
    ha: new InMemoryHaMetadataStore(),
    random: seededRandom(11),
    timing: TIMING,
    now: () => Date.now(),
  });
  started.push(jm);
  await jm.start();
  const call = (method: string, path: string, body?: unknown, multipart?: MultipartFormData | null) => {
    const url = new URL(path, 'http://jm');
    return handleFlinkRequest(
      jm,
      { method, path: url.pathname, query: url.searchParams, body, ...(multipart !== undefined ? { multipart } : {}) },
      lineage,
      Date.now(),
    );
  };
  return { jm, lineage, call };
}

/** A multipart body as curl -F "jarfile=@<name>" sends it, decoded by the same parser the service proxy uses. */
function upload(...names: string[]): MultipartFormData {
  const boundary = '------------------------d74496d66958873e';
  const parts = names.map(
    (name) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="jarfile"; filename="${name}"\r\nContent-Type: application/x-java-archive\r\n\r\nPK\u0003\u0004jar-bytes\r\n`,
  );
  const body = Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'latin1');
  const parsed = parseMultipartFormData(body, multipartBoundary(`multipart/form-data; boundary=${boundary}`)!);
  assert.ok(parsed);
  return parsed;
}

function json(res: FlinkRestResponse): Record<string, unknown> {
  return res.body as Record<string, unknown>;
}

function uploadJar(s: Session, name = 'StateMachineExample.jar'): string {
  const res = s.call('POST', '/jars/upload', undefined, upload(name));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return String(json(res).filename).split('/').pop()!;
}

function jobState(s: Session, jobId: string): string | undefined {
  return s.jm.getJob(jobId)?.state;
}

async function savepoint(s: Session, jobId: string, path: 'savepoints' | 'stop', body: unknown): Promise<string> {
  const trigger = s.call('POST', `/jobs/${jobId}/${path}`, body);
  assert.equal(trigger.status, 202, JSON.stringify(trigger.body));
  mock.timers.tick(TIMING.savepointDurationMs);
  const status = json(s.call('GET', `/jobs/${jobId}/savepoints/${String(json(trigger)['request-id'])}`));
  assert.deepEqual((status.status as { id: string }).id, 'COMPLETED');
  return String((status.operation as { location: string }).location);
}

test('a session JobManager (standalone `jobmanager`, native `kubernetes-session`) starts with no job and serves the cluster endpoints', async () => {
  for (const args of [['jobmanager'], ['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-session']]) {
    const s = await session(args);
    mock.timers.tick(100);
    assert.deepEqual(s.call('GET', '/jobs/overview').body, { jobs: [] });
    assert.equal(json(s.call('GET', '/overview'))['jobs-running'], 0);
    const config = json(s.call('GET', '/config'));
    assert.equal(config['flink-version'], '1.19.0');
    // DashboardConfiguration.features.web-submit: web.submit.enable (default true) on a session cluster
    assert.equal((config.features as Record<string, boolean>)['web-submit'], true);
    assert.deepEqual(s.lineage.get('ns1', 'shared').submissions, []);
  }
});

test('jar upload, list and delete answer as JarUploadHandler, JarListHandler and JarDeleteHandler', async () => {
  const s = await session();
  const uploaded = s.call('POST', '/jars/upload', undefined, upload('StateMachineExample.jar'));
  assert.equal(uploaded.status, 200);
  assert.equal(json(uploaded).status, 'success');
  const filename = String(json(uploaded).filename);
  assert.match(
    filename,
    /^\/tmp\/flink-web-[0-9a-f-]{36}\/flink-web-upload\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}_StateMachineExample\.jar$/,
  );
  const firstId = filename.split('/').pop()!;
  mock.timers.tick(1000);
  const secondId = uploadJar(s, 'TopSpeedWindowing.jar');

  const list = json(s.call('GET', '/jars'));
  assert.equal(list.address, 'http://shared-jm-0:8081');
  assert.deepEqual(list.files, [
    { id: secondId, name: 'TopSpeedWindowing.jar', uploaded: 1_700_000_001_000, entry: [] },
    { id: firstId, name: 'StateMachineExample.jar', uploaded: 1_700_000_000_000, entry: [] },
  ]);

  const errorOf = (res: FlinkRestResponse) => [res.status, String((res.body as { errors: string[] }).errors[0]).split('\n')[0]];
  assert.deepEqual(errorOf(s.call('POST', '/jars/upload', undefined, upload())), [
    400,
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Exactly 1 file must be sent, received 0.',
  ]);
  assert.deepEqual(errorOf(s.call('POST', '/jars/upload')), [
    400,
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Exactly 1 file must be sent, received 0.',
  ]);
  assert.deepEqual(errorOf(s.call('POST', '/jars/upload', undefined, upload('a.jar', 'b.jar'))), [
    400,
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Exactly 1 file must be sent, received 2.',
  ]);
  assert.deepEqual(errorOf(s.call('POST', '/jars/upload', undefined, upload('job.zip'))), [
    400,
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Only Jar files are allowed.',
  ]);
  assert.deepEqual(s.call('POST', '/jars/upload', undefined, null), { status: 500, body: { errors: ['File upload failed.'] } });

  assert.deepEqual(s.call('DELETE', `/jars/${firstId}`), { status: 200, body: {} });
  assert.deepEqual(errorOf(s.call('DELETE', `/jars/${firstId}`)), [
    400,
    `org.apache.flink.runtime.rest.handler.RestHandlerException: File ${firstId} does not exist in ${s.jm.jars.directory}.`,
  ]);
  assert.deepEqual(
    (json(s.call('GET', '/jars')).files as Array<{ id: string }>).map((f) => f.id),
    [secondId],
  );
});

test('an application JobManager has no jar endpoints (404), as before', async () => {
  const s = await session(['standalone-job', '--job-classname', 'org.example.App']);
  assert.equal(s.call('GET', '/jars').status, 404);
  assert.equal(s.call('POST', '/jars/upload', undefined, upload('x.jar')).status, 404);
  assert.equal((json(s.call('GET', '/config')).features as Record<string, boolean>)['web-submit'], false);
});

test('three jobs with fixed ids run side by side; savepoints, stop and cancel act per job; overview lists them all', async () => {
  const s = await session();
  const jarId = uploadJar(s);
  const run = (body: Record<string, unknown>) => s.call('POST', `/jars/${jarId}/run`, body);
  assert.deepEqual(run({ entryClass: 'org.example.Alpha', jobId: JOB_A, parallelism: 3, programArgsList: ['--mode', 'a'] }).body, { jobid: JOB_A });
  assert.deepEqual(
    run({
      entryClass: 'org.example.Beta',
      jobId: JOB_B,
      flinkConfiguration: { 'execution.checkpointing.interval': '50ms', 'execution.checkpointing.dir': 'file:///ck' },
    }).body,
    { jobid: JOB_B },
  );
  assert.deepEqual(run({ jobId: JOB_C }).body, { jobid: JOB_C });
  assert.equal(jobState(s, JOB_A), 'INITIALIZING');
  mock.timers.tick(TIMING.jobStartDelayMs);
  const overview = json(s.call('GET', '/jobs/overview')).jobs as Array<{ jid: string; name: string; state: string; tasks: { total: number } }>;
  assert.deepEqual(
    overview.map((j) => [j.jid, j.name, j.state, j.tasks.total]),
    [
      [JOB_A, 'Alpha', 'RUNNING', 3],
      [JOB_B, 'Beta', 'RUNNING', 2], // parallelism.default of the cluster
      [JOB_C, 'Flink Streaming Job', 'RUNNING', 2],
    ],
  );
  assert.equal(json(s.call('GET', '/overview'))['jobs-running'], 3);

  // Only the job whose run configured checkpointing checkpoints (its flinkConfiguration, not the cluster's).
  mock.timers.tick(120);
  assert.equal((json(s.call('GET', `/jobs/${JOB_B}/checkpoints`)).counts as { completed: number }).completed, 2);
  assert.equal((json(s.call('GET', `/jobs/${JOB_A}/checkpoints`)).counts as { completed: number }).completed, 0);
  assert.equal(json(s.call('GET', `/jobs/${JOB_B}/checkpoints/config`)).interval, 50);

  const location = await savepoint(s, JOB_A, 'savepoints', { 'cancel-job': false });
  assert.match(location, /^file:\/flink-data\/savepoints\/savepoint-aaaaaa-[0-9a-f]{12}$/);
  await savepoint(s, JOB_B, 'stop', { drain: false });
  assert.deepEqual([jobState(s, JOB_A), jobState(s, JOB_B), jobState(s, JOB_C)], ['RUNNING', 'FINISHED', 'RUNNING']);
  const cancelledAt = new Date(Date.now()).toISOString();
  assert.equal(s.call('PATCH', `/jobs/${JOB_C}?mode=cancel`).status, 202);
  mock.timers.tick(TIMING.cancelDurationMs);
  assert.deepEqual([jobState(s, JOB_A), jobState(s, JOB_B), jobState(s, JOB_C)], ['RUNNING', 'FINISHED', 'CANCELED']);
  assert.equal(json(s.call('GET', `/jobs/${JOB_A}`)).state, 'RUNNING');
  assert.deepEqual((json(s.call('GET', `/jobs/${JOB_A}/metrics?get=numRestarts`)) as unknown as unknown[]).length, 1);
  assert.ok(Array.isArray((json(s.call('GET', `/jobs/${JOB_C}/exceptions`)).exceptionHistory as { entries: unknown[] }).entries));
  // An operation is looked up per job: job A's trigger id is unknown for job C (404).
  const trigger = json(s.call('POST', `/jobs/${JOB_A}/savepoints`, {}))['request-id'] as string;
  assert.equal(s.call('GET', `/jobs/${JOB_C}/savepoints/${trigger}`).status, 404);

  const lineage = s.lineage.get('ns1', 'shared');
  assert.deepEqual(
    lineage.submissions.map((e) => [e.jobId, e.origin, e.jarId, e.entryClass, e.parallelism, e.restoredFrom]),
    [
      [JOB_A, 'submitted', jarId, 'org.example.Alpha', 3, null],
      [JOB_B, 'submitted', jarId, 'org.example.Beta', 2, null],
      [JOB_C, 'submitted', jarId, null, 2, null],
    ],
  );
  assert.deepEqual(
    s.lineage.forJob('ns1', 'shared', JOB_B).savepoints.map((e) => [e.kind, e.status]),
    [['stop-with-savepoint', 'COMPLETED']],
  );
  assert.deepEqual(json(s.call('GET', `/simulator/lineage?jobid=${JOB_C}`)).cancellations, [{ jobId: JOB_C, at: cancelledAt }]);
});

test('a run restoring from a savepoint is recorded as restored from it; a job id the cluster already has is refused as the Dispatcher refuses it', async () => {
  const s = await session();
  const jarId = uploadJar(s);
  assert.equal(s.call('POST', `/jars/${jarId}/run`, { jobId: JOB_A }).status, 200);
  mock.timers.tick(TIMING.jobStartDelayMs);
  const location = await savepoint(s, JOB_A, 'stop', {});
  assert.equal(jobState(s, JOB_A), 'FINISHED');

  // The same id again: running or (here) globally terminal, Dispatcher.submitJob refuses it with
  // DuplicateJobSubmissionException, and JarRunHandler answers 400 "Could not execute application.".
  for (const body of [{ jobId: JOB_A }, { jobId: JOB_A.toUpperCase(), savepointPath: location }]) {
    const refused = s.call('POST', `/jars/${jarId}/run`, body);
    assert.equal(refused.status, 400);
    const text = (refused.body as { errors: string[] }).errors[0];
    assert.match(text, /^org\.apache\.flink\.runtime\.rest\.handler\.RestHandlerException: Could not execute application\.\n/);
    assert.match(text, /\nCaused by: org\.apache\.flink\.runtime\.client\.DuplicateJobSubmissionException: Job has already been submitted\./);
  }

  // Resume under a new id from the stop savepoint; query parameters stand in for absent body fields.
  const resumed = s.call('POST', `/jars/${jarId}/run?savepointPath=${encodeURIComponent('file:/ignored')}&allowNonRestoredState=true`, {
    jobId: JOB_B,
    savepointPath: location,
    restoreMode: 'NO_CLAIM',
  });
  assert.deepEqual(resumed.body, { jobid: JOB_B });
  mock.timers.tick(TIMING.jobStartDelayMs);
  const restored = (json(s.call('GET', `/jobs/${JOB_B}/checkpoints`)).latest as { restored: { external_path: string; is_savepoint: boolean } }).restored;
  assert.deepEqual([restored.external_path, restored.is_savepoint], [location, true]);

  const byId = s.lineage.submissionsByJobId('ns1', 'shared');
  assert.deepEqual([...byId.keys()], [JOB_A, JOB_B]);
  assert.deepEqual(
    byId.get(JOB_B)!.map((e) => [e.restoredFrom, e.allowNonRestoredState]),
    [[location, true]],
  );
  assert.equal(byId.get(JOB_A)!.length, 1, 'the refused runs left no submission');
  const a = s.lineage.forJob('ns1', 'shared', JOB_A);
  assert.deepEqual(
    a.savepoints.map((e) => [e.kind, e.status, e.location]),
    [['stop-with-savepoint', 'COMPLETED', location]],
  );
});

test('jar run request errors: unknown jar, malformed fields, confusing program arguments, a never-written savepoint', async () => {
  const s = await session();
  const jarId = uploadJar(s);
  const first = (res: FlinkRestResponse) => [res.status, String((res.body as { errors: string[] }).errors[0]).split('\n')[0]];
  assert.deepEqual(first(s.call('POST', '/jars/nope.jar/run', {})), [
    400,
    `org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file ${s.jm.jars.directory}/nope.jar does not exist`,
  ]);
  for (const body of [{ jobId: 'xyz' }, { restoreMode: 'DEFAULT' }, { parallelism: '2' }, { flinkConfiguration: { a: 1 } }, { noSuchField: true }]) {
    assert.deepEqual(
      first(s.call('POST', `/jars/${jarId}/run`, body)),
      [400, 'Request did not match expected format JarRunRequestBody.'],
      JSON.stringify(body),
    );
  }
  assert.deepEqual(first(s.call('POST', `/jars/${jarId}/run`, { programArgs: '--a b', programArgsList: ['--c'] })), [
    400,
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Confusing request: programArgs and programArgsList are specified, please, use only programArgsList',
  ]);
  // An invalid pinned id in the run's configuration fails the program (IllegalArgumentException).
  const invalid = s.call('POST', `/jars/${jarId}/run`, { flinkConfiguration: { '$internal.pipeline.job-id': 'not-hex' } });
  assert.deepEqual(first(invalid), [400, 'org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.']);
  assert.deepEqual(s.jm.listJobs(), []);

  // A savepoint that was never written: the run succeeds, the job FAILS initialising (as in application mode).
  assert.equal(s.call('POST', `/jars/${jarId}/run`, { jobId: JOB_C, savepointPath: 'file:/flink-data/savepoints/never' }).status, 200);
  mock.timers.tick(TIMING.jobStartDelayMs);
  assert.equal(jobState(s, JOB_C), 'FAILED');
  assert.equal(s.lineage.forJob('ns1', 'shared', JOB_C).submissions[0].restoredFrom, 'file:/flink-data/savepoints/never');
});

test('multipart parsing: boundaries, attributes, and bodies that are not multipart', () => {
  assert.equal(multipartBoundary('application/json'), null);
  assert.equal(multipartBoundary('multipart/form-data; boundary="a b"'), 'a b');
  assert.equal(multipartBoundary('multipart/form-data'), '');
  const body = Buffer.from(
    '--X\r\nContent-Disposition: form-data; name="request"\r\n\r\n{"a":1}\r\n--X\r\nContent-Disposition: form-data; name="jarfile"; filename="j.jar"\r\n\r\n\u0000\u00ff\r\n--X--\r\n',
    'latin1',
  );
  const parsed = parseMultipartFormData(body, 'X');
  assert.deepEqual(parsed?.files, [{ field: 'jarfile', filename: 'j.jar', contentType: null, size: 2 }]);
  assert.equal(parsed?.attributes.get('request'), '{"a":1}');
  assert.equal(parseMultipartFormData(Buffer.from('garbage'), 'X'), null);
  assert.equal(parseMultipartFormData(body, ''), null);
});
