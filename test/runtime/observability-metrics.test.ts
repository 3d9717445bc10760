import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlinkRestClient, flinkRestEndpoint } from '../../src/flink/flink-rest-client.js';
import { FlinkTransportFailure } from '../../src/flink/flink-rest-error.js';
import type { FlinkRestTransport, TransportRequest, TransportResponse } from '../../src/flink/flink-rest-transport.js';
import { LifecycleTracker, OperatorMetrics } from '../../src/runtime/metrics.js';

const JOB = '0123456789abcdef0123456789abcdef';

async function value(metrics: OperatorMetrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = (metric?.values as Array<{ labels: Record<string, unknown>; value: number; metricName?: string }> | undefined)?.find(
    (v) => (v.metricName === undefined || v.metricName === name) && Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return sample?.value;
}

test('lifecycle_state is counted per namespace and state at scrape time', async () => {
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  metrics.setLifecycleSource(
    () =>
      new Map([
        ['team-a', new Map([['STABLE', 2]])],
        [
          'team-b',
          new Map([
            ['STABLE', 1],
            ['FAILED', 1],
          ]),
        ],
      ]),
  );
  const text = await metrics.registry.metrics();
  assert.match(text, /flink_operator_lifecycle_state\{namespace="team-a",state="STABLE"\} 2/);
  assert.match(text, /flink_operator_lifecycle_state\{namespace="team-b",state="STABLE"\} 1/);
  assert.match(text, /flink_operator_lifecycle_state\{namespace="team-b",state="FAILED"\} 1/);
});

test('time in lifecycle state is observed when a deployment leaves a state, per uid; a repeat of the same state is not a transition', async () => {
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  let now = 1_000_000;
  const tracker = new LifecycleTracker(metrics, () => now);
  tracker.observe('uid-1', 'team-a', 'CREATED');
  tracker.observe('uid-2', 'team-b', 'CREATED');
  now += 4_000;
  tracker.observe('uid-1', 'team-a', 'CREATED'); // same state: nothing left
  now += 6_000;
  tracker.observe('uid-1', 'team-a', 'DEPLOYED'); // 10 s in CREATED
  now += 90_000;
  tracker.observe('uid-1', 'team-a', 'STABLE'); // 90 s in DEPLOYED
  tracker.forget('uid-2');
  const name = 'flink_operator_lifecycle_state_duration_seconds';
  assert.equal(await value(metrics, name, { namespace: 'team-a', state: 'CREATED' }), undefined);
  const text = await metrics.registry.metrics();
  assert.match(text, /flink_operator_lifecycle_state_duration_seconds_sum\{namespace="team-a",state="CREATED"\} 10\n/);
  assert.match(text, /flink_operator_lifecycle_state_duration_seconds_count\{namespace="team-a",state="CREATED"\} 1\n/);
  assert.match(text, /flink_operator_lifecycle_state_duration_seconds_sum\{namespace="team-a",state="DEPLOYED"\} 90\n/);
  assert.match(text, /flink_operator_lifecycle_state_duration_seconds_bucket\{le="120",namespace="team-a",state="DEPLOYED"\} 1\n/);
  assert.match(text, /flink_operator_lifecycle_state_duration_seconds_bucket\{le="60",namespace="team-a",state="DEPLOYED"\} 0\n/);
  assert.doesNotMatch(text, /state_duration_seconds_count\{namespace="team-b"/, 'a deployment that did not leave its state is not observed');
  assert.equal(tracker.size(), 1);
});

test('Flink REST endpoints are low-cardinality: ids replaced, query dropped', () => {
  assert.equal(flinkRestEndpoint('/jobs/overview'), '/jobs/overview');
  assert.equal(flinkRestEndpoint(`/jobs/${JOB}`), '/jobs/:jobid');
  assert.equal(flinkRestEndpoint(`/jobs/${JOB}?mode=cancel`), '/jobs/:jobid');
  assert.equal(flinkRestEndpoint(`/jobs/${JOB}/savepoints`), '/jobs/:jobid/savepoints');
  assert.equal(flinkRestEndpoint(`/jobs/${JOB}/savepoints/some-trigger-id`), '/jobs/:jobid/savepoints/:triggerid');
  assert.equal(flinkRestEndpoint(`/jobs/${JOB}/checkpoints`), '/jobs/:jobid/checkpoints');
  assert.equal(flinkRestEndpoint(`/jobs/${JOB}/metrics?get=numRestarts`), '/jobs/:jobid/metrics');
  assert.equal(flinkRestEndpoint('/savepoint-disposal/abc'), '/savepoint-disposal/:triggerid');
  assert.equal(flinkRestEndpoint('/config'), '/config');
});

/** Answers scripted per request, in order; `transport-error` = the connection failed. */
class ScriptedTransport implements FlinkRestTransport {
  readonly mode = 'direct' as const;
  readonly baseUrl = 'http://orders-rest.team-a.svc:8081';
  readonly sent: TransportRequest[] = [];
  constructor(private readonly answers: Array<TransportResponse | 'transport-error'>) {}
  async send(request: TransportRequest): Promise<TransportResponse> {
    this.sent.push(request);
    request.beforeWrite?.();
    const answer = this.answers.shift();
    if (!answer) throw new Error('unexpected request');
    if (answer === 'transport-error') throw new FlinkTransportFailure('connect ECONNREFUSED', 'ECONNREFUSED');
    return answer;
  }
}

test('Flink REST calls and latency are recorded through the onRequest hook, by method, endpoint and outcome (each attempt)', async () => {
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const transport = new ScriptedTransport([
    { status: 200, body: JSON.stringify({ jobs: [] }) },
    { status: 503, body: '{"errors":["busy"]}' },
    'transport-error',
    { status: 200, body: JSON.stringify({ jid: JOB, state: 'RUNNING' }) },
    { status: 404, body: '{"errors":["Job could not be found."]}' },
    { status: 202, body: JSON.stringify({ 'request-id': 'trigger-1' }) },
  ]);
  const client = new FlinkRestClient(transport, {
    resource: 'team-a/orders',
    retry: { getAttempts: 3, backoffMs: [0] },
    sleep: async () => {},
    onRequest: (request) => metrics.recordFlinkRestRequest(request),
  });
  await client.listJobs();
  await client.getJob(JOB); // 503, transport error, then 200: three attempts
  assert.equal(await client.getJob(JOB), undefined); // 404
  assert.equal(await client.triggerSavepoint(JOB), 'trigger-1');
  const requests = 'flink_operator_flink_rest_requests_total';
  assert.equal(await value(metrics, requests, { method: 'GET', endpoint: '/jobs/overview', outcome: '2xx' }), 1);
  assert.equal(await value(metrics, requests, { method: 'GET', endpoint: '/jobs/:jobid', outcome: '5xx' }), 1);
  assert.equal(await value(metrics, requests, { method: 'GET', endpoint: '/jobs/:jobid', outcome: 'error' }), 1);
  assert.equal(await value(metrics, requests, { method: 'GET', endpoint: '/jobs/:jobid', outcome: '2xx' }), 1);
  assert.equal(await value(metrics, requests, { method: 'GET', endpoint: '/jobs/:jobid', outcome: '4xx' }), 1);
  assert.equal(await value(metrics, requests, { method: 'POST', endpoint: '/jobs/:jobid/savepoints', outcome: '2xx' }), 1);
  const text = await metrics.registry.metrics();
  assert.match(text, /flink_operator_flink_rest_request_duration_seconds_count\{method="POST",endpoint="\/jobs\/:jobid\/savepoints",outcome="2xx"\} 1/);
  assert.doesNotMatch(text, new RegExp(JOB), 'no job id in any label');
});

test('a throwing onRequest hook never breaks a call', async () => {
  const client = new FlinkRestClient(new ScriptedTransport([{ status: 200, body: '{"jobs":[]}' }]), {
    resource: 'team-a/orders',
    onRequest: () => {
      throw new Error('metrics broke');
    },
  });
  assert.deepEqual(await client.listJobs(), []);
});
