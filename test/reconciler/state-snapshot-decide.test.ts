/**
 * Table tests of the FlinkStateSnapshot controller's decision (src/reconciler/state-snapshot-decide.ts):
 * each row a snapshot, what is known of its target, and the one step with its exact fields and
 * messages. Deletion rows follow Apache `StateSnapshotReconciler.cleanup`, the processing rows
 * `StateSnapshotReconciler.reconcile`, `FlinkStateSnapshotController.updateErrorStatus` (backoff)
 * and `FlinkStateSnapshotUtils` (snapshotSuccessful, abandonSnapshotIfJobNotRunning,
 * getSnapshotLabels), apache/flink-kubernetes-operator @ 6e9caeb4.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideStateSnapshot,
  isTargetJobRunning,
  type StateSnapshotDecisionInput,
  type StateSnapshotStep,
} from '../../src/reconciler/state-snapshot-decide.js';
import { snapshotRetryDelayMs } from '../../src/reconciler/snapshot-resources.js';
import { flinkStateSnapshot, type FlinkStateSnapshotBuilder } from '../../src/api/flink-state-snapshot-builder.js';
import { FLINK_STATE_SNAPSHOT_FINALIZER, type FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';

const NOW = Date.parse('2026-12-01T12:00:00.000Z');
const AT = '2026-12-01T12:00:00.000Z';
const PATH = 's3://flink/savepoints/savepoint-aaaa-1';
const GRACE = 60_000;
const LABELS = {
  'snapshot.type': 'SAVEPOINT',
  'snapshot.trigger-type': 'MANUAL',
  'job-reference.kind': 'FlinkDeployment',
  'job-reference.name': 'basic-example',
};

/** A snapshot with our finalizer and its labels, created 10 minutes ago. */
function snapshot(change: (b: FlinkStateSnapshotBuilder) => void = () => {}, meta: Partial<FlinkStateSnapshot['metadata']> = {}): FlinkStateSnapshot {
  const b = flinkStateSnapshot('sp').withFinalizers(FLINK_STATE_SNAPSHOT_FINALIZER).withLabels(LABELS);
  change(b);
  const built = b.build();
  const labels = { ...built.metadata.labels };
  if (built.status) labels['snapshot.state'] = built.status.state ?? 'TRIGGER_PENDING';
  return { ...built, metadata: { ...built.metadata, labels, creationTimestamp: new Date(NOW - 600_000), ...meta } };
}

const deleting = { deletionTimestamp: new Date(NOW - 1_000) };
const running: StateSnapshotDecisionInput['target'] = { kind: 'found', running: true };

function decide(s: FlinkStateSnapshot, extra: Partial<StateSnapshotDecisionInput> = {}): StateSnapshotStep {
  return decideStateSnapshot({ snapshot: s, target: running, now: NOW, notRunningGraceMs: GRACE, ...extra });
}

describe('state snapshot decision: finalizer and labels', () => {
  test('a new snapshot gets the finalizer and the Apache labels in one patch (getSnapshotLabels)', () => {
    const s = flinkStateSnapshot('sp').build();
    assert.deepEqual(decide(s), { kind: 'add-finalizer-and-labels', finalizers: [FLINK_STATE_SNAPSHOT_FINALIZER], labels: LABELS });
  });
  test('an existing trigger-type label is kept; a status adds the state label', () => {
    const s = flinkStateSnapshot('sp')
      .withFinalizers(FLINK_STATE_SNAPSHOT_FINALIZER)
      .withLabels({ ...LABELS, 'snapshot.trigger-type': 'UPGRADE' })
      .withStatus({ state: 'COMPLETED', path: PATH })
      .build();
    assert.deepEqual(decide(s), { kind: 'sync-labels', labels: { 'snapshot.state': 'COMPLETED' } });
  });
  test('a checkpoint is labelled CHECKPOINT', () => {
    const s = snapshot((b) => b.asCheckpoint());
    assert.deepEqual(decide(s), { kind: 'sync-labels', labels: { 'snapshot.type': 'CHECKPOINT' } });
  });
  test('final states: nothing but label upkeep', () => {
    for (const state of ['COMPLETED', 'FAILED', 'ABANDONED'] as const) {
      assert.deepEqual(
        decide(
          snapshot((b) => b.withStatus({ state })),
          { target: { kind: 'missing' } },
        ),
        { kind: 'wait', requeue: 'none' },
        state,
      );
    }
  });
  test("IN_PROGRESS (or TRIGGER_PENDING with a trigger id) is the job reconciler's: wait", () => {
    assert.deepEqual(decide(snapshot((b) => b.withStatus({ state: 'IN_PROGRESS', triggerId: 't1' }))), { kind: 'wait', requeue: 'progress' });
    assert.deepEqual(decide(snapshot((b) => b.withStatus({ state: 'TRIGGER_PENDING', triggerId: 't1' }))), { kind: 'wait', requeue: 'progress' });
  });
  test('IN_PROGRESS whose FlinkDeployment was deleted: ABANDONED (nothing can complete it), not left in progress forever', () => {
    const step = decide(
      snapshot((b) => b.withStatus({ state: 'IN_PROGRESS', triggerId: 't1' })),
      { target: { kind: 'missing' } },
    );
    assert.deepEqual(step, {
      kind: 'abandon',
      status: {
        state: 'ABANDONED',
        error: 'FlinkDeployment/basic-example was deleted while the snapshot was in progress; nothing can complete it',
        resultTimestamp: AT,
      },
      event: {
        type: 'Warning',
        reason: 'SnapshotAbandoned',
        message: 'FlinkDeployment/basic-example was deleted while the snapshot was in progress; nothing can complete it',
      },
    });
  });
});

describe('state snapshot decision: not yet processed', () => {
  test('alreadyExists → COMPLETED with the spec path, both timestamps now, error removed (snapshotSuccessful)', () => {
    assert.deepEqual(decide(snapshot((b) => b.asExistingSavepoint(PATH))), {
      kind: 'complete-existing',
      status: { state: 'COMPLETED', path: PATH, triggerTimestamp: AT, resultTimestamp: AT, error: null },
    });
  });
  test('invalid → FAILED at once with the validation message and the fix', () => {
    const step = decide(snapshot((b) => b.withBackoffLimit(-2)));
    const error =
      'spec.backoffLimit: must be -1 or more, got -2; use -1 to retry without limit, 0 never to retry, or the number of retries (fix the spec and recreate the FlinkStateSnapshot)';
    assert.deepEqual(step, {
      kind: 'fail-invalid',
      status: { state: 'FAILED', error, resultTimestamp: AT },
      event: { type: 'Warning', reason: 'SnapshotError', message: error },
    });
  });
  test('the target missing → error, failures +1, TRIGGER_PENDING, retried after 10 s', () => {
    const error = 'Target for snapshot default/sp was not found: create FlinkDeployment basic-example or fix spec.jobReference';
    assert.deepEqual(decide(snapshot(), { target: { kind: 'missing' } }), {
      kind: 'target-missing',
      status: { failures: 1, error, state: 'TRIGGER_PENDING' },
      retryAfterMs: 10_000,
      event: { type: 'Warning', reason: 'SnapshotError', message: error },
    });
  });
  test('the same error again: only failures is written; the backoff doubles', () => {
    const error = 'Target for snapshot default/sp was not found: create FlinkDeployment basic-example or fix spec.jobReference';
    const s = snapshot((b) => b.withStatus({ state: 'TRIGGER_PENDING', failures: 2, error }));
    const step = decide(s, { target: { kind: 'missing' }, lastAttemptAt: NOW - 20_000 });
    assert.equal(step.kind, 'target-missing');
    assert.deepEqual(step.kind === 'target-missing' && [step.status, step.retryAfterMs], [{ failures: 3 }, 40_000]);
  });
  test('before the backoff has passed: no write, wake up when it has', () => {
    const s = snapshot((b) => b.withStatus({ state: 'TRIGGER_PENDING', failures: 2, error: 'x' }));
    assert.deepEqual(decide(s, { target: { kind: 'missing' }, lastAttemptAt: NOW - 5_000 }), { kind: 'wait', requeue: 'none', wakeUpInMs: 15_000 });
  });
  test('backoffLimit 1: the second failure is FAILED (failures > backoffLimit)', () => {
    const error = 'Target for snapshot default/sp was not found: create FlinkDeployment basic-example or fix spec.jobReference';
    const s = snapshot((b) => b.withBackoffLimit(1).withStatus({ state: 'TRIGGER_PENDING', failures: 1, error }));
    assert.deepEqual(decide(s, { target: { kind: 'missing' } }), {
      kind: 'target-missing',
      status: { failures: 2, state: 'FAILED', resultTimestamp: AT },
      event: { type: 'Warning', reason: 'SnapshotError', message: `${error}; failed 2 times, more than backoffLimit 1: FAILED` },
    });
  });
  test('the backoff is 10 s * 2^(failures-1), capped at 5 minutes', () => {
    assert.deepEqual([1, 2, 3, 5, 6, 40].map(snapshotRetryDelayMs), [10_000, 20_000, 40_000, 160_000, 300_000, 300_000]);
  });
  test('the job not running, snapshot older than the grace → ABANDONED (abandonSnapshotIfJobNotRunning wording)', () => {
    const message = 'Secondary resource FlinkDeployment/basic-example for savepoint sp is not running';
    assert.deepEqual(decide(snapshot(), { target: { kind: 'found', running: false } }), {
      kind: 'abandon',
      status: { state: 'ABANDONED', error: message, resultTimestamp: AT },
      event: { type: 'Warning', reason: 'SnapshotAbandoned', message },
    });
  });
  test('the job not running, snapshot younger than the grace → wait for it to start', () => {
    const s = snapshot(() => {}, { creationTimestamp: new Date(NOW - 30_000) });
    assert.deepEqual(decide(s, { target: { kind: 'found', running: false } }), { kind: 'wait', requeue: 'progress' });
  });
  test('the job running → wait (the job reconciler triggers it)', () => {
    assert.deepEqual(decide(snapshot()), { kind: 'wait', requeue: 'steady' });
  });
  test('a job runs only when jobStatus.state is RUNNING and the lifecycle allows it', () => {
    assert.equal(isTargetJobRunning({ lifecycleState: 'STABLE', jobStatus: { state: 'RUNNING' } }), true);
    assert.equal(isTargetJobRunning({ lifecycleState: 'SUSPENDED', jobStatus: { state: 'RUNNING' } }), false);
    assert.equal(isTargetJobRunning({ jobStatus: { state: 'RECONCILING' } }), false);
    assert.equal(isTargetJobRunning(undefined), false);
  });
});

describe('state snapshot decision: deletion (StateSnapshotReconciler.cleanup)', () => {
  const completed = (b: FlinkStateSnapshotBuilder) => b.withStatus({ state: 'COMPLETED', path: PATH });
  test('a COMPLETED savepoint with a path is disposed of', () => {
    assert.deepEqual(decide(snapshot(completed, deleting)), {
      kind: 'dispose',
      ref: { kind: 'FlinkDeployment', namespace: 'default', name: 'basic-example' },
      path: PATH,
    });
  });
  test('disposed → finalizer removed, Normal SnapshotDisposed', () => {
    assert.deepEqual(decide(snapshot(completed, deleting), { disposal: { outcome: 'disposed' } }), {
      kind: 'remove-finalizer',
      finalizers: [],
      event: { type: 'Normal', reason: 'SnapshotDisposed', message: `Disposed of the savepoint at ${PATH} before deleting FlinkStateSnapshot default/sp` },
    });
  });
  test('target gone → finalizer removed, data left in place with a Warning (Apache blocks forever here)', () => {
    const step = decide(snapshot(completed, deleting), { disposal: { outcome: 'target-gone' } });
    assert.equal(step.kind, 'remove-finalizer');
    assert.equal(step.kind === 'remove-finalizer' && step.event?.type, 'Warning');
    assert.match(
      (step.kind === 'remove-finalizer' && step.event?.message) || '',
      /savepoint data at s3:\/\/flink\/savepoints\/savepoint-aaaa-1 was left in place: FlinkDeployment basic-example/,
    );
  });
  test('unreachable → finalizer kept, Warning, retried after the progress interval', () => {
    assert.deepEqual(decide(snapshot(completed, deleting), { disposal: { outcome: 'unreachable', reason: 'connection refused' } }), {
      kind: 'wait',
      requeue: 'progress',
      event: {
        type: 'Warning',
        reason: 'SnapshotDisposeFailed',
        message: `Could not dispose of the savepoint at ${PATH} (connection refused); retried until the job's cluster answers; remove the finalizer by hand to leave the data`,
      },
    });
  });
  test('IN_PROGRESS → finalizer kept until the job reconciler finishes it', () => {
    assert.deepEqual(decide(snapshot((b) => b.withStatus({ state: 'IN_PROGRESS', triggerId: 't' }), deleting)), { kind: 'wait', requeue: 'progress' });
  });
  test('removed at once: checkpoint, disposeOnDelete false, no path, FAILED / TRIGGER_PENDING / ABANDONED', () => {
    const cases: [string, (b: FlinkStateSnapshotBuilder) => void][] = [
      ['checkpoint', (b) => b.asCheckpoint().withStatus({ state: 'COMPLETED', path: PATH })],
      ['disposeOnDelete false', (b) => b.asSavepoint({ disposeOnDelete: false }).withStatus({ state: 'COMPLETED', path: PATH })],
      ['no path', (b) => b.withStatus({ state: 'COMPLETED' })],
      ['FAILED', (b) => b.withStatus({ state: 'FAILED' })],
      ['TRIGGER_PENDING', (b) => b.withStatus({ state: 'TRIGGER_PENDING' })],
      ['ABANDONED', (b) => b.withStatus({ state: 'ABANDONED' })],
    ];
    for (const [name, change] of cases) {
      const s = snapshot(change, { ...deleting, finalizers: ['other/keep', FLINK_STATE_SNAPSHOT_FINALIZER] });
      assert.deepEqual(decide(s), { kind: 'remove-finalizer', finalizers: ['other/keep'] }, name);
    }
  });
  test('deleting without our finalizer: nothing', () => {
    assert.deepEqual(decide(snapshot(() => {}, { ...deleting, finalizers: [] })), { kind: 'wait', requeue: 'none' });
  });
});
