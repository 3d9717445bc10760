/**
 * Cascading deletion of a Deployment on the development cluster with its simulated controllers and
 * kubelet, per propagation policy, as the Kubernetes documentation "Use cascading deletion"
 * (https://kubernetes.io/docs/tasks/administer-cluster/use-cascading-deletion/) and the
 * garbage collector (pkg/controller/garbagecollector/garbagecollector.go attemptToDeleteItem)
 * describe it:
 * - Foreground: the Deployment stays readable, with deletionTimestamp and the foregroundDeletion
 *   finalizer, until its ReplicaSet is gone, which stays (in foreground itself, it has pods) until
 *   its pods are gone; the pods (no dependents) are deleted in background, so they terminate
 *   gracefully (Terminating) rather than vanish;
 * - Background: the Deployment is gone at once, its ReplicaSet and pods after it;
 * - Orphan: the Deployment is gone, its ReplicaSet and pods keep running, no longer owned by it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startSimulatedCluster, type SimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';
import { eventually, raw } from './raw-http.js';

let sim: SimulatedCluster;
let apps: AppsV1Api;
let core: CoreV1Api;

before(async () => {
  sim = await startSimulatedCluster({ simulation: { podReadyDelayMs: 20, terminationDelayMs: 300 } });
  apps = sim.cluster.kubeConfig().makeApiClient(AppsV1Api);
  core = sim.cluster.kubeConfig().makeApiClient(CoreV1Api);
});
after(async () => {
  await sim.stop();
});

async function runningDeployment(name: string): Promise<void> {
  await apps.createNamespacedDeployment({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'x:1' }] } },
      },
    },
  });
  await eventually(async () => (await pods(name)).filter((p) => p.status?.phase === 'Running').length === 2, 5000, `${name} pods running`);
}

const pods = async (app: string) => (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${app}` })).items;
const replicaSets = async (app: string) => (await apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: `app=${app}` })).items;
const deploymentStatus = async (name: string) => (await raw(sim.cluster.url, 'GET', `/apis/apps/v1/namespaces/default/deployments/${name}`)).status;
const deleteDeployment = (name: string, propagationPolicy: string) =>
  raw(sim.cluster.url, 'DELETE', `/apis/apps/v1/namespaces/default/deployments/${name}`, { propagationPolicy });

test('Foreground: the Deployment stays, marked deleting, until its ReplicaSet and its gracefully terminated pods are gone', async () => {
  await runningDeployment('fg');
  const r = await deleteDeployment('fg', 'Foreground');
  assert.equal(r.status, 200);
  assert.equal(r.json.kind, 'Deployment', 'answered with the object, which is still there');
  assert.ok(r.json.metadata.deletionTimestamp);
  assert.deepEqual(r.json.metadata.finalizers, ['foregroundDeletion']);

  // Sample until everything is gone: what was present at each moment.
  const samples: Array<{ deployment: boolean; replicaSets: number; pods: number; terminating: number }> = [];
  await eventually(
    async () => {
      const [deployment, rs, ps] = await Promise.all([deploymentStatus('fg'), replicaSets('fg'), pods('fg')]);
      samples.push({
        deployment: deployment === 200,
        replicaSets: rs.length,
        pods: ps.length,
        terminating: ps.filter((p) => p.metadata?.deletionTimestamp).length,
      });
      return deployment === 404;
    },
    8000,
    'the Deployment to go',
  );
  assert.ok(
    samples.some((s) => s.terminating === 2 && s.deployment),
    `the pods were Terminating (graceful) while the Deployment was still there: ${JSON.stringify(samples)}`,
  );
  for (const s of samples) {
    if (s.pods > 0) assert.ok(s.replicaSets > 0 && s.deployment, `no owner went before its pods: ${JSON.stringify(samples)}`);
    if (s.replicaSets > 0) assert.ok(s.deployment, `the Deployment outlived its ReplicaSet: ${JSON.stringify(samples)}`);
  }
  assert.equal((await pods('fg')).length, 0);
  assert.equal((await replicaSets('fg')).length, 0);
});

test('Background: the Deployment goes at once; its ReplicaSet and pods are collected after it', async () => {
  await runningDeployment('bg');
  const r = await deleteDeployment('bg', 'Background');
  assert.equal(r.json.kind, 'Status');
  assert.equal(await deploymentStatus('bg'), 404);
  assert.ok((await pods('bg')).length > 0, 'the pods are still there (terminating) right after the Deployment went');
  await eventually(async () => (await pods('bg')).length === 0 && (await replicaSets('bg')).length === 0, 8000, 'dependents collected');
});

test('Orphan: the Deployment goes; its ReplicaSet and pods keep running, no longer owned by it', async () => {
  await runningDeployment('orphan');
  const r = await deleteDeployment('orphan', 'Orphan');
  assert.equal(r.status, 200);
  assert.equal(await deploymentStatus('orphan'), 404);
  await new Promise((resolve) => setTimeout(resolve, 400)); // longer than a pod's termination here
  const [rs] = await replicaSets('orphan');
  assert.ok(rs, 'the ReplicaSet stays');
  assert.equal(rs.metadata?.ownerReferences, undefined, 'its reference to the deleted Deployment is removed');
  const left = await pods('orphan');
  assert.equal(left.length, 2);
  assert.ok(left.every((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp));
  await apps.deleteNamespacedReplicaSet({ namespace: 'default', name: rs.metadata!.name! });
});
