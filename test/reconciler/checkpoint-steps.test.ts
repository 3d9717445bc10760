/**
 * The completion write of a checkpoint the operator took records it as the state's lastCheckpoint
 * (what status jobStatus.lastCheckpoint shows), in the same write that settles the pending
 * checkpoint: as Apache's SnapshotObserver.observeTriggeredCheckpoint calls
 * CheckpointInfo.updateLastCheckpoint together with resetTrigger (api/status/CheckpointInfo.java).
 * Flink's side is GET /jobs/:jobid/checkpoints/:triggerid answering COMPLETED with the checkpoint id
 * (flink-rest-v1-dispatcher.yml, CheckpointStatusMessageHeaders).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyInternalState, type InternalState, type PendingSnapshot } from '../../src/api/internal-state.js';
import type { CheckpointStatus } from '../../src/flink/flink-rest-types.js';
import { followCheckpoint, type CheckpointStepContext } from '../../src/reconciler/checkpoint-steps.js';

const JOB_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const NOW = 1784040000000;

function pending(overrides: Partial<PendingSnapshot>): PendingSnapshot {
  return {
    kind: 'checkpoint',
    triggerType: 'MANUAL',
    checkpointType: 'FULL',
    jobId: JOB_ID,
    stopJob: false,
    requestedAt: NOW - 5000,
    triggerId: 'trigger-1',
    ...overrides,
  };
}

function running(pendingCheckpoint: PendingSnapshot): InternalState {
  const spec = { flinkVersion: 'v1_20', job: { jarURI: 'local:///opt/flink/usrlib/orders.jar', upgradeMode: 'savepoint', checkpointTriggerNonce: 1 } } as const;
  return {
    ...emptyInternalState(),
    revision: 7,
    phase: 'RUNNING',
    deployedJobId: JOB_ID,
    lastReconciledSpec: structuredClone(spec),
    lastStableSpec: structuredClone(spec),
    pendingCheckpoint,
  };
}

/** A context over an in-memory state; records every state write and event. */
function harness(initial: InternalState, answer: CheckpointStatus, recordsResources = false) {
  let state = initial;
  const writes: InternalState[] = [];
  const events: string[] = [];
  const ctx: CheckpointStepContext<InternalState> = {
    api: {
      triggerCheckpoint: () => Promise.reject(new Error('no trigger expected')),
      getCheckpointStatus: () => Promise.resolve(answer),
    },
    triggerGracePeriodMs: 60_000,
    now: () => NOW,
    newTriggerId: () => 'trigger-2',
    emit: (_type, reason) => events.push(reason),
    jobView: () => ({ kind: 'running' }),
    owner: { kind: 'FlinkDeployment', namespace: 'default', name: 'orders' },
    recordsResources,
    state: () => state,
    save: (fn) => {
      state = { ...fn(state), revision: state.revision + 1 };
      writes.push(state);
      return Promise.resolve(state);
    },
  };
  return { ctx, writes, events };
}

test('a completed MANUAL checkpoint: one write clears the intent, acknowledges the nonce and records lastCheckpoint with that nonce', async () => {
  const h = harness(running(pending({ triggerType: 'MANUAL', triggerNonce: 2 })), { status: 'COMPLETED', checkpointId: 42 });
  assert.deepEqual(await followCheckpoint(h.ctx), { requeue: 'continue' });
  assert.equal(h.writes.length, 1, 'the completion is a single state write');
  const [written] = h.writes;
  assert.equal(written.pendingCheckpoint, undefined);
  assert.equal(written.lastReconciledSpec?.job?.checkpointTriggerNonce, 2);
  assert.deepEqual(written.lastCheckpoint, { timeStamp: NOW, triggerType: 'MANUAL', formatType: 'FULL', checkpointId: 42, jobId: JOB_ID, triggerNonce: 2 });
  assert.deepEqual(h.events, ['CheckpointCompleted']);
});

test('a completed PERIODIC checkpoint: lastCheckpoint has no nonce, and its time is lastPeriodicCheckpointTimestamp', async () => {
  const h = harness(running(pending({ triggerType: 'PERIODIC' })), { status: 'COMPLETED', checkpointId: 43 });
  await followCheckpoint(h.ctx);
  const [written] = h.writes;
  assert.deepEqual(written.lastCheckpoint, { timeStamp: NOW, triggerType: 'PERIODIC', formatType: 'FULL', checkpointId: 43, jobId: JOB_ID });
  assert.equal(written.lastPeriodicCheckpointTimestamp, NOW, 'as CheckpointInfo.updateLastCheckpoint keeps the two equal');
});

test('a failed checkpoint given up on does not replace lastCheckpoint', async () => {
  const before = { timeStamp: NOW - 3_600_000, triggerType: 'PERIODIC' as const, checkpointId: 40, jobId: JOB_ID };
  const state = { ...running(pending({ triggerType: 'MANUAL', triggerNonce: 2, requestedAt: NOW - 120_000 })), lastCheckpoint: before };
  const h = harness(state, { status: 'COMPLETED', failureCause: { class: 'org.apache.flink.runtime.checkpoint.CheckpointException' } });
  await followCheckpoint(h.ctx);
  const [written] = h.writes;
  assert.equal(written.pendingCheckpoint, undefined, 'settled (past the grace period)');
  assert.deepEqual(written.lastCheckpoint, before);
  assert.deepEqual(h.events, ['CheckpointError']);
});

test('with snapshot resources, the completion write owes the checkpoint resource: a fixed name, COMPLETED, linked by jobReference', async () => {
  const h = harness(running(pending({ triggerType: 'PERIODIC' })), { status: 'COMPLETED', checkpointId: 44 }, true);
  await followCheckpoint(h.ctx);
  assert.equal(h.writes.length, 1, 'one write: the outcome and the owed resource together');
  const [owed] = h.writes[0].snapshotResourceWrites ?? [];
  assert.equal(owed?.name, `orders-checkpoint-periodic-${NOW}`, 'the Apache naming, fixed in the state before any create');
  assert.equal(owed?.action, 'publish');
  assert.equal(owed?.uid, undefined, 'the operator creates it');
  assert.deepEqual(owed?.jobReference, { kind: 'FlinkDeployment', name: 'orders' });
  assert.equal(owed?.status?.state, 'COMPLETED');
});

test("a user's checkpoint (FlinkStateSnapshot, backoffLimit 1): the first failure is retried after 10 s with a new trigger id, the second ends FAILED", async () => {
  const ref = { name: 'my-checkpoint', uid: 'uid-1', backoffLimit: 1 };
  const failed: CheckpointStatus = { status: 'COMPLETED', failureCause: { class: 'org.apache.flink.runtime.checkpoint.CheckpointException' } };
  const h = harness(running(pending({ triggerType: 'MANUAL', snapshotResource: ref, triggerId: 'trigger-1' })), failed);
  await followCheckpoint(h.ctx);
  const retry = h.writes[0];
  assert.equal(retry.pendingCheckpoint?.triggerId, 'trigger-2', 'a new trigger id for the retry');
  assert.equal(retry.pendingCheckpoint?.notBefore, NOW + 10_000, "Apache's backoff: 10 s after the first failure");
  assert.deepEqual(
    retry.snapshotResourceWrites?.map((w) => [w.name, w.uid, w.status?.state, w.status?.failures]),
    [['my-checkpoint', 'uid-1', 'IN_PROGRESS', 1]],
  );
  assert.deepEqual(await followCheckpoint(h.ctx), { requeue: 'progress' }, 'nothing is sent before the backoff has passed');
  assert.equal(h.writes.length, 1);
  // The second failure exceeds backoffLimit 1.
  const h2 = harness({ ...retry, snapshotResourceWrites: undefined, pendingCheckpoint: { ...retry.pendingCheckpoint, notBefore: NOW - 1 } }, failed);
  await followCheckpoint(h2.ctx);
  assert.equal(h2.writes[0].pendingCheckpoint, undefined);
  assert.deepEqual(
    h2.writes[0].snapshotResourceWrites?.map((w) => [w.status?.state, w.status?.failures]),
    [['FAILED', 2]],
  );
});
