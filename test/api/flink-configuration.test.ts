import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointDirectory,
  configValue,
  flattenFlinkConfiguration,
  flinkConfigFileOf,
  isHighAvailabilityEnabled,
  legacyFlinkConfKeyProblem,
  legacyFlinkConfValueProblem,
  parseFlinkDuration,
  savepointDirectory,
} from '../../src/api/flink-configuration.js';
import { FLINK_VERSIONS } from '../../src/api/flink-deployment-spec.js';
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
    ['30s', 30_000],
    ['10 s', 10_000],
    ['1 min', 60_000],
    ['2m', 120_000],
    ['500 ms', 500],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['500', 500],
    ['3 MINUTES', 180_000],
    ['1000us', 1],
    ['0', 0],
    [' 5 seconds ', 5_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseFlinkDuration(text), ms, text);
});

test('garbage durations throw with the accepted forms', () => {
  for (const bad of ['', 'soon', '-1s', '1.5h', '10 fortnights', 's']) {
    assert.throws(() => parseFlinkDuration(bad), /Flink duration|unknown time unit/, bad);
  }
  assert.throws(() => parseFlinkDuration('10 fortnights'), /unknown time unit 'fortnights'/);
});

// Sources: Flink 1.x GlobalConfiguration.loadConfiguration reads only conf/flink-conf.yaml; Flink
// 1.19/1.20 read config.yaml and fall back to flink-conf.yaml; Flink 2.x reads only config.yaml
// (FLIP-366, GlobalConfiguration of 2.0).
test('the configuration file by Flink version: flink-conf.yaml up to v1_18, config.yaml from v1_19', () => {
  const files = Object.fromEntries(FLINK_VERSIONS.map((v) => [v, flinkConfigFileOf(v)]));
  assert.deepEqual(files, {
    v1_13: 'flink-conf.yaml',
    v1_14: 'flink-conf.yaml',
    v1_15: 'flink-conf.yaml',
    v1_16: 'flink-conf.yaml',
    v1_17: 'flink-conf.yaml',
    v1_18: 'flink-conf.yaml',
    v1_19: 'config.yaml',
    v1_20: 'config.yaml',
    v2_0: 'config.yaml',
    v2_1: 'config.yaml',
    v2_2: 'config.yaml',
    v2_3: 'config.yaml',
    v2_4: 'config.yaml',
  });
  assert.equal(flinkConfigFileOf(undefined), 'config.yaml', 'unset: the default version v1_20');
});

// Source: Flink 1.x GlobalConfiguration.loadYAMLResource (split at '#', then at the first ": ",
// Java trim of key and value, lines with an empty key or value skipped, no unquoting).
test('what flink-conf.yaml cannot carry: line breaks, #, surrounding whitespace, empty values; ": " only in values', () => {
  for (const carried of ['s3://b/sp', 'a: b', '"quoted"', "'single'", '*alias', '[1, 2]', '-Dx=y -Dz=w', 'k1:v1,k2:v2', 'ünïcödé', 'a\tb']) {
    assert.equal(legacyFlinkConfValueProblem(carried), undefined, carried);
  }
  assert.match(legacyFlinkConfValueProblem('a\nb')!.reason, /line break/);
  assert.match(legacyFlinkConfValueProblem('a\rb')!.reason, /line break/);
  assert.match(legacyFlinkConfValueProblem('p#1')!.reason, /'#'/);
  assert.match(legacyFlinkConfValueProblem('')!.reason, /empty/);
  assert.match(legacyFlinkConfValueProblem(' x')!.reason, /whitespace/);
  assert.match(legacyFlinkConfValueProblem('x\t')!.reason, /whitespace/);
  assert.equal(legacyFlinkConfValueProblem('x\u00a0'), undefined, 'Java trim strips only chars up to U+0020');
  assert.equal(legacyFlinkConfKeyProblem('state.savepoints.dir'), undefined);
  assert.equal(legacyFlinkConfKeyProblem('a:b'), undefined);
  assert.match(legacyFlinkConfKeyProblem('a: b')!.reason, /': '/);
  assert.match(legacyFlinkConfKeyProblem('a#b')!.reason, /'#'/);
  assert.match(legacyFlinkConfKeyProblem(' a')!.reason, /whitespace/);
});
