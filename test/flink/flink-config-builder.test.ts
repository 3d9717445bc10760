import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { mergeDeep } from '../../src/api/custom-resource-builder.js';
import { defaultSpec } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import {
  buildFlinkConfiguration,
  classpathEntryForJar,
  renderFlinkConfigFile,
  renderFlinkConfigYaml,
  renderLegacyFlinkConf,
} from '../../src/flink/flink-config-builder.js';
import { parseLegacyFlinkConf } from '../../src/devcluster/simulation/flink-configuration.js';
import { parseMemoryBytes } from '../../src/flink/flink-container-resources.js';

const JOB = '0F1E2D3C4B5A69788796A5B4C3D2E1F0';
const spec = (over: Record<string, unknown> = {}): FlinkDeploymentSpec => mergeDeep(defaultSpec(), over);
const build = (s: FlinkDeploymentSpec, extra: { restoreFrom?: string; allowNonRestoredState?: boolean } = {}) =>
  buildFlinkConfiguration({ namespace: 'team-a', name: 'orders', spec: s, jobId: JOB, ...extra });

test('the effective configuration of the default spec, key by key', () => {
  assert.deepEqual(build(spec()), {
    '$internal.pipeline.job-id': JOB.toLowerCase(),
    'blob.server.port': '6124',
    'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
    'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
    'execution.shutdown-on-application-finish': 'false',
    'execution.target': 'remote',
    'jobmanager.memory.process.size': '1024m',
    'jobmanager.rpc.address': 'orders.team-a',
    'jobmanager.rpc.port': '6123',
    'kubernetes.cluster-id': 'orders',
    'kubernetes.namespace': 'team-a',
    'parallelism.default': '2',
    'pipeline.classpaths': 'file:///opt/flink/examples/streaming/StateMachineExample.jar',
    'rest.port': '8081',
    'taskmanager.memory.process.size': '1024m',
    'taskmanager.numberOfTaskSlots': '2',
    'taskmanager.rpc.port': '6122',
  });
});

test('nested user configuration is flattened, and the keys the operator owns win over the user', () => {
  const config = build(
    spec({
      flinkConfiguration: {
        'kubernetes.cluster-id': 'someone-else',
        'execution.shutdown-on-application-finish': true,
        high: { availability: { type: 'kubernetes', storageDir: 's3://ha' } },
        'kubernetes.operator.savepoint.format.type': 'NATIVE',
        'simulator.job.fail-after': '5s',
        'rest.port': 9091,
      },
    }),
  );
  assert.equal(config['kubernetes.cluster-id'], 'orders');
  assert.equal(config['execution.shutdown-on-application-finish'], 'false');
  assert.equal(config['high.availability.type'], 'kubernetes');
  assert.equal(config['kubernetes.operator.savepoint.format.type'], 'NATIVE');
  assert.equal(config['simulator.job.fail-after'], '5s');
  assert.equal(config['rest.port'], '9091');
  assert.deepEqual(Object.keys(config), Object.keys(config).sort());
});

test('task slots default to 1 (written explicitly); invalid slots are rejected', () => {
  const s = spec();
  s.flinkConfiguration = {};
  assert.equal(build(s)['taskmanager.numberOfTaskSlots'], '1');
  s.flinkConfiguration = { 'taskmanager.numberOfTaskSlots': 'two' };
  assert.throws(() => build(s), /taskmanager\.numberOfTaskSlots: "two" is not a positive integer/);
});

test('a restore path in the user configuration never leaks into a deployment that does not restore', () => {
  const s = spec({ flinkConfiguration: { 'execution.savepoint.path': 'file:///old/savepoint-1', 'execution.state-recovery.path': 'file:///old/savepoint-2' } });
  const config = build(s);
  assert.equal(config['execution.savepoint.path'], undefined);
  assert.equal(config['execution.state-recovery.path'], undefined);
});

test('restoring sets the restore path under the key of the Flink version', () => {
  const modern = build(spec({ flinkVersion: 'v2_2' }), { restoreFrom: 'file:///sp/savepoint-abc', allowNonRestoredState: true });
  assert.equal(modern['execution.state-recovery.path'], 'file:///sp/savepoint-abc');
  assert.equal(modern['execution.state-recovery.ignore-unclaimed-state'], 'true');
  assert.equal(modern['execution.savepoint.path'], undefined);
  const older = build(spec({ flinkVersion: 'v1_18' }), { restoreFrom: 'file:///sp/savepoint-abc' });
  assert.equal(older['execution.savepoint.path'], 'file:///sp/savepoint-abc');
  assert.equal(older['execution.savepoint.ignore-unclaimed-state'], undefined);
});

test('jar URIs: local:// becomes file://, other schemes are kept', () => {
  assert.equal(classpathEntryForJar('local:///opt/flink/usrlib/job.jar'), 'file:///opt/flink/usrlib/job.jar');
  assert.equal(classpathEntryForJar('s3://bucket/job.jar'), 's3://bucket/job.jar');
});

test('memory sizes: Flink syntax first, then Kubernetes quantities', () => {
  assert.equal(parseMemoryBytes('1024m', 'f'), 1024 * 1024 * 1024);
  assert.equal(parseMemoryBytes('2g', 'f'), 2 * 1024 ** 3);
  assert.equal(parseMemoryBytes('2048Mi', 'f'), 2048 * 1024 ** 2);
  assert.equal(parseMemoryBytes('1.5Gi', 'f'), 1.5 * 1024 ** 3);
  assert.throws(() => parseMemoryBytes('lots', 'spec.taskManager.resource.memory'), /spec\.taskManager\.resource\.memory: "lots" is not a memory size/);
  const s = spec({ jobManager: { resource: { memory: '2Gi' } } });
  s.taskManager = { resource: { cpu: 1 } };
  const config = build(s);
  assert.equal(config['jobmanager.memory.process.size'], '2048m');
  assert.equal(config['taskmanager.memory.process.size'], undefined);
});

test('an invalid job id is rejected', () => {
  assert.throws(() => buildFlinkConfiguration({ namespace: 'a', name: 'b', spec: spec(), jobId: 'xyz' }), /invalid job id "xyz"/);
});

test('config.yaml rendering: sorted `key: "value"` lines that YAML reads back exactly', () => {
  const config = {
    'parallelism.default': '2',
    '$internal.pipeline.job-id': '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
    'env.java.opts': '-Dx="y" -Dz=#1: a\\b',
    'multi.line': 'first\nsecond',
    'key with space': 'v',
  };
  const text = renderFlinkConfigYaml(config);
  assert.equal(
    text,
    [
      '$internal.pipeline.job-id: "0f1e2d3c4b5a69788796a5b4c3d2e1f0"',
      'env.java.opts: "-Dx=\\"y\\" -Dz=#1: a\\\\b"',
      '"key with space": "v"',
      'multi.line: "first\\nsecond"',
      'parallelism.default: "2"',
      '',
    ].join('\n'),
  );
  assert.deepEqual(parseYaml(text), config);
  assert.equal(renderFlinkConfigYaml({ b: '1', a: '2' }), renderFlinkConfigYaml({ a: '2', b: '1' }));
  assert.equal(renderFlinkConfigYaml({}), '');
});

test('taskManager.replicas, when set, decides the parallelism (replicas × slots), as in the Apache operator', () => {
  const withReplicas = build(spec({ taskManager: { replicas: 3 }, job: { parallelism: 2 } }));
  assert.equal(withReplicas['parallelism.default'], '6', '3 replicas × 2 slots');
  assert.equal(build(spec({ job: { parallelism: 5 } }))['parallelism.default'], '5');
});

// Source: Flink 1.x GlobalConfiguration.loadYAMLResource (per line: '#' comment, split at the
// first ": ", key and value trimmed, values not unquoted). The simulation's parser
// (parseLegacyFlinkConf) implements those rules independently of the renderer.
test('flink-conf.yaml rendering: sorted unquoted `key: value` lines that Flink 1.x reads back exactly', () => {
  const config = {
    'parallelism.default': '2',
    '$internal.pipeline.job-id': '12345678901234567890123456789012',
    'kubernetes.jobmanager.annotations': 'a: b, c: "d"',
    'execution.savepoint.path': 's3://bucket/savepoints/savepoint-0f1e2d-0123456789ab',
    'pipeline.name': '"quoted"',
  };
  const text = renderLegacyFlinkConf(config);
  assert.equal(
    text,
    [
      '$internal.pipeline.job-id: 12345678901234567890123456789012',
      'execution.savepoint.path: s3://bucket/savepoints/savepoint-0f1e2d-0123456789ab',
      'kubernetes.jobmanager.annotations: a: b, c: "d"',
      'parallelism.default: 2',
      'pipeline.name: "quoted"',
      '',
    ].join('\n'),
  );
  assert.deepEqual(Object.fromEntries(parseLegacyFlinkConf(text)), config, 'Flink 1.x reads every value back unchanged (quotes included)');
  assert.equal(renderLegacyFlinkConf({}), '');
  assert.throws(() => renderLegacyFlinkConf({ 's3.secret-key': 'a#b' }), /cannot render flink-conf\.yaml: configuration key "s3\.secret-key" contains '#'/);
  assert.throws(() => renderLegacyFlinkConf({ x: 'a\nb' }), /line break/);
  assert.throws(() => renderLegacyFlinkConf({ x: ' a' }), /whitespace/);
});

test('the configuration file follows the Flink version: flink-conf.yaml for v1_15..v1_18, config.yaml from v1_19', () => {
  const config = { 'parallelism.default': '2' };
  for (const v of ['v1_15', 'v1_16', 'v1_17', 'v1_18'] as const)
    assert.deepEqual(renderFlinkConfigFile(config, v), { file: 'flink-conf.yaml', text: 'parallelism.default: 2\n' }, v);
  for (const v of ['v1_19', 'v1_20', 'v2_0', 'v2_2', undefined] as const)
    assert.deepEqual(renderFlinkConfigFile(config, v), { file: 'config.yaml', text: 'parallelism.default: "2"\n' }, String(v));
});
