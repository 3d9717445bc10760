import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { formatFieldErrors, MAX_DEPLOYMENT_NAME_LENGTH, validateFlinkDeployment } from '../../src/api/spec-validation.js';
import { validateInternalStateSchema, validateSpecSchema } from '../../src/api/schema-validator.js';
import { decodeLegacyStatus } from '../../src/api/legacy-status-codec.js';
import { emptyInternalState } from '../../src/api/internal-state.js';
import { defaultSpec, flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { loadSharedFixtures } from './shared-fixtures.js';

const CORPUS = fileURLToPath(new URL('./invalid-specs/', import.meta.url));
const corpusFiles = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

test('the invalid-spec corpus covers every rule (at least 25 cases)', () => {
  assert.ok(corpusFiles.length >= 25, `${corpusFiles.length} cases`);
});

for (const file of corpusFiles) {
  test(`invalid spec ${file} gets exactly its documented message`, () => {
    const doc = parseYaml(readFileSync(join(CORPUS, file), 'utf8')) as {
      expect: string[];
      previousSpec?: FlinkDeploymentSpec;
      deployment: { metadata: { name?: string; namespace?: string }; spec: FlinkDeploymentSpec };
    };
    assert.ok(doc.expect.length > 0);
    const errors = validateFlinkDeployment(doc.deployment, doc.previousSpec ? { spec: doc.previousSpec } : undefined);
    assert.equal(formatFieldErrors(errors), doc.expect.join('\n'));
    for (const e of errors) assert.match(e.message, /; /, `${e.field}: the message says how to fix it`);
  });
}

test('every real document in the shared fixtures validates, and so do the specs recorded in their statuses', () => {
  for (const fx of loadSharedFixtures()) {
    const name = fx.metadata?.name ?? 'flink-app1';
    if (fx.spec) assert.deepEqual(validateFlinkDeployment({ metadata: { name }, spec: fx.spec }), [], `${fx.file} spec`);
    if (fx.status) {
      const { state } = decodeLegacyStatus(fx.status, fx.resource, `${name}-operator-state`);
      assert.deepEqual(validateFlinkDeployment({ metadata: { name }, spec: state.lastReconciledSpec! }), [], `${fx.file} lastReconciledSpec`);
      assert.deepEqual(validateFlinkDeployment({ metadata: { name }, spec: state.lastStableSpec! }), [], `${fx.file} lastStableSpec`);
      assert.deepEqual(validateInternalStateSchema(state), [], `${fx.file} decoded state matches the internal-state schema`);
    }
  }
});

test('the fixture builder default spec is valid', () => {
  const d = flinkDeployment('orders').build();
  assert.deepEqual(validateFlinkDeployment(d), []);
  assert.deepEqual(validateFlinkDeployment(flinkDeployment('sessions').withoutJob().build()), []);
});

test(`names up to ${MAX_DEPLOYMENT_NAME_LENGTH} characters pass, one more fails`, () => {
  assert.equal(MAX_DEPLOYMENT_NAME_LENGTH, 48);
  const ok = 'a'.repeat(MAX_DEPLOYMENT_NAME_LENGTH);
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: ok }, spec: defaultSpec() }), []);
  const errors = validateFlinkDeployment({ metadata: { name: `${ok}b` }, spec: defaultSpec() });
  assert.deepEqual(
    errors.map((e) => e.field),
    ['metadata.name'],
  );
});

test('legal changes are not flagged: suspend alone, restart alone, resume and restart together', () => {
  const running = defaultSpec();
  const suspended: FlinkDeploymentSpec = { ...running, job: { ...running.job, state: 'suspended' } };
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec: suspended }, { spec: running }), []);
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec: { ...running, restartNonce: 1 } }, { spec: running }), []);
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec: { ...running, restartNonce: 1 } }, { spec: suspended }), []);
  // An unchanged nonce on a suspended job is not a new request.
  const suspendedWithNonce = { ...suspended, restartNonce: 4 };
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec: suspendedWithNonce }, { spec: { ...running, restartNonce: 4 } }), []);
});

test('a savepointTriggerNonce at the first deployment is recorded, not a savepoint request', () => {
  const spec: FlinkDeploymentSpec = {
    ...defaultSpec(),
    flinkConfiguration: { 'execution.checkpointing.dir': 'file:///cp' },
    job: { ...defaultSpec().job, upgradeMode: 'stateless', savepointTriggerNonce: 0 },
  };
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec }), []);
  assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec }, { spec }), [], 'unchanged nonce');
});

test('a cron periodic savepoint interval is accepted, like a duration', () => {
  for (const interval of ['1h', '30 min', '0 0 * * * ?']) {
    const spec = { ...defaultSpec(), flinkConfiguration: { ...defaultSpec().flinkConfiguration, 'kubernetes.operator.periodic.savepoint.interval': interval } };
    assert.deepEqual(validateFlinkDeployment({ metadata: { name: 'o' }, spec }), [], interval);
  }
});

test('garbage never throws; it yields schema errors naming the field', () => {
  assert.deepEqual(
    validateFlinkDeployment({ metadata: { name: 'o' }, spec: 'nonsense' as unknown as FlinkDeploymentSpec }).map((e) => e.field),
    ['spec'],
  );
  const weird = validateFlinkDeployment({ metadata: {}, spec: { job: 7, flinkConfiguration: [] } as unknown as FlinkDeploymentSpec });
  assert.deepEqual(
    weird.map((e) => e.field),
    ['metadata.name', 'spec.job', 'spec.flinkConfiguration', 'spec.flinkVersion'],
  );
});

test('formatFieldErrors prints one "field: message" line per error', () => {
  assert.equal(
    formatFieldErrors([
      { field: 'spec.job.parallelism', message: 'must be at least 1, got 0; set it to 1 or more' },
      { field: 'spec.mode', message: 'x; y' },
    ]),
    'spec.job.parallelism: must be at least 1, got 0; set it to 1 or more\nspec.mode: x; y',
  );
  assert.equal(formatFieldErrors([]), '');
});

test('schema validation: quantities are int-or-string, int32 ranges, keys with dots are bracketed', () => {
  assert.deepEqual(validateSpecSchema({ jobManager: { resources: { requests: { cpu: 1, memory: '2Gi' } } } }), []);
  assert.deepEqual(
    validateSpecSchema({ jobManager: { resources: { limits: { cpu: 0.5 } } } }).map((e) => e.field),
    ['spec.jobManager.resources.limits.cpu'],
  );
  assert.deepEqual(validateSpecSchema({ logConfiguration: { 'log4j-console.properties': 5 } }), [
    { field: 'spec.logConfiguration["log4j-console.properties"]', message: 'must be a string, got 5; quote it ("5")' },
  ]);
});

test('internal-state schema: the empty state is valid, a broken one names its fields', () => {
  assert.deepEqual(validateInternalStateSchema(emptyInternalState()), []);
  assert.deepEqual(validateInternalStateSchema({ ...emptyInternalState(), phase: 'DONE', savepointHistory: [{ location: 's3://x', timeStamp: 1 }] }), [
    {
      field: 'phase',
      message:
        'must be one of NEW, DEPLOYING, DEPLOYED, RUNNING, STOPPING, STOPPED, SUSPENDING, SUSPENDED, FINISHED, ROLLING_BACK, ROLLED_BACK, got "DONE"; use one of those values',
    },
    { field: 'savepointHistory[0].triggerType', message: 'is required; set it' },
  ]);
});

// Source: Flink 1.19+ reads config.yaml (standard YAML, values quoted by the operator), Flink
// 1.15-1.18 only flink-conf.yaml (Flink 1.x GlobalConfiguration.loadYAMLResource).
test('values flink-conf.yaml cannot carry are fine from v1_19 (config.yaml), and standalone job args are container args', () => {
  const awkward = { 's3.secret-key': 'abc#123', 'pipeline.name': 'orders ', 'env.java.opts.jobmanager': '-Xss1m\n-Dfoo=bar' };
  for (const flinkVersion of ['v1_19', 'v1_20', 'v2_0'] as const) {
    assert.deepEqual(validateFlinkDeployment(flinkDeployment('orders').withSpec({ flinkVersion }).withFlinkConfiguration(awkward).build()), [], flinkVersion);
  }
  const legacy = validateFlinkDeployment(
    flinkDeployment('orders').withSpec({ flinkVersion: 'v1_15', image: 'flink:1.15' }).withFlinkConfiguration(awkward).build(),
  );
  assert.deepEqual(
    legacy.map((e) => e.field),
    ['spec.flinkConfiguration["s3.secret-key"]', 'spec.flinkConfiguration["pipeline.name"]', 'spec.flinkConfiguration["env.java.opts.jobmanager"]'],
  );
  // standalone: args go on the command line (jobmanager-deployment.ts), not into flink-conf.yaml
  const standalone = flinkDeployment('orders')
    .withSpec({ flinkVersion: 'v1_17', image: 'flink:1.17', mode: 'standalone', job: { args: ['--topic', 'orders#eu'] } })
    .build();
  assert.deepEqual(validateFlinkDeployment(standalone), []);
  // nested configuration is checked as Flink sees it, flattened
  const nested = validateFlinkDeployment(
    flinkDeployment('orders')
      .withSpec({ flinkVersion: 'v1_16', image: 'flink:1.16' })
      .withFlinkConfiguration({ s3: { 'secret-key': 'x#y' } })
      .build(),
  );
  assert.deepEqual(
    nested.map((e) => e.field),
    ['spec.flinkConfiguration["s3.secret-key"]'],
  );
});
