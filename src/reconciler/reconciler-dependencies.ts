/**
 * What the FlinkDeployment reconciler needs from the rest of the operator, as narrow interfaces,
 * so that each piece can be replaced by a fake that asserts what was called.
 */
import type { FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import type { FlinkStateSnapshotWriter } from '../kube/flink-state-snapshot-client.js';
import type { V1ConfigMap, V1Deployment, V1Ingress, V1Pod } from '@kubernetes/client-node';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import type { DeletionPropagation } from '../api/flink-configuration.js';
import type { FlinkDeploymentSpec, FlinkVersion } from '../api/flink-deployment-spec.js';
import type { FlinkDeploymentStatusV1 } from '../api/flink-deployment-status.js';
import type { PendingStatusChange } from './observation-hold.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { SavepointRecord } from '../api/internal-state.js';
import type { ObjectReader } from '../kube/object-reader.js';
import type { StateStore } from '../state/state-store.js';
import type {
  CancelJobResult,
  CheckpointStatus,
  CheckpointType,
  DisposalStatus,
  FlinkJobExceptions,
  FlinkCheckpointingStatistics,
  FlinkDashboardConfig,
  FlinkJobOverview,
  FlinkJobResourceRequirements,
  SavepointFormatType,
  SavepointStatus,
} from '../flink/flink-rest-types.js';
import type { ApplyOptions, ApplyResult, FlinkClusterObjects, HaMetadataSummary } from './flink-cluster-applier.js';

/** The Flink REST calls the reconciler makes for one deployment. */
export interface FlinkJobApi {
  getConfig(): Promise<FlinkDashboardConfig>;
  listJobs(): Promise<FlinkJobOverview[]>;
  cancelJob(jobId: string): Promise<CancelJobResult>;
  /** `triggerId` (32 hex) makes the trigger idempotent: Flink (1.15+) answers a repeated trigger id with the same operation. */
  stopWithSavepoint(
    jobId: string,
    options: { targetDirectory?: string; drain?: boolean; formatType?: SavepointFormatType; triggerId?: string },
  ): Promise<string>;
  triggerSavepoint(jobId: string, options: { targetDirectory?: string; formatType?: SavepointFormatType; triggerId?: string }): Promise<string>;
  getSavepointStatus(jobId: string, triggerId: string): Promise<SavepointStatus>;
  /** POST /jobs/:id/checkpoints; `triggerId` makes a re-send the same operation. Returns the trigger id. */
  triggerCheckpoint(jobId: string, checkpointType?: CheckpointType, triggerId?: string): Promise<string>;
  getCheckpointStatus(jobId: string, triggerId: string): Promise<CheckpointStatus>;
  getCheckpoints(jobId: string): Promise<FlinkCheckpointingStatistics>;
  getExceptions(jobId: string): Promise<FlinkJobExceptions>;
  /** Job metrics by id (GET /jobs/:id/metrics?get=…); ids Flink does not know are left out. */
  getJobMetrics(jobId: string, names: readonly string[]): Promise<Record<string, string>>;
  disposeSavepoint(savepointPath: string): Promise<string>;
  getDisposalStatus(triggerId: string): Promise<DisposalStatus>;
  /** GET / PUT /jobs/:id/resource-requirements (Flink 1.18+, in-place scaling); an API without them cannot scale in place (a full upgrade instead). */
  getResourceRequirements?(jobId: string): Promise<FlinkJobResourceRequirements>;
  updateResourceRequirements?(jobId: string, requirements: FlinkJobResourceRequirements): Promise<void>;
}

export interface ClusterRenderInputs {
  spec: FlinkDeploymentSpec;
  generation: number;
  specHash: string;
  jobId: string;
  restoreFrom?: string;
  allowNonRestoredState?: boolean;
}

/**
 * Kubernetes side effects on the Flink cluster's resources. Every method that writes takes the
 * pass's fence and checks it before each write (flink-cluster-applier.ts).
 */
export interface FlinkClusterOperations {
  render(deployment: FlinkDeploymentV1, inputs: ClusterRenderInputs): FlinkClusterObjects;
  apply(objects: FlinkClusterObjects, options: ApplyOptions): Promise<ApplyResult>;
  /** Flink's HA store for the cluster (undefined: no HA ConfigMap). */
  readHaMetadata(namespace: string, name: string): Promise<HaMetadataSummary | undefined>;
  /** The Flink ConfigMap `flink-config-<name>` (a GET; only the state rebuild reads it). */
  readFlinkConfigMap(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  /** Records on the Flink ConfigMap the savepoint a suspend stopped the job with (the rebuild trusts it, not the status). */
  recordLastSavepoint(namespace: string, name: string, location: string, fence: SideEffectFence): Promise<void>;
  /** Deletes the JobManager and TaskManager Deployments with `propagation`; returns the names still present. */
  deleteDeployments(namespace: string, names: readonly string[], fence: SideEffectFence, propagation: DeletionPropagation): Promise<string[]>;
  deleteServicesAndConfig(namespace: string, serviceNames: readonly string[], configMapName: string, fence: SideEffectFence): Promise<void>;
  /** Deletes Flink's HA ConfigMaps of the cluster (deletion of the FlinkDeployment). */
  deleteHaMetadata(namespace: string, name: string, fence: SideEffectFence): Promise<void>;
  /** Sets the TaskManager Deployment's replicas (a rescale without restart). */
  scaleTaskManagers(namespace: string, name: string, replicas: number, fence: SideEffectFence): Promise<void>;
  /** Pods of one component, listed only when the reconciler needs failure reasons. */
  listPods(namespace: string, labelSelector: string): Promise<V1Pod[]>;
  /**
   * Pods of one component for a failure reason, within the operator-wide LIST budget
   * (pod-list-throttle.ts): undefined when it is spent (ask again later). Absent: `listPods`.
   */
  diagnosePods?(namespace: string, labelSelector: string): Promise<V1Pod[] | undefined>;
}

/** The FlinkDeployment's Ingress (networking.k8s.io/v1; ingress-steps.ts); every write checks the fence first. */
export interface FlinkIngressOperations {
  /** Creates or replaces the Ingress unless the live one already carries this rendering (a GET first); true when written. */
  apply(ingress: V1Ingress, fence: SideEffectFence): Promise<boolean>;
  /** Deletes the Ingress `name` when it exists and the FlinkDeployment `ownerUid` owns it; true when deleted. */
  delete(namespace: string, name: string, ownerUid: string, fence: SideEffectFence): Promise<boolean>;
}

export interface StatusWriter {
  /** Writes the status if it differs from the last one written (one request, after `fence.check`), else nothing. */
  record(deployment: FlinkDeploymentV1, status: FlinkDeploymentStatusV1, fence: SideEffectFence): Promise<FlinkDeploymentV1>;
  /**
   * The changes `record` would send now (paths under /status), for the observation hold
   * (observation-hold.ts); absent: nothing is ever held.
   */
  pendingChanges?(deployment: FlinkDeploymentV1, status: FlinkDeploymentStatusV1): readonly PendingStatusChange[];
}

/** Adds or removes the operator's finalizer on the FlinkDeployment (after `fence.check`). */
export interface FinalizerWriter {
  add(deployment: FlinkDeploymentV1, fence: SideEffectFence): Promise<FlinkDeploymentV1>;
  remove(deployment: FlinkDeploymentV1, fence: SideEffectFence): Promise<void>;
}

/** Counters the reconciler bumps (Prometheus in production, plain counts in tests). */
export interface ReconcilerCounters {
  /** A side effect was refused because the pass's leadership term was no longer valid. */
  fencedOut(): void;
  /** A steady pass found the running cluster is not the one the state says was deployed. */
  driftDetected(): void;
  /** A pass could not ask Flink's REST API although the JobManager was available. */
  flinkUnreachable(): void;
}

/** Moves a legacy (Apache operator) status into the split layout; src/state/legacy-migration.ts. */
export interface LegacyMigrator {
  migrateIfLegacy(deployment: FlinkDeploymentV1): Promise<{ kind: string; message: string }>;
}

export type EventType = 'Normal' | 'Warning';

export interface DeploymentEventSink {
  emit(deployment: FlinkDeploymentV1, type: EventType, reason: string, message: string): void;
}

export interface ReconcilerLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface ReconcilerTimings {
  /** Requeue while a transition is in progress. */
  progressCheckIntervalMs: number;
  /** Requeue when all is steady. */
  reconcileIntervalMs: number;
  /** How long a status change that is an observation only may wait for the next transition's patch (observation-hold.ts; the operator's `--observation-hold`); absent or 0 = never held. */
  observationHoldMs?: number;
}

export interface FlinkDeploymentReconcilerDependencies {
  /** FlinkDeployments as the operator last wrote or saw them (read-your-writes overlay). */
  deployments: ObjectReader<FlinkDeploymentV1>;
  /** The owned JobManager/TaskManager Deployments (informer). */
  clusterDeployments: ObjectReader<V1Deployment>;
  store: StateStore;
  status: StatusWriter;
  finalizers: FinalizerWriter;
  legacy: LegacyMigrator;
  cluster: FlinkClusterOperations;
  /** The Ingress of spec.ingress; undefined: no Ingress is ever read or written (fakes that do not model it). */
  ingresses?: FlinkIngressOperations;
  /** The deployment's Flink REST API; every request that changes something is checked against `fence` right before it is written. */
  flinkApi(deployment: FlinkDeploymentV1, fence: SideEffectFence): FlinkJobApi;
  /** How flinkApi reaches Flink (for messages: what to check when it does not answer). */
  flinkRestAccess: 'direct' | 'apiserver-proxy';
  /**
   * The operator's default flinkConfiguration for a resource of `namespace` and `flinkVersion`, flat
   * and scoped (src/api/default-flink-configuration.ts), as of now: what every spec's own
   * configuration is read over. Changes at run time (dynamic configuration).
   */
  configurationDefaults(namespace: string, flinkVersion: FlinkVersion | undefined): Readonly<Record<string, string>>;
  /** The fence of one pass (side-effect-fence.ts); undefined = this instance does not lead now. */
  fenceFor(signal: AbortSignal): SideEffectFence | undefined;
  /** Savepoints the state's size rules dropped from the history, not yet disposed (taken: the caller disposes or returns them). */
  takeTrimmedSavepoints(deployment: FlinkDeploymentV1): SavepointRecord[];
  returnTrimmedSavepoints(deployment: FlinkDeploymentV1, records: readonly SavepointRecord[]): void;
  /** How many of those wait for disposal (a read: nothing is taken). */
  countTrimmedSavepoints(deployment: FlinkDeploymentV1): number;
  /** Drops what the store remembers of a deleted FlinkDeployment (its revision floor). */
  forgetDeployment(deployment: FlinkDeploymentV1): void;
  /** Names of the FlinkSessionJobs in `namespace` whose spec.deploymentName is `cluster` (none when session jobs are not watched). */
  sessionJobsOf(namespace: string, cluster: string): string[];
  /** FlinkStateSnapshots, when the operator handles them (their CRD installed); undefined: none are read or written. */
  snapshotResources?: SnapshotResourceAccess;
  counters: ReconcilerCounters;
  events: DeploymentEventSink;
  log: ReconcilerLog;
  timings: ReconcilerTimings;
  specHash(spec: FlinkDeploymentSpec): string;
  newJobId(): string;
  now(): number;
}

/** How a job's reconciler reads (the informer cache) and writes FlinkStateSnapshots. */
export interface SnapshotResourceAccess {
  /** The cached FlinkStateSnapshots whose spec.jobReference names the job `kind` `name` in `namespace`. */
  ofJob(kind: string, namespace: string, name: string): FlinkStateSnapshot[];
  writer: FlinkStateSnapshotWriter;
}
