/**
 * Day-two upgrades, end to end on the development cluster with simulated kubelet and Flink: what
 * the Apache Flink Kubernetes operator does (option names and defaults as there) when a job is
 * first deployed from a savepoint, upgraded while it is not RUNNING, loses its JobManager
 * Deployment, becomes unhealthy, is suspended in last-state mode, or is deleted.
 *
 * Each test reproduces one reported bug and asserts the behaviour the team is building; judged by
 * the simulated Flink's lineage (submissions with job id and restore path, savepoints,
 * cancellations), the simulated storage, the FlinkDeployment status, Kubernetes objects and
 * Events, never by logs. Tests on `simulator.job.restart-every` and `simulator.checkpoint.stall-after`
 * need those simulation keys (being added to src/devcluster/simulation/).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';
import {
  CHECKPOINTS,
  HA,
  NS,
  assertNoJobIdSubmittedTwice,
  clusterDeploymentNames,
  completedSavepoints,
  describeLineage,
  describeSample,
  discard,
  eventCount,
  events,
  haCheckpointRecorded,
  haConfigMaps,
  jobManagerDeployment,
  jobManagerPodWaitingReasons,
  lineage,
  newestCheckpointOf,
  ready,
  recordStatuses,
  samePath,
  setJobManagerImage,
  sleep,
  stable,
  submitted,
  waitForEvent,
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

const upgrade = (name: string, marker: string) => h.patch(name, { spec: { flinkConfiguration: { 'day-two.marker': marker } } });
const jobIdOf = (d: FlinkDeploymentV1) => d.status!.jobStatus!.jobId!;

describe('first deployment from a savepoint', () => {
  it('honours job.initialSavepointPath on the first deployment', T, async () => {
    // Apache operator: examples/snapshot/job-from-savepoint.yaml (job.initialSavepointPath on a new FlinkDeployment).
    const source = 'sp-source';
    const target = 'from-savepoint';
    try {
      await h.create(flinkDeployment(source).build());
      await h.waitFor(source, stable(1), `${source} STABLE`, WAIT);
      await h.patch(source, { spec: { job: { savepointTriggerNonce: 1 } } });
      await h.waitUntil(() => completedSavepoints(lineage(h, source))[0], `a manual savepoint of ${source}`, WAIT);
      const path = completedSavepoints(lineage(h, source))[0].location!;

      await h.create(
        flinkDeployment(target)
          .withSpec({ job: { upgradeMode: 'savepoint', initialSavepointPath: path } })
          .build(),
      );
      const d = await h.waitFor(target, stable(1), `${target} STABLE`, WAIT);
      const l = lineage(h, target);
      assert.equal(l.submissions.length, 1, describeLineage(l));
      assert.equal(l.submissions[0].restoredFrom, path, `the first submission restores from job.initialSavepointPath (${describeLineage(l)})`);
      assert.equal(d.status?.jobStatus?.jobId, l.submissions[0].jobId);
    } finally {
      await discard(h, source, target);
    }
  });
});

describe('savepoint-mode upgrade of a job that is not RUNNING', () => {
  it('deletes a JobManager that never started (bad image) and redeploys from the upgrade savepoint', T, async () => {
    // Apache operator: AbstractJobReconciler "JobManager deployment never started" (deleteJmThatNeverStarted), then the
    // upgrade continues from the recorded upgrade savepoint; kubernetes.operator.job.upgrade.last-state-fallback.enabled (default true).
    const name = 'bad-image';
    try {
      await h.create(flinkDeployment(name).build());
      const first = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      // A job that has run for a while: its JobManager Deployment is well older than the upgrade that breaks it.
      await sleep(1_500);
      await h.patch(name, { spec: { image: 'flink:missing' } });
      const upgradeSavepoint = await h.waitUntil(
        () => completedSavepoints(lineage(h, name)).find((s) => s.kind === 'stop-with-savepoint'),
        'the upgrade savepoint',
        WAIT,
      );
      assert.equal(upgradeSavepoint.jobId, jobIdOf(first));
      // As a user finds it: the new JobManager pod in ImagePullBackOff, the status saying ERROR.
      await h.waitUntil(
        async () => ((await jobManagerPodWaitingReasons(h, name)).includes('ImagePullBackOff') ? true : undefined),
        'the new JobManager pod in ImagePullBackOff',
        WAIT,
      );
      await h.waitFor(name, (d) => d.status?.jobManagerDeploymentStatus === 'ERROR', 'status.jobManagerDeploymentStatus ERROR', WAIT);
      assert.equal(lineage(h, name).submissions.length, 1, 'the JobManager with the bad image never submitted a job');

      await h.patch(name, { spec: { image: 'flink:1.20.1' } });
      const fixed = await h.waitFor(name, stable(3), `${name} STABLE on the fixed image (generation 3)`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.submissions.length, 2, `one new job after the fix (${describeLineage(l)})`);
      assert.equal(l.submissions[1].restoredFrom, upgradeSavepoint.location, `the new job restores from the upgrade savepoint (${describeLineage(l)})`);
      assert.equal(l.savepoints.length, 1, 'no further savepoint');
      assertNoJobIdSubmittedTwice(l);
      assert.equal(fixed.status?.jobStatus?.jobId, l.submissions[1].jobId);
      const jm = await jobManagerDeployment(h, name);
      assert.equal(jm?.spec?.template.spec?.containers[0]?.image, 'flink:1.20.1');
    } finally {
      await discard(h, name);
    }
  });

  it('redeploys a FAILED job from its newest completed checkpoint once the spec is fixed', T, async () => {
    // Apache operator: a job in a terminal state is upgraded from the observed latest checkpoint ("Job is in terminal
    // state, ready for upgrade from observed latest state"), never without state when a checkpoint exists.
    const name = 'failed-ckpt';
    try {
      await h.create(
        flinkDeployment(name)
          .withFlinkConfiguration({ ...CHECKPOINTS, 'simulator.job.fail-after': '1500 ms' })
          .build(),
      );
      const first = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      const failedJob = jobIdOf(first);
      await h.waitFor(name, (d) => d.status?.jobStatus?.state === 'FAILED', `${name} FAILED`, WAIT);
      const checkpoint = newestCheckpointOf(h, failedJob);
      assert.ok(checkpoint, 'the failed job completed checkpoints');

      await h.patch(name, { spec: { flinkConfiguration: { 'simulator.job.fail-after': null } } });
      const fixed = await h.waitFor(name, stable(2), `${name} STABLE after the fix (generation 2)`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.submissions.length, 2, describeLineage(l));
      const redeployed = l.submissions[1];
      assert.notEqual(redeployed.restoredFrom, null, `never without state when a checkpoint exists (${describeLineage(l)})`);
      assert.ok(samePath(redeployed.restoredFrom, checkpoint), `restored from the failed job's newest checkpoint ${checkpoint} (${describeLineage(l)})`);
      assert.notEqual(redeployed.jobId, failedJob);
      assert.equal(fixed.status?.jobStatus?.jobId, redeployed.jobId);
      assertNoJobIdSubmittedTwice(l);
    } finally {
      await discard(h, name);
    }
  });

  it('redeploys a FAILED job without checkpoints from its newest savepoint once the spec is fixed', T, async () => {
    // Apache operator: as above; without a checkpoint the newest savepoint (status.jobStatus.savepointInfo.lastSavepoint) is the restore point.
    const name = 'failed-sp';
    try {
      await h.create(flinkDeployment(name).withFlinkConfiguration({ 'simulator.job.fail-after': '2500 ms' }).build());
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await h.patch(name, { spec: { job: { savepointTriggerNonce: 1 } } });
      const manual = await h.waitUntil(() => completedSavepoints(lineage(h, name))[0], 'the manual savepoint', WAIT);
      await h.waitFor(name, (d) => d.status?.jobStatus?.state === 'FAILED', `${name} FAILED`, WAIT);

      await h.patch(name, { spec: { flinkConfiguration: { 'simulator.job.fail-after': null } } });
      await h.waitFor(name, stable(3), `${name} STABLE after the fix (generation 3)`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.submissions.length, 2, describeLineage(l));
      assert.equal(l.submissions[1].restoredFrom, manual.location, `restored from the newest savepoint (${describeLineage(l)})`);
      assertNoJobIdSubmittedTwice(l);
    } finally {
      await discard(h, name);
    }
  });

  /** A savepoint-mode deployment with HA and checkpoints whose JobManager is then made to crash-loop behind the operator's back. */
  async function crashLoopingWithHa(name: string, extra: Record<string, string> = {}): Promise<string> {
    await h.create(
      flinkDeployment(name)
        .withSpec({ job: { upgradeMode: 'savepoint' } })
        .withFlinkConfiguration({ ...HA, ...CHECKPOINTS, ...extra })
        .build(),
    );
    const first = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
    await haCheckpointRecorded(h, name);
    await setJobManagerImage(h, name, 'flink:crashloop');
    await h.waitUntil(
      async () => ((await jobManagerPodWaitingReasons(h, name)).includes('CrashLoopBackOff') ? true : undefined),
      'the JobManager in CrashLoopBackOff',
      WAIT,
    );
    return jobIdOf(first);
  }

  it('upgrades a crash-looping savepoint-mode job through HA (last-state fallback)', T, async () => {
    // Apache operator: kubernetes.operator.job.upgrade.last-state-fallback.enabled (default true): a job that is not
    // running but has usable HA metadata is upgraded last-state ("Job is not running but HA metadata is available for
    // last state restore, ready for upgrade").
    const name = 'ls-fallback';
    try {
      const jobId = await crashLoopingWithHa(name);
      await upgrade(name, 'v2');
      await h.waitFor(name, stable(2), `${name} STABLE on generation 2`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.savepoints.length, 0, `no savepoint: the job was not running (${describeLineage(l)})`);
      assert.equal(submitted(l).length, 1, `no new job id submitted (${describeLineage(l)})`);
      assert.ok(
        l.submissions.every((s) => s.jobId === jobId),
        `only job ${jobId} in the lineage (${describeLineage(l)})`,
      );
      const recovered = l.submissions.at(-1)!;
      assert.equal(recovered.origin, 'ha-recovered', describeLineage(l));
      assert.match(recovered.restoredFrom ?? '', /chk-\d+$/, 'recovered from its latest checkpoint');
      const jm = await jobManagerDeployment(h, name);
      assert.equal(jm?.spec?.template.spec?.containers[0]?.image, 'flink:1.20', "the spec's image runs again");
    } finally {
      await discard(h, name);
    }
  });

  it('with last-state-fallback disabled the upgrade waits and status.error names the option', T, async () => {
    // Apache operator: kubernetes.operator.job.upgrade.last-state-fallback.enabled: "false" — no HA-based upgrade of a
    // savepoint-mode job that is not running; the upgrade waits for an upgradeable state.
    const name = 'ls-nofallback';
    try {
      await crashLoopingWithHa(name, { 'kubernetes.operator.job.upgrade.last-state-fallback.enabled': 'false' });
      await upgrade(name, 'v2');
      const d = await h.waitFor(
        name,
        (x) => (x.status?.error ?? '').includes('last-state-fallback.enabled'),
        'status.error naming kubernetes.operator.job.upgrade.last-state-fallback.enabled',
        8_000,
      );
      assert.notEqual(ready(d.status)?.status, 'True', 'Ready is not True: the job does not run');
      await sleep(1_500);
      const l = lineage(h, name);
      assert.equal(l.submissions.length, 1, `nothing redeployed (${describeLineage(l)})`);
      assert.equal(l.savepoints.length, 0);
    } finally {
      await discard(h, name);
    }
  });
});

describe('JobManager Deployment recovery', () => {
  it('recreates a deleted JobManager Deployment with HA: the same job recovered, RecoverDeployment, Ready not True while MISSING', T, async () => {
    // Apache operator: kubernetes.operator.jm-deployment-recovery.enabled (default true), event reason RecoverDeployment.
    const name = 'recover-ha';
    try {
      await h.create(
        flinkDeployment(name)
          .withFlinkConfiguration({ ...HA, ...CHECKPOINTS })
          .build(),
      );
      const first = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      const jobId = jobIdOf(first);
      await haCheckpointRecorded(h, name);
      const firstPod = lineage(h, name).submissions[0].podName;
      const recording = await recordStatuses(h, name);
      await h.apps.deleteNamespacedDeployment({ namespace: NS, name });

      await waitForEvent(h, name, 'RecoverDeployment', 'Warning', WAIT);
      await h.waitUntil(() => lineage(h, name).submissions.find((s) => s.podName !== firstPod), 'a new JobManager', WAIT);
      const settled = await h.waitFor(name, stable(1), `${name} STABLE again`, WAIT);
      // The watch may deliver that status a moment after the GET saw it: stop the recording once it has.
      await h.waitUntil(
        () => (recording.samples.some((s) => s.resourceVersion === settled.metadata.resourceVersion) ? true : undefined),
        'the status watch caught up',
        WAIT,
      );
      const samples = await recording.stop();
      const l = lineage(h, name);
      assert.equal(submitted(l).length, 1, `no new job id (${describeLineage(l)})`);
      const recovered = l.submissions.at(-1)!;
      assert.equal(recovered.jobId, jobId);
      assert.equal(recovered.origin, 'ha-recovered', describeLineage(l));
      assert.equal(l.savepoints.length, 0);

      const trail = samples.map(describeSample).join('\n');
      const firstNotReady = samples.findIndex((s) => s.status?.jobManagerDeploymentStatus !== 'READY');
      assert.ok(firstNotReady >= 0, `the status showed the JobManager not READY after the deletion:\n${trail}`);
      assert.equal(samples.at(-1)!.status?.jobManagerDeploymentStatus, 'READY');
      for (const s of samples.filter((x) => x.status?.jobManagerDeploymentStatus === 'MISSING')) {
        assert.notEqual(ready(s.status)?.status, 'True', `Ready is not True while the JobManager is MISSING:\n${trail}`);
        assert.notEqual(s.status?.lifecycleState, 'STABLE', `not STABLE while the JobManager is MISSING:\n${trail}`);
      }
    } finally {
      await discard(h, name);
    }
  });

  it('recreates a deleted JobManager Deployment of a stateless job without HA as a new job without state', T, async () => {
    // Apache operator: kubernetes.operator.jm-deployment-recovery.enabled; upgradeMode stateless recovers without HA.
    const name = 'recover-sl';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'stateless' } })
          .build(),
      );
      const first = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await h.apps.deleteNamespacedDeployment({ namespace: NS, name });
      await waitForEvent(h, name, 'RecoverDeployment', 'Warning', WAIT);
      const after = await h.waitFor(name, (d) => stable(1)(d) && jobIdOf(d) !== jobIdOf(first), `${name} running a new job`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.submissions.length, 2, describeLineage(l));
      assert.equal(l.submissions[1].restoredFrom, null, 'stateless: no restore path');
      assert.equal(l.submissions[1].jobId, jobIdOf(after));
      assertNoJobIdSubmittedTwice(l);
    } finally {
      await discard(h, name);
    }
  });

  it('does not recreate a deleted JobManager Deployment of a savepoint-mode job without HA, and says why', T, async () => {
    // Apache operator: "JobManager deployment is missing and HA data is not available to make stateful upgrades" — not recovered.
    const name = 'norecover-sp';
    try {
      await h.create(flinkDeployment(name).build());
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await h.apps.deleteNamespacedDeployment({ namespace: NS, name });
      const d = await h.waitFor(name, (x) => /missing/i.test(x.status?.error ?? ''), 'status.error saying the JobManager Deployment is missing', WAIT);
      assert.match(d.status!.error!, /high.availability|\bHA\b/i, `status.error says why it is not recovered (no HA): ${d.status!.error}`);
      assert.equal(ready(d.status)?.status, 'False');
      await sleep(1_500);
      assert.equal(await jobManagerDeployment(h, name), undefined, 'not recreated');
      assert.equal(lineage(h, name).submissions.length, 1);
      assert.equal(await eventCount(h, name, 'RecoverDeployment'), 0);
    } finally {
      await discard(h, name);
    }
  });

  it('with jm-deployment-recovery disabled a deleted JobManager Deployment is not recreated and the status names the option', T, async () => {
    // Apache operator: kubernetes.operator.jm-deployment-recovery.enabled: "false".
    const name = 'norecover-off';
    try {
      await h.create(
        flinkDeployment(name)
          .withFlinkConfiguration({ ...HA, ...CHECKPOINTS, 'kubernetes.operator.jm-deployment-recovery.enabled': 'false' })
          .build(),
      );
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await haCheckpointRecorded(h, name);
      await h.apps.deleteNamespacedDeployment({ namespace: NS, name });
      const d = await h.waitFor(
        name,
        (x) => (x.status?.error ?? '').includes('jm-deployment-recovery.enabled'),
        'status.error naming kubernetes.operator.jm-deployment-recovery.enabled',
        WAIT,
      );
      assert.equal(ready(d.status)?.status, 'False');
      await sleep(1_500);
      assert.equal(await jobManagerDeployment(h, name), undefined, 'not recreated');
      assert.equal(lineage(h, name).submissions.length, 1);
      assert.equal(await eventCount(h, name, 'RecoverDeployment'), 0);
    } finally {
      await discard(h, name);
    }
  });
});

describe('cluster health check', () => {
  const healthCheck = {
    ...HA,
    ...CHECKPOINTS,
    'kubernetes.operator.cluster.health-check.enabled': 'true',
  };

  async function expectRestartThroughHa(name: string): Promise<void> {
    const first = (await h.get(name))!;
    const jobId = jobIdOf(first);
    const firstPod = lineage(h, name).submissions[0].podName;
    await waitForEvent(h, name, 'RestartUnhealthyJob', 'Warning', 15_000);
    await h.waitUntil(() => lineage(h, name).submissions.find((s) => s.podName !== firstPod), 'a new JobManager after the restart', WAIT);
    const l = lineage(h, name);
    const recovered = l.submissions.find((s) => s.podName !== firstPod)!;
    assert.equal(recovered.origin, 'ha-recovered', describeLineage(l));
    assert.equal(recovered.jobId, jobId, 'the same job, recovered from HA');
    assert.equal(submitted(l).length, 1, `no new job id (${describeLineage(l)})`);
  }

  it('restarts a job whose restarts exceed the threshold (numRestarts), through HA', T, async () => {
    // Apache operator: kubernetes.operator.cluster.health-check.enabled (default false), .restarts.window (2 min),
    // .restarts.threshold (64; here 3), event RestartUnhealthyJob. Needs simulator.job.restart-every (being added).
    const name = 'unhealthy-restarts';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'last-state' } })
          .withFlinkConfiguration({
            ...healthCheck,
            'kubernetes.operator.cluster.health-check.restarts.threshold': '3',
            'simulator.job.restart-every': '200ms',
          })
          .build(),
      );
      await h.waitFor(
        name,
        (d) => d.status?.jobStatus?.jobId !== undefined && lineage(h, name).submissions.length === 1 && d.status?.jobManagerDeploymentStatus === 'READY',
        `${name} deployed`,
        WAIT,
      );
      await expectRestartThroughHa(name);
    } finally {
      await discard(h, name);
    }
  });

  it('restarts a job whose checkpoints stop progressing, through HA', T, async () => {
    // Apache operator: kubernetes.operator.cluster.health-check.checkpoint-progress.enabled (default true) with
    // .checkpoint-progress.window (here 2 s), event RestartUnhealthyJob. Apache's ClusterHealthEvaluator never uses a
    // window below max(checkpointing interval, execution.checkpointing.timeout) x (tolerable failures + 2), so the
    // timeout (10 min by default) is set to 500 ms here. Needs simulator.checkpoint.stall-after (being added).
    const name = 'unhealthy-checkpoints';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'last-state' } })
          .withFlinkConfiguration({
            ...healthCheck,
            'kubernetes.operator.cluster.health-check.checkpoint-progress.enabled': 'true',
            'kubernetes.operator.cluster.health-check.checkpoint-progress.window': '2 s',
            'execution.checkpointing.timeout': '500 ms',
            'execution.checkpointing.tolerable-failed-checkpoints': '0',
            'simulator.checkpoint.stall-after': '1s',
          })
          .build(),
      );
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await expectRestartThroughHa(name);
    } finally {
      await discard(h, name);
    }
  });
});

describe('suspending a last-state deployment', () => {
  /**
   * Suspends `name` and checks that it settles: SUSPENDED within a few seconds, the cluster gone, the state ConfigMap
   * quiet, no new Submit event, and no submission without state while a checkpoint or savepoint existed.
   */
  async function suspendSettles(name: string): Promise<void> {
    const submitsBefore = await eventCount(h, name, 'Submit');
    await h.patch(name, { spec: { job: { state: 'suspended' } } });
    await h.waitFor(name, (d) => d.status?.lifecycleState === 'SUSPENDED' && d.status?.observedGeneration === 2, `${name} SUSPENDED`, 5_000);
    await h.waitUntil(
      async () => ((await clusterDeploymentNames(h, name)).length === 0 ? true : undefined),
      'the JobManager and TaskManager Deployments deleted',
      5_000,
    );
    const revisions: string[] = [];
    for (let i = 0; i < 8; i++) {
      revisions.push((await h.stateConfigMap(name))?.data?.revision ?? '');
      await sleep(200);
    }
    const changes = revisions.filter((r, i) => i > 0 && r !== revisions[i - 1]).length;
    assert.ok(changes <= 1, `the state ConfigMap is quiet once suspended (revisions over 1.5 s: ${revisions.join(', ')})`);
    assert.equal(
      await eventCount(h, name, 'Submit'),
      submitsBefore,
      `no Submit event after the suspend started (${JSON.stringify((await events(h, name)).filter((e) => e.reason === 'Submit'))})`,
    );
    const d = (await h.get(name))!;
    assert.equal(d.status?.lifecycleState, 'SUSPENDED');
    const l = lineage(h, name);
    assert.ok(
      l.submissions.slice(1).every((s) => s.restoredFrom !== null),
      `no submission without state after the first (${describeLineage(l)})`,
    );
  }

  it('with HA and a checkpoint: suspends without a savepoint; the resume recovers the same job', T, async () => {
    // Apache operator: upgradeMode last-state suspend (SuspendMode.LAST_STATE: the cluster is deleted, HA metadata kept); resume recovers through HA.
    const name = 'sus-ls-ckpt';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'last-state' } })
          .withFlinkConfiguration({ ...HA, ...CHECKPOINTS })
          .build(),
      );
      const first = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await haCheckpointRecorded(h, name);
      await suspendSettles(name);
      await h.patch(name, { spec: { job: { state: 'running' } } });
      await h.waitFor(name, stable(3), `${name} running again`, WAIT);
      const l = lineage(h, name);
      assert.equal(submitted(l).length, 1, describeLineage(l));
      assert.equal(l.submissions.at(-1)!.origin, 'ha-recovered');
      assert.equal(l.submissions.at(-1)!.jobId, jobIdOf(first), 'the same job id');
      assert.match(l.submissions.at(-1)!.restoredFrom ?? '', /chk-\d+$/);
    } finally {
      await discard(h, name);
    }
  });

  it('with HA but no checkpoint yet: suspends with a savepoint; the resume starts a new job from it', T, async () => {
    // Apache operator: last-state needs a checkpoint to restore; without one the suspend falls back to a savepoint.
    const name = 'sus-ls-nockpt';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'last-state' } })
          .withFlinkConfiguration({ ...HA })
          .build(),
      );
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      await suspendSettles(name);
      const savepoint = completedSavepoints(lineage(h, name)).at(-1);
      assert.ok(savepoint?.location, `a suspend savepoint (${describeLineage(lineage(h, name))})`);
      await h.patch(name, { spec: { job: { state: 'running' } } });
      await h.waitFor(name, stable(3), `${name} running again`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.submissions.at(-1)!.restoredFrom, savepoint.location, `the resume restores from the suspend savepoint (${describeLineage(l)})`);
      assertNoJobIdSubmittedTwice(l);
    } finally {
      await discard(h, name);
    }
  });

  it('without Kubernetes HA metadata (ZooKeeper HA the operator cannot read): suspends with a savepoint; the resume starts from it', T, async () => {
    // Apache operator: last-state without usable HA metadata falls back to a savepoint. A last-state spec must configure
    // HA (validation, as DefaultValidator), so "HA off" is a ZooKeeper HA configuration: the simulated Flink keeps no
    // Kubernetes HA ConfigMap and the operator finds no HA metadata to resume from.
    const name = 'sus-ls-noha';
    try {
      await h.create(
        flinkDeployment(name)
          .withSpec({ job: { upgradeMode: 'last-state' } })
          .withFlinkConfiguration({
            'high-availability.type': 'zookeeper',
            'high-availability.zookeeper.quorum': 'zookeeper:2181',
            'high-availability.storageDir': 'file:///flink-data/ha',
            ...CHECKPOINTS,
          })
          .build(),
      );
      await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
      assert.equal((await haConfigMaps(h, name)).length, 0, 'no Kubernetes HA metadata');
      await suspendSettles(name);
      const savepoint = completedSavepoints(lineage(h, name)).at(-1);
      assert.ok(savepoint?.location, `a suspend savepoint (${describeLineage(lineage(h, name))})`);
      await h.patch(name, { spec: { job: { state: 'running' } } });
      await h.waitFor(name, stable(3), `${name} running again`, WAIT);
      const l = lineage(h, name);
      assert.equal(l.submissions.at(-1)!.restoredFrom, savepoint.location, `the resume restores from the suspend savepoint (${describeLineage(l)})`);
      assertNoJobIdSubmittedTwice(l);
    } finally {
      await discard(h, name);
    }
  });
});

describe('deletion', () => {
  it('without savepoint-on-deletion cancels the job, takes no savepoint and deletes the HA ConfigMaps', T, async () => {
    // Apache operator: kubernetes.operator.job.savepoint-on-deletion (default false): cleanup cancels the job
    // (SuspendMode.STATELESS) and deletes the cluster with its HA data (deleteClusterDeployment(..., deleteHaData=true)).
    const name = 'delete-ha';
    await h.create(
      flinkDeployment(name)
        .withFlinkConfiguration({ ...HA, ...CHECKPOINTS })
        .build(),
    );
    const running = await h.waitFor(name, stable(1), `${name} STABLE`, WAIT);
    const jobId = jobIdOf(running);
    await haCheckpointRecorded(h, name);
    await h.delete(name);
    await h.waitUntil(async () => ((await h.get(name)) === undefined ? true : undefined), `${name} to disappear`, 10_000);
    const l = lineage(h, name);
    assert.equal(l.savepoints.length, 0, `no savepoint (${describeLineage(l)})`);
    assert.ok(
      l.cancellations.some((c) => c.jobId === jobId),
      `the job is cancelled, not left to die with its pod (${describeLineage(l)})`,
    );
    await h
      .waitUntil(async () => ((await haConfigMaps(h, name)).length === 0 ? true : undefined), `the HA ConfigMaps of ${name} deleted`, 5_000)
      .catch(async (error: Error) => {
        throw new Error(`${error.message}: ${(await haConfigMaps(h, name)).map((c) => c.metadata?.name).join(', ')}`);
      });
    await sleep(500);
    assert.equal((await haConfigMaps(h, name)).length, 0, 'and not written again');
    assert.deepEqual(await clusterDeploymentNames(h, name), []);
  });
});
