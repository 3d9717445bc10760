import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { formatFieldErrors, validateFlinkDeployment } from '../../src/api/spec-validation.js';
import { validateFlinkSessionJob, type SessionJobValidationContext } from '../../src/api/flink-session-job-validation.js';
import { MAX_SESSION_JOB_NAME_LENGTH, SESSION_JOB_STATE_CONFIGMAP_SUFFIX } from '../../src/api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../../src/api/flink-session-job-spec.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { DEFAULT_SESSION_CLUSTER_NAME, flinkSessionJob } from '../../src/api/flink-session-job-builder.js';
import { validateSessionJobSpecSchema, validateSessionJobStatusSchema } from '../../src/api/schema-validator.js';
import { sessionJobStateConfigMapName, stateConfigMapName } from '../../src/state/state-store.js';
import { DERIVED_NAME_PATTERNS } from '../../src/api/spec-validation.js';

const CORPUS = fileURLToPath(new URL('./invalid-session-jobs/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./session-job-fixtures/', import.meta.url));
const corpusFiles = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.yaml'))
  .sort();

type Resource = { apiVersion?: string; kind?: string; metadata: { name?: string; namespace?: string }; spec: Record<string, unknown> };

test('the invalid session-job corpus covers every rule (at least 20 cases)', () => {
  assert.ok(corpusFiles.length >= 20, `${corpusFiles.length} cases`);
});

for (const file of corpusFiles) {
  test(`invalid session job ${file} gets exactly its documented message`, () => {
    const doc = parseYaml(readFileSync(join(CORPUS, file), 'utf8')) as {
      expect: string[];
      previousSpec?: FlinkSessionJobSpec;
      sessionCluster?: { metadata: { name: string }; spec: FlinkDeploymentSpec };
      allowedJarSchemes?: string[];
      sessionJob: { metadata: { name?: string; namespace?: string }; spec: FlinkSessionJobSpec };
    };
    assert.ok(doc.expect.length > 0);
    const context: SessionJobValidationContext = {
      ...(doc.sessionCluster ? { sessionCluster: doc.sessionCluster } : {}),
      ...(doc.previousSpec ? { previous: { spec: doc.previousSpec } } : {}),
      ...(doc.allowedJarSchemes ? { allowedJarSchemes: doc.allowedJarSchemes } : {}),
    };
    const errors = validateFlinkSessionJob(doc.sessionJob, context);
    assert.equal(formatFieldErrors(errors), doc.expect.join('\n'));
    for (const e of errors) assert.match(e.message, /; /, `${e.field}: the message says how to fix it`);
  });
}

function loadFixtureDocuments(): Array<{ file: string; resource: Resource }> {
  const out: Array<{ file: string; resource: Resource }> = [];
  for (const file of readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(FIXTURES, file), 'utf8'))) {
      const resource = doc.toJS() as Resource | null;
      if (resource) out.push({ file, resource });
    }
  }
  return out;
}

test('the fixture session jobs validate against the session clusters they name', () => {
  // The session-job fixtures (session-job-fixtures/README.md): each job validates against the session cluster it names.
  const documents = loadFixtureDocuments();
  const clusters = new Map(documents.filter((d) => d.resource.kind === 'FlinkDeployment').map((d) => [d.resource.metadata.name, d.resource]));
  const jobs = documents.filter((d) => d.resource.kind === 'FlinkSessionJob');
  assert.equal(jobs.length, 3);
  for (const { file, resource } of jobs) {
    const spec = resource.spec as FlinkSessionJobSpec;
    assert.deepEqual(validateSessionJobSpecSchema(spec), [], `${file}: schema`);
    assert.deepEqual(validateFlinkSessionJob({ metadata: resource.metadata, spec }), [], `${file}: alone`);
    const cluster = clusters.get(spec.deploymentName);
    assert.ok(cluster, `${file}: names ${spec.deploymentName}`);
    const clusterSpec = cluster.spec as FlinkDeploymentSpec;
    assert.deepEqual(validateFlinkDeployment({ metadata: cluster.metadata, spec: clusterSpec }), [], `${file}: its session cluster`);
    assert.deepEqual(
      validateFlinkSessionJob({ metadata: resource.metadata, spec }, { sessionCluster: { metadata: cluster.metadata, spec: clusterSpec } }),
      [],
      file,
    );
  }
});

test('the builder: its default validates, also on the session cluster the FlinkDeployment builder makes; v1 and v1beta1 objects', () => {
  const cluster = flinkDeployment(DEFAULT_SESSION_CLUSTER_NAME).withoutJob().build();
  const job = flinkSessionJob('orders').inNamespace('team-a').withJob({ parallelism: 4 }).withGeneration(2).withFinalizers('x/y');
  const v1 = job.build();
  assert.equal(v1.apiVersion, 'flink.apache.org/v1');
  assert.equal(v1.kind, 'FlinkSessionJob');
  assert.deepEqual(v1.metadata, { name: 'orders', namespace: 'team-a', generation: 2, finalizers: ['x/y'] });
  assert.equal(v1.spec.deploymentName, DEFAULT_SESSION_CLUSTER_NAME);
  assert.equal(v1.spec.job?.parallelism, 4);
  assert.equal(v1.spec.job?.upgradeMode, 'savepoint', 'the rest of the default job is kept');
  assert.deepEqual(validateFlinkSessionJob(v1), []);
  assert.deepEqual(validateFlinkSessionJob(v1, { sessionCluster: cluster }), []);
  const beta = job.withLegacyStatus({ lifecycleState: 'STABLE', reconciliationStatus: { state: 'DEPLOYED' } }).buildV1beta1();
  assert.equal(beta.apiVersion, 'flink.apache.org/v1beta1');
  assert.deepEqual(beta.spec, v1.spec);
  assert.deepEqual(validateSessionJobStatusSchema(beta.status, 'v1beta1'), []);
  assert.notEqual(job.build().spec, job.build().spec, 'every build is a fresh copy');
  const moved = flinkSessionJob('orders').onCluster('other').withFlinkConfiguration({ 'pipeline.name': 'o' }).build();
  assert.equal(moved.spec.deploymentName, 'other');
  assert.deepEqual(moved.spec.flinkConfiguration, { 'pipeline.name': 'o' });
});

test('status schemas: v1 takes stateRef, v1beta1 also the legacy fields; v1 has no place for them', () => {
  const status = { lifecycleState: 'STABLE', jobStatus: { state: 'RUNNING', jobId: 'j' }, stateRef: { configMapName: 'orders.sessionjob-state', revision: 3 } };
  assert.deepEqual(validateSessionJobStatusSchema(status, 'v1'), []);
  assert.deepEqual(validateSessionJobStatusSchema({ ...status, reconciliationStatus: { state: 'UPGRADING' } }, 'v1beta1'), []);
  const bad = validateSessionJobStatusSchema({ lifecycleState: 'RUNNING' }, 'v1');
  assert.deepEqual(
    bad.map((e) => e.field),
    ['status.lifecycleState'],
  );
});

test(`session job names up to ${MAX_SESSION_JOB_NAME_LENGTH} characters pass, one more fails; dots are allowed (a DNS-1123 subdomain)`, () => {
  assert.equal(MAX_SESSION_JOB_NAME_LENGTH, 46);
  const ok = 'a'.repeat(MAX_SESSION_JOB_NAME_LENGTH);
  assert.equal(sessionJobStateConfigMapName(ok).length, 63);
  assert.deepEqual(validateFlinkSessionJob(flinkSessionJob(ok).build()), []);
  assert.deepEqual(
    validateFlinkSessionJob(flinkSessionJob(`${ok}b`).build()).map((e) => e.field),
    ['metadata.name'],
  );
  assert.deepEqual(validateFlinkSessionJob(flinkSessionJob('team-a.orders').build()), []);
  assert.deepEqual(validateFlinkSessionJob(flinkSessionJob('1st-job').build()), [], 'unlike a FlinkDeployment, no Service is named after it');
});

test('the state ConfigMap name: <name>.sessionjob-state, never the name of any ConfigMap a FlinkDeployment has', () => {
  assert.equal(sessionJobStateConfigMapName('orders'), 'orders.sessionjob-state');
  assert.equal(SESSION_JOB_STATE_CONFIGMAP_SUFFIX, '.sessionjob-state');
  // The same name in one namespace: distinct.
  assert.notEqual(sessionJobStateConfigMapName('orders'), stateConfigMapName('orders'));
  // The collision a '-' suffix would allow: FlinkDeployment "x-sessionjob-state" has flink-config-x-sessionjob-state.
  const deploymentNames = ['x-sessionjob-state', 'orders', 'flink-config-x', 'a'.repeat(48)];
  const sessionJobNames = ['flink-config-x', 'x', 'orders', 'x-operator', 'team-a.orders'];
  for (const d of deploymentNames) {
    assert.deepEqual(validateFlinkDeployment({ metadata: { name: d }, spec: flinkDeployment(d).build().spec }), [], `${d} is a valid FlinkDeployment name`);
    for (const pattern of DERIVED_NAME_PATTERNS) {
      const derived = pattern.replace('%s', d);
      assert.ok(!derived.includes('.'), `${derived}: no name derived from a FlinkDeployment has a dot`);
      for (const s of sessionJobNames) assert.notEqual(sessionJobStateConfigMapName(s), derived);
    }
  }
});

test('jarURI: the operator configuration can allow more schemes (s3, http), and matching is case-insensitive', () => {
  const s3 = flinkSessionJob('orders').withJob({ jarURI: 's3://jobs/orders.jar' }).build();
  assert.deepEqual(
    validateFlinkSessionJob(s3).map((e) => e.field),
    ['spec.job.jarURI'],
  );
  assert.deepEqual(validateFlinkSessionJob(s3, { allowedJarSchemes: ['HTTPS', 'S3'] }), []);
  const http = flinkSessionJob('orders').withJob({ jarURI: 'HTTP://artifacts.example.com/orders.jar' }).build();
  assert.deepEqual(validateFlinkSessionJob(http, { allowedJarSchemes: ['http'] }), []);
  // No jarURI: the entry class comes from the session cluster classpath (the Apache operator submits its empty jar).
  const noJar = flinkSessionJob('orders')
    .withExactSpec({ deploymentName: 'sessions', job: { entryClass: 'com.example.Orders', parallelism: 1 } })
    .build();
  assert.deepEqual(validateFlinkSessionJob(noJar), []);
});

test('last-state needs no high availability for a session job, only checkpoints (Apache operator >= 1.10, FLINK-35414)', () => {
  // Source: apache/flink-kubernetes-operator AbstractJobReconciler.allowLastStateCancel (a FlinkSessionJob is always cancellable)
  // and docs/content/docs/custom-resource/job-management.md (last-state: "Checkpointing Enabled").
  const cluster = flinkDeployment('sessions').withoutJob().build();
  assert.equal(cluster.spec.flinkConfiguration?.['high-availability.type'], undefined);
  const job = flinkSessionJob('orders').onCluster('sessions').withJob({ upgradeMode: 'last-state' }).build();
  assert.deepEqual(validateFlinkSessionJob(job, { sessionCluster: cluster }), []);
  // The job's own configuration counts: it is overlaid on the cluster's.
  const bare = flinkDeployment('sessions').withoutJob().withExactSpec({ image: 'flink:1.20', flinkVersion: 'v1_20' }).build();
  const own = flinkSessionJob('orders').onCluster('sessions').withJob({ upgradeMode: 'last-state' });
  assert.equal(validateFlinkSessionJob(own.build(), { sessionCluster: bare }).length, 1);
  assert.deepEqual(
    validateFlinkSessionJob(own.withFlinkConfiguration({ execution: { checkpointing: { dir: 's3://c' } } }).build(), { sessionCluster: bare }),
    [],
  );
});

test('legal changes are not flagged: suspend alone, resume with a restart, an unchanged deploymentName', () => {
  const running = flinkSessionJob('orders').build();
  const suspended = flinkSessionJob('orders').withJob({ state: 'suspended' }).build();
  assert.deepEqual(validateFlinkSessionJob(suspended, { previous: running }), []);
  assert.deepEqual(validateFlinkSessionJob(flinkSessionJob('orders').withSpec({ restartNonce: 1 }).build(), { previous: suspended }), []);
  assert.deepEqual(validateFlinkSessionJob(running, { previous: running }), []);
});

test('never throws on a spec of the wrong shape', () => {
  for (const spec of [null, 'x', [], { job: 'x' }, { deploymentName: 3, job: { jarURI: 5 } }]) {
    const errors = validateFlinkSessionJob({ metadata: { name: 'orders' }, spec: spec as unknown as FlinkSessionJobSpec });
    assert.ok(errors.length > 0, JSON.stringify(spec));
  }
});
