/**
 * The migration core against scripted fakes (test/state/in-memory-*-client.ts) for the failures a
 * real server cannot be made to produce on demand: writes that land but whose answer is lost. The
 * fakes log every call, so the tests assert exactly which requests were made.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasLegacyFields } from '../../src/api/legacy-status-codec.js';
import type { FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import { MIGRATE_COMMAND_WRITER, migrateLegacyDeployment, type MigrationDependencies } from '../../src/state/legacy-migration.js';
import { readLegacyStatusArchive } from '../../src/state/legacy-status-archive.js';
import { InMemoryConfigMapClient } from '../state/in-memory-configmap-client.js';
import { InMemoryFlinkDeploymentClient } from '../state/in-memory-flink-deployment-client.js';
import { builtVariants } from './legacy-variants.js';
import { KubeApiError } from '../../src/kube/api-errors.js';

function setup(): {
  configMaps: InMemoryConfigMapClient;
  deployments: InMemoryFlinkDeploymentClient;
  deps: MigrationDependencies;
  object: () => Promise<FlinkDeploymentV1beta1>;
} {
  const configMaps = new InMemoryConfigMapClient();
  const deployments = new InMemoryFlinkDeploymentClient();
  const v = builtVariants().find((x) => x.object.metadata.name === 'mid-upgrade')!;
  deployments.seed({ ...v.object, status: v.status as never }, { keepStatus: true });
  return {
    configMaps,
    deployments,
    deps: { configMaps, deployments, dryRun: false, writer: MIGRATE_COMMAND_WRITER, retryDelayMs: 0 },
    object: async () => (await deployments.getV1beta1('default', 'mid-upgrade'))!,
  };
}

test('the ConfigMap POST lands but its answer is lost: the retry finds it with the same content and only writes the status', async () => {
  const { configMaps, deployments, deps, object } = setup();
  configMaps.failNext('create', 0, { applyFirst: true });
  const outcome = await migrateLegacyDeployment(await object(), deps);
  assert.equal(outcome.kind, 'resumed', outcome.message);
  assert.deepEqual(
    configMaps.calls.map((c) => c.verb),
    ['get', 'create', 'get'],
    'one POST, never a PUT of the ConfigMap',
  );
  assert.equal(deployments.count('replaceStatusV1beta1'), 1);
  assert.equal(hasLegacyFields((await object()).status), false);
  assert.ok(readLegacyStatusArchive(configMaps.peek('default', 'mid-upgrade-operator-state')));
});

test('the status PUT lands but its answer is lost: the retry sees the migrated status and reports the migration', async () => {
  const { configMaps, deployments, deps, object } = setup();
  let lose = true;
  const lossy = Object.assign(Object.create(deployments) as InMemoryFlinkDeploymentClient, {
    async replaceStatusV1beta1(d: FlinkDeploymentV1beta1) {
      const written = await deployments.replaceStatusV1beta1(d);
      if (lose) {
        lose = false;
        throw new KubeApiError(0, 'ECONNRESET', 'socket hang up');
      }
      return written;
    },
  });
  const first = await migrateLegacyDeployment(await object(), { ...deps, deployments: lossy });
  assert.equal(first.kind, 'migrated', first.message);
  assert.equal(deployments.count('replaceStatusV1beta1'), 1, 'the status was written once');
  assert.equal(configMaps.count('create'), 1);
  const again = await migrateLegacyDeployment(await object(), deps);
  assert.equal(again.kind, 'already-migrated');
  assert.equal(deployments.count('replaceStatusV1beta1'), 1, 'no further write');
});

test('a transient failure of the status PUT (before storage) is retried within the call', async () => {
  const { configMaps, deployments, deps, object } = setup();
  deployments.failNext('replaceStatusV1beta1', 503);
  const first = await migrateLegacyDeployment(await object(), deps);
  assert.equal(first.kind, 'migrated', first.message);
  assert.equal(deployments.count('replaceStatusV1beta1'), 2);
  assert.equal(configMaps.count('create'), 1);
  const again = await migrateLegacyDeployment(await object(), deps);
  assert.equal(again.kind, 'already-migrated');
  assert.equal(deployments.count('replaceStatusV1beta1'), 2, 'no further write');
});

test('conflicts on every attempt: gives up as failed after maxAttempts, the legacy status untouched', async () => {
  const { deployments, deps, object } = setup();
  for (let i = 0; i < 3; i++) deployments.failNext('replaceStatusV1beta1', 409);
  const outcome = await migrateLegacyDeployment(await object(), { ...deps, maxAttempts: 3 });
  assert.equal(outcome.kind, 'failed');
  assert.match(outcome.message, /gave up after 3 attempts.*rerun migrate/);
  assert.ok(hasLegacyFields((await object()).status));
});

test('dry run makes only reads', async () => {
  const { configMaps, deployments, deps, object } = setup();
  const outcome = await migrateLegacyDeployment(await object(), { ...deps, dryRun: true });
  assert.equal(outcome.kind, 'would-migrate');
  assert.deepEqual(
    configMaps.calls.map((c) => c.verb),
    ['get'],
  );
  assert.deepEqual(
    deployments.calls.map((c) => c.verb),
    ['getV1beta1'],
  );
});
