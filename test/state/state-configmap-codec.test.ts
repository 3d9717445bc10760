import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { V1ConfigMap } from '@kubernetes/client-node';
import YAML from 'yaml';
import { emptyInternalState, InternalStateSchema, PendingSnapshotSchema, type InternalState, type SavepointRecord } from '../../src/api/internal-state.js';
import {
  assertOwnedBy,
  assertStateBelongsTo,
  decodeStateConfigMap,
  encodeStateConfigMap,
  type EncodeResult,
  STATE_KEYS,
  WRITTEN_BY_ANNOTATION,
} from '../../src/state/state-configmap-codec.js';
import { OPERATOR_VERSION } from '../../src/state/operator-version.js';
import { CorruptStateError, ForeignStateError, MisplacedStateError, StateTooLargeError } from '../../src/state/state-errors.js';
import { fullState, ownedDeployment } from './state-fixtures.js';
import { seededRandom } from '../../src/devcluster/simulation/simulation-random.js';

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
  assert.deepEqual(Object.keys(cm.data ?? {}).sort(), ['deployment', 'deploymentUid', 'formatVersion', 'phase', 'revision', 'savepointHistory']);
  assert.equal(cm.data?.savepointHistory, '[]\n');
  assert.deepEqual(decodeStateConfigMap(cm), emptyInternalState());
});

test('values are readable: specs as multi-line YAML, plain numbers and enums, no escaped JSON', () => {
  const cm = encoded();
  const spec = cm.data!.lastReconciledSpec;
  assert.ok(spec.split('\n').length > 10, 'the spec spans many lines');
  assert.match(spec, /^ {2}parallelism: 2$/m);
  assert.match(spec, /^image: flink:1.20$/m);
  assert.ok(!spec.includes('\\"') && !spec.trim().startsWith('{'), 'not a JSON string');
  assert.equal(cm.data!.revision, '7');
  assert.equal(cm.data!.phase, 'DEPLOYED');
  assert.equal(cm.data!.reconciliationTimestamp, '2026-11-30T03:00:00.000Z');
  const pending = YAML.parse(cm.data!.pendingOperation) as Record<string, unknown>;
  assert.deepEqual(Object.keys(pending).sort(), [
    'inPlaceScaling',
    'jobIdToSubmit',
    'pendingCheckpoint',
    'pendingSavepoint',
    'replaceJobManagerUid',
    'snapshotResourceWrites',
    'upgradeSavepointPath',
  ]);
  assert.match(cm.data!.pendingOperation, /^ {2}triggerId: trigger-1$/m);
  assert.match(cm.data!.savepointHistory, /^- location: file:\/\/\/flink-data\/savepoints\/savepoint-1$/m);
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
  const existing = {
    ...encoded(),
    metadata: { ...encoded().metadata, resourceVersion: '42', labels: { team: 'a', ...encoded().metadata?.labels }, annotations: { note: 'hi' } },
  };
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
  assert.equal(result.state.savepointHistory[0].timeStamp, 1764400000000 + result.trimmedSavepoints, 'the oldest went first');
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
      assert.ok(error.bytesPerKey['lastReconciledSpec.gz'] > 1_000_000);
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
  assertCorrupt(
    corrupted((cm) => (cm.data!.revision = 'seven')),
    'revision',
    /expected an integer/,
  );
  assertCorrupt(
    corrupted((cm) => delete cm.data!.formatVersion),
    'formatVersion',
    /missing/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.formatVersion = '99')),
    'formatVersion',
    /newer operator/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.lastReconciledSpec = 'job: [unclosed')),
    'lastReconciledSpec',
    /not valid YAML/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.phase = 'BOGUS')),
    'phase',
    /phase/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.lastReconciledSpec = 'job:\n  parallelism: many\n')),
    'lastReconciledSpec',
    /parallelism/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.savepointHistory = '- location: 5\n')),
    'savepointHistory',
    /savepointHistory/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.pendingOperation = 'launchMissiles: true\n')),
    'pendingOperation',
    /unknown field/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.data!.firstDeployment = 'yes')),
    'firstDeployment',
    /true or false/,
  );
  assertCorrupt(
    corrupted((cm) => (cm.binaryData = { 'revision.gz': 'AAAA' })),
    'revision',
    /both data/,
  );
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
  notController.metadata!.ownerReferences![0].controller = false;
  assert.throws(() => assertOwnedBy(notController, deployment), ForeignStateError);
});

// --- the savepoint-history trim: which records go, the limit, and what the search costs ---

/**
 * `count` records, oldest first, with s3:// locations of 100–200 characters (as the operator writes
 * them); `opaque` characters of random printable ASCII appended to each location make it nearly
 * incompressible (gzip+base64 larger than the text once they dominate).
 */
function savepoints(count: number, { seed = 1, opaque = 0 } = {}): SavepointRecord[] {
  const next = seededRandom(seed);
  const pick = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
  const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
    .join('')
    .replace(/["\\]/g, ''); // no YAML escapes
  let jobId = pick('0123456789abcdef', 32);
  return Array.from({ length: count }, (_, i) => {
    if (next() < 0.02) jobId = pick('0123456789abcdef', 32);
    const prefix = Array.from({ length: Math.floor(next() * 6) }, () => pick('abcdefghijklmnopqrstuvwxyz', 3 + Math.floor(next() * 14))).join('/');
    const location = `s3://fl-bucket/${prefix ? `${prefix}/` : ''}savepoints/orders/${jobId}/savepoint-${jobId.slice(0, 6)}-${pick('0123456789abcdef', 12)}${pick(printable, opaque)}`;
    return { location, timeStamp: 1764400000000 + i * 600_000, triggerType: 'PERIODIC', formatType: 'CANONICAL', jobId };
  });
}

function withHistory(savepointHistory: SavepointRecord[]): InternalState {
  return { ...fullState(), savepointHistory };
}

/** The encoded size of `state` as it is (no trim), measured independently of the trim search. */
function untrimmedBytes(state: InternalState, compressThresholdBytes?: number): number {
  return encodeStateConfigMap(state, { deployment, compressThresholdBytes, maxTotalBytes: Number.MAX_SAFE_INTEGER }).totalBytes;
}

/** A trimmed encode is within the limit, drops as few records as possible, and says which. */
function assertMinimalTrim(input: InternalState, limit: number, compressThresholdBytes?: number): EncodeResult {
  const result = encodeStateConfigMap(input, { deployment, maxTotalBytes: limit, compressThresholdBytes });
  const dropped = result.trimmedSavepoints;
  assert.ok(dropped > 0, 'the history was trimmed');
  assert.ok(result.totalBytes <= limit, `${result.totalBytes} ≤ ${limit}`);
  assert.equal(untrimmedBytes(result.state, compressThresholdBytes), result.totalBytes, 'the reported size is the real one');
  const oneMore = { ...input, savepointHistory: input.savepointHistory.slice(dropped - 1) };
  assert.ok(untrimmedBytes(oneMore, compressThresholdBytes) > limit, `keeping record ${dropped - 1} too would not fit`);
  assert.equal(result.trimmedRecords.length, dropped);
  result.trimmedRecords.forEach((record, i) => assert.equal(record, input.savepointHistory[i], `trimmed record ${i} is the input's record ${i}`));
  assert.deepEqual([...result.trimmedRecords, ...result.state.savepointHistory], input.savepointHistory);
  assert.deepEqual(decodeStateConfigMap(result.configMap), result.state);
  return result;
}

test('trimmedRecords are exactly the records dropped, oldest first; empty when nothing is trimmed', () => {
  const input = withHistory(savepoints(300));
  const untrimmed = encodeStateConfigMap(input, { deployment });
  assert.deepEqual(untrimmed.trimmedRecords, []);
  assert.equal(untrimmed.trimmedSavepoints, 0);
  assert.equal(untrimmed.state, input, 'an untrimmed state is returned as it was given');
  const result = assertMinimalTrim(input, untrimmed.totalBytes - 5_000);
  assert.deepEqual(result.trimmedRecords, input.savepointHistory.slice(0, result.trimmedSavepoints));
  assert.equal(result.state.savepointHistory.at(-1), input.savepointHistory.at(-1), 'the newest stays');
  assert.equal(input.savepointHistory.length, 300, 'the input is not modified');
});

test('the trim is minimal and within the limit: history plain, gzipped, and gzipped before but plain after', () => {
  // plain before and after: sizes are exact sums
  const plain = withHistory(savepoints(400, { seed: 2 }));
  const plainResult = assertMinimalTrim(plain, untrimmedBytes(plain) - 7_000);
  assert.deepEqual(plainResult.compressedKeys, []);
  assert.equal(plainResult.work.gzipCalls, 0, 'no gzip for a history that stays plain');

  // gzipped before and after
  const threshold = 64 * 1024;
  const gzipped = withHistory(savepoints(3_000, { seed: 3 }));
  const gzippedResult = assertMinimalTrim(gzipped, untrimmedBytes(gzipped, threshold) - 20_000, threshold);
  assert.deepEqual(gzippedResult.compressedKeys, ['savepointHistory']);
  assert.ok(gzippedResult.configMap.binaryData?.['savepointHistory.gz']);

  // incompressible: gzip+base64 is larger than the text, so just above the threshold nothing fits
  // gzipped and the answer is a plain history just below it
  const small = 32 * 1024;
  const opaque = withHistory(savepoints(60, { seed: 4, opaque: 3_000 }));
  const everythingElse = untrimmedBytes(withHistory([]), small) - 'savepointHistory'.length - '[]\n'.length;
  const opaqueResult = assertMinimalTrim(opaque, everythingElse + 'savepointHistory'.length + small - 500, small);
  assert.deepEqual(opaqueResult.compressedKeys, []);
  const kept = (drop: number) => ({ ...opaque, savepointHistory: opaque.savepointHistory.slice(drop) });
  const gzippedAsIs = (drop: number) =>
    encodeStateConfigMap(kept(drop), { deployment, compressThresholdBytes: small, maxTotalBytes: Number.MAX_SAFE_INTEGER }).compressedKeys.length > 0;
  assert.ok(gzippedAsIs(0), 'the full history is gzipped');
  let longestGzipped = opaqueResult.trimmedSavepoints - 1;
  while (!gzippedAsIs(longestGzipped)) longestGzipped--;
  assert.ok(untrimmedBytes(kept(longestGzipped), small) > opaqueResult.totalBytes, 'the shortest gzipped history is larger than the plain one chosen');
});

test('a long history is serialized once and gzipped only a few times while trimmed', () => {
  const threshold = 64 * 1024;
  const input = withHistory(savepoints(5_000, { seed: 5 }));
  const limit = 150_000;
  const result = assertMinimalTrim(input, limit, threshold);
  assert.ok(result.trimmedSavepoints > 1_000, `trimmed ${result.trimmedSavepoints}`);
  assert.equal(result.work.historySerializations, 1);
  // the full history, the largest that stays plain (a bound), and a few probes; a binary search would need ~13
  assert.ok(result.work.gzipCalls <= 6, `${result.work.gzipCalls} gzip calls`);

  // the next savepoints, at the limit: about as many records go, for the full gzip and a few probes
  const next = savepoints(5_003, { seed: 5 }).slice(5_000);
  const atLimit = withHistory([...result.state.savepointHistory, ...next]);
  const again = assertMinimalTrim(atLimit, limit, threshold);
  assert.ok(again.trimmedSavepoints <= 6, `trimmed ${again.trimmedSavepoints}`);
  assert.ok(again.work.gzipCalls <= 5, `${again.work.gzipCalls} gzip calls`);
});

test('a history whose old records compress worse than the new ones is still trimmed minimally', () => {
  const threshold = 64 * 1024;
  const input = withHistory([...savepoints(400, { seed: 6, opaque: 300 }), ...savepoints(2_000, { seed: 7 })]);
  const result = assertMinimalTrim(input, untrimmedBytes(input, threshold) - 60_000, threshold);
  assert.deepEqual(result.compressedKeys, ['savepointHistory']);
  assert.ok(result.work.gzipCalls <= 2 + 8 + Math.ceil(Math.log2(2_400)), `${result.work.gzipCalls} gzip calls`);
});

test('the history is written byte for byte as the yaml library writes it, whatever its strings', () => {
  const tricky = [
    's3://bucket/path/savepoint-1',
    'hdfs:///a:b/c',
    '1234',
    '-12',
    '1e5',
    '1E-5',
    '0x1f',
    '0o17',
    '.5',
    '1.',
    '1_000',
    '12ab',
    'NaN',
    '.inf',
    'true',
    'False',
    'TRUE',
    'null',
    'Null',
    '~',
    '',
    'y',
    'no',
    'a:',
    'a::b',
    'a: b',
    'a :b',
    '#x',
    'x #y',
    'x#y',
    '-x',
    '- x',
    '-',
    '?',
    '? x',
    '---a',
    '--- a',
    '...',
    'a...b',
    'a b',
    ' lead',
    'trail ',
    'é/ü/漢',
    'line\nbreak',
    'line\n',
    "quote'",
    'dq"x',
    '%x',
    '@x',
    '`x',
    '[x]',
    '{x}',
    'x,y',
    '*x',
    '&x',
    '!x',
    '|x',
    '>x',
    'tab\tx',
    '\u0001ctrl',
    'x'.repeat(500),
  ];
  const next = seededRandom(8);
  const alphabet = 'ab01289eExo.:-_/ #+~';
  const fuzz = Array.from({ length: 3_000 }, () =>
    Array.from({ length: 1 + Math.floor(next() * 8) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  );
  const history: SavepointRecord[] = [...tricky, ...fuzz].map((location, i) => ({
    location,
    timeStamp: [0, -5, Number.MAX_SAFE_INTEGER, 1764400000000 + i][i % 4],
    triggerType: 'MANUAL',
    jobId: fuzz[(i * 7) % fuzz.length],
  }));
  history.push(
    { timeStamp: 1, location: 'keys/in/another/order', triggerType: 'UPGRADE', formatType: 'NATIVE', triggerNonce: 4 },
    { location: 'a/fraction', timeStamp: 1.5, triggerType: 'PERIODIC' },
    { location: 'minus/zero', timeStamp: -0, triggerType: 'PERIODIC' },
    { location: 'an/undefined/field', timeStamp: 2, triggerType: 'PERIODIC', formatType: undefined },
    { location: 'an/unknown/field', timeStamp: 3, triggerType: 'PERIODIC', note: 'x' } as SavepointRecord,
  );
  const state = withHistory(history);
  const cm = encodeStateConfigMap(state, { deployment, compressThresholdBytes: 10_000_000, maxTotalBytes: 10_000_000 }).configMap;
  assert.equal(cm.data?.savepointHistory, YAML.stringify(history, { lineWidth: 0 }));
});

test('a record object held twice in the history decodes as two equal records', () => {
  const record: SavepointRecord = { location: 's3://bucket/savepoint-1', timeStamp: 1764400000000, triggerType: 'PERIODIC' };
  const state = withHistory([record, record]);
  const cm = encodeStateConfigMap(state, { deployment }).configMap;
  assert.ok(!cm.data?.savepointHistory?.includes('*'), 'no YAML alias');
  assert.deepEqual(decodeStateConfigMap(cm), state);
});

test("the content names its deployment; another deployment's content is refused (MisplacedStateError), content written before the key existed is accepted", () => {
  const cm = encoded();
  assert.equal(cm.data!.deploymentUid, deployment.metadata.uid);
  assert.equal(cm.data!.deployment, `${deployment.metadata.namespace}/${deployment.metadata.name}`);
  assertStateBelongsTo(cm, deployment);
  const other = ownedDeployment();
  other.metadata.uid = '00000000-0000-4000-8000-00000000beef';
  other.metadata.name = 'payments';
  const copied = structuredClone(cm);
  copied.data = encodeStateConfigMap(fullState(other), { deployment: other }).configMap.data!;
  assert.throws(
    () => assertStateBelongsTo(copied, deployment),
    (e: unknown) => e instanceof MisplacedStateError && /belongs to FlinkDeployment .*\/payments \(uid 00000000-0000-4000-8000-00000000beef\)/.test(e.message),
  );
  const old = structuredClone(cm);
  delete old.data!.deploymentUid;
  assertStateBelongsTo(old, deployment);
});
