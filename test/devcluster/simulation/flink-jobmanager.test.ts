import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildJobManagerLaunch, parseFlinkArgs } from '../../../src/devcluster/simulation/jobmanager-launch.js';
import { parseFlinkConfigYaml, parseFlinkDuration } from '../../../src/devcluster/simulation/flink-configuration.js';
import { SimulatedJobManager } from '../../../src/devcluster/simulation/flink-jobmanager.js';
import type { JobManagerTiming } from '../../../src/devcluster/simulation/flink-jobmanager-context.js';
import { handleFlinkRequest, type FlinkRestResponse } from '../../../src/devcluster/simulation/flink-rest-api.js';
import { LineageRecorder } from '../../../src/devcluster/simulation/lineage-recorder.js';
import { SnapshotStorage } from '../../../src/devcluster/simulation/snapshot-storage.js';
import { InMemoryHaMetadataStore } from '../../../src/devcluster/simulation/ha-metadata.js';
import { seededRandom } from '../../../src/devcluster/simulation/simulation-random.js';

const JOB_ID = '0123456789abcdef0123456789abcdef';
const TIMING: JobManagerTiming = {
  jobStartDelayMs: 10,
  savepointDurationMs: 15,
  cancelDurationMs: 5,
  disposalDurationMs: 5,
  defaultCheckpointIntervalMs: null,
};

interface World {
  storage: SnapshotStorage;
  lineage: LineageRecorder;
  ha: InMemoryHaMetadataStore;
  random: () => number;
  started: SimulatedJobManager[];
}

function world(): World {
  return { storage: new SnapshotStorage(), lineage: new LineageRecorder(), ha: new InMemoryHaMetadataStore(), random: seededRandom(7), started: [] };
}

function configYaml(extra: Record<string, string> = {}): string {
  const base: Record<string, string> = {
    '$internal.pipeline.job-id': JOB_ID,
    'parallelism.default': '2',
    'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
    'kubernetes.cluster-id': 'demo',
    ...extra,
  };
  return Object.entries(base)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join('\n');
}

async function startJm(w: World, opts: { config?: Record<string, string>; extraArgs?: string[]; podName?: string } = {}): Promise<SimulatedJobManager> {
  const launch = buildJobManagerLaunch(
    ['standalone-job', '--job-classname', 'org.example.StateMachineExample', ...(opts.extraArgs ?? [])],
    parseFlinkConfigYaml(configYaml(opts.config)),
    'flink:1.20',
  );
  const jm = new SimulatedJobManager({
    pod: { namespace: 'ns1', name: opts.podName ?? `demo-jm-${w.started.length}`, uid: `uid-${w.started.length}` },
    deployment: { namespace: 'ns1', name: 'demo' },
    launch,
    storage: w.storage,
    lineage: w.lineage,
    ha: w.ha,
    random: w.random,
    timing: TIMING,
  });
  w.started.push(jm);
  await jm.start();
  return jm;
}

function call(w: World, jm: SimulatedJobManager, method: string, path: string, body?: unknown): FlinkRestResponse {
  const url = new URL(path, 'http://jm');
  return handleFlinkRequest(jm, { method, path: url.pathname, query: url.searchParams, body }, w.lineage);
}

function bodyOf(res: FlinkRestResponse): any {
  return res.body;
}

async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function stopAll(w: World): void {
  for (const jm of w.started) jm.stop();
}

async function runningJm(w: World, opts: Parameters<typeof startJm>[1] = {}): Promise<SimulatedJobManager> {
  const jm = await startJm(w, opts);
  await until(() => jm.getJob(JOB_ID)?.state === 'RUNNING', 'job RUNNING');
  return jm;
}

async function takeSavepoint(w: World, jm: SimulatedJobManager, body: unknown = {}): Promise<{ triggerId: string; result: any }> {
  const trigger = call(w, jm, 'POST', `/jobs/${JOB_ID}/savepoints`, body);
  assert.equal(trigger.status, 202);
  const triggerId = bodyOf(trigger)['request-id'] as string;
  const result = await until(() => {
    const r = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/savepoints/${triggerId}`));
    return r.status.id === 'COMPLETED' ? r : undefined;
  }, 'savepoint completion');
  return { triggerId, result };
}

test('launch: args and config are read as Flink reads them', () => {
  const args = parseFlinkArgs([
    'standalone-job',
    '--job-classname',
    'a.B',
    '--fromSavepoint',
    'file:/sp/1',
    '--allowNonRestoredState',
    '-Dfoo=bar',
    '-D',
    'x=y',
    'user',
    '--flag',
  ]);
  assert.equal(args.role, 'application-jobmanager');
  assert.equal(args.jobClassName, 'a.B');
  assert.equal(args.fromSavepoint, 'file:/sp/1');
  assert.equal(args.allowNonRestoredState, true);
  assert.deepEqual(
    [...args.dynamicProperties],
    [
      ['foo', 'bar'],
      ['x', 'y'],
    ],
  );
  assert.deepEqual(args.programArgs, ['user', '--flag']);

  const nested = parseFlinkConfigYaml('state:\n  savepoints.dir: file:///sp\nhigh-availability:\n  type: kubernetes\ntaskmanager.numberOfTaskSlots: 2\n');
  const launch = buildJobManagerLaunch(['standalone-job'], nested, 'flink:2.2');
  assert.equal(launch.settings.savepointDir, 'file:///sp');
  assert.equal(launch.settings.highAvailability.enabled, true);
  assert.equal(launch.settings.slotsPerTaskManager, 2);
  assert.equal(launch.flinkVersion, '2.2.0');
  assert.equal(parseFlinkDuration('30s'), 30_000);
  assert.equal(parseFlinkDuration('10 s'), 10_000);
  assert.equal(parseFlinkDuration('500 ms'), 500);
  assert.equal(parseFlinkDuration('250'), 250);
  assert.equal(parseFlinkDuration('2 min'), 120_000);
  assert.throws(() => parseFlinkDuration('soon'));
  assert.throws(() => buildJobManagerLaunch(['standalone-job'], new Map([['$internal.pipeline.job-id', 'xyz']])), /32 hexadecimal/);
});

test('job goes INITIALIZING -> RUNNING with the pinned job id and Flink response shapes', async () => {
  const w = world();
  try {
    const jm = await startJm(w);
    const early = bodyOf(call(w, jm, 'GET', '/jobs/overview'));
    assert.equal(early.jobs.length, 1);
    assert.equal(early.jobs[0].jid, JOB_ID);
    assert.equal(early.jobs[0].state, 'INITIALIZING');
    await until(() => jm.getJob(JOB_ID)?.state === 'RUNNING', 'RUNNING');
    const overview = bodyOf(call(w, jm, 'GET', '/jobs/overview')).jobs[0];
    assert.equal(overview.state, 'RUNNING');
    assert.equal(overview.name, 'StateMachineExample');
    assert.equal(overview['end-time'], -1);
    assert.equal(typeof overview['start-time'], 'number');
    assert.equal(overview.tasks.running, 2);
    const details = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}`));
    assert.equal(details.jid, JOB_ID);
    assert.equal(details.state, 'RUNNING');
    assert.ok(details.timestamps.RUNNING > 0);
    assert.equal(details.timestamps.CANCELED, 0);
    assert.equal(details.vertices[0].parallelism, 2);
    const config = bodyOf(call(w, jm, 'GET', '/config'));
    assert.equal(config['flink-version'], '1.20.0');
    assert.equal(typeof config['refresh-interval'], 'number');
    assert.deepEqual(bodyOf(call(w, jm, 'GET', '/jobs')), { jobs: [{ id: JOB_ID, status: 'RUNNING' }] });
    assert.deepEqual(call(w, jm, 'GET', '/nope'), { status: 404, body: { errors: ['Not found: /nope'] } });
    assert.equal(call(w, jm, 'GET', `/jobs/${'f'.repeat(32)}`).status, 404);
    assert.equal(call(w, jm, 'GET', '/jobs/not-a-job-id').status, 400);
    const lineage = w.lineage.get('ns1', 'demo');
    assert.equal(lineage.submissions.length, 1);
    assert.deepEqual(
      { ...lineage.submissions[0], at: undefined },
      { jobId: JOB_ID, restoredFrom: null, allowNonRestoredState: false, parallelism: 2, podName: 'demo-jm-0', origin: 'submitted', at: undefined },
    );
  } finally {
    stopAll(w);
  }
});

test('savepoint completes under the configured directory, and a new JobManager restores from it', async () => {
  const w = world();
  try {
    const jm = await runningJm(w);
    const trigger = call(w, jm, 'POST', `/jobs/${JOB_ID}/savepoints`, { 'cancel-job': false });
    const triggerId = bodyOf(trigger)['request-id'];
    assert.match(triggerId, /^[0-9a-f]{32}$/);
    assert.deepEqual(bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/savepoints/${triggerId}`)), { status: { id: 'IN_PROGRESS' }, operation: null });
    const { result } = await takeSavepoint(w, jm); // a second one: locations must differ
    const first = await until(() => {
      const r = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/savepoints/${triggerId}`));
      return r.status.id === 'COMPLETED' ? r : undefined;
    }, 'first savepoint');
    const location: string = first.operation.location;
    assert.match(location, /^file:\/flink-data\/savepoints\/savepoint-012345-[0-9a-f]{12}$/);
    assert.notEqual(result.operation.location, location);
    assert.equal(jm.getJob(JOB_ID)?.state, 'RUNNING', 'a plain savepoint leaves the job running');
    const stats = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/checkpoints`));
    assert.equal(stats.counts.completed, 2);
    assert.ok([location, result.operation.location].includes(stats.latest.savepoint.external_path));
    assert.equal(stats.latest.savepoint.is_savepoint, true);

    jm.stop();
    const restored = await runningJm(w, { extraArgs: ['--fromSavepoint', location, '--allowNonRestoredState'] });
    const restoredStats = bodyOf(call(w, restored, 'GET', `/jobs/${JOB_ID}/checkpoints`));
    assert.equal(restoredStats.latest.restored.external_path, location);
    assert.equal(restoredStats.latest.restored.is_savepoint, true);
    assert.equal(restoredStats.counts.restored, 1);
    // the old JobManager's trigger ids died with it
    assert.deepEqual(call(w, restored, 'GET', `/jobs/${JOB_ID}/savepoints/${triggerId}`), {
      status: 404,
      body: { errors: [`There is no savepoint operation with triggerId=${triggerId} for job ${JOB_ID}.`] },
    });
    const lineage = w.lineage.get('ns1', 'demo');
    assert.deepEqual(
      lineage.submissions.map((s) => [s.restoredFrom, s.allowNonRestoredState, s.podName]),
      [
        [null, false, 'demo-jm-0'],
        [location, true, 'demo-jm-1'],
      ],
    );
    assert.equal(lineage.savepoints.length, 2);
    assert.ok(lineage.savepoints.every((s) => s.status === 'COMPLETED' && s.kind === 'savepoint' && s.completedAt !== null));
    assert.deepEqual(lineage.savepoints.map((s) => s.triggerId).includes(triggerId), true);
  } finally {
    stopAll(w);
  }
});

test('restoring from a path never written, or disposed, fails the job like Flink', async () => {
  const w = world();
  try {
    const jm = await startJm(w, { extraArgs: ['--fromSavepoint', 'file:///flink-data/savepoints/savepoint-000000-aaaaaaaaaaaa'] });
    await until(() => jm.getJob(JOB_ID)?.state === 'FAILED', 'FAILED');
    const exceptions = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/exceptions`));
    const entry = exceptions.exceptionHistory.entries[0];
    assert.equal(entry.exceptionName, 'org.apache.flink.runtime.client.JobInitializationException');
    assert.match(
      entry.stacktrace,
      /Cannot find checkpoint or savepoint file\/directory 'file:\/\/\/flink-data\/savepoints\/savepoint-000000-aaaaaaaaaaaa' on file system 'file'/,
    );
    assert.match(exceptions['root-exception'], /JobInitializationException/);
    const result = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/execution-result`));
    assert.equal(result.status.id, 'COMPLETED');
    assert.equal(result['job-execution-result']['application-status'], 'FAILED');
    assert.match(result['job-execution-result']['failure-cause']['stack-trace'], /FileNotFoundException/);
    jm.stop();

    const jm2 = await runningJm(w);
    const { result: sp } = await takeSavepoint(w, jm2);
    const disposal = call(w, jm2, 'POST', '/savepoint-disposal', { 'savepoint-path': sp.operation.location });
    assert.equal(disposal.status, 200); // SavepointDisposalTriggerHeaders.getResponseStatusCode(): OK (the spec's 200)
    const disposalId = bodyOf(disposal)['request-id'];
    const disposed = await until(() => {
      const r = bodyOf(call(w, jm2, 'GET', `/savepoint-disposal/${disposalId}`));
      return r.status.id === 'COMPLETED' ? r : undefined;
    }, 'disposal');
    assert.deepEqual(disposed, { status: { id: 'COMPLETED' }, operation: {} });
    jm2.stop();
    const jm3 = await startJm(w, { extraArgs: ['--fromSavepoint', sp.operation.location] });
    await until(() => jm3.getJob(JOB_ID)?.state === 'FAILED', 'FAILED after disposal');
    const lineage = w.lineage.get('ns1', 'demo');
    assert.deepEqual(
      lineage.disposals.map((d) => d.path),
      [sp.operation.location],
    );
    assert.equal(lineage.submissions.at(-1)?.restoredFrom, sp.operation.location);
  } finally {
    stopAll(w);
  }
});

test('stop-with-savepoint finishes the job; cancel goes through CANCELLING; terminal jobs answer 409', async () => {
  const w = world();
  try {
    const jm = await runningJm(w);
    const stop = call(w, jm, 'POST', `/jobs/${JOB_ID}/stop`, { drain: false });
    assert.equal(stop.status, 202);
    const tid = bodyOf(stop)['request-id'];
    const done = await until(() => {
      const r = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/savepoints/${tid}`));
      return r.status.id === 'COMPLETED' ? r : undefined;
    }, 'stop');
    assert.match(done.operation.location, /^file:\/flink-data\/savepoints\/savepoint-012345-/);
    assert.equal(jm.getJob(JOB_ID)?.state, 'FINISHED');
    const cancelFinished = call(w, jm, 'PATCH', `/jobs/${JOB_ID}?mode=cancel`);
    assert.deepEqual(cancelFinished, {
      status: 409,
      body: { errors: ['Job cancellation failed because the job has already reached another terminal state (FINISHED).'] },
    });
    assert.deepEqual(call(w, jm, 'PATCH', `/jobs/${'a'.repeat(32)}?mode=cancel`), { status: 404, body: { errors: ['Job could not be found.'] } });
    assert.equal(w.lineage.get('ns1', 'demo').savepoints[0]?.kind, 'stop-with-savepoint');
    jm.stop();

    const jm2 = await runningJm(w);
    assert.deepEqual(call(w, jm2, 'PATCH', `/jobs/${JOB_ID}?mode=cancel`), { status: 202, body: {} });
    assert.equal(jm2.getJob(JOB_ID)?.state, 'CANCELLING');
    await until(() => jm2.getJob(JOB_ID)?.state === 'CANCELED', 'CANCELED');
    assert.equal(bodyOf(call(w, jm2, 'GET', `/jobs/${JOB_ID}/execution-result`))['job-execution-result']['application-status'], 'CANCELED');
    assert.equal(w.lineage.get('ns1', 'demo').cancellations.length, 1);
    // a savepoint of a terminal job fails (202, then a failure cause), and is recorded as FAILED
    const late = await takeSavepoint(w, jm2);
    assert.match(late.result.operation['failure-cause'].class, /FlinkJobNotFoundException/);
    assert.equal(w.lineage.get('ns1', 'demo').savepoints.at(-1)?.status, 'FAILED');
  } finally {
    stopAll(w);
  }
});

test('savepoint target directory: request wins, none configured -> 400', async () => {
  const w = world();
  try {
    const jm = await runningJm(w, { config: { 'execution.checkpointing.savepoint-dir': '' } });
    assert.deepEqual(call(w, jm, 'POST', `/jobs/${JOB_ID}/savepoints`, {}), {
      status: 400,
      body: { errors: ['Config key [execution.checkpointing.savepoint-dir] is not set. Property [target-directory] must be provided.'] },
    });
    const { result } = await takeSavepoint(w, jm, { 'target-directory': 's3://bucket/sp/' });
    assert.match(result.operation.location, /^s3:\/\/bucket\/sp\/savepoint-012345-[0-9a-f]{12}$/);
  } finally {
    stopAll(w);
  }
});

test('failure modes: savepoint fail and hang, job fail-after, REST unavailable', async () => {
  const w = world();
  try {
    const failing = await runningJm(w, { config: { 'simulator.savepoint.failure': 'fail' } });
    const { result } = await takeSavepoint(w, failing);
    assert.equal(result.operation['failure-cause'].class, 'org.apache.flink.runtime.checkpoint.CheckpointException');
    assert.equal(failing.getJob(JOB_ID)?.state, 'RUNNING');
    assert.equal(bodyOf(call(w, failing, 'GET', `/jobs/${JOB_ID}/checkpoints`)).counts.failed, 1);
    failing.stop();

    const hanging = await runningJm(w, { config: { 'simulator.savepoint.failure': 'hang' } });
    const tid = bodyOf(call(w, hanging, 'POST', `/jobs/${JOB_ID}/stop`, {}))['request-id'];
    await sleep(60);
    assert.equal(bodyOf(call(w, hanging, 'GET', `/jobs/${JOB_ID}/savepoints/${tid}`)).status.id, 'IN_PROGRESS');
    assert.equal(hanging.getJob(JOB_ID)?.state, 'RUNNING');
    hanging.stop();
    const sps = w.lineage.get('ns1', 'demo').savepoints;
    assert.deepEqual(
      sps.map((s) => s.status),
      ['FAILED', 'FAILED'],
      'a hung savepoint of a killed JobManager never completes',
    );

    const crashing = await startJm(w, { config: { 'simulator.job.fail-after': '20 ms' } });
    await until(() => crashing.getJob(JOB_ID)?.state === 'FAILED', 'FAILED after fail-after');
    const timestamps = bodyOf(call(w, crashing, 'GET', `/jobs/${JOB_ID}`)).timestamps;
    // Date.now() timestamps are whole milliseconds: a 20 ms timer can span 19 of them
    assert.ok(
      timestamps.RUNNING > 0 && timestamps.FAILED - timestamps.RUNNING >= 19,
      `it ran, then failed (${timestamps.FAILED - timestamps.RUNNING} ms apart)`,
    );
    const entry = bodyOf(call(w, crashing, 'GET', `/jobs/${JOB_ID}/exceptions`)).exceptionHistory.entries[0];
    assert.equal(entry.exceptionName, 'org.apache.flink.runtime.JobException');
    crashing.stop();

    const down = await startJm(w, { config: { 'simulator.rest.unavailable': 'true' } });
    assert.equal(down.restAvailable(), false);
    const briefly = await startJm(w, { config: { 'simulator.rest.unavailable': '300 ms' } });
    assert.equal(briefly.restAvailable(), false);
    await sleep(320);
    assert.equal(briefly.restAvailable(), true);
  } finally {
    stopAll(w);
  }
});

test('periodic checkpoints, retention, triggered checkpoints, and HA recovery from the latest checkpoint', async () => {
  const w = world();
  try {
    const ha = {
      'high-availability.type': 'kubernetes',
      'high-availability.storageDir': 'file:///flink-data/ha',
      'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
      'execution.checkpointing.interval': '20 ms',
    };
    const jm = await runningJm(w, { config: ha });
    await until(() => (jm.getJob(JOB_ID)?.completedCount ?? 0) >= 3, 'three checkpoints');
    const stats = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/checkpoints`));
    const latest = stats.latest.completed;
    assert.match(latest.external_path, new RegExp(`^file:/flink-data/checkpoints/${JOB_ID}/chk-\\d+$`));
    assert.equal(w.storage.list().filter((s) => s.kind === 'checkpoint').length, 1, 'num-retained defaults to 1');
    const trig = bodyOf(call(w, jm, 'POST', `/jobs/${JOB_ID}/checkpoints`, { checkpointType: 'FULL' }))['request-id'];
    const cp = await until(() => {
      const r = bodyOf(call(w, jm, 'GET', `/jobs/${JOB_ID}/checkpoints/${trig}`));
      return r.status.id === 'COMPLETED' ? r : undefined;
    }, 'triggered checkpoint');
    assert.equal(typeof cp.operation.checkpointId, 'number');
    await sleep(5);
    const record = await w.ha.load({ namespace: 'ns1', clusterId: 'demo' });
    assert.equal(record?.jobId, JOB_ID);
    assert.ok(record?.latestCheckpoint);
    jm.stop();
    const pointer = (await w.ha.load({ namespace: 'ns1', clusterId: 'demo' }))!.latestCheckpoint!;

    // restarted with a *different* savepoint arg: HA metadata wins, as in Flink
    const recovered = await runningJm(w, { config: ha, extraArgs: ['--fromSavepoint', 'file:///ignored'] });
    const rstats = bodyOf(call(w, recovered, 'GET', `/jobs/${JOB_ID}/checkpoints`));
    assert.equal(rstats.latest.restored.external_path, pointer.location);
    assert.equal(rstats.latest.restored.is_savepoint, false);
    const subs = w.lineage.get('ns1', 'demo').submissions;
    assert.equal(subs.at(-1)?.origin, 'ha-recovered');
    assert.equal(subs.at(-1)?.restoredFrom, pointer.location);
    recovered.stop();

    // HA metadata deleted (a stateless upgrade): the next JobManager submits from its args again
    w.ha.delete({ namespace: 'ns1', clusterId: 'demo' });
    const fresh = await runningJm(w, { config: ha });
    assert.equal(w.lineage.get('ns1', 'demo').submissions.at(-1)?.origin, 'submitted');
    assert.equal(bodyOf(call(w, fresh, 'GET', `/jobs/${JOB_ID}/checkpoints`)).latest.restored, null);
    // cancelling removes the job from HA metadata (Flink's cleanup of a globally terminal job)
    call(w, fresh, 'PATCH', `/jobs/${JOB_ID}?mode=cancel`);
    await until(() => fresh.getJob(JOB_ID)?.state === 'CANCELED', 'CANCELED');
    await sleep(5);
    assert.equal(await w.ha.load({ namespace: 'ns1', clusterId: 'demo' }), null);
  } finally {
    stopAll(w);
  }
});

test('failure modes: a bounded job finishes, checkpoints fail, a session JobManager runs no job', async () => {
  const w = world();
  try {
    const bounded = await startJm(w, { config: { 'simulator.job.finish-after': '10 ms' } });
    await until(() => bounded.getJob(JOB_ID)?.state === 'FINISHED', 'FINISHED');
    assert.equal(bodyOf(call(w, bounded, 'GET', `/jobs/${JOB_ID}/execution-result`))['job-execution-result']['application-status'], 'SUCCEEDED');
    bounded.stop();

    const noCheckpoints = await runningJm(w, {
      config: { 'execution.checkpointing.dir': 'file:///cp', 'execution.checkpointing.interval': '10 ms', 'simulator.checkpoint.failure': 'fail' },
    });
    await until(() => (noCheckpoints.getJob(JOB_ID)?.failedCount ?? 0) >= 2, 'failed checkpoints');
    const stats = bodyOf(call(w, noCheckpoints, 'GET', `/jobs/${JOB_ID}/checkpoints`));
    assert.equal(stats.counts.completed, 0);
    assert.equal(stats.latest.completed, null);
    assert.equal(stats.latest.failed.status, 'FAILED');
    assert.equal(w.storage.list().length, 0);
    assert.equal(noCheckpoints.getJob(JOB_ID)?.state, 'RUNNING', 'failing checkpoints do not fail the job');
    noCheckpoints.stop();

    const session = new SimulatedJobManager({
      pod: { namespace: 'ns1', name: 'session-jm', uid: 'uid-s' },
      deployment: { namespace: 'ns1', name: 'session' },
      launch: buildJobManagerLaunch(['jobmanager'], new Map(), 'flink:1.20'),
      storage: w.storage,
      lineage: w.lineage,
      ha: null,
      random: w.random,
      timing: TIMING,
    });
    await session.start();
    assert.deepEqual(bodyOf(call(w, session, 'GET', '/jobs/overview')), { jobs: [] });
    assert.equal(w.lineage.get('ns1', 'session').submissions.length, 0);
    session.stop();
  } finally {
    stopAll(w);
  }
});

test('lineage is served at /simulator/lineage next to the Flink API', async () => {
  const w = world();
  try {
    const jm = await runningJm(w);
    const res = call(w, jm, 'GET', '/simulator/lineage');
    assert.equal(res.status, 200);
    assert.deepEqual((res.body as any).deployment, { namespace: 'ns1', name: 'demo' });
    assert.equal((res.body as any).submissions[0].jobId, JOB_ID);
  } finally {
    stopAll(w);
  }
});

test('a client-chosen trigger id is idempotent within a JobManager and recorded per JobManager', async () => {
  const w = world();
  try {
    const triggerId = 'feedfacefeedfacefeedfacefeedface';
    const jm = await runningJm(w);
    const first = call(w, jm, 'POST', `/jobs/${JOB_ID}/savepoints`, { triggerId });
    const again = call(w, jm, 'POST', `/jobs/${JOB_ID}/savepoints`, { triggerId });
    assert.deepEqual([bodyOf(first)['request-id'], bodyOf(again)['request-id']], [triggerId, triggerId]);
    jm.stop(); // dies with the savepoint in flight
    const next = await runningJm(w);
    const { result } = await takeSavepoint(w, next, { triggerId });
    assert.ok(result.operation.location);
    const sps = w.lineage.get('ns1', 'demo').savepoints;
    assert.deepEqual(
      sps.map((s) => [s.triggerId, s.status, s.location === result.operation.location]),
      [
        [triggerId, 'FAILED', false],
        [triggerId, 'COMPLETED', true],
      ],
    );
  } finally {
    stopAll(w);
  }
});
