/**
 * Builds the FlinkSessionJob reconciler from what the controller runtime provides (the
 * FlinkDeployment counterpart is reconciler-wiring.ts): the session-job read-your-writes overlay
 * and status recorder, its state store over the companion ConfigMaps `<name>.sessionjob-state`,
 * the session clusters' REST clients, the jar fetcher and the event recorder.
 *
 * This and reconciler-wiring.ts are the only places that know the concrete classes.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { FLINK_SESSION_JOB_FINALIZER, FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1 } from '../api/flink-session-job.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { SessionJobInternalState } from '../api/internal-state.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { flinkRestClientFor, resolveFlinkRestAccess } from '../flink/flink-rest-access.js';
import { ARTIFACT_HTTP_HEADER_KEY, fetchSessionJobJar, parseArtifactHttpHeaders } from '../flink/session-job-artifacts.js';
import { KubeConfigMapClient, OPERATOR_FIELD_MANAGER } from '../kube/configmap-client.js';
import { KubeFlinkSessionJobClient } from '../kube/flink-deployment-client.js';
import type { ObjectReader, ObservableObjectReader } from '../kube/object-reader.js';
import { withConfigurationDefaults } from '../api/default-flink-configuration.js';
import type { DefaultConfigurationReader } from '../runtime/default-configuration-source.js';
import type { OperatorDependencies, ReconcilerFactory } from '../runtime/manager.js';
import type { Reconciler } from '../runtime/reconcile.js';
import { ConfigMapStateStore } from '../state/configmap-state-store.js';
import { migrateIfLegacySessionJob } from '../state/legacy-migration.js';
import { KubeFlinkStateSnapshotClient } from '../kube/flink-state-snapshot-client.js';
import { FLINK_SESSION_JOB_STATE } from '../state/state-kinds.js';
import { StatusRecorder } from '../state/status-recorder.js';
import { randomJobId, snapshotResourceAccess, stateWriteCounter } from './reconciler-wiring.js';
import type { SessionJobReconcilerDependencies } from './session-job-dependencies.js';
import { FlinkSessionJobReconciler } from './session-job-reconciler.js';

export const makeFlinkSessionJobReconciler: ReconcilerFactory = (runtime: OperatorDependencies): Reconciler => {
  const { config, readers, apiClients, writeTracker } = runtime;
  if (!readers.flinkSessionJobs) throw new Error('the manager does not watch FlinkSessionJobs (pass makeSessionJobReconciler to the Manager)');
  const flinkRestAccess = resolveFlinkRestAccess(config.flinkRestAccess, process.env);
  const sessionJobs = readers.flinkSessionJobs as unknown as ObservableObjectReader<FlinkSessionJobV1>;
  const client = new KubeFlinkSessionJobClient(runtime.kubeConfig, OPERATOR_FIELD_MANAGER, apiClients.make(CustomObjectsApi));
  const configMaps = new KubeConfigMapClient(runtime.kubeConfig, OPERATOR_FIELD_MANAGER, apiClients.make(CoreV1Api));
  const recorder = new StatusRecorder<FlinkSessionJobV1>({ client, informer: sessionJobs, writeTracker, kind: FLINK_SESSION_JOB_KIND });
  const store = new ConfigMapStateStore<SessionJobInternalState, FlinkSessionJobV1>({
    kind: FLINK_SESSION_JOB_STATE,
    client: configMaps,
    fencingToken: () => runtime.fencingToken(),
    informer: readers.stateConfigMaps,
    writeTracker,
    onWriteAttempt: stateWriteCounter(runtime),
  });
  const snapshotResources = snapshotResourceAccess(runtime);
  const writeFinalizers = async (job: FlinkSessionJobV1, finalizers: string[]): Promise<FlinkSessionJobV1> => {
    const updated = structuredClone(job);
    updated.metadata.finalizers = finalizers;
    const written = await client.update(updated);
    recorder.overlay.recordWrite(written);
    writeTracker.recordOwnWrite(
      FLINK_SESSION_JOB_KIND,
      written.metadata.namespace ?? '',
      written.metadata.name ?? '',
      written.metadata.resourceVersion,
      written.metadata.generation,
    );
    return written;
  };

  const dependencies: SessionJobReconcilerDependencies = {
    sessionJobs: recorder.overlay,
    // A session job's configuration is its cluster's effective one (the operator's defaults under
    // the cluster's own) overlaid by its own (Apache's FlinkConfigManager.getSessionJobConfig).
    sessionClusters: withDefaultConfiguration(readers.flinkDeployments as unknown as ObservableObjectReader<FlinkDeploymentV1>, runtime.defaultConfiguration),
    clusterDeployments: readers.deployments,
    store,
    status: recorder,
    finalizers: {
      async add(job, fence) {
        fence.check(`add the finalizer to FlinkSessionJob ${job.metadata.namespace}/${job.metadata.name}`);
        return writeFinalizers(job, [...(job.metadata.finalizers ?? []), FLINK_SESSION_JOB_FINALIZER]);
      },
      async remove(job, fence) {
        fence.check(`remove the finalizer from FlinkSessionJob ${job.metadata.namespace}/${job.metadata.name}`);
        await writeFinalizers(
          job,
          (job.metadata.finalizers ?? []).filter((f) => f !== FLINK_SESSION_JOB_FINALIZER),
        );
        recorder.forget(job.metadata.namespace ?? '', job.metadata.name ?? '');
      },
    },
    legacy: {
      async migrateIfLegacy(job) {
        const writer = runtime.fencingToken();
        if (!writer) return { kind: 'failed', message: 'not the leader' };
        return migrateIfLegacySessionJob(job.metadata.namespace ?? '', job.metadata.name ?? '', {
          configMaps,
          sessionJobs: client,
          dryRun: false,
          writer,
          snapshots: new KubeFlinkStateSnapshotClient(runtime.kubeConfig, apiClients.make(CustomObjectsApi)),
        });
      },
    },
    flinkApi: (cluster, fence) =>
      flinkRestClientFor(cluster, {
        mode: flinkRestAccess,
        kubeConfig: runtime.kubeConfig,
        beforeWrite: (method, path) => fence.check(`send ${method} ${path} to Flink`),
        onRequest: (request) => runtime.metrics.recordFlinkRestRequest(request),
      }),
    fetchJar: (spec) =>
      fetchSessionJobJar(spec.job?.jarURI, {
        allowedSchemes: config.sessionJobJarSchemes,
        allowRestrictedHosts: config.sessionJobJarRestrictedHosts,
        httpHeaders: parseArtifactHttpHeaders(flattenFlinkConfiguration(spec.flinkConfiguration)[ARTIFACT_HTTP_HEADER_KEY]),
      }),
    allowedJarSchemes: config.sessionJobJarSchemes,
    ...(snapshotResources ? { snapshotResources } : {}),
    fenceFor: (signal) => runtime.fenceFor(signal),
    forgetSessionJob: (job) => store.forget(job),
    counters: { fencedOut: () => runtime.metrics.fencedSideEffects.inc() },
    events: {
      emit: (job, type, reason, message) => (type === 'Warning' ? runtime.events.warning(job, reason, message) : runtime.events.normal(job, reason, message)),
    },
    log: runtime.logger.child({ kind: FLINK_SESSION_JOB_KIND }),
    timings: { progressCheckIntervalMs: config.progressCheckIntervalMs, reconcileIntervalMs: config.reconcileIntervalMs },
    newJobId: randomJobId,
    now: () => Date.now(),
  };
  return new FlinkSessionJobReconciler(dependencies);
};

/** Session clusters read with the operator's defaults merged into spec.flinkConfiguration (read-only view). */
function withDefaultConfiguration(clusters: ObjectReader<FlinkDeploymentV1>, defaults: DefaultConfigurationReader): ObjectReader<FlinkDeploymentV1> {
  const withDefaults = (cluster: FlinkDeploymentV1): FlinkDeploymentV1 =>
    cluster.spec
      ? { ...cluster, spec: withConfigurationDefaults(cluster.spec, defaults.current().for(cluster.metadata.namespace ?? '', cluster.spec.flinkVersion)) }
      : cluster;
  return {
    get: (namespace, name) => {
      const cluster = clusters.get(namespace, name);
      return cluster && withDefaults(cluster);
    },
    list: (namespace) => clusters.list(namespace).map(withDefaults),
  };
}
