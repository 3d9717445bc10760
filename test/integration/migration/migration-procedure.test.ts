/**
 * The README migration procedure, end to end, on the development cluster with simulated Flink and
 * the real kubectl:
 *
 *   0. the Apache operator's world: its CRD (v1beta1 only) and FlinkDeployments whose status holds
 *      its internal state (every variant, including the real captures; built ones in `default`,
 *      captures in `captures`);
 *   1. stop the old operator;
 *   2. kubectl apply --server-side --force-conflicts -f crds/upgrade/ (the new CRD, v1 not served yet)
 *   3. flink-operator migrate -n default  (the real command line, in its own process)
 *   4. kubectl apply --server-side --force-conflicts -f crds/ (v1 served) — `captures` is still unmigrated: the new CRD
 *                                         applied before migrate runs for those
 *   5. flink-operator migrate -A; a rerun changes nothing
 *   6. start the new operator.
 *
 * After every step, nothing is lost: each resource's legacy state is still readable through
 * v1beta1 (steps 2 and 4), or is in its ConfigMap together with the verbatim original status, and
 * the operator takes the ConfigMap over as it is (step 6). Also: migrate refuses to run while the
 * Apache operator's CRD is installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import type { FlinkDeploymentV1beta1 } from '../../../src/api/flink-deployment.js';
import { decodeLegacyStatus, hasLegacyFields } from '../../../src/api/legacy-status-codec.js';
import { startSimulatedCluster, type SimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';
import { KubeConfigMapClient } from '../../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient } from '../../../src/kube/flink-deployment-client.js';
import { inspectDeployment } from '../../../src/cli/inspect-command.js';
import { makeFlinkDeploymentReconciler } from '../../../src/reconciler/reconciler-wiring.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { Manager } from '../../../src/runtime/manager.js';
import { MIGRATE_COMMAND_WRITER, planMigration } from '../../../src/state/legacy-migration.js';
import { readLegacyStatusArchive } from '../../../src/state/legacy-status-archive.js';
import { decodeStateConfigMap } from '../../../src/state/state-configmap-codec.js';
import { runCli } from '../../cli/run-cli.js';
import { testOperatorConfig } from '../../e2e/operator-harness.js';
import { KubectlRunner } from '../../integration/devcluster/kubectl-runner.js';
import { CRD_FILE, readCrd } from '../../migration/legacy-cluster.js';

const UPGRADE_CRD_DIR = fileURLToPath(new URL('../../../crds/upgrade/', import.meta.url));
import { builtVariants, captureVariants, type LegacyVariant } from '../../migration/legacy-variants.js';

const GROUP = 'flink.apache.org';
const PLURAL = 'flinkdeployments';

/**
 * The Apache operator's CRD, as far as this procedure is concerned: only v1beta1 (served, storage),
 * its status schema with the legacy fields and without `stateRef` (derived from our v1beta1 schema).
 */
function apacheCrd(): V1CustomResourceDefinition {
  const crd = readCrd();
  const v1beta1 = structuredClone(crd.spec.versions.find((v) => v.name === 'v1beta1')!);
  const status = v1beta1.schema!.openAPIV3Schema!.properties!['status'];
  delete status.properties!['stateRef'];
  return { ...crd, spec: { ...crd.spec, versions: [{ ...v1beta1, served: true, storage: true, deprecated: false }] } };
}

let world: SimulatedCluster;
let kc: KubeConfig;
let kubectl: KubectlRunner;
let kubeconfigFile: string;
let manager: Manager | undefined;
const inNamespace =
  (namespace: string) =>
  (v: LegacyVariant): LegacyVariant => ({ ...v, object: { ...v.object, metadata: { ...v.object.metadata, namespace } } });
const variants: LegacyVariant[] = [...builtVariants().map(inNamespace('default')), ...captureVariants().map(inNamespace('captures'))];
/** The statuses as the old operator left them (v1beta1 GET), by `namespace/name`. */
const original = new Map<string, FlinkDeploymentV1beta1>();
const keyOf = (o: FlinkDeploymentV1beta1) => `${o.metadata.namespace}/${o.metadata.name}`;

/** Every not-yet-migrated resource still has exactly its original status and spec (through v1beta1). */
async function assertNothingLost(step: string, unmigrated: (o: FlinkDeploymentV1beta1) => boolean): Promise<number> {
  let checked = 0;
  for (const before of original.values()) {
    if (!unmigrated(before)) continue;
    const now = JSON.parse(
      await kubectl.ok(['get', `${PLURAL}.v1beta1.${GROUP}`, before.metadata.name!, '-n', before.metadata.namespace!, '-o', 'json']),
    ) as FlinkDeploymentV1beta1;
    assert.deepEqual(now.status, before.status, `${step}: ${keyOf(before)} status unchanged through v1beta1`);
    assert.deepEqual(now.spec, before.spec, `${step}: ${keyOf(before)} spec unchanged`);
    checked++;
  }
  return checked;
}

before(async () => {
  world = await startSimulatedCluster({ simulation: { podReadyDelayMs: 30, jobStartDelayMs: 30, savepointDurationMs: 60 } });
  kc = world.cluster.kubeConfig();
  kubectl = new KubectlRunner(world.cluster.kubeconfigYaml());
  kubeconfigFile = join(mkdtempSync(join(tmpdir(), 'migration-procedure-')), 'kubeconfig');
  writeFileSync(kubeconfigFile, world.cluster.kubeconfigYaml());
});
after(async () => {
  await manager?.stop();
  kubectl?.cleanup();
  await world?.stop();
});

test('step 0: the Apache operator world (its CRD, legacy statuses in every variant)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'apache-crd-'));
  writeFileSync(join(dir, 'crd.yaml'), toYaml(apacheCrd()));
  await kubectl.ok(['apply', '-f', join(dir, 'crd.yaml')]);
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'captures' } } });
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const v of variants) {
    const { status: _s, ...object } = v.object;
    const namespace = v.object.metadata.namespace!;
    await kubectl.ok(['apply', '-f', '-'], JSON.stringify(object));
    const created = (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: 'v1beta1',
      namespace,
      plural: PLURAL,
      name: v.object.metadata.name!,
    })) as FlinkDeploymentV1beta1;
    // the old operator writes its status (PUT .../status, as JOSDK's updateStatus does)
    await custom.replaceNamespacedCustomObjectStatus({
      group: GROUP,
      version: 'v1beta1',
      namespace,
      plural: PLURAL,
      name: created.metadata.name!,
      body: { ...created, status: v.status },
    });
    const stored = JSON.parse(
      await kubectl.ok(['get', `${PLURAL}.v1beta1.${GROUP}`, v.object.metadata.name!, '-n', namespace, '-o', 'json']),
    ) as FlinkDeploymentV1beta1;
    assert.ok(hasLegacyFields(stored.status), `${v.label}: legacy fields stored`);
    original.set(keyOf(stored), stored);
  }
  assert.equal(original.size, variants.length);
});

test("migrate while the Apache operator's CRD is installed refuses and writes nothing", async () => {
  const writes = () =>
    world.cluster.requestLog.count({ verb: 'create', resource: 'configmaps' }) +
    world.cluster.requestLog.count({ verb: 'update', resource: 'flinkdeployments' });
  const before = writes();
  const run = await runCli(['migrate', '--kubeconfig', kubeconfigFile, '-A']);
  assert.equal(run.code, 1);
  assert.match(
    run.stdout,
    /does not declare status\.stateRef: it is still the Apache operator's: apply this operator's CRD first \(kubectl apply --server-side --force-conflicts -f crds\/upgrade\//,
  );
  assert.equal(writes(), before);
});

test('steps 1-2: stop the old operator, apply crds/upgrade/: every legacy field is still there, v1 is not served', async () => {
  // README step 2: the client-side annotation of the Apache CRD would have to hold the new, larger CRD
  await kubectl.ok(['annotate', 'crd', 'flinkdeployments.flink.apache.org', 'kubectl.kubernetes.io/last-applied-configuration-']);
  await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', UPGRADE_CRD_DIR]);
  assert.equal(await assertNothingLost('after crds/upgrade/', () => true), variants.length);
  const v1 = await kubectl.run(['get', `${PLURAL}.v1.${GROUP}`, '-n', 'default']);
  assert.notEqual(v1.code, 0, 'v1 is not served yet');
});

test('step 3: migrate -n default (v1 not served yet)', async () => {
  const run = await runCli(['migrate', '--kubeconfig', kubeconfigFile, '-n', 'default']);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const migrated = run.stdout.split('\n').filter((l) => l.startsWith('migrated '));
  assert.equal(migrated.length, builtVariants().length, run.stdout);
  // inspect works in this window too (v1 not served: it reads v1beta1)
  const i = await inspectDeployment({ configMaps: new KubeConfigMapClient(kc), deployments: new KubeFlinkDeploymentClient(kc) }, 'default', 'mid-upgrade');
  assert.equal(i.state?.pendingSavepoint?.triggerId, 'trigger-42');
  assert.equal(i.legacyStatus, false);
  assert.equal(i.statusLagsState, false);
});

test('step 4: apply crds/ (v1 served) before the rest is migrated: the unmigrated resources lose nothing', async () => {
  await kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', CRD_FILE]);
  assert.equal(await assertNothingLost('after crds/', (o) => o.metadata.namespace === 'captures'), captureVariants().length);
  // kubectl's preferred version is now v1 (with fresh discovery: kubectl caches the old one for up
  // to 10 minutes): users see the user-facing fields only
  kubectl.cleanup();
  kubectl = new KubectlRunner(world.cluster.kubeconfigYaml());
  const v1 = JSON.parse(await kubectl.ok(['get', PLURAL, 'capture-1', '-n', 'captures', '-o', 'json'])) as {
    apiVersion: string;
    status: Record<string, unknown>;
  };
  assert.equal(v1.apiVersion, `${GROUP}/v1`);
  assert.equal(v1.status['reconciliationStatus'], undefined);
});

test('step 5: migrate -A finishes; every resource has its state in its ConfigMap and nothing is lost; a rerun changes nothing', async () => {
  const run = await runCli(['migrate', '--kubeconfig', kubeconfigFile, '-A']);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const lines = run.stdout.trim().split('\n');
  assert.equal(lines.filter((l) => l.startsWith('migrated ')).length, captureVariants().length, run.stdout);
  assert.equal(lines.filter((l) => l.startsWith('unchanged ')).length, builtVariants().length, run.stdout);

  const configMaps = new KubeConfigMapClient(kc);
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const before of original.values()) {
    const name = before.metadata.name!;
    const namespace = before.metadata.namespace!;
    const cm = await configMaps.get(namespace, `${name}-operator-state`);
    assert.ok(cm, `${name}: ConfigMap`);
    // the verbatim original: every byte of the legacy status survives
    const archive = readLegacyStatusArchive(cm);
    assert.deepEqual(JSON.parse(archive ?? 'null'), before.status, `${name}: archive is the original status`);
    const expected = decodeLegacyStatus(before.status!, `${namespace}/${name}`, `${name}-operator-state`);
    const { lastWriter: _w, ...state } = decodeStateConfigMap(cm);
    const expectedState = JSON.parse(JSON.stringify(expected.state)) as Record<string, unknown>;
    for (const field of planMigration(before, { writer: MIGRATE_COMMAND_WRITER }).archiveOnly) delete expectedState[field];
    assert.deepEqual(state, expectedState, `${name}: ConfigMap state = the legacy state`);
    assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, before.metadata.uid);

    const after = (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace, plural: PLURAL, name })) as {
      status: Record<string, unknown>;
    };
    const { stateRef, ...userStatus } = after.status as { stateRef: unknown };
    assert.deepEqual(stateRef, { configMapName: `${name}-operator-state`, revision: 1 });
    const { stateRef: _r, ...expectedUser } = expected.userStatus;
    assert.deepEqual(userStatus, JSON.parse(JSON.stringify(expectedUser)), `${name}: user-facing status kept exactly`);
    const beta = (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1beta1', namespace, plural: PLURAL, name })) as FlinkDeploymentV1beta1;
    assert.equal(hasLegacyFields(beta.status), false, `${name}: no legacy field left`);
  }

  const writes = world.cluster.requestLog.count({ verb: 'create' }) + world.cluster.requestLog.count({ verb: 'update' });
  const rerun = await runCli(['migrate', '--kubeconfig', kubeconfigFile, '-A']);
  assert.equal(rerun.code, 0);
  assert.match(rerun.stdout, /nothing to migrate: all \d+ FlinkDeployment\(s\) in all namespaces are already migrated; nothing was changed/);
  assert.equal(world.cluster.requestLog.count({ verb: 'create' }) + world.cluster.requestLog.count({ verb: 'update' }), writes);
});

test('step 6: the new operator takes the migrated ConfigMap over as it is', async () => {
  const configMaps = new KubeConfigMapClient(kc);
  const before = (await configMaps.get('default', 'current-operator-state'))!;
  const config = testOperatorConfig();
  manager = new Manager({
    config,
    kubeConfig: kc,
    makeReconciler: makeFlinkDeploymentReconciler,
    logger: createLogger({ format: 'json', level: config.logLevel as never }),
  });
  await manager.start();

  // the operator writes the same ConfigMap (same uid: not recreated), continuing its revisions
  const deadline = Date.now() + 15_000;
  let cm = before;
  while (Date.now() < deadline) {
    cm = (await configMaps.get('default', 'current-operator-state'))!;
    if (Number(cm.data?.revision) > 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(Number(cm.data?.revision) > 1, `the operator wrote the migrated state (revision ${cm.data?.revision})`);
  assert.equal(cm.metadata?.uid, before.metadata?.uid, 'the same ConfigMap, not a new one');
  assert.equal(readLegacyStatusArchive(cm), readLegacyStatusArchive(before), "the archived legacy status survives the operator's writes");
  const state = decodeStateConfigMap(cm);
  const migrated = decodeStateConfigMap(before);
  assert.deepEqual(
    state.savepointHistory.slice(0, migrated.savepointHistory.length),
    migrated.savepointHistory,
    'the savepoint history continues from the migrated one',
  );
  const beta = JSON.parse(await kubectl.ok(['get', `${PLURAL}.v1beta1.${GROUP}`, 'current', '-o', 'json'])) as FlinkDeploymentV1beta1;
  assert.equal(hasLegacyFields(beta.status), false, 'the operator never writes legacy fields back');
  assert.equal(beta.status?.stateRef?.configMapName, 'current-operator-state');
});
