import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeDeep } from '../../src/api/custom-resource-builder.js';
import { defaultSpec } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { diffSpecs } from '../../src/reconciler/spec-diff.js';

const base = defaultSpec();
const changed = (over: unknown): FlinkDeploymentSpec => mergeDeep(structuredClone(base), over);

test('an identical spec is IGNORE with no changed fields', () => {
  assert.deepEqual(diffSpecs(base, structuredClone(base)), { type: 'IGNORE', changedFields: [] });
});

test('image, jar, args, restartNonce and Flink configuration changes are UPGRADE', () => {
  assert.deepEqual(diffSpecs(base, changed({ image: 'flink:2.0' })), { type: 'UPGRADE', changedFields: ['spec.image'] });
  assert.equal(diffSpecs(base, changed({ job: { args: ['--x'] } })).type, 'UPGRADE');
  assert.deepEqual(diffSpecs(base, changed({ restartNonce: 3 })).changedFields, ['spec.restartNonce']);
  assert.deepEqual(diffSpecs(base, changed({ flinkConfiguration: { 'taskmanager.numberOfTaskSlots': '4' } })).changedFields, [
    'spec.flinkConfiguration["taskmanager.numberOfTaskSlots"]',
  ]);
});

test('fields the Apache operator ignores do not count as changes', () => {
  const ignored = changed({
    job: { upgradeMode: 'stateless', initialSavepointPath: 's3://x', allowNonRestoredState: true, savepointTriggerNonce: 7, checkpointTriggerNonce: 2 },
    flinkConfiguration: { 'kubernetes.operator.periodic.savepoint.interval': '1h', 'job.autoscaler.enabled': 'true', 'parallelism.default': '9' },
  });
  assert.deepEqual(diffSpecs(base, ignored), { type: 'IGNORE', changedFields: [] });
});

test('nested and flat flinkConfiguration with the same meaning are equal', () => {
  const nested = changed({});
  nested.flinkConfiguration = {
    taskmanager: { numberOfTaskSlots: 2 },
    'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
    'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
  };
  assert.equal(diffSpecs(base, nested).type, 'IGNORE');
});

test('replicas and parallelism are SCALE only in standalone reactive mode', () => {
  assert.equal(diffSpecs(base, changed({ taskManager: { replicas: 3 } })).type, 'UPGRADE');
  const reactive = changed({ flinkConfiguration: { 'scheduler-mode': 'REACTIVE' } });
  assert.equal(diffSpecs(reactive, mergeDeep(structuredClone(reactive), { taskManager: { replicas: 3 } })).type, 'SCALE');
  assert.equal(diffSpecs(reactive, mergeDeep(structuredClone(reactive), { job: { parallelism: 8 } })).type, 'SCALE');
  assert.equal(
    diffSpecs(reactive, mergeDeep(structuredClone(reactive), { job: { parallelism: 8 }, image: 'flink:2.0' })).type,
    'UPGRADE',
    'the most severe change wins',
  );
});

test('savepointRedeployNonce is the most severe change', () => {
  assert.equal(diffSpecs(base, changed({ image: 'x', job: { savepointRedeployNonce: 1 } })).type, 'SAVEPOINT_REDEPLOY');
});
