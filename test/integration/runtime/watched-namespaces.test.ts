/**
 * Dynamic watched namespaces (`kubernetes.operator.dynamic.namespaces.enabled`, issue 20):
 * `Manager.setWatchedNamespaces` switches the running operator to another namespace set, without a
 * restart. Judged by what the operator does to the FlinkDeployments on the development cluster
 * (status written or not, the simulated Flink's submissions), not by logs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from '../../e2e/operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness({ operator: false });
  for (const name of ['team-1', 'team-2']) await h.core.createNamespace({ body: { metadata: { name } } });
  await h.startOperator({ namespaces: ['team-1'], dynamicNamespaces: true });
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

test('setWatchedNamespaces moves the operator to the new namespaces and drops the old ones, without a restart', async () => {
  const manager = h.manager!;
  await h.create(flinkDeployment('one').inNamespace('team-1').build());
  await h.create(flinkDeployment('two').inNamespace('team-2').build());
  await h.waitFor('one', stable(1), 'one (watched namespace) to be STABLE', 15_000, 'team-1');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await h.get('two', 'team-2'))?.status?.lifecycleState, undefined, 'two is not watched yet: no status');
  assert.equal(h.world.simulation.lineage('team-2', 'two').submissions.length, 0);

  await manager.setWatchedNamespaces(['team-2']);
  assert.equal(h.manager, manager, 'the same manager, no restart');
  await h.waitFor('two', stable(1), 'two (newly watched) to be STABLE', 15_000, 'team-2');
  assert.equal(manager.dependencies.readers.flinkDeployments.get('team-1', 'one'), undefined, "team-1's deployment left the cache");

  // a change in the namespace no longer watched is not acted on
  await h.patch('one', { spec: { job: { parallelism: 3 } } }, 'team-1');
  await new Promise((r) => setTimeout(r, 800));
  const one = await h.get('one', 'team-1');
  assert.equal(one?.status?.observedGeneration, 1, 'team-1 is not reconciled any more');
  assert.equal(h.world.simulation.lineage('team-1', 'one').submissions.length, 1);
  assert.equal(h.world.simulation.lineage('team-1', 'one').savepoints.length, 0);

  // and back to both: the pending change in team-1 is picked up
  await manager.setWatchedNamespaces(['team-1', 'team-2']);
  await h.waitFor('one', stable(2), 'one to be upgraded once watched again', 15_000, 'team-1');
  assert.ok(manager.dependencies.readers.flinkDeployments.get('team-2', 'two'), 'team-2 stays watched');
});
