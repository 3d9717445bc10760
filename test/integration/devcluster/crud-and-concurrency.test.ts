import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api, CoordinationV1Api, RbacAuthorizationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { raw, statusOf } from './raw-http.js';

describe('dev cluster: CRUD, resourceVersion and concurrency through client-node', () => {
  let cluster: DevCluster;
  let core: CoreV1Api;
  before(async () => {
    cluster = await startDevCluster();
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  });
  after(() => cluster.stop());

  it('serves /version as v1.32 and has the default namespaces', async () => {
    const v = await raw(cluster.url, 'GET', '/version');
    assert.equal(v.json.major, '1');
    assert.equal(v.json.minor, '32');
    const ns = await core.listNamespace();
    const names = ns.items.map((n) => n.metadata!.name);
    assert.ok(names.includes('default') && names.includes('kube-system'));
    assert.equal(ns.items.find((n) => n.metadata!.name === 'default')!.status!.phase, 'Active');
  });

  it('creates with uid, creationTimestamp and a global resourceVersion; lists carry the current RV', async () => {
    const a = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'crud-a' }, data: { k: 'v' } } });
    const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'crud-b' } } });
    assert.match(a.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.ok(a.metadata!.creationTimestamp instanceof Date);
    assert.equal(Number(b.metadata!.resourceVersion), Number(a.metadata!.resourceVersion) + 1);
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    assert.ok(Number(list.metadata!.resourceVersion) >= Number(b.metadata!.resourceVersion));
    const rawList = await raw(cluster.url, 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(rawList.json.kind, 'ConfigMapList');
    assert.equal(rawList.json.items[0].kind, undefined, 'built-in list items omit kind');
  });

  it('answers 409 AlreadyExists, 404 NotFound and 404 for a missing namespace with the real Status bodies', async () => {
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'crud-a' } } }), (e: any) => {
      const s = statusOf(e);
      assert.equal(e.code, 409);
      assert.equal(s.reason, 'AlreadyExists');
      assert.equal(s.message, 'configmaps "crud-a" already exists');
      return true;
    });
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'default', name: 'nope' }), (e: any) => {
      assert.equal(e.code, 404);
      assert.deepEqual(statusOf(e), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'configmaps "nope" not found',
        reason: 'NotFound',
        details: { name: 'nope', kind: 'configmaps' },
        code: 404,
      });
      return true;
    });
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'ghost', body: { metadata: { name: 'x' } } }), (e: any) => {
      assert.equal(e.code, 404);
      assert.equal(statusOf(e).message, 'namespaces "ghost" not found');
      return true;
    });
    const unknownPath = await raw(cluster.url, 'GET', '/api/v1/namespaces/default/widgets');
    assert.equal(unknownPath.status, 404);
    assert.equal(unknownPath.json.message, 'the server could not find the requested resource');
  });

  it('rejects a PUT with a stale resourceVersion with 409 Conflict and allows an unconditional ConfigMap PUT', async () => {
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'crud-a' });
    const updated = await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'crud-a', body: { ...cm, data: { k: 'v2' } } });
    assert.notEqual(updated.metadata!.resourceVersion, cm.metadata!.resourceVersion);
    await assert.rejects(core.replaceNamespacedConfigMap({ namespace: 'default', name: 'crud-a', body: { ...cm, data: { k: 'v3' } } }), (e: any) => {
      assert.equal(e.code, 409);
      const s = statusOf(e);
      assert.equal(s.reason, 'Conflict');
      assert.equal(
        s.message,
        'Operation cannot be fulfilled on configmaps "crud-a": the object has been modified; please apply your changes to the latest version and try again',
      );
      return true;
    });
    const unconditional = await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'crud-a',
      // (a different metadata.uid would be a storage precondition: 409, see api-fidelity-details.test.ts)
      body: { metadata: { name: 'crud-a', creationTimestamp: new Date(0) }, data: { k: 'v4' } },
    });
    assert.equal(unconditional.data!.k, 'v4');
    assert.equal(unconditional.metadata!.uid, cm.metadata!.uid, 'server-owned metadata cannot be overwritten');
    assert.deepEqual(unconditional.metadata!.creationTimestamp, cm.metadata!.creationTimestamp);
  });

  it('does not write (no new resourceVersion) when an update changes nothing', async () => {
    const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: 'crud-a' });
    const same = await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'crud-a', body: cm });
    assert.equal(same.metadata!.resourceVersion, cm.metadata!.resourceVersion);
  });

  it('rejects a ConfigMap over 1 MiB and invalid names and labels with 422', async () => {
    const big = 'x'.repeat(1024 * 1024 + 1);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'big' }, data: { big } } }), (e: any) => {
      assert.equal(e.code, 422);
      assert.equal(statusOf(e).message, 'ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes');
      return true;
    });
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Bad_Name' } } }), (e: any) => {
      assert.equal(e.code, 422);
      assert.match(statusOf(e).message, /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
      return true;
    });
    await assert.rejects(
      core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'lbl', labels: { a: 'v'.repeat(64) } } } }),
      (e: any) => {
        assert.equal(e.code, 422);
        assert.match(statusOf(e).message, /metadata.labels: Invalid value: "v{64}": must be no more than 63 characters/);
        return true;
      },
    );
    await assert.rejects(core.createNamespace({ body: { metadata: { name: 'n'.repeat(64) } } }), (e: any) => e.code === 422);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'a'.repeat(254) } } }), (e: any) => e.code === 422);
  });

  it('serves deployments with defaults, status kept on main writes and generation bumped by spec changes', async () => {
    const apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
    const body = {
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
      },
    };
    const d = await apps.createNamespacedDeployment({ namespace: 'default', body: { ...body, status: { readyReplicas: 9 } } });
    assert.equal(d.spec!.replicas, 1);
    assert.equal(d.metadata!.generation, 1);
    assert.equal(d.status!.readyReplicas, undefined, 'create resets status');
    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      namespace: 'default',
      name: 'web',
      body: { ...d, status: { readyReplicas: 1, replicas: 1 } },
    });
    assert.equal(withStatus.status!.readyReplicas, 1);
    assert.equal(withStatus.metadata!.generation, 1, '/status writes do not bump generation');
    const scaled = await apps.replaceNamespacedDeployment({
      namespace: 'default',
      name: 'web',
      body: { ...withStatus, spec: { ...withStatus.spec!, replicas: 3 }, status: {} },
    });
    assert.equal(scaled.metadata!.generation, 2);
    assert.equal(scaled.status!.readyReplicas, 1, 'main-resource writes keep the status');
    const labelOnly = await apps.replaceNamespacedDeployment({
      namespace: 'default',
      name: 'web',
      body: { ...scaled, metadata: { ...scaled.metadata!, labels: { app: 'web', x: 'y' } } },
    });
    assert.equal(labelOnly.metadata!.generation, 2, 'metadata changes do not bump generation');
    await assert.rejects(
      apps.createNamespacedDeployment({
        namespace: 'default',
        body: { ...body, metadata: { name: 'bad' }, spec: { ...body.spec, selector: { matchLabels: { app: 'other' } } } },
      }),
      (e: any) => e.code === 422 && /`selector` does not match template `labels`/.test(statusOf(e).message),
    );
  });

  it('serves the scale subresource of deployments as autoscaling/v1 Scale', async () => {
    const apps = cluster.kubeConfig().makeApiClient(AppsV1Api);
    const scale = await apps.readNamespacedDeploymentScale({ namespace: 'default', name: 'web' });
    assert.equal(scale.spec!.replicas, 3);
    assert.equal(scale.status!.selector, 'app=web');
    const updated = await apps.replaceNamespacedDeploymentScale({ namespace: 'default', name: 'web', body: { ...scale, spec: { replicas: 5 } } });
    assert.equal(updated.spec!.replicas, 5);
    const d = await apps.readNamespacedDeployment({ namespace: 'default', name: 'web' });
    assert.equal(d.spec!.replicas, 5);
    assert.equal(d.metadata!.generation, 3);
    await assert.rejects(
      apps.replaceNamespacedDeploymentScale({ namespace: 'default', name: 'web', body: { ...scale, spec: { replicas: 6 } } }),
      (e: any) => e.code === 409,
    );
  });

  it('serves RBAC objects, including names with colons', async () => {
    const rbac = cluster.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: { metadata: { name: 'flink-operator:manager' }, rules: [{ apiGroups: ['flink.apache.org'], resources: ['flinkdeployments'], verbs: ['*'] }] },
    });
    await rbac.createNamespacedRole({
      namespace: 'default',
      body: { metadata: { name: 'flink' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'default',
      body: {
        metadata: { name: 'flink' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'flink' },
        subjects: [{ kind: 'ServiceAccount', name: 'flink', namespace: 'default' }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'flink-operator:manager' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'flink-operator:manager' },
        subjects: [],
      },
    });
    // besides the bootstrap ClusterRoles every cluster has (cluster-admin, admin, edit, view, system:...)
    assert.ok((await rbac.listClusterRole()).items.some((r) => r.metadata?.name === 'flink-operator:manager'));
    assert.equal((await rbac.readNamespacedRoleBinding({ namespace: 'default', name: 'flink' })).roleRef.name, 'flink');
  });

  it('assigns service cluster IPs and serves leases for leader election with 409 on a lost race', async () => {
    const svc = await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'svc-a' }, spec: { ports: [{ port: 8081 }], selector: { app: 'x' } } },
    });
    assert.match(svc.spec!.clusterIP!, /^10\.96\./);
    assert.equal(svc.spec!.ports![0].protocol, 'TCP');
    assert.equal(svc.spec!.ports![0].targetPort, 8081);
    const coord = cluster.kubeConfig().makeApiClient(CoordinationV1Api);
    const lease = await coord.createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new V1MicroTime() } },
    });
    await coord.replaceNamespacedLease({ namespace: 'default', name: 'leader', body: { ...lease, spec: { ...lease.spec!, holderIdentity: 'b' } } });
    await assert.rejects(
      coord.replaceNamespacedLease({ namespace: 'default', name: 'leader', body: { ...lease, spec: { ...lease.spec!, holderIdentity: 'c' } } }),
      (e: any) => e.code === 409,
    );
  });

  it('turns Secret stringData into base64 data', async () => {
    const s = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'sec' }, stringData: { password: 'hunter2' } } });
    assert.equal(s.type, 'Opaque');
    assert.equal(Buffer.from(s.data!.password, 'base64').toString(), 'hunter2');
    assert.equal((s as any).stringData, undefined);
  });

  it('filters lists by label and field selectors and rejects unknown field selectors with 400', async () => {
    for (const [name, tier] of [
      ['sel-1', 'web'],
      ['sel-2', 'db'],
      ['sel-3', 'cache'],
    ]) {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name, labels: { group: 'sel', tier } } } });
    }
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'sel-4', labels: { group: 'sel' } } } });
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedConfigMap({ namespace: 'default', labelSelector, fieldSelector })).items.map((i) => i.metadata!.name).sort();
    assert.deepEqual(await names('group=sel,tier=web'), ['sel-1']);
    assert.deepEqual(await names('group==sel,tier!=web'), ['sel-2', 'sel-3', 'sel-4']);
    assert.deepEqual(await names('group=sel,tier in (db, cache)'), ['sel-2', 'sel-3']);
    assert.deepEqual(await names('group=sel,tier notin (db,cache)'), ['sel-1', 'sel-4']);
    assert.deepEqual(await names('group=sel,tier'), ['sel-1', 'sel-2', 'sel-3']);
    assert.deepEqual(await names('group=sel,!tier'), ['sel-4']);
    assert.deepEqual(await names('group=sel', 'metadata.name=sel-2'), ['sel-2']);
    assert.deepEqual(await names('group=sel', 'metadata.name!=sel-2,metadata.namespace=default'), ['sel-1', 'sel-3', 'sel-4']);
    await assert.rejects(core.listNamespacedConfigMap({ namespace: 'default', fieldSelector: 'data.k=v' }), (e: any) => {
      assert.equal(e.code, 400);
      assert.equal(statusOf(e).message, '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"');
      return true;
    });
    const all = await core.listConfigMapForAllNamespaces({ labelSelector: 'group=sel' });
    assert.equal(all.items.length, 4);
  });

  it('creates and lists events, with the involvedObject field selectors kubectl describe uses', async () => {
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'crud-a.1' },
        involvedObject: { kind: 'ConfigMap', name: 'crud-a', namespace: 'default' },
        reason: 'Tested',
        message: 'hello',
        type: 'Normal',
      },
    });
    const ev = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=crud-a,involvedObject.kind=ConfigMap' });
    assert.equal(ev.items.length, 1);
    assert.equal(ev.items[0].reason, 'Tested');
    const none = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=other' });
    assert.equal(none.items.length, 0);
  });

  it('answers a protobuf body with 415 and a message naming the JSON workaround', async () => {
    const r = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/configmaps', 'k8s\u0000...', {
      'Content-Type': 'application/vnd.kubernetes.protobuf',
    });
    assert.equal(r.status, 415);
    assert.match(r.json.message, /--dry-run=client -o yaml \| kubectl apply -f -/);
  });

  it('drops unknown top-level and metadata fields of built-ins, and rejects them under fieldValidation=Strict', async () => {
    const body = { metadata: { name: 'typo', labls: { a: 'b' } }, datta: { k: 'v' } };
    const strict = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', body);
    assert.equal(strict.status, 400);
    assert.equal(
      strict.json.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta", unknown field "metadata.labls"',
    );
    const lax = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/configmaps', body);
    assert.equal(lax.status, 201);
    assert.equal(lax.json.datta, undefined);
    assert.equal(lax.json.metadata.labls, undefined);
    assert.match(lax.headers.get('warning') ?? '', /unknown field \\"datta\\"/);
  });

  it('honours dryRun=All without storing anything', async () => {
    const r = await raw(cluster.url, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'dry' } });
    assert.equal(r.status, 201);
    await assert.rejects(core.readNamespacedConfigMap({ namespace: 'default', name: 'dry' }), (e: any) => e.code === 404);
  });
});
