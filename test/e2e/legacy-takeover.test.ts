/**
 * The operator meeting a FlinkDeployment left by the Apache operator (legacy v1beta1 status, no
 * state ConfigMap) migrates it with the same code as `flink-operator migrate`, and says so in an event.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import type { FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import { loadSharedFixtures } from '../api/shared-fixtures.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness({ operator: false });
});
after(async () => {
  await h?.stop();
});

test('a legacy status with no state ConfigMap is migrated by the operator before it writes anything', async () => {
  const fixture = loadSharedFixtures().find((f) => f.file === 'status-flinkdep-stable-green-after-savepoint-upgrade.yaml');
  assert.ok(fixture?.spec && fixture.status, 'fixture with spec and legacy status');
  const params = { group: 'flink.apache.org', version: 'v1beta1', namespace: 'default', plural: 'flinkdeployments' };
  const created = (await h.custom.createNamespacedCustomObject({
    ...params,
    body: { apiVersion: 'flink.apache.org/v1beta1', kind: 'FlinkDeployment', metadata: { name: 'green' }, spec: fixture.spec },
  })) as FlinkDeploymentV1beta1;
  await h.custom.replaceNamespacedCustomObjectStatus({ ...params, name: 'green', body: { ...created, status: fixture.status } });

  await h.startOperator();
  const cm = await h.waitUntil(() => h.stateConfigMap('green'), 'the state ConfigMap');
  const legacyReconciled = JSON.parse(fixture.status.reconciliationStatus!.lastReconciledSpec!) as {
    spec: { image: string; job: { initialSavepointPath: string } };
  };
  const reconciled = parseYaml(cm.data!.lastReconciledSpec) as { image: string; job: { initialSavepointPath: string } };
  assert.equal(reconciled.image, legacyReconciled.spec.image);
  assert.equal(reconciled.job.initialSavepointPath, legacyReconciled.spec.job.initialSavepointPath);
  assert.ok(['DEPLOYED', 'RUNNING'].includes(cm.data!.phase), `phase ${cm.data!.phase}`);

  // The migration writes the ConfigMap first, then the status (design/008): wait for the second write.
  const v1beta1 = await h.waitUntil(async () => {
    const d = (await h.custom.getNamespacedCustomObject({ ...params, name: 'green' })) as FlinkDeploymentV1beta1;
    return d.status?.stateRef ? d : undefined;
  }, 'the migrated status');
  assert.equal(v1beta1.status?.reconciliationStatus, undefined, 'legacy fields removed from status');
  assert.equal(v1beta1.status?.stateRef?.configMapName, 'green-operator-state');
  assert.equal(v1beta1.status?.jobStatus?.jobId, fixture.status.jobStatus?.jobId, 'user-facing fields kept');
  await h.waitUntil(async () => ((await h.events('green')).some((e) => e.reason === 'Migrated') ? true : undefined), 'a Migrated event');
});
