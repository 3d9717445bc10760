/**
 * Unit tests of FlinkSessionJobReconciler with every dependency faked (session-job-fakes.ts): the
 * order of intent (state ConfigMap write), effect (Flink call) and result (state write) in each
 * step, and the crash windows between them, each simulated by a pass whose Flink call or state
 * write fails, then a pass of a new operator process (`restart()`) on what the fakes hold.
 *
 * Flink behaviour the fakes emulate, and where it comes from:
 * - a job id the Dispatcher already has is refused (flink-runtime Dispatcher.submitJob →
 *   DuplicateJobSubmissionException, answered by JarRunHandler as a 400 with the cause chain);
 * - a repeated savepoint trigger id is the same operation, an unknown one a 404 (flink-runtime
 *   AbstractAsynchronousOperationHandlers / CompletedOperationCache, trigger ids since 1.15);
 * - an operation result is kept only `rest.async.operation.store-duration` (RestOptions, 5 min),
 *   after which the savepoint is found in GET /jobs/:id/checkpoints only (pending-savepoint.ts);
 * - the deletion rules are the Apache operator's SessionJobReconciler.cleanupInternal
 *   (apache/flink-kubernetes-operator @ 6e9caeb4): cancel a running job, or stop it with a
 *   savepoint with `kubernetes.operator.job.savepoint-on-deletion`, then remove the finalizer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSessionJobSpec } from '../../src/api/flink-session-job-builder.js';
import type { FlinkSessionJobSpec } from '../../src/api/flink-session-job-spec.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { isDuplicateJobSubmission } from '../../src/flink/flink-rest-error.js';
import {
  CLUSTER,
  J,
  JOB_A,
  NAME,
  NOW,
  NS,
  SAVEPOINT_DIR,
  TIMINGS,
  duplicateSubmissionError,
  harness,
  listedJob,
  sessionJobOf,
  stateIn,
  type Harness,
} from './session-job-fakes.js';

const STATE_CONFIGMAP = `${NAME}.sessionjob-state`;
const RESOURCE = `FlinkSessionJob ${NS}/${NAME}`;
const JAR_URI = defaultSessionJobSpec().job!.jarURI!;
const JAR_FILE = JAR_URI.slice(JAR_URI.lastIndexOf('/') + 1);
const ENTRY_CLASS = defaultSessionJobSpec().job!.entryClass!;
const SAVEPOINT = `${SAVEPOINT_DIR}/savepoint-aaaaaa-0123456789ab`;

/** What every pass on a ready cluster starts with: the state, the cluster's REST client, one GET /jobs/overview. */
const OBSERVE = ['store.load', `flinkApi ${CLUSTER}`, 'flink.listJobs'];

function spec(edit: (s: FlinkSessionJobSpec) => void = () => {}): FlinkSessionJobSpec {
  const s = defaultSessionJobSpec();
  edit(s);
  return s;
}

/** A new session job after its first pass: finalizer added, J(1) pinned (revision 1); the log cleared. */
async function pinnedNewJob(): Promise<Harness> {
  const h = harness({ job: sessionJobOf(spec(), { finalizer: false }) });
  await h.pass();
  assert.equal(h.store.state?.jobIdToSubmit, J(1), h.log.join('\n'));
  h.log.length = 0;
  h.clock.now += 1_000;
  return h;
}

/** A session job running JOB_A (revision 5) whose spec the user changed to parallelism 4 (generation 2). */
function runningJobUpgraded(): Harness {
  const s = spec();
  const h = harness({ job: sessionJobOf(s), state: stateIn('RUNNING', s), jobs: [listedJob(JOB_A, 'RUNNING')] });
  h.editSpec((edited) => (edited.job!.parallelism = 4));
  return h;
}

/** The next pass, the log cleared first and the clock a second on. */
async function nextPass(h: Harness) {
  h.log.length = 0;
  h.clock.now += 1_000;
  return h.pass();
}

/** The next pass as the work queue runs it: a pass that throws is retried later (logged here as `pass failed: …`). */
async function nextPassRetried(h: Harness): Promise<void> {
  try {
    await nextPass(h);
  } catch (error) {
    h.log.push(`pass failed: ${(error as Error).message}`);
  }
}

describe('FlinkSessionJobReconciler: first submission', () => {
  test('pass 1: finalizer, then the pin (DEPLOYING + jobIdToSubmit) and nothing sent to Flink; pass 2: fetch, upload, run with exactly that id, delete the jar, then DEPLOYED; pass 3: RUNNING', async () => {
    const h = harness({ job: sessionJobOf(spec(), { finalizer: false }) });
    const first = await h.pass();
    assert.deepEqual(h.log, [
      'store.load',
      'finalizers.add',
      `flinkApi ${CLUSTER}`,
      'flink.listJobs',
      `store.update revision 1: DEPLOYING jobIdToSubmit=${J(1)}`,
      'status.record',
    ]);
    assert.deepEqual(h.fence.asked, [`add the finalizer to ${RESOURCE}`, `write operator state ${NS}/${STATE_CONFIGMAP}`, `patch status of ${RESOURCE}`]);
    const pin = h.store.written[0];
    assert.equal(pin?.phase, 'DEPLOYING');
    assert.equal(pin?.jobIdToSubmit, J(1));
    assert.deepEqual(pin?.lastReconciledSpec, spec());
    assert.equal(pin?.lastReconciledGeneration, 1);
    assert.equal(pin?.upgradeSavepointPath, undefined);
    assert.equal(pin?.reconciliationTimestamp, '2026-12-01T12:00:00Z');
    assert.equal(h.current()?.metadata.finalizers?.includes('flinksessionjobs.flink.apache.org/finalizer'), true);
    assert.deepEqual(h.statuses[0]?.jobStatus, { jobId: J(1), state: 'RECONCILING' });
    assert.deepEqual(h.statuses[0]?.stateRef, { configMapName: STATE_CONFIGMAP, revision: 1 });
    assert.equal(h.statuses[0]?.observedGeneration, 1);
    assert.equal(h.statuses[0]?.error, undefined);
    assert.deepEqual(first, { requeueAfterMs: 0 }, 'the pin is followed at once by the submission');

    const second = await nextPass(h);
    const jarId = `jar-1_${JAR_FILE}`;
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `fetchJar ${JAR_URI}`,
      `flink.uploadJar ${JAR_FILE} (4 bytes)`,
      `flink.runJar ${jarId} jobId=${J(1)}`,
      `flink.deleteJar ${jarId}`,
      'store.update revision 2: DEPLOYED',
      'status.record',
    ]);
    assert.deepEqual(h.flink.runs, [{ jarId, request: { jobId: J(1), entryClass: ENTRY_CLASS, parallelism: 2 } }]);
    assert.deepEqual(h.flink.uploaded, new Set(), 'the uploaded jar is deleted after the run');
    assert.equal(h.issued(), 1, 'no second job id is made');
    const deployed = h.store.state!;
    assert.equal(deployed.phase, 'DEPLOYED');
    assert.equal(deployed.deployedJobId, J(1));
    assert.equal(deployed.jobIdToSubmit, undefined);
    assert.deepEqual(
      h.events.map((e) => `${e.reason}: ${e.message}`),
      [`Submit: Started job ${J(1)} on session cluster ${CLUSTER} without state`],
    );
    assert.deepEqual(h.statuses[1]?.jobStatus, { jobId: J(1), state: 'RECONCILING' }, 'Flink had not listed the job when the pass looked');
    assert.deepEqual(h.statuses[1]?.stateRef, { configMapName: STATE_CONFIGMAP, revision: 2 });
    assert.deepEqual(second, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });

    const third = await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'store.update revision 3: RUNNING', 'status.record']);
    const status = h.statuses[2];
    assert.equal(status.jobStatus?.jobId, J(1));
    assert.equal(status.jobStatus?.state, 'RUNNING');
    assert.equal(status.jobStatus?.jobName, 'TopSpeedWindowing');
    assert.equal(status.lifecycleState, 'STABLE');
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [['Ready', 'True', 'JobRunning']],
    );
    assert.deepEqual(status.stateRef, { configMapName: STATE_CONFIGMAP, revision: 3 });
    assert.equal(h.flink.runs.length, 1);
    assert.deepEqual(third, { requeueAfterMs: TIMINGS.reconcileIntervalMs });
  });
});

describe('FlinkSessionJobReconciler: crash windows of a submission', () => {
  test('the run reached Flink but its answer was lost: the next process finds the pinned id in GET /jobs and records DEPLOYED without running it again', async () => {
    const h = await pinnedNewJob();
    h.flink.interruptNext('runJar', true);
    await h.pass();
    assert.match(h.statuses.at(-1)?.error ?? '', /Flink did not run the job: .*ECONNRESET/);
    assert.equal(h.store.state?.phase, 'DEPLOYING', 'the outcome is unknown: nothing is recorded as submitted');

    h.restart();
    const result = await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'store.update revision 2: DEPLOYED', 'status.record']);
    assert.deepEqual(
      h.flink.runs.map((r) => r.request.jobId),
      [J(1)],
    );
    assert.equal(h.store.state?.deployedJobId, J(1));
    assert.equal(h.statuses.at(-1)?.error, undefined);
    assert.equal(h.statuses.at(-1)?.jobStatus?.state, 'RUNNING');
    assert.deepEqual(result, { requeueAfterMs: 0 });
  });

  test('the run landed and the state write after it failed (the operator died): the next process records DEPLOYED from GET /jobs, no second run', async () => {
    const h = await pinnedNewJob();
    h.store.failNextWrite = new Error('connection to the API server lost');
    await assert.rejects(h.pass(), /connection to the API server lost/);
    assert.deepEqual(h.log.slice(-4), [
      `flink.runJar jar-1_${JAR_FILE} jobId=${J(1)}`,
      `flink.deleteJar jar-1_${JAR_FILE}`,
      'store.update failed: connection to the API server lost',
      'status.record',
    ]);
    assert.match(h.statuses.at(-1)?.error ?? '', /Reconcile failed: connection to the API server lost/);

    h.restart();
    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'store.update revision 2: DEPLOYED', 'status.record']);
    assert.equal(h.flink.runs.length, 1);
    assert.equal(h.store.state?.deployedJobId, J(1));
  });

  test('the run never reached Flink (answer lost, job absent): the next process runs it again with the SAME job id', async () => {
    const h = await pinnedNewJob();
    h.flink.interruptNext('runJar', false);
    await h.pass();
    assert.equal(h.flink.jobs.length, 0);
    assert.equal(h.store.state?.phase, 'DEPLOYING');

    h.restart();
    await nextPass(h);
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `fetchJar ${JAR_URI}`,
      `flink.uploadJar ${JAR_FILE} (4 bytes)`,
      `flink.runJar jar-2_${JAR_FILE} jobId=${J(1)}`,
      `flink.deleteJar jar-2_${JAR_FILE}`,
      'store.update revision 2: DEPLOYED',
      'status.record',
    ]);
    assert.deepEqual(
      h.flink.runs.map((r) => r.request.jobId),
      [J(1), J(1)],
    );
    assert.equal(h.issued(), 1, 'the pinned id is reused, never a fresh one');
    assert.equal(h.flink.jobs.length, 1, 'one job on the cluster');
  });

  test('a duplicate-submission 400 from the run (Flink had the id, GET /jobs no longer listed it) is recorded DEPLOYED: one job, the jar deleted', async () => {
    assert.ok(isDuplicateJobSubmission(duplicateSubmissionError('jar-0_x.jar')), 'the fake answers as the REST client reports it');
    const h = await pinnedNewJob();
    h.flink.interruptNext('runJar', true);
    await h.pass();
    h.flink.jobs = []; // the job ended and left the overview; the Dispatcher still has the id
    h.restart();
    await nextPass(h);
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `fetchJar ${JAR_URI}`,
      `flink.uploadJar ${JAR_FILE} (4 bytes)`,
      `flink.runJar jar-2_${JAR_FILE} jobId=${J(1)}`,
      `flink.deleteJar jar-2_${JAR_FILE}`,
      'store.update revision 2: DEPLOYED',
      'status.record',
    ]);
    assert.equal(h.store.state?.phase, 'DEPLOYED');
    assert.equal(h.store.state?.deployedJobId, J(1));
    assert.equal(h.statuses.at(-1)?.error, undefined);
    assert.deepEqual(h.flink.uploaded, new Set());
    assert.equal(h.issued(), 1);
  });
});

describe('FlinkSessionJobReconciler: savepoint upgrade', () => {
  test('intent (STOPPING + pending savepoint with its trigger id) before the stop-with-savepoint sent with that id; the savepoint recorded before the new pin; the new run restores from it', async () => {
    const h = runningJobUpgraded();
    await h.pass();
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `store.update revision 6: STOPPING pendingSavepoint(triggerId=${J(1)})`,
      `flink.stopWithSavepoint ${JOB_A} triggerId=${J(1)}`,
      'status.record',
    ]);
    assert.deepEqual(h.flink.stops, [{ jobId: JOB_A, triggerId: J(1), targetDirectory: SAVEPOINT_DIR, drain: false }]);
    const intent = h.store.written[0];
    assert.deepEqual(intent.pendingSavepoint, {
      kind: 'savepoint',
      triggerType: 'UPGRADE',
      jobId: JOB_A,
      stopJob: true,
      requestedAt: NOW,
      triggerId: J(1),
      targetDirectory: SAVEPOINT_DIR,
    });
    assert.equal(intent.lastReconciledGeneration, 2);
    assert.equal(intent.lastReconciledSpec?.job?.parallelism, 4);
    assert.equal(
      intent.lastReconciledSpec?.job?.state,
      'suspended',
      'between the stop and the new run the reconciled spec is suspended (as the Apache operator records it)',
    );
    assert.equal(h.statuses.at(-1)?.lifecycleState, 'UPGRADING');

    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, `flink.getSavepointStatus ${JOB_A} ${J(1)}`, 'status.record'], 'in progress: only asked');

    h.flink.completeSavepoint(J(1), SAVEPOINT);
    const recorded = await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, `flink.getSavepointStatus ${JOB_A} ${J(1)}`, 'store.update revision 7: STOPPED', 'status.record']);
    const stopped = h.store.state!;
    assert.equal(stopped.savepointHistory.at(-1)?.location, SAVEPOINT);
    assert.equal(stopped.savepointHistory.at(-1)?.triggerType, 'UPGRADE');
    assert.equal(stopped.upgradeSavepointPath, SAVEPOINT);
    assert.equal(stopped.pendingSavepoint, undefined);
    assert.equal(stopped.jobIdToSubmit, undefined, 'no new pin in the same write');
    assert.equal(h.statuses.at(-1)?.jobStatus?.lastSavepoint?.location, SAVEPOINT);
    assert.ok(h.events.some((e) => e.reason === 'SavepointCompleted' && e.message.includes(SAVEPOINT)));
    assert.deepEqual(recorded, { requeueAfterMs: 0 });

    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, `store.update revision 8: DEPLOYING jobIdToSubmit=${J(2)}`, 'status.record']);
    assert.equal(h.store.state?.upgradeSavepointPath, SAVEPOINT);
    assert.equal(h.store.state?.lastReconciledSpec?.job?.state, 'running');

    await nextPass(h);
    assert.deepEqual(h.flink.runs.at(-1)?.request, { jobId: J(2), entryClass: ENTRY_CLASS, parallelism: 4, savepointPath: SAVEPOINT });
    assert.equal(h.store.state?.phase, 'DEPLOYED');
    assert.equal(h.store.state?.deployedJobId, J(2));
    assert.ok(h.events.some((e) => e.reason === 'Submit' && e.message === `Started job ${J(2)} on session cluster ${CLUSTER} from ${SAVEPOINT}`));
    assert.equal(h.flink.stops.length, 1, 'one stop for the whole upgrade');
  });
});

describe('FlinkSessionJobReconciler: a pending savepoint after a crash (pending-savepoint.ts)', () => {
  test('the stop reached Flink, its answer was lost: the next process asks for the trigger and does not stop again while Flink reports it in progress', async () => {
    const h = runningJobUpgraded();
    h.flink.interruptNext('stopWithSavepoint', true);
    await h.pass();
    assert.match(h.statuses.at(-1)?.error ?? '', /Flink REST call failed: .*ECONNRESET/);
    h.restart();
    for (let i = 0; i < 2; i++) {
      await nextPass(h);
      assert.deepEqual(h.log, [...OBSERVE, `flink.getSavepointStatus ${JOB_A} ${J(1)}`, 'status.record']);
    }
    h.flink.completeSavepoint(J(1), SAVEPOINT);
    await nextPass(h);
    assert.equal(h.store.state?.phase, 'STOPPED');
    assert.equal(h.store.state?.upgradeSavepointPath, SAVEPOINT);
    assert.equal(h.flink.stops.length, 1);
  });

  test('the stop never reached Flink: Flink has no trace of the trigger (404, nothing in the checkpoint history, job RUNNING), so it is sent again with the SAME trigger id', async () => {
    const h = runningJobUpgraded();
    h.flink.interruptNext('stopWithSavepoint', false);
    await h.pass();
    h.restart();
    await nextPass(h);
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `flink.getSavepointStatus ${JOB_A} ${J(1)}`,
      'flink.listJobs',
      `flink.getCheckpoints ${JOB_A}`,
      `flink.stopWithSavepoint ${JOB_A} triggerId=${J(1)}`,
      'status.record',
    ]);
    assert.deepEqual(
      h.flink.stops.map((s) => s.triggerId),
      [J(1), J(1)],
    );
    assert.equal(h.issued(), 1, 'no new trigger id');
    assert.equal(h.store.written.length, 1, 'the intent is not rewritten');
  });

  test('Flink no longer knows the trigger (its operation result expired, or the JobManager failed over): the checkpoint history decides — in progress waits, completed is adopted; never re-triggered', async () => {
    const h = runningJobUpgraded();
    await h.pass();
    h.flink.forgetTriggers();
    h.flink.recordSavepoint(JOB_A, { status: 'IN_PROGRESS', triggeredAt: NOW });
    h.restart();
    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, `flink.getSavepointStatus ${JOB_A} ${J(1)}`, 'flink.listJobs', `flink.getCheckpoints ${JOB_A}`, 'status.record']);

    const entry = h.flink.checkpointHistory.get(JOB_A)![0];
    Object.assign(entry, { status: 'COMPLETED', external_path: SAVEPOINT, latest_ack_timestamp: NOW + 2_000 });
    h.flink.settle(JOB_A, 'FINISHED');
    await nextPass(h);
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `flink.getSavepointStatus ${JOB_A} ${J(1)}`,
      'flink.listJobs',
      `flink.getCheckpoints ${JOB_A}`,
      'store.update revision 7: STOPPED',
      'status.record',
    ]);
    assert.equal(h.store.state?.savepointHistory.at(-1)?.location, SAVEPOINT);
    assert.equal(h.store.state?.upgradeSavepointPath, SAVEPOINT);
    assert.equal(h.flink.stops.length, 1, 'the stop was sent once');
  });
});

describe('FlinkSessionJobReconciler: an invalid spec on a running job', () => {
  const cases: Array<{ name: string; edit: (s: FlinkSessionJobSpec) => void; field: RegExp; fix: RegExp }> = [
    {
      name: 'a local:// jarURI',
      edit: (s) => (s.job!.jarURI = 'local:///opt/flink/usrlib/orders.jar'),
      field: /spec\.job\.jarURI: local:\/\/ names a file inside a Flink image/,
      fix: /omit jarURI and set entryClass/,
    },
    {
      name: 'a changed deploymentName',
      edit: (s) => (s.deploymentName = 'other-cluster'),
      field: /spec\.deploymentName: cannot change from "session-cluster" to "other-cluster"/,
      fix: /set it back to "session-cluster", or delete this FlinkSessionJob and create a new one for the other session cluster/,
    },
  ];
  for (const c of cases) {
    test(`${c.name}: nothing is stopped or submitted, one ValidationError event, status.error names the field and the fix`, async () => {
      const s = spec();
      const h = harness({ job: sessionJobOf(s), state: stateIn('RUNNING', s), jobs: [listedJob(JOB_A, 'RUNNING')] });
      h.editSpec(c.edit);
      for (let i = 0; i < 2; i++) {
        const result = await nextPass(h);
        assert.deepEqual(h.log, [...OBSERVE, 'status.record'], 'the last valid spec keeps running on its cluster');
        assert.deepEqual(result, { requeueAfterMs: TIMINGS.reconcileIntervalMs });
      }
      assert.deepEqual(h.store.written, []);
      assert.deepEqual(h.flink.stops, []);
      assert.deepEqual(h.flink.runs, []);
      assert.deepEqual(
        h.events.map((e) => [e.type, e.reason]),
        [['Warning', 'ValidationError']],
      );
      const status = h.statuses.at(-1)!;
      assert.match(status.error ?? '', c.field);
      assert.match(status.error ?? '', c.fix);
      assert.match(status.error ?? '', /Invalid spec \(generation 2\).*The last valid spec keeps running until the spec is fixed\./s);
      assert.equal(status.jobStatus?.jobId, JOB_A);
      assert.equal(status.jobStatus?.state, 'RUNNING');
      assert.equal(status.observedGeneration, 1, 'generation 2 is not reconciled');
    });
  }
});

describe('FlinkSessionJobReconciler: fencing', () => {
  const refusesTheRun = (what: string) => /^send POST \/jars\/[^/]+\/run to Flink$/.test(what);

  test('a fence that refuses the run: Flink never gets it, the pin stays, a requeue is returned; the next term runs the same id once', async () => {
    const h = await pinnedNewJob();
    h.fence.refuses = refusesTheRun;
    const result = await h.pass();
    assert.equal(h.flink.runs.length, 0);
    assert.equal(h.flink.jobs.length, 0);
    assert.equal(h.store.state?.phase, 'DEPLOYING');
    assert.equal(h.store.state?.jobIdToSubmit, J(1));
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });

    h.fence.refuses = () => false;
    h.restart();
    await nextPass(h);
    assert.deepEqual(
      h.flink.runs.map((r) => r.request.jobId),
      [J(1)],
    );
    assert.equal(h.store.state?.phase, 'DEPLOYED');
  });

  test('a fence that refuses the run stops the pass there: nothing is done after the refusal (no jar delete, no status patch) and it is counted', async () => {
    const h = await pinnedNewJob();
    h.fence.refuses = refusesTheRun;
    const result = await h.pass();
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `fetchJar ${JAR_URI}`,
      `flink.uploadJar ${JAR_FILE} (4 bytes)`,
      `fence refused: send POST /jars/jar-1_${JAR_FILE}/run to Flink`,
    ]);
    assert.equal(h.counters.fencedOut, 1);
    assert.equal(h.statuses.length, 1, 'only the first pass wrote a status');
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });
  });
});

describe('FlinkSessionJobReconciler: deletion (SessionJobReconciler.cleanupInternal)', () => {
  test('a running job is cancelled (intent first), followed while CANCELLING, then the finalizer is removed once it is gone', async () => {
    const s = spec();
    const h = harness({ job: sessionJobOf(s, { deleting: true }), state: stateIn('RUNNING', s), jobs: [listedJob(JOB_A, 'RUNNING')] });
    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'store.update revision 6: SUSPENDING', `flink.cancelJob ${JOB_A}`, 'status.record']);
    assert.equal(h.statuses.at(-1)?.lifecycleState, 'DELETING');
    assert.deepEqual(h.flink.stops, [], 'no savepoint without job.savepoint-on-deletion');

    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'status.record'], 'CANCELLING: no second cancel, the finalizer stays');

    h.flink.settle(JOB_A, 'CANCELED');
    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'store.update revision 7: SUSPENDED', 'status.record']);

    const released = await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'finalizers.remove', 'forgetSessionJob']);
    assert.equal(h.current(), undefined, 'Kubernetes removed the object');
    assert.deepEqual(released, {});
  });

  test('deleted right after a run whose answer was lost (DEPLOYING, Flink runs the pinned id): that job is cancelled before the finalizer goes, never left running', async () => {
    const h = await pinnedNewJob();
    h.flink.interruptNext('runJar', true);
    await h.pass();
    assert.equal(h.flink.jobs[0]?.jid, J(1));
    const job = h.current()!;
    job.metadata.deletionTimestamp = new Date(h.clock.now);
    h.sessionJobs.put(job);
    h.restart();
    const passes: string[] = [];
    for (let i = 0; i < 5 && h.current(); i++) {
      await nextPassRetried(h);
      passes.push(...h.log, '--');
      if (h.flink.jobs[0]?.state === 'CANCELLING') h.flink.settle(J(1), 'CANCELED');
    }
    const trace = passes.join('\n');
    assert.equal(h.flink.jobs.find((j) => j.jid === J(1))?.state, 'CANCELED', `the job of a deleted session job is left running:\n${trace}`);
    const cancel = passes.indexOf(`flink.cancelJob ${J(1)}`);
    assert.ok(
      passes.slice(0, cancel).some((l) => /^store\.update revision \d+: SUSPENDING/.test(l)),
      `the intent is written before the cancel:\n${trace}`,
    );
    assert.ok(passes.indexOf('finalizers.remove') > cancel, `the finalizer goes after the cancel:\n${trace}`);
    assert.equal(h.current(), undefined, trace);
  });

  test('with kubernetes.operator.job.savepoint-on-deletion: a stop-with-savepoint (intent first), the savepoint recorded, then the finalizer removed', async () => {
    const s = spec((x) => (x.flinkConfiguration = { 'kubernetes.operator.job.savepoint-on-deletion': 'true' }));
    const h = harness({ job: sessionJobOf(s, { deleting: true }), state: stateIn('RUNNING', s), jobs: [listedJob(JOB_A, 'RUNNING')] });
    await nextPass(h);
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `store.update revision 6: SUSPENDING pendingSavepoint(triggerId=${J(1)})`,
      `flink.stopWithSavepoint ${JOB_A} triggerId=${J(1)}`,
      'status.record',
    ]);
    assert.ok(!h.log.some((l) => l.startsWith('flink.cancelJob')));

    h.flink.completeSavepoint(J(1), SAVEPOINT);
    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, `flink.getSavepointStatus ${JOB_A} ${J(1)}`, 'store.update revision 7: SUSPENDED', 'status.record']);
    assert.equal(h.store.state?.savepointHistory.at(-1)?.location, SAVEPOINT);

    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, 'finalizers.remove', 'forgetSessionJob']);
  });
});

describe('FlinkSessionJobReconciler: no usable session cluster', () => {
  test('the session cluster does not exist: status.error names it and how to fix it, no Flink client is made, nothing is pinned', async () => {
    const h = harness({ job: sessionJobOf(spec(), { finalizer: false }), cluster: null });
    const result = await h.pass();
    assert.deepEqual(h.log, ['store.load', 'finalizers.add', 'status.record']);
    const status = h.statuses[0];
    assert.equal(
      status.error,
      `Session cluster ${CLUSTER} not found in namespace ${NS}: create a FlinkDeployment ${CLUSTER} without spec.job (a session cluster), or fix spec.deploymentName`,
    );
    assert.equal(status.lifecycleState, 'CREATED');
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [['Ready', 'False', 'Error']],
    );
    assert.deepEqual(h.store.written, []);
    assert.deepEqual(result, { requeueAfterMs: TIMINGS.progressCheckIntervalMs });
  });

  test('deploymentName names an application cluster: status.error says so and what to point it at, no Flink client is made', async () => {
    const h = harness({ job: sessionJobOf(spec(), { finalizer: false }), cluster: flinkDeployment(CLUSTER).inNamespace(NS).withUid('app-uid').build() });
    await h.pass();
    assert.deepEqual(h.log, ['store.load', 'finalizers.add', 'status.record']);
    assert.match(
      h.statuses[0]?.error ?? '',
      new RegExp(`FlinkDeployment ${CLUSTER} is an application cluster .*point spec.deploymentName at a session cluster`),
    );
  });
});

// Checkpoints on request share the FlinkDeployment's steps (src/reconciler/checkpoint-steps.ts);
// the fake's trigger endpoint is Flink 1.19+'s POST /jobs/:id/checkpoints (CheckpointTriggerHandler),
// de-duplicating trigger ids like the savepoint one.
describe('FlinkSessionJobReconciler: manual checkpoint', () => {
  test('intent (pendingCheckpoint with its trigger id) before the trigger sent with that id; the nonce acknowledged with the completion, once', async () => {
    const s = spec();
    const h = harness({ job: sessionJobOf(s), state: stateIn('RUNNING', s, { lastReconciledGeneration: 2 }), jobs: [listedJob(JOB_A, 'RUNNING')] });
    h.editSpec((edited) => (edited.job!.checkpointTriggerNonce = 1));
    await h.pass();
    assert.deepEqual(h.log, [
      ...OBSERVE,
      `store.update revision 6: RUNNING pendingCheckpoint(triggerId=${J(1)})`,
      `flink.triggerCheckpoint ${JOB_A} FULL triggerId=${J(1)}`,
      'status.record',
    ]);
    assert.deepEqual(h.store.written[0].pendingCheckpoint, {
      kind: 'checkpoint',
      triggerType: 'MANUAL',
      checkpointType: 'FULL',
      jobId: JOB_A,
      stopJob: false,
      requestedAt: NOW,
      triggerId: J(1),
      triggerNonce: 1,
    });
    assert.equal(h.store.state?.lastReconciledSpec?.job?.checkpointTriggerNonce, undefined, 'not acknowledged before the checkpoint completed');

    await nextPass(h);
    assert.deepEqual(h.log, [...OBSERVE, `flink.getCheckpointStatus ${JOB_A} ${J(1)}`, 'status.record'], 'in progress: only asked');

    h.flink.completeCheckpoint(J(1), 42);
    await nextPass(h);
    assert.deepEqual(h.log.slice(0, 5), [...OBSERVE, `flink.getCheckpointStatus ${JOB_A} ${J(1)}`, 'store.update revision 7: RUNNING']);
    assert.equal(h.store.state?.pendingCheckpoint, undefined);
    assert.equal(h.store.state?.lastReconciledSpec?.job?.checkpointTriggerNonce, 1);
    assert.ok(h.events.some((e) => e.reason === 'CheckpointCompleted' && e.message.includes('checkpoint 42')));

    await nextPass(h);
    assert.equal(h.flink.checkpointTriggers.size, 1, 'exactly one checkpoint for one nonce');
    assert.ok(!h.log.some((line) => line.startsWith('flink.triggerCheckpoint')));
  });
});
