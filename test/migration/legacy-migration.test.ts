/**
 * The migration core (src/state/legacy-migration.ts) against the development cluster: every legacy
 * variant, idempotency, resume after an interruption at each step, refusals that leave everything
 * untouched, dry run.
 */
import { reconciliationStateOfPhase } from '../../src/api/deployment-phase.js';
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { decodeLegacyStatus, hasLegacyFields } from '../../src/api/legacy-status-codec.js';
import {
  MIGRATE_COMMAND_WRITER,
  migrateIfLegacy,
  migrateLegacyDeployment,
  planMigration,
  type MigrationDependencies,
} from '../../src/state/legacy-migration.js';
import { readLegacyStatusArchive } from '../../src/state/legacy-status-archive.js';
import { decodeStateConfigMap, encodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { startLegacyCluster, type LegacyCluster } from './legacy-cluster.js';
import { builtVariants, captureVariants, malformedStatus } from './legacy-variants.js';

let lc: LegacyCluster;
let deps: MigrationDependencies;
before(async () => {
  lc = await startLegacyCluster();
  deps = { configMaps: lc.configMaps, deployments: lc.deployments, dryRun: false, writer: MIGRATE_COMMAND_WRITER, retryDelayMs: 1 };
});
afterEach(() => {
  lc.cluster.faults.clear();
});
after(async () => {
  await lc?.stop();
});

/** Write requests (anything but get/list/watch) since `mark`. */
function writesSince(mark: number): string[] {
  return lc.cluster.requestLog
    .entries()
    .slice(mark)
    .filter((e) => !['get', 'list', 'watch'].includes(e.verb))
    .map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`);
}
const mark = () => lc.cluster.requestLog.entries().length;

const USER_KEYS = ['observedGeneration', 'lifecycleState', 'jobManagerDeploymentStatus', 'error', 'clusterInfo', 'taskManager', 'conditions'] as const;
const USER_JOB_KEYS = ['jobName', 'jobId', 'state', 'startTime', 'updateTime'] as const;

for (const v of [...builtVariants(), ...captureVariants()]) {
  test(`migrates: ${v.label}`, async () => {
    const stored = await lc.createLegacy(v.object, v.status);
    assert.ok(hasLegacyFields(stored.status), 'fixture stored with legacy fields');
    const name = stored.metadata.name!;
    const expected = decodeLegacyStatus(stored.status!, `default/${name}`, `${name}-operator-state`);

    const outcome = await migrateLegacyDeployment(stored, deps);
    assert.equal(outcome.kind, 'migrated', outcome.message);

    // The ConfigMap: the operator's contract, owned by the deployment, decoding to the legacy state + the verbatim original.
    const cm = await lc.configMaps.get('default', `${name}-operator-state`);
    assert.ok(cm);
    assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, stored.metadata.uid);
    assert.equal(cm.metadata?.ownerReferences?.[0]?.controller, true);
    assert.equal(cm.metadata?.labels?.['app.kubernetes.io/managed-by'], 'flink-operator');
    assert.equal(cm.metadata?.labels?.['flink.apache.org/deployment'], name);
    const state = decodeStateConfigMap(cm);
    const { lastWriter, ...rest } = state;
    // Fields the ConfigMap format cannot hold (planMigration reports them) live in the archive only.
    const archiveOnly = planMigration(stored, { writer: MIGRATE_COMMAND_WRITER }).archiveOnly;
    assert.ok(
      archiveOnly.every((f) => f === 'lastStableFirstDeployment'),
      `only tolerated fields are archive-only: ${archiveOnly.join(', ')}`,
    );
    const expectedState = JSON.parse(JSON.stringify(expected.state)) as Record<string, unknown>;
    for (const field of archiveOnly) delete expectedState[field];
    assert.deepEqual(rest, expectedState, 'the ConfigMap holds exactly the decoded legacy state');
    assert.equal(readLegacyStatusArchive(cm), JSON.stringify(stored.status), 'the original status is archived verbatim');
    assert.equal(lastWriter?.holderIdentity, MIGRATE_COMMAND_WRITER.holderIdentity);

    // The status: user-facing fields exactly as they were, legacy fields gone, stateRef set.
    const after = await lc.getV1beta1(name);
    assert.equal(hasLegacyFields(after.status), false, 'no legacy field left under v1beta1');
    for (const key of USER_KEYS) assert.deepEqual(after.status?.[key], stored.status?.[key], `status.${key} kept`);
    for (const key of USER_JOB_KEYS) assert.deepEqual(after.status?.jobStatus?.[key], stored.status?.jobStatus?.[key], `status.jobStatus.${key} kept`);
    assert.deepEqual(after.status?.stateRef, { configMapName: `${name}-operator-state`, revision: state.revision });
    const expectedLast = stored.status?.jobStatus?.lastSavepoint ?? stored.status?.jobStatus?.savepointInfo?.lastSavepoint;
    if (expectedLast?.location) assert.equal(after.status?.jobStatus?.lastSavepoint?.location, expectedLast.location, 'the last savepoint stays user-facing');
    const v1 = await lc.getV1(name);
    assert.deepEqual(v1.status, after.status, 'the v1 view shows the same status');

    // Idempotent: a second run writes nothing.
    const m = mark();
    const again = await migrateLegacyDeployment(after, deps);
    assert.equal(again.kind, 'already-migrated');
    assert.deepEqual(writesSince(m), []);
  });
}

test('the mid-upgrade variant keeps its pending savepoint and checkpoint triggers and the upgrade savepoint path', async () => {
  const v = builtVariants().find((x) => x.object.metadata.name === 'mid-upgrade')!;
  const cm = await lc.configMaps.get('default', 'mid-upgrade-operator-state');
  assert.ok(cm, 'migrated by the variant test above');
  const state = decodeStateConfigMap(cm);
  assert.equal(reconciliationStateOfPhase(state.phase), 'UPGRADING');
  assert.equal(state.upgradeSavepointPath, 's3://b/savepoints/savepoint-0');
  assert.equal(state.pendingSavepoint?.triggerId, 'trigger-42');
  assert.equal(state.pendingSavepoint?.stopJob, true);
  assert.equal(state.pendingCheckpoint?.triggerId, 'cp-7');
  assert.equal(state.lastReconciledSpec?.job?.parallelism, 4);
  assert.ok(v.status);
  assert.match(readLegacyStatusArchive(cm) ?? '', /\\"cpu\\":1\.0/, 'the "cpu":1.0 text of the legacy spec string survives in the archive');
});

test('a malformed legacy status is refused naming the resource and the field; nothing is written', async () => {
  const stored = await lc.createLegacy(flinkDeployment('broken').buildV1beta1(), malformedStatus());
  const m = mark();
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'refused');
  assert.match(outcome.message, /default\/broken/);
  assert.match(outcome.message, /status\.reconciliationStatus\.lastReconciledSpec/);
  assert.equal(outcome.kind === 'refused' ? outcome.field : '', 'status.reconciliationStatus.lastReconciledSpec');
  assert.deepEqual(writesSince(m), []);
  assert.deepEqual((await lc.getV1beta1('broken')).status, stored.status, 'status untouched');
  assert.equal(await lc.configMaps.get('default', 'broken-operator-state'), undefined);
});

test('a legacy spec that is valid JSON but not a valid spec is refused naming the field; nothing is written', async () => {
  const stored = await lc.createLegacy(flinkDeployment('bad-spec').buildV1beta1(), {
    lifecycleState: 'STABLE',
    jobStatus: { jobId: 'j1', state: 'RUNNING' },
    reconciliationStatus: { lastReconciledSpec: JSON.stringify({ job: { parallelism: 'two' } }), state: 'DEPLOYED' },
  });
  const m = mark();
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'refused', outcome.message);
  assert.match(outcome.message, /^default\/bad-spec: status\.reconciliationStatus\.lastReconciledSpec cannot be migrated: .*parallelism/);
  assert.deepEqual(writesSince(m), []);
});

test('dry run describes the change and writes nothing', async () => {
  const v = builtVariants()[0];
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'dry' } }, v.status);
  const m = mark();
  const outcome = await migrateLegacyDeployment(stored, { ...deps, dryRun: true });
  assert.equal(outcome.kind, 'would-migrate');
  const diff = outcome.kind === 'would-migrate' ? outcome.diff : '';
  assert.match(diff, /- status\.reconciliationStatus: /);
  assert.match(diff, /- status\.jobStatus\.savepointInfo: /);
  assert.match(diff, /\+ status\.stateRef: \{"configMapName":"dry-operator-state","revision":1\}/);
  assert.match(diff, /ConfigMap default\/dry-operator-state \(create/);
  assert.match(diff, /\+ data\.lastReconciledSpec: /);
  assert.deepEqual(writesSince(m), []);
  assert.ok(hasLegacyFields((await lc.getV1beta1('dry')).status));
});

test('interrupted after the ConfigMap was written (status not yet rewritten): the rerun finishes it', async () => {
  const v = builtVariants()[4]; // mid-upgrade: the one where losing a field would hurt most
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'interrupted' } }, v.status);
  lc.cluster.faults.failNext({ verb: 'update', resource: 'flinkdeployments', subresource: 'status' }, 'reset');
  const first = await migrateLegacyDeployment(stored, { ...deps, maxAttempts: 1 });
  assert.equal(first.kind, 'failed', 'the crash: the status write never landed');
  assert.ok(await lc.configMaps.get('default', 'interrupted-operator-state'), 'the ConfigMap was written');
  assert.ok(hasLegacyFields((await lc.getV1beta1('interrupted')).status), 'legacy status still there: nothing lost');

  const dry = await migrateLegacyDeployment(await lc.getV1beta1('interrupted'), { ...deps, dryRun: true });
  assert.equal(dry.kind, 'would-migrate');
  assert.match(dry.kind === 'would-migrate' ? dry.diff : '', /exists with the same content/);

  const m = mark();
  const second = await migrateLegacyDeployment(await lc.getV1beta1('interrupted'), deps);
  assert.equal(second.kind, 'resumed', second.message);
  assert.deepEqual(writesSince(m), ['update flinkdeployments/status interrupted'], 'only the status is written; the ConfigMap is not touched');
  const after = await lc.getV1beta1('interrupted');
  assert.equal(hasLegacyFields(after.status), false);
  assert.equal(after.status?.stateRef?.revision, 1);
});

test('interrupted before the ConfigMap landed: the rerun migrates from scratch', async () => {
  const v = builtVariants()[1];
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'early-crash' } }, v.status);
  lc.cluster.faults.failNext({ verb: 'create', resource: 'configmaps' }, 'reset');
  const first = await migrateLegacyDeployment(stored, { ...deps, maxAttempts: 1 });
  assert.equal(first.kind, 'failed');
  assert.equal(await lc.configMaps.get('default', 'early-crash-operator-state'), undefined);
  const second = await migrateLegacyDeployment(await lc.getV1beta1('early-crash'), deps);
  assert.equal(second.kind, 'migrated');
});

test('a transient failure of the status write is retried within the same run', async () => {
  const v = builtVariants()[2];
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'flaky' } }, v.status);
  lc.cluster.faults.failNext({ verb: 'update', resource: 'flinkdeployments', subresource: 'status' }, { code: 503 });
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'migrated', outcome.message);
  assert.equal(hasLegacyFields((await lc.getV1beta1('flaky')).status), false);
});

test('a spec edit between read and status write (409) re-reads and completes', async () => {
  const v = builtVariants()[3];
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'edited' } }, v.status);
  await lc.custom.patchNamespacedCustomObject(
    // through v1beta1: a write through v1 would drop the legacy status (design/002), as on a real server
    {
      group: 'flink.apache.org',
      version: 'v1beta1',
      namespace: 'default',
      plural: 'flinkdeployments',
      name: 'edited',
      body: [{ op: 'replace', path: '/spec/job/parallelism', value: 7 }],
    },
  );
  const m = mark();
  const outcome = await migrateLegacyDeployment(stored, deps); // `stored` has the old resourceVersion
  assert.equal(outcome.kind, 'migrated', outcome.message);
  const conflicts = lc.cluster.requestLog
    .entries()
    .slice(m)
    .filter((e) => e.subresource === 'status' && e.code === 409);
  assert.equal(conflicts.length, 1, 'the first status write was refused for its stale resourceVersion');
  const after = await lc.getV1beta1('edited');
  assert.equal(after.spec.job?.parallelism, 7, 'the user edit is kept');
  assert.equal(hasLegacyFields(after.status), false);
});

test('a ConfigMap that exists with different content is never overwritten; the resource is left untouched', async () => {
  const v = builtVariants()[0];
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'clash' } }, v.status);
  const plan = planMigration(stored, { writer: MIGRATE_COMMAND_WRITER });
  const other = encodeStateConfigMap({ ...plan.state, phase: 'ROLLING_BACK' }, { deployment: stored });
  const cm = await lc.configMaps.create('default', other.configMap);
  const m = mark();
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'refused');
  assert.match(
    outcome.message,
    /default\/clash: ConfigMap default\/clash-operator-state already exists with different content \(differs in: phase, annotation flink-operator.io\/legacy-status\); not overwriting/,
  );
  assert.deepEqual(writesSince(m), []);
  assert.equal((await lc.configMaps.get('default', 'clash-operator-state'))?.metadata?.resourceVersion, cm.metadata?.resourceVersion);
  assert.ok(hasLegacyFields((await lc.getV1beta1('clash')).status));
});

test('a ConfigMap of that name owned by something else is refused (foreign)', async () => {
  const v = builtVariants()[0];
  const stored = await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'foreign' } }, v.status);
  await lc.configMaps.create('default', { metadata: { name: 'foreign-operator-state' }, data: { hello: 'world' } });
  const outcome = await migrateLegacyDeployment(stored, deps);
  assert.equal(outcome.kind, 'refused');
  assert.match(outcome.message, /not owned by FlinkDeployment foreign/);
  assert.deepEqual((await lc.configMaps.get('default', 'foreign-operator-state'))?.data, { hello: 'world' });
});

test('migrateIfLegacy (the operator entry point) reads through v1beta1 and migrates; a v1 read alone would not see the legacy fields', async () => {
  const v = builtVariants()[0];
  await lc.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'by-operator' } }, v.status);
  const v1: FlinkDeploymentV1 = await lc.getV1('by-operator');
  assert.equal(hasLegacyFields(v1.status), false, 'v1 prunes the legacy fields');
  const outcome = await migrateIfLegacy('default', 'by-operator', { ...deps, writer: { holderIdentity: 'op-1', leaseTransitions: 4 } });
  assert.equal(outcome.kind, 'migrated');
  const cm = await lc.configMaps.get('default', 'by-operator-operator-state');
  assert.equal(cm?.metadata?.annotations?.['flink-operator.io/leader'], 'op-1/4');
  assert.equal((await migrateIfLegacy('default', 'by-operator', deps)).kind, 'already-migrated');
  assert.equal((await migrateIfLegacy('default', 'nope', deps)).kind, 'failed');
});
