/**
 * Which user-created FlinkStateSnapshots a job still has to take (src/reconciler/snapshot-resources.ts),
 * and the state transforms of a user's snapshot: taken up once, adopted when a gone state had sent
 * its trigger, retried with Apache's backoff up to backoffLimit (FlinkStateSnapshotController
 * `updateErrorStatus`: 10 s · 2^(failures-1); given up when `backoffLimit >= 0 && failures > backoffLimit`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkStateSnapshot } from '../../src/api/flink-state-snapshot-builder.js';
import { emptyInternalState, type InternalState, type PendingSnapshot } from '../../src/api/internal-state.js';
import {
  MAX_TAKEN_SNAPSHOTS,
  operatorSnapshotName,
  userSnapshotFailure,
  userSnapshotRequests,
  withSnapshotTaken,
  withUserSnapshotStarted,
} from '../../src/reconciler/snapshot-resources.js';

const OWNER = { kind: 'FlinkDeployment' as const, namespace: 'default', name: 'orders' };
const NOW = Date.parse('2026-12-01T10:00:00.000Z');

function withDeletion<T extends { metadata: object }>(object: T): T {
  return { ...object, metadata: { ...object.metadata, deletionTimestamp: new Date(NOW) } };
}

/** A user's snapshot of `orders`, created at `created` (the builder sets no creation time: the API server does). */
function userSnapshot(name: string, created: string) {
  const builder = flinkStateSnapshot(name).of('FlinkDeployment', 'orders').withUid(`uid-${name}`);
  const build = builder.build.bind(builder);
  return Object.assign(builder, {
    build: () => {
      const object = build();
      return { ...object, metadata: { ...object.metadata, creationTimestamp: new Date(created) } };
    },
  });
}

test('the job takes its pending snapshots oldest first, and none of another job, none already taken, none final, none being deleted, no existing savepoint', () => {
  const snapshots = [
    userSnapshot('second', '2026-12-01T09:02:00Z').build(),
    userSnapshot('first', '2026-12-01T09:01:00Z').asSavepoint({ path: 's3://team/sp', formatType: 'NATIVE' }).build(),
    userSnapshot('checkpoint', '2026-12-01T09:03:00Z').asCheckpoint().build(),
    userSnapshot('other-job', '2026-12-01T09:00:00Z').of('FlinkDeployment', 'payments').build(),
    userSnapshot('session-job-of-that-name', '2026-12-01T09:00:00Z').of('FlinkSessionJob', 'orders').build(),
    userSnapshot('taken', '2026-12-01T09:00:00Z').build(),
    userSnapshot('done', '2026-12-01T09:00:00Z').withStatus({ state: 'COMPLETED', path: 's3://x' }).build(),
    userSnapshot('existing', '2026-12-01T09:00:00Z').asExistingSavepoint('s3://old').build(),
    withDeletion(userSnapshot('deleting', '2026-12-01T09:00:00Z').build()),
  ];
  const state = withSnapshotTaken(emptyInternalState(), 'uid-taken');
  const requests = userSnapshotRequests(snapshots, OWNER, state);
  assert.deepEqual(
    requests.map((r) => [r.ref.name, r.snapshotType, r.targetDirectory, r.formatType]),
    [
      ['first', 'SAVEPOINT', 's3://team/sp', 'NATIVE'],
      ['second', 'SAVEPOINT', undefined, 'CANONICAL'],
      ['checkpoint', 'CHECKPOINT', undefined, undefined],
    ],
  );
  assert.equal(requests[0].ref.backoffLimit, -1, 'unset backoffLimit: no limit (Apache default)');
});

test('IN_PROGRESS with a trigger id but not taken by this state (its ConfigMap lost, or the Apache operator sent it): adopted with that trigger id, not triggered anew', () => {
  const inFlight = userSnapshot('in-flight', '2026-12-01T09:00:00Z')
    .withStatus({ state: 'IN_PROGRESS', triggerId: 'apache-trigger-1', triggerTimestamp: '2026-12-01T09:00:05.000Z' })
    .build();
  const [request] = userSnapshotRequests([inFlight], OWNER, emptyInternalState());
  assert.deepEqual(request.inFlight, { triggerId: 'apache-trigger-1', triggeredAt: Date.parse('2026-12-01T09:00:05.000Z') });
  assert.deepEqual(userSnapshotRequests([inFlight], OWNER, withSnapshotTaken(emptyInternalState(), 'uid-in-flight')), [], 'this state follows it already');
});

test('the taken list keeps the newest uids, bounded', () => {
  let state = emptyInternalState();
  for (let i = 0; i < MAX_TAKEN_SNAPSHOTS + 5; i++) state = withSnapshotTaken(state, `uid-${i}`);
  assert.equal(state.takenSnapshots?.length, MAX_TAKEN_SNAPSHOTS);
  assert.equal(state.takenSnapshots?.at(-1), `uid-${MAX_TAKEN_SNAPSHOTS + 4}`);
});

test('operator snapshot names: Apache form, and within 253 characters whatever the resource name', () => {
  assert.equal(operatorSnapshotName('orders', 'SAVEPOINT', 'UPGRADE', 1764460000000), 'orders-savepoint-upgrade-1764460000000');
  const long = operatorSnapshotName('a'.repeat(300), 'CHECKPOINT', 'PERIODIC', 1764460000000);
  assert.ok(long.length <= 253);
  assert.match(long, /^a+-checkpoint-periodic-1764460000000$/);
});

test("a user's snapshot: taken up with the intent; a failure retried after 10 s, 20 s, then FAILED once failures exceed backoffLimit 2", () => {
  const ref = { name: 'before-upgrade', uid: 'uid-1', backoffLimit: 2 };
  const pending: PendingSnapshot = {
    kind: 'savepoint',
    triggerType: 'MANUAL',
    jobId: 'job-1',
    stopJob: false,
    requestedAt: NOW,
    triggerId: 't-0',
    snapshotResource: ref,
  };
  const started = withUserSnapshotStarted(emptyInternalState(), OWNER, pending);
  assert.deepEqual(started.takenSnapshots, ['uid-1']);
  assert.equal(started.pendingSavepoint?.triggerId, 't-0');
  assert.deepEqual(started.snapshotResourceWrites?.[0].status, {
    state: 'IN_PROGRESS',
    triggerId: 't-0',
    triggerTimestamp: new Date(NOW).toISOString(),
    failures: 0,
  });

  let state: InternalState = { ...started, snapshotResourceWrites: undefined };
  const delays: number[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const current = state.pendingSavepoint!;
    const failed = userSnapshotFailure(state, OWNER, current, { kind: 'failed', reason: 'Checkpoint was declined', now: NOW, newTriggerId: `t-${attempt}` });
    state = { ...failed.state, snapshotResourceWrites: undefined };
    const owed = failed.state.snapshotResourceWrites![0].status!;
    if (attempt < 3) {
      delays.push(state.pendingSavepoint!.notBefore! - NOW);
      assert.equal(state.pendingSavepoint!.triggerId, `t-${attempt}`, 'a new trigger id per attempt');
      assert.equal(owed.state, 'IN_PROGRESS');
      assert.equal(owed.failures, attempt);
    } else {
      assert.equal(state.pendingSavepoint, undefined);
      assert.equal(owed.state, 'FAILED');
      assert.equal(owed.failures, 3);
      assert.match(owed.error ?? '', /Checkpoint was declined/);
    }
  }
  assert.deepEqual(delays, [10_000, 20_000]);
});
