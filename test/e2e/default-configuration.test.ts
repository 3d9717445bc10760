/**
 * Operator-wide defaults end to end, as a team migrating from the Apache operator has them: the
 * directories, HA and periodic savepoints live in the operator's config.yaml (the Helm chart's
 * `defaultConfiguration`), and the FlinkDeployment is Apache's examples/basic.yaml unchanged.
 * Judged by the simulated Flink's lineage (where savepoints went, how often the job was submitted).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { flinkConfigMapName } from '../../src/flink/flink-resource-naming.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

const BASIC = fileURLToPath(new URL('../api/fixtures/example-basic.yaml', import.meta.url));

const OPERATOR_CONFIG = (savepoints: string) => `
# as the Apache Helm chart's defaultConfiguration writes it: nested YAML, Flink's duration syntax
state:
  savepoints.dir: ${savepoints}
  checkpoints.dir: file:///flink-data/checkpoints
high-availability:
  type: kubernetes
  storageDir: file:///flink-data/ha
kubernetes.operator.periodic.savepoint.interval: 1 s
kubernetes.operator.default-configuration.namespace.other.state.savepoints.dir: file:///flink-data/other-team
`;

let h: OperatorHarness;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'operator-conf-'));
  writeFileSync(join(dir, 'config.yaml'), OPERATOR_CONFIG('file:///flink-data/savepoints'));
  h = await startHarness({ operator: { flinkConfDir: dir, dynamicConfigCheckIntervalMs: 100 } });
});
after(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const lineage = (name: string) => h.world.simulation.lineage('default', name);
const stable = (d: FlinkDeploymentV1) => d.status?.lifecycleState === 'STABLE' && d.status?.jobStatus?.state === 'RUNNING';

test("Apache's basic example, with its directories and HA given only operator-wide, reaches STABLE and takes periodic savepoints there", async () => {
  const basic = parseYaml(readFileSync(BASIC, 'utf8')) as FlinkDeploymentV1;
  basic.apiVersion = 'flink.apache.org/v1';
  await h.create(basic);
  const name = basic.metadata.name!;
  await h.waitFor(name, stable, 'basic-example STABLE');

  const rendered = await h.core.readNamespacedConfigMap({ namespace: 'default', name: flinkConfigMapName(name) });
  const config = parseYaml(rendered.data?.['config.yaml'] ?? '') as Record<string, unknown>;
  assert.equal(config['state.savepoints.dir'], 'file:///flink-data/savepoints', "the operator's default is in the Flink configuration it renders");
  assert.equal(config['high-availability.type'], 'kubernetes');
  assert.equal(config['taskmanager.numberOfTaskSlots'], '2', "the resource's own key is kept");

  await h.waitUntil(() => lineage(name).savepoints.filter((s) => s.status === 'COMPLETED').length >= 2 || undefined, 'two periodic savepoints', 20_000);
  const completed = lineage(name).savepoints.filter((s) => s.status === 'COMPLETED');
  // Flink normalizes file:/// to file:/ in the paths it reports.
  assert.ok(
    completed.every((s) => s.location?.startsWith('file:/flink-data/savepoints/')),
    JSON.stringify(completed.map((s) => s.location)),
  );
  assert.equal((await h.get(name))?.status?.error, undefined);

  // The directories and HA a savepoint or last-state upgrade needs come from the defaults too.
  await h.patch(name, { spec: { job: { upgradeMode: 'last-state' } } });
  const acknowledged = await h.waitFor(name, (d) => stable(d) && d.status?.observedGeneration === 2, 'last-state acknowledged');
  assert.equal(acknowledged.status?.error, undefined, 'no validation error: HA and the checkpoint directory are set operator-wide');
});

test('a change of the default configuration is picked up live: the next savepoint goes to the new directory, the job is not redeployed', async () => {
  const name = 'basic-example';
  const submissions = lineage(name).submissions.length;
  writeFileSync(join(dir, 'config.yaml'), OPERATOR_CONFIG('file:///flink-data/savepoints-v2'));
  await h.waitUntil(
    () => lineage(name).savepoints.some((s) => s.status === 'COMPLETED' && s.location?.startsWith('file:/flink-data/savepoints-v2/')) || undefined,
    'a periodic savepoint in the new directory',
    20_000,
  );
  assert.equal(lineage(name).submissions.length, submissions, 'a change of the defaults alone redeploys nothing');
  const state = await h.stateConfigMap(name);
  assert.ok(!(state?.data?.lastReconciledSpec ?? '').includes('savepoints-v2'), "the recorded spec stays the user's: defaults are not copied into it");
});
