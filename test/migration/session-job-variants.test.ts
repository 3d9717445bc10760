/**
 * The session-job variants (session-job-variants/README.md) are well-formed: each is a v1beta1
 * FlinkSessionJob whose spec this project accepts, whose status is one the Apache operator 1.13.0
 * can have written (only fields its CRD declares, lifecycleState as its CommonStatus computes it,
 * specs serialized as its SpecUtils.writeSpecWithMeta does), and that records the facts of its moment
 * a migration depends on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKPOINT_TYPES, SAVEPOINT_FORMAT_TYPES, SNAPSHOT_TRIGGER_TYPES, type LegacySavepoint } from '../../src/api/flink-deployment-status.js';
import { FLINK_SESSION_JOB_FINALIZER } from '../../src/api/flink-session-job.js';
import { DEFAULT_SESSION_CLUSTER_NAME } from '../../src/api/flink-session-job-builder.js';
import { FlinkSessionJobSpecSchema, SessionJobJobSpecSchema, type FlinkSessionJobSpec } from '../../src/api/flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1beta1 } from '../../src/api/flink-session-job-status.js';
import { validateFlinkSessionJob } from '../../src/api/flink-session-job-validation.js';
import { LEGACY_SPEC_API_VERSION, parseLegacySpec, serializeLegacySpec, type LegacySpecEnvelope } from '../../src/api/legacy-spec-codec.js';
import { validateFlinkDeployment } from '../../src/api/spec-validation.js';
import { validateSessionJobSpecSchema, validateSessionJobStatusSchema } from '../../src/api/schema-validator.js';
import {
  APACHE_OPERATOR_SOURCE,
  SESSION_JOB_VARIANT_DIR,
  SESSION_JOB_VARIANT_MOMENTS,
  SESSION_JOB_VARIANTS,
  loadSessionJobVariant,
  variantSessionCluster,
  type SessionJobVariant,
  type SessionJobVariantName,
} from './session-job-variants.js';

// ---- what the Apache operator can write ----

/**
 * The status fields the Apache operator's FlinkSessionJob CRD declares (1.13.0,
 * helm/flink-kubernetes-operator/crds/flinksessionjobs.flink.apache.org-v1.yml); anything else a
 * real API server would prune, so an Apache-written status cannot carry it. `true` = a leaf.
 */
type Shape = { [key: string]: true | Shape | [Shape] };
const APACHE_SAVEPOINT: Shape = { formatType: true, location: true, timeStamp: true, triggerNonce: true, triggerType: true };
const APACHE_STATUS_SHAPE: Shape = {
  error: true,
  lifecycleState: true,
  observedGeneration: true,
  jobStatus: {
    jobId: true,
    jobName: true,
    startTime: true,
    state: true,
    updateTime: true,
    upgradeSavepointPath: true,
    savepointInfo: {
      formatType: true,
      lastPeriodicSavepointTimestamp: true,
      lastSavepoint: APACHE_SAVEPOINT,
      savepointHistory: [APACHE_SAVEPOINT],
      triggerId: true,
      triggerTimestamp: true,
      triggerType: true,
    },
    checkpointInfo: {
      formatType: true,
      lastCheckpoint: { formatType: true, timeStamp: true, triggerNonce: true, triggerType: true },
      lastPeriodicCheckpointTimestamp: true,
      triggerId: true,
      triggerTimestamp: true,
      triggerType: true,
    },
  },
  reconciliationStatus: { lastReconciledSpec: true, lastStableSpec: true, reconciliationTimestamp: true, state: true },
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Paths in `value` that `shape` does not declare. */
function undeclared(value: unknown, shape: Shape, path: string): string[] {
  if (!isObject(value)) return [];
  const out: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const child = shape[key];
    if (child === undefined) out.push(`${path}.${key}`);
    else if (Array.isArray(child)) (Array.isArray(inner) ? inner : []).forEach((item, i) => out.push(...undeclared(item, child[0], `${path}.${key}[${i}]`)));
    else if (child !== true) out.push(...undeclared(inner, child, `${path}.${key}`));
  }
  return out;
}

/** Every value anywhere in `value` that is null (the API server prunes nulls: a status read back has none). */
function nullPaths(value: unknown, path: string): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}

/** A lastReconciledSpec / lastStableSpec string, decoded with the FlinkDeployment codec (the envelope is the same for session jobs). */
interface DecodedSpec {
  envelope: LegacySpecEnvelope;
  spec: FlinkSessionJobSpec;
}
function decodeSpec(json: string, field: string, variant: SessionJobVariant): DecodedSpec {
  const envelope = parseLegacySpec(json, field, `default/${variant.name}`);
  // parseLegacySpec types it as a FlinkDeploymentSpec (assignable: every field of both is optional); it is the stored session-job spec.
  return { envelope, spec: envelope.spec };
}

function reconciledSpecOf(variant: SessionJobVariant): DecodedSpec | undefined {
  const json = variant.object.status?.reconciliationStatus?.lastReconciledSpec;
  return json === undefined ? undefined : decodeSpec(json, 'status.reconciliationStatus.lastReconciledSpec', variant);
}
function stableSpecOf(variant: SessionJobVariant): DecodedSpec | undefined {
  const json = variant.object.status?.reconciliationStatus?.lastStableSpec;
  return json === undefined ? undefined : decodeSpec(json, 'status.reconciliationStatus.lastStableSpec', variant);
}

/**
 * The lifecycle state the Apache operator writes for a session-job status: api/status/
 * CommonStatus.getLifecycleState (1.13.0, L68-123), without DELETING/DELETED and the
 * FlinkDeployment-only branch.
 */
function apacheLifecycleState(status: FlinkSessionJobStatusV1beta1, reconciled: FlinkSessionJobSpec | undefined): string {
  const rs = status.reconciliationStatus ?? {};
  if (rs.lastReconciledSpec === undefined) return status.error ? 'FAILED' : 'CREATED';
  const state = rs.state ?? 'UPGRADING';
  if (state === 'UPGRADING' || state === 'ROLLING_BACK') return state;
  if (reconciled?.job?.state === 'suspended') return 'SUSPENDED';
  if (status.jobStatus?.state === 'FAILED') return 'FAILED';
  if (state === 'ROLLED_BACK') return 'ROLLED_BACK';
  return rs.lastStableSpec !== undefined && rs.lastStableSpec === rs.lastReconciledSpec ? 'STABLE' : 'DEPLOYED';
}

/** What the decoded reconciled spec is expected to be: the spec as Jackson writes it back (flinkConfiguration {} when unset), with `job` overrides. */
function asReconciled(spec: FlinkSessionJobSpec, job: Partial<NonNullable<FlinkSessionJobSpec['job']>>): FlinkSessionJobSpec {
  return { ...structuredClone(spec), flinkConfiguration: structuredClone(spec.flinkConfiguration ?? {}), job: { ...structuredClone(spec.job), ...job } };
}

const JOB_ID = /^[0-9a-f]{32}$/;
const EPOCH_MS_STRING = /^\d{13}$/;
/** Flink's savepoint directory name: savepoint-<first 6 hex of the job id>-<12 random hex>. */
const SAVEPOINT_PATH = /^s3:\/\/flink\/savepoints\/savepoint-[0-9a-f]{6}-[0-9a-f]{12}$/;
/** A retained checkpoint: <execution.checkpointing.dir>/<job id>/chk-<n>. */
const CHECKPOINT_PATH = /^s3:\/\/flink\/checkpoints\/[0-9a-f]{32}\/chk-\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The story of every variant starts here (README). */
const CREATED_AT = Date.parse('2026-07-14T06:00:00Z');

// ---- the set ----

test('the directory holds exactly the listed variants, and the README has a row for each', () => {
  const files = readdirSync(SESSION_JOB_VARIANT_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  assert.deepEqual(files, SESSION_JOB_VARIANTS.map((n) => `${n}.yaml`).sort());
  const readme = readFileSync(join(SESSION_JOB_VARIANT_DIR, 'README.md'), 'utf8');
  const rows = readme.split('\n').filter((l) => /^\| [a-z-]+\.yaml \|/.test(l));
  assert.deepEqual(
    rows.map((l) => l.split('|')[1].trim()),
    SESSION_JOB_VARIANTS.map((n) => `${n}.yaml`),
    'one row per variant, in SESSION_JOB_VARIANTS order',
  );
  assert.ok(readme.includes(APACHE_OPERATOR_SOURCE.commit));
});

test('the session cluster they run on is a valid session FlinkDeployment with FlinkStateSnapshot resources off', () => {
  const cluster = variantSessionCluster();
  assert.equal(cluster.metadata.name, DEFAULT_SESSION_CLUSTER_NAME);
  assert.equal(cluster.spec.job, undefined, 'a session cluster has no job');
  assert.deepEqual(validateFlinkDeployment({ metadata: cluster.metadata, spec: cluster.spec }), []);
  assert.equal(cluster.spec.flinkConfiguration?.['kubernetes.operator.snapshot.resource.enabled'], 'false');
  assert.notEqual(variantSessionCluster(), variantSessionCluster(), 'a fresh object each time');
});

test('loadSessionJobVariant returns a fresh object on every call', () => {
  const a = loadSessionJobVariant('running-stable');
  a.object.spec.deploymentName = 'changed';
  assert.equal(loadSessionJobVariant('running-stable').object.spec.deploymentName, DEFAULT_SESSION_CLUSTER_NAME);
});

// ---- every variant ----

for (const name of SESSION_JOB_VARIANTS) {
  const moment = SESSION_JOB_VARIANT_MOMENTS[name];

  test(`${name}: a v1beta1 FlinkSessionJob as the API server stores it (${moment})`, () => {
    const v = loadSessionJobVariant(name);
    const { metadata, spec } = v.object;
    assert.equal(v.object.apiVersion, 'flink.apache.org/v1beta1');
    assert.equal(v.object.kind, 'FlinkSessionJob');
    assert.equal(metadata.namespace, 'default');
    assert.match(metadata.uid ?? '', UUID);
    assert.ok(Number.isInteger(metadata.generation) && metadata.generation! >= 1, 'generation');
    assert.deepEqual(metadata.finalizers, [FLINK_SESSION_JOB_FINALIZER]);
    assert.equal(metadata.resourceVersion, undefined, 'resourceVersion-free');
    assert.equal(Date.parse(String(metadata.creationTimestamp)), CREATED_AT);
    assert.equal(spec.deploymentName, DEFAULT_SESSION_CLUSTER_NAME);
    assert.equal(metadata.labels?.['target.session'], spec.deploymentName, 'the Apache webhook labels a session job with its cluster');

    const text = readFileSync(v.file, 'utf8');
    assert.ok(text.startsWith(`# ${name}: `), 'the header comment starts by naming the moment');
    assert.ok(text.includes(APACHE_OPERATOR_SOURCE.commit), 'the header cites the Apache commit');
    assert.ok(/A lossless migration keeps:/.test(text), 'the header says what a migration must keep');
  });

  test(`${name}: the spec passes schema and session-job validation, alone and on its session cluster`, () => {
    const { metadata, spec } = loadSessionJobVariant(name).object;
    assert.deepEqual(validateSessionJobSpecSchema(spec), []);
    assert.deepEqual(validateFlinkSessionJob({ metadata, spec }), []);
    const cluster = variantSessionCluster();
    assert.deepEqual(validateFlinkSessionJob({ metadata, spec }, { sessionCluster: { metadata: cluster.metadata, spec: cluster.spec } }), []);
  });

  test(`${name}: the status is one the Apache operator writes and this project's v1beta1 schema takes`, () => {
    const v = loadSessionJobVariant(name);
    const status = v.object.status;
    if (name === 'never-deployed') {
      assert.equal(status, undefined, 'no status while the session cluster is missing');
      return;
    }
    assert.ok(status, 'has a status');
    assert.deepEqual(validateSessionJobStatusSchema(status, 'v1beta1'), []);
    assert.deepEqual(undeclared(status, APACHE_STATUS_SHAPE, 'status'), [], 'only fields the Apache session-job CRD declares');
    assert.deepEqual(nullPaths(status, 'status'), [], 'no nulls: the API server prunes them');

    const reconciled = reconciledSpecOf(v);
    assert.equal(status.lifecycleState, apacheLifecycleState(status, reconciled?.spec), 'lifecycleState as CommonStatus.getLifecycleState computes it');
    if (reconciled)
      assert.equal(status.observedGeneration, v.object.metadata.generation, 'written with lastReconciledSpec (serializeAndSetLastReconciledSpec)');

    // Defaults every Apache status has (JobStatus/SavepointInfo/CheckpointInfo field initialisers, primitive longs).
    const job = status.jobStatus!;
    assert.ok(Array.isArray(job.savepointInfo?.savepointHistory));
    assert.ok(Number.isInteger(job.savepointInfo?.lastPeriodicSavepointTimestamp));
    assert.ok(Number.isInteger(job.checkpointInfo?.lastPeriodicCheckpointTimestamp));
    assert.ok(Number.isInteger(status.reconciliationStatus?.reconciliationTimestamp));
    assert.ok(status.reconciliationStatus!.reconciliationTimestamp! > CREATED_AT);
  });

  test(`${name}: job ids, snapshot paths, timestamps and trigger fields are shaped as Flink and the Apache operator write them`, () => {
    const job = loadSessionJobVariant(name).object.status?.jobStatus;
    if (!job) return;
    if (job.jobId !== undefined) assert.match(job.jobId, JOB_ID);
    for (const t of [job.startTime, job.updateTime]) if (t !== undefined) assert.match(t, EPOCH_MS_STRING, 'epoch ms as a string');
    if (job.upgradeSavepointPath !== undefined)
      assert.ok(SAVEPOINT_PATH.test(job.upgradeSavepointPath) || CHECKPOINT_PATH.test(job.upgradeSavepointPath), job.upgradeSavepointPath);

    const sp = job.savepointInfo!;
    const history: LegacySavepoint[] = sp.savepointHistory ?? [];
    for (const entry of [...history, ...(sp.lastSavepoint ? [sp.lastSavepoint] : [])]) {
      assert.match(entry.location ?? '', SAVEPOINT_PATH);
      assert.ok(Number.isInteger(entry.timeStamp) && entry.timeStamp! > CREATED_AT, 'epoch ms number');
      assert.ok((SNAPSHOT_TRIGGER_TYPES as readonly string[]).includes(entry.triggerType ?? ''));
      assert.ok((SAVEPOINT_FORMAT_TYPES as readonly string[]).includes(entry.formatType ?? ''));
      assert.equal(entry.triggerNonce !== undefined, entry.triggerType === 'MANUAL', 'only a MANUAL savepoint records its nonce');
    }
    const times = history.map((h) => h.timeStamp!);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      'history oldest first (SavepointInfo.updateLastSavepoint appends)',
    );
    assert.deepEqual(sp.lastSavepoint, history.at(-1), 'lastSavepoint is the newest history entry');
    const periodic = history.filter((h) => h.triggerType === 'PERIODIC').at(-1);
    assert.equal(sp.lastPeriodicSavepointTimestamp, periodic?.timeStamp ?? 0);

    const cp = job.checkpointInfo!;
    if (cp.lastCheckpoint) {
      assert.ok((CHECKPOINT_TYPES as readonly string[]).includes(cp.lastCheckpoint.formatType ?? ''));
      if (cp.lastCheckpoint.triggerType === 'PERIODIC') assert.equal(cp.lastPeriodicCheckpointTimestamp, cp.lastCheckpoint.timeStamp);
    }
    for (const pending of [sp, cp]) {
      if (pending.triggerId === undefined) {
        assert.equal(pending.triggerTimestamp, undefined, 'the trigger fields are set and reset together');
        continue;
      }
      assert.match(pending.triggerId, JOB_ID, "Flink's trigger id");
      assert.ok(Number.isInteger(pending.triggerTimestamp));
      assert.ok(pending.triggerType !== undefined && pending.formatType !== undefined);
      assert.equal(job.state, 'RUNNING', 'the Apache operator triggers snapshots of running jobs only (SnapshotUtils.shouldTriggerSnapshot)');
      assert.ok(job.jobId, 'a pending snapshot names the job it is taken of');
    }
  });

  test(`${name}: lastReconciledSpec and lastStableSpec are {spec, resource_metadata} JSON as Jackson writes it, decoding to valid session-job specs`, () => {
    const v = loadSessionJobVariant(name);
    const rs = v.object.status?.reconciliationStatus;
    for (const [field, json] of [
      ['lastReconciledSpec', rs?.lastReconciledSpec],
      ['lastStableSpec', rs?.lastStableSpec],
    ] as const) {
      if (json === undefined) continue;
      const { envelope, spec } = decodeSpec(json, `status.reconciliationStatus.${field}`, v);
      assert.equal(envelope.variant, 'resource_metadata', `${field}: the 1.10+ envelope (no metadata.generation)`);
      assert.equal(envelope.apiVersion, LEGACY_SPEC_API_VERSION);
      assert.equal(typeof envelope.firstDeployment, 'boolean');
      assert.deepEqual(validateSessionJobSpecSchema(spec), [], `${field} decodes to a FlinkSessionJobSpec`);
      assert.equal(spec.deploymentName, v.object.spec.deploymentName, `${field}: deploymentName never changes`);

      const raw = JSON.parse(json) as { spec: Record<string, unknown>; resource_metadata: Record<string, unknown> };
      assert.deepEqual(Object.keys(raw), ['spec', 'resource_metadata']);
      assert.deepEqual(Object.keys(raw.resource_metadata), ['apiVersion', 'firstDeployment']);
      assert.deepEqual(
        new Set(Object.keys(raw.spec)),
        new Set(Object.keys(FlinkSessionJobSpecSchema.properties)),
        `${field}: every spec field, null when unset`,
      );
      assert.deepEqual(
        new Set(Object.keys(raw.spec['job'] as object)),
        new Set(Object.keys(SessionJobJobSpecSchema.properties)),
        `${field}: every JobSpec field`,
      );
      // Jackson's field order is the order the codec writes, so encoding the decoded spec gives the string back, nulls aside.
      const withoutNulls = JSON.stringify(JSON.parse(json, (_k, value: unknown) => (value === null ? undefined : value)));
      assert.equal(serializeLegacySpec({ spec: envelope.spec, apiVersion: LEGACY_SPEC_API_VERSION, firstDeployment: envelope.firstDeployment! }), withoutNulls);
    }
  });
}

// ---- the facts of each moment ----

function parts(name: SessionJobVariantName) {
  const v = loadSessionJobVariant(name);
  const status = v.object.status!;
  return { v, status, job: status.jobStatus!, rs: status.reconciliationStatus!, reconciled: reconciledSpecOf(v), stable: stableSpecOf(v) };
}

test('running-stable: the upgrade savepoint stays upgradeSavepointPath after the redeploy; then a periodic savepoint', () => {
  const { v, job, rs, reconciled } = parts('running-stable');
  const history = job.savepointInfo!.savepointHistory!;
  assert.deepEqual(
    history.map((h) => h.triggerType),
    ['UPGRADE', 'PERIODIC'],
  );
  assert.equal(job.upgradeSavepointPath, history[0].location);
  assert.equal(rs.state, 'DEPLOYED');
  assert.equal(rs.lastReconciledSpec, rs.lastStableSpec);
  assert.equal(reconciled!.envelope.firstDeployment, false, 'upgraded once');
  assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, {}), 'the reconciled spec is the spec');
  assert.ok(rs.reconciliationTimestamp! < history[1].timeStamp!, 'a periodic savepoint does not touch reconciliationTimestamp');
});

for (const name of ['mid-upgrade-savepoint', 'mid-upgrade-submitting'] as const) {
  test(`${name}: the Apache operator records the NEW spec with job.state suspended while the desired state is running`, () => {
    const { v, job, rs, reconciled, stable } = parts(name);
    assert.equal(rs.state, 'UPGRADING');
    assert.equal(v.object.spec.job?.state, 'running');
    assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, { state: 'suspended' }), 'generation 2 target, suspended');
    assert.equal(reconciled!.envelope.firstDeployment, false);
    assert.equal(job.state, 'FINISHED', 'the old job was stopped with a savepoint');
    assert.equal(job.upgradeSavepointPath, job.savepointInfo?.lastSavepoint?.location);
    assert.equal(job.savepointInfo?.lastSavepoint?.triggerType, 'UPGRADE');
    assert.ok(job.savepointInfo.lastSavepoint.timeStamp! < rs.reconciliationTimestamp!, 'the savepoint was requested before the status was recorded');
    // The stable spec is generation 1 as first deployed: another jar, upgradeMode stateless, firstDeployment true.
    assert.notEqual(stable!.spec.job?.jarURI, v.object.spec.job?.jarURI);
    assert.equal(stable!.spec.job?.upgradeMode, 'stateless');
    assert.equal(stable!.spec.job?.state, 'running');
    assert.equal(stable!.envelope.firstDeployment, true);
    if (name === 'mid-upgrade-savepoint') assert.equal(job.jobId, undefined, 'no job exists between the stop and the redeploy');
    else assert.match(job.jobId ?? '', JOB_ID, 'the id of the job being submitted is recorded first');
  });
}

test('mid-upgrade-submitting is mid-upgrade-savepoint one step on: a job id and a newer reconciliationTimestamp, nothing else', () => {
  const before = parts('mid-upgrade-savepoint');
  const after = parts('mid-upgrade-submitting');
  assert.ok(after.rs.reconciliationTimestamp! > after.job.savepointInfo!.lastSavepoint!.timeStamp!);
  assert.equal(before.rs.lastReconciledSpec, after.rs.lastReconciledSpec);
  assert.equal(before.rs.lastStableSpec, after.rs.lastStableSpec);
  assert.equal(before.status.lifecycleState, after.status.lifecycleState);
});

test('suspended: stopped with an UPGRADE savepoint, DEPLOYED with a suspended spec that is also the stable one', () => {
  const { v, job, rs, reconciled } = parts('suspended');
  assert.equal(v.object.spec.job?.state, 'suspended');
  assert.equal(rs.state, 'DEPLOYED');
  assert.equal(rs.lastReconciledSpec, rs.lastStableSpec, 'a user suspend is marked stable');
  assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, {}));
  assert.equal(reconciled!.envelope.firstDeployment, true, 'never upgraded before the suspend');
  assert.equal(job.state, 'FINISHED');
  assert.equal(job.jobId, undefined);
  assert.equal(job.upgradeSavepointPath, job.savepointInfo?.lastSavepoint?.location);
  assert.equal(job.savepointInfo?.lastSavepoint?.triggerType, 'UPGRADE');
});

test('manual-savepoint-in-flight: a MANUAL trigger is pending and the reconciled nonce is still the previous one', () => {
  const { v, job, rs, reconciled } = parts('manual-savepoint-in-flight');
  const sp = job.savepointInfo!;
  assert.equal(sp.triggerType, 'MANUAL');
  assert.equal(sp.formatType, 'CANONICAL');
  assert.ok(sp.triggerTimestamp! > rs.reconciliationTimestamp!);
  assert.equal(v.object.spec.job?.savepointTriggerNonce, 2);
  assert.equal(reconciled!.spec.job?.savepointTriggerNonce, 1);
  assert.equal(sp.lastSavepoint?.triggerNonce, 1, 'the completed manual savepoint answered nonce 1');
  assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, { savepointTriggerNonce: 1, upgradeMode: 'stateless' }));
  assert.equal(rs.lastReconciledSpec, rs.lastStableSpec);
  assert.equal(job.upgradeSavepointPath, undefined, 'never upgraded, no initialSavepointPath');
});

test('last-state-running: restored from a checkpoint, recorded as a savepoint restore; periodic checkpoints recorded', () => {
  const { v, job, reconciled } = parts('last-state-running');
  assert.equal(v.object.spec.job?.upgradeMode, 'last-state');
  assert.equal(reconciled!.spec.job?.upgradeMode, 'savepoint', 'the restore mode of a session job last-state upgrade');
  assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, { upgradeMode: 'savepoint' }));
  assert.match(job.upgradeSavepointPath ?? '', CHECKPOINT_PATH);
  assert.ok(!job.upgradeSavepointPath!.includes(job.jobId!), 'the checkpoint of the replaced job');
  assert.equal(job.checkpointInfo?.lastCheckpoint?.triggerType, 'PERIODIC');
  assert.equal(job.checkpointInfo?.lastCheckpoint?.formatType, 'FULL');
  assert.deepEqual(job.savepointInfo?.savepointHistory, [], 'the cancel took no savepoint');
});

test('failed-job: FAILED with the failure as FlinkResourceException JSON; an unset parallelism is recorded as 0', () => {
  const { v, status, job, reconciled } = parts('failed-job');
  assert.equal(job.state, 'FAILED');
  const error = JSON.parse(status.error!) as { type: string; message: string; additionalMetadata: object; throwableList: { type: string; message: string }[] };
  assert.deepEqual(Object.keys(error), ['type', 'message', 'additionalMetadata', 'throwableList']);
  assert.equal(error.type, 'org.apache.flink.util.SerializedThrowable');
  assert.match(error.message, /^Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy\(maxNumberRestartAttempts=3, backoffTimeMS=10000\)$/);
  assert.equal(error.throwableList.length, 1);
  assert.match(job.upgradeSavepointPath ?? '', CHECKPOINT_PATH);
  assert.ok(job.upgradeSavepointPath!.includes(job.jobId!), 'the latest checkpoint of the failed job itself');

  assert.equal(v.object.spec.job?.parallelism, undefined);
  assert.equal(reconciled!.spec.job?.parallelism, 0, 'JobSpec.parallelism is a Java int');
  assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, { parallelism: 0, upgradeMode: 'stateless' }));
  assert.deepEqual(
    validateFlinkSessionJob({ metadata: v.object.metadata, spec: reconciled!.spec }).map((e) => e.field),
    ['spec.job.parallelism'],
    'taken literally, the recorded 0 is an invalid parallelism: a migration must read it as unset',
  );
});

test('first-deploy-failed: only the attempt is recorded (suspended, firstDeployment true), with its job id and the error', () => {
  const { v, status, job, rs, reconciled } = parts('first-deploy-failed');
  assert.equal(rs.state, 'UPGRADING');
  assert.equal(rs.lastStableSpec, undefined, 'nothing was ever stable');
  assert.equal(reconciled!.envelope.firstDeployment, true);
  assert.deepEqual(reconciled!.spec, asReconciled(v.object.spec, { state: 'suspended', upgradeMode: 'stateless' }));
  assert.match(job.jobId ?? '', JOB_ID);
  assert.equal(job.state, undefined, 'never observed');
  const error = JSON.parse(status.error!) as { type: string; message: string; throwableList: { type: string; message: string }[] };
  assert.equal(error.type, 'org.apache.flink.kubernetes.operator.exception.ReconciliationException');
  assert.equal(error.message, `java.io.FileNotFoundException: ${v.object.spec.job?.jarURI}`);
  assert.deepEqual(
    error.throwableList.map((t) => t.type),
    ['java.io.FileNotFoundException'],
  );
});
