/**
 * End-to-end (issue 19): FlinkStateSnapshot resources with the operator running against the
 * development cluster over HTTP, the CRD installed. Judged by the simulated Flink's lineage (which
 * savepoints were taken, what a job restored from, what was disposed) and by the resources the API
 * server holds, not by the operator's logs.
 *
 * Behaviour as the Apache operator documents it (docs/content/docs/custom-resource/snapshots.md):
 * a user-created FlinkStateSnapshot triggers one savepoint of the referenced job and ends
 * COMPLETED with its path; `alreadyExists: true` records a path without triggering; the operator's
 * own savepoints are recorded as resources labelled with their trigger type and job reference; a
 * snapshot's `status.path` can be a job's `initialSavepointPath`; deleting a snapshot with
 * `disposeOnDelete` disposes of its data.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { flinkStateSnapshot } from '../../src/api/flink-state-snapshot-builder.js';
import {
  FLINK_STATE_SNAPSHOT_PLURAL,
  FLINK_STATE_SNAPSHOT_VERSION,
  SNAPSHOT_TRIGGER_TYPE_LABEL,
  type FlinkStateSnapshot,
} from '../../src/api/flink-state-snapshot.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness({ operator: { reconcileIntervalMs: 500 }, stateSnapshots: true });
});
after(async () => {
  await h?.stop();
});

const GROUP = 'flink.apache.org';
const params = { group: GROUP, version: FLINK_STATE_SNAPSHOT_VERSION, namespace: 'default', plural: FLINK_STATE_SNAPSHOT_PLURAL };

const stableAt = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status.observedGeneration === generation && d.status.jobStatus?.state === 'RUNNING';

async function snapshots(): Promise<FlinkStateSnapshot[]> {
  return ((await h.custom.listNamespacedCustomObject(params)) as { items: FlinkStateSnapshot[] }).items;
}

async function snapshot(name: string): Promise<FlinkStateSnapshot | undefined> {
  return (await snapshots()).find((s) => s.metadata.name === name);
}

async function createSnapshot(body: FlinkStateSnapshot): Promise<void> {
  await h.custom.createNamespacedCustomObject({ ...params, body });
}

async function waitForSnapshot(name: string, what: string, predicate: (s: FlinkStateSnapshot) => boolean, timeoutMs = 15_000): Promise<FlinkStateSnapshot> {
  return h.waitUntil(
    async () => {
      const found = await snapshot(name);
      return found && predicate(found) ? found : undefined;
    },
    `${name}: ${what}`,
    timeoutMs,
  );
}

const savepointsOf = (name: string) => h.world.simulation.lineage('default', name).savepoints.filter((s) => s.kind === 'savepoint');

test('a user-created FlinkStateSnapshot takes exactly one savepoint, ends COMPLETED with its path, and is not taken again after a restart', async () => {
  await h.create(flinkDeployment('user-sp').build());
  const running = await h.waitFor('user-sp', stableAt(1), 'user-sp STABLE');
  const jobId = running.status!.jobStatus!.jobId!;
  assert.equal(savepointsOf('user-sp').length, 0);

  await createSnapshot(flinkStateSnapshot('user-sp-manual').of('FlinkDeployment', 'user-sp').build());
  const done = await waitForSnapshot('user-sp-manual', 'COMPLETED', (s) => s.status?.state === 'COMPLETED');
  const taken = savepointsOf('user-sp');
  assert.equal(taken.length, 1, 'exactly one savepoint in Flink');
  assert.equal(taken[0].jobId, jobId);
  assert.equal(done.status?.path, taken[0].location, 'the status names the savepoint Flink took');
  assert.equal(done.status?.triggerId, taken[0].triggerId, 'the trigger id fixed in the state before the call is the one Flink saw');
  assert.equal(done.metadata.labels?.[SNAPSHOT_TRIGGER_TYPE_LABEL], 'MANUAL');
  assert.ok(done.metadata.finalizers?.includes('flinkstatesnapshots.flink.apache.org/finalizer'), 'the finalizer guards its disposal');

  // A new operator process (its caches cold) does not take it again.
  await h.stopOperator();
  await h.startOperator({ reconcileIntervalMs: 500 });
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(savepointsOf('user-sp').length, 1, 'still exactly one savepoint');

  // Its path starts another deployment (initialSavepointPath naming the snapshot's path).
  await h.create(
    flinkDeployment('from-snapshot')
      .withSpec({ job: { upgradeMode: 'savepoint', initialSavepointPath: done.status.path } })
      .build(),
  );
  await h.waitFor('from-snapshot', stableAt(1), 'from-snapshot STABLE');
  const [submission] = h.world.simulation.lineage('default', 'from-snapshot').submissions;
  assert.equal(submission?.restoredFrom, done.status.path, 'the new job restored from the snapshot');

  // Deleting it (disposeOnDelete defaults to true for a user's savepoint) disposes of the data, then the object goes.
  await h.custom.deleteNamespacedCustomObject({ ...params, name: 'user-sp-manual' });
  await h.waitUntil(async () => ((await snapshot('user-sp-manual')) ? undefined : true), 'user-sp-manual deleted', 15_000);
  assert.deepEqual(
    h.world.simulation.lineage('default', 'user-sp').disposals.map((d) => d.path),
    [done.status.path],
    'disposed of before the finalizer was removed',
  );
});

test('the operator records its own periodic savepoints as FlinkStateSnapshots: no ownerReference, jobReference and Apache labels, one per savepoint', async () => {
  await h.create(flinkDeployment('own-sp').withFlinkConfiguration({ 'kubernetes.operator.periodic.savepoint.interval': '2 s' }).build());
  await h.waitFor('own-sp', stableAt(1), 'own-sp STABLE');
  await h.waitUntil(
    async () => ((await snapshots()).filter((s) => s.spec.jobReference?.name === 'own-sp' && s.status?.state === 'COMPLETED').length >= 2 ? true : undefined),
    'two periodic savepoint resources',
    20_000,
  );
  const completed = savepointsOf('own-sp').filter((s) => s.status === 'COMPLETED');
  const resources = (await snapshots()).filter((s) => s.spec.jobReference?.name === 'own-sp');
  for (const resource of resources) {
    assert.equal(resource.metadata.ownerReferences, undefined, `${resource.metadata.name}: no ownerReference (a savepoint outlives its deployment)`);
    assert.match(resource.metadata.name ?? '', /^own-sp-savepoint-periodic-\d+$/);
    assert.equal(resource.metadata.labels?.['job-reference.name'], 'own-sp');
    assert.equal(resource.spec.savepoint?.alreadyExists, true, 'recorded, never triggered again');
    assert.ok(
      completed.some((s) => s.location === resource.status?.path),
      `${resource.metadata.name} names a savepoint Flink took`,
    );
  }
  const paths = resources.map((r) => r.status?.path);
  assert.equal(new Set(paths).size, paths.length, 'no savepoint recorded twice');
});

test('alreadyExists records a path without a savepoint; a snapshot of a missing job says so and triggers nothing', async () => {
  await createSnapshot(flinkStateSnapshot('existing').asExistingSavepoint('file:///flink-data/savepoints/savepoint-old').build());
  const existing = await waitForSnapshot('existing', 'COMPLETED', (s) => s.status?.state === 'COMPLETED');
  assert.equal(existing.status?.path, 'file:///flink-data/savepoints/savepoint-old');

  await createSnapshot(flinkStateSnapshot('orphan').of('FlinkDeployment', 'no-such-deployment').build());
  const orphan = await waitForSnapshot('orphan', 'an error', (s) => (s.status?.error ?? '') !== '');
  assert.match(
    orphan.status?.error ?? '',
    /^Target for snapshot default\/orphan was not found: create FlinkDeployment no-such-deployment or fix spec.jobReference/,
  );
  assert.equal(h.world.simulation.lineage('default', 'no-such-deployment').savepoints.length, 0);
});
