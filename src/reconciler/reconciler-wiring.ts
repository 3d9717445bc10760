/**
 * Builds the FlinkDeployment reconciler from what the controller runtime provides: the
 * read-your-writes overlays over the informers, the state store, the status recorder, the cluster
 * applier, the Flink REST clients and the event recorder.
 *
 * This is the only place that knows all the concrete classes; the reconciler itself sees the
 * narrow interfaces of reconciler-dependencies.ts.
 */
import { randomBytes } from 'node:crypto';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, NetworkingV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { Operation } from 'fast-json-patch';
import {
  API_VERSION_V1,
  API_VERSION_V1BETA1,
  FLINK_DEPLOYMENT_FINALIZER,
  FLINK_DEPLOYMENT_PLURAL,
  FLINK_GROUP,
  type FlinkDeploymentV1,
  type FlinkDeploymentV1beta1,
} from '../api/flink-deployment.js';
import { withConfigurationDefaults } from '../api/default-flink-configuration.js';
import type { FlinkVersion } from '../api/flink-deployment-spec.js';
import { buildFlinkClusterResources } from '../flink/flink-cluster-resources.js';
import { taskManagerDeploymentName } from '../flink/flink-resource-naming.js';
import { flinkRestClientFor, resolveFlinkRestAccess } from '../flink/flink-rest-access.js';
import { KubeConfigMapClient, OPERATOR_FIELD_MANAGER } from '../kube/configmap-client.js';
import { type FlinkDeploymentClient, KubeFlinkDeploymentClient } from '../kube/flink-deployment-client.js';
import { toKubeApiError } from '../kube/api-errors.js';
import type { ObservableObjectReader } from '../kube/object-reader.js';
import type { OperatorDependencies, ReconcilerFactory } from '../runtime/manager.js';
import type { Reconciler } from '../runtime/reconcile.js';
import { ConfigMapStateStore } from '../state/configmap-state-store.js';
import { migrateIfLegacy } from '../state/legacy-migration.js';
import { KubeFlinkStateSnapshotClient } from '../kube/flink-state-snapshot-client.js';
import { LegacyStatusStateStore } from '../state/legacy-status-state-store.js';
import type { LoadResult, StateStore, StateUpdateFunction, StateUpdateOptions } from '../state/state-store.js';
import type { InternalState, SavepointRecord } from '../api/internal-state.js';
import { isDeepStrictEqual } from 'node:util';
import { specHash } from '../flink/deployed-record.js';
import { flinkConfigMapName } from '../flink/flink-resource-naming.js';
import { StatusRecorder } from '../state/status-recorder.js';
import { FlinkClusterApplier } from './flink-cluster-applier.js';
import { FlinkDeploymentReconciler } from './flink-deployment-reconciler.js';
import { PodListThrottle } from './pod-list-throttle.js';

/** How old a pod list (failure reasons) may be; see pod-list-throttle.ts. */
const POD_LIST_MAX_AGE_MS = 5_000;
/** Diagnostic pod LISTs per second, operator-wide (each scans the namespace on the API server; pod-list-throttle.ts). */
const POD_DIAGNOSIS_LISTS_PER_SECOND = 5;
import type { FinalizerWriter, FlinkDeploymentReconcilerDependencies, SnapshotResourceAccess } from './reconciler-dependencies.js';
import type { FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import { SnapshotsByJob } from '../kube/snapshots-by-job.js';

/** Counts every state write attempt in the metrics (both kinds' stores). */
export function stateWriteCounter(runtime: Pick<OperatorDependencies, 'metrics'>): (outcome: 'created' | 'updated' | 'conflict' | 'failed') => void {
  return (outcome) => {
    runtime.metrics.stateWrites.inc({ outcome });
    if (outcome === 'conflict') runtime.metrics.stateConflicts.inc();
  };
}

/** A random Flink job id: 32 lowercase hex characters, as Flink's JobID. */
export function randomJobId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Where the reconciler keeps its internal state.
 * - `configmap` (the product): the companion `<name>-operator-state` ConfigMap.
 * - `legacy-status`: the Apache operator's v1beta1 status layout (LegacyStatusStateStore), the
 *   seed's design. Only for the comparison benchmark (bench/): it GETs the object on every load and
 *   cannot express every intent (see legacy-status-state-store.ts), so the fields it drops are
 *   carried in memory (VolatileFieldsOverLegacyStore): not crash-safe; never use it in production.
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
  const configurationDefaults = (namespace: string, flinkVersion: FlinkVersion | undefined) =>
    runtime.defaultConfiguration.current().for(namespace, flinkVersion);
  const withDefaultsOf = (deployment: FlinkDeploymentV1): FlinkDeploymentV1 =>
    deployment.spec
      ? {
          ...deployment,
          spec: withConfigurationDefaults(deployment.spec, configurationDefaults(deployment.metadata.namespace ?? '', deployment.spec.flinkVersion)),
        }
      : deployment;
  const flinkRestAccess = resolveFlinkRestAccess(config.flinkRestAccess, process.env);
  runtime.logger.info(
    { flinkRestAccess, setting: config.flinkRestAccess },
    `Flink's REST API is reached ${flinkRestAccess === 'direct' ? 'directly (<name>-rest.<namespace>.svc)' : "through the API server's service proxy"}`,
  );
  const flinkDeployments = readers.flinkDeployments as unknown as ObservableObjectReader<FlinkDeploymentV1>;
  const deploymentClient = new KubeFlinkDeploymentClient(runtime.kubeConfig, OPERATOR_FIELD_MANAGER, apiClients.make(CustomObjectsApi));
  const configMapClient = new KubeConfigMapClient(runtime.kubeConfig, OPERATOR_FIELD_MANAGER, apiClients.make(CoreV1Api));
  const recorder = new StatusRecorder({
    client: stateLayout === 'legacy-status' ? new StatusPatchesUnderV1beta1(deploymentClient, runtime.kubeConfig) : deploymentClient,
    informer: flinkDeployments,
    writeTracker,
  });
  const trimmedForSize = new TrimmedSavepoints();
  const store: StateStore =
    stateLayout === 'legacy-status'
      ? new VolatileFieldsOverLegacyStore(new LegacyStatusStateStore({ client: deploymentClient, fencingToken: () => runtime.fencingToken() }))
      : new ConfigMapStateStore({
          client: configMapClient,
          fencingToken: () => runtime.fencingToken(),
          informer: readers.stateConfigMaps,
          writeTracker,
          onWriteAttempt: stateWriteCounter(runtime),
          onHistoryTrimmed: (deployment, dropped) => {
            trimmedForSize.add(deployment, dropped);
            runtime.events.warning(
              deployment,
              'SavepointHistoryTrimmed',
              `${dropped.length} oldest savepoint(s) dropped from the state history to stay under the ConfigMap size limit (${dropped[0].location} … ${dropped.at(-1)!.location}); ` +
                'they are disposed when kubernetes.operator.savepoint.cleanup.enabled is true',
            );
          },
        });
  const apps = apiClients.make(AppsV1Api);
  const core = apiClients.make(CoreV1Api);
  // Pod LISTs scan the namespace: at most one per (namespace, selector) per 5 s, and diagnostic ones
  // within an operator-wide budget (pod-list-throttle.ts).
  const podLists = new PodListThrottle(
    async (namespace, labelSelector): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace, labelSelector })).items,
    Math.max(POD_LIST_MAX_AGE_MS, config.progressCheckIntervalMs),
    () => Date.now(),
    POD_DIAGNOSIS_LISTS_PER_SECOND,
  );
  const applier = new FlinkClusterApplier(apps, core, readers.deployments, readers.services, apiClients.make(NetworkingV1Api));

  const finalizers: FinalizerWriter = {
    async add(deployment, fence) {
      fence.check(`add the finalizer to FlinkDeployment ${deployment.metadata.namespace}/${deployment.metadata.name}`);
      const updated = structuredClone(deployment);
      updated.metadata.finalizers = [...(updated.metadata.finalizers ?? []), FLINK_DEPLOYMENT_FINALIZER];
      const written = await deploymentClient.update(updated);
      recorder.overlay.recordWrite(written);
      writeTracker.recordOwnWrite(
        'FlinkDeployment',
        written.metadata.namespace ?? '',
        written.metadata.name ?? '',
        written.metadata.resourceVersion,
        written.metadata.generation,
      );
      return written;
    },
    async remove(deployment, fence) {
      fence.check(`remove the finalizer from FlinkDeployment ${deployment.metadata.namespace}/${deployment.metadata.name}`);
      const updated = structuredClone(deployment);
      updated.metadata.finalizers = (updated.metadata.finalizers ?? []).filter((f) => f !== FLINK_DEPLOYMENT_FINALIZER);
      await deploymentClient.update(updated);
      recorder.forget(deployment.metadata.namespace ?? '', deployment.metadata.name ?? '');
    },
  };

  const legacy = {
    async migrateIfLegacy(deployment: FlinkDeploymentV1) {
      // The legacy layout keeps its state in the status: nothing to migrate away from.
      if (stateLayout === 'legacy-status') return { kind: 'already-migrated', message: 'legacy-status layout' };
      const writer = runtime.fencingToken();
      if (!writer) return { kind: 'failed', message: 'not the leader' };
      return migrateIfLegacy(deployment.metadata.namespace ?? '', deployment.metadata.name ?? '', {
        configMaps: configMapClient,
        deployments: deploymentClient,
        dryRun: false,
        writer,
        snapshots: new KubeFlinkStateSnapshotClient(runtime.kubeConfig, apiClients.make(CustomObjectsApi)),
      });
    },
  };

  // The legacy-status layout (bench only) cannot hold the outbox and the taken snapshots crash-safely.
  const snapshotResources = stateLayout === 'configmap' ? snapshotResourceAccess(runtime) : undefined;
  const dependencies: FlinkDeploymentReconcilerDependencies = {
    deployments: recorder.overlay,
    clusterDeployments: readers.deployments,
    store,
    status: recorder,
    finalizers,
    legacy,
    cluster: {
      render: (deployment, inputs) => buildFlinkClusterResources(deployment, inputs),
      apply: (objects, options) => applier.apply(objects, options),
      readHaMetadata: (namespace, name) => applier.readHaMetadata(namespace, name),
      readFlinkConfigMap: (namespace, name) => configMapClient.get(namespace, flinkConfigMapName(name)),
      recordLastSavepoint: (namespace, name, location, fence) => applier.recordLastSavepoint(namespace, flinkConfigMapName(name), location, fence),
      deleteDeployments: (namespace, names, fence, propagation) => applier.deleteDeployments(namespace, names, fence, propagation),
      deleteServicesAndConfig: (namespace, services, configMap, fence) => applier.deleteServicesAndConfig(namespace, services, configMap, fence),
      deleteHaMetadata: (namespace, name, fence) => applier.deleteHaMetadata(namespace, name, fence),
      scaleTaskManagers: (namespace, name, replicas, fence) => applier.scaleDeployment(namespace, taskManagerDeploymentName(name), replicas, fence),
      listPods: (namespace, labelSelector) => podLists.listPods(namespace, labelSelector),
      diagnosePods: (namespace, labelSelector) => podLists.listWithinBudget(namespace, labelSelector),
    },
    ingresses: {
      apply: (ingress, fence) => applier.applyIngress(ingress, fence),
      delete: (namespace, name, ownerUid, fence) => applier.deleteIngress(namespace, name, ownerUid, fence),
    },
    configurationDefaults,
    flinkApi: (deployment, fence) =>
      // The REST port may come from the operator's defaults.
      flinkRestClientFor(withDefaultsOf(deployment), {
        mode: flinkRestAccess,
        kubeConfig: runtime.kubeConfig,
        beforeWrite: (method, path) => fence.check(`send ${method} ${path} to Flink`),
        onRequest: (request) => runtime.metrics.recordFlinkRestRequest(request),
      }),
    fenceFor: (signal) => runtime.fenceFor(signal),
    takeTrimmedSavepoints: (deployment) => trimmedForSize.take(deployment),
    returnTrimmedSavepoints: (deployment, records) => trimmedForSize.add(deployment, records),
    countTrimmedSavepoints: (deployment) => trimmedForSize.count(deployment),
    forgetDeployment: (deployment) => {
      trimmedForSize.take(deployment);
      if (store instanceof ConfigMapStateStore) store.forget(deployment);
    },
    ...(snapshotResources ? { snapshotResources } : {}),
    sessionJobsOf: (namespace, cluster) =>
      (readers.flinkSessionJobs?.list() ?? [])
        .filter((job) => job.metadata?.namespace === namespace && (job.spec as { deploymentName?: unknown } | undefined)?.deploymentName === cluster)
        .map((job) => job.metadata?.name ?? ''),
    counters: {
      fencedOut: () => runtime.metrics.fencedSideEffects.inc(),
      driftDetected: () => runtime.metrics.driftDetected.inc(),
      flinkUnreachable: () => runtime.metrics.flinkUnreachable.inc(),
    },
    flinkRestAccess,
    events: {
      emit: (deployment, type, reason, message) =>
        type === 'Warning' ? runtime.events.warning(deployment, reason, message) : runtime.events.normal(deployment, reason, message),
    },
    log: runtime.logger,
    timings: {
      progressCheckIntervalMs: config.progressCheckIntervalMs,
      reconcileIntervalMs: config.reconcileIntervalMs,
      observationHoldMs: config.observationHoldMs,
    },
    specHash,
    newJobId: randomJobId,
    now: () => Date.now(),
  };
  return new FlinkDeploymentReconciler(dependencies);
}

/**
 * Savepoints the state store's size rules dropped from a history, by deployment uid, until the
 * reconciler disposes them (snapshot-steps.ts trimHistory).
 * Caveats: in memory: after a restart, savepoints trimmed before it are not disposed (the
 * SavepointHistoryTrimmed event names them).
 */
class TrimmedSavepoints {
  private readonly byUid = new Map<string, SavepointRecord[]>();

  add(deployment: FlinkDeploymentV1, records: readonly SavepointRecord[]): void {
    if (records.length === 0) return;
    const uid = deployment.metadata.uid ?? '';
    this.byUid.set(uid, [...(this.byUid.get(uid) ?? []), ...records]);
  }

  count(deployment: FlinkDeploymentV1): number {
    return this.byUid.get(deployment.metadata.uid ?? '')?.length ?? 0;
  }

  take(deployment: FlinkDeploymentV1): SavepointRecord[] {
    const uid = deployment.metadata.uid ?? '';
    const records = this.byUid.get(uid) ?? [];
    this.byUid.delete(uid);
    return records;
  }
}

function withoutRevision(state: InternalState): unknown {
  const { revision: _r, lastWriter: _w, ...rest } = JSON.parse(JSON.stringify(state)) as InternalState;
  return rest;
}

/**
 * The legacy status layout plus, in this process's memory, the fields it cannot express
 * (`jobIdToSubmit`, a pending savepoint without trigger id): without them the reconciler could not
 * run its steps at all over the legacy layout. Only for the benchmark's side-by-side comparison.
 *
 * Guarantees: `load` returns the full state of our last `update` while the stored (legacy) state
 *   is still what that update wrote; otherwise the stored state as the legacy store decodes it.
 * Assumptions: one operator process (no failover) — the memory is lost on restart.
 * Caveats: not crash-safe (the very thing the ConfigMap layout fixes); a step that only changes a
 *   volatile field writes nothing here, where the Apache operator would write its status: the
 *   legacy figures are, if anything, a little too low.
 */
class VolatileFieldsOverLegacyStore implements StateStore {
  private readonly full = new Map<string, { written: unknown; state: InternalState }>();

  constructor(private readonly legacy: StateStore) {}

  private key(deployment: FlinkDeploymentV1): string {
    return deployment.metadata.uid ?? `${deployment.metadata.namespace}/${deployment.metadata.name}`;
  }

  private restore(deployment: FlinkDeploymentV1, stored: InternalState): InternalState {
    const remembered = this.full.get(this.key(deployment));
    return remembered && isDeepStrictEqual(remembered.written, withoutRevision(stored)) ? structuredClone(remembered.state) : stored;
  }

  async load(deployment: FlinkDeploymentV1): Promise<LoadResult> {
    const result = await this.legacy.load(deployment);
    return result.kind === 'found' ? { ...result, state: this.restore(deployment, result.state) } : result;
  }

  async update(deployment: FlinkDeploymentV1, fn: StateUpdateFunction, options?: StateUpdateOptions): Promise<InternalState> {
    let produced: InternalState | undefined;
    options?.fence?.check('write the legacy status state');
    const written = await this.legacy.update(deployment, (stored) => {
      const base = this.restore(deployment, stored);
      const next = fn(base);
      produced = next;
      return next === base && base === stored ? stored : next;
    });
    if (!produced) return written;
    const state = { ...produced, revision: written.revision };
    this.full.set(this.key(deployment), { written: withoutRevision(written), state });
    return structuredClone(state);
  }
}

/**
 * The status recorder's client in the legacy layout: its JSON patches go to /status under v1beta1,
 * because a write through v1 prunes the fields only v1beta1 declares (reconciliationStatus,
 * jobStatus.savepointInfo/checkpointInfo/upgradeSavepointPath), i.e. would erase the legacy state.
 * The answer is returned in its v1 view (those fields removed, apiVersion v1), as a v1 read shows it.
 * Everything else is the plain client. Only for the benchmark's legacy layout.
 */
class StatusPatchesUnderV1beta1 implements FlinkDeploymentClient {
  private readonly api: CustomObjectsApi;

  constructor(
    private readonly inner: FlinkDeploymentClient,
    kubeConfig: KubeConfig,
  ) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  get(namespace: string, name: string) {
    return this.inner.get(namespace, name);
  }
  list(namespace?: string) {
    return this.inner.list(namespace);
  }
  update(deployment: FlinkDeploymentV1) {
    return this.inner.update(deployment);
  }
  getV1beta1(namespace: string, name: string) {
    return this.inner.getV1beta1(namespace, name);
  }
  replaceStatusV1beta1(deployment: FlinkDeploymentV1beta1) {
    return this.inner.replaceStatusV1beta1(deployment);
  }

  async patchStatus(namespace: string, name: string, ops: readonly Operation[]): Promise<FlinkDeploymentV1> {
    let written: FlinkDeploymentV1beta1;
    try {
      written = (await this.api.patchNamespacedCustomObjectStatus(
        { group: FLINK_GROUP, version: API_VERSION_V1BETA1, namespace, plural: FLINK_DEPLOYMENT_PLURAL, name, body: ops, fieldManager: 'flink-operator' },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      )) as FlinkDeploymentV1beta1;
    } catch (error) {
      throw toKubeApiError(error);
    }
    const status = structuredClone(written.status ?? {}) as Record<string, unknown> & { jobStatus?: Record<string, unknown> };
    delete status.reconciliationStatus;
    if (status.jobStatus) {
      delete status.jobStatus.upgradeSavepointPath;
      delete status.jobStatus.savepointInfo;
      delete status.jobStatus.checkpointInfo;
    }
    return { ...written, apiVersion: `${FLINK_GROUP}/${API_VERSION_V1}`, status } as unknown as FlinkDeploymentV1;
  }
}

/** One index and client per snapshot informer: both job reconcilers of a manager share them. */
const snapshotAccessByInformer = new WeakMap<object, SnapshotResourceAccess>();

/** FlinkStateSnapshots through the manager's cache (indexed by job) and a client, when the manager watches them. */
export function snapshotResourceAccess(runtime: OperatorDependencies): SnapshotResourceAccess | undefined {
  const snapshots = runtime.readers.flinkStateSnapshots as ObservableObjectReader<FlinkStateSnapshot> | undefined;
  if (!snapshots) return undefined;
  let access = snapshotAccessByInformer.get(snapshots);
  if (!access) {
    const index = new SnapshotsByJob(snapshots);
    access = {
      ofJob: (kind, namespace, name) => index.ofJob(kind, namespace, name),
      writer: new KubeFlinkStateSnapshotClient(runtime.kubeConfig, runtime.apiClients.make(CustomObjectsApi)),
    };
    snapshotAccessByInformer.set(snapshots, access);
  }
  return access;
}
