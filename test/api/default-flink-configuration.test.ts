/**
 * The operator's default configuration and its precedence, as the Apache operator's
 * FlinkConfigManager.getDefaultConfig applies it (base < namespace scope < `<v>+` version scopes,
 * older first < exact version scope) and FlinkConfigBuilder puts the resource's own configuration
 * over it. Source: apache/flink-kubernetes-operator FlinkConfigManager.java (getDefaultConfig,
 * getRelevantVersionPrefixes, applyDefault) and its docs, "Operator configuration / Default
 * configuration".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attributeDefaultedErrors,
  DefaultFlinkConfiguration,
  describeSource,
  sourcedEffectiveConfiguration,
  withConfigurationDefaults,
} from '../../src/api/default-flink-configuration.js';
import { isOperatorWideKey } from '../../src/runtime/apache-option-catalog.js';

const FILE = {
  'state.savepoints.dir': 's3://base/sp',
  'taskmanager.numberOfTaskSlots': '2',
  'kubernetes.operator.periodic.savepoint.interval': '1 h',
  'kubernetes.operator.reconcile.interval': '15 s',
  'kubernetes.operator.default-configuration.namespace.team-a.state.savepoints.dir': 's3://team-a/sp',
  'kubernetes.operator.default-configuration.namespace.team-a.taskmanager.numberOfTaskSlots': '4',
  'kubernetes.operator.default-configuration.flink-version.v1_18+.taskmanager.numberOfTaskSlots': '8',
  'kubernetes.operator.default-configuration.flink-version.v1_19+.taskmanager.numberOfTaskSlots': '16',
  'kubernetes.operator.default-configuration.flink-version.v1_20.taskmanager.numberOfTaskSlots': '32',
  'kubernetes.operator.default-configuration.flink-version.v1_20.state.savepoints.dir': 's3://flink-1.20/sp',
};
const defaults = new DefaultFlinkConfiguration(FILE, isOperatorWideKey);

const precedence: Array<{
  why: string;
  namespace: string;
  version: 'v1_17' | 'v1_18' | 'v1_19' | 'v1_20' | 'v2_0';
  key: string;
  expected: string | undefined;
}> = [
  { why: 'the unscoped default', namespace: 'team-b', version: 'v1_17', key: 'state.savepoints.dir', expected: 's3://base/sp' },
  { why: 'the namespace scope over the unscoped default', namespace: 'team-a', version: 'v1_17', key: 'state.savepoints.dir', expected: 's3://team-a/sp' },
  { why: 'the namespace scope where no version scope applies', namespace: 'team-a', version: 'v1_17', key: 'taskmanager.numberOfTaskSlots', expected: '4' },
  { why: 'a v1_18+ scope over the namespace scope', namespace: 'team-a', version: 'v1_18', key: 'taskmanager.numberOfTaskSlots', expected: '8' },
  { why: 'the newer v1_19+ scope over the older v1_18+', namespace: 'team-b', version: 'v1_19', key: 'taskmanager.numberOfTaskSlots', expected: '16' },
  { why: 'the exact version scope over every `+` scope', namespace: 'team-a', version: 'v1_20', key: 'taskmanager.numberOfTaskSlots', expected: '32' },
  {
    why: 'the exact scope of v1_20 does not reach v2_0, the v1_19+ one does',
    namespace: 'team-b',
    version: 'v2_0',
    key: 'taskmanager.numberOfTaskSlots',
    expected: '16',
  },
  { why: 'a version scope over a namespace scope', namespace: 'team-a', version: 'v1_20', key: 'state.savepoints.dir', expected: 's3://flink-1.20/sp' },
  {
    why: 'per-resource kubernetes.operator.* keys are defaults',
    namespace: 'x',
    version: 'v1_17',
    key: 'kubernetes.operator.periodic.savepoint.interval',
    expected: '1 h',
  },
  { why: 'operator-wide keys are not resource defaults', namespace: 'x', version: 'v1_17', key: 'kubernetes.operator.reconcile.interval', expected: undefined },
  {
    why: 'scoped keys are consumed by their scope',
    namespace: 'team-a',
    version: 'v1_20',
    key: 'kubernetes.operator.default-configuration.namespace.team-a.state.savepoints.dir',
    expected: undefined,
  },
];

for (const row of precedence) {
  test(`defaults: ${row.why}`, () => {
    assert.equal(defaults.for(row.namespace, row.version)[row.key], row.expected);
  });
}

test("the resource's own configuration wins over every default, and each value says where it came from", () => {
  const spec = { flinkVersion: 'v1_20' as const, flinkConfiguration: { taskmanager: { numberOfTaskSlots: 3 } } };
  const effective = withConfigurationDefaults(spec, defaults.for('team-a', spec.flinkVersion));
  assert.deepEqual(effective.flinkConfiguration, {
    'state.savepoints.dir': 's3://flink-1.20/sp',
    'taskmanager.numberOfTaskSlots': '3',
    'kubernetes.operator.periodic.savepoint.interval': '1 h',
  });
  const sourced = sourcedEffectiveConfiguration(defaults.sourcedFor('team-a', 'v1_20'), spec);
  const slots = sourced.get('taskmanager.numberOfTaskSlots')!;
  assert.equal(describeSource(slots.source), 'spec.flinkConfiguration');
  assert.deepEqual(
    slots.overrides.map(describeSource),
    [
      'operator default',
      'operator default for namespace team-a',
      'operator default for Flink v1_18+',
      'operator default for Flink v1_19+',
      'operator default for Flink v1_20',
    ],
    'every lower source, lowest first',
  );
  assert.equal(describeSource(sourced.get('state.savepoints.dir')!.source), 'operator default for Flink v1_20');
});

test("a session job's own configuration goes over its session cluster's, which goes over the defaults", () => {
  const sourced = sourcedEffectiveConfiguration(
    defaults.sourcedFor('team-b', 'v1_17'),
    { flinkConfiguration: { 'pipeline.name': 'job' } },
    { flinkConfiguration: { 'state.savepoints.dir': 's3://cluster/sp', 'pipeline.name': 'cluster' } },
  );
  assert.equal(sourced.get('state.savepoints.dir')!.value, 's3://cluster/sp');
  assert.equal(describeSource(sourced.get('state.savepoints.dir')!.source), "session cluster's spec.flinkConfiguration");
  assert.equal(sourced.get('pipeline.name')!.value, 'job');
});

test('an empty default configuration leaves the spec as it is (same object)', () => {
  const spec = { flinkConfiguration: { a: '1' } };
  assert.equal(withConfigurationDefaults(spec, {}), spec);
});

test('malformed scoped keys are reported, not applied, and never fatal', () => {
  const bad = new DefaultFlinkConfiguration(
    {
      'kubernetes.operator.default-configuration.flink-version.v9_9.a': '1',
      'kubernetes.operator.default-configuration.flink-version.1.20.a': '1',
      'kubernetes.operator.default-configuration.namespace.onlynamespace': '1',
      'kubernetes.operator.default-configuration.namespace.ns.kubernetes.operator.reconcile.interval': '1 s',
    },
    isOperatorWideKey,
  );
  assert.deepEqual(
    bad.problems.map((p) => p.message),
    [
      'v9_9 is not a Flink version of spec.flinkVersion (v1_13, v1_14, v1_15, v1_16, v1_17, v1_18, v1_19, v1_20, v2_0, v2_1, v2_2, v2_3, v2_4)',
      'expected kubernetes.operator.default-configuration.flink-version.<version>[+].<key>, e.g. …flink-version.v1_20.<key>',
      'expected kubernetes.operator.default-configuration.namespace.<namespace>.<key>',
      'kubernetes.operator.reconcile.interval configures the operator itself and cannot be set per namespace',
    ],
  );
  assert.deepEqual(bad.for('ns', 'v1_20'), {});
});

test('a validation error about a defaulted key says the fix is in the default configuration', () => {
  const errors = attributeDefaultedErrors(
    [
      { field: 'spec.flinkConfiguration["kubernetes.operator.periodic.savepoint.interval"]', message: "'soon' is not a duration" },
      { field: 'spec.flinkConfiguration["rest.port"]', message: 'is not a port' },
      { field: 'spec.job.parallelism', message: 'must be at least 1' },
    ],
    { flinkConfiguration: { 'rest.port': 'x' } },
    { 'kubernetes.operator.periodic.savepoint.interval': 'soon', 'rest.port': '8081' },
  );
  assert.deepEqual(
    errors.map((e) => e.message),
    [
      "'soon' is not a duration (this value comes from the operator's default configuration: fix it there, or set the key in the spec)",
      'is not a port',
      'must be at least 1',
    ],
  );
});
