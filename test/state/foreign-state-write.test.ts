/**
 * Foreign writes to a state ConfigMap (src/state/foreign-state-write.ts): the digest tells them
 * from the operator's own, the store reports each once with who and what, and the acknowledgement
 * makes neither this process nor a successor report it again.
 *
 * managedFields entries are shaped as the API server records them for an Update
 * (https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management: manager,
 * operation, time, fieldsV1 with `f:data`); kubectl patch's default field manager is
 * `kubectl-patch` (kubernetes/kubectl pkg/cmd/patch/patch.go, AddFieldManagerFlagVar).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap, V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { FencingToken } from '../../src/runtime/fencing-token.js';
import type { SideEffectFence } from '../../src/runtime/side-effect-fence.js';
import { ConfigMapStateStore } from '../../src/state/configmap-state-store.js';
import {
  contentVerdict,
  contentWriters,
  describeForeignStateWrite,
  reportForeignStateWrite,
  STATE_CHANGED_OUTSIDE_OPERATOR_REASON,
  stateChanges,
} from '../../src/state/foreign-state-write.js';
import { encodeStateConfigMap, STATE_DIGEST_ANNOTATION } from '../../src/state/state-configmap-codec.js';
import { InMemoryConfigMapClient } from './in-memory-configmap-client.js';
import { fullState, ownedDeployment } from './state-fixtures.js';

const deployment = ownedDeployment();
const NS = 'team-a';
const NAME = 'orders-operator-state';
const TOKEN: FencingToken = { holderIdentity: 'op-a', leaseTransitions: 1 };
const fence: SideEffectFence = { token: TOKEN, check: () => {} };

function newStore(client: InMemoryConfigMapClient) {
  return new ConfigMapStateStore({ client, fencingToken: () => TOKEN, retryDelayMs: 0 });
}

const patchEntry = (time: string): V1ManagedFieldsEntry => ({
  manager: 'kubectl-patch',
  operation: 'Update',
  apiVersion: 'v1',
  time: new Date(time),
  fieldsV1: { 'f:data': { 'f:deployedFrom': {} } },
});

/** What `kubectl patch` does to the stored object: one data key changed, the digest left as it was. */
function patchDirectly(client: InMemoryConfigMapClient, key: string, value: string, managedFields?: V1ManagedFieldsEntry[]): V1ConfigMap {
  const edited = client.peek(NS, NAME)!;
  edited.data![key] = value;
  if (managedFields) edited.metadata!.managedFields = managedFields;
  return client.putDirectly(edited);
}

/** Collects the events a reconciler would emit. */
function eventSink() {
  const events: { reason: string; message: string }[] = [];
  const emit = (_owner: FlinkDeploymentV1, _type: 'Warning', reason: string, message: string) => void events.push({ reason, message });
  return { events, emit };
}

test('the codec records the digest of what it wrote: its own content is own, an edited value is foreign, no digest is unjudged', () => {
  const { configMap } = encodeStateConfigMap(fullState(), { deployment });
  assert.match(configMap.metadata!.annotations![STATE_DIGEST_ANNOTATION], /^sha256:[0-9a-f]{64}$/);
  assert.equal(contentVerdict(configMap), 'own');
  const edited = structuredClone(configMap);
  edited.data!.deployedFrom = 's3://elsewhere';
  assert.equal(contentVerdict(edited), 'foreign');
  delete edited.metadata!.annotations![STATE_DIGEST_ANNOTATION];
  assert.equal(contentVerdict(edited), 'unjudged', 'written by an operator version before the digest');
  const relabelled = structuredClone(configMap);
  relabelled.metadata!.labels = { ...relabelled.metadata!.labels, team: 'a' };
  assert.equal(contentVerdict(relabelled), 'own', 'labels and annotations are not state');
});

test('contentWriters names the newest writer of data other than the operator, with operation and time', () => {
  const writers = contentWriters([
    { manager: 'flink-operator', operation: 'Update', time: new Date('2026-01-01T10:00:05Z'), fieldsV1: { 'f:data': {} } },
    { manager: 'kubectl-label', operation: 'Update', time: new Date('2026-01-01T10:00:09Z'), fieldsV1: { 'f:metadata': { 'f:labels': {} } } },
    { manager: 'kubectl-edit', operation: 'Update', time: new Date('2026-01-01T09:00:00Z'), fieldsV1: { 'f:data': {} } },
    patchEntry('2026-01-01T10:00:07Z'),
  ]);
  assert.deepEqual(writers, [{ manager: 'kubectl-patch', operation: 'Update', time: '2026-01-01T10:00:07Z' }]);
  assert.deepEqual(contentWriters(undefined), []);
});

test('stateChanges lists the changed paths by ConfigMap key, old and new; undefined without a previous state', () => {
  const before = fullState();
  const after = { ...structuredClone(before), deployedFrom: 's3://edited', upgradeSavepointPath: 's3://sp/edited' };
  const changes = stateChanges(before, after)!;
  const paths = changes.map((c) => c.path);
  assert.ok(paths.includes('deployedFrom'), paths.join());
  assert.ok(paths.includes('pendingOperation.upgradeSavepointPath'), paths.join());
  assert.deepEqual(
    changes.find((c) => c.path === 'deployedFrom'),
    { path: 'deployedFrom', ...(before.deployedFrom ? { before: JSON.stringify(before.deployedFrom) } : {}), after: '"s3://edited"' },
  );
  assert.equal(stateChanges(undefined, after), undefined);
  assert.deepEqual(stateChanges(before, { ...before, lastWriter: { holderIdentity: 'other', leaseTransitions: 9 } }), [], 'the writer stamp is not content');
});

test('a kubectl patch of the state is reported once, naming kubectl-patch and the key, then acknowledged; own writes are not reported', async () => {
  const client = new InMemoryConfigMapClient();
  const store = newStore(client);
  await store.update(deployment, () => ({ ...fullState(), deployedFrom: 's3://sp/original' }));
  await store.load(deployment);
  assert.equal(store.takeForeignStateWrite(deployment), undefined, 'our own write');

  patchDirectly(client, 'deployedFrom', 's3://sp/restore-me', [patchEntry('2026-01-01T10:00:07Z')]);
  const sink = eventSink();
  const loaded = await store.load(deployment);
  assert.equal(loaded.kind === 'found' && loaded.state.deployedFrom, 's3://sp/restore-me', 'the edited state is what the pass acts on');
  await reportForeignStateWrite(store, deployment, sink.emit, fence);
  assert.equal(sink.events.length, 1);
  assert.equal(sink.events[0].reason, STATE_CHANGED_OUTSIDE_OPERATOR_REASON);
  assert.match(sink.events[0].message, /field manager kubectl-patch \(Update\) at 2026-01-01T10:00:07Z/);
  assert.match(sink.events[0].message, /deployedFrom: "s3:\/\/sp\/original" → "s3:\/\/sp\/restore-me"/);
  assert.match(sink.events[0].message, /audit log/);
  assert.equal(contentVerdict(client.peek(NS, NAME)!), 'own', 'the acknowledgement recorded a fresh digest');

  // later passes and the operator's own writes: nothing more
  await store.load(deployment);
  await reportForeignStateWrite(store, deployment, sink.emit, fence);
  await store.update(deployment, (s) => ({ ...s, upgradeSavepointPath: 's3://sp/next' }));
  await store.load(deployment);
  await reportForeignStateWrite(store, deployment, sink.emit, fence);
  assert.equal(sink.events.length, 1, 'once per foreign change');

  // a restarted operator (a new store) reads the acknowledged content: not reported again
  const restarted = newStore(client);
  await restarted.load(deployment);
  await reportForeignStateWrite(restarted, deployment, sink.emit, fence);
  assert.equal(sink.events.length, 1);
});

test('a write by another instance of the operator (previous leader, another shard) is not foreign', async () => {
  const client = new InMemoryConfigMapClient();
  await newStore(client).update(deployment, () => fullState());
  const ours = newStore(client);
  await ours.load(deployment);
  const other = new ConfigMapStateStore({ client, fencingToken: () => ({ holderIdentity: 'op-b', leaseTransitions: 2 }), retryDelayMs: 0 });
  await other.update(deployment, (s) => ({ ...s, deployedFrom: 's3://sp/by-the-next-leader' }));
  await ours.load(deployment);
  assert.equal(ours.takeForeignStateWrite(deployment), undefined);
});

test('a foreign change found by a process that never read the object says the previous content is not known', async () => {
  const client = new InMemoryConfigMapClient();
  await newStore(client).update(deployment, () => fullState());
  patchDirectly(client, 'deployedFrom', 's3://sp/edited');
  const fresh = newStore(client);
  await fresh.load(deployment);
  const write = fresh.takeForeignStateWrite(deployment)!;
  assert.ok(write);
  assert.equal(write.changes, undefined);
  const message = describeForeignStateWrite(write);
  assert.match(message, /previous content is not known/);
  assert.match(message, /a writer the object does not name/);
});

test('the acknowledgement writes nothing when the content changed again since the report', async () => {
  const client = new InMemoryConfigMapClient();
  const store = newStore(client);
  await store.update(deployment, () => fullState());
  patchDirectly(client, 'deployedFrom', 's3://sp/first-edit');
  await store.load(deployment);
  const write = store.takeForeignStateWrite(deployment)!;
  patchDirectly(client, 'deployedFrom', 's3://sp/second-edit');
  const replaces = client.count('replace');
  await store.acknowledgeForeignStateWrite(deployment, write, fence);
  assert.equal(client.count('replace'), replaces);
  await store.load(deployment);
  const second = store.takeForeignStateWrite(deployment)!;
  assert.deepEqual(
    second.changes?.find((c) => c.path === 'deployedFrom'),
    { path: 'deployedFrom', after: '"s3://sp/second-edit"', ...(fullState().deployedFrom ? { before: JSON.stringify(fullState().deployedFrom) } : {}) },
    'the second change is reported on its own, against the last content the operator trusted',
  );
});
