/**
 * What the FlinkSessionJob reconciler needs from the rest of the operator, as narrow interfaces
 * (fakes in the tests assert what was called). Built by session-job-wiring.ts.
 */
import type { SnapshotResourceAccess } from './reconciler-dependencies.js';
import type { V1Deployment } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import type { FlinkSessionJobStatusV1 } from '../api/flink-session-job-status.js';
import type { FlinkSessionJobV1 } from '../api/flink-session-job.js';
import type { SessionJobInternalState } from '../api/internal-state.js';
import type { ObjectReader } from '../kube/object-reader.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import type { StateStore } from '../state/state-store.js';
import type { FlinkJobApi, ReconcilerLog, ReconcilerTimings } from './reconciler-dependencies.js';

/** What one run of a jar sends (JarRunRequestBody). */
export interface SessionJobRunRequest {
  jobId: string;
  entryClass?: string;
  args?: string[];
  parallelism?: number;
  savepointPath?: string;
  allowNonRestoredState?: boolean;
  /** The job's own configuration (Flink ≥ 1.17 only). */
  flinkConfiguration?: Record<string, string>;
}

/** The session cluster's REST calls a session job makes; every call that changes something is fenced. */
export interface SessionJobFlinkApi extends Pick<
  FlinkJobApi,
  'listJobs' | 'cancelJob' | 'stopWithSavepoint' | 'triggerSavepoint' | 'getSavepointStatus' | 'getCheckpoints' | 'triggerCheckpoint' | 'getCheckpointStatus'
> {
  /** POST /jars/upload; the jar id. */
  uploadJar(jar: Uint8Array, fileName: string): Promise<string>;
  /** POST /jars/:id/run with the job id fixed by the caller; never retried (a lost answer is resolved by listing the jobs). */
  runJar(jarId: string, request: SessionJobRunRequest): Promise<string>;
  deleteJar(jarId: string): Promise<void>;
}

/** The jar of a session job, fetched by the operator (session-job-artifacts.ts). */
export interface SessionJobJar {
  bytes: Uint8Array;
  fileName: string;
}

export interface SessionJobEventSink {
  emit(job: FlinkSessionJobV1, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface SessionJobReconcilerDependencies {
  /** FlinkStateSnapshots, when the operator handles them (their CRD installed). */
  snapshotResources?: SnapshotResourceAccess;
  /** FlinkSessionJobs as the operator last wrote or saw them (read-your-writes overlay). */
  sessionJobs: ObjectReader<FlinkSessionJobV1>;
  /** FlinkDeployments (the session clusters). */
  sessionClusters: ObjectReader<FlinkDeploymentV1>;
  /** The session clusters' JobManager Deployments. */
  clusterDeployments: ObjectReader<V1Deployment>;
  store: StateStore<FlinkSessionJobV1, SessionJobInternalState>;
  status: { record(job: FlinkSessionJobV1, status: FlinkSessionJobStatusV1, fence: SideEffectFence): Promise<FlinkSessionJobV1> };
  finalizers: {
    add(job: FlinkSessionJobV1, fence: SideEffectFence): Promise<FlinkSessionJobV1>;
    remove(job: FlinkSessionJobV1, fence: SideEffectFence): Promise<void>;
  };
  /** Moves an Apache (v1beta1) status into the split layout (legacy-migration.ts). */
  legacy: { migrateIfLegacy(job: FlinkSessionJobV1): Promise<{ kind: string; message: string }> };
  /** The session cluster's REST API, its changing calls checked against `fence` right before they are sent. */
  flinkApi(cluster: FlinkDeploymentV1, fence: SideEffectFence): SessionJobFlinkApi;
  /** Fetches the job's jar (spec.job.jarURI; an empty jar without one). */
  fetchJar(spec: FlinkSessionJobSpec): Promise<SessionJobJar>;
  /** `kubernetes.operator.user.artifacts.allowed-schemes` of this operator. */
  allowedJarSchemes: readonly string[];
  fenceFor(signal: AbortSignal): SideEffectFence | undefined;
  /** Forgets what the store remembers of a deleted session job. */
  forgetSessionJob(job: FlinkSessionJobV1): void;
  counters: { fencedOut(): void };
  events: SessionJobEventSink;
  log: ReconcilerLog;
  timings: ReconcilerTimings;
  newJobId(): string;
  now(): number;
}
