import { reconciliationStateOfPhase } from '../../src/api/deployment-phase.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeLegacySessionJobStatus,
  decodeLegacyStatus,
  encodeLegacySessionJobStatus,
  encodeLegacyStatus,
  hasLegacyFields,
} from '../../src/api/legacy-status-codec.js';
import { LegacyStatusError, parseLegacySpec, serializeLegacySpec } from '../../src/api/legacy-spec-codec.js';
import type { FlinkDeploymentStatusV1beta1 } from '../../src/api/flink-deployment-status.js';
import { validateInternalStateSchema, validateStatusSchema } from '../../src/api/schema-validator.js';
import { loadSharedFixtures } from './shared-fixtures.js';
import { loadSessionJobVariant } from '../migration/session-job-variants.js';

const withStatus = loadSharedFixtures().filter((f) => f.status !== undefined);
const USER_KEYS = ['observedGeneration', 'lifecycleState', 'jobManagerDeploymentStatus', 'error', 'clusterInfo', 'taskManager', 'conditions'] as const;
const USER_JOB_KEYS = ['jobName', 'jobId', 'state', 'startTime', 'updateTime'] as const;

function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, dropNulls(v)]),
  );
}

test('the captures in the shared fixtures are all present (3 statuses)', () => {
  assert.deepEqual(
    withStatus.map((f) => f.file),
    ['status-cfk-flinkapplication-deployed.yaml', 'status-flinkdep-stable-blue-flink2.2.yaml', 'status-flinkdep-stable-green-after-savepoint-upgrade.yaml'],
  );
});

test('blue capture (current format): specs decode to objects, user-facing fields kept exactly', () => {
  const fx = withStatus.find((f) => f.file.includes('blue'))!;
  const { state, userStatus } = decodeLegacyStatus(fx.status!, fx.resource, 'p03-vehicle-alert-bg-blue-operator-state');
  assert.equal(reconciliationStateOfPhase(state.phase), 'DEPLOYED');
  assert.equal(state.reconciliationTimestamp, new Date(1784354370115).toISOString());
  assert.equal(state.lastReconciledSpec?.job?.upgradeMode, 'stateless', 'the reconciled spec records the mode actually used');
  assert.equal(state.lastReconciledSpec?.job?.args?.length, 16);
  assert.equal(state.lastReconciledSpec?.jobManager?.resource?.cpu, 0.5);
  assert.equal('restartNonce' in state.lastReconciledSpec, false, 'nulls are dropped');
  assert.equal('ephemeralStorage' in state.lastReconciledSpec.jobManager.resource, false);
  assert.deepEqual(state.lastStableSpec, state.lastReconciledSpec);
  assert.equal(state.firstDeployment, true);
  assert.equal(state.lastReconciledGeneration, 1, 'the current format carries no generation: observedGeneration is the reconciled one');
  assert.equal(state.lastStableGeneration, undefined);
  assert.equal(state.deployedJobId, '66f2185fc8ba08be40e161adeec74c37');
  assert.deepEqual(state.savepointHistory, []);
  assert.equal(state.lastPeriodicSavepointTimestamp, 0);
  assert.equal(state.lastPeriodicCheckpointTimestamp, 0);
  assert.equal(state.pendingSavepoint, undefined);
  assert.deepEqual(userStatus, {
    clusterInfo: fx.status!.clusterInfo,
    conditions: fx.status!.conditions,
    jobManagerDeploymentStatus: 'READY',
    jobStatus: {
      jobId: '66f2185fc8ba08be40e161adeec74c37',
      jobName: 'p03-vehicle-alert',
      startTime: '1784354379909',
      state: 'RUNNING',
      updateTime: '1784354404067',
    },
    lifecycleState: 'STABLE',
    observedGeneration: 1,
    taskManager: { labelSelector: 'component=taskmanager,app=p03-vehicle-alert-bg-blue', replicas: 1 },
    stateRef: { configMapName: 'p03-vehicle-alert-bg-blue-operator-state', revision: state.revision },
  });
});

test('green capture: upgradeSavepointPath moves to the state', () => {
  const fx = withStatus.find((f) => f.file.includes('green'))!;
  const { state, userStatus } = decodeLegacyStatus(fx.status!, fx.resource, 'cm');
  assert.equal(state.upgradeSavepointPath, 's3://flink/savepoints/savepoint-66f218-64c1320e7a1f');
  assert.equal(state.lastReconciledSpec?.job?.initialSavepointPath, 's3://flink/savepoints/savepoint-66f218-64c1320e7a1f');
  assert.equal(state.lastReconciledSpec?.job?.upgradeMode, 'savepoint');
  assert.equal('upgradeSavepointPath' in (userStatus.jobStatus ?? {}), false);
});

test('CMF capture (old format with metadata.generation): generations and per-spec firstDeployment, CMF-only keys dropped', () => {
  const fx = withStatus.find((f) => f.file.includes('cfk'))!;
  const { state, userStatus } = decodeLegacyStatus(fx.status!, fx.resource, 'cm');
  assert.equal(state.lastReconciledGeneration, 6);
  assert.equal(state.lastStableGeneration, 2);
  assert.equal(state.firstDeployment, false);
  assert.equal(state.lastStableFirstDeployment, true);
  assert.equal(state.lastReconciledSpec?.jobManager?.resource?.cpu, 2, '"cpu":2.0 reads as 2');
  assert.equal(state.lastStableSpec?.jobManager?.resource?.cpu, 1);
  assert.deepEqual(state.lastReconciledSpec?.job?.args, []);
  assert.equal(state.reconciliationTimestamp, '2024-11-07T09:09:12.044Z');
  assert.equal(userStatus.lifecycleState, 'DEPLOYED');
  assert.equal(userStatus.jobStatus?.state, 'RECONCILING');
  assert.equal('cfkInternalState' in userStatus, false);
  assert.equal('cmfSync' in userStatus, false);
});

for (const fx of withStatus) {
  test(`round trip of ${fx.file}: decode(encode(decode(x))) equals decode(x); specs and user fields survive encode`, () => {
    const decoded = decodeLegacyStatus(fx.status!, fx.resource, 'cm');
    const encoded = encodeLegacyStatus(decoded.state, decoded.userStatus);
    assert.deepEqual(decodeLegacyStatus(encoded, fx.resource, 'cm'), decoded);

    for (const key of USER_KEYS) assert.deepEqual(encoded[key], fx.status![key], key);
    for (const key of USER_JOB_KEYS) assert.deepEqual(encoded.jobStatus?.[key], fx.status!.jobStatus?.[key], `jobStatus.${key}`);
    assert.equal(encoded.jobStatus?.upgradeSavepointPath, fx.status!.jobStatus?.upgradeSavepointPath);
    assert.equal(encoded.reconciliationStatus?.state, fx.status!.reconciliationStatus?.state);
    assert.equal(encoded.reconciliationStatus?.reconciliationTimestamp, fx.status!.reconciliationStatus?.reconciliationTimestamp);
    for (const field of ['lastReconciledSpec', 'lastStableSpec'] as const) {
      const original = JSON.parse(fx.status!.reconciliationStatus![field]!) as { spec: unknown; resource_metadata: Record<string, unknown> };
      const again = JSON.parse(encoded.reconciliationStatus![field]!) as { spec: unknown; resource_metadata: Record<string, unknown> };
      assert.deepEqual(again.spec, dropNulls(original.spec), field);
      assert.deepEqual(again.resource_metadata, original.resource_metadata, `${field} resource_metadata`);
    }
  });
}

test('an Apache "stable" status (equal spec strings) stays stable through decode and encode', () => {
  const fx = withStatus.find((f) => f.file.includes('blue'))!;
  const { state, userStatus } = decodeLegacyStatus(fx.status!, fx.resource, 'cm');
  const encoded = encodeLegacyStatus(state, userStatus);
  assert.equal(encoded.reconciliationStatus?.lastStableSpec, encoded.reconciliationStatus?.lastReconciledSpec);
});

test('every lastReconciledSpec format parses: bare, top-level apiVersion, with generation, current', () => {
  const bare = parseLegacySpec(
    '{\n  "job" : {\n    "jarURI" : "local:///j.jar",\n    "parallelism" : 2,\n    "entryClass" : null\n  },\n  "image" : "flink:1.15"\n}',
    'f',
    'ns/a',
  );
  assert.deepEqual(bare, { spec: { job: { jarURI: 'local:///j.jar', parallelism: 2 }, image: 'flink:1.15' }, variant: 'bare' });

  const top = parseLegacySpec('{"apiVersion":"flink.apache.org/v1beta1","image":"flink:1.15","mode":null}', 'f', 'ns/a');
  assert.deepEqual(top, { spec: { image: 'flink:1.15' }, apiVersion: 'flink.apache.org/v1beta1', variant: 'top-level-apiVersion' });

  const gen = parseLegacySpec(
    '{"spec":{"image":"i"},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","metadata":{"generation":4},"firstDeployment":false}}',
    'f',
    'ns/a',
  );
  assert.deepEqual(gen, {
    spec: { image: 'i' },
    apiVersion: 'flink.apache.org/v1beta1',
    firstDeployment: false,
    generation: 4,
    variant: 'resource_metadata-with-generation',
  });

  const current = parseLegacySpec(
    '{"spec":{"image":"i","podTemplate":{"spec":{"containers":[{"name":"c","env":null}]}}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":true}}',
    'f',
    'ns/a',
  );
  assert.deepEqual(current, {
    spec: { image: 'i', podTemplate: { spec: { containers: [{ name: 'c' }] } } },
    apiVersion: 'flink.apache.org/v1beta1',
    firstDeployment: true,
    variant: 'resource_metadata',
  });
});

test('malformed spec strings fail naming the resource and the field', () => {
  assert.throws(
    () => parseLegacySpec('{"spec":', 'status.reconciliationStatus.lastReconciledSpec', 'default/orders'),
    (e: unknown) =>
      e instanceof LegacyStatusError &&
      e.field === 'status.reconciliationStatus.lastReconciledSpec' &&
      /^default\/orders: status\.reconciliationStatus\.lastReconciledSpec is not valid JSON \(.+\)$/.test(e.message),
  );
  assert.throws(() => parseLegacySpec('[1]', 'f', 'default/orders'), /default\/orders: f must be a JSON object/);
  assert.throws(() => parseLegacySpec('{"resource_metadata":{}}', 'f', 'default/orders'), /"spec" must be an object/);
  assert.throws(
    () => decodeLegacyStatus({ reconciliationStatus: { lastStableSpec: 'nope' } }, 'team/x', 'cm'),
    (e: unknown) => e instanceof LegacyStatusError && e.field === 'status.reconciliationStatus.lastStableSpec' && e.message.startsWith('team/x: '),
  );
});

test('serializeLegacySpec writes the current Apache format in Apache field order', () => {
  const json = serializeLegacySpec({
    spec: {
      mode: 'native',
      image: 'flink:2.2',
      job: { upgradeMode: 'savepoint', jarURI: 'local:///j.jar' },
      jobManager: { replicas: 1, resource: { memory: '1g', cpu: 1 } },
    },
    firstDeployment: false,
  });
  assert.equal(
    json,
    '{"spec":{"job":{"jarURI":"local:///j.jar","upgradeMode":"savepoint"},"image":"flink:2.2","jobManager":{"resource":{"cpu":1,"memory":"1g"},"replicas":1},"mode":"native"},' +
      '"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":false}}',
  );
  assert.equal(
    serializeLegacySpec({ spec: {}, generation: 3 }),
    '{"spec":{},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","metadata":{"generation":3}}}',
  );
});

const withTriggers: FlinkDeploymentStatusV1beta1 = {
  lifecycleState: 'STABLE',
  jobStatus: {
    jobId: 'a1b2',
    state: 'RUNNING',
    savepointInfo: {
      triggerId: 'sp-trigger-1',
      triggerTimestamp: 1700000000000,
      triggerType: 'MANUAL',
      formatType: 'CANONICAL',
      lastSavepoint: { timeStamp: 1690000000000, location: 's3://b/sp-1', triggerType: 'PERIODIC', formatType: 'CANONICAL', triggerNonce: 7 },
      savepointHistory: [{ timeStamp: 1690000000000, location: 's3://b/sp-1', triggerType: 'PERIODIC', formatType: 'CANONICAL', triggerNonce: 7 }],
      lastPeriodicSavepointTimestamp: 1690000000000,
    },
    checkpointInfo: {
      triggerId: 'cp-trigger-9',
      triggerTimestamp: 1700000001000,
      triggerType: 'MANUAL',
      formatType: 'INCREMENTAL',
      lastPeriodicCheckpointTimestamp: 5,
    },
  },
  reconciliationStatus: { state: 'DEPLOYED' },
};

test('legacy trigger fields with a triggerId become pending snapshots of the status job', () => {
  const { state, userStatus } = decodeLegacyStatus(withTriggers, 'ns/x', 'cm');
  assert.deepEqual(state.pendingSavepoint, {
    kind: 'savepoint',
    triggerType: 'MANUAL',
    formatType: 'CANONICAL',
    jobId: 'a1b2',
    stopJob: false,
    requestedAt: 1700000000000,
    triggerId: 'sp-trigger-1',
  });
  assert.deepEqual(state.pendingCheckpoint, {
    kind: 'checkpoint',
    triggerType: 'MANUAL',
    checkpointType: 'INCREMENTAL',
    jobId: 'a1b2',
    stopJob: false,
    requestedAt: 1700000001000,
    triggerId: 'cp-trigger-9',
  });
  assert.deepEqual(state.savepointHistory, [
    { location: 's3://b/sp-1', timeStamp: 1690000000000, triggerType: 'PERIODIC', formatType: 'CANONICAL', triggerNonce: 7 },
  ]);
  assert.deepEqual(userStatus.jobStatus?.lastSavepoint, {
    location: 's3://b/sp-1',
    timeStamp: 1690000000000,
    triggerType: 'PERIODIC',
    formatType: 'CANONICAL',
  });
  const encoded = encodeLegacyStatus(state, userStatus);
  assert.deepEqual(encoded.jobStatus?.savepointInfo, withTriggers.jobStatus?.savepointInfo, 'savepointInfo is rebuilt field for field');
  assert.deepEqual(encoded.jobStatus?.checkpointInfo, withTriggers.jobStatus?.checkpointInfo);
  assert.deepEqual(decodeLegacyStatus(encoded, 'ns/x', 'cm'), { state, userStatus });
});

test('an empty triggerId is no pending trigger; a triggerId without a job id is an error naming the field', () => {
  const empty = decodeLegacyStatus({ jobStatus: { jobId: 'j', savepointInfo: { triggerId: '', triggerTimestamp: 0 } } }, 'ns/x', 'cm');
  assert.equal(empty.state.pendingSavepoint, undefined);
  assert.throws(
    () => decodeLegacyStatus({ jobStatus: { savepointInfo: { triggerId: 't1' } } }, 'ns/x', 'cm'),
    (e: unknown) => e instanceof LegacyStatusError && e.field === 'status.jobStatus.savepointInfo.triggerId' && /jobStatus\.jobId is missing/.test(e.message),
  );
});

test('a status with no reconciliationStatus decodes to Apache defaults (UPGRADING, nothing reconciled)', () => {
  const { state, userStatus } = decodeLegacyStatus({ lifecycleState: 'CREATED' }, 'ns/x', 'cm');
  assert.equal(reconciliationStateOfPhase(state.phase), 'UPGRADING');
  assert.equal(state.lastReconciledSpec, undefined);
  assert.deepEqual(userStatus, { lifecycleState: 'CREATED', stateRef: { configMapName: 'cm', revision: state.revision } });
  assert.deepEqual(decodeLegacyStatus(encodeLegacyStatus(state, userStatus), 'ns/x', 'cm'), { state, userStatus });
});

test('hasLegacyFields is true only while operator-internal fields are present', () => {
  assert.equal(hasLegacyFields(undefined), false);
  assert.equal(hasLegacyFields({ lifecycleState: 'STABLE', jobStatus: { state: 'RUNNING' }, stateRef: { configMapName: 'c', revision: 2 } }), false);
  assert.equal(hasLegacyFields({ reconciliationStatus: { state: 'DEPLOYED' } }), true);
  assert.equal(hasLegacyFields({ jobStatus: { upgradeSavepointPath: 's3://x' } }), true);
  assert.equal(hasLegacyFields({ jobStatus: { checkpointInfo: {} } }), true);
  for (const fx of withStatus) assert.equal(hasLegacyFields(fx.status), true, fx.file);
});

test('trigger and format types an Apache version wrote but this model does not know read as UNKNOWN', () => {
  const odd = {
    jobStatus: {
      jobId: 'j',
      savepointInfo: {
        triggerId: 't',
        triggerType: 'SCHEDULED',
        formatType: 'FANCY',
        savepointHistory: [{ location: 's3://x', timeStamp: 1, triggerType: 'NEW' }],
      },
    },
  } as unknown as FlinkDeploymentStatusV1beta1;
  const { state } = decodeLegacyStatus(odd, 'ns/x', 'cm');
  assert.equal(state.pendingSavepoint?.triggerType, 'UNKNOWN');
  assert.equal(state.pendingSavepoint?.formatType, 'UNKNOWN');
  assert.equal(state.savepointHistory[0]?.triggerType, 'UNKNOWN');
  assert.throws(
    () => decodeLegacyStatus({ reconciliationStatus: { state: 'WEIRD' } } as unknown as FlinkDeploymentStatusV1beta1, 'ns/x', 'cm'),
    (e: unknown) => e instanceof LegacyStatusError && e.field === 'status.reconciliationStatus.state',
  );
});

test('what the Apache operator wrote passes the v1beta1 status schema, and what decode/encode produce passes theirs', () => {
  for (const fx of withStatus) {
    assert.deepEqual(validateStatusSchema(fx.status, 'v1beta1'), [], `${fx.file}: a status write through v1beta1 must not be rejected`);
    const { state, userStatus } = decodeLegacyStatus(fx.status!, fx.resource, 'cm');
    assert.deepEqual(validateStatusSchema(userStatus, 'v1'), [], `${fx.file}: user status`);
    assert.deepEqual(validateStatusSchema(userStatus, 'v1beta1'), [], `${fx.file}: user status written through v1beta1 (migration)`);
    assert.deepEqual(validateInternalStateSchema(state), [], `${fx.file}: state`);
    assert.deepEqual(validateStatusSchema(encodeLegacyStatus(state, userStatus), 'v1beta1'), [], `${fx.file}: encoded legacy status`);
  }
  assert.deepEqual(
    validateStatusSchema({ lifecycleState: 'GONE' }, 'v1').map((e) => e.field),
    ['status.lifecycleState'],
  );
});

// No capture in /work/shared/fixtures has a checkpointInfo.lastCheckpoint (none of those resources
// took a checkpoint through the operator); last-state-running.yaml is written from the Apache
// operator 1.13.0 sources (its header cites SnapshotObserver.observeTriggeredCheckpoint and
// CheckpointInfo.updateLastCheckpoint), not captured.
test('checkpointInfo.lastCheckpoint (Apache 1.13 session job, PERIODIC/FULL) becomes the state lastCheckpoint and round-trips', () => {
  const { object } = loadSessionJobVariant('last-state-running');
  const legacy = object.status!.jobStatus!.checkpointInfo!.lastCheckpoint!;
  const decoded = decodeLegacySessionJobStatus(object.status!, 'default/last-state-running', 'cm', object.spec);
  assert.deepEqual(decoded.state.lastCheckpoint, { timeStamp: legacy.timeStamp, triggerType: 'PERIODIC', formatType: 'FULL' });
  assert.equal(decoded.state.lastPeriodicCheckpointTimestamp, legacy.timeStamp);
  assert.equal(decoded.userStatus.jobStatus?.lastCheckpoint, undefined, 'the v1 field is derived from the state by the status builder, not copied');
  const encoded = encodeLegacySessionJobStatus(decoded.state, decoded.userStatus);
  assert.deepEqual(
    encoded.jobStatus?.checkpointInfo?.lastCheckpoint,
    { timeStamp: legacy.timeStamp, triggerType: 'PERIODIC', formatType: 'FULL' },
    'Apache shape, formatType kept',
  );
  assert.deepEqual(decodeLegacySessionJobStatus(encoded, 'default/last-state-running', 'cm', object.spec), decoded);
});

test('a MANUAL lastCheckpoint keeps its nonce both ways; Apache null (no checkpoint yet) decodes to none', () => {
  const status: FlinkDeploymentStatusV1beta1 = {
    jobStatus: {
      jobId: 'a1b2',
      state: 'RUNNING',
      checkpointInfo: {
        lastCheckpoint: { timeStamp: 1700000002000, triggerType: 'MANUAL', formatType: 'INCREMENTAL', triggerNonce: 4 },
        lastPeriodicCheckpointTimestamp: 0,
      },
    },
    reconciliationStatus: { state: 'DEPLOYED' },
  };
  const { state, userStatus } = decodeLegacyStatus(status, 'ns/x', 'cm');
  assert.deepEqual(state.lastCheckpoint, { timeStamp: 1700000002000, triggerType: 'MANUAL', formatType: 'INCREMENTAL', triggerNonce: 4 });
  assert.deepEqual(validateInternalStateSchema(state), []);
  const encoded = encodeLegacyStatus(state, userStatus);
  assert.deepEqual(encoded.jobStatus?.checkpointInfo, {
    lastCheckpoint: { timeStamp: 1700000002000, triggerType: 'MANUAL', formatType: 'INCREMENTAL', triggerNonce: 4 },
    lastPeriodicCheckpointTimestamp: 0,
  });
  assert.deepEqual(validateStatusSchema(encoded, 'v1beta1'), []);
  assert.deepEqual(decodeLegacyStatus(encoded, 'ns/x', 'cm'), { state, userStatus });

  const none = {
    jobStatus: { jobId: 'a1b2', checkpointInfo: { lastPeriodicCheckpointTimestamp: 0, lastCheckpoint: null } },
  } as unknown as FlinkDeploymentStatusV1beta1;
  assert.equal(decodeLegacyStatus(none, 'ns/x', 'cm').state.lastCheckpoint, undefined);
  assert.equal(encodeLegacyStatus(decodeLegacyStatus(none, 'ns/x', 'cm').state, {}).jobStatus?.checkpointInfo?.lastCheckpoint, undefined);
});
