/**
 * A Flink session cluster on the development cluster: the JobManager Deployment a session
 * FlinkDeployment renders (container args `jobmanager`, Flink's StandaloneSessionClusterEntrypoint
 * through docker-entrypoint.sh), reached through the API server's service proxy as the operator
 * reaches it. A jar is uploaded as curl / the operator's RestClient upload it (multipart/form-data,
 * part `jarfile`; JarUploadHandler), three jobs are run with fixed ids (JarRunHandler, the
 * JarRunRequestBody `jobId` field), one is savepointed, one stopped with a savepoint and resumed
 * from it under a new id, and the lineage tells the jobs apart.
 *
 * Real behaviour asserted (apache/flink): JarUploadHandler answers `{filename, status: "success"}`;
 * JarRunHandler answers `{jobid}` and 400 "Could not execute application." caused by the
 * Dispatcher's DuplicateJobSubmissionException ("Job has already been submitted.") for a job id the
 * cluster already has; JarDeleteHandler answers `{}`; the session entrypoint starts no job.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Harness, eventually, freshNamespace, rolledOut, startHarness } from './simulation-harness.js';
import { applyRendered, renderFlinkResources } from './rendered-flink-resources.js';

const JOBS = ['5e55100000000000000000000000000a', '5e55100000000000000000000000000b', '5e55100000000000000000000000000c'];
const RESUMED = '5e55100000000000000000000000001c';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.sc.stop();
});

interface ProxyAnswer {
  status: number;
  body: any;
}

async function viaProxy(ns: string, path: string, init: { method?: string; body?: unknown; form?: FormData } = {}): Promise<ProxyAnswer> {
  const res = await fetch(`${h.sc.cluster.url}/api/v1/namespaces/${ns}/services/shared-rest:rest/proxy${path}`, {
    method: init.method ?? 'GET',
    headers: init.body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: init.form ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function state(ns: string, jobId: string): Promise<string | undefined> {
  return (await viaProxy(ns, '/jobs/overview')).body?.jobs?.find((j: { jid: string }) => j.jid === jobId)?.state;
}

async function savepoint(ns: string, jobId: string, kind: 'savepoints' | 'stop'): Promise<string> {
  const trigger = await viaProxy(ns, `/jobs/${jobId}/${kind}`, { method: 'POST', body: {} });
  assert.equal(trigger.status, 202, JSON.stringify(trigger.body));
  return eventually(async () => {
    const r = await viaProxy(ns, `/jobs/${jobId}/savepoints/${trigger.body['request-id']}`);
    return r.body?.status?.id === 'COMPLETED' ? (r.body.operation.location as string) : undefined;
  }, `${kind} of ${jobId}`);
}

test('a session JobManager: upload a jar, run three jobs with fixed ids, savepoint, stop and resume, lineage per job', async () => {
  const ns = await freshNamespace(h, 'session');
  const rendered = renderFlinkResources('shared');
  // A session cluster: `jobmanager` args and no pinned job id (the renderer of a FlinkDeployment without `job`).
  rendered.jobManager.spec!.template.spec!.containers[0].args = ['jobmanager'];
  rendered.configMap.data!['config.yaml'] = rendered.configMap
    .data!['config.yaml'].split('\n')
    .filter((line) => !line.startsWith('$internal.pipeline.job-id'))
    .join('\n');
  await applyRendered(h, ns, rendered);
  await rolledOut(h, ns, 'shared', 1, 1);
  await eventually(async () => (await viaProxy(ns, '/config')).status === 200, 'session REST endpoint up');
  assert.deepEqual((await viaProxy(ns, '/jobs/overview')).body, { jobs: [] });

  const form = new FormData();
  form.append('jarfile', new Blob([Buffer.from('PK\u0003\u0004simulated jar')], { type: 'application/x-java-archive' }), 'StateMachineExample.jar');
  const uploaded = await viaProxy(ns, '/jars/upload', { method: 'POST', form });
  assert.equal(uploaded.status, 200, JSON.stringify(uploaded.body));
  assert.equal(uploaded.body.status, 'success');
  const jarId = String(uploaded.body.filename).split('/').pop()!;
  assert.match(jarId, /^[0-9a-f-]{36}_StateMachineExample\.jar$/);
  assert.deepEqual(
    (await viaProxy(ns, '/jars')).body.files.map((f: { id: string; name: string }) => [f.id, f.name]),
    [[jarId, 'StateMachineExample.jar']],
  );

  for (const jobId of JOBS) {
    const run = await viaProxy(ns, `/jars/${jarId}/run`, {
      method: 'POST',
      body: { entryClass: 'org.apache.flink.streaming.examples.statemachine.StateMachineExample', jobId, parallelism: 1, programArgsList: ['--job', jobId] },
    });
    assert.deepEqual([run.status, run.body], [200, { jobid: jobId }]);
  }
  for (const jobId of JOBS) await eventually(async () => (await state(ns, jobId)) === 'RUNNING', `${jobId} RUNNING`);

  // Running a job id again fails as the Dispatcher fails it (DuplicateJobSubmissionException).
  const duplicate = await viaProxy(ns, `/jars/${jarId}/run`, { method: 'POST', body: { jobId: JOBS[0] } });
  assert.equal(duplicate.status, 400);
  assert.match(
    duplicate.body.errors[0],
    /RestHandlerException: Could not execute application\.[\s\S]*DuplicateJobSubmissionException: Job has already been submitted\./,
  );

  const manual = await savepoint(ns, JOBS[0], 'savepoints');
  const stopped = await savepoint(ns, JOBS[2], 'stop');
  await eventually(async () => (await state(ns, JOBS[2])) === 'FINISHED', 'stopped job FINISHED');
  const resumed = await viaProxy(ns, `/jars/${jarId}/run`, { method: 'POST', body: { jobId: RESUMED, savepointPath: stopped, parallelism: 1 } });
  assert.deepEqual([resumed.status, resumed.body], [200, { jobid: RESUMED }]);
  await eventually(async () => (await state(ns, RESUMED)) === 'RUNNING', 'resumed job RUNNING');
  const restored = (await viaProxy(ns, `/jobs/${RESUMED}/checkpoints`)).body.latest.restored;
  assert.equal(restored.external_path, stopped);
  assert.deepEqual(await Promise.all([...JOBS, RESUMED].map((id) => state(ns, id))), ['RUNNING', 'RUNNING', 'FINISHED', 'RUNNING']);

  // Lineage: one record for the session cluster; each job id submitted once; savepoints per job.
  const record = h.sc.simulation.lineage(ns, 'shared');
  assert.deepEqual(
    record.submissions.map((s) => [s.jobId, s.restoredFrom, s.jarId]),
    [
      [JOBS[0], null, jarId],
      [JOBS[1], null, jarId],
      [JOBS[2], null, jarId],
      [RESUMED, stopped, jarId],
    ],
  );
  assert.deepEqual(
    record.savepoints.map((s) => [s.jobId, s.kind, s.status, s.location]),
    [
      [JOBS[0], 'savepoint', 'COMPLETED', manual],
      [JOBS[2], 'stop-with-savepoint', 'COMPLETED', stopped],
    ],
  );
  const perJob = (await viaProxy(ns, `/simulator/lineage?jobid=${RESUMED}`)).body;
  assert.deepEqual(
    perJob.submissions.map((s: { restoredFrom: string; origin: string }) => [s.restoredFrom, s.origin]),
    [[stopped, 'submitted']],
  );
  assert.deepEqual(perJob.savepoints, []);

  assert.deepEqual(await viaProxy(ns, `/jars/${jarId}`, { method: 'DELETE' }), { status: 200, body: {} });
  assert.deepEqual((await viaProxy(ns, '/jars')).body.files, []);
  assert.deepEqual(h.errors, []);
});
