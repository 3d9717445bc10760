/**
 * Day-two status, end to end on the development cluster with simulated kubelet and Flink: what the
 * v1 status (status.lifecycleState, status.jobStatus.state, status.jobManagerDeploymentStatus,
 * status.conditions[type=Ready], status.error) and the Events say while a FlinkDeployment is
 * created without a spec, resumed, upgraded, asked for a savepoint that fails, created invalid,
 * or runs a bounded job to its end.
 *
 * Each test reproduces one reported bug and asserts the behaviour the team is building, with the
 * Apache Flink Kubernetes operator's option names and defaults. Statuses are judged on every
 * version the API server committed (a watch, day-two-fixtures.ts `recordStatuses`), never by logs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';
import {
  NS,
  clusterDeploymentNames,
  describeLineage,
  describeSample,
  discard,
  eventCount,
  events,
  flinkJob,
  lineage,
  ready,
  recordStatuses,
  sleep,
  stable,
  type StatusRecording,
  type StatusSample,
} from './day-two-fixtures.js';

const T = { timeout: 30_000 };
const WAIT = 15_000;

let h: OperatorHarness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.stop();
});

const trail = (samples: StatusSample[]) => samples.map(describeSample).join('\n');
const jobIdOf = (d: FlinkDeploymentV1) => d.status!.jobStatus!.jobId!;

/** Ready "True" is only honest while the job runs, or (reason Suspended) while it is suspended as asked. */
function dishonestReady(s: StatusSample): boolean {
  const r = ready(s.status);
  if (r?.status !== 'True') return false;
  if (r.reason === 'Suspended' && s.status?.lifecycleState === 'SUSPENDED') return false;
  return s.status?.jobStatus?.state !== 'RUNNING';
}

describe('a FlinkDeployment without a spec', () => {
  // Apache operator: examples/canary.yaml (metadata only, label flink.apache.org/canary: "true"), which the Apache
  // operator uses for its health probe; this operator must not fail on it with a raw TypeError, and its finalizer must
  // not block deletion.
  const canary = (name: string) => ({
    apiVersion: 'flink.apache.org/v1',
    kind: 'FlinkDeployment',
    metadata: { name, namespace: NS, labels: { 'flink.apache.org/canary': 'true' } },
  });

  /** Creates it; false when the CRD does not admit it (then the API server's answer must name spec). */
  async function createCanary(name: string): Promise<boolean> {
    try {
      await h.create(canary(name) as unknown as FlinkDeploymentV1);
      return true;
    } catch (error) {
      const text = JSON.stringify((error as { body?: unknown }).body ?? (error as Error).message);
      assert.match(text, /spec/, `the rejection names spec: ${text}`);
      return false;
    }
  }

  it('reports a clear status.error naming spec, not a raw TypeError', T, async () => {
    const name = 'canary';
    try {
      if (!(await createCanary(name))) return;
      const d = await h.waitFor(name, (x) => (x.status?.error ?? '') !== '', `${name}: a status.error`, 5_000);
      assert.doesNotMatch(d.status!.error!, /Cannot read properties|TypeError|of undefined/, `no raw TypeError text in status.error: ${d.status!.error}`);
      assert.match(d.status!.error!, /\bspec\b/, `status.error names spec: ${d.status!.error}`);
      assert.equal(lineage(h, name).submissions.length, 0, 'nothing deployed');
    } finally {
      await discard(h, name);
    }
  });

  it('is deleted within a few seconds (its finalizer removed)', T, async () => {
    const name = 'canary-delete';
    if (!(await createCanary(name))) return;
    // Give the operator the time to act on it (add its finalizer) before the delete.
    await h
      .waitUntil(async () => ((await h.get(name))?.metadata?.finalizers?.length ? true : undefined), `${name}: the operator's finalizer`, 3_000)
      .catch(() => undefined);
    await h.delete(name);
    await h
      .waitUntil(async () => ((await h.get(name)) === undefined ? true : undefined), `${name} to disappear`, 5_000)
      .catch(async (error: Error) => {
        const left = await h.get(name);
        throw new Error(`${error.message}; still there with finalizers ${JSON.stringify(left?.metadata?.finalizers)}, status ${JSON.stringify(left?.status)}`);
      });
  });
});

describe('Ready and lifecycle stay honest', () => {
  it('a resuming deployment is never STABLE before its JobManager is READY and its job RUNNING', T, async () => {
    // Apache operator: lifecycleState STABLE only once the reconciled spec runs (ResourceLifecycleState / JobStatus RUNNING after a resume).
    const name = 'resume-honest';
    let recording: StatusRecording | undefined;
    try {
      // A slow job start widens the window in which the JobManager runs and the job does not yet.
      await h.create(flinkDeployment(name).withFlinkConfiguration({ 'simulator.job.start-delay': '800 ms' }).build());
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await h.patch(name, { spec: { job: { state: 'suspended' } } });
      await h.waitFor(name, (d) => d.status?.lifecycleState === 'SUSPENDED' && d.status?.observedGeneration === 2, `${name} SUSPENDED`, WAIT);
      await h.waitUntil(async () => ((await clusterDeploymentNames(h, name)).length === 0 ? true : undefined), 'the cluster removed', WAIT);

      recording = await recordStatuses(h, name);
      await h.patch(name, { spec: { job: { state: 'running' } } });
      await h.waitFor(name, stable(3), `${name} running again`, WAIT);
      const samples = (await recording.stop()).filter((s) => s.generation >= 3);
      assert.ok(samples.length >= 2, `statuses were recorded during the resume:\n${trail(samples)}`);
      const early = samples.filter(
        (s) => s.status?.lifecycleState === 'STABLE' && (s.status?.jobManagerDeploymentStatus !== 'READY' || s.status?.jobStatus?.state !== 'RUNNING'),
      );
      assert.deepEqual(early.map(describeSample), [], `never STABLE while the JobManager is not READY or the job not RUNNING:\n${trail(samples)}`);
    } finally {
      await recording?.stop().catch(() => undefined);
      await discard(h, name);
    }
  });

  it('Ready is never True while the job is not RUNNING, through deploy, upgrade and suspend/resume', T, async () => {
    // Apache operator: the Ready condition (status.conditions, FlinkDeployment v1) follows the job: True when RUNNING,
    // and when suspended as asked (reason Suspended).
    const name = 'ready-honest';
    const recording = await recordStatuses(h, name);
    try {
      await h.create(flinkDeployment(name).withFlinkConfiguration({ 'simulator.job.start-delay': '500 ms' }).build());
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await h.patch(name, { spec: { flinkConfiguration: { 'day-two.marker': 'v2' } } });
      await h.waitFor(name, stable(2), `${name} STABLE after the upgrade`, WAIT);
      await h.patch(name, { spec: { job: { state: 'suspended' } } });
      await h.waitFor(name, (d) => d.status?.lifecycleState === 'SUSPENDED' && d.status?.observedGeneration === 3, `${name} SUSPENDED`, WAIT);
      await h.patch(name, { spec: { job: { state: 'running' } } });
      await h.waitFor(name, stable(4), `${name} running again`, WAIT);
      const samples = await recording.stop();
      assert.ok(samples.length > 5, `statuses recorded:\n${trail(samples)}`);
      const bad = samples.filter(dishonestReady);
      assert.deepEqual(bad.map(describeSample), [], `Ready True only while the job is RUNNING (or suspended as asked):\n${trail(samples)}`);
    } finally {
      await recording.stop().catch(() => undefined);
      await discard(h, name);
    }
  });
});

describe('a failing manual savepoint of a healthy job', () => {
  it('keeps the job STABLE and Ready, and reports SavepointError at the first failure and after the grace period', T, async () => {
    // Apache operator: kubernetes.operator.savepoint.trigger.grace-period (here 2 s): a failed manual savepoint is
    // retried within it; SavepointError events report the failures; the running job's lifecycle and readiness do not change.
    const name = 'sp-fails';
    let recording: StatusRecording | undefined;
    try {
      await h.create(
        flinkDeployment(name)
          .withFlinkConfiguration({
            'simulator.savepoint.failure': 'fail',
            'kubernetes.operator.savepoint.trigger.grace-period': '2 s',
          })
          .build(),
      );
      const running = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      recording = await recordStatuses(h, name);
      const errorEvents = async () => (await events(h, name)).filter((e) => e.reason === 'SavepointError' && e.type === 'Warning');
      const triggeredAt = Date.now();
      await h.patch(name, { spec: { job: { savepointTriggerNonce: 1 } } });

      // Every time a SavepointError is recorded (a new Event or an aggregated repeat), when this test first saw it.
      const seenAt: number[] = [];
      let seenCount = 0;
      let firstFailureAt: number | undefined;
      const deadline = triggeredAt + 8_000;
      while (Date.now() < deadline) {
        const count = (await errorEvents()).reduce((n, e) => n + e.count, 0);
        for (; seenCount < count; seenCount++) seenAt.push(Date.now());
        const failed = lineage(h, name).savepoints.find((s) => s.status === 'FAILED');
        if (failed && firstFailureAt === undefined) firstFailureAt = Date.parse(failed.completedAt!);
        if (seenAt.some((t) => t >= triggeredAt + 2_000)) break;
        await sleep(40);
      }
      await sleep(300);
      const samples = await recording.stop();
      assert.ok(firstFailureAt !== undefined, `the savepoint failed (${describeLineage(lineage(h, name))})`);
      assert.ok(seenAt.length > 0, 'a SavepointError event');
      assert.ok(
        seenAt[0] - firstFailureAt <= 1_000,
        `a SavepointError within ~1 s of the first failure (first failure at +${firstFailureAt - triggeredAt} ms, first event seen at +${seenAt[0] - triggeredAt} ms)`,
      );
      assert.ok(
        seenAt.some((t) => t >= triggeredAt + 2_000),
        `a final SavepointError after the 2 s grace period (events seen at ${seenAt.map((t) => `+${t - triggeredAt} ms`).join(', ')})`,
      );

      const l = lineage(h, name);
      assert.ok(l.savepoints.length >= 2, `retried within the grace period (${describeLineage(l)})`);
      assert.equal(l.submissions.length, 1, 'the job is not touched');
      const off = samples.filter(
        (s) => s.status?.lifecycleState !== 'STABLE' || ready(s.status)?.status !== 'True' || s.status?.jobStatus?.state !== 'RUNNING',
      );
      assert.deepEqual(off.map(describeSample), [], `STABLE, Ready True and RUNNING throughout:\n${trail(samples)}`);
      assert.equal((await h.get(name))?.status?.jobStatus?.jobId, jobIdOf(running));
    } finally {
      await recording?.stop().catch(() => undefined);
      await discard(h, name);
    }
  });
});

describe('a FlinkDeployment invalid at creation', () => {
  it('never gets a StateRebuilt event, before or after it is fixed', T, async () => {
    // Apache operator: a spec rejected by validation (DefaultValidator, here src/api/spec-validation.ts: last-state needs
    // HA, a rule the CRD cannot check because it reads flinkConfiguration) is reported and not deployed; nothing was
    // lost, so there is no state to rebuild.
    const name = 'invalid-first';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'last-state' } })
          .build(),
      );
      await h.waitFor(name, (d) => (d.status?.error ?? '').includes('spec.job.upgradeMode'), 'the validation error in status', WAIT);
      await sleep(1_000);
      assert.equal(
        await eventCount(h, name, 'StateRebuilt'),
        0,
        `no StateRebuilt while invalid (events: ${JSON.stringify((await events(h, name)).map((e) => `${e.reason}: ${e.message.slice(0, 120)}`))})`,
      );
      assert.equal(lineage(h, name).submissions.length, 0, 'nothing deployed while invalid');

      await h.patch(name, { spec: { job: { upgradeMode: 'savepoint' } } });
      await h.waitFor(name, stable(2), `${name} STABLE once fixed`, WAIT);
      await sleep(500);
      assert.equal(await eventCount(h, name, 'StateRebuilt'), 0, 'no StateRebuilt after the fix');
      assert.equal(lineage(h, name).submissions.length, 1);
    } finally {
      await discard(h, name);
    }
  });
});

describe('a finished batch job', () => {
  it('is FINISHED, not Ready/JobRunning, and its cluster is shut down after jm-deployment.shutdown-ttl and stays down', T, async () => {
    // Apache operator: kubernetes.operator.jm-deployment.shutdown-ttl (default 1 d; here 1 s): the JobManager (and
    // TaskManagers) of a terminal application are deleted that long after the job ended, and not recreated
    // (jm-deployment-recovery only recovers non-terminal jobs). The team's Ready condition: False, reason JobFinished.
    const name = 'batch';
    const recording = await recordStatuses(h, name);
    try {
      await h.create(
        flinkDeployment(name)
          .withFlinkConfiguration({
            'simulator.job.finish-after': '300 ms',
            'kubernetes.operator.jm-deployment.shutdown-ttl': '1 s',
          })
          .build(),
      );
      // The job's end as Flink records it, read while its JobManager still runs.
      let finishedAt: number | undefined;
      await h.waitUntil(
        () => {
          const jobId = lineage(h, name).submissions[0]?.jobId;
          finishedAt = jobId === undefined ? undefined : flinkJob(h, name, jobId)?.timestamps.get('FINISHED');
          return finishedAt;
        },
        `the job of ${name} FINISHED in Flink`,
        WAIT,
      );
      const finished = await h
        .waitUntil(() => recording.samples.find((s) => s.status?.jobStatus?.state === 'FINISHED'), `${name}: a status with jobStatus.state FINISHED`, 5_000)
        .catch((error: Error) => {
          throw new Error(`${error.message}:\n${trail(recording.samples)}`);
        });
      const r = ready(finished.status);
      assert.ok(!(r?.status === 'True' && r.reason === 'JobRunning'), `Ready is not True/JobRunning for a FINISHED job: ${describeSample(finished)}`);

      const goneAt = await h.waitUntil(
        async () => ((await clusterDeploymentNames(h, name)).length === 0 ? Date.now() : undefined),
        'the JobManager and TaskManager Deployments deleted after the shutdown TTL',
        8_000,
      );
      assert.ok(goneAt - finishedAt! >= 900, `not deleted before the 1 s TTL (deleted ${goneAt - finishedAt!} ms after the job finished)`);
      assert.ok(goneAt - finishedAt! <= 4_000, `deleted about 1 s after the job finished (${goneAt - finishedAt!} ms)`);

      await sleep(2_000);
      assert.deepEqual(await clusterDeploymentNames(h, name), [], 'not recreated');
      const l = lineage(h, name);
      assert.equal(l.submissions.length, 1, `exactly one submission (${describeLineage(l)})`);
      const d = (await h.get(name))!;
      assert.equal(d.status?.jobStatus?.state, 'FINISHED', `the status still says FINISHED once the cluster is shut down: ${JSON.stringify(d.status)}`);
      assert.equal(d.status?.error, undefined, 'no error: the job ended as designed');
      const samples = await recording.stop();
      const misleading = samples.filter(
        (s) => s.status?.jobStatus?.state === 'FINISHED' && ready(s.status)?.status === 'True' && ready(s.status)?.reason === 'JobRunning',
      );
      assert.deepEqual(misleading.map(describeSample), [], `never Ready/JobRunning once FINISHED:\n${trail(samples)}`);
    } finally {
      await recording.stop().catch(() => undefined);
      await discard(h, name);
    }
  });
});
