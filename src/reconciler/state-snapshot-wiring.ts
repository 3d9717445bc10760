/**
 * Builds the FlinkStateSnapshot reconciler (state-snapshot-reconciler.ts) from what the controller
 * runtime provides: the snapshot, FlinkDeployment and FlinkSessionJob caches, a snapshot client,
 * and savepoint disposal through the REST API of the cluster that runs the referenced job (a
 * FlinkDeployment's own, or a FlinkSessionJob's session cluster).
 *
 * Like reconciler-wiring.ts and session-job-wiring.ts, the only place that knows the concrete classes.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_KIND, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkSessionJobV1 } from '../api/flink-session-job.js';
import { FLINK_STATE_SNAPSHOT_KIND, type FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import type { JobReferenceKind } from '../api/flink-state-snapshot-spec.js';
import { flinkRestClientFor, resolveFlinkRestAccess } from '../flink/flink-rest-access.js';
import { KubeFlinkStateSnapshotClient } from '../kube/flink-state-snapshot-client.js';
import type { ObjectReader } from '../kube/object-reader.js';
import type { OperatorDependencies, ReconcilerFactory } from '../runtime/manager.js';
import type { Reconciler } from '../runtime/reconcile.js';
import { disposeSavepointAndConfirm } from './pending-savepoint.js';
import { DEFAULT_SNAPSHOT_NOT_RUNNING_GRACE_MS, type SavepointDisposal } from './state-snapshot-decide.js';
import { FlinkStateSnapshotReconciler, type StateSnapshotReconcilerDependencies } from './state-snapshot-reconciler.js';

export const makeFlinkStateSnapshotReconciler: ReconcilerFactory = (runtime: OperatorDependencies): Reconciler => {
  const { config, readers } = runtime;
  if (!readers.flinkStateSnapshots) throw new Error('the manager does not watch FlinkStateSnapshots (pass makeStateSnapshotReconciler to the Manager)');
  const snapshots = readers.flinkStateSnapshots as unknown as ObjectReader<FlinkStateSnapshot>;
  const deployments = readers.flinkDeployments as unknown as ObjectReader<FlinkDeploymentV1>;
  const sessionJobs = readers.flinkSessionJobs as unknown as ObjectReader<FlinkSessionJobV1> | undefined;
  const flinkRestAccess = resolveFlinkRestAccess(config.flinkRestAccess, process.env);
  const target = (kind: JobReferenceKind, namespace: string, name: string) =>
    kind === FLINK_DEPLOYMENT_KIND ? deployments.get(namespace, name) : sessionJobs?.get(namespace, name);

  /** The cluster whose REST API serves the job `kind/name`: a FlinkDeployment's own, a session job's session cluster. */
  const clusterOf = (kind: JobReferenceKind, namespace: string, name: string): FlinkDeploymentV1 | undefined => {
    if (kind === FLINK_DEPLOYMENT_KIND) return deployments.get(namespace, name);
    const cluster = sessionJobs?.get(namespace, name)?.spec.deploymentName;
    return cluster ? deployments.get(namespace, cluster) : undefined;
  };

  const disposeSavepoint = async (ref: { kind: JobReferenceKind; namespace: string; name: string }, path: string): Promise<SavepointDisposal> => {
    if (!target(ref.kind, ref.namespace, ref.name)) return { outcome: 'target-gone' };
    const cluster = clusterOf(ref.kind, ref.namespace, ref.name);
    if (!cluster) return { outcome: 'unreachable', reason: `the session cluster of ${ref.kind} ${ref.name} does not exist` };
    const api = flinkRestClientFor(cluster, {
      mode: flinkRestAccess,
      kubeConfig: runtime.kubeConfig,
      onRequest: (request) => runtime.metrics.recordFlinkRestRequest(request),
    });
    const outcome = await disposeSavepointAndConfirm(api, path);
    return outcome.outcome === 'disposed' ? outcome : { outcome: 'unreachable', reason: outcome.reason };
  };

  const dependencies: StateSnapshotReconcilerDependencies = {
    snapshots,
    targets: { get: target },
    writer: new KubeFlinkStateSnapshotClient(runtime.kubeConfig, runtime.apiClients.make(CustomObjectsApi)),
    disposeSavepoint,
    events: {
      emit: (snapshot, type, reason, message) =>
        type === 'Warning' ? runtime.events.warning(snapshot, reason, message) : runtime.events.normal(snapshot, reason, message),
    },
    fenceFor: (signal) => runtime.fenceFor(signal),
    counters: { fencedOut: () => runtime.metrics.fencedSideEffects.inc() },
    log: runtime.logger.child({ kind: FLINK_STATE_SNAPSHOT_KIND }),
    timings: { progressCheckIntervalMs: config.progressCheckIntervalMs, reconcileIntervalMs: config.reconcileIntervalMs },
    now: () => Date.now(),
    notRunningGraceMs: DEFAULT_SNAPSHOT_NOT_RUNNING_GRACE_MS,
  };
  return new FlinkStateSnapshotReconciler(dependencies);
};
