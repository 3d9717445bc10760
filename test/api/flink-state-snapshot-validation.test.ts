/**
 * FlinkStateSnapshot validation (src/api/flink-state-snapshot-validation.ts): one case per rule
 * with its exact message, the specs the Apache operator accepts (and its documentation shows),
 * the defaults, the builder, and the status schema.
 *
 * Sources (apache/flink-kubernetes-operator @ 6e9caeb4): validation/DefaultValidator.java
 * (validateStateSnapshot), api/spec/FlinkStateSnapshotSpec.java and SavepointSpec.java (defaults),
 * controller/FlinkStateSnapshotController.java (backoffLimit: `backoffLimit >= 0 && failures > backoffLimit`),
 * docs/content/docs/custom-resource/snapshots.md and examples/snapshot/ (the shapes of the accepted specs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { formatFieldErrors } from '../../src/api/spec-validation.js';
import {
  validateFlinkStateSnapshot,
  validateStateSnapshotSpecSchema,
  validateStateSnapshotStatusSchema,
  type StateSnapshotValidationContext,
} from '../../src/api/flink-state-snapshot-validation.js';
import {
  backoffLimitOf,
  DEFAULT_SNAPSHOT_BACKOFF_LIMIT,
  savepointSpecWithDefaults,
  type FlinkStateSnapshotSpec,
} from '../../src/api/flink-state-snapshot-spec.js';
import { snapshotStateOf, type FlinkStateSnapshotStatus } from '../../src/api/flink-state-snapshot-status.js';
import { snapshotTypeOf } from '../../src/api/flink-state-snapshot.js';
import { DEFAULT_SNAPSHOT_TARGET_NAME, flinkStateSnapshot } from '../../src/api/flink-state-snapshot-builder.js';

const orders = { kind: 'FlinkDeployment', name: 'orders' } as const;

interface Case {
  rule: string;
  spec: unknown;
  status?: FlinkStateSnapshotStatus;
  context?: StateSnapshotValidationContext;
  expect: string[];
}

/** One case per rule, in the order the validator reports them; the messages are exact. */
const CASES: Case[] = [
  {
    rule: 'schema: jobReference.kind is FlinkDeployment or FlinkSessionJob',
    spec: { jobReference: { kind: 'Deployment', name: 'orders' }, savepoint: {} },
    expect: ['spec.jobReference.kind: must be one of FlinkDeployment, FlinkSessionJob, got "Deployment"; use one of those values'],
  },
  {
    rule: 'schema: savepoint.formatType is CANONICAL, NATIVE or UNKNOWN',
    spec: { jobReference: orders, savepoint: { formatType: 'native' } },
    expect: ['spec.savepoint.formatType: must be one of CANONICAL, NATIVE, UNKNOWN, got "native"; use one of those values'],
  },
  {
    rule: 'schema: backoffLimit is a whole number',
    spec: { jobReference: orders, savepoint: {}, backoffLimit: '3' },
    expect: ['spec.backoffLimit: must be a whole number, got "3"; remove the quotes (3)'],
  },
  {
    rule: 'schema: the spec is a map',
    spec: 'savepoint',
    expect: ['spec: must be a map of fields, got "savepoint"; write the spec as YAML fields (jobReference, savepoint or checkpoint, backoffLimit)'],
  },
  {
    rule: 'exactly one of savepoint and checkpoint: neither',
    spec: { jobReference: orders },
    expect: ['spec: needs exactly one of savepoint and checkpoint, got neither; add savepoint: {} to take a savepoint, or checkpoint: {} to take a checkpoint'],
  },
  {
    rule: 'exactly one of savepoint and checkpoint: both',
    spec: { jobReference: orders, savepoint: {}, checkpoint: {} },
    expect: ['spec: needs exactly one of savepoint and checkpoint, got both; remove one of them (one FlinkStateSnapshot is one savepoint or one checkpoint)'],
  },
  {
    rule: 'a checkpoint cannot be recorded as existing',
    spec: { jobReference: orders, checkpoint: { alreadyExists: true } },
    expect: [
      'spec.checkpoint.alreadyExists: is not a checkpoint field: an existing checkpoint cannot be recorded, a new one would be taken; to record an existing savepoint use savepoint: {alreadyExists: true, path: <its location>}, to start a job from a checkpoint set its job.initialSavepointPath',
    ],
  },
  {
    rule: 'alreadyExists: true needs path',
    spec: { savepoint: { alreadyExists: true } },
    expect: [
      'spec.savepoint.path: is required with alreadyExists: true; set it to the location of the existing savepoint (e.g. s3://bucket/savepoints/savepoint-1a2b3c-4d5e6f7a8b9c), or set alreadyExists: false to take a new savepoint',
    ],
  },
  {
    rule: 'jobReference is required for a savepoint to take',
    spec: { savepoint: {} },
    expect: [
      'spec.jobReference: is required; set kind (FlinkDeployment or FlinkSessionJob) and name of the resource whose job the snapshot is of, in this namespace',
    ],
  },
  {
    rule: 'jobReference is required for a checkpoint',
    spec: { checkpoint: {} },
    expect: [
      'spec.jobReference: is required; set kind (FlinkDeployment or FlinkSessionJob) and name of the resource whose job the snapshot is of, in this namespace',
    ],
  },
  {
    rule: 'jobReference.kind is required',
    spec: { jobReference: { name: 'orders' }, savepoint: {} },
    expect: ['spec.jobReference.kind: is required; set it to FlinkDeployment or FlinkSessionJob'],
  },
  {
    rule: 'jobReference.name is required (also for an existing savepoint, when a reference is given)',
    spec: { jobReference: { kind: 'FlinkSessionJob', name: '' }, savepoint: { alreadyExists: true, path: 's3://b/sp-1' } },
    expect: ['spec.jobReference.name: is required; set it to the name of the FlinkDeployment or FlinkSessionJob in this namespace'],
  },
  {
    rule: 'the referenced resource exists (when the caller looked it up and the snapshot is not processed yet)',
    spec: { jobReference: { kind: 'FlinkSessionJob', name: 'clickstream' }, checkpoint: {} },
    context: { targetFound: false },
    expect: [
      'spec.jobReference: names FlinkSessionJob "clickstream", which does not exist in namespace "team-a"; create it, or point jobReference at an existing FlinkDeployment or FlinkSessionJob',
    ],
  },
  {
    rule: 'backoffLimit is at least -1',
    spec: { jobReference: orders, savepoint: {}, backoffLimit: -2 },
    expect: ['spec.backoffLimit: must be -1 or more, got -2; use -1 to retry without limit, 0 never to retry, or the number of retries'],
  },
];

for (const c of CASES) {
  test(`rule: ${c.rule}`, () => {
    const errors = validateFlinkStateSnapshot(
      { metadata: { name: 'snap', namespace: 'team-a' }, spec: c.spec as FlinkStateSnapshotSpec, ...(c.status ? { status: c.status } : {}) },
      c.context,
    );
    assert.equal(formatFieldErrors(errors), c.expect.join('\n'));
    for (const e of errors) assert.match(e.message, /; /, `${e.field}: the message says how to fix it`);
  });
}

test('specs the Apache operator accepts (its documentation and examples show these shapes) are accepted', () => {
  const specs = parseYaml(`
- backoffLimit: 1
  jobReference: { kind: FlinkDeployment, name: payments }
  savepoint: { alreadyExists: false, disposeOnDelete: true, formatType: CANONICAL, path: /flink-data/savepoints-payments }
- backoffLimit: 0
  jobReference: { kind: FlinkSessionJob, name: clickstream }
  checkpoint: {}
- jobReference: { kind: FlinkDeployment, name: payments }
  savepoint: {}
- savepoint: { alreadyExists: true, disposeOnDelete: false, path: 'file:///flink-data/savepoints/savepoint-0a1b2c-3d4e5f6a7b8c' }
- jobReference: { kind: FlinkDeployment, name: payments }
  savepoint: { formatType: NATIVE }
  backoffLimit: -1
`) as FlinkStateSnapshotSpec[];
  for (const spec of specs) {
    assert.deepEqual(validateFlinkStateSnapshot({ metadata: { name: 's', namespace: 'ns' }, spec }), [], JSON.stringify(spec));
    assert.deepEqual(validateFlinkStateSnapshot({ spec }, { targetFound: true }), [], `${JSON.stringify(spec)} with its target found`);
  }
});

test('an existing savepoint needs no jobReference and no target (the Apache validator returns before both checks)', () => {
  const existing = flinkStateSnapshot('imported')
    .withExactSpec({ savepoint: { alreadyExists: true, path: 's3://b/savepoint-1' } })
    .build();
  assert.deepEqual(validateFlinkStateSnapshot(existing, { targetFound: false }), []);
});

test('a missing target is an error only while the snapshot is not processed yet (no status, or TRIGGER_PENDING)', () => {
  const snapshot = flinkStateSnapshot('nightly').of('FlinkDeployment', 'gone').asCheckpoint();
  const fields = (status?: FlinkStateSnapshotStatus) =>
    validateFlinkStateSnapshot(status ? snapshot.withStatus(status).build() : snapshot.build(), { targetFound: false }).map((e) => e.field);
  assert.deepEqual(fields(), ['spec.jobReference']);
  assert.deepEqual(fields({ state: 'TRIGGER_PENDING' }), ['spec.jobReference']);
  assert.deepEqual(fields({}), ['spec.jobReference'], 'a status without state reads as TRIGGER_PENDING');
  for (const state of ['IN_PROGRESS', 'COMPLETED', 'FAILED', 'ABANDONED'] as const) assert.deepEqual(fields({ state }), [], state);
  assert.deepEqual(validateFlinkStateSnapshot(snapshot.build()), [], 'not looked up: skipped');
});

test('backoffLimit: -1 (no limit, the default), 0 (no retries) and any positive count are accepted', () => {
  for (const limit of [-1, 0, 1, 10]) assert.deepEqual(validateFlinkStateSnapshot(flinkStateSnapshot().withBackoffLimit(limit).build()), [], String(limit));
  assert.equal(backoffLimitOf({}), -1);
  assert.equal(DEFAULT_SNAPSHOT_BACKOFF_LIMIT, -1);
  assert.equal(backoffLimitOf({ backoffLimit: 0 }), 0);
});

test("the savepoint defaults are the Apache SavepointSpec's: CANONICAL, disposeOnDelete true, alreadyExists false", () => {
  assert.deepEqual(savepointSpecWithDefaults({}), { formatType: 'CANONICAL', disposeOnDelete: true, alreadyExists: false });
  assert.deepEqual(savepointSpecWithDefaults({ path: 's3://b/sp', formatType: 'NATIVE', disposeOnDelete: false, alreadyExists: true }), {
    path: 's3://b/sp',
    formatType: 'NATIVE',
    disposeOnDelete: false,
    alreadyExists: true,
  });
});

test('the builder: its default validates; savepoint and checkpoint replace each other; v1beta1 objects with status', () => {
  const built = flinkStateSnapshot('orders-backup').inNamespace('team-a').build();
  assert.equal(built.apiVersion, 'flink.apache.org/v1beta1');
  assert.equal(built.kind, 'FlinkStateSnapshot');
  assert.deepEqual(built.metadata, { name: 'orders-backup', namespace: 'team-a' });
  assert.deepEqual(built.spec, { jobReference: { kind: 'FlinkDeployment', name: DEFAULT_SNAPSHOT_TARGET_NAME }, savepoint: {} });
  assert.deepEqual(validateFlinkStateSnapshot(built), []);
  const builder = flinkStateSnapshot('s').of('FlinkSessionJob', 'clickstream').asCheckpoint();
  assert.deepEqual(builder.build().spec, { jobReference: { kind: 'FlinkSessionJob', name: 'clickstream' }, checkpoint: {} });
  assert.equal(snapshotTypeOf(builder.build().spec), 'CHECKPOINT');
  const savepoint = builder.asSavepoint({ formatType: 'NATIVE' }).asSavepoint({ disposeOnDelete: false }).build();
  assert.deepEqual(savepoint.spec.savepoint, { formatType: 'NATIVE', disposeOnDelete: false });
  assert.equal(savepoint.spec.checkpoint, undefined);
  assert.equal(snapshotTypeOf(savepoint.spec), 'SAVEPOINT');
  const existing = flinkStateSnapshot('imported').asExistingSavepoint('s3://b/savepoint-1').build();
  assert.deepEqual(existing.spec.savepoint, { path: 's3://b/savepoint-1', alreadyExists: true });
  const withStatus = flinkStateSnapshot().withStatus({ state: 'COMPLETED', path: 's3://b/savepoint-2', failures: 0 }).build();
  assert.deepEqual(withStatus.status, { state: 'COMPLETED', path: 's3://b/savepoint-2', failures: 0 });
  assert.notEqual(builder.build().spec, builder.build().spec, 'every build is a fresh copy');
  assert.equal(snapshotTypeOf({ savepoint: {}, checkpoint: {} }), undefined);
  assert.equal(snapshotTypeOf({}), undefined);
});

test('status schema: a status as the Apache operator writes it validates; a state outside its enum does not', () => {
  // Shape: api/status/FlinkStateSnapshotStatus.java; timestamps as DateTimeUtils.kubernetes (ISO instant); values made up.
  const status: FlinkStateSnapshotStatus = {
    state: 'COMPLETED',
    triggerId: '7b3f0c8e2d1a4f5b9c6e8d7a0b1c2d3e',
    triggerTimestamp: '2025-01-31T10:15:30.123Z',
    resultTimestamp: '2025-01-31T10:15:42.007Z',
    path: 's3://flink/savepoints/savepoint-a1b2c3-0123456789ab',
    error: '',
    failures: 0,
  };
  assert.deepEqual(validateStateSnapshotStatusSchema(status), []);
  assert.deepEqual(
    validateStateSnapshotStatusSchema({ state: 'RUNNING' }).map((e) => e.field),
    ['status.state'],
  );
  assert.equal(snapshotStateOf(undefined), 'TRIGGER_PENDING');
  assert.equal(snapshotStateOf({ state: 'FAILED' }), 'FAILED');
});

test('unknown fields are not schema errors (the API server prunes them), and nothing throws on a spec of the wrong shape', () => {
  assert.deepEqual(validateStateSnapshotSpecSchema({ jobReference: orders, savepoint: {}, extra: 1 }), []);
  for (const spec of [null, 'x', [], { savepoint: 'x' }, { jobReference: 'orders', checkpoint: [] }, { savepoint: { alreadyExists: 'yes' } }]) {
    const errors = validateFlinkStateSnapshot({ spec: spec as unknown as FlinkStateSnapshotSpec });
    assert.ok(errors.length > 0, JSON.stringify(spec));
  }
});
