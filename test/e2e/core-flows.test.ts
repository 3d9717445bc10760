/**
 * End-to-end flows of the core reconciler (issue 7) on the development cluster with simulated
 * kubelet and Flink: what a user sees in the status, the state ConfigMap, the rendered
 * Deployments, the events, and what the simulated Flink says happened (lineage).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

async function jobManagerArgs(name: string): Promise<string[]> {
  const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name });
  return jm.spec?.template.spec?.containers.find((c) => c.name === 'flink-main-container')?.args ?? [];
}

async function eventReasons(name: string): Promise<string[]> {
  return (await h.events(name)).map((e) => e.reason ?? '');
}

test('a new FlinkDeployment is deployed and becomes STABLE, with its state in a readable ConfigMap', async () => {
  await h.create(
    flinkDeployment('first')
      .withSpec({ job: { upgradeMode: 'savepoint' } })
      .build(),
  );
  const d = await h.waitFor('first', stable(1), 'first to be STABLE');

  assert.equal(d.status?.jobManagerDeploymentStatus, 'READY');
  assert.match(d.status?.jobStatus?.jobId ?? '', /^[0-9a-f]{32}$/);
  assert.equal(d.status?.error, undefined);
  assert.deepEqual(d.metadata.finalizers, ['flinkdeployments.flink.apache.org/finalizer']);
  const ready = d.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'True');

  const cm = await h.stateConfigMap('first');
  assert.ok(cm, 'state ConfigMap exists');
  assert.equal(cm.data?.phase, 'RUNNING');
  assert.equal(d.status?.stateRef?.configMapName, 'first-operator-state');
  assert.equal(String(d.status?.stateRef?.revision), cm.data?.revision, 'the status reflects the latest state revision');
  assert.ok(cm.data?.lastReconciledSpec?.includes('\n'), 'lastReconciledSpec is multi-line YAML, not an escaped string');
  const reconciled = parseYaml(cm.data.lastReconciledSpec) as { job: { parallelism: number } };
  assert.equal(reconciled.job.parallelism, 2);
  assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, d.metadata.uid);

  const args = await jobManagerArgs('first');
  assert.equal(args[0], 'standalone-job');
  assert.ok(args.includes('--job-classname'));
  assert.ok(!args.includes('--fromSavepoint'), 'a first deployment without initialSavepointPath starts without state');

  const lineage = h.world.simulation.lineage('default', 'first');
  assert.equal(lineage.submissions.length, 1);
  assert.equal(lineage.submissions[0].jobId, d.status?.jobStatus?.jobId);
  assert.equal(lineage.submissions[0].restoredFrom, null);
  assert.ok((await eventReasons('first')).includes('Submit'));
});

test('a savepoint upgrade stops the job with one savepoint and restores the new job from it', async () => {
  await h.create(
    flinkDeployment('sp')
      .withSpec({ job: { upgradeMode: 'savepoint' } })
      .build(),
  );
  const before = await h.waitFor('sp', stable(1), 'sp to be STABLE');
  await h.patch('sp', { spec: { image: 'flink:1.20.1' } });
  const after = await h.waitFor('sp', stable(2), 'sp to be STABLE on generation 2');

  const lineage = h.world.simulation.lineage('default', 'sp');
  assert.equal(lineage.savepoints.length, 1, 'exactly one savepoint for the upgrade');
  const savepoint = lineage.savepoints[0];
  assert.equal(savepoint.kind, 'stop-with-savepoint');
  assert.equal(savepoint.jobId, before.status?.jobStatus?.jobId);
  assert.equal(lineage.submissions.length, 2);
  assert.notEqual(lineage.submissions[1].jobId, lineage.submissions[0].jobId);
  assert.equal(lineage.submissions[1].restoredFrom, savepoint.location);
  assert.equal(after.status?.jobStatus?.jobId, lineage.submissions[1].jobId);
  assert.equal(after.status?.jobStatus?.lastSavepoint?.location, savepoint.location);
  assert.equal(after.status?.jobStatus?.lastSavepoint?.triggerType, 'UPGRADE');

  const args = await jobManagerArgs('sp');
  assert.equal(args[args.indexOf('--fromSavepoint') + 1], savepoint.location);
  const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'sp' });
  assert.equal(jm.spec?.template.spec?.containers[0]?.image, 'flink:1.20.1');
  assert.equal(jm.metadata?.annotations?.['flinkdeployment.flink.apache.org/generation'], '2');

  const cm = await h.stateConfigMap('sp');
  const history = parseYaml(cm!.data!.savepointHistory) as Array<{ location: string }>;
  assert.deepEqual(
    history.map((s) => s.location),
    [savepoint.location],
  );
  assert.equal(cm!.data!.phase, 'RUNNING');
  assert.equal(cm!.data!.pendingOperation, undefined, 'nothing left pending');
  const reasons = await eventReasons('sp');
  assert.ok(reasons.includes('SpecChanged'), reasons.join(','));
});

test('a stateless upgrade redeploys without a savepoint', async () => {
  await h.create(
    flinkDeployment('sl')
      .withSpec({ job: { upgradeMode: 'stateless' } })
      .build(),
  );
  await h.waitFor('sl', stable(1), 'sl to be STABLE');
  await h.patch('sl', { spec: { job: { args: ['--rate', '10'] } } });
  await h.waitFor('sl', stable(2), 'sl to be STABLE on generation 2');
  const lineage = h.world.simulation.lineage('default', 'sl');
  assert.equal(lineage.savepoints.length, 0);
  assert.equal(lineage.submissions.length, 2);
  assert.equal(lineage.submissions[1].restoredFrom, null);
  const args = await jobManagerArgs('sl');
  assert.deepEqual(args.slice(-2), ['--rate', '10']);
});

test('suspend takes a savepoint and removes the cluster; resume restores from that savepoint', async () => {
  await h.create(
    flinkDeployment('sus')
      .withSpec({ job: { upgradeMode: 'savepoint' } })
      .build(),
  );
  await h.waitFor('sus', stable(1), 'sus to be STABLE');
  await h.patch('sus', { spec: { job: { state: 'suspended' } } });
  const suspended = await h.waitFor('sus', (d) => d.status?.lifecycleState === 'SUSPENDED' && d.status?.observedGeneration === 2, 'sus to be SUSPENDED');
  assert.equal(suspended.status?.jobStatus?.state, 'SUSPENDED');
  await h.waitUntil(
    async () => (await h.apps.listNamespacedDeployment({ namespace: 'default', labelSelector: 'app=sus' })).items.length === 0,
    'the JobManager and TaskManager Deployments to be deleted',
  );
  const savepoint = h.world.simulation.lineage('default', 'sus').savepoints[0];
  assert.equal(savepoint?.status, 'COMPLETED');
  assert.equal(suspended.status?.jobStatus?.lastSavepoint?.location, savepoint?.location);

  await h.patch('sus', { spec: { job: { state: 'running' } } });
  await h.waitFor('sus', stable(3), 'sus to run again');
  const lineage = h.world.simulation.lineage('default', 'sus');
  assert.equal(lineage.savepoints.length, 1, 'resume takes no further savepoint');
  assert.equal(lineage.submissions.length, 2);
  assert.equal(lineage.submissions[1].restoredFrom, savepoint?.location);
});

test('an invalid spec change is reported and the running job is left alone', async () => {
  await h.create(flinkDeployment('typo').build());
  const running = await h.waitFor('typo', stable(1), 'typo to be STABLE');
  // refused by the CRD's CEL rule at the API server, with the operator's words (design/014)
  await assert.rejects(h.patch('typo', { spec: { job: { parallelism: 0 } } }), (e: Error) =>
    /must be at least 1, got 0; set it to 1 or more/.test(JSON.stringify((e as { body?: unknown }).body) + e.message),
  );
  // one only the operator can see (it reads flinkConfiguration): accepted, reported in status
  await h.patch('typo', { spec: { job: { upgradeMode: 'last-state' } } });
  const reported = await h.waitFor(
    'typo',
    (d) => (d.status?.error ?? '').includes('spec.job.upgradeMode: last-state needs Flink high availability'),
    'the validation error in status',
  );
  assert.equal(reported.status?.lifecycleState, 'STABLE', 'the last valid spec keeps running');
  assert.equal(reported.status?.observedGeneration, 1, 'the invalid generation is not marked as reconciled');
  assert.equal(reported.status?.jobStatus?.jobId, running.status?.jobStatus?.jobId);
  assert.equal(h.world.simulation.lineage('default', 'typo').submissions.length, 1, 'no redeploy');
  assert.ok((await eventReasons('typo')).includes('ValidationError'));

  await h.patch('typo', { spec: { job: { upgradeMode: 'savepoint', parallelism: 3 } } });
  const fixed = await h.waitFor('typo', stable(3), 'typo to be STABLE after the fix');
  assert.equal(fixed.status?.error, undefined);
});

test('an unparsable operator setting is a validation error, not a failing reconcile', async () => {
  await h.create(flinkDeployment('badsetting').build());
  await h.waitFor('badsetting', stable(1), 'badsetting STABLE');
  await h.patch('badsetting', { spec: { flinkConfiguration: { 'kubernetes.operator.periodic.savepoint.interval': 'every now and then' } } });
  const d = await h.waitFor('badsetting', (x) => (x.status?.error ?? '').includes('periodic.savepoint.interval'), 'the validation error in status');
  assert.equal(d.status?.lifecycleState, 'STABLE', 'the last valid spec keeps running');
  assert.ok((await eventReasons('badsetting')).includes('ValidationError'));
});

test('a JobManager that cannot start is reported as ERROR with the pod reason', async () => {
  await h.create(
    flinkDeployment('broken')
      .withSpec({ image: 'flink:crashloop', job: { upgradeMode: 'stateless' } })
      .build(),
  );
  const d = await h.waitFor('broken', (x) => x.status?.jobManagerDeploymentStatus === 'ERROR', 'the JobManager to be in ERROR');
  assert.match(d.status?.error ?? '', /CrashLoopBackOff/);
  assert.equal(d.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
});

test('deleting a FlinkDeployment removes its cluster, its state, and then the object', async () => {
  await h.create(flinkDeployment('gone').build());
  await h.waitFor('gone', stable(1), 'gone to be STABLE');
  await h.delete('gone');
  await h.waitUntil(async () => ((await h.get('gone')) === undefined ? true : undefined), 'the FlinkDeployment to disappear');
  const left = await h.apps.listNamespacedDeployment({ namespace: 'default', labelSelector: 'app=gone' });
  assert.equal(left.items.length, 0);
  await h.waitUntil(async () => ((await h.stateConfigMap('gone')) === undefined ? true : undefined), 'the state ConfigMap to be garbage-collected');
  const services = await h.core.listNamespacedService({ namespace: 'default', labelSelector: 'app=gone' });
  assert.equal(services.items.length, 0);
});

test('a deleted state ConfigMap is rebuilt from the running deployment without a redeploy', async () => {
  await h.create(flinkDeployment('rebuild').build());
  const running = await h.waitFor('rebuild', stable(1), 'rebuild STABLE');
  await h.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'rebuild-operator-state' });
  await h.waitUntil(async () => ((await eventReasons('rebuild')).includes('StateRebuilt') ? true : undefined), 'a StateRebuilt event');
  const cm = await h.waitUntil(() => h.stateConfigMap('rebuild'), 'the rebuilt ConfigMap');
  // Rebuilt as DEPLOYED; the next pass sees the job run and promotes it to RUNNING.
  assert.ok(['DEPLOYED', 'RUNNING'].includes(cm.data!.phase), `phase ${cm.data?.phase}`);
  assert.equal(cm.data?.deployedJobId, running.status?.jobStatus?.jobId);
  const rebuiltRevision = Number(cm.data?.revision);
  const after = await h.waitFor(
    'rebuild',
    (d) => stable(1)(d) && Number(d.status?.stateRef?.revision) >= rebuiltRevision,
    'the status to follow the rebuilt state',
  );
  assert.equal(after.status?.jobStatus?.jobId, running.status?.jobStatus?.jobId);
  assert.equal(h.world.simulation.lineage('default', 'rebuild').submissions.length, 1, 'no redeploy');
});

test('a state ConfigMap owned by someone else is never overwritten; the error is in status', async () => {
  await h.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'taken-operator-state' }, data: { mine: 'yes' } } });
  await h.create(flinkDeployment('taken').build());
  const d = await h.waitFor('taken', (x) => (x.status?.error ?? '').includes('not owned by FlinkDeployment'), 'the ownership error');
  assert.match(d.status!.error!, /rename or delete it/);
  const cm = await h.stateConfigMap('taken');
  assert.deepEqual(cm?.data, { mine: 'yes' }, 'untouched');
  assert.equal(h.world.simulation.lineage('default', 'taken').submissions.length, 0, 'nothing deployed without state');
  assert.ok((await eventReasons('taken')).includes('StateError'));
});

test('a hand-corrupted state ConfigMap stops the deployment with an error naming the key, until it is fixed', async () => {
  await h.create(flinkDeployment('corrupt').build());
  await h.waitFor('corrupt', stable(1), 'corrupt STABLE');
  const cm = (await h.stateConfigMap('corrupt'))!;
  const good = cm.data!.phase;
  await h.core.patchNamespacedConfigMap(
    { namespace: 'default', name: 'corrupt-operator-state', body: { data: { phase: 'SOMETHING' } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  const d = await h.waitFor('corrupt', (x) => (x.status?.error ?? '').includes('phase'), 'the corruption error');
  assert.match(d.status!.error!, /fix or delete the ConfigMap/);
  assert.equal((await h.stateConfigMap('corrupt'))!.data!.phase, 'SOMETHING', 'not overwritten');
  await h.core.patchNamespacedConfigMap(
    { namespace: 'default', name: 'corrupt-operator-state', body: { data: { phase: good } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await h.waitFor('corrupt', (x) => stable(1)(x) && x.status?.error === undefined, 'recovery once fixed');
  assert.equal(h.world.simulation.lineage('default', 'corrupt').submissions.length, 1);
});
