import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { startDevCluster } from '../../../src/devcluster/dev-cluster.js';
import { ApiClientFactory } from '../../../src/runtime/api-client-factory.js';
import { Informer } from '../../../src/runtime/informer.js';
import { configMaps, flinkDeployments, type FlinkDeploymentObject } from '../../../src/runtime/watched-resources.js';
import type { ObjectEvent } from '../../../src/kube/object-reader.js';
import { flinkApi, flinkDeployment, installMinimalFlinkCrd, waitFor } from './cluster-fixtures.js';

test('informers survive forced watch closes and 410s without missing a final state', async () => {
  const cluster = await startDevCluster();
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const informer = new Informer<V1ConfigMap>({
    kubeConfig: kc,
    resource: configMaps(new ApiClientFactory(kc)),
    labelSelector: 'flink.apache.org/deployment',
    minDelayMs: 20,
    maxDelayMs: 200,
  });
  const events: Array<ObjectEvent<V1ConfigMap>['type']> = [];
  informer.subscribe((e) => events.push(e.type));
  try {
    const labels = { 'flink.apache.org/deployment': 'x' };
    for (let i = 0; i < 5; i++)
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `cm-${i}`, labels }, data: { n: '0' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'unlabelled' }, data: {} } });
    informer.start();
    assert.equal(await informer.waitForSync(5000), true);
    assert.equal(informer.list().length, 5, 'the label selector applies');

    for (let round = 1; round <= 12; round++) {
      for (let i = 0; i < (round > 6 ? 4 : 5); i++) {
        const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: `cm-${i}` });
        await core.replaceNamespacedConfigMap({ namespace: 'default', name: `cm-${i}`, body: { ...cm, data: { n: String(round) } } });
      }
      if (round % 3 === 0) cluster.faults.closeAllWatches();
      if (round % 4 === 0) {
        cluster.faults.expireNextWatch(); // the re-watch after the close gets 410 → relist
        cluster.faults.closeAllWatches();
      }
      if (round === 6) await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'cm-4' });
      if (round === 7) cluster.faults.closeAllWatches();
      await sleep(5);
    }
    // the last writes happen right before a close and an expiry
    const lastWrites = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'flink.apache.org/deployment' });
    cluster.faults.expireNextWatch();
    cluster.faults.closeAllWatches();
    await waitFor(
      () =>
        informer.list().length === lastWrites.items.length &&
        lastWrites.items.every((cm) => informer.get('default', cm.metadata!.name!)?.metadata?.resourceVersion === cm.metadata!.resourceVersion),
      5000,
      'cache equals the server',
    );
    assert.equal(informer.get('default', 'cm-4'), undefined, 'the delete was seen');
    for (const cm of informer.list()) assert.equal(cm.data?.n, '12');
    assert.ok(events.includes('relisted') && events.includes('deleted'));
    assert.ok(cluster.requestLog.count({ verb: 'list', resource: 'configmaps' }) >= 2, 'at least one relist after a 410');
  } finally {
    await informer.stop();
    await cluster.stop();
  }
});

test('an informer stopped by watch and list errors restarts with backoff and converges', async () => {
  const cluster = await startDevCluster();
  const kc = cluster.kubeConfig();
  await installMinimalFlinkCrd(kc);
  const flink = flinkApi(kc);
  const restarts: string[] = [];
  const informer = new Informer<FlinkDeploymentObject>({
    kubeConfig: kc,
    resource: flinkDeployments(new ApiClientFactory(kc)),
    minDelayMs: 20,
    maxDelayMs: 200,
    onRestart: (r) => restarts.push(r),
  });
  try {
    cluster.faults.failNext({ verb: 'list', resource: 'flinkdeployments' }, { code: 500 }, 2);
    informer.start();
    assert.equal(await informer.waitForSync(5000), true, 'synced after two failed lists');
    await flink.create(flinkDeployment('a'));
    await waitFor(() => informer.get('default', 'a') !== undefined, 3000, 'first object seen');
    // client-node 1.4 stops its informer on a non-410 watch error; ours restarts it
    cluster.faults.failNext({ verb: 'watch', resource: 'flinkdeployments' }, { code: 500 }, 3);
    cluster.faults.closeAllWatches();
    await flink.create(flinkDeployment('b'));
    const a = await flink.get('default', 'a');
    const updated = await flink.replace({ ...a, spec: { ...a.spec, image: 'flink:2.3' } });
    await waitFor(
      () => informer.get('default', 'b') !== undefined && informer.get('default', 'a')?.metadata?.resourceVersion === updated.metadata.resourceVersion,
      5000,
      'converged after watch errors',
    );
    assert.ok(restarts.filter((r) => r === 'error').length >= 4, `restarts: ${restarts.join(', ')}`);
    // in another namespace-scoped informer, get() of an unwatched namespace is undefined
    assert.equal(informer.get('other', 'a'), undefined);
  } finally {
    await informer.stop();
    await cluster.stop();
  }
});

test('a server that closes every watch at once does not make the informer spin', async () => {
  const cluster = await startDevCluster();
  const kc = cluster.kubeConfig();
  const informer = new Informer<V1ConfigMap>({
    kubeConfig: kc,
    resource: configMaps(new ApiClientFactory(kc)),
    namespaces: ['default'],
    minDelayMs: 100,
    maxDelayMs: 1000,
  });
  try {
    informer.start();
    assert.equal(await informer.waitForSync(5000), true);
    await sleep(50);
    const before = cluster.requestLog.count({ verb: 'watch', resource: 'configmaps' });
    const closer = setInterval(() => cluster.faults.closeAllWatches(), 10);
    await sleep(1500);
    clearInterval(closer);
    const watches = cluster.requestLog.count({ verb: 'watch', resource: 'configmaps' }) - before;
    // client-node alone re-watches at once (≈ one watch per close, >100 here); with backoff
    // 100, 200, 400, 800 ms at most ~5 fit in 1.5 s
    assert.ok(watches >= 2 && watches <= 8, `${watches} watches in 1.5 s`);
    // and it recovers: a change is still seen
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'late' } } });
    await waitFor(() => informer.get('default', 'late') !== undefined, 5000, 'recovered');
  } finally {
    await informer.stop();
    await cluster.stop();
  }
});

test('the informer caches objects without managedFields, from the list and from watch events', async () => {
  // The server records field ownership on every write (apimachinery managedfields; the dev cluster
  // does too, design/003); an operator cache keeps none of it, as controller-runtime's
  // cache.TransformStripManagedFields does, so its memory per object is what it reads.
  const cluster = await startDevCluster();
  const kc = cluster.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const informer = new Informer<V1ConfigMap>({ kubeConfig: kc, resource: configMaps(new ApiClientFactory(kc)), minDelayMs: 20, maxDelayMs: 200 });
  try {
    const listed = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'listed' }, data: { a: '1' } },
      fieldManager: 'test',
    });
    assert.ok((listed.metadata?.managedFields ?? []).length > 0, 'the server records ownership');
    informer.start();
    assert.equal(await informer.waitForSync(5000), true);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'watched' }, data: { a: '1' } }, fieldManager: 'test' });
    await waitFor(() => informer.get('default', 'watched') !== undefined, 5000, 'the watched object');
    for (const name of ['listed', 'watched']) {
      const cached = informer.get('default', name)!;
      assert.equal(cached.metadata?.managedFields, undefined, `${name}: no managedFields in the cache`);
      assert.equal(cached.data?.a, '1');
    }
  } finally {
    await informer.stop();
    await cluster.stop();
  }
});
