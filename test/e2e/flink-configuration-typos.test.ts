/**
 * A typo in spec.flinkConfiguration end to end (issue 21): the nested `taskmanager:
 * {numberOfTaskSlot: 2}` that Flink would silently ignore is deployed (a warning, not a
 * rejection), gets one UnknownFlinkOption Warning event and a note in status.error that leaves
 * the Ready condition and the lifecycle state alone, and the note goes away once the key is fixed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

const typoWarnings = async (name: string) => (await h.events(name)).filter((e) => e.reason === 'UnknownFlinkOption' && e.type === 'Warning');

test('a nested flinkConfiguration typo deploys, is warned about once, and its note goes when the key is fixed', async () => {
  const deployment = flinkDeployment('typo').build();
  deployment.spec.flinkConfiguration = {
    taskmanager: { numberOfTaskSlot: 2 },
    'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
    'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
  };
  await h.create(deployment);

  const running = await h.waitFor('typo', (d) => stable(1)(d) && d.status?.error !== undefined, 'typo deployed, with the note');
  assert.equal(
    running.status?.error,
    'Warning: spec.flinkConfiguration: taskmanager.numberOfTaskSlot is not a Flink option; did you mean taskmanager.numberOfTaskSlots? (the key is passed to Flink as written, which ignores it)',
  );
  const ready = running.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'True', 'a note is not a failure: the job runs and the resource is Ready');
  assert.equal(ready?.reason, 'JobRunning');

  const warnings = await h.waitUntil(async () => {
    const found = await typoWarnings('typo');
    return found.length > 0 ? found : undefined;
  }, 'an UnknownFlinkOption event');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0].message ?? '', /taskmanager\.numberOfTaskSlot is not a Flink option; did you mean taskmanager\.numberOfTaskSlots\?/);

  // The note does not flap: it is there on every pass of this generation.
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal((await h.get('typo'))?.status?.error, running.status?.error);

  // Fix the key (a JSON merge patch: null removes the misspelt one).
  await h.patch('typo', { spec: { flinkConfiguration: { taskmanager: { numberOfTaskSlot: null, numberOfTaskSlots: 2 } } } });
  const fixed = await h.waitFor('typo', (d) => stable(2)(d) && d.status?.error === undefined, 'the fixed spec running, without the note');
  assert.equal(fixed.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.equal(
    (await typoWarnings('typo')).reduce((n, e) => n + (e.count ?? 1), 0),
    1,
    'one warning in all, for the generation with the typo',
  );
});
