/**
 * Flink Kubernetes HA metadata as the simulation keeps it: what a JobManager with
 * `high-availability.type: kubernetes` writes to the ConfigMap `<cluster-id>-cluster-config-map`
 * and reads back when it restarts (the JobGraph of its job, the checkpoint id counter, the latest
 * completed checkpoints).
 *
 * The ConfigMap carries Flink's labels (`app=<cluster-id>`, `configmap-type=high-availability`,
 * `type=flink-native-kubernetes`, the ones the operator's HA checks and HA cleanup select on) and
 * Flink's key names (`jobGraph-<jobId>`, `checkpointID-counter`, `completedCheckpoint<19-digit id>`);
 * the values are small JSON documents instead of Flink's serialized state handles. It has no owner
 * reference, as in Flink's standalone mode: it survives the JobManager Deployment, and only an
 * explicit delete (by the operator) removes it.
 *
 * Guarantees (both implementations): writes for one cluster are applied in call order; `load`
 * observes every write whose promise resolved.
 * Caveats: the Kubernetes implementation writes through the API server (merge patches, one write
 * per event); a write that fails is logged and dropped, as a JobManager that cannot reach the API
 * server would lose that update (the next checkpoint writes the full pointer again).
 */

export interface HaCheckpointPointer {
  readonly id: number;
  readonly location: string;
}

export interface HaJobRecord {
  readonly jobId: string;
  /** The restore settings the job was originally submitted with (part of the JobGraph in Flink). */
  readonly restoredFrom: string | null;
  readonly allowNonRestoredState: boolean;
  readonly parallelism: number;
  /** Newest completed checkpoint still referenced, or null when none completed yet. */
  readonly latestCheckpoint: HaCheckpointPointer | null;
}

export interface HaClusterRef {
  readonly namespace: string;
  readonly clusterId: string;
}

export interface HaMetadataStore {
  /** The job recorded in the cluster's HA metadata, or null when there is none (no ConfigMap or no job in it). */
  load(cluster: HaClusterRef): Promise<HaJobRecord | null>;
  /** Records a submitted (or recovered) job's JobGraph. */
  jobSubmitted(cluster: HaClusterRef, job: Omit<HaJobRecord, 'latestCheckpoint'>): Promise<void>;
  /** Records a completed checkpoint as the latest one; older pointers are removed. */
  checkpointCompleted(cluster: HaClusterRef, jobId: string, checkpoint: HaCheckpointPointer): Promise<void>;
  /** A globally terminal job's metadata is removed (Flink's HA cleanup for a finished job). */
  jobTerminated(cluster: HaClusterRef, jobId: string): Promise<void>;
}

export const HA_CONFIGMAP_SUFFIX = '-cluster-config-map';
export const HA_CHECKPOINT_COUNTER_KEY = 'checkpointID-counter';
export const HA_JOBGRAPH_PREFIX = 'jobGraph-';
export const HA_COMPLETED_CHECKPOINT_PREFIX = 'completedCheckpoint';

export function haConfigMapName(clusterId: string): string {
  return `${clusterId}${HA_CONFIGMAP_SUFFIX}`;
}

export function haConfigMapLabels(clusterId: string): Record<string, string> {
  return { app: clusterId, 'configmap-type': 'high-availability', type: 'flink-native-kubernetes' };
}

export function completedCheckpointKey(id: number): string {
  return `${HA_COMPLETED_CHECKPOINT_PREFIX}${String(id).padStart(19, '0')}`;
}

/** Reads a job record out of HA ConfigMap data (the first jobGraph entry). */
export function haRecordFromData(data: Record<string, string> | undefined): HaJobRecord | null {
  if (!data) return null;
  const graphKey = Object.keys(data).find((k) => k.startsWith(HA_JOBGRAPH_PREFIX));
  if (!graphKey) return null;
  const graph = JSON.parse(data[graphKey]) as Omit<HaJobRecord, 'latestCheckpoint'>;
  let latest: HaCheckpointPointer | null = null;
  for (const [key, value] of Object.entries(data)) {
    if (!key.startsWith(HA_COMPLETED_CHECKPOINT_PREFIX)) continue;
    const pointer = JSON.parse(value) as HaCheckpointPointer;
    if (!latest || pointer.id > latest.id) latest = pointer;
  }
  return { ...graph, latestCheckpoint: latest };
}

/** The data changes (null = delete key) that record `job` as submitted. */
export function jobSubmittedData(job: Omit<HaJobRecord, 'latestCheckpoint'>): Record<string, string | null> {
  return {
    [`${HA_JOBGRAPH_PREFIX}${job.jobId}`]: JSON.stringify({
      jobId: job.jobId,
      restoredFrom: job.restoredFrom,
      allowNonRestoredState: job.allowNonRestoredState,
      parallelism: job.parallelism,
    }),
  };
}

/** The data changes that make `checkpoint` the only retained pointer. */
export function checkpointCompletedData(existing: Record<string, string> | undefined, checkpoint: HaCheckpointPointer): Record<string, string | null> {
  const changes: Record<string, string | null> = {};
  for (const key of Object.keys(existing ?? {})) if (key.startsWith(HA_COMPLETED_CHECKPOINT_PREFIX)) changes[key] = null;
  changes[completedCheckpointKey(checkpoint.id)] = JSON.stringify(checkpoint);
  changes[HA_CHECKPOINT_COUNTER_KEY] = String(checkpoint.id + 1);
  return changes;
}

/** The data changes that remove a terminated job's entries. */
export function jobTerminatedData(existing: Record<string, string> | undefined, jobId: string): Record<string, string | null> {
  const changes: Record<string, string | null> = {};
  for (const key of Object.keys(existing ?? {})) {
    if (key === `${HA_JOBGRAPH_PREFIX}${jobId}` || key.startsWith(HA_COMPLETED_CHECKPOINT_PREFIX) || key === HA_CHECKPOINT_COUNTER_KEY) changes[key] = null;
  }
  return changes;
}

function applyChanges(data: Record<string, string>, changes: Record<string, string | null>): void {
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete data[k];
    else data[k] = v;
  }
}

/** HA metadata held in memory (unit tests; or a simulation without an API server). */
export class InMemoryHaMetadataStore implements HaMetadataStore {
  readonly configMaps = new Map<string, Record<string, string>>();

  private key(c: HaClusterRef): string {
    return `${c.namespace}/${haConfigMapName(c.clusterId)}`;
  }

  load(cluster: HaClusterRef): Promise<HaJobRecord | null> {
    return Promise.resolve(haRecordFromData(this.configMaps.get(this.key(cluster))));
  }

  private update(cluster: HaClusterRef, changes: (data: Record<string, string> | undefined) => Record<string, string | null>): void {
    const existing = this.configMaps.get(this.key(cluster));
    const data = { ...(existing ?? {}) };
    applyChanges(data, changes(existing));
    this.configMaps.set(this.key(cluster), data);
  }

  jobSubmitted(cluster: HaClusterRef, job: Omit<HaJobRecord, 'latestCheckpoint'>): Promise<void> {
    this.update(cluster, () => jobSubmittedData(job));
    return Promise.resolve();
  }

  checkpointCompleted(cluster: HaClusterRef, _jobId: string, checkpoint: HaCheckpointPointer): Promise<void> {
    this.update(cluster, (existing) => checkpointCompletedData(existing, checkpoint));
    return Promise.resolve();
  }

  jobTerminated(cluster: HaClusterRef, jobId: string): Promise<void> {
    if (this.configMaps.has(this.key(cluster))) this.update(cluster, (existing) => jobTerminatedData(existing, jobId));
    return Promise.resolve();
  }

  /** What the operator does in a stateless upgrade or on deletion: drop the HA ConfigMap. */
  delete(cluster: HaClusterRef): void {
    this.configMaps.delete(this.key(cluster));
  }
}
