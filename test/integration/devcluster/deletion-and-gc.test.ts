import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { raw, statusOf } from './raw-http.js';
import { openWatch } from './watch-client.js';
import { widget, widgetCrd } from './widget-crd-fixture.js';

const W = { group: 'example.com', version: 'v1', plural: 'widgets', namespace: 'default' };

describe('dev cluster: deletion, finalizers and garbage collection', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  let co: CustomObjectsApi;
  before(async () => {
    cluster = await startDevCluster();
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    co = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
    await raw(cluster.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
  });
  after(() => cluster.stop());

  const ownerRef = (o: any, extra: Record<string, unknown> = {}) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    uid: o.metadata.uid,
    ...extra,
  });
  const exists = async (name: string) => (await raw(cluster.url, 'GET', `/api/v1/namespaces/default/configmaps/${name}`)).status === 200;

  it('deletes without finalizers at once with a Success Status and a DELETED event', async () => {
    const c = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'plain' } } });
    const w = await openWatch(cluster.url, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${c.metadata!.resourceVersion}`);
    const r = await raw(cluster.url, 'DELETE', '/api/v1/namespaces/default/configmaps/plain', { propagationPolicy: 'Background' });
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.status, 'Success');
    assert.deepEqual(r.json.details, { name: 'plain', kind: 'configmaps', uid: c.metadata!.uid });
    assert.equal((await w.waitFor(1))[0].type, 'DELETED');
    w.close();
    await assert.rejects(core.deleteNamespacedConfigMap({ namespace: 'default', name: 'plain' }), (e: any) => e.code === 404);
  });

  it('keeps an object with finalizers until they are removed, and refuses new finalizers once deleting', async () => {
    await co.createNamespacedCustomObject({ ...W, body: { ...widget('fin'), metadata: { name: 'fin', finalizers: ['example.com/cleanup'] } } });
    const list: any = await co.listNamespacedCustomObject({ ...W });
    const w = await openWatch(cluster.url, `/apis/example.com/v1/namespaces/default/widgets?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    const deleting: any = await co.deleteNamespacedCustomObject({ ...W, name: 'fin' });
    assert.equal(deleting.kind, 'Widget', 'answered with the object');
    assert.ok(deleting.metadata.deletionTimestamp);
    assert.equal(deleting.metadata.deletionGracePeriodSeconds, 0);
    assert.equal(deleting.metadata.generation, 2);
    const still: any = await co.getNamespacedCustomObject({ ...W, name: 'fin' });
    assert.ok(still.metadata.deletionTimestamp);
    await assert.rejects(
      co.patchNamespacedCustomObject(
        { ...W, name: 'fin', body: { metadata: { finalizers: ['example.com/cleanup', 'example.com/new'] } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      (e: any) => {
        assert.equal(e.code, 422);
        assert.match(
          statusOf(e).message,
          /metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers \[\]string\{"example.com\/new"\}/,
        );
        return true;
      },
    );
    await co.patchNamespacedCustomObject(
      { ...W, name: 'fin', body: { metadata: { finalizers: null } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await assert.rejects(co.getNamespacedCustomObject({ ...W, name: 'fin' }), (e: any) => e.code === 404);
    const events = await w.waitFor(2);
    assert.deepEqual(
      events.map((e) => e.type),
      ['MODIFIED', 'DELETED'],
    );
    assert.deepEqual(events[1].object.metadata.finalizers, undefined, 'DELETED shows the final state');
    w.close();
  });

  it('garbage-collects dependents of a deleted owner (Background), keeping those with another live owner', async () => {
    const owner: any = await co.createNamespacedCustomObject({ ...W, body: widget('owner-bg') });
    const other = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'other-owner' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dep-1', ownerReferences: [ownerRef(owner)] } } });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'dep-2', ownerReferences: [ownerRef(owner), ownerRef({ apiVersion: 'v1', kind: 'ConfigMap', ...other })] } },
    });
    await co.deleteNamespacedCustomObject({ ...W, name: 'owner-bg', propagationPolicy: 'Background' });
    await cluster.settled();
    assert.equal(await exists('dep-1'), false);
    const dep2 = await core.readNamespacedConfigMap({ namespace: 'default', name: 'dep-2' });
    assert.deepEqual(
      dep2.metadata!.ownerReferences!.map((r) => r.name),
      ['other-owner'],
      'the dangling reference is removed',
    );
  });

  it('holds a Foreground-deleted owner until its blocking dependents are gone', async () => {
    const owner: any = await co.createNamespacedCustomObject({ ...W, body: widget('owner-fg') });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'fg-dep', finalizers: ['example.com/hold'], ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] } },
    });
    const deleting: any = await co.deleteNamespacedCustomObject({ ...W, name: 'owner-fg', propagationPolicy: 'Foreground' });
    assert.deepEqual(deleting.metadata.finalizers, ['foregroundDeletion']);
    await cluster.settled();
    const dep = await core.readNamespacedConfigMap({ namespace: 'default', name: 'fg-dep' });
    assert.ok(dep.metadata!.deletionTimestamp, 'dependent is being deleted');
    const held: any = await co.getNamespacedCustomObject({ ...W, name: 'owner-fg' });
    assert.ok(held.metadata.deletionTimestamp, 'owner waits for the dependent');
    await core.patchNamespacedConfigMap({ namespace: 'default', name: 'fg-dep', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await cluster.settled();
    await assert.rejects(co.getNamespacedCustomObject({ ...W, name: 'owner-fg' }), (e: any) => e.code === 404);
  });

  it('orphans dependents with propagationPolicy Orphan', async () => {
    const owner: any = await co.createNamespacedCustomObject({ ...W, body: widget('owner-or') });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'or-dep', ownerReferences: [ownerRef(owner)] } } });
    await co.deleteNamespacedCustomObject({ ...W, name: 'owner-or', propagationPolicy: 'Orphan' });
    await cluster.settled();
    const dep = await core.readNamespacedConfigMap({ namespace: 'default', name: 'or-dep' });
    assert.equal(dep.metadata!.ownerReferences, undefined);
  });

  it('collects an object whose owner never existed, and treats a cross-namespace owner as absent', async () => {
    await core.createNamespace({ body: { metadata: { name: 'gc-other' } } });
    const foreign = await core.createNamespacedConfigMap({ namespace: 'gc-other', body: { metadata: { name: 'foreign' } } });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: {
          name: 'orphan-ghost',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' }],
        },
      },
    });
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'orphan-cross', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'foreign', uid: foreign.metadata!.uid! }] } },
    });
    await cluster.settled();
    assert.equal(await exists('orphan-ghost'), false);
    assert.equal(await exists('orphan-cross'), false);
  });

  it('deletes a namespace with its content: Terminating, no new objects, then gone', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'a' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['x/y'] } } });
    const ns = await core.deleteNamespace({ name: 'doomed' });
    assert.equal((ns as any).status.phase, 'Terminating');
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }), (e: any) => {
      assert.equal(e.code, 403);
      assert.match(statusOf(e).message, /unable to create new content in namespace doomed because it is being terminated/);
      return true;
    });
    await cluster.settled();
    assert.equal((await raw(cluster.url, 'GET', '/api/v1/namespaces/doomed/configmaps/a')).status, 404);
    assert.equal((await raw(cluster.url, 'GET', '/api/v1/namespaces/doomed')).status, 200, 'held by a finalizer of its content');
    await core.patchNamespacedConfigMap({ namespace: 'doomed', name: 'held', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await cluster.settled();
    assert.equal((await raw(cluster.url, 'GET', '/api/v1/namespaces/doomed')).status, 404);
  });

  it('refuses to delete the default and kube-system namespaces, as NamespaceLifecycle admission does', async () => {
    await assert.rejects(core.deleteNamespace({ name: 'default' }), (e: any) => {
      assert.equal(e.code, 403);
      assert.equal(statusOf(e).message, 'namespaces "default" is forbidden: this namespace may not be deleted');
      return true;
    });
    await assert.rejects(core.deleteNamespace({ name: 'kube-system' }), (e: any) => e.code === 403);
  });

  it('checks delete preconditions', async () => {
    const c = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'pre' } } });
    await assert.rejects(
      core.deleteNamespacedConfigMap({ namespace: 'default', name: 'pre', body: { preconditions: { resourceVersion: '1' } } }),
      (e: any) => e.code === 409 && /Precondition failed: ResourceVersion in precondition: 1/.test(statusOf(e).message),
    );
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'pre', body: { preconditions: { uid: c.metadata!.uid } } });
  });
});
