/**
 * The simulated job's fail-overs, stalled checkpoints and bounded end, and Flink's job metrics
 * endpoint, through the simulated REST API (and the operator's REST client over HTTP).
 *
 * Sources: Flink's DefaultScheduler (a failure the restart strategy allows: RUNNING → RESTARTING →
 * RUNNING, counted by the `numRestarts` gauge; SchedulerBase.restoreState aborts pending
 * checkpoints with CheckpointFailureReason.JOB_FAILOVER_REGION), CheckpointCoordinator (a
 * checkpoint not completed within execution.checkpointing.timeout expires: CHECKPOINT_EXPIRED,
 * "Checkpoint expired before completing."), JobMetricsHandler / AbstractMetricsHandler and
 * MetricCollectionResponseBody (a bare JSON array; `get` selects ids, unknown ones are left out),
 * JobDetails (`end-time` set when the job is globally terminal, -1 before).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildJobManagerLaunch } from '../../../src/devcluster/simulation/jobmanager-launch.js';
import { parseFlinkConfigYaml } from '../../../src/devcluster/simulation/flink-configuration.js';
import { SimulatedJobManager } from '../../../src/devcluster/simulation/flink-jobmanager.js';
import type { JobManagerTiming } from '../../../src/devcluster/simulation/flink-jobmanager-context.js';
import { handleFlinkRequest, type FlinkRestResponse } from '../../../src/devcluster/simulation/flink-rest-api.js';
import { LineageRecorder } from '../../../src/devcluster/simulation/lineage-recorder.js';
import { SnapshotStorage } from '../../../src/devcluster/simulation/snapshot-storage.js';
import { seededRandom } from '../../../src/devcluster/simulation/simulation-random.js';
import { FlinkRestClient } from '../../../src/flink/flink-rest-client.js';
import { HttpFlinkRestTransport } from '../../../src/flink/flink-rest-transport.js';

const JOB_ID = '0123456789abcdef0123456789abcdef';
const TIMING: JobManagerTiming = {
  jobStartDelayMs: 10,
  savepointDurationMs: 15,
  cancelDurationMs: 5,
  disposalDurationMs: 5,
  defaultCheckpointIntervalMs: null,
};

function startJm(config: Record<string, string>, lineage = new LineageRecorder()): SimulatedJobManager {
  const base: Record<string, string> = {
    '$internal.pipeline.job-id': JOB_ID,
    'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
    'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
    ...config,
  };
  const yaml = Object.entries(base)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join('\n');
  const jm = new SimulatedJobManager({
    pod: { namespace: 'ns1', name: 'demo-jm', uid: 'uid-1' },
    deployment: { namespace: 'ns1', name: 'demo' },
    launch: buildJobManagerLaunch(['standalone-job', '--job-classname', 'org.example.Demo'], parseFlinkConfigYaml(yaml), 'flink:1.20'),
    storage: new SnapshotStorage(),
    lineage,
    ha: null,
    random: seededRandom(11),
    timing: TIMING,
  });
  void jm.start();
  return jm;
}

function call(jm: SimulatedJobManager, method: string, path: string, body?: unknown): FlinkRestResponse {
  const url = new URL(path, 'http://jm');
  return handleFlinkRequest(jm, { method, path: url.pathname, query: url.searchParams, body }, new LineageRecorder());
}

/** The body of a simulated REST answer, as the shape the test reads. */
function json<T>(res: FlinkRestResponse): T {
  return res.body as T;
}

type Metrics = Array<{ id: string; value?: string }>;
interface Overview {
  jobs: Array<{ state: string; 'start-time': number; 'end-time': number; duration: number }>;
}
interface OperationResult {
  status: { id: string };
  operation: { failureCause: { 'stack-trace': string } } | null;
}

async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** The simulated JobManager's REST API over HTTP, as the operator's client talks to it. */
async function serve(jm: SimulatedJobManager): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://jm');
    const answer = handleFlinkRequest(jm, { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body: undefined }, new LineageRecorder());
    res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test('simulator.job.restart-every: RUNNING → RESTARTING → RUNNING over and over, counted in numRestarts', async () => {
  const jm = startJm({ 'simulator.job.restart-every': '40 ms' });
  try {
    const job = await until(() => jm.getJob(JOB_ID)?.state === 'RUNNING' && jm.getJob(JOB_ID), 'job RUNNING');
    await until(() => job.restarts >= 3 && job.state === 'RUNNING', '3 restarts, RUNNING again');
    assert.ok(job.timestamps.has('RESTARTING'), 'went through RESTARTING');
    assert.ok(job.timestamps.get('RUNNING')! >= job.timestamps.get('RESTARTING')!, 'and back to RUNNING');
    assert.equal(job.isTerminal, false);
    const exceptions = json<{ exceptionHistory: { entries: Array<{ stacktrace: string }> } }>(call(jm, 'GET', `/jobs/${JOB_ID}/exceptions`));
    assert.match(exceptions.exceptionHistory.entries[0]?.stacktrace ?? '', /Simulated task failure \(simulator\.job\.restart-every=40ms\)/);

    // the metrics endpoint: ids without `get`, values with it, unknown ids left out, unknown job []
    const available = json<Metrics>(call(jm, 'GET', `/jobs/${JOB_ID}/metrics`));
    assert.ok(Array.isArray(available), 'a bare array, not {metrics: [...]}');
    assert.ok(
      available.some((m) => m.id === 'numRestarts' && m.value === undefined),
      JSON.stringify(available),
    );
    assert.ok(available.some((m) => m.id === 'numberOfCompletedCheckpoints'));
    const restarts = job.restarts;
    assert.deepEqual(json<Metrics>(call(jm, 'GET', `/jobs/${JOB_ID}/metrics?get=numRestarts,noSuchMetric`)), [{ id: 'numRestarts', value: String(restarts) }]);
    assert.deepEqual(json<Metrics>(call(jm, 'GET', `/jobs/fedcba9876543210fedcba9876543210/metrics?get=numRestarts`)), []);

    const http = await serve(jm);
    try {
      const client = new FlinkRestClient(new HttpFlinkRestTransport('direct', http.url), { resource: 'ns1/demo', retry: { backoffMs: [5] } });
      const metrics = await client.getJobMetrics(JOB_ID, ['numRestarts', 'uptime', 'downtime', 'noSuchMetric']);
      assert.deepEqual(Object.keys(metrics).sort(), ['downtime', 'numRestarts', 'uptime']);
      assert.ok(Number(metrics.numRestarts) >= restarts);
    } finally {
      await http.close();
    }
  } finally {
    jm.stop();
  }
});

test('a fail-over aborts a savepoint in flight (its operation fails), and the next one completes', async () => {
  const jm = startJm({ 'simulator.job.restart-every': '60 ms', 'simulator.savepoint.duration': '500 ms' });
  try {
    const job = await until(() => jm.getJob(JOB_ID)?.state === 'RUNNING' && jm.getJob(JOB_ID), 'job RUNNING');
    const trigger = jm.triggerSavepoint(JOB_ID, {}, 'savepoint');
    await until(() => job.restarts >= 1, 'a restart');
    const op = jm.operation('savepoint', trigger, JOB_ID);
    assert.equal(op.status, 'COMPLETED');
    assert.match(op.failure?.message ?? '', /FailoverRegion is restarting\./);
    assert.equal(job.pending.size, 0, 'no checkpoint left IN_PROGRESS');
    assert.equal(job.latestFailed?.failureMessage, 'FailoverRegion is restarting.');
    await sleep(550);
    assert.equal(job.latestSavepoint, null, 'the aborted savepoint never completes later');
  } finally {
    jm.stop();
  }
});

test('simulator.checkpoint.stall-after: checkpoints complete, then stop completing (IN_PROGRESS, then expired), the job keeps RUNNING', async () => {
  const jm = startJm({ 'execution.checkpointing.interval': '10 ms', 'simulator.checkpoint.stall-after': '300 ms', 'execution.checkpointing.timeout': '80 ms' });
  try {
    const job = await until(() => jm.getJob(JOB_ID)?.state === 'RUNNING' && jm.getJob(JOB_ID), 'job RUNNING');
    await until(() => job.completedCount >= 1, 'checkpoints completing');
    await until(() => job.pending.size > 0, 'a stalled checkpoint');
    const completed = job.completedCount;
    const stats = json<{ counts: { in_progress: number }; history: Array<{ status: string }> }>(call(jm, 'GET', `/jobs/${JOB_ID}/checkpoints`));
    assert.equal(stats.counts.in_progress, 1, 'one stalled checkpoint at a time');
    assert.equal(stats.history[0]?.status, 'IN_PROGRESS');
    const expired = await until(() => job.latestFailed ?? undefined, 'the stalled checkpoint to expire');
    assert.equal(expired.failureMessage, 'Checkpoint expired before completing.');
    await sleep(60);
    assert.equal(job.completedCount, completed, 'no checkpoint completes any more');
    assert.equal(job.state, 'RUNNING');
    const metrics = new Map(
      json<Metrics>(call(jm, 'GET', `/jobs/${JOB_ID}/metrics?get=numberOfCompletedCheckpoints,numberOfFailedCheckpoints,numberOfInProgressCheckpoints`)).map(
        (m) => [m.id, m.value],
      ),
    );
    assert.equal(metrics.get('numberOfCompletedCheckpoints'), String(completed));
    assert.ok(Number(metrics.get('numberOfFailedCheckpoints')) >= 1);
    // a triggered checkpoint hangs too, until it expires
    const trigger = json<{ 'request-id': string }>(call(jm, 'POST', `/jobs/${JOB_ID}/checkpoints`, {}))['request-id'];
    await sleep(40);
    assert.deepEqual(json<OperationResult>(call(jm, 'GET', `/jobs/${JOB_ID}/checkpoints/${trigger}`)), { status: { id: 'IN_PROGRESS' }, operation: null });
    const done = await until(() => {
      const r = json<OperationResult>(call(jm, 'GET', `/jobs/${JOB_ID}/checkpoints/${trigger}`));
      return r.status.id === 'COMPLETED' && r;
    }, 'the triggered checkpoint to expire');
    assert.match(done.operation?.failureCause['stack-trace'] ?? '', /Checkpoint expired before completing\./);
    // savepoints are not stalled
    const sp = jm.triggerSavepoint(JOB_ID, {}, 'savepoint');
    await until(() => jm.operation('savepoint', sp, JOB_ID).status === 'COMPLETED', 'savepoint');
    assert.ok(jm.operation('savepoint', sp, JOB_ID).location);
  } finally {
    jm.stop();
  }
});

test('simulator.job.finish-after: FINISHED with end-time in /jobs/overview, and the JobManager keeps serving', async () => {
  const jm = startJm({ 'simulator.job.finish-after': '50 ms' });
  try {
    const submitted = await until(() => json<Overview>(call(jm, 'GET', '/jobs/overview')).jobs[0], 'the job');
    assert.equal(submitted['end-time'], -1, 'not terminal yet');
    const finished = await until(() => {
      const jobs = json<Overview>(call(jm, 'GET', '/jobs/overview')).jobs;
      return jobs[0]?.state === 'FINISHED' && jobs[0];
    }, 'job FINISHED');
    assert.ok(finished['end-time'] >= finished['start-time'], JSON.stringify(finished));
    assert.equal(finished.duration, finished['end-time'] - finished['start-time']);
    await sleep(20);
    assert.equal(jm.isStopped, false, 'the JobManager stays up after its job finished');
    assert.equal(jm.restAvailable(), true);
    assert.equal(json<Overview>(call(jm, 'GET', '/jobs/overview')).jobs[0]?.state, 'FINISHED', 'the finished job stays listed');
  } finally {
    jm.stop();
  }
});

test('invalid simulator durations stop the JobManager at start, as invalid Flink configuration does', () => {
  assert.throws(() => startJm({ 'simulator.job.restart-every': '0' }), /invalid value "0" for simulator\.job\.restart-every: expected a duration above 0/);
  assert.throws(() => startJm({ 'simulator.checkpoint.stall-after': 'soon' }), /invalid Flink duration "soon"/);
});
