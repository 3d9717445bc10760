/**
 * The sync layer on the development cluster, through the real HTTP clients: a deployment's life
 * (deploy, savepoints, an upgrade) as a sequence of reconcile steps, each writing its state change
 * then its status. Run once cleanly and once with 20% of ConfigMap and status writes failing at
 * the server (409, 500, 503, connection reset); both must end in the same state and status, with
 * exactly one successful write per change and no request at all when nothing changes. The store and
 * the recorder read through their read-your-writes overlays over real informers, as in the operator.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { FlinkDeploymentStatusV1 } from '../../../src/api/flink-deployment-status.js';
import type { FlinkDeploymentV1 } from '../../../src/api/flink-deployment.js';
import type { InternalState } from '../../../src/api/internal-state.js';
import { startDevCluster, type DevCluster, type FaultFailure } from '../../../src/devcluster/dev-cluster.js';
import { isConflict, isInvalid, isTransient } from '../../../src/kube/api-errors.js';
import { KubeConfigMapClient } from '../../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient } from '../../../src/kube/flink-deployment-client.js';
import { ConfigMapStateStore } from '../../../src/state/configmap-state-store.js';
import { decodeStateConfigMap } from '../../../src/state/state-configmap-codec.js';
import { StateWriteRetriesExhaustedError } from '../../../src/state/state-errors.js';
import type { StateUpdateFunction } from '../../../src/state/state-store.js';
import type { ObservableObjectReader } from '../../../src/kube/object-reader.js';
import { ApiClientFactory } from '../../../src/runtime/api-client-factory.js';
import { Informer } from '../../../src/runtime/informer.js';
import { configMaps, flinkDeployments, type FlinkDeploymentObject } from '../../../src/runtime/watched-resources.js';
import { STATE_CONFIGMAP_SELECTOR } from '../../../src/state/state-configmap-codec.js';
import { StatusRecorder } from '../../../src/state/status-recorder.js';
import {
  CONFLICTS_AND_5XX,
  createFlinkDeployment,
  createNamespace,
  FlakyConfigMapClient,
  FlakyFlinkDeploymentClient,
  installFlinkCrd,
  seededRandom,
  WITH_RESETS,
  WriteFaults,
} from './state-cluster-fixture.js';

interface Step {
  readonly fn: StateUpdateFunction;
  readonly status: (state: InternalState) => FlinkDeploymentStatusV1;
}

function userStatus(state: InternalState, extra: Partial<FlinkDeploymentStatusV1>): FlinkDeploymentStatusV1 {
  return { observedGeneration: state.lastReconciledGeneration, stateRef: { configMapName: 'app-operator-state', revision: state.revision }, ...extra };
}

/** Idempotent step functions (they set fields; the history append checks for the entry first). */
function lifeOfADeployment(deployment: FlinkDeploymentV1): Step[] {
  const steps: Step[] = [
    {
      fn: (s) => ({
        ...s,
        phase: 'DEPLOYING',
        lastReconciledSpec: deployment.spec,
        lastReconciledGeneration: 1,
        firstDeployment: true,
        jobIdToSubmit: 'a'.repeat(32),
      }),
      status: (s) => userStatus(s, { lifecycleState: 'UPGRADING', jobManagerDeploymentStatus: 'DEPLOYING' }),
    },
    {
      fn: (s) => {
        const { jobIdToSubmit: _j, ...rest } = s;
        return { ...rest, phase: 'RUNNING', firstDeployment: false, deployedJobId: 'a'.repeat(32), lastStableSpec: deployment.spec, lastStableGeneration: 1 };
      },
      status: (s) => userStatus(s, { lifecycleState: 'STABLE', jobManagerDeploymentStatus: 'READY', jobStatus: { jobId: 'a'.repeat(32), state: 'RUNNING' } }),
    },
  ];
  for (let i = 1; i <= 4; i++) {
    const location = `file:///flink-data/savepoints/savepoint-${i}`;
    const pending = { kind: 'savepoint' as const, triggerType: 'PERIODIC' as const, jobId: 'a'.repeat(32), stopJob: false, requestedAt: 1000 * i };
    const running = (s: InternalState, last?: string) =>
      userStatus(s, {
        lifecycleState: 'STABLE',
        jobManagerDeploymentStatus: 'READY',
        jobStatus: { jobId: 'a'.repeat(32), state: 'RUNNING', ...(last ? { lastSavepoint: { location: last, timeStamp: 2000 * i } } : {}) },
      });
    const previous = i > 1 ? `file:///flink-data/savepoints/savepoint-${i - 1}` : undefined;
    steps.push(
      { fn: (s) => ({ ...s, pendingSavepoint: pending }), status: (s) => running(s, previous) },
      { fn: (s) => ({ ...s, pendingSavepoint: { ...pending, triggerId: `trigger-${i}` } }), status: (s) => running(s, previous) },
      {
        fn: (s) => {
          const { pendingSavepoint: _p, ...rest } = s;
          const known = s.savepointHistory.some((r) => r.location === location);
          return {
            ...rest,
            lastPeriodicSavepointTimestamp: 2000 * i,
            savepointHistory: known ? s.savepointHistory : [...s.savepointHistory, { location, timeStamp: 2000 * i, triggerType: 'PERIODIC' }],
          };
        },
        status: (s) => running(s, location),
      },
    );
  }
  return steps;
}

interface RunResult {
  state: InternalState;
  status: FlinkDeploymentStatusV1 | undefined;
  configMapWrites: number;
  statusWrites: number;
  failedWrites: number;
  tailRequests: number;
  changes: number;
}

async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the informers to catch up');
    await sleep(10);
  }
}

function retryable(error: unknown): boolean {
  return error instanceof StateWriteRetriesExhaustedError || isConflict(error) || isInvalid(error) || isTransient(error);
}

async function runLife(
  cluster: DevCluster,
  namespace: string,
  faultRate: number,
  seed: number,
  failures: readonly FaultFailure[] = CONFLICTS_AND_5XX,
): Promise<RunResult> {
  const kc = cluster.kubeConfig();
  await createNamespace(kc, namespace);
  let deployment = await createFlinkDeployment(kc, namespace, 'app');
  const faults = new WriteFaults(cluster, seededRandom(seed), faultRate, failures);
  // the informers the operator reads through (the overlays sit on top of them)
  const clients = new ApiClientFactory(kc);
  const informerOptions = { kubeConfig: kc, namespaces: [namespace], minDelayMs: 20, maxDelayMs: 200 };
  const stateInformer = new Informer<V1ConfigMap>({ ...informerOptions, resource: configMaps(clients), labelSelector: STATE_CONFIGMAP_SELECTOR });
  const deploymentInformer = new Informer<FlinkDeploymentObject>({ ...informerOptions, resource: flinkDeployments(clients) });
  stateInformer.start();
  deploymentInformer.start();
  assert.ok((await stateInformer.waitForSync(5000)) && (await deploymentInformer.waitForSync(5000)));
  const store = new ConfigMapStateStore({
    client: new FlakyConfigMapClient(new KubeConfigMapClient(kc), faults),
    fencingToken: () => ({ holderIdentity: 'operator-0', leaseTransitions: 0 }),
    informer: stateInformer,
    retryDelayMs: 1,
  });
  const recorder = new StatusRecorder({
    client: new FlakyFlinkDeploymentClient(new KubeFlinkDeploymentClient(kc), faults),
    informer: deploymentInformer as unknown as ObservableObjectReader<FlinkDeploymentV1>,
  });
  const steps = lifeOfADeployment(deployment);
  // the work queue's role: a failed reconcile step is retried (level-based, the step is idempotent)
  const reconcile = async (step: Step) => {
    for (let attempt = 1; ; attempt++) {
      try {
        // as the reconciler sees the deployment: the recorder's overlay over the informer
        deployment = recorder.overlay.get(namespace, 'app') ?? deployment;
        const state = await store.update(deployment, step.fn);
        deployment = await recorder.record(deployment, step.status(state));
        return;
      } catch (error) {
        if (!retryable(error) || attempt >= 30) throw error;
      }
    }
  };
  for (const step of steps) await reconcile(step);

  const writesOf = (filter: { verb: string; resource: string; subresource?: string }) =>
    cluster.requestLog.entries({ ...filter, namespace }).filter((e) => e.code >= 200 && e.code < 300).length;
  const configMapWrites = writesOf({ verb: 'create', resource: 'configmaps' }) + writesOf({ verb: 'update', resource: 'configmaps' });
  const statusWrites = writesOf({ verb: 'patch', resource: 'flinkdeployments', subresource: 'status' });
  const failedWrites = cluster.requestLog
    .entries({ namespace })
    .filter((e) => ['create', 'update', 'patch'].includes(e.verb) && (e.code < 200 || e.code >= 300)).length;

  // periodic reconciles of an unchanged deployment, once the informers have caught up: no request at all
  const written = (await new KubeConfigMapClient(kc).get(namespace, 'app-operator-state'))!;
  await waitUntil(() => stateInformer.get(namespace, 'app-operator-state')?.metadata?.resourceVersion === written.metadata?.resourceVersion);
  await waitUntil(() => deploymentInformer.get(namespace, 'app')?.metadata?.resourceVersion === deployment.metadata.resourceVersion);
  const requests = () => cluster.requestLog.entries({ namespace }).filter((e) => e.verb !== 'watch').length;
  const before = requests();
  for (let i = 0; i < 3; i++) await reconcile({ fn: (s) => s, status: steps.at(-1)!.status });
  for (let i = 0; i < 3; i++) await reconcile(steps.at(-1)!); // re-applying an idempotent step changes nothing either
  const tailRequests = requests() - before;
  store.close();
  recorder.close();
  await stateInformer.stop();
  await deploymentInformer.stop();

  const cm = await new KubeConfigMapClient(kc).get(namespace, 'app-operator-state');
  const fd = await new KubeFlinkDeploymentClient(kc).get(namespace, 'app');
  return { state: decodeStateConfigMap(cm!), status: fd?.status, configMapWrites, statusWrites, failedWrites, tailRequests, changes: steps.length };
}

test('20% failing ConfigMap and status writes: the same final state and status, one write per change, none when unchanged', async () => {
  const cluster = await startDevCluster();
  try {
    await installFlinkCrd(cluster.kubeConfig());
    const clean = await runLife(cluster, 'clean', 0, 1);
    const faulty = await runLife(cluster, 'faulty', 0.2, 20261130);
    const withResets = await runLife(cluster, 'resets', 0.2, 7, WITH_RESETS);

    assert.equal(clean.failedWrites, 0);
    assert.ok(faulty.failedWrites >= 5, `faults were injected and hit (${faulty.failedWrites} failed writes)`);

    assert.deepEqual(faulty.state, clean.state, 'same final internal state, revision included');
    assert.equal(clean.state.revision, clean.changes, 'one revision per change');
    assert.equal(clean.state.savepointHistory.length, 4);
    assert.equal(clean.state.pendingSavepoint, undefined);
    assert.deepEqual(faulty.status, clean.status, 'same final status');
    // dropped connections (write fate unknown to the client) as well: still the same end, and quiet when unchanged
    assert.deepEqual(withResets.state, clean.state);
    assert.deepEqual(withResets.status, clean.status);
    assert.equal(withResets.tailRequests, 0);
    assert.equal(clean.status?.stateRef?.revision, clean.state.revision, 'the status reflects the last state revision');

    for (const run of [clean, faulty]) {
      assert.equal(run.configMapWrites, run.changes, 'exactly one successful ConfigMap write per change');
      assert.equal(run.statusWrites, run.changes, 'exactly one successful status patch per change');
      assert.equal(run.tailRequests, 0, 'no request at all (no GET, no write) when nothing changed');
    }
  } finally {
    await cluster.stop();
  }
});
