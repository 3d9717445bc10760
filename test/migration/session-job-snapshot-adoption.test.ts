/**
 * The migration adopts the Apache operator's FlinkStateSnapshot resources of a FlinkSessionJob into
 * its savepoint history (design/008-migration.md "FlinkStateSnapshot resources" and
 * "FlinkSessionJobs"), on the development cluster with the FlinkStateSnapshot CRD of crds/.
 *
 * The session job `enricher` is ../session-job-variants/running-stable.yaml (Apache 1.13.0 layout)
 * as the Apache operator 1.10+ leaves it with `kubernetes.operator.snapshot.resource.enabled: "true"`
 * in the session job's configuration (it overrides the session cluster's "false": Apache
 * `FlinkConfigManager.getSessionJobConfig` merges the session job's flinkConfiguration over the
 * cluster's): its UPGRADE and PERIODIC savepoints are resources (state-snapshot-variants/
 * enricher-session-*.yaml), not status history (Apache `AbstractJobReconciler.setUpgradeSavepointPath`
 * and `triggerSnapshot` write `savepointInfo` only when no resource was created, commit 6e9caeb4).
 * In the same namespace a FlinkDeployment also named `enricher` has a savepoint of its own
 * (enricher-deployment-savepoint-periodic.yaml): the snapshot names have the same form for both
 * kinds, only `spec.jobReference.kind` tells them apart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import type { FlinkSessionJobV1beta1 } from '../../src/api/flink-session-job.js';
import type { SavepointRecord } from '../../src/api/internal-state.js';
import { migrateClientsFor, runMigrate } from '../../src/cli/migrate-command.js';
import { KubeFlinkStateSnapshotClient } from '../../src/kube/flink-state-snapshot-client.js';
import { MIGRATE_COMMAND_WRITER, migrateLegacySessionJob, type SessionJobMigrationDependencies } from '../../src/state/legacy-migration.js';
import { ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION } from '../../src/state/legacy-status-archive.js';
import { revertSessionJob } from '../../src/state/legacy-revert.js';
import { decodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { FLINK_DEPLOYMENT_STATE, FLINK_SESSION_JOB_STATE } from '../../src/state/state-kinds.js';
import { startLegacyCluster, type LegacyCluster } from './legacy-cluster.js';
import { loadSessionJobVariant } from './session-job-variants.js';
import { loadStateSnapshots, ordersWithSnapshotResources, SNAPSHOT_RESOURCE_ENABLED } from './state-snapshot-variants.js';

let lc: LegacyCluster;
let deps: SessionJobMigrationDependencies;
const ms = (iso: string) => Date.parse(iso);
/** The status of default/enricher as the Apache operator left it (read back after the PUT). */
let enricherOriginalStatus: unknown;

/** The Apache operator's periodic checkpoint option (`KubernetesOperatorConfigOptions.PERIODIC_CHECKPOINT_INTERVAL`). */
const PERIODIC_CHECKPOINT_INTERVAL = 'kubernetes.operator.periodic.checkpoint.interval';

function withSnapshotResources(config: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...config, [SNAPSHOT_RESOURCE_ENABLED]: 'true', [PERIODIC_CHECKPOINT_INTERVAL]: '1h' };
}

/** A reconciled-spec string of the Apache layout with the snapshot-resource options added to its flinkConfiguration. */
function reconciledWithSnapshotResources(json: string | undefined): string {
  const parsed = JSON.parse(String(json)) as { spec: { flinkConfiguration?: Record<string, unknown> } };
  parsed.spec.flinkConfiguration = withSnapshotResources(parsed.spec.flinkConfiguration);
  return JSON.stringify(parsed);
}

/**
 * running-stable as `name` in `namespace`, snapshot resources enabled in its configuration (an
 * operator-only option: Apache's spec diff ignores `kubernetes.operator.*` keys, so no redeploy).
 * `keepStatusHistory` false (default): savepointInfo as Apache 1.10+ leaves it with resources on
 * (no lastSavepoint, no history, lastPeriodicSavepointTimestamp 0); true: running-stable's status
 * history is kept, so the same two savepoints are in the status and in the resources.
 */
function enricherWithSnapshotResources(namespace: string, keepStatusHistory = false): FlinkSessionJobV1beta1 {
  const object = loadSessionJobVariant('running-stable').object;
  object.metadata = { ...object.metadata, name: 'enricher', namespace };
  object.spec.flinkConfiguration = withSnapshotResources(object.spec.flinkConfiguration);
  const status = object.status;
  assert.ok(status?.jobStatus && status.reconciliationStatus, 'running-stable has a job and reconciliation status');
  if (!keepStatusHistory) status.jobStatus.savepointInfo = { lastPeriodicSavepointTimestamp: 0 };
  status.reconciliationStatus.lastReconciledSpec = reconciledWithSnapshotResources(status.reconciliationStatus.lastReconciledSpec);
  status.reconciliationStatus.lastStableSpec = reconciledWithSnapshotResources(status.reconciliationStatus.lastStableSpec);
  return object;
}

before(async () => {
  lc = await startLegacyCluster({ installStateSnapshotCrd: true });
  deps = {
    configMaps: lc.configMaps,
    sessionJobs: lc.sessionJobs,
    dryRun: false,
    writer: MIGRATE_COMMAND_WRITER,
    retryDelayMs: 1,
    snapshots: new KubeFlinkStateSnapshotClient(lc.kubeConfig),
  };
  await lc.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'with-history' } } });
  for (const snapshot of Object.values(loadStateSnapshots())) {
    await lc.createSnapshot(snapshot);
    await lc.createSnapshot({ ...snapshot, metadata: { ...snapshot.metadata, namespace: 'with-history' } });
  }
  const stored = await lc.createLegacySessionJob(enricherWithSnapshotResources('default'));
  enricherOriginalStatus = stored.status;
  // the FlinkDeployment of the same name, whose savepoint enricher-savepoint-periodic-1784032200000 is
  const deployment = ordersWithSnapshotResources({ name: 'enricher' });
  await lc.createLegacy(deployment.object, deployment.status);
});
after(async () => {
  await lc?.stop();
});

async function sessionJobHistory(namespace = 'default'): Promise<SavepointRecord[]> {
  const cm = await lc.configMaps.get(namespace, 'enricher.sessionjob-state');
  assert.ok(cm, `ConfigMap ${namespace}/enricher.sessionjob-state exists`);
  return decodeStateConfigMap(cm, FLINK_SESSION_JOB_STATE).savepointHistory;
}

/** The snapshots as stored (resourceVersion, labels, spec, status): the migration must not change them. */
async function storedSnapshots(namespace = 'default'): Promise<string> {
  const items = await lc.listSnapshots(namespace);
  return JSON.stringify(items.map((s) => [s.metadata.name, s.metadata.resourceVersion, s.metadata.labels, s.spec, s.status]).sort());
}

const SESSION_JOB_SNAPSHOTS = ['enricher-savepoint-upgrade-1784020330000', 'enricher-savepoint-periodic-1784030438000'];
const ENRICHER_ADOPTED: SavepointRecord[] = [
  {
    location: 's3://flink/savepoints/savepoint-0d6ec9-1848ed847b7d',
    timeStamp: ms('2026-07-14T09:12:10.250Z'),
    triggerType: 'UPGRADE',
    formatType: 'CANONICAL',
  },
  {
    location: 's3://flink/savepoints/savepoint-bb804a-5340deea14cd',
    timeStamp: ms('2026-07-14T12:00:41.226Z'),
    triggerType: 'PERIODIC',
    formatType: 'CANONICAL',
  },
];
/** The FlinkDeployment's snapshot: same name form, jobReference kind FlinkDeployment. */
const SAME_NAMED_DEPLOYMENT_SNAPSHOT = 'enricher-savepoint-periodic-1784032200000';

test('`flink-operator migrate` adopts exactly the session job’s completed savepoints, in order, none of the same-named FlinkDeployment; the resources are unchanged', async () => {
  const before = await storedSnapshots();
  const lines: string[] = [];
  const report = await runMigrate(migrateClientsFor(lc.kubeConfig), { namespace: 'default' }, (line) => lines.push(line));
  assert.equal(report.exitCode, 0, lines.join('\n'));

  const sessionJobLine = lines.find((l) => l.includes('FlinkSessionJob default/enricher')) ?? '';
  assert.match(sessionJobLine, /^migrated {6}FlinkSessionJob default\/enricher: /, lines.join('\n'));
  assert.match(
    sessionJobLine,
    /adopted 2 savepoint\(s\) from FlinkStateSnapshot resources into the savepoint history \(enricher-savepoint-upgrade-1784020330000, enricher-savepoint-periodic-1784030438000\); the resources are left in place, unchanged/,
  );
  assert.match(sessionJobLine, /checkpoint snapshots are not savepoint history, left as they are: enricher-checkpoint-periodic-1784034000000/);
  assert.doesNotMatch(sessionJobLine, new RegExp(SAME_NAMED_DEPLOYMENT_SNAPSHOT));

  const outcome = report.sessionJobOutcomes.find((o) => o.resource === 'default/enricher');
  assert.equal(outcome?.kind, 'migrated');
  assert.deepEqual(
    outcome.adoption?.adopted.map((a) => a.name),
    SESSION_JOB_SNAPSHOTS,
  );
  assert.deepEqual(await sessionJobHistory(), ENRICHER_ADOPTED);
  const cm = await lc.configMaps.get('default', 'enricher.sessionjob-state');
  assert.deepEqual(
    JSON.parse(cm?.metadata?.annotations?.[ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION] ?? '[]'),
    ENRICHER_ADOPTED.map((r) => r.location),
  );
  assert.equal((await lc.getSessionJobV1('enricher')).status?.stateRef?.configMapName, 'enricher.sessionjob-state');

  // the FlinkDeployment of the same name got its own savepoint, and only that one
  const deploymentOutcome = report.outcomes.find((o) => o.resource === 'default/enricher');
  assert.equal(deploymentOutcome?.kind, 'migrated', deploymentOutcome?.message);
  assert.deepEqual(
    deploymentOutcome.adoption?.adopted.map((a) => a.name),
    [SAME_NAMED_DEPLOYMENT_SNAPSHOT],
  );
  const deploymentCm = await lc.configMaps.get('default', 'enricher-operator-state');
  assert.ok(deploymentCm);
  assert.deepEqual(
    decodeStateConfigMap(deploymentCm, FLINK_DEPLOYMENT_STATE).savepointHistory.map((r) => r.location),
    ['s3://b/savepoints/savepoint-7c31f0-9a2e4b6d8c10'],
  );

  assert.equal(await storedSnapshots(), before, 'no FlinkStateSnapshot written');
});

test('a rerun is already-migrated and adds nothing', async () => {
  const cmBefore = await lc.configMaps.get('default', 'enricher.sessionjob-state');
  const outcome = await migrateLegacySessionJob(await lc.getSessionJobV1beta1('enricher'), deps);
  assert.equal(outcome.kind, 'already-migrated', outcome.message);
  const cmAfter = await lc.configMaps.get('default', 'enricher.sessionjob-state');
  assert.equal(cmAfter?.metadata?.resourceVersion, cmBefore?.metadata?.resourceVersion);
  assert.deepEqual(await sessionJobHistory(), ENRICHER_ADOPTED);
});

test('revert writes back the original status (the adopted savepoints stay in the resources only); migrating again yields the same history', async () => {
  const before = await storedSnapshots();
  const reverted = await revertSessionJob(await lc.getSessionJobV1beta1('enricher'), { configMaps: lc.configMaps, sessionJobs: lc.sessionJobs, dryRun: false });
  assert.equal(reverted.kind, 'reverted', reverted.message);
  assert.deepEqual((await lc.getSessionJobV1beta1('enricher')).status, enricherOriginalStatus);
  assert.equal(await lc.configMaps.get('default', 'enricher.sessionjob-state'), undefined);

  const again = await migrateLegacySessionJob(await lc.getSessionJobV1beta1('enricher'), deps);
  assert.equal(again.kind, 'migrated', again.message);
  assert.deepEqual(
    again.adoption?.adopted.map((a) => a.name),
    SESSION_JOB_SNAPSHOTS,
  );
  assert.deepEqual(await sessionJobHistory(), ENRICHER_ADOPTED);
  assert.equal(await storedSnapshots(), before, 'no FlinkStateSnapshot written');
});

test('savepoints already in the session job’s status history are kept once (the status entries), none of the FlinkDeployment’s added', async () => {
  const legacy = enricherWithSnapshotResources('with-history', true);
  const statusHistory = legacy.status?.jobStatus?.savepointInfo?.savepointHistory;
  assert.equal(statusHistory?.length, 2);
  const before = await storedSnapshots('with-history');
  const outcome = await migrateLegacySessionJob(await lc.createLegacySessionJob(legacy), deps);
  assert.equal(outcome.kind, 'migrated', outcome.message);
  const history = await sessionJobHistory('with-history');
  // the status entries (timeStamp = the moment the stop / the trigger was requested), not the resources' times
  assert.deepEqual(history, [
    { location: 's3://flink/savepoints/savepoint-0d6ec9-1848ed847b7d', timeStamp: 1784020324318, triggerType: 'UPGRADE', formatType: 'CANONICAL' },
    { location: 's3://flink/savepoints/savepoint-bb804a-5340deea14cd', timeStamp: 1784030441226, triggerType: 'PERIODIC', formatType: 'CANONICAL' },
  ]);
  assert.deepEqual(outcome.adoption?.adopted, []);
  assert.deepEqual(outcome.adoption?.duplicates, SESSION_JOB_SNAPSHOTS);
  assert.match(outcome.message, /already in the status history: enricher-savepoint-upgrade-1784020330000, enricher-savepoint-periodic-1784030438000/);
  assert.doesNotMatch(outcome.message, new RegExp(SAME_NAMED_DEPLOYMENT_SNAPSHOT));
  const cm = await lc.configMaps.get('with-history', 'enricher.sessionjob-state');
  assert.equal(cm?.metadata?.annotations?.[ADOPTED_SNAPSHOT_SAVEPOINTS_ANNOTATION], undefined, 'nothing adopted, nothing to leave out on revert');
  assert.equal(await storedSnapshots('with-history'), before, 'no FlinkStateSnapshot written');
});
