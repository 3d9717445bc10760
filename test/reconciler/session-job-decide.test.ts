/**
 * Table tests of the session-job decision function (src/reconciler/session-job-decide.ts): each
 * row a phase and its state, the desired spec, what was observed of the session cluster → the one
 * step and its key fields. The deletion rows follow the Apache operator's
 * SessionJobReconciler.cleanupInternal (apache/flink-kubernetes-operator @ 6e9caeb4).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSessionJobSpec } from '../../src/api/flink-session-job-builder.js';
import type { FlinkSessionJobSpec } from '../../src/api/flink-session-job-spec.js';
import { emptyInternalState, type SessionJobInternalState } from '../../src/api/internal-state.js';
import { deploymentOperatorSettings } from '../../src/reconciler/deployment-operator-settings.js';
import {
  decideSessionJob,
  needsNewSubmission,
  suspendedSpec,
  type SessionJobDecisionInput,
  type SessionJobObservation,
  type SessionJobStep,
} from '../../src/reconciler/session-job-decide.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const JOB_A = 'a'.repeat(32);
const SAVEPOINT = 's3://flink/savepoints/savepoint-aaaa-1';
const CHECKPOINT = 's3://flink/checkpoints/aaaa/chk-7';

function spec(change: (s: FlinkSessionJobSpec) => void = () => {}): FlinkSessionJobSpec {
  const s = defaultSessionJobSpec();
  change(s);
  return s;
}

function stateIn(phase: SessionJobInternalState['phase'], extra: Partial<SessionJobInternalState> = {}): SessionJobInternalState {
  const running = spec();
  return {
    ...emptyInternalState(),
    revision: 3,
    phase,
    lastReconciledSpec: running,
    lastReconciledGeneration: 1,
    lastStableSpec: running,
    lastStableGeneration: 1,
    ...(phase === 'DEPLOYED' || phase === 'RUNNING' ? { deployedJobId: JOB_A } : {}),
    savepointHistory: [{ location: SAVEPOINT, timeStamp: NOW - 60_000, triggerType: 'UPGRADE', jobId: JOB_A }],
    ...extra,
  };
}

const ready = (jobs: Array<[string, string]> = []): SessionJobObservation => ({
  cluster: { kind: 'ready', highAvailability: false },
  jobs: jobs.map(([jobId, state]) => ({ jobId, state })),
});

function input(
  state: SessionJobInternalState,
  desired: FlinkSessionJobSpec,
  observed: SessionJobObservation,
  more: Partial<SessionJobDecisionInput> = {},
): SessionJobDecisionInput {
  return {
    state,
    desired,
    desiredGeneration: 2,
    observed,
    settings: deploymentOperatorSettings(desired),
    deleting: false,
    now: NOW,
    resource: 'team-a/orders',
    ...more,
  };
}

function stepOf(i: SessionJobDecisionInput): SessionJobStep {
  return decideSessionJob(i).step;
}

function expectStep(i: SessionJobDecisionInput, expected: Partial<SessionJobStep> & { kind: SessionJobStep['kind'] }): SessionJobStep {
  const step = stepOf(i);
  for (const [key, value] of Object.entries(expected)) assert.deepEqual((step as Record<string, unknown>)[key], value, `${key} of ${JSON.stringify(step)}`);
  return step;
}

describe('session-job decisions: submission', () => {
  test('NEW on a ready cluster: pin (a state write only), restoring from initialSavepointPath', () => {
    const desired = spec((s) => (s.job!.initialSavepointPath = SAVEPOINT));
    expectStep(input(emptyInternalState(), desired, ready()), { kind: 'pin', restoreFrom: SAVEPOINT, generation: 2, why: 'first submission' });
  });
  test('NEW with job.state suspended: recorded SUSPENDED without a cluster', () => {
    const desired = spec((s) => (s.job!.state = 'suspended'));
    expectStep(input(emptyInternalState(), desired, { cluster: { kind: 'missing' } }), { kind: 'record-suspended' });
  });
  test('the cluster missing, an application cluster, not ready, or silent: wait, saying what to fix', () => {
    const cases: Array<[SessionJobObservation, RegExp]> = [
      [
        { cluster: { kind: 'missing' } },
        /Session cluster session-cluster not found in namespace team-a: create a FlinkDeployment session-cluster without spec\.job/,
      ],
      [{ cluster: { kind: 'application' } }, /is an application cluster/],
      [{ cluster: { kind: 'not-ready', reason: 'its JobManager is not available', highAvailability: false } }, /not ready \(its JobManager is not available\)/],
      [{ cluster: { kind: 'ready', highAvailability: false }, restUnreachable: 'ECONNREFUSED' }, /does not answer \(ECONNREFUSED\)/],
    ];
    for (const [observed, message] of cases) {
      const step = expectStep(input(emptyInternalState(), spec(), observed), { kind: 'wait', requeue: 'progress' });
      assert.match((step as { error?: string }).error ?? '', message);
    }
  });
  test('DEPLOYING: submit only when Flink does not know the pinned job id; known → recorded, never run again', () => {
    const pinned = stateIn('DEPLOYING', { jobIdToSubmit: JOB_A, deployedJobId: undefined });
    expectStep(input(pinned, spec(), ready()), { kind: 'submit' });
    expectStep(input(pinned, spec(), ready([[JOB_A, 'INITIALIZING']])), { kind: 'record-submitted' });
    // Flink not asked: no submission.
    expectStep(input(pinned, spec(), { cluster: { kind: 'ready', highAvailability: false } }), { kind: 'wait' });
  });
  test('DEPLOYED and the job runs: RUNNING', () => {
    expectStep(input(stateIn('DEPLOYED'), spec(), ready([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), { kind: 'record-running' });
  });
  test('RUNNING and nothing changed: wait steady, no error', () => {
    expectStep(input(stateIn('RUNNING'), spec(), ready([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), { kind: 'wait', requeue: 'steady' });
  });
  test('the job is gone from an answering cluster (restarted without HA): a new pin from the newest savepoint, and a JobLost warning', () => {
    const decision = decideSessionJob(input(stateIn('RUNNING'), spec(), ready(), { desiredGeneration: 1 }));
    assert.equal(decision.step.kind, 'pin');
    assert.equal((decision.step as { restoreFrom?: string }).restoreFrom, SAVEPOINT);
    assert.equal(decision.announce?.reason, 'JobLost');
    const stateless = spec((s) => (s.job!.upgradeMode = 'stateless'));
    expectStep(input(stateIn('RUNNING'), stateless, ready(), { desiredGeneration: 1 }), { kind: 'pin', restoreFrom: undefined });
  });
});

describe('session-job decisions: upgrades, suspend, resume', () => {
  const newArgs = spec((s) => (s.job!.args = ['--speed', '2']));
  test('a spec change in savepoint mode: stop with a savepoint, the new spec reconciled suspended (as the Apache operator records it)', () => {
    expectStep(input(stateIn('RUNNING'), newArgs, ready([[JOB_A, 'RUNNING']])), {
      kind: 'stop',
      mode: 'savepoint',
      spec: suspendedSpec(newArgs),
      suspend: false,
      generation: 2,
    });
  });
  test('stateless: cancel; last-state: the newest checkpoint first, then cancel restoring from it, or a savepoint when there is none', () => {
    const stateless = spec((s) => ((s.job!.upgradeMode = 'stateless'), (s.job!.args = ['x'])));
    expectStep(input(stateIn('RUNNING'), stateless, ready([[JOB_A, 'RUNNING']])), { kind: 'stop', mode: 'cancel', restoreFrom: undefined });
    const lastState = spec((s) => ((s.job!.upgradeMode = 'last-state'), (s.job!.args = ['x'])));
    expectStep(input(stateIn('RUNNING'), lastState, ready([[JOB_A, 'RUNNING']])), { kind: 'gather-checkpoint' });
    expectStep(input(stateIn('RUNNING'), lastState, { ...ready([[JOB_A, 'RUNNING']]), latestCheckpoint: CHECKPOINT }), {
      kind: 'stop',
      mode: 'cancel',
      restoreFrom: CHECKPOINT,
    });
    expectStep(input(stateIn('RUNNING'), lastState, { ...ready([[JOB_A, 'RUNNING']]), latestCheckpoint: null }), { kind: 'stop', mode: 'savepoint' });
  });
  test('suspend: a stop with a savepoint that ends SUSPENDED; resume: a pin from the suspend savepoint (none when stateless)', () => {
    const suspended = spec((s) => (s.job!.state = 'suspended'));
    expectStep(input(stateIn('RUNNING'), suspended, ready([[JOB_A, 'RUNNING']])), { kind: 'stop', mode: 'savepoint', suspend: true, spec: suspended });
    const afterSuspend = stateIn('SUSPENDED', { deployedJobId: undefined, upgradeSavepointPath: SAVEPOINT, lastReconciledSpec: suspended });
    expectStep(input(afterSuspend, spec(), ready()), { kind: 'pin', restoreFrom: SAVEPOINT, why: 'resume' });
    expectStep(input(afterSuspend, suspended, ready()), { kind: 'wait', requeue: 'steady' });
    expectStep(
      input(
        afterSuspend,
        spec((s) => (s.job!.upgradeMode = 'stateless')),
        ready(),
      ),
      { kind: 'pin', restoreFrom: undefined },
    );
  });
  test('in flight: a pending savepoint is followed, a cancel is followed; STOPPED pins the new job from the upgrade savepoint', () => {
    const pending = stateIn('STOPPING', {
      pendingSavepoint: { kind: 'savepoint', triggerType: 'UPGRADE', jobId: JOB_A, stopJob: true, requestedAt: NOW, triggerId: 'f'.repeat(32) },
    });
    expectStep(input(pending, newArgs, ready([[JOB_A, 'RUNNING']])), { kind: 'follow-savepoint' });
    expectStep(input(stateIn('STOPPING'), newArgs, ready([[JOB_A, 'CANCELLING']])), { kind: 'follow-cancel' });
    const stopped = stateIn('STOPPED', { deployedJobId: undefined, upgradeSavepointPath: SAVEPOINT });
    expectStep(input(stopped, newArgs, ready()), { kind: 'pin', restoreFrom: SAVEPOINT, why: 'upgrade to generation 2' });
  });
  test('restartNonce restarts; a new savepointTriggerNonce alone (or operator settings) is recorded, then a manual savepoint: not a new submission', () => {
    expectStep(
      input(
        stateIn('RUNNING'),
        spec((s) => (s.restartNonce = 1)),
        ready([[JOB_A, 'RUNNING']]),
      ),
      { kind: 'stop', why: 'restart (restartNonce changed)' },
    );
    const nonce = spec((s) => (s.job!.savepointTriggerNonce = 7));
    assert.equal(needsNewSubmission(spec(), nonce), false);
    // First the new generation is recorded (observedGeneration follows), the nonce not yet acknowledged; then the savepoint.
    const ack = expectStep(input(stateIn('RUNNING'), nonce, ready([[JOB_A, 'RUNNING']])), { kind: 'acknowledge', generation: 2 });
    assert.equal((ack as { spec: FlinkSessionJobSpec }).spec.job?.savepointTriggerNonce, undefined);
    const acknowledged = stateIn('RUNNING', { lastReconciledGeneration: 2 });
    expectStep(input(acknowledged, nonce, ready([[JOB_A, 'RUNNING']])), { kind: 'start-savepoint', triggerType: 'MANUAL', nonce: 7 });
    // Operator settings only (kubernetes.operator.*): recorded, never resubmitted.
    const settingsOnly = spec((s) => (s.flinkConfiguration = { 'kubernetes.operator.periodic.savepoint.interval': '1h' }));
    assert.equal(needsNewSubmission(spec(), settingsOnly), false);
    assert.equal(
      needsNewSubmission(
        spec(),
        spec((s) => (s.flinkConfiguration = { 'pipeline.max-parallelism': '64' })),
      ),
      true,
    );
  });
  test('periodic savepoints are taken when due (counted from the last one)', () => {
    const periodic = spec((s) => (s.flinkConfiguration = { 'kubernetes.operator.periodic.savepoint.interval': '1h' }));
    const state = stateIn('RUNNING', { lastPeriodicSavepointTimestamp: NOW - 2 * 3600_000, lastReconciledSpec: periodic });
    expectStep(input(state, periodic, ready([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), { kind: 'start-savepoint', triggerType: 'PERIODIC' });
    const fresh = { ...state, lastPeriodicSavepointTimestamp: NOW - 600_000 };
    expectStep(input(fresh, periodic, ready([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), { kind: 'wait', wakeUpInMs: 3000_000 });
  });
  test('an upgrade whose stop failed is not retried for the same generation', () => {
    const failed = stateIn('RUNNING', { failedUpgrade: { generation: 2, reason: 'savepoint failed', at: '2026-12-01T11:00:00Z' } });
    const step = expectStep(input(failed, newArgs, ready([[JOB_A, 'RUNNING']])), { kind: 'wait', requeue: 'steady' });
    assert.match((step as { error?: string }).error ?? '', /generation 2 failed: savepoint failed/);
  });
});

describe('session-job decisions: deletion (SessionJobReconciler.cleanupInternal)', () => {
  const del = (state: SessionJobInternalState, observed: SessionJobObservation, flinkConfiguration?: Record<string, string>) =>
    input(state, spec(), observed, { deleting: true, settings: deploymentOperatorSettings({ flinkConfiguration }) });
  test('nothing runs, or the cluster is gone: the finalizer is released at once', () => {
    expectStep(del(emptyInternalState(), ready()), { kind: 'release' });
    expectStep(del(stateIn('SUSPENDED', { deployedJobId: undefined }), ready()), { kind: 'release' });
    expectStep(del(stateIn('RUNNING'), { cluster: { kind: 'missing' } }), { kind: 'release' });
    expectStep(del(stateIn('RUNNING'), ready([[JOB_A, 'CANCELED']])), { kind: 'release' });
  });
  test('a cluster being deleted: released unless it blocks on its session jobs (then the job is cancelled as usual)', () => {
    expectStep(del(stateIn('RUNNING'), { cluster: { kind: 'deleting', blockOnSessionJobs: false, highAvailability: false }, jobs: [] }), { kind: 'release' });
    expectStep(
      del(stateIn('RUNNING'), { cluster: { kind: 'deleting', blockOnSessionJobs: true, highAvailability: false }, jobs: [{ jobId: JOB_A, state: 'RUNNING' }] }),
      { kind: 'stop', mode: 'cancel' },
    );
  });
  test('a cluster that is not ready: released without HA (its jobs are gone), waits with HA', () => {
    expectStep(del(stateIn('RUNNING'), { cluster: { kind: 'not-ready', reason: 'x', highAvailability: false } }), { kind: 'release' });
    expectStep(del(stateIn('RUNNING'), { cluster: { kind: 'not-ready', reason: 'x', highAvailability: true } }), { kind: 'wait' });
  });
  test('a running job is cancelled, or stopped with a savepoint with job.savepoint-on-deletion', () => {
    expectStep(del(stateIn('RUNNING'), ready([[JOB_A, 'RUNNING']])), { kind: 'stop', mode: 'cancel', why: 'deletion' });
    expectStep(del(stateIn('RUNNING'), ready([[JOB_A, 'RUNNING']]), { 'kubernetes.operator.job.savepoint-on-deletion': 'true' }), {
      kind: 'stop',
      mode: 'savepoint',
    });
  });
});

describe('session-job decisions: what the Apache operator ignores, and where a stopped job comes back from', () => {
  test('upgradeMode, initialSavepointPath, allowNonRestoredState alone are recorded, not resubmitted (JobSpec @SpecDiff IGNORE)', () => {
    for (const change of [
      (s: FlinkSessionJobSpec) => (s.job!.upgradeMode = 'last-state'),
      (s: FlinkSessionJobSpec) => (s.job!.initialSavepointPath = SAVEPOINT),
      (s: FlinkSessionJobSpec) => (s.job!.allowNonRestoredState = true),
    ]) {
      assert.equal(needsNewSubmission(spec(), spec(change)), false);
      expectStep(input(stateIn('RUNNING'), spec(change), ready([[JOB_A, 'RUNNING']])), { kind: 'acknowledge' });
    }
  });
  test('savepointRedeployNonce: cancel, then submit from initialSavepointPath (SAVEPOINT_REDEPLOY)', () => {
    const redeploy = spec((s) => ((s.job!.savepointRedeployNonce = 1), (s.job!.initialSavepointPath = SAVEPOINT)));
    expectStep(input(stateIn('RUNNING'), redeploy, ready([[JOB_A, 'RUNNING']])), { kind: 'stop', mode: 'cancel', restoreFrom: SAVEPOINT });
  });
  test('STOPPED honours a suspend or a stateless mode asked meanwhile', () => {
    const stopped = stateIn('STOPPED', { deployedJobId: undefined, upgradeSavepointPath: SAVEPOINT });
    expectStep(
      input(
        stopped,
        spec((s) => (s.job!.state = 'suspended')),
        ready(),
      ),
      { kind: 'record-suspended' },
    );
    expectStep(
      input(
        stopped,
        spec((s) => (s.job!.upgradeMode = 'stateless')),
        ready(),
      ),
      { kind: 'pin', restoreFrom: undefined },
    );
  });
  test('a failed job comes back from the path recorded at its failure, unless a newer savepoint was taken since', () => {
    const failedAt = '2026-12-01T11:00:00Z';
    const failed = stateIn('RUNNING', {
      upgradeSavepointPath: CHECKPOINT,
      reconciliationTimestamp: failedAt,
      savepointHistory: [{ location: SAVEPOINT, timeStamp: Date.parse(failedAt) - 60_000, triggerType: 'UPGRADE' }],
    });
    const change = spec((s) => (s.job!.args = ['x']));
    expectStep(input(failed, change, ready([[JOB_A, 'FAILED']])), { kind: 'pin', restoreFrom: CHECKPOINT });
    const newer = { ...failed, savepointHistory: [{ location: SAVEPOINT, timeStamp: Date.parse(failedAt) + 60_000, triggerType: 'MANUAL' as const }] };
    expectStep(input(newer, change, ready([[JOB_A, 'FAILED']])), { kind: 'pin', restoreFrom: SAVEPOINT });
  });
});

// Checkpoints on request (design/010): the FlinkDeployment's rules (design/005 "Checkpoints"), the
// Flink version that of the session cluster (POST /jobs/:id/checkpoints exists from Flink 1.19).
describe('session-job decisions: checkpoints', () => {
  const onV120 = (jobs: Array<[string, string]>): SessionJobObservation => ({ ...ready(jobs), clusterFlinkVersion: 'v1_20' });
  const nonce = spec((s) => (s.job!.checkpointTriggerNonce = 3));
  const newArgs = spec((s) => (s.job!.args = ['--speed', '2']));
  const pendingCheckpoint = {
    kind: 'checkpoint' as const,
    triggerType: 'MANUAL' as const,
    checkpointType: 'FULL' as const,
    jobId: JOB_A,
    stopJob: false,
    requestedAt: NOW,
    triggerId: 'c'.repeat(32),
    triggerNonce: 3,
  };
  test('a new checkpointTriggerNonce: recorded first without the nonce, then a MANUAL checkpoint with it (no new submission)', () => {
    assert.equal(needsNewSubmission(spec(), nonce), false);
    const ack = expectStep(input(stateIn('RUNNING'), nonce, onV120([[JOB_A, 'RUNNING']])), { kind: 'acknowledge', generation: 2 });
    assert.equal((ack as { spec: FlinkSessionJobSpec }).spec.job?.checkpointTriggerNonce, undefined, 'acknowledged only once the checkpoint completed');
    const recorded = stateIn('RUNNING', { lastReconciledGeneration: 2 });
    expectStep(input(recorded, nonce, onV120([[JOB_A, 'RUNNING']])), {
      kind: 'start-checkpoint',
      request: { triggerType: 'MANUAL', jobId: JOB_A, checkpointType: 'FULL', nonce: 3 },
    });
  });
  test('a pending checkpoint is followed (after a pending savepoint), even while a spec change waits', () => {
    const pending = stateIn('RUNNING', { pendingCheckpoint });
    expectStep(input(pending, newArgs, onV120([[JOB_A, 'RUNNING']])), { kind: 'follow-checkpoint' });
    const both = stateIn('RUNNING', {
      pendingCheckpoint,
      pendingSavepoint: { kind: 'savepoint', triggerType: 'MANUAL', jobId: JOB_A, stopJob: false, requestedAt: NOW, triggerId: 'f'.repeat(32) },
    });
    expectStep(input(both, spec(), onV120([[JOB_A, 'RUNNING']])), { kind: 'follow-savepoint' });
  });
  test('an acknowledged checkpoint nonce is kept when another change is recorded; the same nonce asks nothing again', () => {
    const acked = spec((s) => (s.job!.checkpointTriggerNonce = 3));
    const state = stateIn('RUNNING', { lastReconciledSpec: acked, lastReconciledGeneration: 2 });
    expectStep(input(state, acked, onV120([[JOB_A, 'RUNNING']])), { kind: 'wait', requeue: 'steady' });
    const withSettings = spec((s) => {
      s.job!.checkpointTriggerNonce = 3;
      s.flinkConfiguration = { 'kubernetes.operator.savepoint.history.max.count': '3' };
    });
    const ack = expectStep(input(state, withSettings, onV120([[JOB_A, 'RUNNING']]), { desiredGeneration: 3 }), { kind: 'acknowledge' });
    assert.equal((ack as { spec: FlinkSessionJobSpec }).spec.job?.checkpointTriggerNonce, 3);
  });
  test('periodic checkpoints when due; the wake-up is the sooner of the periodic savepoint and checkpoint', () => {
    const periodic = spec(
      (s) =>
        (s.flinkConfiguration = {
          'kubernetes.operator.periodic.checkpoint.interval': '10m',
          'kubernetes.operator.periodic.savepoint.interval': '1h',
        }),
    );
    const due = stateIn('RUNNING', {
      lastReconciledSpec: periodic,
      lastPeriodicCheckpointTimestamp: NOW - 11 * 60_000,
      lastPeriodicSavepointTimestamp: NOW - 60_000,
    });
    expectStep(input(due, periodic, onV120([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), {
      kind: 'start-checkpoint',
      request: { triggerType: 'PERIODIC', jobId: JOB_A, checkpointType: 'FULL' },
    });
    const taken = { ...due, lastPeriodicCheckpointTimestamp: NOW - 60_000 };
    expectStep(input(taken, periodic, onV120([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), { kind: 'wait', wakeUpInMs: 9 * 60_000 });
    // Not while the job does not run.
    expectStep(input(due, periodic, onV120([[JOB_A, 'RESTARTING']]), { desiredGeneration: 1 }), { kind: 'wait', requeue: 'progress' });
  });
  test('a session cluster older than Flink 1.19 takes no checkpoint on request (and is not woken for one)', () => {
    const old = (jobs: Array<[string, string]>): SessionJobObservation => ({ ...ready(jobs), clusterFlinkVersion: 'v1_18' });
    const recorded = stateIn('RUNNING', { lastReconciledGeneration: 2 });
    expectStep(input(recorded, nonce, old([[JOB_A, 'RUNNING']])), { kind: 'wait', requeue: 'steady', wakeUpInMs: undefined });
    const periodic = spec((s) => (s.flinkConfiguration = { 'kubernetes.operator.periodic.checkpoint.interval': '10m' }));
    const due = stateIn('RUNNING', { lastReconciledSpec: periodic, lastPeriodicCheckpointTimestamp: NOW - 11 * 60_000 });
    expectStep(input(due, periodic, old([[JOB_A, 'RUNNING']]), { desiredGeneration: 1 }), { kind: 'wait', requeue: 'steady', wakeUpInMs: undefined });
  });
});

describe('session-job decisions: FlinkStateSnapshot resources (issue 19, design/011)', () => {
  const user = { ref: { name: 'before-upgrade', uid: 'uid-1', backoffLimit: -1 }, snapshotType: 'SAVEPOINT' as const };
  const acknowledged = (phase: SessionJobInternalState['phase'], extra: Partial<SessionJobInternalState> = {}) =>
    stateIn(phase, { lastReconciledGeneration: 2, ...extra });
  test('an owed resource write goes first, even before a pending savepoint is followed', () => {
    const owed = {
      name: 'x',
      action: 'publish' as const,
      snapshotType: 'SAVEPOINT' as const,
      triggerType: 'PERIODIC' as const,
      jobReference: { kind: 'FlinkSessionJob' as const, name: 'orders' },
    };
    const pendingSavepoint = { kind: 'savepoint' as const, triggerType: 'MANUAL' as const, jobId: JOB_A, stopJob: false, requestedAt: NOW, triggerId: 't' };
    expectStep(input(acknowledged('RUNNING', { snapshotResourceWrites: [owed], pendingSavepoint }), spec(), ready([[JOB_A, 'RUNNING']])), {
      kind: 'publish-snapshot-resource',
    });
  });
  test("a user's savepoint of the running job is taken (MANUAL), before any periodic one", () => {
    expectStep(input(acknowledged('RUNNING'), spec(), { ...ready([[JOB_A, 'RUNNING']]), userSnapshots: [user] }), {
      kind: 'start-savepoint',
      triggerType: 'MANUAL',
      user,
    });
  });
  test("a user's checkpoint on a session cluster older than Flink 1.19 is refused, with the reason", () => {
    const step = expectStep(
      input(acknowledged('RUNNING'), spec(), {
        ...ready([[JOB_A, 'RUNNING']]),
        clusterFlinkVersion: 'v1_18',
        userSnapshots: [{ ...user, snapshotType: 'CHECKPOINT' }],
      }),
      { kind: 'refuse-user-snapshot', snapshotType: 'CHECKPOINT' },
    );
    assert.match((step as { error: string }).error, /needs Flink 1\.19 or newer/);
  });
});
