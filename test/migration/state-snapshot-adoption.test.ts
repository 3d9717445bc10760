/**
 * The migration adopts the Apache operator's FlinkStateSnapshot resources into the savepoint
 * history (design/008-migration.md "FlinkStateSnapshot resources"), on the development cluster with
 * the FlinkStateSnapshot CRD of crds/ and the fixtures of state-snapshot-variants/ (Apache 1.10+
 * resources: completed upgrade, periodic and manual savepoints of `orders`, one still IN_PROGRESS,
 * a checkpoint, and a savepoint of another deployment).
 *
 * Behaviour emulated: since Apache operator 1.10 (`kubernetes.operator.snapshot.resource.enabled`,
 * default true) savepoints are recorded as FlinkStateSnapshot resources and not in
 * `status.jobStatus.savepointInfo.savepointHistory` (Apache `AbstractJobReconciler.triggerSnapshot`,
 * `FlinkStateSnapshotUtils.createSavepointResource` / `snapshotSuccessful`, commit 6e9caeb4).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import type { SavepointRecord } from '../../src/api/internal-state.js';
import { KubeFlinkStateSnapshotClient } from '../../src/kube/flink-state-snapshot-client.js';
import { KubeApiError } from '../../src/kube/api-errors.js';
import { migrateLegacyDeployment, MIGRATE_COMMAND_WRITER, type MigrationDependencies } from '../../src/state/legacy-migration.js';
import { revertDeployment } from '../../src/state/legacy-revert.js';
import { decodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { FLINK_DEPLOYMENT_STATE } from '../../src/state/state-kinds.js';
import { startLegacyCluster, type LegacyCluster } from './legacy-cluster.js';
import { loadStateSnapshots, ordersWithSnapshotResources } from './state-snapshot-variants.js';

let lc: LegacyCluster;
let deps: MigrationDependencies;
const snapshots = loadStateSnapshots();
const ms = (iso: string) => Date.parse(iso);
/** The status of `orders` as the Apache operator left it (read back after the PUT). */
let ordersOriginalStatus: unknown;

before(async () => {
  lc = await startLegacyCluster({ installStateSnapshotCrd: true });
  deps = {
    configMaps: lc.configMaps,
    deployments: lc.deployments,
    dryRun: false,
    writer: MIGRATE_COMMAND_WRITER,
    retryDelayMs: 1,
    snapshots: new KubeFlinkStateSnapshotClient(lc.kubeConfig),
  };
  await lc.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'with-history' } } });
  for (const snapshot of Object.values(snapshots)) {
    await lc.createSnapshot(snapshot);
    await lc.createSnapshot({ ...snapshot, metadata: { ...snapshot.metadata, namespace: 'with-history' } });
  }
});
after(async () => {
  await lc?.stop();
});

async function historyOf(name: string, namespace = 'default'): Promise<SavepointRecord[]> {
  const cm = await lc.configMaps.get(namespace, `${name}-operator-state`);
  assert.ok(cm, `ConfigMap ${namespace}/${name}-operator-state exists`);
  return decodeStateConfigMap(cm, FLINK_DEPLOYMENT_STATE).savepointHistory;
}

/** The snapshots as stored (resourceVersion, spec, status, labels): the migration must not change them. */
async function storedSnapshots(namespace = 'default'): Promise<string> {
  const items = await lc.listSnapshots(namespace);
  return JSON.stringify(items.map((s) => [s.metadata.name, s.metadata.resourceVersion, s.metadata.labels, s.spec, s.status]).sort());
}

const ORDERS_ADOPTED: SavepointRecord[] = [
  { location: 's3://b/savepoints/savepoint-orders-upgrade', timeStamp: ms('2026-07-18T06:00:00.000Z'), triggerType: 'UPGRADE', formatType: 'CANONICAL' },
  { location: 's3://b/savepoints/savepoint-orders-periodic', timeStamp: ms('2026-07-18T07:00:04.250Z'), triggerType: 'PERIODIC', formatType: 'NATIVE' },
  // triggered before the periodic one, completed after it: ordered by completion (resultTimestamp)
  { location: 's3://b/savepoints/savepoint-orders-manual', timeStamp: ms('2026-07-18T07:10:00.000Z'), triggerType: 'MANUAL', formatType: 'CANONICAL' },
];

test('dry run lists the savepoints it would adopt and writes nothing', async () => {
  const orders = ordersWithSnapshotResources();
  const stored = await lc.createLegacy(orders.object, orders.status);
  ordersOriginalStatus = stored.status;
  const outcome = await migrateLegacyDeployment(stored, { ...deps, dryRun: true });
  assert.equal(outcome.kind, 'would-migrate', outcome.message);
  assert.ok(outcome.kind === 'would-migrate');
  assert.match(outcome.diff, /savepoint history adopted from FlinkStateSnapshot resources/);
  for (const name of ['orders-savepoint-upgrade-1784354400000', 'orders-savepoint-periodic-1784358000000', 'orders-savepoint-manual-1784357000000']) {
    assert.match(outcome.diff, new RegExp(`\\+ ${name}: s3://b/savepoints/savepoint-orders-`));
  }
  assert.doesNotMatch(outcome.diff, /clicks|checkpoint-periodic|1784361600000/);
  assert.equal(await lc.configMaps.get('default', 'orders-operator-state'), undefined);
});

test('migration adopts exactly the completed savepoints of the deployment, in order, and leaves the resources as they are', async () => {
  const before = await storedSnapshots();
  const stored = await lc.getV1beta1('orders');
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'migrated', outcome.message);
  assert.deepEqual(await historyOf('orders'), ORDERS_ADOPTED);
  assert.deepEqual(
    outcome.adoption?.adopted.map((a) => a.name),
    ['orders-savepoint-upgrade-1784354400000', 'orders-savepoint-periodic-1784358000000', 'orders-savepoint-manual-1784357000000'],
  );
  // the in-progress one is named, not adopted; the checkpoint is not savepoint history; nothing of clicks
  assert.match(outcome.message, /still pending: orders-savepoint-manual-1784361600000 \(IN_PROGRESS\)/);
  assert.match(outcome.message, /checkpoint snapshots are not savepoint history, left as they are: orders-checkpoint-periodic-1784359800000/);
  assert.match(outcome.message, /the resources are left in place, unchanged/);
  assert.doesNotMatch(outcome.message, /clicks/);
  assert.equal(await storedSnapshots(), before, 'no FlinkStateSnapshot written');
  // the upgradeSavepointPath is still where the upgrade savepoint is restored from
  const v1 = await lc.getV1('orders');
  assert.equal(v1.status?.stateRef?.configMapName, 'orders-operator-state');
});

test('a rerun is already-migrated and adds nothing', async () => {
  const cmBefore = await lc.configMaps.get('default', 'orders-operator-state');
  const outcome = await migrateLegacyDeployment(await lc.getV1beta1('orders'), deps);
  assert.equal(outcome.kind, 'already-migrated', outcome.message);
  const cmAfter = await lc.configMaps.get('default', 'orders-operator-state');
  assert.equal(cmAfter?.metadata?.resourceVersion, cmBefore?.metadata?.resourceVersion);
  assert.deepEqual(await historyOf('orders'), ORDERS_ADOPTED);
});

test('revert writes back the original status: the adopted savepoints stay in the resources only (as the Apache operator keeps them)', async () => {
  const before = await storedSnapshots();
  const outcome = await revertDeployment(await lc.getV1beta1('orders'), { configMaps: lc.configMaps, deployments: lc.deployments, dryRun: false });
  assert.equal(outcome.kind, 'reverted', outcome.message);
  assert.deepEqual((await lc.getV1beta1('orders')).status, ordersOriginalStatus);
  assert.equal(await lc.configMaps.get('default', 'orders-operator-state'), undefined);
  assert.equal(await storedSnapshots(), before, 'no FlinkStateSnapshot written');
  // and migrating again adopts the same records
  const again = await migrateLegacyDeployment(await lc.getV1beta1('orders'), deps);
  assert.equal(again.kind, 'migrated', again.message);
  assert.deepEqual(await historyOf('orders'), ORDERS_ADOPTED);
});

test('a savepoint already in the status history is kept once (the status entry), merged in time order', async () => {
  const older = {
    timeStamp: ms('2026-07-18T05:00:00.000Z'),
    location: 's3://b/savepoints/savepoint-orders-old',
    triggerType: 'PERIODIC',
    formatType: 'CANONICAL',
    triggerNonce: null,
  };
  const manual = {
    timeStamp: ms('2026-07-18T07:10:00.000Z'),
    location: 's3://b/savepoints/savepoint-orders-manual',
    triggerType: 'MANUAL',
    formatType: 'CANONICAL',
    triggerNonce: 7,
  };
  const orders = ordersWithSnapshotResources({ namespace: 'with-history', history: [older, manual] });
  const stored = await lc.createLegacy(orders.object, orders.status);
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'migrated', outcome.message);
  const history = await historyOf('orders', 'with-history');
  assert.deepEqual(
    history.map((r) => r.location),
    [
      's3://b/savepoints/savepoint-orders-old',
      's3://b/savepoints/savepoint-orders-upgrade',
      's3://b/savepoints/savepoint-orders-periodic',
      's3://b/savepoints/savepoint-orders-manual',
    ],
  );
  assert.equal(new Set(history.map((r) => r.location)).size, history.length, 'no duplicates');
  assert.equal(history.at(-1)?.triggerNonce, 7, 'the status entry (with its nonce) is the one kept');
  assert.match(outcome.message, /already in the status history: orders-savepoint-manual-1784357000000/);
});

test('without the FlinkStateSnapshot CRD the migration works as before and says nothing was adopted', async () => {
  const bare = await startLegacyCluster();
  try {
    const orders = ordersWithSnapshotResources();
    const stored = await bare.createLegacy(orders.object, orders.status);
    const outcome = await migrateLegacyDeployment(stored, {
      configMaps: bare.configMaps,
      deployments: bare.deployments,
      dryRun: false,
      writer: MIGRATE_COMMAND_WRITER,
      retryDelayMs: 1,
      snapshots: new KubeFlinkStateSnapshotClient(bare.kubeConfig),
    });
    assert.equal(outcome.kind, 'migrated', outcome.message);
    assert.match(outcome.message, /FlinkStateSnapshot CRD not installed: no snapshot resource adopted/);
    const cm = await bare.configMaps.get('default', 'orders-operator-state');
    assert.ok(cm);
    assert.deepEqual(decodeStateConfigMap(cm, FLINK_DEPLOYMENT_STATE).savepointHistory, []);
  } finally {
    await bare.stop();
  }
});

test('no permission to list FlinkStateSnapshots (403): refused with the missing grant named, nothing written, so their history is not lost', async () => {
  const bare = await startLegacyCluster();
  try {
    const orders = ordersWithSnapshotResources();
    const stored = await bare.createLegacy(orders.object, orders.status);
    const forbidden = new KubeApiError(
      403,
      'Forbidden',
      'flinkstatesnapshots.flink.apache.org is forbidden: User "custom" cannot list resource "flinkstatesnapshots"',
    );
    const outcome = await migrateLegacyDeployment(stored, {
      configMaps: bare.configMaps,
      deployments: bare.deployments,
      dryRun: false,
      writer: MIGRATE_COMMAND_WRITER,
      retryDelayMs: 1,
      snapshots: { listInNamespace: () => Promise.reject(forbidden) },
    });
    assert.equal(outcome.kind, 'refused');
    assert.match(
      outcome.message,
      /may not list FlinkStateSnapshots in namespace default \(403: .*\); their savepoint history would be lost, so nothing was migrated: grant list on flinkstatesnapshots/,
    );
    assert.equal(await bare.configMaps.get('default', 'orders-operator-state'), undefined, 'no state ConfigMap written');
  } finally {
    await bare.stop();
  }
});
