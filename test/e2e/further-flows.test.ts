/**
 * End-to-end flows of issue 8 on the development cluster with simulated Flink: restartNonce,
 * manual and periodic savepoints (history trimming and disposal), savepoint failures, last-state
 * upgrades through HA, rollback, rescaling, savepoint on deletion, failed jobs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { flinkRestClientFor } from '../../src/flink/flink-rest-access.js';
import { manualSavepointTriggerId } from '../../src/reconciler/pending-savepoint.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';
const lineage = (name: string) => h.world.simulation.lineage('default', name);
const reasons = async (name: string) => (await h.events(name)).map((e) => e.reason ?? '');
const history = async (name: string) =>
  parseYaml((await h.stateConfigMap(name))?.data?.savepointHistory ?? '[]') as Array<{ location: string; triggerType: string; triggerNonce?: number }>;

test('restartNonce redeploys the same spec through a savepoint', async () => {
  await h.create(flinkDeployment('restart').build());
  const first = await h.waitFor('restart', stable(1), 'restart STABLE');
  await h.patch('restart', { spec: { restartNonce: 1 } });
  const second = await h.waitFor('restart', stable(2), 'restart STABLE again');
  assert.notEqual(second.status?.jobStatus?.jobId, first.status?.jobStatus?.jobId);
  const l = lineage('restart');
  assert.equal(l.savepoints.length, 1);
  assert.equal(l.submissions[1].restoredFrom, l.savepoints[0].location);
});

test('a new savepointTriggerNonce takes exactly one savepoint and the job keeps running', async () => {
  await h.create(flinkDeployment('manual').build());
  const running = await h.waitFor('manual', stable(1), 'manual STABLE');
  await h.patch('manual', { spec: { job: { savepointTriggerNonce: 1 } } });
  const after = await h.waitFor('manual', (d) => d.status?.jobStatus?.lastSavepoint?.triggerType === 'MANUAL' && stable(2)(d), 'the manual savepoint');
  assert.equal(after.status?.jobStatus?.jobId, running.status?.jobStatus?.jobId, 'same job');
  const l = lineage('manual');
  assert.equal(l.savepoints.length, 1);
  assert.equal(l.savepoints[0].kind, 'savepoint');
  assert.equal(l.submissions.length, 1);
  assert.equal(after.status?.jobStatus?.lastSavepoint?.location, l.savepoints[0].location);
  assert.equal((await history('manual')).at(-1)?.triggerNonce, 1);

  await h.patch('manual', { metadata: { labels: { touched: 'yes' } } });
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(lineage('manual').savepoints.length, 1, 'the same nonce takes no second savepoint');
  await h.patch('manual', { spec: { job: { savepointTriggerNonce: 2 } } });
  await h.waitUntil(() => (lineage('manual').savepoints.filter((s) => s.status === 'COMPLETED').length === 2 ? true : undefined), 'a second manual savepoint');
  await h.waitFor('manual', stable(3), 'manual STABLE on generation 3');
  assert.equal(lineage('manual').savepoints.length, 2);
});

test("a paused predecessor's late trigger for the same nonce joins the savepoint instead of taking a second", async () => {
  // The side-effect fence's caveat (design/004): a request already sent when a leader pauses can land
  // after its successor acted. Every instance derives a manual savepoint's trigger id from the job and
  // the nonce, and Flink treats a known trigger id as the same operation (DispatcherCachedOperationsHandler).
  await h.create(flinkDeployment('late').build());
  const running = await h.waitFor('late', stable(1), 'late STABLE');
  await h.patch('late', { spec: { job: { savepointTriggerNonce: 1 } } });
  await h.waitFor('late', (d) => d.status?.jobStatus?.lastSavepoint?.triggerType === 'MANUAL' && stable(2)(d), 'the manual savepoint');
  assert.equal(lineage('late').savepoints.length, 1);
  const jobId = running.status!.jobStatus!.jobId!;
  const predecessor = flinkRestClientFor(running, { mode: 'apiserver-proxy', kubeConfig: h.kubeConfig, retry: { getAttempts: 1, backoffMs: [] } });
  const triggerId = manualSavepointTriggerId(jobId, 1, undefined, 0);
  assert.equal(lineage('late').savepoints[0].triggerId, triggerId, 'the id every instance derives for nonce 1');
  await predecessor.triggerSavepoint(jobId, { targetDirectory: 'file:///flink-data/savepoints', triggerId });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(lineage('late').savepoints.length, 1, 'the late trigger took no second savepoint');
});

test('periodic savepoints keep the history within its limits and dispose what leaves it', async () => {
  await h.create(
    flinkDeployment('periodic')
      .withFlinkConfiguration({
        'kubernetes.operator.periodic.savepoint.interval': '300 ms',
        'kubernetes.operator.savepoint.history.max.count': '2',
      })
      .build(),
  );
  await h.waitFor('periodic', stable(1), 'periodic STABLE');
  await h.waitUntil(() => (lineage('periodic').disposals.length >= 2 ? true : undefined), 'two disposals', 20_000);
  const l = lineage('periodic');
  const completed = l.savepoints.filter((s) => s.status === 'COMPLETED');
  assert.ok(completed.length >= 4, `several periodic savepoints (${completed.length})`);
  assert.deepEqual(
    l.disposals.slice(0, 2).map((d) => d.path),
    completed.slice(0, 2).map((s) => s.location),
    'the oldest are disposed first',
  );
  const kept = await h.waitUntil(async () => {
    const current = await history('periodic');
    return current.length === 2 ? current : undefined;
  }, 'the history at its limit of 2');
  assert.ok(kept.every((r) => r.triggerType === 'PERIODIC'));
  const disposed = lineage('periodic').disposals.map((d) => d.path);
  for (const r of kept) assert.ok(!disposed.includes(r.location), 'nothing in the history is disposed');
});

test('a failing manual savepoint is retried within the grace period, then reported; the job keeps running', async () => {
  await h.create(
    flinkDeployment('spfail')
      .withFlinkConfiguration({
        'simulator.savepoint.failure': 'fail',
        'kubernetes.operator.savepoint.trigger.grace-period': '400 ms',
      })
      .build(),
  );
  const running = await h.waitFor('spfail', stable(1), 'spfail STABLE');
  await h.patch('spfail', { spec: { job: { savepointTriggerNonce: 5 } } });
  // Each failed attempt is a SavepointError event; the last one says it is given up.
  await h.waitUntil(
    async () => ((await h.events('spfail')).some((e) => e.reason === 'SavepointError' && (e.message ?? '').includes('not retried further')) ? true : undefined),
    'the final SavepointError event',
  );
  const l = lineage('spfail');
  assert.ok(l.savepoints.length >= 2, `retried (${l.savepoints.length} attempts)`);
  assert.ok(l.savepoints.every((s) => s.status === 'FAILED'));
  const d = await h.waitFor('spfail', (x) => x.status?.observedGeneration === 2, 'the nonce acknowledged');
  assert.equal(d.status?.jobStatus?.jobId, running.status?.jobStatus?.jobId);
  await new Promise((r) => setTimeout(r, 600));
  const attempts = lineage('spfail').savepoints.length;
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(lineage('spfail').savepoints.length, attempts, 'not retried forever');
});

const HA = {
  'high-availability.type': 'kubernetes',
  'high-availability.storageDir': 'file:///flink-data/ha',
  'execution.checkpointing.interval': '100 ms',
};

/** Waits until Flink's HA metadata of `name` records a completed checkpoint (what a last-state upgrade or resume recovers from). */
async function haCheckpointRecorded(name: string): Promise<void> {
  await h.waitUntil(async () => {
    const ha = await h.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: `app=${name},configmap-type=high-availability` });
    return ha.items.some((cm) => Object.keys(cm.data ?? {}).some((k) => k.startsWith('completedCheckpoint'))) ? true : undefined;
  }, 'a checkpoint recorded in the HA metadata');
}

test('a last-state upgrade recovers the same job from its latest checkpoint through HA, without a savepoint', async () => {
  await h.create(
    flinkDeployment('laststate')
      .withSpec({ job: { upgradeMode: 'last-state' } })
      .withFlinkConfiguration(HA)
      .build(),
  );
  const before = await h.waitFor('laststate', stable(1), 'laststate STABLE');
  await haCheckpointRecorded('laststate');
  await h.patch('laststate', { spec: { image: 'flink:1.20.1' } });
  const after = await h.waitFor('laststate', stable(2), 'laststate STABLE on generation 2');
  const l = lineage('laststate');
  assert.equal(l.savepoints.length, 0, 'no savepoint');
  const recovered = l.submissions.at(-1)!;
  assert.equal(recovered.origin, 'ha-recovered');
  assert.equal(recovered.jobId, before.status?.jobStatus?.jobId, 'the same job continues');
  assert.match(recovered.restoredFrom ?? '', /checkpoints/);
  assert.equal(after.status?.jobStatus?.jobId, before.status?.jobStatus?.jobId);
});

test('a last-state suspend removes the cluster and keeps HA metadata; the resume recovers the same job from its latest checkpoint', async () => {
  await h.create(
    flinkDeployment('lastsuspend')
      .withSpec({ job: { upgradeMode: 'last-state' } })
      .withFlinkConfiguration(HA)
      .build(),
  );
  const before = await h.waitFor('lastsuspend', stable(1), 'lastsuspend STABLE');
  await haCheckpointRecorded('lastsuspend');
  await h.patch('lastsuspend', { spec: { job: { state: 'suspended' } } });
  await h.waitFor('lastsuspend', (d) => d.status?.lifecycleState === 'SUSPENDED' && d.status?.observedGeneration === 2, 'lastsuspend SUSPENDED');
  await h.waitUntil(
    async () => ((await h.apps.listNamespacedDeployment({ namespace: 'default', labelSelector: 'app=lastsuspend' })).items.length === 0 ? true : undefined),
    'the cluster removed',
  );
  const revision = (await h.stateConfigMap('lastsuspend'))?.data?.revision;
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal((await h.stateConfigMap('lastsuspend'))?.data?.revision, revision, 'suspended means quiet: no state writes while nothing happens');
  await h.patch('lastsuspend', { spec: { job: { state: 'running' } } });
  const after = await h.waitFor('lastsuspend', stable(3), 'lastsuspend STABLE on generation 3');
  const l = lineage('lastsuspend');
  assert.equal(l.savepoints.length, 0, 'no savepoint: last-state');
  assert.equal(l.submissions.filter((s) => s.origin === 'submitted').length, 1, 'never resubmitted without its state');
  const recovered = l.submissions.at(-1)!;
  assert.equal(recovered.origin, 'ha-recovered');
  assert.equal(recovered.jobId, before.status?.jobStatus?.jobId, 'the same job continues');
  assert.match(recovered.restoredFrom ?? '', /checkpoints/);
  assert.equal(after.status?.jobStatus?.jobId, before.status?.jobStatus?.jobId);
});

test('a last-state upgrade that changes the Flink version falls back to a savepoint', async () => {
  await h.create(
    flinkDeployment('lsversion')
      .withSpec({ job: { upgradeMode: 'last-state' } })
      .withFlinkConfiguration(HA)
      .build(),
  );
  await h.waitFor('lsversion', stable(1), 'lsversion STABLE');
  await h.patch('lsversion', { spec: { flinkVersion: 'v2_0', image: 'flink:2.0' } });
  await h.waitFor('lsversion', stable(2), 'lsversion STABLE on generation 2');
  const l = lineage('lsversion');
  assert.equal(l.savepoints.length, 1);
  assert.equal(l.submissions.at(-1)!.origin, 'submitted');
  assert.equal(l.submissions.at(-1)!.restoredFrom, l.savepoints[0].location);
});

test('a spec that never becomes ready is rolled back to the last stable spec', async () => {
  await h.create(
    flinkDeployment('rollback')
      .withFlinkConfiguration({
        'kubernetes.operator.deployment.rollback.enabled': 'true',
        // Long enough for a healthy deployment on a loaded machine: a new spec that is merely slow must not be rolled back.
        'kubernetes.operator.deployment.readiness.timeout': '4 s',
      })
      .build(),
  );
  await h.waitFor('rollback', stable(1), 'rollback STABLE');
  await h.patch('rollback', { spec: { image: 'flink:crashloop' } });
  const rolledBack = await h.waitFor(
    'rollback',
    (d) => d.status?.lifecycleState === 'ROLLED_BACK' && d.status?.jobStatus?.state === 'RUNNING',
    'ROLLED_BACK',
    30_000,
  );
  const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'rollback' });
  assert.equal(jm.spec?.template.spec?.containers[0]?.image, 'flink:1.20', 'the stable image runs again');
  const l = lineage('rollback');
  const upgradeSavepoint = l.savepoints.find((s) => s.kind === 'stop-with-savepoint');
  assert.equal(l.submissions.at(-1)!.restoredFrom, upgradeSavepoint?.location, 'rolled back from the upgrade savepoint');
  assert.ok((await reasons('rollback')).includes('Rollback'));
  assert.equal(rolledBack.status?.observedGeneration, 2);

  await h.patch('rollback', { spec: { image: 'flink:1.20.2' } });
  await h.waitFor('rollback', stable(3), 'a new change leaves the rolled-back state', 20_000);
});

test('in standalone reactive mode a replicas change rescales the TaskManagers without a restart', async () => {
  await h.create(
    flinkDeployment('reactive')
      .withSpec({ mode: 'standalone', taskManager: { replicas: 1 } })
      .withFlinkConfiguration({ 'scheduler-mode': 'REACTIVE' })
      .build(),
  );
  const before = await h.waitFor('reactive', stable(1), 'reactive STABLE');
  await h.patch('reactive', { spec: { taskManager: { replicas: 3 } } });
  const after = await h.waitFor('reactive', stable(2), 'reactive STABLE on generation 2');
  const tm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'reactive-taskmanager' });
  assert.equal(tm.spec?.replicas, 3);
  assert.equal(after.status?.jobStatus?.jobId, before.status?.jobStatus?.jobId, 'no restart');
  assert.equal(lineage('reactive').submissions.length, 1);
  assert.equal(lineage('reactive').savepoints.length, 0);
  await h.waitFor('reactive', (d) => d.status?.taskManager?.replicas === 3, 'the status to show 3 TaskManagers');
});

test('with savepoint-on-deletion, deleting takes a final savepoint and names it in the last event', async () => {
  await h.create(flinkDeployment('final').withFlinkConfiguration({ 'kubernetes.operator.job.savepoint-on-deletion': 'true' }).build());
  await h.waitFor('final', stable(1), 'final STABLE');
  await h.delete('final');
  await h.waitUntil(async () => ((await h.get('final')) === undefined ? true : undefined), 'final to be deleted');
  const l = lineage('final');
  assert.equal(l.savepoints.length, 1);
  assert.equal(l.savepoints[0].kind, 'stop-with-savepoint');
  assert.equal(l.savepoints[0].status, 'COMPLETED');
  const cleanup = (await h.events('final')).filter((e) => e.reason === 'Cleanup').map((e) => e.message ?? '');
  assert.ok(
    cleanup.some((m) => m.includes(l.savepoints[0].location!)),
    cleanup.join(' | '),
  );
});

test('a failed job is shown as FAILED with its exception, or restarted when configured', async () => {
  await h.create(flinkDeployment('fails').withFlinkConfiguration({ 'simulator.job.fail-after': '200 ms' }).build());
  const failed = await h.waitFor('fails', (d) => d.status?.lifecycleState === 'FAILED', 'FAILED');
  assert.match(failed.status?.error ?? '', /FAILED: .*Exception/);
  assert.ok((await reasons('fails')).includes('JobException'));
  assert.equal(lineage('fails').submissions.length, 1, 'not restarted by default');

  await h.create(
    flinkDeployment('restarts').withFlinkConfiguration({ 'simulator.job.fail-after': '300 ms', 'kubernetes.operator.job.restart.failed': 'true' }).build(),
  );
  await h.waitUntil(() => (lineage('restarts').submissions.length >= 2 ? true : undefined), 'a restart of the failed job', 20_000);
  assert.ok((await reasons('restarts')).includes('RestartFailedJob'));
  const ids = lineage('restarts').submissions.map((s) => s.jobId);
  assert.equal(new Set(ids).size, ids.length, 'each restart is a new job id');
});
