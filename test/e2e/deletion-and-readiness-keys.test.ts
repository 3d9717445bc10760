/**
 * The per-resource keys `kubernetes.operator.resource.deletion.propagation` and
 * `kubernetes.operator.observer.rest-ready.delay`, judged by the simulated cluster and the status
 * a user reads. Apache: the propagation policy is used to delete the JobManager/TaskManager
 * Deployments (AbstractFlinkService.deleteClusterDeployment, default Foreground); the rest-ready
 * delay keeps a JobManager whose port answers DEPLOYED_NOT_READY that long before READY
 * (AbstractFlinkDeploymentObserver.observeJmDeployment, ReconciliationUtils rescheduling after
 * getRestApiReadyDelay). Kubernetes "Use cascading deletion" for what each policy does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  // Pods take a while to stop, so "the pods are gone" and "the resource is gone" can be told apart.
  h = await startHarness({ simulation: { terminationDelayMs: 500 } });
});
after(async () => {
  await h?.stop();
});

const stable = (d: FlinkDeploymentV1) => d.status?.lifecycleState === 'STABLE' && d.status?.jobStatus?.state === 'RUNNING';
const podsOf = async (name: string) => (await h.core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items;

test('by default (Foreground) a deleted FlinkDeployment is gone only once its Flink pods are', async () => {
  await h.create(flinkDeployment('fg').build());
  await h.waitFor('fg', stable, 'fg to be STABLE');
  assert.ok((await podsOf('fg')).length >= 2, 'a JobManager and TaskManager pods run');
  await h.delete('fg');
  const samples: Array<{ resource: boolean; pods: number; jobManagerDeleting: boolean }> = [];
  await h.waitUntil(async () => {
    const [resource, pods, jm] = await Promise.all([
      h.get('fg'),
      podsOf('fg'),
      h.apps.readNamespacedDeployment({ namespace: 'default', name: 'fg' }).catch(() => undefined),
    ]);
    samples.push({
      resource: resource !== undefined,
      pods: pods.length,
      jobManagerDeleting: (jm?.metadata?.finalizers ?? []).includes('foregroundDeletion'),
    });
    return resource === undefined;
  }, 'fg to be deleted');
  assert.equal((await podsOf('fg')).length, 0, 'no pod of the deleted FlinkDeployment is left');
  assert.ok(
    samples.some((s) => s.jobManagerDeleting && s.resource),
    `the JobManager Deployment was deleted in foreground while the FlinkDeployment waited: ${JSON.stringify(samples)}`,
  );
  for (const s of samples) if (!s.resource) assert.equal(s.pods, 0, `the FlinkDeployment went before its pods: ${JSON.stringify(samples)}`);
});

test('resource.deletion.propagation: Orphan leaves the Flink pods running when the FlinkDeployment is deleted', async () => {
  await h.create(
    flinkDeployment('orphaned')
      .withSpec({ flinkConfiguration: { 'kubernetes.operator.resource.deletion.propagation': 'Orphan' } })
      .build(),
  );
  await h.waitFor('orphaned', stable, 'orphaned to be STABLE');
  const before = (await podsOf('orphaned')).map((p) => p.metadata?.name).sort();
  await h.delete('orphaned');
  await h.waitUntil(async () => (await h.get('orphaned')) === undefined, 'orphaned to be deleted');
  await h.waitUntil(
    async () => (await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'orphaned' }).catch(() => undefined)) === undefined,
    'the JobManager Deployment to be gone',
  );
  await new Promise((resolve) => setTimeout(resolve, 700)); // longer than a pod takes to stop here
  const left = await podsOf('orphaned');
  assert.deepEqual(left.map((p) => p.metadata?.name).sort(), before, 'the same pods still run, orphaned');
  assert.ok(left.every((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running'));
  const replicaSets = (await h.apps.listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'app=orphaned' })).items;
  assert.ok(replicaSets.length > 0 && replicaSets.every((rs) => rs.metadata?.ownerReferences === undefined), 'their ReplicaSets are no longer owned');
  for (const rs of replicaSets) await h.apps.deleteNamespacedReplicaSet({ namespace: 'default', name: rs.metadata!.name! });
});

test('observer.rest-ready.delay keeps an available JobManager DEPLOYED_NOT_READY for that long before READY', async () => {
  await h.create(
    flinkDeployment('slow-ready')
      .withSpec({ flinkConfiguration: { 'kubernetes.operator.observer.rest-ready.delay': '2 s' } })
      .build(),
  );
  const statuses: Array<{ at: number; jm?: string }> = [];
  await h.waitUntil(async () => {
    const d = await h.get('slow-ready');
    statuses.push({ at: Date.now(), jm: d?.status?.jobManagerDeploymentStatus });
    return d?.status?.jobManagerDeploymentStatus === 'READY' ? d : undefined;
  }, 'slow-ready to be READY');
  const readyAt = statuses.at(-1)!.at;
  const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'slow-ready' });
  const available = jm.status?.conditions?.find((c) => c.type === 'Available' && c.status === 'True');
  assert.ok(available?.lastTransitionTime, 'the JobManager Deployment is available');
  const availableAt = new Date(available.lastTransitionTime).getTime();
  assert.ok(readyAt >= availableAt + 2_000, `READY ${readyAt - availableAt} ms after the JobManager became available`);
  assert.ok(
    statuses.some((s) => s.jm === 'DEPLOYED_NOT_READY'),
    `DEPLOYED_NOT_READY is shown meanwhile: ${statuses.map((s) => s.jm).join(',')}`,
  );
  await h.waitFor('slow-ready', stable, 'slow-ready to be STABLE');
});
