import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentStatusV1 } from '../../src/api/flink-deployment-status.js';
import { OwnWriteTracker } from '../../src/runtime/own-write-tracker.js';
import { StatusRecorder, statusPatch } from '../../src/state/status-recorder.js';
import { InMemoryFlinkDeploymentClient } from './in-memory-flink-deployment-client.js';

function status(revision: number, extra: Partial<FlinkDeploymentStatusV1> = {}): FlinkDeploymentStatusV1 {
  return {
    observedGeneration: 1,
    lifecycleState: 'DEPLOYED',
    jobManagerDeploymentStatus: 'READY',
    jobStatus: { jobId: 'j1', state: 'RUNNING' },
    stateRef: { configMapName: 'orders-operator-state', revision },
    ...extra,
  };
}

function setup() {
  const client = new InMemoryFlinkDeploymentClient();
  const deployment = client.seed(flinkDeployment('orders').inNamespace('team-a').build());
  const tracker = new OwnWriteTracker();
  const recorder = new StatusRecorder({ client, writeTracker: tracker });
  return { client, deployment, recorder, tracker };
}

test('first status: one patch adding /status, guarded by a test of the resourceVersion', async () => {
  const { client, deployment, recorder } = setup();
  const written = await recorder.record(deployment, status(1));
  assert.equal(client.count('patchStatus'), 1);
  const ops = client.calls[0].ops!;
  assert.deepEqual(ops[0], { op: 'test', path: '/metadata/resourceVersion', value: deployment.metadata.resourceVersion });
  assert.deepEqual(ops.slice(1), [{ op: 'add', path: '/status', value: status(1) }]);
  assert.deepEqual(written.status, status(1));
  assert.deepEqual(client.peek('team-a', 'orders')?.status, status(1));
});

test('no request when the status is unchanged, even when the reconciler passes its stale informer copy', async () => {
  const { client, deployment, recorder } = setup();
  await recorder.record(deployment, status(1));
  // the reconciler still sees the pre-write object (informer lag): the recorder's own cache knows better
  await recorder.record(deployment, status(1));
  await recorder.record(deployment, { ...status(1), error: undefined });
  assert.equal(client.count('patchStatus'), 1);
  assert.equal(client.count('get'), 0);
});

test('one minimal patch per change (only the changed fields), never repeated', async () => {
  const { client, deployment, recorder } = setup();
  await recorder.record(deployment, status(1));
  await recorder.record(deployment, status(2, { jobStatus: { jobId: 'j1', state: 'RUNNING', lastSavepoint: { location: 's3://sp/1', timeStamp: 5 } } }));
  assert.equal(client.count('patchStatus'), 2);
  const ops = client.calls[1].ops!;
  assert.equal(ops[0].op, 'test');
  assert.deepEqual(
    ops.slice(1).sort((a, b) => a.path.localeCompare(b.path)),
    [
      { op: 'add', path: '/status/jobStatus/lastSavepoint', value: { location: 's3://sp/1', timeStamp: 5 } },
      { op: 'replace', path: '/status/stateRef/revision', value: 2 },
    ],
  );
  assert.equal(client.peek('team-a', 'orders')?.status?.stateRef?.revision, 2);
});

test('records its write for echo filtering', async () => {
  const { deployment, recorder, tracker } = setup();
  const written = await recorder.record(deployment, status(1));
  assert.equal(tracker.isOwnEcho('FlinkDeployment', 'updated', written), true);
});

test('stale base (someone wrote meanwhile): the test op fails, recorder GETs, recomputes, one more patch', async () => {
  const { client, deployment, recorder } = setup();
  await recorder.record(deployment, status(1));
  client.editSpecDirectly('team-a', 'orders', (spec) => (spec.job!.parallelism = 5));
  const written = await recorder.record(deployment, status(2));
  assert.deepEqual(
    client.calls.map((c) => c.verb),
    ['patchStatus', 'patchStatus', 'get', 'patchStatus'],
  );
  assert.equal(written.status?.stateRef?.revision, 2);
  assert.equal(written.spec.job?.parallelism, 5, 'the spec edit is not lost');
});

test('a status edited by someone else is rewritten from state on the next record, no crash', async () => {
  const { client, deployment, recorder } = setup();
  await recorder.record(deployment, status(1));
  const edited = client.editStatusDirectly('team-a', 'orders', (s) => {
    s.lifecycleState = 'FAILED';
    delete s.stateRef;
  });
  // the reconciler sees the edited object (informer delivered it)
  const written = await recorder.record(edited, status(1));
  assert.deepEqual(written.status, status(1));
  assert.equal(client.count('patchStatus'), 2);
  assert.equal(client.count('get'), 0);
});

test('a 5xx leaves the fate unknown: the recorder re-reads and patches against the fresh object', async () => {
  const { client, deployment, recorder } = setup();
  client.failNext('patchStatus', 503);
  const written = await recorder.record(deployment, status(1));
  assert.deepEqual(
    client.calls.map((c) => c.verb),
    ['patchStatus', 'get', 'patchStatus'],
  );
  assert.deepEqual(written.status, status(1));
});

test('an invalid status on a fresh base is thrown at once, not retried', async () => {
  const { client, deployment, recorder } = setup();
  await recorder.record(deployment, status(1));
  // a 422 whose re-read shows the same resourceVersion: the base was not stale, the status is invalid
  client.failNext('patchStatus', 422);
  await assert.rejects(recorder.record(deployment, status(2)), /scripted 422/);
  assert.deepEqual(client.calls.map((c) => c.verb).slice(1), ['patchStatus', 'get']);
});

test('statusPatch: equal statuses give no ops; undefined members are ignored', () => {
  const deployment = flinkDeployment('x').withStatus(status(3)).build();
  assert.deepEqual(statusPatch(deployment, { ...status(3), error: undefined }), []);
  assert.ok(statusPatch(deployment, status(4)).length === 1);
});
