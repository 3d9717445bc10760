import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, type AppsV1Api, type CoreV1Api, type KubernetesObject, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { buildFlinkClusterResources } from '../../src/flink/flink-cluster-resources.js';
import { FlinkClusterApplier, type FlinkClusterObjects, RENDERED_HASH_ANNOTATION } from '../../src/reconciler/flink-cluster-applier.js';
import type { ObjectReader } from '../../src/kube/object-reader.js';
import { LEADER_ANNOTATION, StaleLeaderError } from '../../src/runtime/fencing-token.js';
import { FencedOutError, unfenced, type SideEffectFence } from '../../src/runtime/side-effect-fence.js';

/** The fence of a pass in leadership term 3 that may act. */
const TERM_3 = unfenced({ holderIdentity: 'op-b', leaseTransitions: 3 });

const UID = '6f1c2b9e-0000-4000-8000-000000000001';
const deployment = flinkDeployment('orders').inNamespace('team-a').withUid(UID).withGeneration(1).withSpec({ mode: 'standalone' }).build();
const objects = (): FlinkClusterObjects =>
  buildFlinkClusterResources(deployment, { spec: deployment.spec, generation: 1, specHash: 'sha256-abc', jobId: '0f1e2d3c4b5a69788796a5b4c3d2e1f0' });

class MapReader<T extends KubernetesObject> implements ObjectReader<T> {
  readonly items = new Map<string, T>();
  get(namespace: string, name: string): T | undefined {
    return this.items.get(`${namespace}/${name}`);
  }
  list(): T[] {
    return [...this.items.values()];
  }
}

/**
 * A fake API: `server` holds what exists; every call is recorded as `verb kind/name`. Creates of an
 * existing name answer 409 AlreadyExists, reads of a missing one 404, as the API server does.
 */
function fakeApi(server: Map<string, KubernetesObject>, options: { versioned?: boolean } = {}) {
  const calls: string[] = [];
  let resourceVersion = 100;
  /** `versioned`: the server stamps a resourceVersion on every write and refuses a stale locked PUT (409), as the API server does. */
  const stored = (body: KubernetesObject): KubernetesObject =>
    options.versioned ? { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++resourceVersion) } } : body;
  const key = (kind: string, r: { namespace: string; name?: string; body?: KubernetesObject }) => `${kind}/${r.name ?? r.body?.metadata?.name}`;
  const create = (kind: string) => async (r: { namespace: string; body: KubernetesObject }) => {
    calls.push(`create ${key(kind, r)}`);
    if (server.has(key(kind, r))) throw new ApiException(409, 'AlreadyExists', { reason: 'AlreadyExists', code: 409 }, {});
    server.set(key(kind, r), stored(r.body));
    return server.get(key(kind, r))!;
  };
  const read = (kind: string) => async (r: { namespace: string; name: string }) => {
    calls.push(`get ${key(kind, r)}`);
    const found = server.get(key(kind, r));
    if (!found) throw new ApiException(404, 'NotFound', { reason: 'NotFound', code: 404 }, {});
    return found;
  };
  const replace = (kind: string) => async (r: { namespace: string; name: string; body: KubernetesObject }) => {
    calls.push(`update ${key(kind, r)}`);
    const live = server.get(key(kind, r));
    if (options.versioned && (!live || live.metadata?.resourceVersion !== r.body.metadata?.resourceVersion))
      throw new ApiException(409, 'Conflict', { reason: 'Conflict', code: 409 }, {});
    server.set(key(kind, r), stored(r.body));
    return server.get(key(kind, r))!;
  };
  const core = {
    createNamespacedConfigMap: create('ConfigMap'),
    readNamespacedConfigMap: read('ConfigMap'),
    replaceNamespacedConfigMap: replace('ConfigMap'),
    createNamespacedService: create('Service'),
    readNamespacedService: read('Service'),
    replaceNamespacedService: replace('Service'),
    listNamespacedConfigMap: async () => {
      calls.push('list ConfigMap (HA)');
      return { items: [] };
    },
  } as unknown as CoreV1Api;
  const apps = {
    createNamespacedDeployment: create('Deployment'),
    readNamespacedDeployment: read('Deployment'),
    replaceNamespacedDeployment: replace('Deployment'),
  } as unknown as AppsV1Api;
  return { core, apps, calls };
}

test('a fresh cluster is created without a single read: the informers do not know it and every create succeeds', async () => {
  const server = new Map<string, KubernetesObject>();
  const api = fakeApi(server);
  const applier = new FlinkClusterApplier(api.apps, api.core, new MapReader<V1Deployment>(), new MapReader<V1Service>());
  const result = await applier.apply(objects(), { resetHaMetadata: false, fence: TERM_3 });
  assert.deepEqual(api.calls, [
    'create ConfigMap/flink-config-orders',
    'create Service/orders',
    'create Service/orders-rest',
    'create Deployment/orders-taskmanager',
    'create Deployment/orders',
  ]);
  assert.equal(result.written.length, 5);
});

test('behind a lagging informer, a create that finds the object already rendered reads it and writes nothing more', async () => {
  const server = new Map<string, KubernetesObject>();
  const first = fakeApi(server);
  await new FlinkClusterApplier(first.apps, first.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  const again = fakeApi(server);
  // the ConfigMap is read first here: the JobManager is not cached, but the ConfigMap create already happened
  const result = await new FlinkClusterApplier(again.apps, again.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  assert.deepEqual(result.written, [], 'applying twice writes once');
  assert.ok(
    again.calls.every((c) => c.startsWith('create ') || c.startsWith('get ')),
    `only failed creates and reads, no update: ${again.calls.join(', ')}`,
  );
});

test('with HA metadata to reset, a JobManager missing from the cache is read first: an already-running rendering keeps its HA metadata', async () => {
  const server = new Map<string, KubernetesObject>();
  const first = fakeApi(server);
  await new FlinkClusterApplier(first.apps, first.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  const again = fakeApi(server);
  await new FlinkClusterApplier(again.apps, again.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: true,
    fence: TERM_3,
  });
  assert.ok(again.calls.includes('get Deployment/orders'), 'the JobManager Deployment was read');
  assert.ok(!again.calls.includes('list ConfigMap (HA)'), 'the HA metadata was not touched');
  assert.ok(!again.calls.includes('create Deployment/orders'));
});

test('everything cached with the same rendering: nothing is sent', async () => {
  const server = new Map<string, KubernetesObject>();
  const first = fakeApi(server);
  await new FlinkClusterApplier(first.apps, first.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  const deployments = new MapReader<V1Deployment>();
  const services = new MapReader<V1Service>();
  for (const [k, v] of server) {
    if (k.startsWith('Deployment/')) deployments.items.set(`team-a/${k.slice('Deployment/'.length)}`, v);
    if (k.startsWith('Service/')) services.items.set(`team-a/${k.slice('Service/'.length)}`, v);
  }
  const cached = fakeApi(server);
  const result = await new FlinkClusterApplier(cached.apps, cached.core, deployments, services).apply(objects(), { resetHaMetadata: false, fence: TERM_3 });
  assert.deepEqual(cached.calls, ['get ConfigMap/flink-config-orders'], 'only the uncached Flink ConfigMap is read');
  assert.deepEqual(result.written, []);
  assert.ok(server.get('Deployment/orders')?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION]);
});

test('a changed rendering of a cached object is replaced on the live resourceVersion', async () => {
  const server = new Map<string, KubernetesObject>();
  const first = fakeApi(server);
  await new FlinkClusterApplier(first.apps, first.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  const deployments = new MapReader<V1Deployment>();
  const live = structuredClone(server.get('Deployment/orders-taskmanager') as V1Deployment);
  live.metadata!.resourceVersion = '42';
  live.metadata!.annotations![RENDERED_HASH_ANNOTATION] = 'an-older-rendering';
  deployments.items.set('team-a/orders-taskmanager', live);
  const api = fakeApi(server);
  await new FlinkClusterApplier(api.apps, api.core, deployments, new MapReader<V1Service>()).apply(objects(), { resetHaMetadata: false, fence: TERM_3 });
  assert.ok(api.calls.includes('update Deployment/orders-taskmanager'));
  assert.equal(server.get('Deployment/orders-taskmanager')?.metadata?.resourceVersion, '42');
});

test('a Flink ConfigMap this process wrote in this term is not read again: a new rendering is a PUT locked on that write; another term reads first', async () => {
  const server = new Map<string, KubernetesObject>();
  const api = fakeApi(server, { versioned: true });
  const deployments = new MapReader<V1Deployment>();
  const services = new MapReader<V1Service>();
  const applier = new FlinkClusterApplier(api.apps, api.core, deployments, services);
  const cacheWhatIsLive = () => {
    for (const [k, v] of server) {
      if (k.startsWith('Deployment/')) deployments.items.set(`team-a/${k.slice('Deployment/'.length)}`, structuredClone(v as V1Deployment));
      if (k.startsWith('Service/')) services.items.set(`team-a/${k.slice('Service/'.length)}`, structuredClone(v as V1Service));
    }
  };
  await applier.apply(objects(), { resetHaMetadata: false, fence: TERM_3 });
  cacheWhatIsLive();
  const rendering = (parallelism: string) =>
    buildFlinkClusterResources(deployment, {
      spec: { ...deployment.spec, flinkConfiguration: { ...deployment.spec.flinkConfiguration, 'parallelism.default': parallelism } },
      generation: 2,
      specHash: `sha256-p${parallelism}`,
      jobId: '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
    });
  api.calls.length = 0;
  await applier.apply(objects(), { resetHaMetadata: false, fence: TERM_3 });
  assert.equal(api.calls.length, 0, 'the same rendering, remembered: nothing is read or written');
  await applier.apply(rendering('4'), { resetHaMetadata: false, fence: TERM_3 });
  assert.equal(api.calls[0], 'update ConfigMap/flink-config-orders', 'no GET before the locked PUT');
  assert.ok(!api.calls.includes('get ConfigMap/flink-config-orders'));
  cacheWhatIsLive();
  // someone else changed it since: the locked PUT fails, the ConfigMap is read and written on the live version
  const live = server.get('ConfigMap/flink-config-orders')!;
  server.set('ConfigMap/flink-config-orders', { ...live, metadata: { ...live.metadata, resourceVersion: '9999' } });
  api.calls.length = 0;
  await applier.apply(rendering('6'), { resetHaMetadata: false, fence: TERM_3 });
  assert.deepEqual(api.calls.slice(0, 3), [
    'update ConfigMap/flink-config-orders',
    'get ConfigMap/flink-config-orders',
    'update ConfigMap/flink-config-orders',
  ]);
  cacheWhatIsLive();
  // a later term trusts nothing this process remembered of the earlier one
  api.calls.length = 0;
  await applier.apply(rendering('8'), { resetHaMetadata: false, fence: unfenced({ holderIdentity: 'op-b', leaseTransitions: 4 }) });
  assert.equal(api.calls[0], 'get ConfigMap/flink-config-orders');
});

test('every object written carries the term that wrote it, outside the rendered hash (a new term rewrites nothing)', async () => {
  const server = new Map<string, KubernetesObject>();
  const api = fakeApi(server);
  await new FlinkClusterApplier(api.apps, api.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  for (const [key, object] of server) assert.equal(object.metadata?.annotations?.[LEADER_ANNOTATION], 'op-b/3', key);
  const deployments = new MapReader<V1Deployment>();
  for (const [k, v] of server) if (k.startsWith('Deployment/')) deployments.items.set(`team-a/${k.slice('Deployment/'.length)}`, v);
  const later = fakeApi(server);
  const result = await new FlinkClusterApplier(later.apps, later.core, deployments, new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: unfenced({ holderIdentity: 'op-c', leaseTransitions: 4 }),
  });
  assert.deepEqual(result.written, [], 'the same rendering in a later term is not written again');
});

test('a paused old leader never replaces or deletes what a newer term wrote', async () => {
  const server = new Map<string, KubernetesObject>();
  const newer = fakeApi(server);
  await new FlinkClusterApplier(newer.apps, newer.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
    resetHaMetadata: false,
    fence: TERM_3,
  });
  const deployments = new MapReader<V1Deployment>();
  for (const [k, v] of server)
    if (k.startsWith('Deployment/')) deployments.items.set(`team-a/${k.slice('Deployment/'.length)}`, structuredClone(v as V1Deployment));
  deployments.items.get('team-a/orders')!.metadata!.annotations![RENDERED_HASH_ANNOTATION] = 'an-older-rendering';
  const old = fakeApi(server);
  const oldTerm = unfenced({ holderIdentity: 'op-a', leaseTransitions: 2 });
  const applier = new FlinkClusterApplier(old.apps, old.core, deployments, new MapReader<V1Service>());
  const other = buildFlinkClusterResources(deployment, {
    spec: { ...deployment.spec, image: 'flink:old' },
    generation: 1,
    specHash: 'sha256-old',
    jobId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  });
  await assert.rejects(applier.apply(other, { resetHaMetadata: false, fence: oldTerm }), StaleLeaderError);
  await assert.rejects(applier.deleteDeployments('team-a', ['orders'], oldTerm), StaleLeaderError);
  assert.ok(!old.calls.some((c) => c.startsWith('update Deployment') || c.startsWith('delete')), `no write: ${old.calls.join(', ')}`);
});

test('a fence that refuses stops the apply before its first write', async () => {
  const server = new Map<string, KubernetesObject>();
  const api = fakeApi(server);
  const refusing: SideEffectFence = {
    token: { holderIdentity: 'op-a', leaseTransitions: 1 },
    check: (what) => {
      throw new FencedOutError(what, 'the lease expired');
    },
  };
  await assert.rejects(
    new FlinkClusterApplier(api.apps, api.core, new MapReader<V1Deployment>(), new MapReader<V1Service>()).apply(objects(), {
      resetHaMetadata: false,
      fence: refusing,
    }),
    FencedOutError,
  );
  assert.deepEqual(api.calls, []);
  assert.equal(server.size, 0);
});
