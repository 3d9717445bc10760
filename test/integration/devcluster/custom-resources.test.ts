import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiextensionsV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { eventually, raw, statusOf } from './raw-http.js';
import { gadgetCrd, widget, widgetCrd } from './widget-crd-fixture.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W = { group: 'example.com', version: 'v1', plural: 'widgets', namespace: 'default' };

describe('dev cluster: custom resources through client-node', () => {
  let cluster: DevCluster;
  let co: CustomObjectsApi;
  let ext: ApiextensionsV1Api;
  before(async () => {
    cluster = await startDevCluster();
    co = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
    ext = cluster.kubeConfig().makeApiClient(ApiextensionsV1Api);
    // CRDs go in as raw JSON: client-node's model serializer drops schema keys such as `default`
    // and `x-kubernetes-preserve-unknown-fields` unless spelled as its TypeScript names.
    assert.equal((await raw(cluster.url, 'POST', CRDS, widgetCrd())).status, 201);
    assert.equal((await raw(cluster.url, 'POST', CRDS, gadgetCrd())).status, 201);
  });
  after(() => cluster.stop());

  it('keeps discovery current as CRDs come and go, with status, scale and the preferred version', async () => {
    const groups = await raw(cluster.url, 'GET', '/apis');
    const g = groups.json.groups.find((x: any) => x.name === 'example.com');
    assert.deepEqual(
      g.versions.map((v: any) => v.version),
      ['v1', 'v1beta1'],
    );
    assert.equal(g.preferredVersion.version, 'v1');
    const rl = await raw(cluster.url, 'GET', '/apis/example.com/v1');
    const names = rl.json.resources.map((r: any) => r.name);
    assert.deepEqual(names.sort(), ['gadgets', 'widgets', 'widgets/scale', 'widgets/status']);
    const widgets = rl.json.resources.find((r: any) => r.name === 'widgets');
    assert.equal(widgets.namespaced, true);
    assert.deepEqual(widgets.shortNames, ['wd']);
    assert.equal(rl.json.resources.find((r: any) => r.name === 'gadgets').namespaced, false);
    const crd = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    assert.deepEqual(crd.status!.storedVersions, ['v1']);
    assert.equal(crd.status!.conditions!.find((c) => c.type === 'Established')!.status, 'True');
    const v2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const aggregated = await raw(cluster.url, 'GET', '/apis', undefined, { Accept: `${v2},application/json` });
    assert.equal(aggregated.headers.get('content-type'), v2);
    const ex = aggregated.json.items.find((i: any) => i.metadata.name === 'example.com');
    assert.deepEqual(
      ex.versions.map((v: any) => v.version),
      ['v1', 'v1beta1'],
    );
    const aw = ex.versions[0].resources.find((r: any) => r.resource === 'widgets');
    assert.deepEqual(aw.responseKind, { group: 'example.com', version: 'v1', kind: 'Widget' });
    assert.equal(aw.scope, 'Namespaced');
    assert.deepEqual(
      aw.subresources.map((x: any) => x.subresource),
      ['status', 'scale'],
    );
    const betaOnly = await raw(cluster.url, 'GET', '/apis', undefined, {
      Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
    });
    assert.equal(betaOnly.json.kind, 'APIGroupList', 'only exactly v2 gets the aggregated document');
    const openapi = await raw(cluster.url, 'GET', '/openapi/v3');
    assert.ok(openapi.json.paths['apis/example.com/v1']);
  });

  it('creates with generation 1, drops status on create, defaults and prunes unknown fields', async () => {
    const created: any = await co.createNamespacedCustomObject({
      ...W,
      body: { ...widget('w1', { image: 'flink:2', unknown: 1, extra: { anything: { goes: true } } }), status: { phase: 'Forged' }, topLevelJunk: 1 },
    });
    assert.equal(created.metadata.generation, 1);
    assert.equal(created.status, undefined);
    assert.equal(created.spec.replicas, 1, 'default applied');
    assert.equal(created.spec.unknown, undefined, 'unknown field pruned');
    assert.equal(created.topLevelJunk, undefined);
    assert.deepEqual(created.spec.extra, { anything: { goes: true } }, 'x-kubernetes-preserve-unknown-fields keeps the subtree');
    assert.equal(created.kind, 'Widget');
  });

  it('validates against the schema with 422 and the real wording', async () => {
    await assert.rejects(co.createNamespacedCustomObject({ ...W, body: widget('bad', { image: 'x', replicas: 20 }) }), (e: any) => {
      assert.equal(e.code, 422);
      const s = statusOf(e);
      assert.equal(s.reason, 'Invalid');
      assert.equal(
        s.message,
        'Widget.example.com "bad" is invalid: spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10',
      );
      assert.equal(s.details.causes[0].field, 'spec.replicas');
      return true;
    });
    await assert.rejects(co.createNamespacedCustomObject({ ...W, body: widget('bad', { replicas: 'three' }) }), (e: any) => {
      const m = statusOf(e).message;
      assert.match(m, /spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"/);
      assert.match(m, /spec.image: Required value/);
      return true;
    });
    await assert.rejects(co.createNamespacedCustomObject({ ...W, body: widget('bad', { image: 'x', mode: 'weird' }) }), (e: any) => {
      assert.match(statusOf(e).message, /spec.mode: Unsupported value: "weird": supported values: "batch", "streaming"/);
      return true;
    });
  });

  it('rejects unknown fields with 400 under fieldValidation=Strict and warns under Warn', async () => {
    const strict = await raw(
      cluster.url,
      'POST',
      '/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Strict',
      widget('strict', { image: 'x', bogus: 1 }),
    );
    assert.equal(strict.status, 400);
    assert.equal(strict.json.message, 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"');
    const warn = await raw(
      cluster.url,
      'POST',
      '/apis/example.com/v1/namespaces/default/widgets?fieldValidation=Warn',
      widget('warned', { image: 'x', bogus: 1 }),
    );
    assert.equal(warn.status, 201);
    assert.match(warn.headers.get('warning') ?? '', /299 - "unknown field \\"spec.bogus\\""/);
  });

  it('requires a resourceVersion on PUT (422), conflicts on a stale one (409), keeps status on main writes', async () => {
    const w: any = await co.getNamespacedCustomObject({ ...W, name: 'w1' });
    const { resourceVersion: _rv, ...metaWithoutRv } = w.metadata;
    await assert.rejects(co.replaceNamespacedCustomObject({ ...W, name: 'w1', body: { ...w, metadata: metaWithoutRv } }), (e: any) => {
      assert.equal(e.code, 422);
      assert.equal(statusOf(e).message, 'Widget.example.com "w1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
      return true;
    });
    const withStatus: any = await co.replaceNamespacedCustomObjectStatus({
      ...W,
      name: 'w1',
      body: { ...w, spec: { image: 'ignored' }, status: { phase: 'Running', replicas: 1 } },
    });
    assert.equal(withStatus.status.phase, 'Running');
    assert.equal(withStatus.spec.image, 'flink:2', '/status writes change only status');
    assert.equal(withStatus.metadata.generation, 1);
    const main: any = await co.replaceNamespacedCustomObject({
      ...W,
      name: 'w1',
      body: { ...withStatus, spec: { ...withStatus.spec, image: 'flink:3' }, status: { phase: 'Forged' } },
    });
    assert.equal(main.status.phase, 'Running', 'main-resource writes keep the old status');
    assert.equal(main.metadata.generation, 2);
    await assert.rejects(
      co.replaceNamespacedCustomObject({ ...W, name: 'w1', body: withStatus }),
      (e: any) => e.code === 409 && statusOf(e).reason === 'Conflict',
    );
  });

  it('serves the scale subresource', async () => {
    const scale: any = await co.getNamespacedCustomObjectScale({ ...W, name: 'w1' });
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
    assert.equal(scale.spec.replicas, 1);
    assert.equal(scale.status.replicas, 1);
    await co.patchNamespacedCustomObjectScale(
      { ...W, name: 'w1', body: { spec: { replicas: 4 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const after: any = await co.getNamespacedCustomObject({ ...W, name: 'w1' });
    assert.equal(after.spec.replicas, 4);
    assert.equal(after.metadata.generation, 3);
  });

  it('serves both versions: conversion None rewrites apiVersion and prunes by each schema', async () => {
    const beta: any = await co.getNamespacedCustomObject({ ...W, version: 'v1beta1', name: 'w1' });
    assert.equal(beta.apiVersion, 'example.com/v1beta1');
    assert.equal(beta.spec.image, 'flink:3');
    assert.equal(beta.spec.extra, undefined, 'pruned by the v1beta1 schema on read');
    // a write through v1beta1 is stored in the storage version v1, pruned by its schema
    const created: any = await co.createNamespacedCustomObject({
      ...W,
      version: 'v1beta1',
      body: widget('from-beta', { image: 'b', legacyField: 'kept?' }, 'v1beta1'),
    });
    assert.equal(created.apiVersion, 'example.com/v1beta1');
    assert.equal(created.spec.replicas, 2, 'v1beta1 default');
    assert.equal(created.spec.legacyField, undefined, 'pruned by the storage (v1) schema on write');
    const asV1: any = await co.getNamespacedCustomObject({ ...W, name: 'from-beta' });
    assert.equal(asV1.apiVersion, 'example.com/v1');
    const list: any = await co.listNamespacedCustomObject({ ...W, version: 'v1beta1' });
    assert.ok(list.items.every((i: any) => i.apiVersion === 'example.com/v1beta1'));
  });

  it('keeps stored objects when a CRD is replaced, re-reads them through the new schema, grows storedVersions', async () => {
    await co.createNamespacedCustomObject({ ...W, body: widget('keep', { image: 'k', mode: 'batch' }) });
    const crd = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    const narrowed = widgetCrd({
      v1beta1Storage: true,
      v1Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { image: { type: 'string' } } },
          status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    });
    assert.equal(
      (
        await raw(cluster.url, 'PUT', `${CRDS}/widgets.example.com`, {
          ...narrowed,
          metadata: { name: crd.metadata!.name, resourceVersion: crd.metadata!.resourceVersion },
        })
      ).status,
      200,
    );
    const hidden: any = await co.getNamespacedCustomObject({ ...W, name: 'keep' });
    assert.equal(hidden.spec.mode, undefined, 'a narrower schema hides the stored field');
    const updatedCrd = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    assert.deepEqual(updatedCrd.status!.storedVersions, ['v1', 'v1beta1']);
    // restore the original schema: the stored field is back, it was never rewritten
    assert.equal(
      (
        await raw(cluster.url, 'PUT', `${CRDS}/widgets.example.com`, {
          ...widgetCrd(),
          metadata: { name: 'widgets.example.com', resourceVersion: updatedCrd.metadata!.resourceVersion },
        })
      ).status,
      200,
    );
    const back: any = await co.getNamespacedCustomObject({ ...W, name: 'keep' });
    assert.equal(back.spec.mode, 'batch');
  });

  it('applies a default added to the CRD later on read, without counting it as a spec change', async () => {
    await co.createNamespacedCustomObject({ ...W, body: widget('late-default', { image: 'x' }) });
    const crd = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    const withDefault = widgetCrd();
    withDefault.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.default = 'streaming';
    assert.equal(
      (
        await raw(cluster.url, 'PUT', `${CRDS}/widgets.example.com`, {
          ...withDefault,
          metadata: { name: 'widgets.example.com', resourceVersion: crd.metadata!.resourceVersion },
        })
      ).status,
      200,
    );
    const read: any = await co.getNamespacedCustomObject({ ...W, name: 'late-default' });
    assert.equal(read.spec.mode, 'streaming', 'read-time default');
    const written: any = await co.replaceNamespacedCustomObject({ ...W, name: 'late-default', body: read });
    assert.equal(written.metadata.generation, 1, 'writing back the defaulted object is not a spec change');
    const restored = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
    assert.equal(
      (
        await raw(cluster.url, 'PUT', `${CRDS}/widgets.example.com`, {
          ...widgetCrd(),
          metadata: { name: 'widgets.example.com', resourceVersion: restored.metadata!.resourceVersion },
        })
      ).status,
      200,
    );
  });

  it('serves cluster-scoped custom resources', async () => {
    const g: any = await co.createClusterCustomObject({
      group: 'example.com',
      version: 'v1',
      plural: 'gadgets',
      body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { free: { form: 1 } } },
    });
    assert.equal(g.metadata.namespace, undefined);
    assert.deepEqual(g.spec, { free: { form: 1 } });
    const list: any = await co.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'gadgets' });
    assert.equal(list.items.length, 1);
    assert.equal(list.kind, 'GadgetList');
  });

  it('deletes every custom object when its CRD is deleted, then removes the CRD from discovery', async () => {
    await ext.deleteCustomResourceDefinition({ name: 'gadgets.example.com' });
    await eventually(async () => (await raw(cluster.url, 'GET', '/apis/example.com/v1/gadgets')).status === 404, 10_000, 'gadgets gone');
    const rl = await raw(cluster.url, 'GET', '/apis/example.com/v1');
    assert.ok(!rl.json.resources.some((r: any) => r.name === 'gadgets'));
    assert.equal((await raw(cluster.url, 'POST', CRDS, gadgetCrd())).status, 201);
    const list: any = await co.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'gadgets' });
    assert.equal(list.items.length, 0, 'a re-created CRD starts empty');
  });

  it('rejects an invalid CRD', async () => {
    const bad = widgetCrd();
    bad.metadata.name = 'wrong.example.com';
    await assert.rejects(ext.createCustomResourceDefinition({ body: bad as any }), (e: any) => {
      assert.equal(e.code, 422);
      assert.match(statusOf(e).message, /metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural\+"."\+spec.group/);
      return true;
    });
  });
});
