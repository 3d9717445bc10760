import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { raw, statusOf } from './raw-http.js';
import { widget, widgetCrd } from './widget-crd-fixture.js';

const W = { group: 'example.com', version: 'v1', plural: 'widgets', namespace: 'default' };

describe('dev cluster: every patch type through client-node', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let co: CustomObjectsApi;
  before(async () => {
    cluster = await startDevCluster();
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
    co = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
    await raw(cluster.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
    await co.createNamespacedCustomObject({ ...W, body: widget('p1', { image: 'a', config: { x: '1', y: '2' } }) });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'pc', labels: { a: '1' }, finalizers: ['x/one'] }, data: { k: 'v' } },
    });
  });
  after(() => cluster.stop());

  it('applies a JSON patch (the client-node default), and fails a `test` op with 422', async () => {
    const cm = await core.patchNamespacedConfigMap({ namespace: 'default', name: 'pc', body: [{ op: 'add', path: '/data/j', value: 'json' }] });
    assert.equal(cm.data!.j, 'json');
    await assert.rejects(
      core.patchNamespacedConfigMap({
        namespace: 'default',
        name: 'pc',
        body: [
          { op: 'test', path: '/data/k', value: 'other' },
          { op: 'remove', path: '/data/k' },
        ],
      }),
      (e: any) => {
        assert.equal(e.code, 422);
        assert.equal(statusOf(e).reason, 'Invalid');
        assert.equal(statusOf(e).message, 'the server rejected our request due to an error in our request');
        return true;
      },
    );
    const still = await core.readNamespacedConfigMap({ namespace: 'default', name: 'pc' });
    assert.equal(still.data!.k, 'v', 'a failed test op applies nothing');
    // a json patch testing the resourceVersion is an optimistic lock
    await assert.rejects(
      co.patchNamespacedCustomObject({
        ...W,
        name: 'p1',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: '1' },
          { op: 'replace', path: '/spec/image', value: 'b' },
        ],
      }),
      (e: any) => e.code === 422,
    );
  });

  it('applies a merge patch: null deletes, objects merge, lists replace; a stale resourceVersion in it is 409', async () => {
    const merged: any = await co.patchNamespacedCustomObject(
      { ...W, name: 'p1', body: { spec: { config: { x: null, z: '3' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.spec.config, { y: '2', z: '3' });
    await assert.rejects(
      co.patchNamespacedCustomObject(
        { ...W, name: 'p1', body: { metadata: { resourceVersion: '1' }, spec: { image: 'c' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      (e: any) => e.code === 409 && statusOf(e).reason === 'Conflict',
    );
    const locked: any = await co.patchNamespacedCustomObject(
      { ...W, name: 'p1', body: { metadata: { resourceVersion: merged.metadata.resourceVersion }, spec: { image: 'c' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(locked.spec.image, 'c');
  });

  it('merge-patches the status subresource without touching spec', async () => {
    const s: any = await co.patchNamespacedCustomObjectStatus(
      { ...W, name: 'p1', body: { spec: { image: 'ignored' }, status: { phase: 'Ready' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.equal(s.status.phase, 'Ready');
    assert.equal(s.spec.image, 'c');
  });

  it('refuses strategic merge on custom resources with 415 and the real message', async () => {
    await assert.rejects(
      co.patchNamespacedCustomObject({ ...W, name: 'p1', body: { spec: { image: 'd' } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)),
      (e: any) => {
        assert.equal(e.code, 415);
        assert.equal(
          statusOf(e).message,
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
        );
        return true;
      },
    );
  });

  it('strategic-merges built-ins: containers/env/ports/volumes/volumeMounts by key, finalizers merged, $patch delete', async () => {
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'smp' },
        spec: {
          selector: { matchLabels: { app: 'smp' } },
          template: {
            metadata: { labels: { app: 'smp' } },
            spec: {
              volumes: [{ name: 'v1', emptyDir: {} }],
              containers: [
                {
                  name: 'main',
                  image: 'img:1',
                  env: [
                    { name: 'A', value: '1' },
                    { name: 'B', value: '2' },
                  ],
                  ports: [{ containerPort: 80 }],
                  volumeMounts: [{ name: 'v1', mountPath: '/a' }],
                },
                { name: 'side', image: 'side:1' },
              ],
            },
          },
        },
      },
    });
    const patched = await apps.patchNamespacedDeployment(
      {
        namespace: 'default',
        name: 'smp',
        body: {
          spec: {
            template: {
              spec: {
                volumes: [{ name: 'v2', emptyDir: {} }],
                containers: [
                  {
                    name: 'main',
                    image: 'img:2',
                    env: [
                      { name: 'B', value: '22' },
                      { name: 'C', value: '3' },
                    ],
                    ports: [{ containerPort: 81 }],
                    volumeMounts: [{ name: 'v2', mountPath: '/b' }],
                  },
                  { name: 'side', $patch: 'delete' },
                ],
              },
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const spec = patched.spec!.template.spec!;
    assert.deepEqual(
      spec.containers.map((c) => c.name),
      ['main'],
    );
    const main = spec.containers[0];
    assert.equal(main.image, 'img:2');
    assert.deepEqual(
      main.env!.map((e) => `${e.name}=${e.value}`),
      ['A=1', 'B=22', 'C=3'],
    );
    assert.deepEqual(
      main.ports!.map((p) => p.containerPort),
      [80, 81],
    );
    assert.deepEqual(
      main.volumeMounts!.map((m) => m.mountPath),
      ['/a', '/b'],
    );
    assert.deepEqual(
      spec.volumes!.map((v) => v.name),
      ['v1', 'v2'],
    );
    assert.equal(patched.metadata!.generation, 2);
    const cm = await core.patchNamespacedConfigMap(
      { namespace: 'default', name: 'pc', body: { metadata: { finalizers: ['x/two'], labels: { a: null, b: '2' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    assert.deepEqual(cm.metadata!.finalizers, ['x/one', 'x/two']);
    assert.deepEqual(cm.metadata!.labels, { b: '2' });
  });

  it('server-side applies: creates when absent (201), owns what it applies, requires fieldManager, force only with apply', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'default' }, data: { a: '1' } };
    const created = await raw(cluster.url, 'PATCH', '/api/v1/namespaces/default/configmaps/ssa?fieldManager=op&force=true', body, {
      'Content-Type': 'application/apply-patch+yaml',
    });
    assert.equal(created.status, 201);
    const applied = await core.patchNamespacedConfigMap(
      { namespace: 'default', name: 'ssa', body: { ...body, data: { b: '2' } }, fieldManager: 'op', force: true },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    // the manager applied data.a before and no longer does: it is removed (docs "Server-Side Apply", field management)
    assert.deepEqual(applied.data, { b: '2' });
    await assert.rejects(
      core.patchNamespacedConfigMap({ namespace: 'default', name: 'ssa', body }, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply)),
      (e: any) => {
        assert.equal(e.code, 422);
        assert.equal(statusOf(e).message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
        return true;
      },
    );
    await assert.rejects(
      core.patchNamespacedConfigMap(
        { namespace: 'default', name: 'ssa', body: { data: { c: '3' } }, force: true },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      (e: any) => e.code === 422 && /force: Forbidden: may not be specified for non-apply patch/.test(statusOf(e).message),
    );
    const yaml = await raw(
      cluster.url,
      'PATCH',
      '/apis/example.com/v1/namespaces/default/widgets/ssa-w?fieldManager=op',
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ssa-w\nspec:\n  image: y\n',
      {
        'Content-Type': 'application/apply-patch+yaml',
      },
    );
    assert.equal(yaml.status, 201);
    assert.equal(yaml.json.spec.replicas, 1);
  });

  it('answers 404 when patching a missing object with a non-apply patch', async () => {
    await assert.rejects(
      core.patchNamespacedConfigMap({ namespace: 'default', name: 'missing', body: { data: {} } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
      (e: any) => e.code === 404,
    );
  });
});
