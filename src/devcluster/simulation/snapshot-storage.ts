/**
 * The simulated durable storage for savepoints and checkpoints: the "file system" behind
 * `execution.checkpointing.savepoint-dir` / `execution.checkpointing.dir`. It outlives every
 * simulated JobManager (a JobManager restart does not lose a completed savepoint), and it is the
 * single authority on whether a path can be restored from.
 *
 * Guarantees:
 * - a path is restorable iff a savepoint/checkpoint was completed at it and it was neither disposed
 *   nor subsumed (checkpoint retention), exactly as Flink finds (or does not find) a `_metadata` file;
 * - path spellings Flink treats as the same file (`file:///x`, `file:/x`, `/x`, trailing `/`) are the
 *   same entry.
 * Assumptions: paths are written only by the simulation (a savepoint location is unique by construction).
 * Caveats: in memory only; a new simulation starts with empty storage.
 */

export type SnapshotKind = 'savepoint' | 'checkpoint';

export interface StoredSnapshot {
  /** The location exactly as the JobManager reported it (Flink's Path#toString form). */
  readonly location: string;
  readonly kind: SnapshotKind;
  readonly jobId: string;
  /** The checkpoint id the snapshot carries; a job restored from it continues numbering after it. */
  readonly checkpointId: number;
  readonly completedAt: number;
}

/**
 * The string Flink prints for a path: `file:///x` and `/x` become `file:/x`, no trailing slash.
 * Other schemes (`s3://bucket/x`) keep their form.
 */
export function flinkPathString(path: string): string {
  let p = path.trim();
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (p.startsWith('file://')) p = 'file:' + p.slice('file://'.length).replace(/^localhost(?=\/)/, '');
  else if (p.startsWith('/')) p = 'file:' + p;
  p = p.replace(/^file:\/+/, 'file:/');
  return p;
}

/** Joins a directory and a child name the way Flink's `new Path(parent, child)` prints it. */
export function childPath(dir: string, child: string): string {
  return `${flinkPathString(dir)}/${child}`;
}

export class SnapshotStorage {
  private readonly snapshots = new Map<string, StoredSnapshot>();
  private readonly removed = new Map<string, { reason: 'disposed' | 'subsumed'; at: number }>();
  /** job id → keys of its restorable checkpoints (retention works per job without scanning everything). */
  private readonly checkpointsByJob = new Map<string, Set<string>>();

  /** Records a completed snapshot. */
  write(snapshot: StoredSnapshot): void {
    const key = flinkPathString(snapshot.location);
    this.snapshots.set(key, snapshot);
    this.removed.delete(key);
    if (snapshot.kind === 'checkpoint') {
      let keys = this.checkpointsByJob.get(snapshot.jobId);
      if (!keys) this.checkpointsByJob.set(snapshot.jobId, (keys = new Set()));
      keys.add(key);
    }
  }

  /** The restorable checkpoints (not savepoints) of one job. */
  checkpointsOf(jobId: string): StoredSnapshot[] {
    const out: StoredSnapshot[] = [];
    for (const key of this.checkpointsByJob.get(jobId) ?? []) {
      const snapshot = this.snapshots.get(key);
      if (snapshot) out.push(snapshot);
    }
    return out;
  }

  /** The snapshot restorable at `path`, or undefined when nothing (or nothing any more) is there. */
  find(path: string): StoredSnapshot | undefined {
    return this.snapshots.get(flinkPathString(path));
  }

  /** When a savepoint was disposed (subsumed checkpoints are not remembered). */
  removalOf(path: string): { reason: 'disposed' | 'subsumed'; at: number } | undefined {
    return this.removed.get(flinkPathString(path));
  }

  /** Deletes a snapshot (savepoint disposal or checkpoint subsumption). Returns false when nothing was there. */
  remove(path: string, reason: 'disposed' | 'subsumed', at: number): boolean {
    const key = flinkPathString(path);
    const snapshot = this.snapshots.get(key);
    if (!snapshot) return false;
    this.snapshots.delete(key);
    if (snapshot.kind === 'checkpoint') {
      const keys = this.checkpointsByJob.get(snapshot.jobId);
      keys?.delete(key);
      if (keys && keys.size === 0) this.checkpointsByJob.delete(snapshot.jobId);
    }
    // only disposals are remembered: subsumed checkpoints are many (one per interval per job) and unremarkable
    if (reason === 'disposed') this.removed.set(key, { reason, at });
    return true;
  }

  /** Every restorable snapshot (for tests and the lineage view). */
  list(): StoredSnapshot[] {
    return [...this.snapshots.values()];
  }
}

/** Flink's message when a restore path does not exist (`AbstractFsCheckpointStorageAccess.resolveCheckpointPointer`). */
export function missingSnapshotMessage(path: string): string {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(flinkPathString(path))?.[1] ?? 'file';
  return `Cannot find checkpoint or savepoint file/directory '${path}' on file system '${scheme}'.`;
}
