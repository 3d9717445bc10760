/**
 * End-to-end (issue 19, the checkpoint part): `job.checkpointTriggerNonce` takes exactly one
 * checkpoint through Flink's checkpoint trigger endpoint (POST /jobs/:jobid/checkpoints), and the
 * periodic settings — a duration for checkpoints, a Quartz cron expression for savepoints, as the
 * Apache operator accepts them (SnapshotUtils / PeriodicSnapshotUtils) — produce snapshots on
 * schedule. Judged by what the simulated JobManager took (its checkpoint history and the lineage),
 * not by the operator's logs. The bugs this replaces: the nonce was acknowledged without a
 * checkpoint, the periodic checkpoint interval was ignored, a cron savepoint schedule validated and
 * was never scheduled.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  // With the FlinkStateSnapshot CRD: the periodic snapshots are recorded as resources too.
  h = await startHarness({ operator: { reconcileIntervalMs: 500 }, stateSnapshots: true });
});
after(async () => {
  await h?.stop();
});

const stableAt = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status.observedGeneration === generation && d.status.jobStatus?.state === 'RUNNING';

/** The checkpoints (not savepoints) the simulated JobManager completed for `jobId`. */
function checkpointsOf(name: string, jobId: string) {
  const jobManager = h.world.simulation.jobManagers().find((jm) => jm.deployment.name === name && !jm.isStopped);
  return (jobManager?.getJob(jobId)?.history ?? []).filter((c) => 'kind' in c && c.kind === 'CHECKPOINT' && 'completedTimestamp' in c);
}

test('checkpointTriggerNonce takes exactly one checkpoint, acknowledged only once Flink completed it', async () => {
  await h.create(flinkDeployment('chk').build());
  const running = await h.waitFor('chk', stableAt(1), 'chk STABLE');
  const jobId = running.status!.jobStatus!.jobId!;
  assert.equal(checkpointsOf('chk', jobId).length, 0, 'no checkpointing configured: none before the nonce');

  await h.patch('chk', { spec: { job: { checkpointTriggerNonce: 1 } } });
  await h.waitUntil(async () => ((await h.events('chk')).some((e) => e.reason === 'CheckpointCompleted') ? true : undefined), 'CheckpointCompleted event');
  await h.waitFor('chk', stableAt(2), 'chk at generation 2');
  // A few more passes: the acknowledged nonce takes no second checkpoint.
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(checkpointsOf('chk', jobId).length, 1, 'exactly one checkpoint for the nonce');
  const state = await h.stateConfigMap('chk');
  assert.match(state?.data?.lastReconciledSpec ?? '', /checkpointTriggerNonce: 1/, 'the nonce is acknowledged in the state');
  assert.equal(state?.data?.pendingOperation, undefined, 'no checkpoint left pending');
});

test('periodic schedules: a duration for checkpoints and a Quartz cron for savepoints, each taken when due', async () => {
  await h.create(
    flinkDeployment('periodic')
      .withFlinkConfiguration({
        'kubernetes.operator.periodic.checkpoint.interval': '2 s',
        // every second second (Quartz: seconds field, `?` for day-of-week)
        'kubernetes.operator.periodic.savepoint.interval': '*/2 * * * * ?',
      })
      .build(),
  );
  const running = await h.waitFor('periodic', stableAt(1), 'periodic STABLE');
  const jobId = running.status!.jobStatus!.jobId!;
  const started = Date.now();
  await h.waitUntil(
    async () => {
      const checkpoints = checkpointsOf('periodic', jobId).length;
      const savepoints = h.world.simulation.lineage('default', 'periodic').savepoints.filter((s) => s.jobId === jobId && s.status === 'COMPLETED').length;
      return checkpoints >= 2 && savepoints >= 2 ? true : undefined;
    },
    'two periodic checkpoints and two cron savepoints',
    15_000,
  );
  const elapsed = Date.now() - started;
  const savepoints = h.world.simulation.lineage('default', 'periodic').savepoints.filter((s) => s.jobId === jobId);
  assert.ok(
    savepoints.every((s) => s.kind === 'savepoint'),
    'periodic savepoints do not stop the job',
  );
  // On schedule, not in a loop: at most one of each per 2 s interval (plus the one due at once).
  assert.ok(savepoints.length <= Math.ceil(elapsed / 2_000) + 2, `${savepoints.length} savepoints in ${elapsed} ms`);
  assert.ok(checkpointsOf('periodic', jobId).length <= Math.ceil(elapsed / 2_000) + 2, `checkpoints in ${elapsed} ms`);
  const lastSavepoint = (await h.get('periodic'))?.status?.jobStatus?.lastSavepoint;
  assert.equal(lastSavepoint?.triggerType, 'PERIODIC');

  // Recorded as FlinkStateSnapshot resources (kubernetes.operator.snapshot.resource.enabled, default true):
  // every cron savepoint once; checkpoint resources kept to state.checkpoints.num-retained (1), as Apache's SnapshotObserver trims them.
  const resources = (
    (await h.custom.listNamespacedCustomObject({ group: 'flink.apache.org', version: 'v1beta1', namespace: 'default', plural: 'flinkstatesnapshots' })) as {
      items: Array<{
        metadata: { name: string; labels?: Record<string, string> };
        spec: { savepoint?: unknown; checkpoint?: unknown };
        status?: { state?: string; path?: string };
      }>;
    }
  ).items.filter((r) => r.metadata.labels?.['job-reference.name'] === 'periodic');
  const savepointPaths = resources.filter((r) => r.spec.savepoint).map((r) => r.status?.path);
  const completed = h.world.simulation
    .lineage('default', 'periodic')
    .savepoints.filter((s) => s.status === 'COMPLETED')
    .map((s) => s.location);
  assert.ok(savepointPaths.length >= 2, `savepoint resources: ${savepointPaths.join(', ')}`);
  assert.ok(
    savepointPaths.every((p) => completed.includes(p ?? '')),
    'each names a savepoint Flink took',
  );
  assert.equal(new Set(savepointPaths).size, savepointPaths.length, 'none twice');
  assert.ok(resources.every((r) => r.metadata.labels?.['snapshot.trigger-type'] === 'PERIODIC'));
  await h.waitUntil(
    async () => {
      const list = (await h.custom.listNamespacedCustomObject({
        group: 'flink.apache.org',
        version: 'v1beta1',
        namespace: 'default',
        plural: 'flinkstatesnapshots',
      })) as {
        items: Array<{ metadata: { labels?: Record<string, string>; deletionTimestamp?: string }; spec: { checkpoint?: unknown } }>;
      };
      const checkpoints = list.items.filter(
        (r) => r.spec.checkpoint && r.metadata.labels?.['job-reference.name'] === 'periodic' && !r.metadata.deletionTimestamp,
      );
      return checkpoints.length === 1 ? true : undefined;
    },
    'exactly one checkpoint resource retained',
    10_000,
  );
});
