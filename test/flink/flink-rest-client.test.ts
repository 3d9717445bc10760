import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { multipartBoundary, parseMultipartFormData } from '../../src/devcluster/simulation/flink-jar-uploads.js';
import { FlinkRestClient, flinkRestEndpoint, type FlinkRestClientOptions } from '../../src/flink/flink-rest-client.js';
import { FlinkRestError, isDuplicateJobSubmission } from '../../src/flink/flink-rest-error.js';
import { HttpFlinkRestTransport } from '../../src/flink/flink-rest-transport.js';
import { withScriptedServer, type ScriptedFlinkRestServer } from './scripted-flink-rest-server.js';

const JOB = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const TRIGGER = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

function clientFor(server: ScriptedFlinkRestServer | string, options: Partial<FlinkRestClientOptions> = {}): FlinkRestClient {
  const url = typeof server === 'string' ? server : server.url;
  return new FlinkRestClient(new HttpFlinkRestTransport('direct', url), {
    resource: 'default/orders',
    retry: { backoffMs: [5] },
    timeouts: { requestMs: 2_000, cancelMs: 2_000 },
    ...options,
  });
}

async function rejection(promise: Promise<unknown>): Promise<FlinkRestError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FlinkRestError, `expected a FlinkRestError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

const overview = {
  jobs: [
    {
      jid: JOB,
      name: 'StateMachineExample',
      state: 'RUNNING',
      'start-time': 1700000000000,
      'end-time': -1,
      duration: 5000,
      'last-modification': 1700000000100,
      tasks: { running: 2, total: 2 },
    },
  ],
};

test('listJobs reads GET /jobs/overview', async () => {
  await withScriptedServer(
    [{ method: 'GET', path: '/jobs/overview', headers: { accept: 'application/json' }, answer: { status: 200, json: overview } }],
    async (server) => {
      const jobs = await clientFor(server).listJobs();
      assert.deepEqual(jobs, overview.jobs);
    },
  );
});

test('getConfig returns the Flink version of the JobManager', async () => {
  const config = {
    'refresh-interval': 3000,
    'timezone-name': 'Coordinated Universal Time',
    'timezone-offset': 0,
    'flink-version': '1.20.1',
    'flink-revision': 'abc @ 2025',
    features: { 'web-submit': false },
  };
  await withScriptedServer([{ method: 'GET', path: '/config', answer: { status: 200, json: config } }], async (server) => {
    assert.equal((await clientFor(server).getConfig())['flink-version'], '1.20.1');
  });
});

test('getJob answers undefined when Flink does not know the job, without retrying', async () => {
  await withScriptedServer([{ method: 'GET', path: `/jobs/${JOB}`, answer: { status: 404, json: { errors: ['Job 0f1e... not found'] } } }], async (server) => {
    assert.equal(await clientFor(server).getJob(JOB), undefined);
  });
});

test('cancelJob sends PATCH ?mode=cancel once and maps 202, 404 and 409 to outcomes', async () => {
  await withScriptedServer(
    [
      { method: 'PATCH', path: `/jobs/${JOB}?mode=cancel`, answer: { status: 202, json: {} } },
      { method: 'PATCH', path: `/jobs/${JOB}?mode=cancel`, answer: { status: 404, json: { errors: ['Job could not be found.'] } } },
      {
        method: 'PATCH',
        path: `/jobs/${JOB}?mode=cancel`,
        answer: { status: 409, json: { errors: ['Job cancellation failed because the job has already reached another terminal state (FINISHED).'] } },
      },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.deepEqual(await client.cancelJob(JOB), { outcome: 'cancelling' });
      assert.deepEqual(await client.cancelJob(JOB), { outcome: 'job-not-found' });
      assert.deepEqual(await client.cancelJob(JOB), {
        outcome: 'already-terminal',
        message: 'Job cancellation failed because the job has already reached another terminal state (FINISHED).',
      });
    },
  );
});

test('cancelJob recognises "already reached another terminal state" in a 500 answer, and fails on other 500s without retry', async () => {
  await withScriptedServer(
    [
      {
        method: 'PATCH',
        path: `/jobs/${JOB}?mode=cancel`,
        answer: {
          status: 500,
          json: { errors: ['org.apache.flink.runtime.rest.handler.RestHandlerException: Job has already reached another terminal state.\n\tat ...'] },
        },
      },
      { method: 'PATCH', path: `/jobs/${JOB}?mode=cancel`, answer: { status: 500, json: { errors: ['Internal server error.'] } } },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.equal((await client.cancelJob(JOB)).outcome, 'already-terminal');
      const error = await rejection(client.cancelJob(JOB));
      assert.equal(error.status, 500);
      assert.equal(
        error.message,
        `Flink REST API of default/orders: PATCH /jobs/${JOB}?mode=cancel failed with 500 Internal Server Error: Internal server error.`,
      );
    },
  );
});

test('stopWithSavepoint posts the exact body and returns the request id', async () => {
  await withScriptedServer(
    [
      {
        method: 'POST',
        path: `/jobs/${JOB}/stop`,
        headers: { 'content-type': 'application/json' },
        body: { targetDirectory: 's3://bucket/savepoints', drain: false, formatType: 'CANONICAL' },
        answer: { status: 202, json: { 'request-id': TRIGGER } },
      },
      {
        method: 'POST',
        path: `/jobs/${JOB}/stop`,
        body: { drain: true, formatType: 'NATIVE', triggerId: TRIGGER },
        answer: { status: 202, json: { 'request-id': TRIGGER } },
      },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.equal(await client.stopWithSavepoint(JOB, { targetDirectory: 's3://bucket/savepoints' }), TRIGGER);
      assert.equal(await client.stopWithSavepoint(JOB, { drain: true, formatType: 'NATIVE', triggerId: TRIGGER }), TRIGGER);
    },
  );
});

test('triggerSavepoint posts target-directory, cancel-job false and the format', async () => {
  await withScriptedServer(
    [
      {
        method: 'POST',
        path: `/jobs/${JOB}/savepoints`,
        body: { 'target-directory': 'file:///flink-data/savepoints', 'cancel-job': false, formatType: 'CANONICAL' },
        answer: { status: 202, json: { 'request-id': TRIGGER } },
      },
    ],
    async (server) => {
      assert.equal(await clientFor(server).triggerSavepoint(JOB, { targetDirectory: 'file:///flink-data/savepoints' }), TRIGGER);
    },
  );
});

test('a savepoint trigger answered 503 is NOT retried (a second savepoint must not be started)', async () => {
  await withScriptedServer(
    [
      {
        method: 'POST',
        path: `/jobs/${JOB}/savepoints`,
        body: { 'cancel-job': false, formatType: 'CANONICAL' },
        answer: { status: 503, json: { errors: ['Service temporarily unavailable due to an ongoing leader election. Please refresh.'] } },
      },
    ],
    async (server) => {
      const error = await rejection(clientFor(server, { retry: { getAttempts: 5, backoffMs: [1] } }).triggerSavepoint(JOB));
      assert.equal(error.status, 503);
      assert.equal(error.source, 'flink');
      assert.equal(server.received.length, 1);
    },
  );
});

test('a stop-with-savepoint whose answer never comes times out once, unretried, and says so', async () => {
  await withScriptedServer(
    [{ method: 'POST', path: `/jobs/${JOB}/stop`, body: { drain: false, formatType: 'CANONICAL' }, answer: { hang: true } }],
    async (server) => {
      const started = Date.now();
      const error = await rejection(clientFor(server, { timeouts: { requestMs: 150 } }).stopWithSavepoint(JOB));
      assert.ok(Date.now() - started < 1_500);
      assert.equal(error.code, 'ETIMEDOUT');
      assert.equal(error.source, 'transport');
      assert.match(
        error.message,
        /^Flink REST API of default\/orders unreachable via http:\/\/127\.0\.0\.1:\d+\/jobs\/[0-9a-f]{32}\/stop: ETIMEDOUT \(no complete answer within 150 ms\); is the JobManager running\? The POST was not retried/,
      );
      assert.equal(server.received.length, 1);
    },
  );
});

test('GETs are retried on 5xx and dropped connections, then succeed', async () => {
  await withScriptedServer(
    [
      { method: 'GET', path: '/jobs/overview', answer: { status: 503, json: { errors: ['leader election'] } } },
      { method: 'GET', path: '/jobs/overview', answer: { destroy: true } },
      { method: 'GET', path: '/jobs/overview', answer: { status: 200, json: overview } },
    ],
    async (server) => {
      const waits: number[] = [];
      const client = clientFor(server, { retry: { getAttempts: 3, backoffMs: [10, 20] }, sleep: async (ms) => void waits.push(ms) });
      assert.equal((await client.listJobs()).length, 1);
      assert.deepEqual(waits, [10, 20]);
    },
  );
});

test('GETs give up after the configured attempts with the last error', async () => {
  const answer = { status: 502, json: { errors: ['bad gateway'] } };
  await withScriptedServer(
    [
      { method: 'GET', path: `/jobs/${JOB}/checkpoints`, answer },
      { method: 'GET', path: `/jobs/${JOB}/checkpoints`, answer },
    ],
    async (server) => {
      const error = await rejection(clientFor(server, { retry: { getAttempts: 2 } }).getCheckpoints(JOB));
      assert.equal(error.status, 502);
      assert.equal(error.attempts, 2);
    },
  );
});

test('a GET timeout is retried, and the deadline applies per attempt', async () => {
  await withScriptedServer(
    [
      { method: 'GET', path: '/config', answer: { hang: true } },
      { method: 'GET', path: '/config', answer: { status: 200, json: { 'refresh-interval': 3000, 'flink-version': '2.2.0' } } },
    ],
    async (server) => {
      const config = await clientFor(server, { timeouts: { requestMs: 100 } }).getConfig();
      assert.equal(config['flink-version'], '2.2.0');
    },
  );
});

test('4xx answers to GETs are not retried', async () => {
  await withScriptedServer([{ method: 'GET', path: `/jobs/${JOB}/exceptions`, answer: { status: 400, json: { errors: ['Bad request'] } } }], async (server) => {
    const error = await rejection(clientFor(server).getExceptions(JOB));
    assert.equal(error.status, 400);
    assert.equal(server.received.length, 1);
  });
});

test('a JobManager that is not listening gives an actionable ECONNREFUSED message', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const error = await rejection(clientFor(`http://127.0.0.1:${port}`, { retry: { getAttempts: 2, backoffMs: [1] } }).listJobs());
  assert.equal(error.code, 'ECONNREFUSED');
  assert.equal(error.attempts, 2);
  assert.ok(error.isUnreachable);
  assert.match(
    error.message,
    new RegExp(`^Flink REST API of default/orders unreachable via http://127\\.0\\.0\\.1:${port}/jobs/overview: ECONNREFUSED.*; is the JobManager running\\?$`),
  );
});

test('savepoint status: in progress, completed with a location, completed with a failure cause', async () => {
  const path = `/jobs/${JOB}/savepoints/${TRIGGER}`;
  await withScriptedServer(
    [
      { method: 'GET', path, answer: { status: 200, json: { status: { id: 'IN_PROGRESS' }, operation: null } } },
      {
        method: 'GET',
        path,
        answer: { status: 200, json: { status: { id: 'COMPLETED' }, operation: { location: 'file:/flink-data/savepoints/savepoint-0f1e2d-0123456789ab' } } },
      },
      {
        method: 'GET',
        path,
        answer: {
          status: 200,
          json: {
            status: { id: 'COMPLETED' },
            operation: {
              'failure-cause': {
                class: 'java.util.concurrent.CompletionException',
                'stack-trace': 'java.io.IOException: disk full\n\tat x',
                'serialized-throwable': 'rO0=',
              },
            },
          },
        },
      },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.deepEqual(await client.getSavepointStatus(JOB, TRIGGER), { status: 'IN_PROGRESS' });
      assert.deepEqual(await client.getSavepointStatus(JOB, TRIGGER), {
        status: 'COMPLETED',
        location: 'file:/flink-data/savepoints/savepoint-0f1e2d-0123456789ab',
      });
      const failed = await client.getSavepointStatus(JOB, TRIGGER);
      assert.ok('failureCause' in failed);
      assert.equal(failed.failureCause['stack-trace'], 'java.io.IOException: disk full\n\tat x');
    },
  );
});

test('an unknown savepoint trigger is a Flink 404 error (callers fall back to the checkpoint history)', async () => {
  await withScriptedServer(
    [
      {
        method: 'GET',
        path: `/jobs/${JOB}/savepoints/${TRIGGER}`,
        answer: { status: 404, json: { errors: ['There is no savepoint operation with triggerId=...'] } },
      },
    ],
    async (server) => {
      const error = await rejection(clientFor(server).getSavepointStatus(JOB, TRIGGER));
      assert.ok(error.isFlinkNotFound);
      assert.equal(server.received.length, 1);
    },
  );
});

test('checkpoint trigger and status, checkpoint statistics and exceptions', async () => {
  const stats = {
    counts: { restored: 1, total: 3, in_progress: 0, completed: 3, failed: 0 },
    summary: {},
    latest: {
      completed: { id: 3, status: 'COMPLETED', is_savepoint: false, trigger_timestamp: 10, latest_ack_timestamp: 11, external_path: 'file:/cp/chk-3' },
      savepoint: null,
      failed: null,
      restored: { id: 1, restore_timestamp: 5, is_savepoint: true, external_path: 'file:/sp/savepoint-1' },
    },
    history: [],
  };
  const exceptions = {
    exceptionHistory: {
      entries: [{ exceptionName: 'java.lang.RuntimeException', stacktrace: 'boom', timestamp: 12, taskName: 'Map', location: 'tm-1' }],
      truncated: false,
    },
  };
  await withScriptedServer(
    [
      { method: 'POST', path: `/jobs/${JOB}/checkpoints`, body: { checkpointType: 'FULL' }, answer: { status: 202, json: { 'request-id': TRIGGER } } },
      {
        method: 'GET',
        path: `/jobs/${JOB}/checkpoints/${TRIGGER}`,
        answer: { status: 200, json: { status: { id: 'COMPLETED' }, operation: { checkpointId: 4 } } },
      },
      { method: 'GET', path: `/jobs/${JOB}/checkpoints`, answer: { status: 200, json: stats } },
      { method: 'GET', path: `/jobs/${JOB}/exceptions`, answer: { status: 200, json: exceptions } },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.equal(await client.triggerCheckpoint(JOB, 'FULL'), TRIGGER);
      assert.deepEqual(await client.getCheckpointStatus(JOB, TRIGGER), { status: 'COMPLETED', checkpointId: 4 });
      assert.equal((await client.getCheckpoints(JOB)).latest.restored?.external_path, 'file:/sp/savepoint-1');
      assert.equal((await client.getExceptions(JOB)).exceptionHistory.entries[0]?.exceptionName, 'java.lang.RuntimeException');
    },
  );
});

test('savepoint disposal: trigger with the path, then poll', async () => {
  await withScriptedServer(
    [
      {
        method: 'POST',
        path: '/savepoint-disposal',
        body: { 'savepoint-path': 'file:/sp/savepoint-1' },
        answer: { status: 200, json: { 'request-id': TRIGGER } },
      },
      { method: 'GET', path: `/savepoint-disposal/${TRIGGER}`, answer: { status: 200, json: { status: { id: 'IN_PROGRESS' } } } },
      { method: 'GET', path: `/savepoint-disposal/${TRIGGER}`, answer: { status: 200, json: { status: { id: 'COMPLETED' }, operation: {} } } },
      {
        method: 'GET',
        path: `/savepoint-disposal/${TRIGGER}`,
        answer: { status: 200, json: { status: { id: 'COMPLETED' }, operation: { 'failure-cause': null } } },
      },
      {
        method: 'GET',
        path: `/savepoint-disposal/${TRIGGER}`,
        answer: { status: 200, json: { status: { id: 'COMPLETED' }, operation: { 'failure-cause': { class: 'java.io.FileNotFoundException' } } } },
      },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.equal(await client.disposeSavepoint('file:/sp/savepoint-1'), TRIGGER);
      assert.deepEqual(await client.getDisposalStatus(TRIGGER), { status: 'IN_PROGRESS' });
      assert.deepEqual(await client.getDisposalStatus(TRIGGER), { status: 'COMPLETED' });
      assert.deepEqual(await client.getDisposalStatus(TRIGGER), { status: 'COMPLETED' }, 'a null failure-cause is a success, as Flink reports one');
      assert.deepEqual(await client.getDisposalStatus(TRIGGER), { status: 'COMPLETED', failureCause: { class: 'java.io.FileNotFoundException' } });
    },
  );
});

test('a trigger answer without request-id and a non-JSON answer are errors', async () => {
  await withScriptedServer(
    [
      { method: 'POST', path: `/jobs/${JOB}/savepoints`, body: { 'cancel-job': false, formatType: 'CANONICAL' }, answer: { status: 202, json: {} } },
      { method: 'GET', path: '/jobs/overview', answer: { status: 200, text: '<html>proxy page</html>' } },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.match((await rejection(client.triggerSavepoint(JOB))).message, /answered without a request-id/);
      assert.match((await rejection(client.listJobs())).message, /GET \/jobs\/overview answered invalid JSON/);
    },
  );
});

test('ids are validated before anything is sent', async () => {
  const client = clientFor('http://127.0.0.1:9');
  await assert.rejects(client.getJob('../config'), /invalid Flink job id "..\/config"/);
  await assert.rejects(client.stopWithSavepoint(JOB, { triggerId: 'nope' }), /invalid Flink trigger id "nope": expected 32 hexadecimal characters/);
});

// Source: Flink's JobMetricsHandler (AbstractMetricsHandler): `get` is a comma-separated list;
// the answer is a bare array (MetricCollectionResponseBody serializes as a list, whatever the
// generated OpenAPI spec shows), values are strings, unknown ids are left out, an unknown job is [].
test('getJobMetrics asks for the named job metrics and returns their values by name', async () => {
  await withScriptedServer(
    [
      {
        method: 'GET',
        path: `/jobs/${JOB}/metrics?get=numRestarts,uptime,noSuchMetric`,
        answer: {
          status: 200,
          json: [
            { id: 'numRestarts', value: '3' },
            { id: 'uptime', value: '1200' },
          ],
        },
      },
      { method: 'GET', path: `/jobs/${JOB}/metrics?get=numRestarts`, answer: { status: 200, json: [] } },
      { method: 'GET', path: `/jobs/${JOB}/metrics?get=numRestarts`, answer: { status: 200, json: { metrics: [{ id: 'numRestarts', value: '3' }] } } },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.deepEqual(await client.getJobMetrics(JOB, ['numRestarts', 'uptime', 'noSuchMetric']), { numRestarts: '3', uptime: '1200' });
      assert.deepEqual(await client.getJobMetrics(JOB, ['numRestarts']), {}, 'a job Flink does not know: no metrics');
      const error = await rejection(client.getJobMetrics(JOB, ['numRestarts']));
      assert.match(error.message, /GET \/jobs\/0f1e2d3c4b5a69788796a5b4c3d2e1f0\/metrics answered .*not a list of metrics/);
      assert.deepEqual(await client.getJobMetrics(JOB, []), {}, 'no names: no request');
      await assert.rejects(client.getJobMetrics(JOB, ['a,b']), /invalid Flink metric name "a,b"/);
      await assert.rejects(client.getJobMetrics('nope', ['numRestarts']), /invalid Flink job id "nope"/);
    },
  );
});

test('the job overview carries end-time: -1 while running, the end once terminal', async () => {
  const finished = {
    jid: JOB,
    name: 'Bounded',
    state: 'FINISHED',
    'start-time': 1700000000000,
    'end-time': 1700000005000,
    duration: 5000,
    'last-modification': 1700000005000,
  };
  await withScriptedServer(
    [{ method: 'GET', path: '/jobs/overview', answer: { status: 200, json: { jobs: [overview.jobs[0], finished] } } }],
    async (server) => {
      const jobs = await clientFor(server).listJobs();
      assert.deepEqual(
        jobs.map((j) => [j.state, j['end-time']]),
        [
          ['RUNNING', -1],
          ['FINISHED', 1700000005000],
        ],
      );
    },
  );
});

test('beforeWrite (the leadership fence) runs right before a request that changes something is written; a refusal sends nothing and is rethrown as is', async () => {
  class Refused extends Error {}
  const asked: string[] = [];
  await withScriptedServer([{ method: 'GET', path: '/jobs/overview', answer: { status: 200, json: overview } }], async (server) => {
    const client = clientFor(server, {
      beforeWrite: (method, path) => {
        asked.push(`${method} ${path}`);
        throw new Refused('not the leader any more');
      },
    });
    assert.equal((await client.listJobs()).length, 1, 'a GET is not fenced');
    await assert.rejects(
      client.triggerSavepoint(JOB, { triggerId: TRIGGER }),
      (error: unknown) => error instanceof Refused && !(error instanceof FlinkRestError),
    );
    assert.deepEqual(asked, [`POST /jobs/${JOB}/savepoints`]);
    assert.deepEqual(
      server.received.map((r) => `${r.method} ${r.path}`),
      ['GET /jobs/overview'],
      'the refused POST never reached Flink',
    );
  });
});

// ---- jar endpoints of a session cluster ----

const JAR_ID = '5b1a6c1e-8d1c-4b4e-9a53-2f7c1d2e3f40_StateMachineExample.jar';
const UPLOAD_DIR = '/tmp/flink-web-0c9a1b2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d/flink-web-upload';

interface RawRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Answers every request with `answer` and keeps the raw bytes of each request (a multipart body is not JSON). */
async function withRawServer(answer: { status: number; json: unknown }, fn: (url: string, received: RawRequest[]) => Promise<void>): Promise<void> {
  const received: RawRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, received);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// Flink's web UI and the REST docs' curl example (`curl -F "jarfile=@job.jar"`) upload one
// multipart/form-data file part named `jarfile`; JarUploadHandler answers {filename: <stored path>,
// status: success} and the jar id is the path's last segment (the Apache operator's runJar).
test('uploadJar sends the jar as one multipart file part "jarfile" with its name and returns the jar id', async () => {
  // Bytes that look like multipart syntax must arrive unchanged.
  const jar = Buffer.concat([Buffer.from('PK\u0003\u0004'), Buffer.from('\r\n--not-a-boundary\r\n\r\n'), Buffer.from([0, 255, 13, 10, 45, 45])]);
  await withRawServer({ status: 200, json: { filename: `${UPLOAD_DIR}/${JAR_ID}`, status: 'success' } }, async (url, received) => {
    assert.equal(await clientFor(url).uploadJar(jar, 'StateMachineExample.jar'), JAR_ID);
    assert.equal(received.length, 1);
    const [request] = received;
    assert.equal(`${request.method} ${request.path}`, 'POST /jars/upload');
    assert.equal(Number(request.headers['content-length']), request.body.length);
    const boundary = multipartBoundary(request.headers['content-type']);
    assert.ok(boundary, `a multipart/form-data content type, got ${request.headers['content-type']}`);
    const form = parseMultipartFormData(request.body, boundary);
    assert.deepEqual(
      form?.files.map((f) => [f.field, f.filename, f.contentType, f.size]),
      [['jarfile', 'StateMachineExample.jar', 'application/x-java-archive', jar.length]],
    );
    assert.equal(form?.attributes.size, 0, 'no other parts');
    const headerEnd = request.body.indexOf('\r\n\r\n') + 4;
    assert.deepEqual(request.body.subarray(headerEnd, headerEnd + jar.length), jar, 'the jar bytes, unchanged');
    assert.match(request.body.subarray(0, headerEnd).toString(), /Content-Disposition: form-data; name="jarfile"; filename="StateMachineExample\.jar"\r\n/);
  });
});

test('uploadJar refuses a name Flink would refuse, before sending anything', async () => {
  await withRawServer({ status: 200, json: {} }, async (url, received) => {
    await assert.rejects(clientFor(url).uploadJar(new Uint8Array(4), 'job.zip'), /invalid jar file name "job\.zip": Flink only takes names ending in \.jar/);
    await assert.rejects(clientFor(url).uploadJar(new Uint8Array(4), 'a"b.jar'), /invalid jar file name/);
    assert.equal(received.length, 0);
  });
});

test('runJar posts exactly the given JarRunRequestBody fields and returns the job id', async () => {
  await withScriptedServer(
    [
      {
        method: 'POST',
        path: `/jars/${JAR_ID}/run`,
        headers: { 'content-type': 'application/json' },
        body: {
          jobId: JOB,
          entryClass: 'org.apache.flink.streaming.examples.statemachine.StateMachineExample',
          programArgsList: ['--error-rate', '0.0'],
          parallelism: 2,
          savepointPath: 'file:/flink-data/savepoints/savepoint-0f1e2d-0123456789ab',
          allowNonRestoredState: true,
          flinkConfiguration: { 'execution.checkpointing.interval': '10s' },
        },
        answer: { status: 200, json: { jobid: JOB } },
      },
      // Only jobId: no other field is sent (Flink < 1.17 refuses an unknown `flinkConfiguration`).
      { method: 'POST', path: `/jars/${JAR_ID}/run`, body: { jobId: JOB }, answer: { status: 200, json: { jobid: JOB } } },
    ],
    async (server) => {
      const client = clientFor(server);
      const jobId = await client.runJar(JAR_ID, {
        jobId: JOB,
        entryClass: 'org.apache.flink.streaming.examples.statemachine.StateMachineExample',
        args: ['--error-rate', '0.0'],
        parallelism: 2,
        savepointPath: 'file:/flink-data/savepoints/savepoint-0f1e2d-0123456789ab',
        allowNonRestoredState: true,
        flinkConfiguration: { 'execution.checkpointing.interval': '10s' },
      });
      assert.equal(jobId, JOB);
      assert.equal(await client.runJar(JAR_ID, { jobId: JOB }), JOB);
      await assert.rejects(client.runJar(JAR_ID, { jobId: 'nope' }), /invalid Flink job id "nope"/);
      await assert.rejects(client.runJar(JAR_ID, { jobId: JOB, parallelism: 0 }), /invalid parallelism 0/);
      await assert.rejects(client.runJar('../config', { jobId: JOB }), /invalid Flink jar id/);
    },
  );
});

/**
 * A duplicate run as Flink answers it: JarRunHandler wraps the failure in RestHandlerException
 * "Could not execute application." (400), AbstractHandler.handleException sends it stringified with
 * its causes, the last being the Dispatcher's DuplicateJobSubmissionException. Real traces run to
 * many frames, so the telling cause comes far beyond the first 1000 characters.
 */
function duplicateRunErrorText(): string {
  const frames = (cls: string, n: number) => Array.from({ length: n }, (_, i) => `\tat ${cls}.step${i}(${cls.split('.').pop()}.java:${100 + i})`).join('\n');
  return [
    'org.apache.flink.runtime.rest.handler.RestHandlerException: Could not execute application.',
    frames('org.apache.flink.runtime.webmonitor.handlers.JarRunHandler', 12),
    'Caused by: java.util.concurrent.CompletionException: org.apache.flink.util.FlinkRuntimeException: Could not execute application.',
    frames('java.util.concurrent.CompletableFuture', 8),
    'Caused by: org.apache.flink.util.FlinkRuntimeException: Could not execute application.',
    frames('org.apache.flink.client.deployment.application.DetachedApplicationRunner', 6),
    "Caused by: org.apache.flink.client.program.ProgramInvocationException: The main method caused an error: Failed to execute job 'StateMachineExample'.",
    frames('org.apache.flink.client.program.PackagedProgram', 6),
    "Caused by: org.apache.flink.util.FlinkException: Failed to execute job 'StateMachineExample'.",
    frames('org.apache.flink.streaming.api.environment.StreamExecutionEnvironment', 6),
    'Caused by: org.apache.flink.runtime.client.DuplicateJobSubmissionException: Job has already been submitted.',
    frames('org.apache.flink.runtime.dispatcher.Dispatcher', 4),
  ].join('\n');
}

test('a run of a job id the cluster already has is recognised as a duplicate submission; other run failures are not', async () => {
  const text = duplicateRunErrorText();
  assert.ok(text.indexOf('DuplicateJobSubmissionException') > 1000, 'the cause lies beyond what error messages keep');
  await withScriptedServer(
    [
      { method: 'POST', path: `/jars/${JAR_ID}/run`, body: { jobId: JOB }, answer: { status: 400, json: { errors: [text] } } },
      {
        method: 'POST',
        path: `/jars/${JAR_ID}/run`,
        body: { jobId: JOB },
        answer: {
          status: 400,
          json: { errors: [`org.apache.flink.runtime.rest.handler.RestHandlerException: Jar file ${UPLOAD_DIR}/${JAR_ID} does not exist\n\tat x`] },
        },
      },
    ],
    async (server) => {
      const client = clientFor(server);
      const duplicate = await rejection(client.runJar(JAR_ID, { jobId: JOB }));
      assert.equal(duplicate.status, 400);
      assert.ok(isDuplicateJobSubmission(duplicate));
      assert.equal(duplicate.causes?.at(-1), 'org.apache.flink.runtime.client.DuplicateJobSubmissionException');
      assert.match(
        duplicate.message,
        /POST \/jars\/.*\/run failed with 400 Bad Request: org\.apache\.flink\.runtime\.rest\.handler\.RestHandlerException: Could not execute application\./,
      );
      const missingJar = await rejection(client.runJar(JAR_ID, { jobId: JOB }));
      assert.equal(isDuplicateJobSubmission(missingJar), false);
      assert.equal(isDuplicateJobSubmission(new Error('DuplicateJobSubmissionException')), false);
      assert.equal(server.received.length, 2);
    },
  );
});

test('a run is never retried: not on 503, not on a lost answer', async () => {
  await withScriptedServer(
    [
      { method: 'POST', path: `/jars/${JAR_ID}/run`, body: { jobId: JOB }, answer: { status: 503, json: { errors: ['leader election'] } } },
      { method: 'POST', path: `/jars/${JAR_ID}/run`, body: { jobId: JOB }, answer: { hang: true } },
    ],
    async (server) => {
      const client = clientFor(server, { retry: { getAttempts: 5, backoffMs: [1] }, timeouts: { jarRunMs: 150 } });
      const unavailable = await rejection(client.runJar(JAR_ID, { jobId: JOB }));
      assert.equal(unavailable.status, 503);
      assert.equal(server.received.length, 1);
      const lost = await rejection(client.runJar(JAR_ID, { jobId: JOB }));
      assert.equal(lost.code, 'ETIMEDOUT');
      assert.match(lost.message, /no complete answer within 150 ms.*The POST was not retried/);
      assert.equal(server.received.length, 2);
    },
  );
});

test('listJars reads GET /jars; deleteJar deletes, and a jar Flink no longer has counts as deleted', async () => {
  const list = { address: 'http://session-rest:8081', files: [{ id: JAR_ID, name: 'StateMachineExample.jar', uploaded: 1700000000000, entry: [] }] };
  await withScriptedServer(
    [
      { method: 'GET', path: '/jars', answer: { status: 200, json: list } },
      { method: 'DELETE', path: `/jars/${JAR_ID}`, answer: { status: 200, json: {} } },
      {
        method: 'DELETE',
        path: `/jars/${JAR_ID}`,
        answer: {
          status: 400,
          json: { errors: [`org.apache.flink.runtime.rest.handler.RestHandlerException: File ${JAR_ID} does not exist in ${UPLOAD_DIR}.\n\tat x`] },
        },
      },
      { method: 'DELETE', path: `/jars/${JAR_ID}`, answer: { status: 500, json: { errors: [`Failed to delete jar ${JAR_ID}.`] } } },
    ],
    async (server) => {
      const client = clientFor(server);
      assert.deepEqual(await client.listJars(), list.files);
      await client.deleteJar(JAR_ID);
      await client.deleteJar(JAR_ID);
      assert.equal((await rejection(client.deleteJar(JAR_ID))).status, 500);
    },
  );
});

test('jar paths become low-cardinality metric endpoints', () => {
  assert.equal(flinkRestEndpoint('/jars'), '/jars');
  assert.equal(flinkRestEndpoint('/jars/upload'), '/jars/upload');
  assert.equal(flinkRestEndpoint(`/jars/${JAR_ID}/run`), '/jars/:jarid/run');
  assert.equal(flinkRestEndpoint(`/jars/${JAR_ID}`), '/jars/:jarid');
});
