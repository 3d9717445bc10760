/**
 * Shards (design/012-shards.md): the shard-aware fencing token (format and rule), what one install
 * knows of who owns a resource (ShardOwnership) and the per-pass fence made from it, and the state
 * store's refusal of another shard's state. The end-to-end move between two installs is
 * test/e2e/shards.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import type { ObjectEventListener, ObservableObjectReader } from '../../src/kube/object-reader.js';
import {
  assertNotStale,
  ForeignShardError,
  formatFencingToken,
  LEADER_ANNOTATION,
  parseFencingToken,
  StaleLeaderError,
  type FencingToken,
} from '../../src/runtime/fencing-token.js';
import { handoverGraceMs, shardFence, shardIdentity, ShardOwnership, type ShardedKind } from '../../src/runtime/shard.js';
import { FencedOutError, unfenced } from '../../src/runtime/side-effect-fence.js';
import { ConfigMapStateStore } from '../../src/state/configmap-state-store.js';
import { InMemoryConfigMapClient } from '../state/in-memory-configmap-client.js';
import { ownedDeployment } from '../state/state-fixtures.js';

const A = 'operators/flink-operator-shard-a';
const B = 'operators/flink-operator-shard-b';
const tokenOf = (shard: string | undefined, leaseTransitions = 0, epoch?: number): FencingToken => ({
  holderIdentity: `op-${shard?.slice(-1) ?? 'legacy'}`,
  leaseTransitions,
  ...(shard !== undefined ? { shard } : {}),
  ...(epoch !== undefined ? { epoch } : {}),
});

test('a token names its shard and hand-over epoch; stamps of the old format still parse (no shard)', () => {
  assert.equal(formatFencingToken(tokenOf(A, 3)), 'op-a/3@operators/flink-operator-shard-a');
  assert.equal(formatFencingToken(tokenOf(B, 0, 2)), 'op-b/0@operators/flink-operator-shard-b#2');
  for (const token of [tokenOf(A, 3), tokenOf(B, 0, 2), { holderIdentity: 'pod/with/slashes', leaseTransitions: 7, shard: A, epoch: 11 }]) {
    assert.deepEqual(parseFencingToken(formatFencingToken(token)), token);
  }
  assert.deepEqual(parseFencingToken('op-a/4'), { holderIdentity: 'op-a', leaseTransitions: 4 }, 'old format');
  assert.deepEqual(parseFencingToken('name@x/4'), { holderIdentity: 'name@x', leaseTransitions: 4 }, "an old identity with '@' is not mistaken for a shard");
  assert.equal(parseFencingToken('op-a/x@ns/lease'), undefined);
  assert.equal(shardIdentity({ leaseNamespace: 'operators', leaseName: 'flink-operator-shard-a' }), A);
  assert.equal(handoverGraceMs({ leaseDurationMs: 15_000, retryPeriodMs: 2_000 }), 17_000);
});

test('the rule: the higher epoch wins; at equal epochs another shard is refused; within a shard the newer term', () => {
  assert.doesNotThrow(() => assertNotStale(tokenOf(A, 9), tokenOf(B, 0, 1)), 'a write of the previous owner (lower epoch) may be overwritten');
  assert.throws(() => assertNotStale(tokenOf(B, 0, 1), tokenOf(A, 9)), ForeignShardError, 'after the hand-over, the old shard is refused');
  assert.throws(() => assertNotStale(tokenOf(B, 0), tokenOf(A, 5)), ForeignShardError, 'counters of different Leases do not order shards');
  assert.throws(() => assertNotStale(tokenOf(A, 0, 2), tokenOf(A, 3, 1)), StaleLeaderError, 'a stale epoch of the own shard');
  assert.throws(() => assertNotStale(tokenOf(A, 4), tokenOf(A, 3)), StaleLeaderError, 'same shard: the newer term wins');
  assert.doesNotThrow(() => assertNotStale(tokenOf(A, 3), tokenOf(A, 4)));
  assert.doesNotThrow(() => assertNotStale(tokenOf(undefined, 2), tokenOf(A, 2)), 'an old-format stamp counts as the own shard');
  assert.throws(() => assertNotStale(tokenOf(undefined, 5), tokenOf(A, 2)), StaleLeaderError);
  const error = (() => {
    try {
      assertNotStale(tokenOf(B, 0), tokenOf(A, 5));
    } catch (e) {
      return e as Error;
    }
    return undefined;
  })();
  assert.match(error?.message ?? '', /shard operators\/flink-operator-shard-b .* this writer is shard operators\/flink-operator-shard-a/);
});

/** An informer stand-in. */
class FakeReader<T extends KubernetesObject> implements ObservableObjectReader<T> {
  readonly objects = new Map<string, T>();
  private readonly listeners = new Set<ObjectEventListener<T>>();
  get(namespace: string, name: string) {
    return this.objects.get(`${namespace}/${name}`);
  }
  list() {
    return [...this.objects.values()];
  }
  subscribe(listener: ObjectEventListener<T>) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  hasSynced() {
    return true;
  }
  deliver(type: 'added' | 'updated' | 'deleted', object: T) {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    if (type === 'deleted') this.objects.delete(key);
    else this.objects.set(key, object);
    for (const listener of this.listeners) listener({ type, object });
  }
}

const deployment = ownedDeployment('orders');
const uid = deployment.metadata.uid!;
const stateMap = (stamp: FencingToken): V1ConfigMap => ({
  metadata: {
    namespace: deployment.metadata.namespace,
    name: 'orders-operator-state',
    annotations: { [LEADER_ANNOTATION]: formatFencingToken(stamp) },
    ownerReferences: [{ apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', name: 'orders', uid, controller: true }],
  },
});

function setup() {
  let now = 1_000;
  const deployments = new FakeReader<KubernetesObject>();
  const states = new FakeReader<V1ConfigMap>();
  const ownership = new ShardOwnership({
    shard: B,
    graceMs: 5_000,
    readers: new Map<ShardedKind, ObservableObjectReader<KubernetesObject>>([['FlinkDeployment', deployments]]),
    stateConfigMaps: states,
    now: () => now,
  });
  return { deployments, states, ownership, advance: (ms: number) => (now += ms) };
}

test("a pass is fenced out while the resource's state names another shard, and once it leaves this shard's cache", () => {
  const { deployments, states, ownership, advance } = setup();
  const leader = tokenOf(B, 4);
  states.deliver('added', stateMap(tokenOf(A, 9)));
  deployments.deliver('added', deployment); // relabelled into shard b: first seen now
  const fence = shardFence(unfenced(leader), ownership, 'FlinkDeployment', 'team-a', 'orders');
  assert.deepEqual(fence.token, { holderIdentity: 'op-b', leaseTransitions: 4, shard: B });
  assert.throws(
    () => fence.check('write status'),
    (e: unknown) =>
      e instanceof FencedOutError && /last written by shard operators\/flink-operator-shard-a/.test(e.message) && /after taking it over/.test(e.message),
  );
  const [pending] = ownership.foreignOwned();
  assert.equal(pending?.dueAt, 1_000 + 5_000, 'due one grace after it was first seen');
  advance(6_000);

  // the hand-over's write, then the informer's copy of it (and a lagging older copy, ignored)
  ownership.recordStamp(uid, { token: tokenOf(B, 4, 1), configMapNamespace: 'team-a', configMapName: 'orders-operator-state' });
  states.deliver('updated', stateMap(tokenOf(A, 9)));
  assert.deepEqual(ownership.foreignOwned(), []);
  const after = shardFence(unfenced(leader), ownership, 'FlinkDeployment', 'team-a', 'orders');
  assert.deepEqual(after.token, { holderIdentity: 'op-b', leaseTransitions: 4, shard: B, epoch: 1 }, 'stamps at the new epoch');
  assert.doesNotThrow(() => after.check('write status'));

  deployments.deliver('deleted', deployment); // relabelled away again (or deleted)
  assert.throws(
    () => after.check('write status'),
    (e: unknown) => e instanceof FencedOutError && /no longer in the cache of shard operators\/flink-operator-shard-b/.test(e.message),
  );
});

test("a shard that learns of another shard's newer stamp stops acting at once", () => {
  const { deployments, states, ownership } = setup();
  deployments.deliver('added', deployment);
  states.deliver('added', stateMap(tokenOf(B, 4)));
  const fence = shardFence(unfenced(tokenOf(B, 4)), ownership, 'FlinkDeployment', 'team-a', 'orders');
  assert.doesNotThrow(() => fence.check('a'));
  states.deliver('updated', stateMap(tokenOf(A, 9, 1))); // shard a took it over (b's cache still shows it labelled b)
  assert.throws(() => fence.check('b'), FencedOutError);
});

test("the state store refuses a write over another shard's state, and over a newer epoch", async () => {
  const client = new InMemoryConfigMapClient();
  let token: FencingToken = tokenOf(A, 2);
  const store = new ConfigMapStateStore({ client, fencingToken: () => token, retryDelayMs: 0 });
  const written = await store.update(deployment, (s) => ({ ...s, phase: 'DEPLOYED', deployedJobId: 'job-1' }));
  assert.deepEqual(written.lastWriter, tokenOf(A, 2), 'the stamp carries the shard');
  assert.equal(client.peek('team-a', 'orders-operator-state')?.metadata?.annotations?.[LEADER_ANNOTATION], 'op-a/2@operators/flink-operator-shard-a');
  const loaded = await store.load(deployment);
  assert.ok(loaded.kind === 'found' && loaded.state.lastWriter?.holderIdentity === 'op-a', 'the codec reads the new stamp back');

  token = tokenOf(B, 7);
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, deployedJobId: 'job-2' })),
    ForeignShardError,
  );
  // shard b took it over (epoch 1): a is refused, b at epoch 1 writes
  const cm = client.peek('team-a', 'orders-operator-state')!;
  client.putDirectly({
    ...cm,
    metadata: { ...cm.metadata, annotations: { ...cm.metadata?.annotations, [LEADER_ANNOTATION]: formatFencingToken(tokenOf(B, 7, 1)) } },
  });
  token = tokenOf(A, 2);
  await assert.rejects(
    store.update(deployment, (s) => ({ ...s, deployedJobId: 'job-3' })),
    ForeignShardError,
  );
  token = tokenOf(B, 7, 1);
  const byB = await store.update(deployment, (s) => ({ ...s, deployedJobId: 'job-4' }));
  assert.equal(byB.deployedJobId, 'job-4');
  assert.equal(client.peek('team-a', 'orders-operator-state')?.metadata?.annotations?.[LEADER_ANNOTATION], 'op-b/7@operators/flink-operator-shard-b#1');
});
