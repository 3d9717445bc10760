import { reconciliationStateOfPhase } from '../../src/api/deployment-phase.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import type { InternalState } from '../../src/api/internal-state.js';
import { LegacyStatusStateStore } from '../../src/state/legacy-status-state-store.js';
import { CorruptStateError, NotLeaderError } from '../../src/state/state-errors.js';
import { InMemoryFlinkDeploymentClient } from './in-memory-flink-deployment-client.js';

/** The real capture: an Apache-operator FlinkDeployment (v1beta1) after a savepoint upgrade. */
function capturedLegacyDeployment(): FlinkDeploymentV1beta1 {
  const list = YAML.parse(readFileSync(new URL('../api/fixtures/status-flinkdep-stable-green-after-savepoint-upgrade.yaml', import.meta.url), 'utf8')) as {
    items: FlinkDeploymentV1beta1[];
  };
  return list.items[0];
}

function setup(token: boolean = true) {
  const client = new InMemoryFlinkDeploymentClient();
  const v1 = client.seed(capturedLegacyDeployment(), { keepStatus: true });
  const store = new LegacyStatusStateStore({ client, fencingToken: () => (token ? { holderIdentity: 'a', leaseTransitions: 0 } : undefined), retryDelayMs: 0 });
  return { client, v1, store };
}

test('loads the internal state from a real Apache-operator status', async () => {
  const { store, v1 } = setup();
  const loaded = await store.load(v1);
  assert.equal(loaded.kind, 'found');
  if (loaded.kind !== 'found') return;
  assert.equal(reconciliationStateOfPhase(loaded.state.phase), 'DEPLOYED');
  assert.equal(loaded.state.lastReconciledSpec?.image, 'flinklab/p03-vehicle-alert:dev-green');
  assert.equal(loaded.state.upgradeSavepointPath, capturedLegacyDeployment().status?.jobStatus?.upgradeSavepointPath);
});

test('update writes the legacy fields back through /status (v1beta1), keeping the user-facing fields', async () => {
  const { store, v1, client } = setup();
  const before = await client.getV1beta1(v1.metadata.namespace!, v1.metadata.name!);
  const written = await store.update(v1, (s: InternalState) => ({ ...s, upgradeSavepointPath: 's3://flink/savepoints/new-one' }));
  assert.equal(written.upgradeSavepointPath, 's3://flink/savepoints/new-one');
  const after = await client.getV1beta1(v1.metadata.namespace!, v1.metadata.name!);
  assert.equal(after?.status?.jobStatus?.upgradeSavepointPath, 's3://flink/savepoints/new-one');
  assert.equal(after?.status?.lifecycleState, before?.status?.lifecycleState);
  assert.equal(after?.status?.jobStatus?.state, before?.status?.jobStatus?.state);
  assert.equal(client.count('replaceStatusV1beta1'), 1);
  const reloaded = await store.load(v1);
  assert.ok(reloaded.kind === 'found' && reloaded.state.upgradeSavepointPath === 's3://flink/savepoints/new-one');
});

test('no write when fn changes nothing (or only what the legacy layout cannot hold)', async () => {
  const { store, v1, client } = setup();
  await store.update(v1, (s) => s);
  await store.update(v1, (s) => ({ ...s, jobIdToSubmit: 'cannot-be-expressed' }));
  assert.equal(client.count('replaceStatusV1beta1'), 0);
});

test('409 → re-read and re-apply; no leader → refused', async () => {
  const { store, v1, client } = setup();
  client.failNext('replaceStatusV1beta1', 409);
  await store.update(v1, (s) => ({ ...s, upgradeSavepointPath: 's3://x' }));
  assert.equal(client.count('replaceStatusV1beta1'), 2);
  assert.equal(client.count('getV1beta1'), 2);
  const notLeader = setup(false);
  await assert.rejects(
    notLeader.store.update(notLeader.v1, (s) => ({ ...s, upgradeSavepointPath: 's3://y' })),
    NotLeaderError,
  );
});

test('a malformed legacy status is a CorruptStateError naming the field', async () => {
  const client = new InMemoryFlinkDeploymentClient();
  const legacy = capturedLegacyDeployment();
  legacy.status!.reconciliationStatus!.lastReconciledSpec = '{not json';
  const v1 = client.seed(legacy, { keepStatus: true });
  const store = new LegacyStatusStateStore({ client, fencingToken: () => ({ holderIdentity: 'a', leaseTransitions: 0 }) });
  await assert.rejects(store.load(v1), (error: unknown) => {
    assert.ok(error instanceof CorruptStateError);
    assert.match(error.key, /lastReconciledSpec/);
    return true;
  });
});
