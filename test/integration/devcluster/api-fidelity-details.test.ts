import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  ApiException,
  CoreV1Api,
  CoordinationV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { raw, statusOf } from './raw-http.js';
import { widget, widgetCrd } from './widget-crd-fixture.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W = { group: 'example.com', version: 'v1', plural: 'widgets', namespace: 'default' };
const TIMERS = '/apis/example.com/v1/namespaces/default/timers';

/** A CRD whose schema declares a `format: date-time` string. */
const timerCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'timers.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'timers', singular: 'timer', kind: 'Timer' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } } } } },
      },
    ],
  },
};

/** One request over a plain node:http connection: status, headers and body as the socket delivered them. */
function rawHttp(url: string, method: string, path: string, body: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, { method, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('dev cluster: API server fidelity details (uid preconditions, times, size limits, OpenAPI v2)', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  let co: CustomObjectsApi;
  before(async () => {
    cluster = await startDevCluster();
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    co = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
    assert.equal((await raw(cluster.url, 'POST', CRDS, widgetCrd())).status, 201);
    assert.equal((await raw(cluster.url, 'POST', CRDS, timerCrd)).status, 201);
  });
  after(() => cluster.stop());

  // Real behaviour: registry/rest/update.go defaultUpdatedObjectInfo.Preconditions turns the body's uid into a
  // storage precondition; pkg/storage/interfaces.go Preconditions.Check → NewInvalidObjError;
  // pkg/storage/errors/storage.go InterpretUpdateError → NewConflict with the StorageError text (pkg/storage/errors.go).
  it('answers a PUT carrying another metadata.uid with the 409 of the storage precondition, before the resourceVersion check', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'uid-cm' }, data: { a: '1' } } });
    const other = '00000000-0000-0000-0000-000000000001';
    await assert.rejects(
      core.replaceNamespacedConfigMap({
        namespace: 'default',
        name: 'uid-cm',
        body: { metadata: { name: 'uid-cm', uid: other, resourceVersion: '1' }, data: {} },
      }),
      (e: unknown) => {
        assert.ok(e instanceof ApiException);
        assert.equal(e.code, 409);
        assert.deepEqual(statusOf(e), {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Operation cannot be fulfilled on configmaps "uid-cm": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/uid-cm, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${other}, UID in object meta: ${cm.metadata!.uid}`,
          reason: 'Conflict',
          details: { name: 'uid-cm', kind: 'configmaps' },
          code: 409,
        });
        return true;
      },
    );
    // the same uid (or none) is no precondition failure
    const same = await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'uid-cm',
      body: { metadata: { name: 'uid-cm', uid: cm.metadata!.uid }, data: { a: '2' } },
    });
    assert.equal(same.data!.a, '2');

    await co.createNamespacedCustomObject({ ...W, body: widget('uid-w') });
    const w = (await co.getNamespacedCustomObject({ ...W, name: 'uid-w' })) as KubernetesObject;
    const put = await raw(cluster.url, 'PUT', '/apis/example.com/v1/namespaces/default/widgets/uid-w', {
      ...w,
      metadata: { ...w.metadata, uid: other },
    });
    assert.equal(put.status, 409);
    assert.equal(
      put.json.message,
      `Operation cannot be fulfilled on widgets.example.com "uid-w": StorageError: invalid object, Code: 4, Key: /registry/example.com/widgets/default/uid-w, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${other}, UID in object meta: ${w.metadata?.uid}`,
    );
  });

  // Real behaviour: handlers/patch.go builds its UpdatedObjectInfo without an object (no uid precondition);
  // rest.BeforeUpdate → validateCommonFields → ValidateObjectMetaAccessorUpdate: "field is immutable" (422).
  it('refuses a patch that changes metadata.uid as an invalid update of an immutable field', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'uid-patch' } } });
    const other = '00000000-0000-0000-0000-000000000002';
    await assert.rejects(
      core.patchNamespacedConfigMap(
        { namespace: 'default', name: 'uid-patch', body: { metadata: { uid: other } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
      (e: unknown) => {
        assert.ok(e instanceof ApiException);
        assert.equal(e.code, 422);
        const s = statusOf(e);
        assert.equal(s.reason, 'Invalid');
        assert.equal(s.message, `ConfigMap "uid-patch" is invalid: metadata.uid: Invalid value: "${other}": field is immutable`);
        assert.deepEqual(s.details.causes, [{ reason: 'FieldValueInvalid', message: `Invalid value: "${other}": field is immutable`, field: 'metadata.uid' }]);
        return true;
      },
    );
    const unchanged = await core.readNamespacedConfigMap({ namespace: 'default', name: 'uid-patch' });
    assert.equal(unchanged.metadata!.uid, cm.metadata!.uid);
  });

  // Real behaviour: apimachinery pkg/apis/meta/v1/time.go (RFC 3339, UTC, seconds) and micro_time.go
  // ("2006-01-02T15:04:05.000000Z07:00"); the fields are those k8s.io/api core/v1 Event and coordination/v1
  // LeaseSpec declare as metav1.Time / metav1.MicroTime.
  it('stores and returns metav1.Time fields in UTC with second precision and MicroTime fields with microseconds', async () => {
    const created = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'times-e' },
      involvedObject: { kind: 'ConfigMap', namespace: 'default', name: 'uid-cm' },
      reason: 'Tested',
      firstTimestamp: '2024-05-01T10:00:00+02:00',
      lastTimestamp: '2024-05-01T08:00:00.999Z',
      eventTime: '2024-05-01T10:00:00.123456+02:00',
    });
    assert.equal(created.status, 201, created.text);
    for (const e of [created.json, (await raw(cluster.url, 'GET', '/api/v1/namespaces/default/events/times-e')).json]) {
      assert.equal(e.firstTimestamp, '2024-05-01T08:00:00Z');
      assert.equal(e.lastTimestamp, '2024-05-01T08:00:00Z');
      assert.equal(e.eventTime, '2024-05-01T08:00:00.123456Z');
    }
    // client-node's V1MicroTime always sends six fractional digits, and in UTC
    await cluster
      .kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .createNamespacedLease({
        namespace: 'default',
        body: { metadata: { name: 'times-l0' }, spec: { holderIdentity: 'a', renewTime: new V1MicroTime('2024-05-01T08:00:00.5Z') } },
      });
    assert.equal(
      (await raw(cluster.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/times-l0')).json.spec.renewTime,
      '2024-05-01T08:00:00.500000Z',
    );
    const lease = await raw(cluster.url, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      metadata: { name: 'times-l' },
      spec: { holderIdentity: 'a', renewTime: '2024-05-01T10:00:00.000001+02:00' },
    });
    assert.equal(lease.status, 201, lease.text);
    const leaseRaw = await raw(cluster.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/times-l');
    assert.equal(leaseRaw.json.spec.renewTime, '2024-05-01T08:00:00.000001Z');
  });

  // Real behaviour: a decode error of the body is handlers/rest.go transformDecodeError's 400
  // (`<Kind> in version "<v>" cannot be handled as a <Kind>: <err>`), err being Go's *time.ParseError text.
  it('refuses a malformed time with the 400 of the decoder, and a MicroTime without six fractional digits', async () => {
    const bad = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'times-bad' },
      involvedObject: { kind: 'ConfigMap', namespace: 'default', name: 'uid-cm' },
      firstTimestamp: 'x',
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Event in version "v1" cannot be handled as a Event: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"',
      reason: 'BadRequest',
      code: 400,
    });
    const lease = await raw(cluster.url, 'POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
      metadata: { name: 'times-bad-lease' },
      spec: { renewTime: '2024-05-01T08:00:00Z' },
    });
    assert.equal(lease.status, 400);
    assert.equal(
      lease.json.message,
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2024-05-01T08:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    );
    assert.equal((await raw(cluster.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/times-bad-lease')).status, 404);
  });

  // Real behaviour: apiextensions-apiserver types only ObjectMeta of a custom resource
  // (objectmeta.GetObjectMetaWithOptions); the rest is unstructured JSON, `format: date-time` only validated.
  it('leaves date-time fields of custom resources as sent', async () => {
    const t = await raw(cluster.url, 'POST', TIMERS, {
      apiVersion: 'example.com/v1',
      kind: 'Timer',
      metadata: { name: 't' },
      spec: { at: '2024-05-01T10:00:00.5+02:00' },
    });
    assert.equal(t.status, 201, t.text);
    assert.equal(t.json.spec.at, '2024-05-01T10:00:00.5+02:00');
    assert.match(t.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal((await raw(cluster.url, 'GET', `${TIMERS}/t`)).json.spec.at, '2024-05-01T10:00:00.5+02:00');
  });

  // Real behaviour: handlers/rest.go limitedReadBody (limit+1 bytes read, then
  // errors.NewRequestEntityTooLargeError("limit is 3145728"): 413, reason RequestEntityTooLarge, no details).
  it('answers a body over 3 MiB with the 413 the client receives (client-node and raw HTTP), and keeps serving', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024 + 10);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'too-big' }, data: { big } } }), (e: unknown) => {
      assert.ok(e instanceof ApiException);
      assert.equal(e.code, 413);
      assert.deepEqual(statusOf(e), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Request entity too large: limit is 3145728',
        reason: 'RequestEntityTooLarge',
        code: 413,
      });
      return true;
    });
    const r = await rawHttp(cluster.url, 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'too-big' }, data: { big } }));
    assert.equal(r.status, 413);
    assert.equal(r.headers.connection, 'close');
    assert.equal(JSON.parse(r.text).message, 'Request entity too large: limit is 3145728');
    const fetched = await raw(cluster.url, 'PUT', '/api/v1/namespaces/default/configmaps/uid-cm', { metadata: { name: 'uid-cm' }, data: { big } });
    assert.equal(fetched.status, 413);
    assert.equal((await core.readNamespacedConfigMap({ namespace: 'default', name: 'uid-cm' })).metadata!.name, 'uid-cm');
    assert.equal((await raw(cluster.url, 'GET', '/api/v1/namespaces/default/configmaps/too-big')).status, 404);
  });

  // Real behaviour: etcd refuses requests over --max-request-bytes (1.5 MiB) with "etcdserver: request is too large",
  // which the apiserver passes through as a 500 without reason (responsewriters.ErrorToAPIStatus;
  // kubernetes/kubernetes issues #74600 and #112152). A dry run never reaches etcd.
  it('refuses a custom resource whose stored form exceeds etcd’s request limit with the 500 of etcd', async () => {
    const payload = (n: number) => widget('huge', { image: 'flink:2.2', extra: { blob: 'y'.repeat(n) } });
    const tooLarge = await raw(cluster.url, 'POST', '/apis/example.com/v1/namespaces/default/widgets', payload(1600 * 1024));
    assert.equal(tooLarge.status, 500);
    assert.deepEqual(tooLarge.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'etcdserver: request is too large',
      code: 500,
    });
    assert.equal((await raw(cluster.url, 'GET', '/apis/example.com/v1/namespaces/default/widgets/huge')).status, 404);
    const dryRun = await raw(cluster.url, 'POST', '/apis/example.com/v1/namespaces/default/widgets?dryRun=All', payload(1600 * 1024));
    assert.equal(dryRun.status, 201);
    const fits = await raw(cluster.url, 'POST', '/apis/example.com/v1/namespaces/default/widgets', payload(1400 * 1024));
    assert.equal(fits.status, 201);
    const grown = await raw(
      cluster.url,
      'PATCH',
      '/apis/example.com/v1/namespaces/default/widgets/huge',
      { spec: { extra: { more: 'z'.repeat(300 * 1024) } } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(grown.status, 500);
    assert.equal(grown.json.message, 'etcdserver: request is too large');
    // ConfigMaps keep their own 1 MiB validation (422), which comes first
    const cm = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'cm-1m' },
      data: { a: 'b'.repeat(1024 * 1024 + 1) },
    });
    assert.equal(cm.status, 422);
  });

  // Real behaviour: kube-openapi pkg/handler/handler.go negotiates /openapi/v2: application/json, or the
  // protobuf type client-go asks for (application/com.github.proto-openapi.spec.v2@v1.0+protobuf); otherwise 406.
  it('serves /openapi/v2 as JSON for Accept: application/json and as protobuf for the type client-go asks for', async () => {
    const json = await raw(cluster.url, 'GET', '/openapi/v2', undefined, { Accept: 'application/json' });
    assert.equal(json.status, 200);
    assert.equal(json.headers.get('content-type'), 'application/json');
    assert.equal(json.json.swagger, '2.0');
    assert.deepEqual(json.json.info, { title: 'Kubernetes', version: 'v1.32.0' });
    const pbRes = await fetch(`${cluster.url}/openapi/v2`, { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    assert.equal(pbRes.status, 200);
    assert.equal(pbRes.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    assert.equal(Buffer.from(await pbRes.arrayBuffer()).toString('hex'), '0a03322e3012150a0a4b756265726e65746573120776312e33322e304200');
    const preferJson = await raw(cluster.url, 'GET', '/openapi/v2', undefined, {
      Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json',
    });
    assert.equal(preferJson.headers.get('content-type'), 'application/json');
    assert.equal((await raw(cluster.url, 'GET', '/openapi/v2', undefined, { Accept: 'text/html' })).status, 406);
  });
});
