/**
 * The development cluster's watch semantics for a custom resource relabelled across label
 * selectors, as label-selector shards depend on them (design/012-shards.md): a watch whose selector
 * the object stops matching gets DELETED showing the previous state at the event's
 * resourceVersion, one whose selector it starts matching gets ADDED, and a watch resumed from an
 * older resourceVersion replays the same. That is kube-apiserver's cacher:
 * k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go, `convertToWatchEvent` (curObjPasses /
 * oldObjPasses → Added / Modified / Deleted with the previous object and the event's RV).
 * Also through the operator's own Informer: the object leaves one shard's cache and enters the other's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubernetesObject } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { startDevCluster, type DevCluster } from '../../src/devcluster/dev-cluster.js';
import { Informer } from '../../src/runtime/informer.js';
import { ApiClientFactory } from '../../src/runtime/api-client-factory.js';
import { flinkDeployments } from '../../src/runtime/watched-resources.js';
import { installCrd } from '../e2e/operator-harness.js';
import { openWatch } from '../integration/devcluster/watch-client.js';

const PATH = '/apis/flink.apache.org/v1/namespaces/default/flinkdeployments';
const target = { group: 'flink.apache.org', version: 'v1', namespace: 'default', plural: 'flinkdeployments' };

describe('dev cluster: a custom resource moving between label selectors', () => {
  let cluster: DevCluster;
  let custom: CustomObjectsApi;
  before(async () => {
    cluster = await startDevCluster();
    await installCrd(cluster.kubeConfig());
    custom = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
  });
  after(() => cluster.stop());

  const relabel = async (name: string, shard: string) =>
    (await custom.patchNamespacedCustomObject(
      { ...target, name, body: { metadata: { labels: { 'flink-operator.io/shard': shard } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as KubernetesObject;

  it('turns a relabel into DELETED (previous state, event RV) for the old selector and ADDED for the new one, live and replayed', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...target,
      body: flinkDeployment('moving').withLabels({ 'flink-operator.io/shard': 'a' }).build(),
    })) as KubernetesObject;
    const from = created.metadata!.resourceVersion!;
    const watchA = await openWatch(cluster.url, `${PATH}?watch=true&resourceVersion=${from}&labelSelector=flink-operator.io%2Fshard%3Da`);
    const watchB = await openWatch(cluster.url, `${PATH}?watch=true&resourceVersion=${from}&labelSelector=flink-operator.io%2Fshard%3Db`);
    const moved = await relabel('moving', 'b');
    const again = await relabel('moving', 'c');
    const [leftA] = await watchA.waitFor(1);
    const [enteredB, leftB] = await watchB.waitFor(2);

    assert.equal(leftA.type, 'DELETED');
    assert.equal(leftA.object.metadata.labels['flink-operator.io/shard'], 'a', 'the previous state');
    assert.equal(leftA.object.metadata.resourceVersion, moved.metadata!.resourceVersion, "at the event's resourceVersion");
    assert.equal(enteredB.type, 'ADDED');
    assert.equal(enteredB.object.metadata.labels['flink-operator.io/shard'], 'b');
    assert.equal(enteredB.object.metadata.resourceVersion, moved.metadata!.resourceVersion);
    assert.equal(leftB.type, 'DELETED');
    assert.equal(leftB.object.metadata.labels['flink-operator.io/shard'], 'b');
    assert.equal(leftB.object.metadata.resourceVersion, again.metadata!.resourceVersion);

    const replay = await openWatch(cluster.url, `${PATH}?watch=true&resourceVersion=${from}&labelSelector=flink-operator.io%2Fshard%3Db`);
    assert.deepEqual(
      (await replay.waitFor(2)).map((e: { type: string; object: KubernetesObject }) => `${e.type} ${e.object.metadata?.resourceVersion}`),
      [`ADDED ${moved.metadata!.resourceVersion}`, `DELETED ${again.metadata!.resourceVersion}`],
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(watchA.events.length, 1, 'nothing more for a selector the object never matched again');
    for (const w of [watchA, watchB, replay]) w.close();
  });

  it("moves the object out of one shard's informer cache and into the other's", async () => {
    const clients = new ApiClientFactory(cluster.kubeConfig(), () => {});
    const informer = (shard: string) =>
      new Informer({ kubeConfig: cluster.kubeConfig(), resource: flinkDeployments(clients), labelSelector: `flink-operator.io/shard=${shard}` });
    const a = informer('a');
    const b = informer('b');
    const seen: string[] = [];
    a.subscribe((e) => e.type !== 'relisted' && e.object.metadata?.name === 'cached' && seen.push(`a ${e.type}`));
    b.subscribe((e) => e.type !== 'relisted' && e.object.metadata?.name === 'cached' && seen.push(`b ${e.type}`));
    a.start();
    b.start();
    try {
      assert.ok((await a.waitForSync(5_000)) && (await b.waitForSync(5_000)));
      await custom.createNamespacedCustomObject({ ...target, body: flinkDeployment('cached').withLabels({ 'flink-operator.io/shard': 'a' }).build() });
      await waitFor(() => a.get('default', 'cached') !== undefined);
      await relabel('cached', 'b');
      await waitFor(() => b.get('default', 'cached') !== undefined && a.get('default', 'cached') === undefined);
      // two independent watches: no order between them, only within each
      assert.deepEqual(
        seen.filter((e) => e.startsWith('a ')),
        ['a added', 'a deleted'],
      );
      assert.deepEqual(
        seen.filter((e) => e.startsWith('b ')),
        ['b added'],
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
