/**
 * The lineage record: per FlinkDeployment (namespace/name), everything the simulated JobManagers did
 * that matters for "nothing was repeated or lost": every job submission (with what it was restored
 * from), every savepoint operation, every cancellation, every savepoint disposal, every in-place
 * rescale (new resource requirements: the same job, a new parallelism, no submission). It survives
 * JobManager restarts (it belongs to the simulation, not to a JobManager) and is served at
 * `GET /simulator/lineage` next to the Flink REST API. It is NOT part of Flink's API.
 *
 * On a session cluster several jobs share one record (keyed by the JobManager pods' `app` label, the
 * session FlinkDeployment); every entry carries its job id, and `forJob` / `submissionsByJobId`
 * tell them apart. Jar runs record the jar id and entry class with the submission.
 *
 * Guarantees: entries are appended in the order the simulated events happened; `restoredFrom` is
 * exactly the string the JobManager was given (arg or config), never normalised; a savepoint entry
 * is updated in place when its operation completes or fails (it is never duplicated).
 * Caveats: in memory; `lineage()` returns a deep copy, so callers cannot mutate the record.
 */

export interface LineageSubmission {
  jobId: string;
  /** What the job was restored from, as given (`--fromSavepoint` / `execution.savepoint.path`), or the HA checkpoint. */
  restoredFrom: string | null;
  allowNonRestoredState: boolean;
  parallelism: number;
  podName: string;
  at: string;
  /** `submitted`: the JobManager submitted the job from its args/config; `ha-recovered`: it recovered it from HA metadata. */
  origin: 'submitted' | 'ha-recovered';
  /** Session clusters only: the uploaded jar the job was run from (`POST /jars/:jarid/run`). */
  jarId?: string;
  /** Session clusters only: the run's `entryClass`, null when the request named none. */
  entryClass?: string | null;
}

/** `PUT /jobs/:jobid/resource-requirements` that changed the job's parallelism (the adaptive scheduler restarts it in place). */
export interface LineageRescale {
  jobId: string;
  fromParallelism: number;
  toParallelism: number;
  podName: string;
  at: string;
}

/** Everything the record holds about one Flink job id (a session cluster runs several). */
export interface JobLineage {
  jobId: string;
  submissions: LineageSubmission[];
  savepoints: LineageSavepoint[];
  cancellations: Array<{ jobId: string; at: string }>;
  rescales: LineageRescale[];
}

export interface LineageSavepoint {
  triggerId: string;
  jobId: string;
  kind: 'savepoint' | 'stop-with-savepoint';
  status: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED';
  location: string | null;
  triggeredAt: string;
  completedAt: string | null;
}

export interface LineageRecord {
  deployment: { namespace: string; name: string };
  submissions: LineageSubmission[];
  savepoints: LineageSavepoint[];
  cancellations: Array<{ jobId: string; at: string }>;
  disposals: Array<{ path: string; at: string }>;
  rescales: LineageRescale[];
}

export interface DeploymentRef {
  readonly namespace: string;
  readonly name: string;
}

function emptyRecord(ref: DeploymentRef): LineageRecord {
  return { deployment: { namespace: ref.namespace, name: ref.name }, submissions: [], savepoints: [], cancellations: [], disposals: [], rescales: [] };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export class LineageRecorder {
  private readonly records = new Map<string, LineageRecord>();

  private record(ref: DeploymentRef): LineageRecord {
    const key = `${ref.namespace}/${ref.name}`;
    let record = this.records.get(key);
    if (!record) {
      record = emptyRecord(ref);
      this.records.set(key, record);
    }
    return record;
  }

  submission(ref: DeploymentRef, entry: Omit<LineageSubmission, 'at'>, atMs: number): void {
    this.record(ref).submissions.push({ ...entry, at: iso(atMs) });
  }

  savepointTriggered(ref: DeploymentRef, entry: { triggerId: string; jobId: string; kind: LineageSavepoint['kind'] }, atMs: number): void {
    this.record(ref).savepoints.push({ ...entry, status: 'IN_PROGRESS', location: null, triggeredAt: iso(atMs), completedAt: null });
  }

  savepointFinished(ref: DeploymentRef, triggerId: string, outcome: { status: 'COMPLETED' | 'FAILED'; location: string | null }, atMs: number): void {
    // the newest in-flight entry: a client-chosen trigger id may be reused with a restarted JobManager
    const savepoints = this.record(ref).savepoints;
    let entry: LineageSavepoint | undefined;
    for (let i = savepoints.length - 1; i >= 0 && !entry; i--) {
      if (savepoints[i].triggerId === triggerId && savepoints[i].status === 'IN_PROGRESS') entry = savepoints[i];
    }
    if (!entry) throw new Error(`lineage: unknown savepoint trigger ${triggerId} for ${ref.namespace}/${ref.name}`);
    entry.status = outcome.status;
    entry.location = outcome.location;
    entry.completedAt = iso(atMs);
  }

  cancellation(ref: DeploymentRef, jobId: string, atMs: number): void {
    this.record(ref).cancellations.push({ jobId, at: iso(atMs) });
  }

  disposal(ref: DeploymentRef, path: string, atMs: number): void {
    this.record(ref).disposals.push({ path, at: iso(atMs) });
  }

  rescale(ref: DeploymentRef, entry: Omit<LineageRescale, 'at'>, atMs: number): void {
    this.record(ref).rescales.push({ ...entry, at: iso(atMs) });
  }

  /**
   * The entries of one job id in the record of a cluster (deep copies), e.g. to check a session
   * job's id was submitted once and restored from the one savepoint of its predecessor.
   */
  forJob(namespace: string, name: string, jobId: string): JobLineage {
    const record = this.get(namespace, name);
    const id = jobId.toLowerCase();
    return {
      jobId: id,
      submissions: record.submissions.filter((s) => s.jobId === id),
      savepoints: record.savepoints.filter((s) => s.jobId === id),
      cancellations: record.cancellations.filter((c) => c.jobId === id),
      rescales: record.rescales.filter((r) => r.jobId === id),
    };
  }

  /** Submissions per job id, in the order the ids were first submitted. */
  submissionsByJobId(namespace: string, name: string): Map<string, LineageSubmission[]> {
    const byId = new Map<string, LineageSubmission[]>();
    for (const submission of this.get(namespace, name).submissions) {
      const list = byId.get(submission.jobId) ?? [];
      list.push(submission);
      byId.set(submission.jobId, list);
    }
    return byId;
  }

  /** A deep copy of the record (an empty record when nothing happened for that deployment yet). */
  get(namespace: string, name: string): LineageRecord {
    const record = this.records.get(`${namespace}/${name}`);
    return structuredClone(record ?? emptyRecord({ namespace, name }));
  }
}
