import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthServer } from '../../src/runtime/health-server.js';
import { OperatorMetrics } from '../../src/runtime/metrics.js';

test('/healthz, /readyz and /metrics answer as documented', async () => {
  const metrics = new OperatorMetrics();
  let notReady = ['informer flinkdeployments not synced'];
  const server = new HealthServer({ port: 0, host: '127.0.0.1', metrics, checks: { live: () => [], ready: () => notReady } });
  const port = await server.start();
  try {
    const base = `http://127.0.0.1:${port}`;
    const healthz = await fetch(`${base}/healthz`);
    assert.equal(healthz.status, 200);
    assert.equal(await healthz.text(), 'ok\n');
    const unready = await fetch(`${base}/readyz`);
    assert.equal(unready.status, 503);
    assert.match(await unready.text(), /informer flinkdeployments not synced/);
    notReady = [];
    assert.equal((await fetch(`${base}/readyz`)).status, 200);

    metrics.reconcileTotal.inc({ result: 'success' });
    metrics.apiRequests.inc({ verb: 'update', code: '409' });
    metrics.stateConflicts.inc();
    metrics.lifecycleStates.set({ state: 'STABLE' }, 2);
    metrics.leader.set(1);
    const response = await fetch(`${base}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (const line of [
      'flink_operator_reconcile_total{result="success"} 1',
      'flink_operator_api_requests_total{verb="update",code="409"} 1',
      'flink_operator_state_conflicts_total 1',
      'flink_operator_lifecycle_state{state="STABLE"} 2',
      'flink_operator_leader 1',
    ]) {
      assert.ok(text.includes(line), `missing: ${line}`);
    }
    assert.match(text, /# TYPE flink_operator_reconcile_duration_seconds histogram/);
    assert.match(text, /flink_operator_process_cpu_user_seconds_total/);
    assert.equal((await fetch(`${base}/nope`)).status, 404);
    assert.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405);
  } finally {
    await server.stop();
  }
});

test('two metric sets in one process do not clash', async () => {
  const a = new OperatorMetrics();
  const b = new OperatorMetrics();
  a.reconcileTotal.inc({ result: 'success' });
  assert.match((await a.exposition()).body, /flink_operator_reconcile_total\{result="success"\} 1/);
  assert.doesNotMatch((await b.exposition()).body, /flink_operator_reconcile_total\{result="success"\} 1/);
});
