import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { eventually, raw } from './raw-http.js';
import { openWatch } from './watch-client.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('dev cluster: watches, informers, faults and the request log', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  before(async () => {
    cluster = await startDevCluster({ watchHistorySize: 20, bookmarkIntervalMs: 50 });
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  });
  after(() => cluster.stop());

  it('streams ADDED, MODIFIED and DELETED from a resourceVersion, each with its own resourceVersion', async () => {
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    const w = await openWatch(cluster.url, `${CMS}?watch=true&resourceVersion=${list.metadata!.resourceVersion}`);
    assert.equal(w.status, 200);
    const c = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w1' } } });
    const u = await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'w1', body: { ...c, data: { a: 'b' } } });
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'w1' });
    const events = await w.waitFor(3);
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    assert.equal(events[0].object.metadata.resourceVersion, c.metadata!.resourceVersion);
    assert.equal(events[1].object.metadata.resourceVersion, u.metadata!.resourceVersion);
    assert.ok(Number(events[2].object.metadata.resourceVersion) > Number(u.metadata!.resourceVersion), 'DELETED carries the delete revision');
    assert.equal(events[0].object.kind, 'ConfigMap');
    // a watch from an older RV replays the same events
    const replay = await openWatch(cluster.url, `${CMS}?watch=1&resourceVersion=${list.metadata!.resourceVersion}`);
    assert.deepEqual(
      (await replay.waitFor(3)).map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    w.close();
    replay.close();
  });

  it('starts with synthetic ADDED events without a resourceVersion and follows label selector transitions', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'sel-a', labels: { team: 'x' } } } });
    const w = await openWatch(cluster.url, `${CMS}?watch=true&labelSelector=team%3Dx`);
    await w.waitFor(1);
    assert.equal(w.events[0].type, 'ADDED');
    assert.equal(w.events[0].object.metadata.name, 'sel-a');
    const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'sel-b' } } });
    const labelled = await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'sel-b',
      body: { ...b, metadata: { ...b.metadata!, labels: { team: 'x' } } },
    });
    await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'sel-b',
      body: { ...labelled, metadata: { ...labelled.metadata!, labels: { team: 'y' } } },
    });
    const events = await w.waitFor(3);
    assert.deepEqual(
      events.slice(1).map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED sel-b', 'DELETED sel-b'],
    );
    w.close();
  });

  it('watches a single object through GET .../NAME?watch=true', async () => {
    const one = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'single' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'single-other' } } });
    const w = await openWatch(cluster.url, `${CMS}/single?watch=true&resourceVersion=${Number(one.metadata!.resourceVersion) - 1}`);
    await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'single', body: { ...one, data: { a: '1' } } });
    const events = await w.waitFor(2);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED single', 'MODIFIED single'],
    );
    w.close();
  });

  it('sends bookmarks only when asked, and ends the stream after timeoutSeconds', async () => {
    const rv = (await core.listNamespacedConfigMap({ namespace: 'default' })).metadata!.resourceVersion;
    const plain = await openWatch(cluster.url, `${CMS}?watch=true&resourceVersion=${rv}`);
    // no bookmark is due within 2 s of the deadline (cacher/cache_watcher.go nextBookmarkTime): 3 s leaves 1 s of 50 ms bookmarks
    const bm = await openWatch(cluster.url, `${CMS}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3`);
    await bm.waitFor(1);
    assert.equal(bm.events[0].type, 'BOOKMARK');
    assert.equal(bm.events[0].object.kind, 'ConfigMap');
    assert.match(bm.events[0].object.metadata.resourceVersion, /^\d+$/);
    await bm.waitEnd(10_000);
    assert.equal(plain.events.length, 0);
    assert.equal(plain.ended, false, 'a watch without timeout stays open');
    plain.close();
  });

  it('answers a too-old resourceVersion with an ERROR 410 Expired event and ends the stream', async () => {
    for (let i = 0; i < 25; i++) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: `old-${i}` } } });
    const w = await openWatch(cluster.url, `${CMS}?watch=true&resourceVersion=2`);
    await w.waitFor(1);
    assert.equal(w.events[0].type, 'ERROR');
    assert.equal(w.events[0].object.code, 410);
    assert.equal(w.events[0].object.reason, 'Expired');
    assert.match(w.events[0].object.message, /^too old resource version: 2 \(\d+\)$/);
    await w.waitEnd();
  });

  it('keeps an informer in sync across a dropped watch (re-watch, no relist) and a 410 (relist)', async () => {
    const lists = () => cluster.requestLog.count({ verb: 'list', resource: 'configmaps' });
    const watches = () => cluster.requestLog.count({ verb: 'watch', resource: 'configmaps' });
    const informer = makeInformer(cluster.kubeConfig(), CMS, () => core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'inf=1' }), 'inf=1');
    const seen = new Map<string, V1ConfigMap>();
    const deleted: string[] = [];
    informer.on('add', (o) => seen.set(o.metadata!.name!, o));
    informer.on('update', (o) => seen.set(o.metadata!.name!, o));
    informer.on('delete', (o) => {
      seen.delete(o.metadata!.name!);
      deleted.push(o.metadata!.name!);
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-a', labels: { inf: '1' } } } });
    const listsBefore = lists();
    await informer.start();
    await eventually(() => seen.has('inf-a'), 10_000, 'initial list');
    await eventually(() => cluster.openWatches() > 0, 10_000, 'informer watch');

    const watchesBefore = watches();
    cluster.faults.closeAllWatches();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-b', labels: { inf: '1' } } } });
    await eventually(() => seen.has('inf-b'), 10_000, 'event after a dropped watch');
    assert.ok(watches() > watchesBefore, 'the informer re-watched');
    assert.equal(lists(), listsBefore + 1, 'a dropped watch does not relist');

    cluster.faults.expireNextWatch();
    cluster.faults.closeAllWatches();
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'inf-a' });
    await eventually(() => lists() >= listsBefore + 2, 10_000, 'relist after 410');
    await eventually(() => !seen.has('inf-a'), 10_000, 'delete seen through the relist');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-c', labels: { inf: '1' } } } });
    await eventually(() => seen.has('inf-c'), 10_000, 'events after the relist');

    // the same through an HTTP 410 answer to the re-watch
    cluster.faults.expireNextWatch(1, 'http');
    cluster.faults.closeAllWatches();
    await eventually(() => lists() >= listsBefore + 3, 10_000, 'relist after an HTTP 410');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'inf-d', labels: { inf: '1' } } } });
    await eventually(() => seen.has('inf-d'), 10_000, 'events after the second relist');
    assert.equal(cluster.requestLog.count({ verb: 'watch', resource: 'configmaps', code: 410 }), 1);
    await informer.stop();
  });

  it('injects failures (500, 429 with Retry-After, 409, reset) and delays, consuming them in order', async () => {
    cluster.faults.failNext({ verb: 'create', resource: 'configmaps' }, { code: 500 });
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'f1' } } }), (e: any) => e.code === 500);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'f1' } } });

    cluster.faults.failNext({ verb: 'get', resource: 'configmaps' }, { code: 429, retryAfterSeconds: 2 }, 2);
    for (let i = 0; i < 2; i++) {
      const r = await raw(cluster.url, 'GET', `${CMS}/f1`);
      assert.equal(r.status, 429);
      assert.equal(r.headers.get('retry-after'), '2');
      assert.equal(r.json.details.retryAfterSeconds, 2);
    }
    assert.equal((await raw(cluster.url, 'GET', `${CMS}/f1`)).status, 200);

    cluster.faults.failNext({ verb: 'update', path: `${CMS}/f1` }, { code: 409 });
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'f1' });
    await assert.rejects(core.replaceNamespacedConfigMap({ namespace: 'default', name: 'f1', body: cm }), (e: any) => e.code === 409);
    const unchanged = await core.readNamespacedConfigMap({ namespace: 'default', name: 'f1' });
    assert.equal(unchanged.metadata!.resourceVersion, cm.metadata!.resourceVersion, 'a failed request does not write');

    cluster.faults.failNext({ verb: 'get', name: 'f1' }, 'reset');
    await assert.rejects(raw(cluster.url, 'GET', `${CMS}/f1`));

    cluster.faults.delay({ verb: 'get', name: 'f1' }, 150, 1);
    const t0 = Date.now();
    await core.readNamespacedConfigMap({ namespace: 'default', name: 'f1' });
    assert.ok(Date.now() - t0 >= 140, 'delayed');
    assert.equal(cluster.faults.pending(), 0);
  });

  it('a reset connection never applies the write and is logged with code 0 (no answer)', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'rs-1' }, data: { a: '1' } } });
    const before = await core.readNamespacedConfigMap({ namespace: 'default', name: 'rs-1' });
    cluster.requestLog.reset();
    const writes: Array<[string, string, unknown, Record<string, string>?]> = [
      ['POST', CMS, { metadata: { name: 'rs-2' } }],
      ['PUT', `${CMS}/rs-1`, { ...before, data: { a: '2' } }],
      ['PATCH', `${CMS}/rs-1`, { data: { a: '3' } }, { 'Content-Type': 'application/merge-patch+json' }],
      ['DELETE', `${CMS}/rs-1`, undefined],
    ];
    for (const [method, path, body, headers] of writes) {
      cluster.faults.failNext({ path: CMS }, 'reset');
      await assert.rejects(raw(cluster.url, method, path, body, headers), `${method} gets no answer`);
    }
    const after = await core.readNamespacedConfigMap({ namespace: 'default', name: 'rs-1' });
    assert.equal(after.metadata!.resourceVersion, before.metadata!.resourceVersion, 'nothing written');
    assert.deepEqual(after.data, { a: '1' });
    assert.equal((await raw(cluster.url, 'GET', `${CMS}/rs-2`)).status, 404, 'not created');
    await eventually(() => cluster.requestLog.entries({ code: 0 }).length === 4, 2000, 'four logged resets');
    assert.deepEqual(
      cluster.requestLog.entries({ code: 0 }).map((e) => e.verb),
      ['create', 'update', 'patch', 'delete'],
    );
    assert.equal(cluster.requestLog.count({ code: 200 }), 1, 'only the final GET answered 200');
  });

  it('logs every request with verb, resource, subresource, code, bytes and user agent', async () => {
    cluster.requestLog.reset();
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'log-1' } } });
    await core.readNamespacedConfigMap({ namespace: 'default', name: 'log-1' });
    await raw(cluster.url, 'GET', `${CMS}/log-1`, undefined, { 'User-Agent': 'flink-operator-devcluster-simulation/1.0' });
    await raw(cluster.url, 'GET', `${CMS}/nope`);
    assert.equal(cluster.requestLog.count({ verb: 'create', resource: 'configmaps' }), 1);
    assert.equal(cluster.requestLog.count({ verb: 'get', resource: 'configmaps' }), 3);
    assert.equal(cluster.requestLog.count({ verb: 'get', excludeUserAgentPrefix: 'flink-operator-devcluster-simulation/' }), 2);
    assert.equal(cluster.requestLog.count({ userAgentPrefix: 'flink-operator-devcluster-simulation/' }), 1);
    assert.equal(cluster.requestLog.count({ code: 404 }), 1);
    const [create] = cluster.requestLog.entries({ verb: 'create' });
    assert.equal(create.namespace, 'default');
    assert.equal(create.apiGroup, '');
    assert.equal(create.version, 'v1');
    assert.equal(create.subresource, '');
    assert.equal(create.code, 201);
    assert.ok(create.requestBytes > 0 && create.responseBytes > 0);
    assert.equal(cluster.requestLog.entries({ name: 'log-1', verb: 'get' }).length, 2);
    const badWatch = await raw(cluster.url, 'GET', `${CMS}?watch=true&fieldSelector=data.x%3D1`);
    assert.equal(badWatch.status, 400);
    assert.equal(cluster.requestLog.count({ verb: 'watch', code: 400 }), 1, 'a refused watch is logged with its code');
    const w = await openWatch(cluster.url, `${CMS}?watch=true&resourceVersion=0`);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(cluster.requestLog.count({ verb: 'watch', code: 200 }), 1, 'an open watch is logged when it starts');
    w.close();
  });

  it('serves the fault admin endpoint only when enabled', async () => {
    assert.equal((await raw(cluster.url, 'POST', '/__devcluster/faults', { op: 'clear' })).status, 404);
    const admin = await startDevCluster({ adminEndpoint: true });
    try {
      const r = await raw(admin.url, 'POST', '/__devcluster/faults', {
        op: 'failNext',
        match: { verb: 'list', resource: 'configmaps' },
        failure: { code: 503 },
      });
      assert.equal(r.status, 200);
      assert.equal((await raw(admin.url, 'GET', CMS)).status, 503);
      assert.equal((await raw(admin.url, 'GET', CMS)).status, 200);
      const counted = await raw(admin.url, 'GET', '/__devcluster/requests?verb=list&resource=configmaps');
      assert.equal(counted.json.count, 2);
    } finally {
      await admin.stop();
    }
  });
});
