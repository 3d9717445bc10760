/**
 * End-to-end: Flink native Kubernetes application mode (design/009-native-mode.md) on the
 * development cluster. The operator renders the JobManager only; the simulated native JobManager
 * creates its TaskManager pods through the API server; the status counts them; an upgrade tears
 * the old cluster down (savepoint first) before the new JobManager starts; deletion removes all.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions, type V1ConfigMap, type V1Pod } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
// TaskManager pods are not watched: their count reaches the status on the next pass, so passes come often here
const OPERATOR = { reconcileIntervalMs: 500 };
before(async () => {
  h = await startHarness({ operator: OPERATOR });
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

async function taskManagerPods(name: string): Promise<V1Pod[]> {
  const pods = await h.core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name},component=taskmanager` });
  return pods.items.filter((p) => !p.metadata?.deletionTimestamp).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
}

/** The job id the deploy intent pinned (state ConfigMap key `pendingOperation`), if any. */
function jobIdToSubmit(cm: V1ConfigMap | undefined): string | undefined {
  const pending = cm?.data?.pendingOperation;
  return pending ? (parseYaml(pending) as { jobIdToSubmit?: string }).jobIdToSubmit : undefined;
}

async function deploymentExists(name: string): Promise<boolean> {
  try {
    await h.apps.readNamespacedDeployment({ namespace: 'default', name });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return false;
    throw error;
  }
}

test('native mode: the JobManager creates its TaskManager pods, a savepoint upgrade replaces the whole cluster, deletion removes everything', async () => {
  await h.create(
    flinkDeployment('native')
      .withSpec({ mode: 'native', job: { parallelism: 3 } })
      .build(),
  );
  const first = await h.waitFor('native', (d) => stable(1)(d) && d.status?.taskManager?.replicas === 2, 'native STABLE with 2 TaskManagers');

  const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'native' });
  assert.deepEqual(jm.metadata?.labels, { app: 'native', component: 'jobmanager', type: 'flink-native-kubernetes' });
  const main = jm.spec?.template.spec?.containers.find((c) => c.name === 'flink-main-container');
  assert.deepEqual(main?.args, ['bash', '-c', 'kubernetes-jobmanager.sh kubernetes-application ']);
  assert.equal(await deploymentExists('native-taskmanager'), false, 'no TaskManager Deployment in native mode');

  const pods = await taskManagerPods('native');
  assert.deepEqual(
    pods.map((p) => p.metadata?.name),
    ['native-taskmanager-1-1', 'native-taskmanager-1-2'],
    'ceil(3 / 2 slots) TaskManagers',
  );
  for (const pod of pods) {
    assert.equal(pod.metadata?.labels?.type, 'flink-native-kubernetes');
    assert.deepEqual(
      pod.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid]),
      [['Deployment', 'native', jm.metadata?.uid]],
    );
    assert.equal(pod.spec?.serviceAccountName, 'flink');
    assert.equal(pod.spec?.containers[0]?.image, 'flink:1.20');
  }
  assert.equal(first.status?.taskManager?.labelSelector, 'component=taskmanager,app=native');

  // parallelism change = upgrade (stop with savepoint, new cluster restored from it)
  await h.patch('native', { spec: { job: { parallelism: 6 } } });
  const upgraded = await h.waitFor(
    'native',
    (d) => stable(2)(d) && d.status?.taskManager?.replicas === 3,
    'native STABLE on generation 2 with 3 TaskManagers',
    20_000,
  );
  assert.notEqual(upgraded.status?.jobStatus?.jobId, first.status?.jobStatus?.jobId, 'a new job');
  const lineage = h.world.simulation.lineage('default', 'native');
  const stopSavepoint = lineage.savepoints.find((s) => s.kind === 'stop-with-savepoint' && s.status === 'COMPLETED');
  assert.ok(stopSavepoint, 'the old job stopped with a savepoint');
  assert.equal(lineage.submissions.length, 2);
  assert.equal(lineage.submissions.at(-1)!.restoredFrom, stopSavepoint.location, 'the new job restored from the upgrade savepoint');

  const newJm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'native' });
  assert.notEqual(newJm.metadata?.uid, jm.metadata?.uid, 'the JobManager Deployment was re-created, not updated in place');
  const newPods = await taskManagerPods('native');
  assert.equal(newPods.length, 3);
  for (const pod of newPods) assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, newJm.metadata?.uid, `${pod.metadata?.name} belongs to the new JobManager`);

  await h.delete('native');
  await h.waitUntil(async () => ((await h.get('native')) === undefined ? true : undefined), 'native to be deleted');
  await h.waitUntil(async () => {
    const left = await h.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=native' });
    return left.items.length === 0 && !(await deploymentExists('native')) ? true : undefined;
  }, 'the JobManager and its TaskManager pods to be gone');
});

test('a FlinkDeployment without spec.mode runs in native mode', async () => {
  const d = flinkDeployment('unset').build();
  delete d.spec.mode;
  await h.create(d);
  const deployed = await h.waitFor('unset', (x) => stable(1)(x) && x.status?.taskManager?.replicas === 1, 'unset STABLE with 1 TaskManager');
  assert.equal(deployed.spec.mode, undefined);
  const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'unset' });
  assert.equal(jm.metadata?.labels?.type, 'flink-native-kubernetes');
  assert.deepEqual(
    (await taskManagerPods('unset')).map((p) => p.metadata?.name),
    ['unset-taskmanager-1-1'],
    'ceil(2 / 2 slots) = 1 TaskManager',
  );
  assert.equal(await deploymentExists('unset-taskmanager'), false);
  const config = await h.core.readNamespacedConfigMap({ namespace: 'default', name: 'flink-config-unset' });
  assert.match(config.data?.['config.yaml'] ?? '', /^execution\.target: "kubernetes-application"$/m);
});

test('native last-state upgrade: the new JobManager recovers the same job through HA after the old cluster is gone, with new TaskManagers', async () => {
  const HA = { 'high-availability.type': 'kubernetes', 'high-availability.storageDir': 'file:///flink-data/ha', 'execution.checkpointing.interval': '100 ms' };
  await h.create(
    flinkDeployment('nls')
      .withSpec({ mode: 'native', job: { upgradeMode: 'last-state' } })
      .withFlinkConfiguration(HA)
      .build(),
  );
  const before = await h.waitFor('nls', (d) => stable(1)(d) && d.status?.taskManager?.replicas === 1, 'nls STABLE');
  await h.waitUntil(async () => {
    const ha = await h.core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=nls,configmap-type=high-availability' });
    return ha.items.some((cm) => Object.keys(cm.data ?? {}).some((k) => k.startsWith('completedCheckpoint'))) ? true : undefined;
  }, 'a checkpoint recorded in the HA metadata');
  const oldPods = (await taskManagerPods('nls')).map((p) => p.metadata?.uid);
  await h.patch('nls', { spec: { image: 'flink:1.20.1' } });
  const after = await h.waitFor('nls', (d) => stable(2)(d) && d.status?.taskManager?.replicas === 1, 'nls STABLE on generation 2', 20_000);
  const lineage = h.world.simulation.lineage('default', 'nls');
  assert.equal(lineage.savepoints.length, 0, 'no savepoint');
  assert.equal(lineage.submissions.at(-1)!.origin, 'ha-recovered');
  assert.equal(after.status?.jobStatus?.jobId, before.status?.jobStatus?.jobId, 'the same job continues');
  const pods = await taskManagerPods('nls');
  assert.ok(
    pods.every((p) => !oldPods.includes(p.metadata?.uid)),
    'no TaskManager of the old image was adopted',
  );
  assert.ok(pods.every((p) => p.spec?.containers[0]?.image === 'flink:1.20.1'));
});

test('native suspend removes the JobManager and its TaskManagers; resume restores from the suspend savepoint', async () => {
  await h.create(flinkDeployment('nsus').withSpec({ mode: 'native' }).build());
  await h.waitFor('nsus', (d) => stable(1)(d) && d.status?.taskManager?.replicas === 1, 'nsus STABLE');
  await h.patch('nsus', { spec: { job: { state: 'suspended' } } });
  await h.waitFor('nsus', (d) => d.status?.lifecycleState === 'SUSPENDED' && d.status?.observedGeneration === 2, 'nsus SUSPENDED');
  await h.waitUntil(
    async () => ((await h.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=nsus' })).items.length === 0 ? true : undefined),
    'no pods left while suspended',
  );
  await h.patch('nsus', { spec: { job: { state: 'running' } } });
  await h.waitFor('nsus', (d) => stable(3)(d) && d.status?.taskManager?.replicas === 1, 'nsus running again');
  const lineage = h.world.simulation.lineage('default', 'nsus');
  const suspendSavepoint = lineage.savepoints.find((s) => s.kind === 'stop-with-savepoint');
  assert.ok(suspendSavepoint);
  assert.equal(lineage.submissions.at(-1)!.restoredFrom, suspendSavepoint.location);
});

test('operator stopped while a native redeploy waits for the old cluster: no new JobManager before the old pods are gone; resumes without a second savepoint or submission', async () => {
  await h.create(flinkDeployment('ncrash').withSpec({ mode: 'native' }).build());
  await h.waitFor('ncrash', (d) => stable(1)(d) && d.status?.taskManager?.replicas === 1, 'ncrash STABLE');
  const oldJm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'ncrash' });
  const [oldTm] = await taskManagerPods('ncrash');
  assert.ok(oldTm);
  // hold the old TaskManager pod in Terminating, so the teardown lasts until the test lets it go
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  await h.core.patchNamespacedPod({ namespace: 'default', name: oldTm.metadata!.name!, body: { metadata: { finalizers: ['e2e.test/hold'] } } }, mergePatch);

  await h.patch('ncrash', { spec: { image: 'flink:1.20.1' } });
  const intent = await h.waitUntil(
    async () => {
      const cm = await h.stateConfigMap('ncrash');
      return cm?.data?.phase === 'DEPLOYING' && jobIdToSubmit(cm) && !(await deploymentExists('ncrash')) ? cm : undefined;
    },
    'the deploy intent recorded and the old JobManager Deployment deleted',
    20_000,
  );
  await h.stopOperator();
  const held = await h.core.readNamespacedPod({ namespace: 'default', name: oldTm.metadata!.name! });
  assert.ok(held.metadata?.deletionTimestamp, 'the old TaskManager is terminating');
  assert.equal(await deploymentExists('ncrash'), false, 'no new JobManager while a pod of the old cluster remains');

  await h.core.patchNamespacedPod({ namespace: 'default', name: oldTm.metadata!.name!, body: { metadata: { finalizers: null } } }, mergePatch);
  await h.startOperator(OPERATOR);
  const upgraded = await h.waitFor('ncrash', (d) => stable(2)(d) && d.status?.taskManager?.replicas === 1, 'ncrash STABLE on generation 2', 20_000);
  const lineage = h.world.simulation.lineage('default', 'ncrash');
  assert.equal(lineage.savepoints.filter((s) => s.kind === 'stop-with-savepoint').length, 1, 'one upgrade savepoint');
  assert.equal(lineage.submissions.length, 2, 'one new submission');
  assert.equal(new Set(lineage.submissions.map((s) => s.jobId)).size, 2, 'no job id submitted twice');
  assert.equal(upgraded.status?.jobStatus?.jobId, jobIdToSubmit(intent), 'the job id pinned before the stop is the one submitted');
  assert.equal(lineage.submissions.at(-1)!.restoredFrom, lineage.savepoints.find((s) => s.kind === 'stop-with-savepoint')!.location);
  const newJm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'ncrash' });
  assert.notEqual(newJm.metadata?.uid, oldJm.metadata?.uid);
  const pods = await taskManagerPods('ncrash');
  assert.deepEqual(
    pods.map((p) => p.metadata?.ownerReferences?.[0]?.uid),
    [newJm.metadata?.uid],
  );
});
