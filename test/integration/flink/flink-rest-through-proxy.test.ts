/**
 * The Flink REST client, in apiserver-proxy mode, against a simulated JobManager on the development
 * cluster: the operator's rendered resources are created with client-node, the simulated kubelet
 * starts the JobManager, and every call goes client → API server service proxy → JobManager.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  loadYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { defaultSpec } from '../../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../../src/api/flink-deployment.js';
import { buildFlinkClusterResources } from '../../../src/flink/flink-cluster-resources.js';
import { flinkRestClientFor } from '../../../src/flink/flink-rest-access.js';
import type { FlinkRestClient } from '../../../src/flink/flink-rest-client.js';
import { FlinkRestError } from '../../../src/flink/flink-rest-error.js';
import type { SavepointStatus } from '../../../src/flink/flink-rest-types.js';
import { startSimulatedCluster } from '../../../src/devcluster/simulated-cluster.js';

const CRD_FILE = new URL('../../../crds/flinkdeployments.flink.apache.org.yaml', import.meta.url);
const JOB = '5eed0000000000000000000000000001';
const NAMESPACE = 'default';

async function eventually<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what} not reached within ${timeoutMs} ms${last ? `; last error: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`,
      );
    await sleep(20);
  }
}

async function installCrd(kc: KubeConfig): Promise<void> {
  // loadYaml maps JSON names (x-kubernetes-preserve-unknown-fields) to client-node's property
  // names; a plain YAML parse would make client-node's serializer drop them, and the API server
  // would then prune spec.flinkConfiguration and spec.podTemplate to {}.
  const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(CRD_FILE, 'utf8'));
  await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd });
  await eventually('CRD served', 5_000, async () => {
    await kc
      .makeApiClient(CustomObjectsApi)
      .listNamespacedCustomObject({ group: 'flink.apache.org', version: 'v1', namespace: NAMESPACE, plural: 'flinkdeployments' });
    return true;
  });
}

async function deployCluster(
  kc: KubeConfig,
  name: string,
  restore: { restoreFrom?: string; allowNonRestoredState?: boolean } = {},
): Promise<FlinkDeploymentV1> {
  const created = (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'flink.apache.org',
    version: 'v1',
    namespace: NAMESPACE,
    plural: 'flinkdeployments',
    body: { apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', metadata: { name, namespace: NAMESPACE }, spec: defaultSpec() },
  })) as FlinkDeploymentV1;
  assert.deepEqual(created.spec.flinkConfiguration, defaultSpec().flinkConfiguration, 'the API server pruned spec.flinkConfiguration');
  const r = buildFlinkClusterResources(created, {
    spec: created.spec,
    generation: created.metadata.generation ?? 1,
    specHash: 'test-hash',
    jobId: JOB,
    ...restore,
  });
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: r.configMap });
  await core.createNamespacedService({ namespace: NAMESPACE, body: r.restService });
  await core.createNamespacedService({ namespace: NAMESPACE, body: r.internalService });
  await apps.createNamespacedDeployment({ namespace: NAMESPACE, body: r.jobManagerDeployment });
  await apps.createNamespacedDeployment({ namespace: NAMESPACE, body: r.taskManagerDeployment! });
  return created;
}

async function completed(client: FlinkRestClient, triggerId: string): Promise<SavepointStatus> {
  return eventually('savepoint completion', 5_000, async () => {
    const status = await client.getSavepointStatus(JOB, triggerId);
    return status.status === 'COMPLETED' ? status : undefined;
  });
}

test('REST client through the API server proxy: jobs, savepoints, stop-with-savepoint, cancel, and lineage', async () => {
  const sim = await startSimulatedCluster({ simulation: { podReadyDelayMs: 10, jobStartDelayMs: 10, savepointDurationMs: 20 } });
  try {
    const kc = sim.cluster.kubeConfig();
    await installCrd(kc);

    const deployment = await deployCluster(kc, 'orders');
    const client = flinkRestClientFor(deployment, { mode: 'apiserver-proxy', kubeConfig: kc, timeouts: { requestMs: 2_000 }, retry: { getAttempts: 1 } });

    // Until the JobManager pod is ready, the proxy answers 503: an "unreachable" error, not a Flink answer.
    const job = await eventually('job RUNNING', 10_000, async () => (await client.listJobs()).find((j) => j.jid === JOB && j.state === 'RUNNING'));
    assert.equal(job.name, 'StateMachineExample');
    assert.equal((await client.getConfig())['flink-version'], '1.20.0');
    assert.equal((await client.getJob(JOB))?.state, 'RUNNING');
    assert.equal(await client.getJob('ffffffffffffffffffffffffffffffff'), undefined);

    const savepointTrigger = await client.triggerSavepoint(JOB, { targetDirectory: 'file:///flink-data/savepoints' });
    const savepoint = await completed(client, savepointTrigger);
    assert.ok('location' in savepoint, JSON.stringify(savepoint));
    assert.match(savepoint.location, /^file:\/flink-data\/savepoints\/savepoint-5eed00-[0-9a-f]{12}$/);
    assert.equal((await client.getCheckpoints(JOB)).latest.savepoint?.external_path, savepoint.location);

    const unknownTrigger = await client.getSavepointStatus(JOB, '0123456789abcdef0123456789abcdef').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(unknownTrigger instanceof FlinkRestError && unknownTrigger.isFlinkNotFound, String(unknownTrigger));

    const stopTrigger = await client.stopWithSavepoint(JOB, { targetDirectory: 'file:///flink-data/savepoints' });
    const stopped = await completed(client, stopTrigger);
    assert.ok('location' in stopped);
    assert.notEqual(stopped.location, savepoint.location);
    await eventually('job FINISHED', 5_000, async () => ((await client.getJob(JOB))?.state === 'FINISHED' ? true : undefined));
    assert.equal((await client.cancelJob(JOB)).outcome, 'already-terminal');

    const lineage = sim.simulation.lineage(NAMESPACE, 'orders');
    assert.deepEqual(
      lineage.submissions.map((s) => [s.jobId, s.restoredFrom]),
      [[JOB, null]],
    );
    assert.deepEqual(
      lineage.savepoints.map((s) => [s.triggerId, s.kind, s.location]),
      [
        [savepointTrigger, 'savepoint', savepoint.location],
        [stopTrigger, 'stop-with-savepoint', stopped.location],
      ],
    );
    assert.deepEqual(lineage.cancellations, []);

    // With the JobManager gone, the proxy cannot reach anything: a clear "unreachable" error.
    await kc.makeApiClient(AppsV1Api).deleteNamespacedDeployment({ name: 'orders', namespace: NAMESPACE });
    const gone = await eventually('JobManager unreachable', 10_000, async () =>
      client.listJobs().then(
        () => undefined,
        (e: unknown) => (e instanceof FlinkRestError && e.isUnreachable ? e : undefined),
      ),
    );
    assert.match(
      gone.message,
      /^Flink REST API of default\/orders unreachable via http:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/default\/services\/orders-rest:rest\/proxy\/jobs\/overview: .*is the JobManager running\?$/,
    );
  } finally {
    await sim.stop();
  }
});

test('a client-chosen trigger id makes a repeated savepoint trigger return the same savepoint; a restore is submitted from the exact path', async () => {
  const sim = await startSimulatedCluster({ simulation: { podReadyDelayMs: 10, jobStartDelayMs: 10, savepointDurationMs: 20 } });
  try {
    const kc = sim.cluster.kubeConfig();
    await installCrd(kc);
    const first = await deployCluster(kc, 'payments');
    const client = flinkRestClientFor(first, { mode: 'apiserver-proxy', kubeConfig: kc, timeouts: { requestMs: 2_000 }, retry: { getAttempts: 1 } });
    await eventually('job RUNNING', 10_000, async () => (await client.listJobs()).find((j) => j.jid === JOB && j.state === 'RUNNING'));

    // The operator stores its trigger id before calling; after a crash it may send the same trigger again.
    const triggerId = 'c0ffee00c0ffee00c0ffee00c0ffee00';
    assert.equal(await client.stopWithSavepoint(JOB, { triggerId }), triggerId);
    assert.equal(await client.stopWithSavepoint(JOB, { triggerId }), triggerId);
    const stopped = await completed(client, triggerId);
    assert.ok('location' in stopped);
    assert.equal(sim.simulation.lineage(NAMESPACE, 'payments').savepoints.length, 1);

    const restored = await deployCluster(kc, 'payments-restored', { restoreFrom: stopped.location, allowNonRestoredState: true });
    const restoredClient = flinkRestClientFor(restored, { mode: 'apiserver-proxy', kubeConfig: kc, timeouts: { requestMs: 2_000 }, retry: { getAttempts: 1 } });
    await eventually('restored job RUNNING', 10_000, async () => (await restoredClient.listJobs()).find((j) => j.jid === JOB && j.state === 'RUNNING'));
    assert.equal((await restoredClient.getCheckpoints(JOB)).latest.restored?.external_path, stopped.location);
    const lineage = sim.simulation.lineage(NAMESPACE, 'payments-restored');
    assert.deepEqual(
      lineage.submissions.map((s) => [s.jobId, s.restoredFrom, s.allowNonRestoredState]),
      [[JOB, stopped.location, true]],
    );
  } finally {
    await sim.stop();
  }
});
