import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointDirectory,
  configValue,
  flattenFlinkConfiguration,
  isHighAvailabilityEnabled,
  parseFlinkDuration,
  savepointDirectory,
} from '../../src/api/flink-configuration.js';
import { defaultSpec } from '../../src/api/flink-deployment-builder.js';

test('nested and flat flinkConfiguration flatten to the same string map', () => {
  const nested = flattenFlinkConfiguration({
    'taskmanager.numberOfTaskSlots': 2,
    state: { 'savepoints.dir': 'file:///sp', checkpoints: { dir: 'file:///cp' } },
    'high-availability': { type: 'kubernetes', storageDir: 'file:///ha' },
    'rest.profiling.enabled': true,
    'pipeline.jars': ['a.jar', 'b.jar'],
    'unset.key': null,
  });
  assert.deepEqual(nested, {
    'taskmanager.numberOfTaskSlots': '2',
    'state.savepoints.dir': 'file:///sp',
    'state.checkpoints.dir': 'file:///cp',
    'high-availability.type': 'kubernetes',
    'high-availability.storageDir': 'file:///ha',
    'rest.profiling.enabled': 'true',
    'pipeline.jars': 'a.jar;b.jar',
  });
  assert.deepEqual(flattenFlinkConfiguration(undefined), {});
});

test('a key spelled both flat and nested: the later one wins', () => {
  assert.deepEqual(flattenFlinkConfiguration({ 'state.savepoints.dir': 'x', state: { 'savepoints.dir': 'y' } }), { 'state.savepoints.dir': 'y' });
});

test('configValue reads a spec through the flattened view', () => {
  const spec = { ...defaultSpec(), flinkConfiguration: { execution: { checkpointing: { interval: '30s' } } } };
  assert.equal(configValue(spec, 'execution.checkpointing.interval'), '30s');
  assert.equal(configValue(spec, 'nope'), undefined);
});

test('savepoint and checkpoint directories prefer the new key over the old alias', () => {
  assert.equal(savepointDirectory({ 'state.savepoints.dir': 'old', 'execution.checkpointing.savepoint-dir': 'new' }), 'new');
  assert.equal(savepointDirectory({ 'state.savepoints.dir': 'old' }), 'old');
  assert.equal(savepointDirectory({ 'state.savepoints.dir': '  ' }), undefined);
  assert.equal(checkpointDirectory({ 'state.checkpoints.dir': 'old', 'execution.checkpointing.dir': 'new' }), 'new');
  assert.equal(checkpointDirectory({}), undefined);
});

test('high availability counts when the type (or legacy key) is set and not NONE', () => {
  assert.equal(isHighAvailabilityEnabled({ 'high-availability.type': 'kubernetes' }), true);
  assert.equal(isHighAvailabilityEnabled({ 'high-availability': 'org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory' }), true);
  assert.equal(isHighAvailabilityEnabled({ 'high-availability.type': 'NONE' }), false);
  assert.equal(isHighAvailabilityEnabled({ 'high-availability.type': 'none' }), false);
  assert.equal(isHighAvailabilityEnabled({ 'high-availability.storageDir': 'file:///ha' }), false);
  assert.equal(isHighAvailabilityEnabled({}), false);
});

test('Flink durations parse to milliseconds', () => {
  const cases: Array<[string, number]> = [
    ['30s', 30_000], ['10 s', 10_000], ['1 min', 60_000], ['2m', 120_000], ['500 ms', 500], ['2h', 7_200_000],
    ['1d', 86_400_000], ['500', 500], ['3 MINUTES', 180_000], ['1000us', 1], ['0', 0], [' 5 seconds ', 5_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseFlinkDuration(text), ms, text);
});

test('garbage durations throw with the accepted forms', () => {
  for (const bad of ['', 'soon', '-1s', '1.5h', '10 fortnights', 's']) {
    assert.throws(() => parseFlinkDuration(bad), /Flink duration|unknown time unit/, bad);
  }
  assert.throws(() => parseFlinkDuration('10 fortnights'), /unknown time unit 'fortnights'/);
});
