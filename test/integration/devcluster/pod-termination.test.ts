/**
 * Graceful pod deletion: a pod bound to a node is Terminating until its kubelet deletes it with
 * grace 0; an unbound pod, or gracePeriodSeconds=0, goes at once. Sources:
 * kubernetes pkg/registry/core/pod/strategy.go (CheckGracefulDelete),
 * staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go (BeforeDelete),
 * staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go (ShouldDeleteDuringUpdate),
 * pkg/controller/replicaset (FilterActivePods: terminating pods are not counted).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { startSimulatedCluster, type SimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';
import { KubectlRunner } from './kubectl-runner.js';
import { eventually, raw } from './raw-http.js';

let api: DevCluster;
let sim: SimulatedCluster;
let kubectl: KubectlRunner;

before(async () => {
  api = await startDevCluster();
  sim = await startSimulatedCluster({ simulation: { podReadyDelayMs: 20, terminationDelayMs: 400 } });
  kubectl = new KubectlRunner(sim.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl.cleanup();
  await sim.stop();
  await api.stop();
});

const pod = (name: string, spec: object = {}) => ({ metadata: { name }, spec: { containers: [{ name: 'main', image: 'x:1' }], ...spec } });

test('api-only: an unbound pod goes at once; a bound one gets deletionTimestamp + grace and stays Terminating without a kubelet', async () => {
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedPod({ namespace: 'default', body: pod('unbound') });
  let r = await raw(api.url, 'DELETE', '/api/v1/namespaces/default/pods/unbound');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'Status');
  assert.equal((await raw(api.url, 'GET', '/api/v1/namespaces/default/pods/unbound')).status, 404);

  await core.createNamespacedPod({ namespace: 'default', body: pod('bound', { nodeName: 'node-1', terminationGracePeriodSeconds: 45 }) });
  const before = Date.now();
  r = await raw(api.url, 'DELETE', '/api/v1/namespaces/default/pods/bound');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'Pod');
  assert.equal(r.json.metadata.deletionGracePeriodSeconds, 45);
  const deadline = Date.parse(r.json.metadata.deletionTimestamp);
  assert.ok(deadline >= Math.floor(before / 1000) * 1000 + 44_000, r.json.metadata.deletionTimestamp);
  // a longer grace does not extend it; a status write does not remove it (ShouldDeleteDuringUpdate)
  r = await raw(api.url, 'DELETE', '/api/v1/namespaces/default/pods/bound', { gracePeriodSeconds: 60 });
  assert.equal(r.json.metadata.deletionGracePeriodSeconds, 45);
  await raw(
    api.url,
    'PATCH',
    '/api/v1/namespaces/default/pods/bound/status',
    { status: { phase: 'Running' } },
    { 'Content-Type': 'application/merge-patch+json' },
  );
  const still = await raw(api.url, 'GET', '/api/v1/namespaces/default/pods/bound');
  assert.equal(still.status, 200);
  const table = await raw(api.url, 'GET', '/api/v1/namespaces/default/pods/bound', undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.equal(table.json.rows[0].cells[2], 'Terminating');
  // the kubelet's final delete (or --force --grace-period=0) removes it
  r = await raw(api.url, 'DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0');
  assert.equal(r.json.kind, 'Status');
  assert.equal((await raw(api.url, 'GET', '/api/v1/namespaces/default/pods/bound')).status, 404);
});

test('the simulated kubelet binds pods, shows them Terminating after a delete, then finishes the deletion', async () => {
  const core = sim.cluster.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedPod({ namespace: 'default', body: pod('graceful') });
  await eventually(async () => (await core.readNamespacedPod({ namespace: 'default', name: 'graceful' })).status?.phase === 'Running', 5000, 'running');
  assert.equal((await core.readNamespacedPod({ namespace: 'default', name: 'graceful' })).spec?.nodeName, 'devcluster-node');
  await kubectl.ok(['delete', 'pod', 'graceful', '--wait=false']);
  const listed = await kubectl.ok(['get', 'pod', 'graceful', '--no-headers']);
  assert.match(listed, /^graceful\s+1\/1\s+Terminating\s/);
  // kubectl delete's default wait ends once the kubelet has deleted the pod
  await kubectl.ok(['wait', '--for=delete', 'pod/graceful', '--timeout=10s']);
  assert.equal((await raw(sim.cluster.url, 'GET', '/api/v1/namespaces/default/pods/graceful')).status, 404);
});

test('a ReplicaSet replaces a terminating pod while it still terminates (terminating pods are not counted)', async () => {
  const apps = sim.cluster.kubeConfig().makeApiClient(AppsV1Api);
  const core = sim.cluster.kubeConfig().makeApiClient(CoreV1Api);
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: {
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'x:1' }] } },
      },
    },
  });
  const pods = async () => (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' })).items;
  await eventually(async () => (await pods()).some((p) => p.status?.phase === 'Running'), 5000, 'web pod running');
  const [first] = await pods();
  await core.deleteNamespacedPod({ namespace: 'default', name: first.metadata!.name! });
  await eventually(
    async () => {
      const now = await pods();
      return now.length === 2 && now.some((p) => p.metadata?.name === first.metadata!.name && p.metadata?.deletionTimestamp);
    },
    5000,
    'replacement created while the old pod terminates',
  );
  await eventually(async () => (await pods()).length === 1, 5000, 'old pod gone');
  await eventually(
    async () => (await apps.readNamespacedDeployment({ namespace: 'default', name: 'web' })).status?.availableReplicas === 1,
    5000,
    'available again',
  );
});
