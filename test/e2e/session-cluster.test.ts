/**
 * End-to-end: a session cluster (a FlinkDeployment without `job`) on the development cluster, in
 * standalone and native mode. It deploys (DEPLOYING → DEPLOYED → RUNNING), reaches STABLE with
 * `Ready` True once the JobManager is ready and Flink's REST API answers, shows no `jobStatus`
 * (the Apache operator's FlinkDeploymentStatus of a session cluster: `jobManagerDeploymentStatus:
 * READY`, lifecycle STABLE, no job — flink-kubernetes-operator docs "Session cluster deployments"
 * and SessionReconciler), is redeployed on an image change without a savepoint, and deletion
 * removes every resource without a cancel (it has no job of its own).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
// native TaskManager pods are not watched: passes come often so their count reaches the status
before(async () => {
  h = await startHarness({ operator: { reconcileIntervalMs: 500 } });
});
after(async () => {
  await h?.stop();
});

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' &&
  d.status?.observedGeneration === generation &&
  d.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

async function exists(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return false;
    throw error;
  }
}

for (const mode of ['standalone', 'native'] as const) {
  test(`session cluster (${mode}): STABLE without a job, an image change redeploys it, deletion removes everything`, async () => {
    const name = `session-${mode}`;
    await h.create(flinkDeployment(name).withoutJob().withSpec({ mode }).build());
    const first = await h.waitFor(name, stable(1), `${name} STABLE`);

    // What a user sees: a ready cluster, no job (Apache: jobStatus stays empty for session clusters).
    assert.equal(first.status?.jobManagerDeploymentStatus, 'READY');
    assert.equal(first.status?.jobStatus, undefined, 'a session cluster has no jobStatus');
    const ready = first.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'ClusterReady');
    assert.equal(ready?.observedGeneration, 1);
    assert.equal(first.status?.error, undefined);

    // The JobManager runs the session entrypoint (Flink docker-entrypoint.sh `jobmanager`; native: kubernetes-session).
    const jm = await h.apps.readNamespacedDeployment({ namespace: 'default', name });
    const main = jm.spec?.template.spec?.containers.find((c) => c.name === 'flink-main-container');
    const command = [...(main?.command ?? []), ...(main?.args ?? [])].join(' ');
    assert.match(command, mode === 'native' ? /kubernetes-session/ : /jobmanager/);
    assert.doesNotMatch(command, /standalone-job|kubernetes-application/);
    assert.equal(await exists(() => h.apps.readNamespacedDeployment({ namespace: 'default', name: `${name}-taskmanager` })), mode === 'standalone');

    // The state ConfigMap: RUNNING, the spec without job recorded, no restore path, nothing pending.
    const cm = (await h.stateConfigMap(name))!;
    assert.equal(cm.data?.phase, 'RUNNING');
    const reconciled = parseYaml(cm.data.lastReconciledSpec) as Record<string, unknown>;
    assert.equal(reconciled.job, undefined);
    assert.equal(cm.data?.upgradeSavepointPath, undefined);
    assert.equal(cm.data?.pendingOperation, undefined);
    assert.equal(cm.data?.pendingSavepoint, undefined);
    // The Flink configuration fixes no job id: jobs submitted to a session cluster choose their own.
    const flinkConfig = await h.core.readNamespacedConfigMap({ namespace: 'default', name: `flink-config-${name}` });
    assert.doesNotMatch(JSON.stringify(flinkConfig.data ?? {}), /\$internal\.pipeline\.job-id/);

    // An image change redeploys the cluster (no savepoint: it has no job of its own).
    await h.patch(name, { spec: { image: 'flink:1.20.1' } });
    const second = await h.waitFor(name, stable(2), `${name} STABLE again on generation 2`);
    assert.equal(second.status?.jobStatus, undefined);
    const jm2 = await h.apps.readNamespacedDeployment({ namespace: 'default', name });
    assert.equal(jm2.spec?.template.spec?.containers.find((c) => c.name === 'flink-main-container')?.image, 'flink:1.20.1');
    const cm2 = (await h.stateConfigMap(name))!;
    assert.equal(cm2.data?.phase, 'RUNNING');
    assert.deepEqual(parseYaml(cm2.data?.savepointHistory ?? '[]'), [], 'no savepoint taken');
    assert.notEqual(
      jm2.metadata?.annotations?.['flink-operator.io/job-id'],
      jm.metadata?.annotations?.['flink-operator.io/job-id'],
      'a new deployment of the cluster (its deployment token on the JobManager Deployment)',
    );
    const events = await h.events(name);
    // Repeated events are one Event with a count (client-go tools/record EventCorrelator).
    const submits = events.filter((e) => e.reason === 'Submit' && e.message === 'Deploying the session cluster');
    assert.equal(
      submits.reduce((n, e) => n + (e.count ?? 1), 0),
      2,
      'a Submit event per deployment',
    );
    assert.equal(
      events.some((e) => e.reason === 'Savepoint' || /savepoint/i.test(e.message ?? '')),
      false,
      'no savepoint for a session cluster',
    );

    // Deletion: the cluster goes (no cancel: the cluster runs no job of its own), then the resource.
    await h.delete(name);
    await h.waitUntil(async () => (await h.get(name)) === undefined, `${name} deleted`);
    assert.equal(await exists(() => h.apps.readNamespacedDeployment({ namespace: 'default', name })), false);
    assert.equal(await exists(() => h.apps.readNamespacedDeployment({ namespace: 'default', name: `${name}-taskmanager` })), false);
    await h.waitUntil(async () => (await h.stateConfigMap(name)) === undefined, 'state ConfigMap garbage-collected');
    await h.waitUntil(async () => (await h.core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items.length === 0, 'all pods gone');
    assert.equal(
      (await h.events(name)).some((e) => /cancelled/.test(e.message ?? '')),
      false,
    );
  });
}
