import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { V1ConfigMap } from '@kubernetes/client-node';
import YAML from 'yaml';
import { emptyInternalState, InternalStateSchema, PendingSnapshotSchema, type InternalState } from '../../src/api/internal-state.js';
import {
  assertOwnedBy,
  decodeStateConfigMap,
  encodeStateConfigMap,
  STATE_KEYS,
  WRITTEN_BY_ANNOTATION,
} from '../../src/state/state-configmap-codec.js';
import { OPERATOR_VERSION } from '../../src/state/operator-version.js';
import { CorruptStateError, ForeignStateError, StateTooLargeError } from '../../src/state/state-errors.js';
import { fullState, ownedDeployment } from './state-fixtures.js';

const deployment = ownedDeployment();

function encoded(state: InternalState = fullState()): V1ConfigMap {
  return encodeStateConfigMap(state, { deployment }).configMap;
}

test('every field survives encode → decode', () => {
  const state = fullState();
  const result = encodeStateConfigMap(state, { deployment });
  assert.deepEqual(decodeStateConfigMap(result.configMap), state);
  assert.deepEqual(result.state, state);
  for (const key of STATE_KEYS) assert.ok(result.configMap.data?.[key] !== undefined, `key ${key} is written`);
});

test('the fixture sets every field the internal-state schema declares (so the round trip above covers them all)', () => {
  const state = fullState() as Record<string, unknown>;
  for (const field of Object.keys(InternalStateSchema.properties)) assert.ok(state[field] !== undefined, `fullState() sets ${field}`);
  const pending = (fullState().pendingSavepoint ?? {}) as Record<string, unknown>;
  for (const field of Object.keys(PendingSnapshotSchema.properties)) {
    if (field === 'checkpointType') continue; // a checkpoint's field, set on pendingCheckpoint
    assert.ok(pending[field] !== undefined, `pendingSavepoint sets ${field}`);
  }
});

test('the empty state round-trips and omits what is not set (no pendingOperation key)', () => {
  const cm = encoded(emptyInternalState());
  assert.deepEqual(Object.keys(cm.data ?? {}).sort(), ['formatVersion', 'reconciliationState', 'revision', 'savepointHistory']);
  assert.equal(cm.data?.savepointHistory, '[]\n');
  assert.deepEqual(decodeStateConfigMap(cm), emptyInternalState());
});

test('values are readable: specs as multi-line YAML, plain numbers and enums, no escaped JSON', () => {
  const cm = encoded();
  const spec = cm.data!.lastReconciledSpec!;
  assert.ok(spec.split('\n').length > 10, 'the spec spans many lines');
  assert.match(spec, /^ {2}parallelism: 2$/m);
  assert.match(spec, /^image: flink:1.20$/m);
  assert.ok(!spec.includes('\\"') && !spec.trim().startsWith('{'), 'not a JSON string');
  assert.equal(cm.data!.revision, '7');
  assert.equal(cm.data!.reconciliationState, 'DEPLOYED');
  assert.equal(cm.data!.reconciliationTimestamp, '2026-11-30T03:00:00.000Z');
  const pending = YAML.parse(cm.data!.pendingOperation!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(pending).sort(), ['jobIdToSubmit', 'pendingCheckpoint', 'pendingSavepoint', 'upgradeSavepointPath']);
  assert.match(cm.data!.pendingOperation!, /^ {2}triggerId: trigger-1$/m);
  assert.match(cm.data!.savepointHistory!, /^- location: file:\/\/\/flink-data\/savepoints\/savepoint-1$/m);
  // the whole object, as kubectl -o yaml would print it, shows the spec as a block, not a quoted line
  const asYaml = YAML.stringify(cm);
  assert.match(asYaml, /lastReconciledSpec: [|>]\n/);
});

test('metadata: name, labels (never the HA-cleanup labels), controller ownerReference, annotations', () => {
  const cm = encoded();
  assert.equal(cm.metadata?.name, 'orders-operator-state');
  assert.equal(cm.metadata?.namespace, 'team-a');
  assert.deepEqual(cm.metadata?.labels, {
    'app.kubernetes.io/managed-by': 'flink-operator',
    'app.kubernetes.io/component': 'operator-state',
    'flink.apache.org/deployment': 'orders',
  });
  const labels: Record<string, string> = cm.metadata?.labels ?? {};
  assert.equal(labels.type, undefined);
  assert.equal(labels.app, undefined);
  assert.deepEqual(cm.metadata?.ownerReferences, [
    { apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', name: 'orders', uid: deployment.metadata.uid, controller: true, blockOwnerDeletion: true },
  ]);
  assert.equal(cm.metadata?.annotations?.[WRITTEN_BY_ANNOTATION], `flink-operator/${OPERATOR_VERSION}`);
  assert.notEqual(OPERATOR_VERSION, 'unknown');
  assert.equal(cm.metadata?.annotations?.['flink-operator.io/leader'], 'operator-0/2');
});

test('an update keeps foreign labels/annotations and locks on the resourceVersion read', () => {
  const existing = { ...encoded(), metadata: { ...encoded().metadata, resourceVersion: '42', labels: { team: 'a', ...encoded().metadata?.labels }, annotations: { note: 'hi' } } };
  const cm = encodeStateConfigMap(fullState(), { deployment, existing }).configMap;
  assert.equal(cm.metadata?.resourceVersion, '42');
  assert.equal(cm.metadata?.labels?.team, 'a');
  assert.equal(cm.metadata?.annotations?.note, 'hi');
});

test('a value over the threshold moves to binaryData <key>.gz (gzip+base64) and decodes back', () => {
  const state = fullState();
  const big = 'x'.repeat(300 * 1024);
  state.lastReconciledSpec = { ...state.lastReconciledSpec!, flinkConfiguration: { 'pipeline.description': big } };
  const result = encodeStateConfigMap(state, { deployment });
  assert.deepEqual(result.compressedKeys, ['lastReconciledSpec']);
  assert.equal(result.configMap.data?.lastReconciledSpec, undefined);
  const packed = result.configMap.binaryData?.['lastReconciledSpec.gz'];
  assert.ok(packed && packed.length < 10_000, 'compressed well below the original');
  assert.deepEqual(decodeStateConfigMap(result.configMap), state);
  assert.ok(result.totalBytes < 20_000);
});

test('over the limit even compressed: savepoint history is trimmed oldest first, only as much as needed', () => {
  const state = fullState();
  state.savepointHistory = Array.from({ length: 200 }, (_, i) => ({
    location: `file:///flink-data/savepoints/savepoint-${i}-${'p'.repeat(60)}`,
    timeStamp: 1764400000000 + i,
    triggerType: 'PERIODIC' as const,
  }));
  const full = encodeStateConfigMap(state, { deployment });
  const limit = full.totalBytes - 2000; // a little too small: some entries must go
  const result = encodeStateConfigMap(state, { deployment, maxTotalBytes: limit });
  assert.ok(result.trimmedSavepoints > 0 && result.trimmedSavepoints < 40, `trimmed ${result.trimmedSavepoints}`);
  assert.ok(result.totalBytes <= limit);
  assert.equal(result.state.savepointHistory[0]!.timeStamp, 1764400000000 + result.trimmedSavepoints, 'the oldest went first');
  assert.equal(result.state.savepointHistory.at(-1)!.timeStamp, 1764400000000 + 199, 'the newest stays');
  assert.deepEqual(decodeStateConfigMap(result.configMap), result.state);
  assert.deepEqual(result.state.lastReconciledSpec, state.lastReconciledSpec, 'the spec is never truncated');
});

test('above the hard limit: StateTooLargeError naming the sizes, never a truncated spec', () => {
  const state = fullState();
  // incompressible: random base64 in the spec
  state.lastReconciledSpec = { ...state.lastReconciledSpec!, flinkConfiguration: { blob: randomBytes(900_000).toString('base64') } };
  assert.throws(
    () => encodeStateConfigMap(state, { deployment }),
    (error: unknown) => {
      assert.ok(error instanceof StateTooLargeError);
      assert.ok(error.totalBytes > 1_000_000);
      assert.equal(error.limitBytes, 1_000_000);
      assert.ok(error.bytesPerKey['lastReconciledSpec.gz']! > 1_000_000);
      assert.match(error.message, /lastReconciledSpec\.gz=\d+/);
      return true;
    },
  );
});

function corrupted(edit: (cm: V1ConfigMap) => void): V1ConfigMap {
  const cm = structuredClone(encoded());
  edit(cm);
  return cm;
}

function assertCorrupt(cm: V1ConfigMap, key: string, detail: RegExp): void {
  assert.throws(
    () => decodeStateConfigMap(cm),
    (error: unknown) => {
      assert.ok(error instanceof CorruptStateError, String(error));
      assert.equal(error.key, key);
      assert.match(error.message, detail);
      assert.match(error.message, /fix or delete the ConfigMap/);
      return true;
    },
  );
}

test('hand-edited invalid values are CorruptStateError naming the key', () => {
  assertCorrupt(corrupted((cm) => (cm.data!.revision = 'seven')), 'revision', /expected an integer/);
  assertCorrupt(corrupted((cm) => delete cm.data!.formatVersion), 'formatVersion', /missing/);
  assertCorrupt(corrupted((cm) => (cm.data!.formatVersion = '99')), 'formatVersion', /newer operator/);
  assertCorrupt(corrupted((cm) => (cm.data!.lastReconciledSpec = 'job: [unclosed')), 'lastReconciledSpec', /not valid YAML/);
  assertCorrupt(corrupted((cm) => (cm.data!.reconciliationState = 'BOGUS')), 'reconciliationState', /reconciliationState/);
  assertCorrupt(corrupted((cm) => (cm.data!.lastReconciledSpec = 'job:\n  parallelism: many\n')), 'lastReconciledSpec', /parallelism/);
  assertCorrupt(corrupted((cm) => (cm.data!.savepointHistory = '- location: 5\n')), 'savepointHistory', /savepointHistory/);
  assertCorrupt(corrupted((cm) => (cm.data!.pendingOperation = 'launchMissiles: true\n')), 'pendingOperation', /unknown field/);
  assertCorrupt(corrupted((cm) => (cm.data!.firstDeployment = 'yes')), 'firstDeployment', /true or false/);
  assertCorrupt(corrupted((cm) => (cm.binaryData = { 'revision.gz': 'AAAA' })), 'revision', /both data/);
  assertCorrupt(
    corrupted((cm) => {
      delete cm.data!.lastStableSpec;
      cm.binaryData = { 'lastStableSpec.gz': 'bm90IGd6aXA=' };
    }),
    'lastStableSpec',
    /gzip/,
  );
});

test('ownership: only a ConfigMap controlled by this deployment uid is ours', () => {
  const cm = encoded();
  assert.doesNotThrow(() => assertOwnedBy(cm, deployment));
  assert.throws(() => assertOwnedBy(cm, ownedDeployment('orders', 'another-uid')), ForeignStateError);
  const noOwner = structuredClone(cm);
  delete noOwner.metadata!.ownerReferences;
  assert.throws(() => assertOwnedBy(noOwner, deployment), /no controller ownerReference/);
  const notController = structuredClone(cm);
  notController.metadata!.ownerReferences![0]!.controller = false;
  assert.throws(() => assertOwnedBy(notController, deployment), ForeignStateError);
});
