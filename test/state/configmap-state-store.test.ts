import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { InternalState } from '../../src/api/internal-state.js';
import type { ObjectEvent, ObjectEventListener, ObservableObjectReader } from '../../src/kube/object-reader.js';
import { StaleLeaderError, type FencingToken } from '../../src/runtime/fencing-token.js';
import { OwnWriteTracker } from '../../src/runtime/own-write-tracker.js';
import { ConfigMapStateStore } from '../../src/state/configmap-state-store.js';
import { decodeStateConfigMap, encodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import {
  CorruptStateError,
  ForeignStateError,
  NotLeaderError,
  RegressedStateError,
  StateDeletedError,
  StatePreconditionError,
  StateTooLargeError,
  StateWriteRetriesExhaustedError,
} from '../../src/state/state-errors.js';
import { InMemoryConfigMapClient } from './in-memory-configmap-client.js';
import { fullState, ownedDeployment } from './state-fixtures.js';

const deployment = ownedDeployment();
const NS = 'team-a';
const NAME = 'orders-operator-state';

/** A synced informer stand-in fed by the fake server's writes (as a watch would deliver them). */
class FakeInformer implements ObservableObjectReader<V1ConfigMap> {
  private readonly objects = new Map<string, V1ConfigMap>();
  private readonly listeners = new Set<ObjectEventListener<V1ConfigMap>>();
  get(namespace: string, name: string) {
    return this.objects.get(`${namespace}/${name}`);
  }
  list() {
    return [...this.objects.values()];
  }
  subscribe(listener: ObjectEventListener<V1ConfigMap>) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  hasSynced() {
    return true;
  }
  deliver(object: V1ConfigMap, type: 'added' | 'updated' | 'deleted' = 'updated') {
    const key = `${object.metadata!.namespace}/${object.metadata!.name}`;
    if (type === 'deleted') this.objects.delete(key);
    else this.objects.set(key, structuredClone(object));
    const event = { type, object } as ObjectEvent<V1ConfigMap>;
    for (const listener of this.listeners) listener(event);
  }
}

function setup(options: { token?: FencingToken | undefined; informer?: FakeInformer } = {}) {
  const client = new InMemoryConfigMapClient();
  const tracker = new OwnWriteTracker();
  let token: FencingToken | undefined = 'token' in options ? options.token : { holderIdentity: 'op-a', leaseTransitions: 1 };
  const store = new ConfigMapStateStore({
    client,
    fencingToken: () => token,
    writeTracker: tracker,
    informer: options.informer,
    retryDelayMs: 0,
  });
  return { client, store, tracker, setToken: (t: FencingToken | undefined) => (token = t) };
}

const deployed = (s: InternalState): InternalState => ({ ...s, phase: 'DEPLOYED', lastReconciledSpec: deployment.spec, lastReconciledGeneration: 3 });

test('missing → load says missing; the first update creates the ConfigMap owned by the deployment', async () => {
  const { client, store, tracker } = setup();
  assert.deepEqual(await store.load(deployment), { kind: 'missing' });
  const written = await store.update(deployment, deployed);
  assert.equal(written.revision, 1);
  assert.deepEqual(written.lastWriter, { holderIdentity: 'op-a', leaseTransitions: 1 });
  const cm = client.peek(NS, NAME)!;
  assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, deployment.metadata.uid);
  assert.equal(cm.metadata?.annotations?.['flink-operator.io/leader'], 'op-a/1');
  assert.equal(cm.data?.revision, '1');
  assert.deepEqual(
    client.calls.map((c) => c.verb),
    ['get', 'get', 'create'],
  );
  assert.equal(tracker.isOwnEcho('ConfigMap', 'added', cm), true, 'the write was recorded for echo filtering');
  const loaded = await store.load(deployment);
  assert.ok(loaded.kind === 'found');
  assert.deepEqual(loaded.state, written);
});

test('an update PUTs with the resourceVersion it read and bumps the revision; no write when nothing changes', async () => {
  const { client, store } = setup();
  await store.update(deployment, deployed);
  const rvAfterCreate = client.peek(NS, NAME)!.metadata!.resourceVersion;
  const second = await store.update(deployment, (s) => ({ ...s, deployedJobId: 'job-1' }));
  assert.equal(second.revision, 2);
  const put = client.calls.find((c) => c.verb === 'replace')!;
  assert.equal(put.resourceVersion, rvAfterCreate);
  const writes = client.count('create') + client.count('replace');
  assert.equal((await store.update(deployment, (s) => s)).revision, 2, 'same object: no change');
  assert.equal((await store.update(deployment, (s) => ({ ...s, deployedJobId: 'job-1' }))).revision, 2, 'deep-equal: no change');
  assert.equal(client.count('create') + client.count('replace'), writes, 'nothing written');
});

test('409: re-read and re-apply fn on the newer state, so neither write is lost', async () => {
  const { client, store } = setup();
  await store.update(deployment, deployed);
  // someone else (a user) edits between our read and our write
  let interfered = false;
  const original = client.get.bind(client);
  client.get = async (ns, name) => {
    const got = await original(ns, name);
    if (!interfered && got) {
      interfered = true;
      const edited = structuredClone(got);
      edited.data!.deployedJobId = 'set-by-someone-else';
      client.putDirectly(edited);
    }
    return got;
  };
  const written = await store.update(deployment, (s) => ({ ...s, upgradeSavepointPath: 's3://sp/1' }));
  assert.equal(written.upgradeSavepointPath, 's3://sp/1');
  assert.equal(written.deployedJobId, 'set-by-someone-else');
  assert.deepEqual(
    client.calls.slice(-4).map((c) => c.verb),
    ['get', 'replace', 'get', 'replace'],
  );
});

test('a lost answer (the write landed, the response did not): re-read shows it, fn changes nothing, no second write', async () => {
  const { client, store } = setup();
  await store.update(deployment, deployed);
  client.failNext('replace', 0, { applyFirst: true });
  const setPath = (s: InternalState) => ({ ...s, upgradeSavepointPath: 's3://sp/2' });
  const result = await store.update(deployment, setPath);
  assert.equal(result.upgradeSavepointPath, 's3://sp/2');
  assert.equal(client.count('replace'), 1, 'written once');
  assert.equal(client.peek(NS, NAME)!.data!.revision, '2');
});

test('transient failures are retried (bounded), then StateWriteRetriesExhaustedError', async () => {
  const { client, store } = setup();
  client.failNext('create', 500);
  client.failNext('create', 0);
  await store.update(deployment, deployed);
  assert.equal(client.count('create'), 3);
  for (let i = 0; i < 5; i++) client.failNext('replace', 503);
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, deployedJobId: 'x' })),
    StateWriteRetriesExhaustedError,
  );
  assert.equal(client.count('replace'), 5);
});

test('a 429 is retried after the Retry-After the server asked for', async () => {
  const { client, store } = setup();
  client.failNext('create', 429);
  const started = Date.now();
  await store.update(deployment, deployed);
  assert.ok(Date.now() - started >= 900, 'waited about a second');
  assert.equal(client.count('create'), 2);
});

test('fencing: no token → NotLeaderError; a newer leader wrote → StaleLeaderError; nothing written', async () => {
  const { client, store, setToken } = setup();
  setToken(undefined);
  await assert.rejects(store.update(deployment, deployed), NotLeaderError);
  assert.equal(client.count('create'), 0);
  setToken({ holderIdentity: 'op-b', leaseTransitions: 2 });
  await store.update(deployment, deployed);
  setToken({ holderIdentity: 'op-a', leaseTransitions: 1 });
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, deployedJobId: 'stale' })),
    StaleLeaderError,
  );
  assert.equal(client.count('replace'), 0);
  assert.equal(client.peek(NS, NAME)!.metadata!.annotations!['flink-operator.io/leader'], 'op-b/2');
});

test('a ConfigMap not owned by this deployment uid is never read nor overwritten', async () => {
  const { client, store } = setup();
  const foreign = encodeStateConfigMap(fullState(), { deployment: ownedDeployment('orders', 'someone-elses-uid') }).configMap;
  client.putDirectly(foreign);
  await assert.rejects(store.load(deployment), ForeignStateError);
  await assert.rejects(store.update(deployment, deployed), ForeignStateError);
  const plain: V1ConfigMap = { metadata: { name: NAME, namespace: NS }, data: { hello: 'world' } };
  client.putDirectly(plain);
  await assert.rejects(store.load(deployment), /not owned by FlinkDeployment orders/);
  assert.equal(client.count('create') + client.count('replace'), 0);
  assert.deepEqual(client.peek(NS, NAME)!.data, { hello: 'world' });
});

test('a corrupt ConfigMap: CorruptStateError on load and update, no overwrite until fixed', async () => {
  const { client, store } = setup();
  await store.update(deployment, deployed);
  const cm = client.peek(NS, NAME)!;
  cm.data!.lastReconciledSpec = 'job: [broken';
  client.putDirectly(cm);
  await assert.rejects(store.load(deployment), CorruptStateError);
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, deployedJobId: 'x' })),
    /key "lastReconciledSpec".*fix or delete the ConfigMap/,
  );
  assert.equal(client.count('replace'), 0);
  // the user fixes it: the store works again
  cm.data!.lastReconciledSpec = 'image: flink:1.20\n';
  client.putDirectly(cm);
  const fixed = await store.update(deployment, (s) => ({ ...s, deployedJobId: 'x' }));
  assert.equal(fixed.deployedJobId, 'x');
});

test('too large: StateTooLargeError, nothing written', async () => {
  const client = new InMemoryConfigMapClient();
  const store = new ConfigMapStateStore({
    client,
    fencingToken: () => ({ holderIdentity: 'a', leaseTransitions: 0 }),
    maxTotalBytes: 50_000,
    compressThresholdBytes: 10_000,
    retryDelayMs: 0,
  });
  const incompressible = randomBytes(60_000).toString('base64');
  const huge = { ...deployment.spec, flinkConfiguration: { blob: incompressible } };
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, lastReconciledSpec: huge })),
    StateTooLargeError,
  );
  assert.equal(client.count('create'), 0);
});

test('with a synced informer: 0 GETs for loads of an unchanged deployment; a user edit is seen; deletion is seen', async () => {
  const informer = new FakeInformer();
  const { client, store, tracker } = setup({ informer });
  client.onWrite = (object) =>
    informer.deliver(object, object.metadata?.resourceVersion && client.count('create') === 1 && client.count('replace') === 0 ? 'added' : 'updated');
  await store.update(deployment, deployed); // create (the synced informer lacks it: no GET first)
  const getsBefore = client.count('get');
  for (let i = 0; i < 5; i++) await store.load(deployment);
  await store.update(deployment, (s) => ({ ...s, deployedJobId: 'job-1' }));
  await store.load(deployment);
  assert.equal(client.count('get'), getsBefore, 'no GET once the state is known');
  // a user's edit arrives through the informer: not an echo, and the next load sees it
  const edited = client.peek(NS, NAME)!;
  edited.data!.deployedJobId = 'user-set';
  const stored = client.putDirectly(edited);
  assert.equal(tracker.isOwnEcho('ConfigMap', 'updated', stored), false);
  informer.deliver(stored);
  const loaded = await store.load(deployment);
  assert.ok(loaded.kind === 'found' && loaded.state.deployedJobId === 'user-set');
  // deleted by a user: the next load GETs and reports missing
  client.deleteDirectly(NS, NAME);
  informer.deliver(stored, 'deleted');
  assert.deepEqual(await store.load(deployment), { kind: 'missing' });
  store.close();
});

test("a new deployment's first pass (no status yet, synced informer): load and the first write cost one request, the create", async () => {
  const informer = new FakeInformer();
  const { client, store } = setup({ informer });
  const fresh = ownedDeployment();
  assert.equal(fresh.status, undefined);
  assert.deepEqual(await store.load(fresh), { kind: 'missing' });
  const written = await store.update(fresh, deployed, { basedOnRevision: 0 });
  assert.equal(written.revision, 1);
  assert.deepEqual(
    client.calls.map((c) => c.verb),
    ['create'],
    'no GET of a ConfigMap the synced informer does not hold, for an owner nothing was recorded for',
  );
  store.close();
});

test('an owner with a status keeps the GET on a cache miss: a lost ConfigMap is told apart from a lagging cache', async () => {
  const informer = new FakeInformer();
  const { client, store } = setup({ informer });
  const recorded = { ...ownedDeployment(), status: { stateRef: { configMapName: NAME, revision: 4 } } };
  assert.deepEqual(await store.load(recorded), { kind: 'missing' });
  assert.deepEqual(
    client.calls.map((c) => c.verb),
    ['get'],
  );
  store.close();
});

test('the informer lags a ConfigMap that exists: the create answers 409, the GET finds it, and a decision made on "missing" is refused', async () => {
  const informer = new FakeInformer();
  const { client, store } = setup({ informer });
  const fresh = ownedDeployment();
  // another writer (a previous leader, just before it lost its lease) created the state; our informer has not seen it yet
  const other = setup();
  await other.store.update(fresh, deployed);
  client.putDirectly(other.client.peek(NS, NAME)!);
  assert.deepEqual(await store.load(fresh), { kind: 'missing' }, 'the synced informer does not hold it (lag)');
  await assert.rejects(
    store.update(fresh, (st) => ({ ...deployed(st), deployedJobId: 'decided-on-missing' }), { basedOnRevision: 0 }),
    StatePreconditionError,
  );
  assert.deepEqual(
    client.calls.map((c) => c.verb),
    ['create', 'get'],
    'the create is the check; then one GET',
  );
  assert.equal(client.peek(NS, NAME)?.data?.revision, '1', 'the existing state is untouched');
  store.close();
});

test('deleted between our cached read and our PUT (404): StateDeletedError, fn is not applied to an empty state', async () => {
  const informer = new FakeInformer();
  const { client, store } = setup({ informer });
  client.onWrite = (object) => informer.deliver(object);
  await store.update(deployment, deployed);
  client.deleteDirectly(NS, NAME); // the informer has not delivered the delete yet
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, deployedJobId: 'after-delete' })),
    StateDeletedError,
  );
  assert.deepEqual(
    client.calls.slice(-2).map((c) => c.verb),
    ['replace', 'get'],
  );
  assert.equal(client.peek(NS, NAME), undefined, 'nothing half-made was created');
  assert.deepEqual(await store.load(deployment), { kind: 'missing' }, 'the next reconcile sees it missing (and rebuilds)');
  store.close();
});

test('revision stays monotonic across a rebuild: fn may seed a floor', async () => {
  const { store } = setup();
  const written = await store.update(deployment, (s) => ({ ...s, revision: 41, reconciliationState: 'DEPLOYED' }));
  assert.equal(written.revision, 42);
});

test('the load after our own write (served without parsing it again) equals a fresh decode of what was stored', async () => {
  const informer = new FakeInformer();
  const { client, store } = setup({ informer });
  client.onWrite = (object) => informer.deliver(object, 'updated');
  await store.update(deployment, deployed);
  // fn leaves an undefined member behind, which the stored YAML cannot carry
  await store.update(deployment, (s) => ({
    ...s,
    deployedJobId: 'job-2',
    pendingSavepoint: undefined,
    savepointHistory: [{ location: 's3://b/sp-1', timeStamp: 1, triggerType: 'MANUAL', jobId: 'job-1' }],
  }));
  const loaded = await store.load(deployment);
  assert.equal(loaded.kind, 'found');
  assert.deepStrictEqual(loaded.kind === 'found' && loaded.state, decodeStateConfigMap(client.peek(NS, NAME)!));
  store.close();
});

test('an update decided on an older revision is not applied to the newer state it finds (StatePreconditionError), unless it is already there', async () => {
  const { client, store } = setup();
  const first = await store.update(deployment, deployed);
  // a second writer (another instance) moves the state on after our decision
  const other = structuredClone(client.peek(NS, NAME)!);
  other.data!.deployedJobId = 'b'.repeat(32);
  other.data!.revision = String(first.revision + 1);
  client.putDirectly(other);
  const decidedOn = first.revision;
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, jobIdToSubmit: 'c'.repeat(32) }), { basedOnRevision: decidedOn }),
    StatePreconditionError,
  );
  assert.equal(client.peek(NS, NAME)!.data!.deployedJobId, 'b'.repeat(32), 'nothing written');
  // a decision that the newer state already holds (our own lost answer) is fine
  const same = await store.update(deployment, (s) => ({ ...s, deployedJobId: 'b'.repeat(32) }), { basedOnRevision: decidedOn });
  assert.equal(same.revision, first.revision + 1);
});

test('a state put back to an older revision is refused on load and update, and never overwritten', async () => {
  const { client, store } = setup();
  await store.update(deployment, deployed);
  const captured = structuredClone(client.peek(NS, NAME)!);
  await store.update(deployment, (s) => ({ ...s, deployedJobId: 'a'.repeat(32) }));
  await store.update(deployment, (s) => ({ ...s, deployedJobId: 'b'.repeat(32) }));
  // a backup restore: the old data on the current object
  const restored = structuredClone(client.peek(NS, NAME)!);
  restored.data = captured.data;
  client.putDirectly(restored);
  const writes = client.count('replace');
  await assert.rejects(store.load(deployment), (e: unknown) => e instanceof RegressedStateError && /revision 1, older than revision 3/.test(e.message));
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, upgradeSavepointPath: 's3://x' })),
    RegressedStateError,
  );
  assert.equal(client.count('replace'), writes, 'nothing overwritten');
  // a fresh process knows only the status: stateRef.revision is the floor
  const fresh = setup();
  fresh.client.putDirectly(structuredClone(restored));
  const withStatus = { ...deployment, status: { stateRef: { configMapName: NAME, revision: 3 } } };
  await assert.rejects(fresh.store.load(withStatus), RegressedStateError);
});

test('the records the size rules trim from the history are handed over for disposal', async () => {
  const client = new InMemoryConfigMapClient();
  const trimmed: string[] = [];
  const store = new ConfigMapStateStore({
    client,
    fencingToken: () => ({ holderIdentity: 'op-a', leaseTransitions: 1 }),
    retryDelayMs: 0,
    maxTotalBytes: 6_000,
    onHistoryTrimmed: (_deployment, dropped) => trimmed.push(...dropped.map((r) => r.location)),
  });
  const history = Array.from({ length: 80 }, (_, i) => ({
    location: `s3://bucket/savepoints/savepoint-${String(i).padStart(3, '0')}-${'x'.repeat(40)}`,
    timeStamp: 1_000 + i,
    triggerType: 'PERIODIC' as const,
  }));
  const written = await store.update(deployment, (s) => ({ ...deployed(s), savepointHistory: history }));
  assert.ok(trimmed.length > 0, 'something was trimmed');
  assert.deepEqual(
    [...trimmed, ...written.savepointHistory.map((r) => r.location)],
    history.map((r) => r.location),
    'the trimmed ones are exactly the oldest, none lost from sight',
  );
});

test('a standby that only watched the ConfigMap reach a revision refuses an older copy put back before it took over', async () => {
  const informer = new FakeInformer();
  const leader = setup();
  await leader.store.update(deployment, deployed);
  const captured = structuredClone(leader.client.peek(NS, NAME)!);
  await leader.store.update(deployment, (s) => ({ ...s, deployedJobId: 'a'.repeat(32) }));
  const standby = new ConfigMapStateStore({
    client: leader.client,
    fencingToken: () => ({ holderIdentity: 'op-b', leaseTransitions: 2 }),
    informer,
    retryDelayMs: 0,
  });
  informer.deliver(leader.client.peek(NS, NAME)!, 'added'); // revision 2, seen while standing by
  const restored = structuredClone(leader.client.peek(NS, NAME)!);
  restored.data = captured.data;
  informer.deliver(leader.client.putDirectly(restored)); // revision 1 put back
  await assert.rejects(standby.load(deployment), RegressedStateError);
});
