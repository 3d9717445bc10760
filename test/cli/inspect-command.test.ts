/**
 * `flink-operator inspect` on the development cluster: user status, internal state, status lag,
 * pending spec change, an unmigrated resource, a missing one, and `-o json` from the real process.
 */
import { reconciliationStateOfPhase } from '../../src/api/deployment-phase.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeploymentNotFoundError, formatInspection, inspectDeployment, type Inspection } from '../../src/cli/inspect-command.js';
import { MIGRATE_COMMAND_WRITER, migrateLegacyDeployment } from '../../src/state/legacy-migration.js';
import { startLegacyCluster, type LegacyCluster } from '../migration/legacy-cluster.js';
import { builtVariants, captureVariants } from '../migration/legacy-variants.js';
import { runCli } from './run-cli.js';

let lc: LegacyCluster;
let kubeconfigFile: string;
const clients = () => ({ configMaps: lc.configMaps, deployments: lc.deployments });

before(async () => {
  lc = await startLegacyCluster();
  kubeconfigFile = join(mkdtempSync(join(tmpdir(), 'inspect-cli-')), 'kubeconfig');
  writeFileSync(kubeconfigFile, lc.cluster.kubeconfigYaml());
  const variants = builtVariants();
  const midUpgrade = variants.find((v) => v.object.metadata.name === 'mid-upgrade')!;
  const stored = await lc.createLegacy({ ...midUpgrade.object, metadata: { ...midUpgrade.object.metadata, name: 'orders' } }, midUpgrade.status);
  const outcome = await migrateLegacyDeployment(stored, {
    configMaps: lc.configMaps,
    deployments: lc.deployments,
    dryRun: false,
    writer: MIGRATE_COMMAND_WRITER,
  });
  assert.equal(outcome.kind, 'migrated');
  const current = variants[0];
  await lc.createLegacy({ ...current.object, metadata: { ...current.object.metadata, name: 'legacy' } }, current.status);
});
after(async () => {
  await lc?.stop();
});

test('a migrated deployment caught mid-upgrade: state, pending operation, no lag, the pending spec change', async () => {
  const i = await inspectDeployment(clients(), 'default', 'orders');
  assert.equal(i.legacyStatus, false);
  assert.equal(i.stateError, null);
  assert.equal(i.stateRevision, 1);
  assert.equal(i.statusRevision, 1);
  assert.equal(i.statusLagsState, false);
  assert.equal(reconciliationStateOfPhase(i.state!.phase), 'UPGRADING');
  assert.equal(i.state?.pendingSavepoint?.triggerId, 'trigger-42');
  assert.equal(i.legacyStatusArchived, true);
  // lastReconciledSpec has parallelism 4 (the upgrade being applied); the spec says 2
  assert.deepEqual(
    i.pendingSpecChange?.filter((op) => op.path.startsWith('/job')),
    [{ op: 'replace', path: '/job/parallelism', value: 2 }],
  );

  const text = formatInspection(i);
  assert.match(text, /^FlinkDeployment default\/orders \(generation 1\)$/m);
  assert.match(text, /lifecycleState: +UPGRADING/);
  assert.match(text, /job: +RUNNING {2}id a1b2c3d4e5f60718293a4b5c6d7e8f90/);
  assert.match(text, /lastSavepoint: +s3:\/\/b\/savepoints\/savepoint-1 at /);
  assert.match(text, /stateRef: +orders-operator-state revision 1/);
  assert.match(text, /revision: +1 {2}written by flink-operator\/[^,]+, leader flink-operator-migrate\/0/);
  assert.match(
    text,
    /pending operation: +restore from s3:\/\/b\/savepoints\/savepoint-0; savepoint UPGRADE \(stop job\) of job a1b2c3d4e5f60718293a4b5c6d7e8f90, requested .*Flink trigger trigger-42; checkpoint MANUAL/,
  );
  assert.match(text, /Status lags state: +no \(both at revision 1\)/);
  assert.match(text, /Pending spec change \(lastReconciledSpec → spec\):\n(.*\n)* {2}~ spec\.job\.parallelism: 4 → 2$/m);
});

test('status lag: the ConfigMap moved on and the status has not caught up yet', async () => {
  const cm = (await lc.configMaps.get('default', 'orders-operator-state'))!;
  await lc.configMaps.replace('default', 'orders-operator-state', { ...cm, data: { ...cm.data, revision: '2' } });
  const i = await inspectDeployment(clients(), 'default', 'orders');
  assert.equal(i.statusLagsState, true);
  assert.match(formatInspection(i), /Status lags state: +yes: the status reflects revision 1, the state is at revision 2/);
});

test('an unmigrated deployment says so and has no state', async () => {
  const i = await inspectDeployment(clients(), 'default', 'legacy');
  assert.equal(i.legacyStatus, true);
  assert.equal(i.state, null);
  assert.equal(i.statusLagsState, null);
  assert.equal(i.pendingSpecChange, null);
  const text = formatInspection(i);
  assert.match(text, /the status still carries Apache operator \(v1beta1\) internal fields: run `flink-operator migrate`/);
  assert.match(text, /ConfigMap default\/legacy-operator-state does not exist \(the status still has legacy fields/);
  assert.match(text, /unknown: no lastReconciledSpec/);
});

test('a missing deployment is an error naming it', async () => {
  await assert.rejects(
    inspectDeployment(clients(), 'default', 'nope'),
    (e: unknown) => e instanceof DeploymentNotFoundError && /default\/nope not found/.test(e.message),
  );
});

test('the command line: -o json is the inspection document; a missing deployment exits 1', async () => {
  const json = await runCli(['inspect', 'orders', '--kubeconfig', kubeconfigFile, '-n', 'default', '-o', 'json']);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout) as Inspection;
  assert.equal(doc.resource, 'default/orders');
  assert.equal(doc.state?.pendingSavepoint?.triggerId, 'trigger-42');
  assert.equal(doc.statusLagsState, true);
  const missing = await runCli(['inspect', 'nope', '--kubeconfig', kubeconfigFile]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /FlinkDeployment default\/nope not found/);
});

test('a STABLE job migrated with the upgradeSavepointPath the Apache status keeps shows no pending restore', async () => {
  const green = captureVariants().find((v) => v.label.includes('green-after-savepoint-upgrade'))!;
  const stored = await lc.createLegacy({ ...green.object, metadata: { ...green.object.metadata, name: 'green' } }, green.status);
  const outcome = await migrateLegacyDeployment(stored, {
    configMaps: lc.configMaps,
    deployments: lc.deployments,
    dryRun: false,
    writer: MIGRATE_COMMAND_WRITER,
  });
  assert.equal(outcome.kind, 'migrated');
  const i = await inspectDeployment(clients(), 'default', 'green');
  assert.equal(i.status?.lifecycleState, 'STABLE');
  assert.equal(i.state?.upgradeSavepointPath, 's3://flink/savepoints/savepoint-66f218-64c1320e7a1f');
  const text = formatInspection(i);
  assert.doesNotMatch(text, /restore from/);
  assert.match(text, /pending operation: +none$/m);
  assert.match(
    text,
    /upgradeSavepointPath: +s3:\/\/flink\/savepoints\/savepoint-66f218-64c1320e7a1f \(what the running deployment was restored from or last upgraded with; not pending\)/,
  );
});
