/**
 * The recovery rules of design/004-sync-protocol.md on the development cluster, with the real
 * clients, the real informer and the real kubectl (as a user would touch the objects).
 */
import { reconciliationStateOfPhase } from '../../../src/api/deployment-phase.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap, type V1Deployment } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../../../src/api/flink-deployment.js';
import type { FlinkDeploymentStatusV1 } from '../../../src/api/flink-deployment-status.js';
import type { InternalState } from '../../../src/api/internal-state.js';
import { startDevCluster, type DevCluster } from '../../../src/devcluster/dev-cluster.js';
import { KubeConfigMapClient } from '../../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient } from '../../../src/kube/flink-deployment-client.js';
import type { ObjectEvent } from '../../../src/kube/object-reader.js';
import { ApiClientFactory } from '../../../src/runtime/api-client-factory.js';
import { Informer } from '../../../src/runtime/informer.js';
import { OwnWriteTracker } from '../../../src/runtime/own-write-tracker.js';
import { configMaps } from '../../../src/runtime/watched-resources.js';
import { ConfigMapStateStore } from '../../../src/state/configmap-state-store.js';
import { STATE_CONFIGMAP_SELECTOR } from '../../../src/state/state-configmap-codec.js';
import { CorruptStateError, ForeignStateError } from '../../../src/state/state-errors.js';
import { rebuildStateFromWorld } from '../../../src/state/state-rebuild.js';
import { specHash } from '../../../src/flink/deployed-record.js';
import { buildFlinkClusterResources } from '../../../src/flink/flink-cluster-resources.js';
import { StatusRecorder } from '../../../src/state/status-recorder.js';
import { KubectlRunner } from '../devcluster/kubectl-runner.js';
import { createFlinkDeployment, createNamespace, installFlinkCrd } from './state-cluster-fixture.js';

const TOKEN = { holderIdentity: 'operator-0', leaseTransitions: 0 };

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const deployed =
  (deployment: FlinkDeploymentV1) =>
  (s: InternalState): InternalState => ({
    ...s,
    phase: 'RUNNING',
    firstDeployment: false,
    lastReconciledSpec: deployment.spec,
    lastReconciledGeneration: deployment.metadata.generation,
    deployedJobId: 'b'.repeat(32),
  });

/** The JobManager Deployment and Flink ConfigMap exactly as `deploy` renders them for the deployment's spec and job 'b'×32. */
function renderedCluster(deployment: FlinkDeploymentV1): { jobManager: V1Deployment; configMap: V1ConfigMap } {
  const objects = buildFlinkClusterResources(deployment, {
    spec: deployment.spec,
    generation: deployment.metadata.generation ?? 1,
    specHash: specHash(deployment.spec),
    jobId: 'b'.repeat(32),
  });
  return { jobManager: objects.jobManagerDeployment, configMap: objects.configMap };
}

describe('state recovery rules on the development cluster', () => {
  let cluster: DevCluster;
  let kc: KubeConfig;
  let kubectl: KubectlRunner;
  let informer: Informer<V1ConfigMap>;
  let tracker: OwnWriteTracker;
  let store: ConfigMapStateStore;
  const echoes: { type: string; rv: string | undefined; echo: boolean; value: string | undefined }[] = [];

  before(async () => {
    cluster = await startDevCluster();
    kc = cluster.kubeConfig();
    await installFlinkCrd(kc);
    kubectl = new KubectlRunner(cluster.kubeconfigYaml());
    informer = new Informer<V1ConfigMap>({
      kubeConfig: kc,
      resource: configMaps(new ApiClientFactory(kc)),
      labelSelector: STATE_CONFIGMAP_SELECTOR,
      minDelayMs: 20,
      maxDelayMs: 200,
    });
    tracker = new OwnWriteTracker();
    informer.subscribe((event: ObjectEvent<V1ConfigMap>) => {
      if (event.type === 'relisted') return;
      echoes.push({
        type: event.type,
        rv: event.object.metadata?.resourceVersion,
        echo: tracker.isOwnEcho('ConfigMap', event.type, event.object),
        value: event.object.data?.deployedJobId,
      });
    });
    informer.start();
    assert.equal(await informer.waitForSync(5000), true);
    store = new ConfigMapStateStore({ client: new KubeConfigMapClient(kc), fencingToken: () => TOKEN, informer, writeTracker: tracker, retryDelayMs: 1 });
  });

  after(async () => {
    store.close();
    await informer.stop();
    kubectl.cleanup();
    await cluster.stop();
  });

  it('periodic loads of an unchanged deployment cost 0 requests; our writes are echoes, a kubectl edit is not and is seen', async () => {
    await createNamespace(kc, 'periodic');
    const deployment = await createFlinkDeployment(kc, 'periodic', 'app');
    await store.update(deployment, deployed(deployment));
    await waitUntil(() => informer.get('periodic', 'app-operator-state') !== undefined, 'the informer to see the ConfigMap');
    cluster.requestLog.reset();
    for (let i = 0; i < 10; i++) {
      const loaded = await store.load(deployment);
      assert.ok(loaded.kind === 'found' && loaded.state.revision === 1);
      await store.update(deployment, deployed(deployment)); // a reconcile that decides nothing new
    }
    assert.equal(
      cluster.requestLog.count({ resource: 'configmaps', excludeUserAgentPrefix: 'kubectl' }) -
        cluster.requestLog.count({ resource: 'configmaps', verb: 'watch' }),
      0,
      'no GET, no write',
    );
    assert.ok(echoes.length >= 1 && echoes.every((e) => e.echo), 'our own write came back as an echo');

    // the user edits the ConfigMap with kubectl: not an echo, and the next load sees it
    await kubectl.ok([
      '-n',
      'periodic',
      'patch',
      'configmap',
      'app-operator-state',
      '--type',
      'merge',
      '-p',
      '{"data":{"deployedJobId":"cccccccccccccccccccccccccccccccc"}}',
    ]);
    await waitUntil(() => echoes.some((e) => e.value === 'c'.repeat(32)), 'the user edit event');
    assert.equal(echoes.find((e) => e.value === 'c'.repeat(32))!.echo, false, 'a user edit triggers a reconcile');
    const loaded = await store.load(deployment);
    assert.ok(loaded.kind === 'found' && loaded.state.deployedJobId === 'c'.repeat(32));

    // readable with kubectl: the spec is a YAML block, not an escaped JSON line
    const yaml = await kubectl.ok(['-n', 'periodic', 'get', 'configmap', 'app-operator-state', '-o', 'yaml']);
    assert.match(yaml, /lastReconciledSpec: \|/);
    assert.match(yaml, /^ {4}image: flink:1\.20$/m);
    assert.match(yaml, /flink-operator\.io\/written-by: flink-operator\//);
  });

  it('ConfigMap deleted by a user: missing, rebuilt from the JobManager Deployment, revision continues; GC deletes it with the deployment', async () => {
    await createNamespace(kc, 'deleted');
    let deployment = await createFlinkDeployment(kc, 'deleted', 'app');
    const state = await store.update(deployment, deployed(deployment));
    const recorder = new StatusRecorder({ client: new KubeFlinkDeploymentClient(kc) });
    deployment = await recorder.record(deployment, { lifecycleState: 'STABLE', stateRef: { configMapName: 'app-operator-state', revision: state.revision } });
    const rendered = renderedCluster(deployment);
    await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: 'deleted', body: rendered.jobManager });
    await kc.makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'deleted', body: rendered.configMap });

    await kubectl.ok(['-n', 'deleted', 'delete', 'configmap', 'app-operator-state']);
    await waitUntil(() => informer.get('deleted', 'app-operator-state') === undefined, 'the informer to see the delete');
    assert.deepEqual(await store.load(deployment), { kind: 'missing' });

    const jm = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: 'deleted', name: 'app' });
    const flinkConfigMap = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: 'deleted', name: 'flink-config-app' });
    const rebuilt = rebuildStateFromWorld(deployment, { jobManagerDeployment: jm, flinkConfigMap });
    assert.equal(rebuilt.specConfirmed, true);
    const written = await store.update(deployment, () => rebuilt.state);
    assert.equal(written.revision, state.revision + 1, 'revision continues after the status stateRef');
    assert.deepEqual(written.lastReconciledSpec, deployment.spec);
    assert.equal(reconciliationStateOfPhase(written.phase), 'DEPLOYED');
    assert.equal(written.deployedJobId, 'b'.repeat(32), 'the job id pinned in the rendered cluster');

    // deleting the deployment deletes its state (ownerReference, garbage collector)
    await kc
      .makeApiClient(CustomObjectsApi)
      .deleteNamespacedCustomObject({ group: 'flink.apache.org', version: 'v1', namespace: 'deleted', plural: 'flinkdeployments', name: 'app' });
    await cluster.settled();
    assert.equal(await new KubeConfigMapClient(kc).get('deleted', 'app-operator-state'), undefined);
  });

  it('a ConfigMap of that name not owned by the deployment is never read nor overwritten', async () => {
    await createNamespace(kc, 'foreign');
    const deployment = await createFlinkDeployment(kc, 'foreign', 'app');
    await kubectl.ok(
      ['-n', 'foreign', 'apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-operator-state' }, data: { owner: 'someone else' } }),
    );
    cluster.requestLog.reset();
    // a brand-new deployment (no status): the synced informer's "not there" is trusted, and the first
    // write finds the foreign object (its create answers 409 AlreadyExists, the GET shows the owner)
    assert.deepEqual(await store.load(deployment), { kind: 'missing' });
    await assert.rejects(store.update(deployment, deployed(deployment)), /not owned by FlinkDeployment app.*will not read or overwrite it/);
    // once anything was recorded for it (a status), the load itself refuses
    await assert.rejects(store.load({ ...deployment, status: { lifecycleState: 'UPGRADING' } }), ForeignStateError);
    const landed = cluster.requestLog.entries({ namespace: 'foreign' }).filter((e) => ['create', 'update', 'patch', 'delete'].includes(e.verb) && e.code < 400);
    assert.deepEqual(landed, [], 'no write landed');
    const cm = await new KubeConfigMapClient(kc).get('foreign', 'app-operator-state');
    assert.deepEqual(cm?.data, { owner: 'someone else' });
  });

  it('a ConfigMap hand-edited into an invalid shape: error naming the key, no overwrite until the user fixes it', async () => {
    await createNamespace(kc, 'corrupt');
    const deployment = await createFlinkDeployment(kc, 'corrupt', 'app');
    await store.update(deployment, deployed(deployment));
    await kubectl.ok(['-n', 'corrupt', 'patch', 'configmap', 'app-operator-state', '--type', 'merge', '-p', '{"data":{"phase":"BOGUS"}}']);
    await waitUntil(() => informer.get('corrupt', 'app-operator-state')?.data?.phase === 'BOGUS', 'the informer to see the edit');
    cluster.requestLog.reset();
    await assert.rejects(store.load(deployment), (error: unknown) => error instanceof CorruptStateError && error.key === 'phase');
    await assert.rejects(
      store.update(deployment, (s) => ({ ...s, deployedJobId: 'd'.repeat(32) })),
      /phase.*fix or delete the ConfigMap/,
    );
    assert.equal(cluster.requestLog.entries({ namespace: 'corrupt', resource: 'configmaps' }).filter((e) => e.verb === 'update').length, 0, 'not overwritten');
    await kubectl.ok(['-n', 'corrupt', 'patch', 'configmap', 'app-operator-state', '--type', 'merge', '-p', '{"data":{"phase":"RUNNING"}}']);
    const fixed = await store.update(deployment, (s) => ({ ...s, deployedJobId: 'd'.repeat(32) }));
    assert.equal(fixed.deployedJobId, 'd'.repeat(32));
  });

  it('a status edited by someone else is rewritten from state on the next reconcile; a stale base is caught by the guard', async () => {
    await createNamespace(kc, 'status');
    const created = await createFlinkDeployment(kc, 'status', 'app');
    const client = new KubeFlinkDeploymentClient(kc);
    const recorder = new StatusRecorder({ client });
    const desired: FlinkDeploymentStatusV1 = {
      lifecycleState: 'STABLE',
      jobManagerDeploymentStatus: 'READY',
      stateRef: { configMapName: 'app-operator-state', revision: 3 },
    };
    await recorder.record(created, desired);
    await kubectl.ok([
      '-n',
      'status',
      'patch',
      'flinkdeployment',
      'app',
      '--subresource',
      'status',
      '--type',
      'merge',
      '-p',
      '{"status":{"lifecycleState":"FAILED","error":"edited by hand"}}',
    ]);
    const edited = (await client.get('status', 'app'))!; // what the informer delivers; its event triggers the reconcile
    assert.equal(edited.status?.lifecycleState, 'FAILED');
    cluster.requestLog.reset();
    const restored = await recorder.record(edited, desired);
    assert.equal(restored.status?.lifecycleState, 'STABLE');
    assert.equal(restored.status?.error, undefined);
    const calls = () => cluster.requestLog.entries({ namespace: 'status', resource: 'flinkdeployments' }).map((e) => `${e.verb} ${e.code}`);
    assert.deepEqual(calls(), ['patch 200'], 'one patch, no crash');
    await recorder.record(restored, desired);
    assert.deepEqual(calls(), ['patch 200'], 'nothing while it stays equal');

    // someone edits again; the reconciler has not seen it yet and records a new status on its stale copy:
    // the resourceVersion test fails on the server (422), the recorder re-reads and sends one corrected patch
    await kubectl.ok(['-n', 'status', 'patch', 'flinkdeployment', 'app', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"error":"again"}}']);
    cluster.requestLog.reset();
    const next = await recorder.record(restored, { ...desired, stateRef: { configMapName: 'app-operator-state', revision: 4 } });
    assert.deepEqual(calls(), ['patch 422', 'get 200', 'patch 200']);
    assert.equal(next.status?.stateRef?.revision, 4);
    assert.equal(next.status?.error, undefined, 'the foreign edit is replaced, not merged');
  });
});
