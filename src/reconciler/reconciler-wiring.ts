/**
 * Builds the FlinkDeployment reconciler from what the controller runtime provides: the
 * read-your-writes overlays over the informers, the state store, the status recorder, the cluster
 * applier, the Flink REST clients and the event recorder.
 *
 * This is the only place that knows all the concrete classes; the reconciler itself sees the
 * narrow interfaces of reconciler-dependencies.ts.
 */
import { randomBytes } from 'node:crypto';
import { AppsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_FINALIZER, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { buildFlinkClusterResources } from '../flink/flink-cluster-resources.js';
import { flinkRestClientFor } from '../flink/flink-rest-access.js';
import { KubeConfigMapClient } from '../kube/configmap-client.js';
import { KubeFlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import type { ObservableObjectReader } from '../kube/object-reader.js';
import type { OperatorDependencies, ReconcilerFactory } from '../runtime/manager.js';
import type { Reconciler } from '../runtime/reconcile.js';
import { ConfigMapStateStore } from '../state/configmap-state-store.js';
import { migrateIfLegacy } from '../state/legacy-migration.js';
import { LegacyStatusStateStore } from '../state/legacy-status-state-store.js';
import type { StateStore } from '../state/state-store.js';
import { specHash } from '../state/state-rebuild.js';
import { StatusRecorder } from '../state/status-recorder.js';
import { FlinkClusterApplier } from './flink-cluster-applier.js';
import { FlinkDeploymentReconciler } from './flink-deployment-reconciler.js';
import type { FinalizerWriter, FlinkDeploymentReconcilerDependencies } from './reconciler-dependencies.js';

/** A random Flink job id: 32 lowercase hex characters, as Flink's JobID. */
export function randomJobId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Where the reconciler keeps its internal state.
 * - `configmap` (the product): the companion `<name>-operator-state` ConfigMap.
 * - `legacy-status`: the Apache operator's v1beta1 status layout (LegacyStatusStateStore), the
 *   seed's design. Only for the comparison benchmark (bench/): it GETs the object on every load and
 *   cannot express every intent (see legacy-status-state-store.ts); never use it in production.
 */
export type StateLayout = 'configmap' | 'legacy-status';

export interface FlinkDeploymentReconcilerOptions {
  /** Default `configmap`. */
  readonly stateLayout?: StateLayout;
}

/** The reconciler factory with `options`; `makeFlinkDeploymentReconcilerWith()` is `makeFlinkDeploymentReconciler`. */
export function makeFlinkDeploymentReconcilerWith(options: FlinkDeploymentReconcilerOptions = {}): ReconcilerFactory {
  return (runtime) => buildReconciler(runtime, options.stateLayout ?? 'configmap');
}

export const makeFlinkDeploymentReconciler: ReconcilerFactory = (runtime: OperatorDependencies): Reconciler => buildReconciler(runtime, 'configmap');

function buildReconciler(runtime: OperatorDependencies, stateLayout: StateLayout): Reconciler {
  const { config, readers, apiClients, writeTracker } = runtime;
  const flinkDeployments = readers.flinkDeployments as unknown as ObservableObjectReader<FlinkDeploymentV1>;
  const deploymentClient = new KubeFlinkDeploymentClient(runtime.kubeConfig);
  const configMapClient = new KubeConfigMapClient(runtime.kubeConfig);
  const recorder = new StatusRecorder({ client: deploymentClient, informer: flinkDeployments, writeTracker });
  const store: StateStore =
    stateLayout === 'legacy-status'
      ? new LegacyStatusStateStore({ client: deploymentClient, fencingToken: runtime.fencingToken })
      : new ConfigMapStateStore({
          client: configMapClient,
          fencingToken: runtime.fencingToken,
          informer: readers.stateConfigMaps,
          writeTracker,
          onHistoryTrimmed: (deployment, dropped) =>
            runtime.events.warning(deployment, 'SavepointHistoryTrimmed', `${dropped} oldest savepoint(s) dropped from the state history to stay under the ConfigMap size limit`),
        });
  const apps = apiClients.make(AppsV1Api);
  const core = apiClients.make(CoreV1Api);
  const applier = new FlinkClusterApplier(apps, core, readers.deployments, readers.services);

  const finalizers: FinalizerWriter = {
    async add(deployment) {
      const updated = structuredClone(deployment);
      updated.metadata.finalizers = [...(updated.metadata.finalizers ?? []), FLINK_DEPLOYMENT_FINALIZER];
      const written = await deploymentClient.update(updated);
      recorder.overlay.recordWrite(written);
      writeTracker.recordOwnWrite('FlinkDeployment', written.metadata.namespace ?? '', written.metadata.name ?? '', written.metadata.resourceVersion, written.metadata.generation);
      return written;
    },
    async remove(deployment) {
      const updated = structuredClone(deployment);
      updated.metadata.finalizers = (updated.metadata.finalizers ?? []).filter((f) => f !== FLINK_DEPLOYMENT_FINALIZER);
      await deploymentClient.update(updated);
      recorder.forget(deployment.metadata.namespace ?? '', deployment.metadata.name ?? '');
    },
  };

  const legacy = {
    async migrateIfLegacy(deployment: FlinkDeploymentV1) {
      const writer = runtime.fencingToken();
      if (!writer) return { kind: 'failed', message: 'not the leader' };
      return migrateIfLegacy(deployment.metadata.namespace ?? '', deployment.metadata.name ?? '', { configMaps: configMapClient, deployments: deploymentClient, dryRun: false, writer });
    },
  };

  const dependencies: FlinkDeploymentReconcilerDependencies = {
    deployments: recorder.overlay,
    clusterDeployments: readers.deployments,
    store,
    status: recorder,
    finalizers,
    legacy,
    cluster: {
      render: (deployment, inputs) => buildFlinkClusterResources(deployment, inputs),
      apply: (objects) => applier.apply(objects),
      deleteDeployments: (namespace, names) => applier.deleteDeployments(namespace, names),
      deleteServicesAndConfig: (namespace, services, configMap) => applier.deleteServicesAndConfig(namespace, services, configMap),
      listPods: async (namespace, labelSelector): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace, labelSelector })).items,
    },
    flinkApi: (deployment) => flinkRestClientFor(deployment, { mode: config.flinkRestAccess, kubeConfig: runtime.kubeConfig }),
    events: {
      emit: (deployment, type, reason, message) => (type === 'Warning' ? runtime.events.warning(deployment, reason, message) : runtime.events.normal(deployment, reason, message)),
    },
    log: runtime.logger,
    timings: { progressCheckIntervalMs: config.progressCheckIntervalMs, reconcileIntervalMs: config.reconcileIntervalMs },
    specHash,
    newJobId: randomJobId,
    now: () => Date.now(),
  };
  return new FlinkDeploymentReconciler(dependencies);
}
