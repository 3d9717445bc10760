import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { Manager } from '../../../src/runtime/manager.js';
import { resolveOperatorConfig } from '../../../src/runtime/operator-config.js';
import { createLogger } from '../../../src/runtime/logger.js';
import type { ReconcileRequest } from '../../../src/runtime/reconcile.js';
import { flinkApi, flinkDeployment, installMinimalFlinkCrd, waitFor } from './cluster-fixtures.js';

function ownedDeployment(name: string, owner: { name: string; uid: string }, labels: Record<string, string>): V1Deployment {
  return {
    metadata: {
      name,
      namespace: 'default',
      labels,
      ownerReferences: [{ apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', name: owner.name, uid: owner.uid, controller: true }],
    },
    spec: {
      selector: { matchLabels: { app: owner.name } },
      template: { metadata: { labels: { app: owner.name } }, spec: { containers: [{ name: 'c', image: 'flink:2.2' }] } },
    },
  };
}

test('the manager routes events to owner keys, skips our own echoes but never a user change, and shuts down gracefully', { timeout: 30_000 }, async () => {
  const cluster = await startDevCluster();
  const kc = cluster.kubeConfig();
  await installMinimalFlinkCrd(kc);
  const flink = flinkApi(kc);
  const created = await flink.create(flinkDeployment('job'));
  const config = resolveOperatorConfig({
    flags: { httpPort: '0', httpHost: '127.0.0.1', identity: 'op-test', reconcileIntervalMs: '60s', logLevel: 'silent' },
  });
  const calls: string[] = [];
  let slowNext = false;
  let slowFinished = false;
  let statusWrites = 0;
  const manager = new Manager({
    config,
    kubeConfig: kc,
    logger: createLogger({ level: 'silent' }),
    makeReconciler: (deps) => ({
      async reconcile(request: ReconcileRequest, signal: AbortSignal) {
        calls.push(`${request.namespace}/${request.name}`);
        if (slowNext) {
          slowNext = false;
          await sleep(300);
          slowFinished = !signal.aborted;
          return {};
        }
        if (statusWrites === 0) {
          // our own status write: its echo must not trigger another reconcile
          const current = await flink.get(request.namespace, request.name);
          const written = await flink.replaceStatus({ ...current, status: { lifecycleState: 'CREATED' } });
          statusWrites++;
          deps.writeTracker.recordOwnWrite('FlinkDeployment', request.namespace, request.name, written.metadata.resourceVersion, written.metadata.generation);
        }
        return {};
      },
    }),
  });
  await manager.start();
  const base = `http://127.0.0.1:${manager.httpPort()}`;
  try {
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, 5000, 'ready');
    await waitFor(() => calls.length >= 1 && statusWrites === 1, 5000, 'first reconcile');
    await sleep(400);
    assert.equal(calls.length, 1, 'the echo of our status write did not trigger a reconcile');

    // our write, then at once a user's spec edit: the edit must be reconciled
    const current = await flink.get('default', 'job');
    const ours = await flink.replaceStatus({ ...current, status: { lifecycleState: 'DEPLOYED' } });
    manager.dependencies.writeTracker.recordOwnWrite('FlinkDeployment', 'default', 'job', ours.metadata.resourceVersion, ours.metadata.generation);
    await flink.replace({ ...ours, spec: { ...ours.spec, image: 'flink:2.3' } });
    await waitFor(() => calls.length === 2, 3000, "the user's spec edit is reconciled");
    await sleep(300);
    assert.equal(calls.length, 2, 'exactly once: our echo skipped, the user edit not');

    // an owned Deployment (watched by label) maps to its owner; so does its deletion
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: ownedDeployment('job', { name: 'job', uid: created.metadata.uid! }, { app: 'job', type: 'flink-standalone-kubernetes' }),
    });
    await waitFor(() => calls.length === 3, 3000, 'owned Deployment created → owner reconciled');
    await apps.deleteNamespacedDeployment({ namespace: 'default', name: 'job' });
    await waitFor(() => calls.length === 4, 3000, 'owned Deployment deleted → owner reconciled');
    // a Deployment outside the owned-resource selector is not watched
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: ownedDeployment('unrelated', { name: 'job', uid: created.metadata.uid! }, { app: 'job' }),
    });
    // a user's edit of the state ConfigMap is reconciled
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: 'default',
      // The labels the operator's codec writes (the informer selects on managed-by and component).
      body: {
        metadata: {
          name: 'job-operator-state',
          labels: { 'app.kubernetes.io/managed-by': 'flink-operator', 'app.kubernetes.io/component': 'operator-state', 'flink.apache.org/deployment': 'job' },
        },
        data: {},
      },
    });
    await waitFor(() => calls.length === 5, 3000, 'state ConfigMap change → reconciled');
    await sleep(300);
    assert.equal(calls.length, 5, 'the unrelated Deployment caused no reconcile');
    assert.ok(calls.every((c) => c === 'default/job'));

    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /flink_operator_echo_events_skipped_total\{kind="FlinkDeployment"\} 2/);
    assert.match(metrics, /flink_operator_reconcile_total\{result="success"\} 5/);
    assert.match(metrics, /flink_operator_workqueue_depth 0/);
    assert.match(metrics, /^flink_operator_leader 1$/m, 'election off: this instance leads');
    assert.match(metrics, /flink_operator_lifecycle_state\{namespace="default",state="DEPLOYED"\} 1/, 'lifecycle states counted per namespace from the cache');
    assert.match(
      metrics,
      /flink_operator_lifecycle_state_duration_seconds_count\{namespace="default",state="CREATED"\} 1/,
      'the time in CREATED was observed when the deployment left it',
    );
    for (const kind of ['FlinkDeployment', 'ConfigMap', 'Deployment', 'Service'])
      for (const verb of ['list', 'watch'])
        assert.match(metrics, new RegExp(`flink_operator_watch_requests_total\\{kind="${kind}",verb="${verb}"\\} [1-9]`), `${kind} ${verb}`);
    assert.match(metrics, /flink_operator_api_requests_total\{verb="watch",code="200"\}|flink_operator_api_requests_total\{verb="list",code="200"\}/);

    // graceful shutdown: an in-flight reconcile is allowed to finish
    slowNext = true;
    await flink.replace({ ...(await flink.get('default', 'job')), spec: { image: 'flink:2.4' } });
    await waitFor(() => calls.length === 6, 3000, 'slow reconcile started');
    await manager.stop();
    assert.equal(slowFinished, true, 'the in-flight reconcile finished before stop returned');
    await assert.rejects(fetch(`${base}/healthz`), 'the port is closed');
  } finally {
    await manager.stop();
    await cluster.stop();
  }
});
