/**
 * One simulated Flink job inside a simulated JobManager: its JobStatus state machine, the
 * timestamps Flink reports per state, its exception history, and its checkpoint statistics
 * (completed checkpoints and savepoints, failed ones, what it was restored from).
 *
 * Pure state: no timers and no I/O. The JobManager (flink-jobmanager.ts) decides *when* things
 * happen and calls the transition methods; this class enforces *which* transitions are legal.
 *
 * Guarantees: a terminal job (FINISHED, CANCELED, FAILED) never changes state again; checkpoint ids
 * increase strictly (savepoints take ids from the same counter, as in Flink); a job restored from a
 * snapshot continues numbering after that snapshot's checkpoint id; a fail-over (RUNNING →
 * RESTARTING, as Flink's scheduler does on a failure its restart strategy allows) is counted in
 * `restarts` (Flink's `numRestarts`) and its cause kept in the exception history.
 */

export type JobStatus =
  'INITIALIZING' | 'CREATED' | 'RUNNING' | 'FAILING' | 'FAILED' | 'CANCELLING' | 'CANCELED' | 'FINISHED' | 'RESTARTING' | 'SUSPENDED' | 'RECONCILING';

export const ALL_JOB_STATUSES: readonly JobStatus[] = [
  'INITIALIZING',
  'CREATED',
  'RUNNING',
  'FAILING',
  'FAILED',
  'CANCELLING',
  'CANCELED',
  'FINISHED',
  'RESTARTING',
  'SUSPENDED',
  'RECONCILING',
];

/** The id of the simulated job's one vertex (`Source: Simulated Source -> Simulated Sink`). */
export const SIMULATED_VERTEX_ID = 'cbc357ccb763df2852fee8c4fc7d55f2';

const TERMINAL: ReadonlySet<JobStatus> = new Set(['FAILED', 'CANCELED', 'FINISHED']);

export function isGloballyTerminal(state: JobStatus): boolean {
  return TERMINAL.has(state);
}

/** A Java-style exception as Flink serialises it (class, message, stack trace text). */
export interface SimulatedException {
  readonly className: string;
  readonly message: string;
  /** Full `stringifyException` text: "class: message\n\tat ...\nCaused by: ...". */
  readonly stackTrace: string;
  readonly timestamp: number;
}

export function simulatedException(
  className: string,
  message: string,
  timestamp: number,
  causes: Array<{ className: string; message: string }> = [],
): SimulatedException {
  let trace = `${className}: ${message}\n\tat org.apache.flink.simulation.SimulatedJobManager.run(SimulatedJobManager.java:1)`;
  for (const cause of causes) trace += `\nCaused by: ${cause.className}: ${cause.message}\n\t... 1 more`;
  return { className, message, stackTrace: trace, timestamp };
}

export type CheckpointKind = 'CHECKPOINT' | 'SAVEPOINT' | 'SYNC_SAVEPOINT';

export interface CompletedCheckpoint {
  readonly id: number;
  readonly kind: CheckpointKind;
  /** Null when the checkpoint storage is not externally addressable (no checkpoint dir configured). */
  readonly externalPath: string | null;
  readonly triggerTimestamp: number;
  readonly completedTimestamp: number;
  readonly stateSize: number;
  readonly savepointFormat: string | null;
  discarded: boolean;
}

export interface FailedCheckpoint {
  readonly id: number;
  readonly kind: CheckpointKind;
  readonly triggerTimestamp: number;
  readonly failureTimestamp: number;
  readonly failureMessage: string;
}

/** A checkpoint or savepoint triggered and not finished yet (Flink's PendingCheckpointStatistics). */
export interface PendingCheckpoint {
  readonly id: number;
  readonly kind: CheckpointKind;
  readonly triggerTimestamp: number;
}

export interface RestoredSnapshot {
  readonly id: number;
  readonly restoreTimestamp: number;
  readonly isSavepoint: boolean;
  readonly externalPath: string;
}

/** Flink's `web.checkpoints.history` default. */
const CHECKPOINT_HISTORY_SIZE = 10;
const EXCEPTION_HISTORY_SIZE = 16;
/** The statistics summary is computed over at most this many recent checkpoints (bounded memory per job). */
const STATE_SIZE_WINDOW = 1000;

export interface FlinkJobInit {
  readonly jobId: string;
  readonly name: string;
  readonly parallelism: number;
  readonly maxParallelism: number;
  readonly createdAt: number;
}

export class SimulatedFlinkJob {
  readonly jobId: string;
  readonly name: string;
  private parallelismValue: number;
  /** The lower bound of the vertex's parallelism (Flink's min parallelism; 1 until resource requirements change it). */
  private lowerBoundValue = 1;
  readonly maxParallelism: number;
  readonly startTime: number;
  private stateValue: JobStatus = 'INITIALIZING';
  private endTimeValue = -1;
  private lastModification: number;
  readonly timestamps = new Map<JobStatus, number>();
  readonly exceptions: SimulatedException[] = [];
  /** The failure that made the job FAILED (for /execution-result), or null. */
  failureCause: SimulatedException | null = null;
  /** Fail-overs (RUNNING → RESTARTING) since the job was submitted to this JobManager: Flink's `numRestarts`. */
  restarts = 0;
  /** When the job first reached RUNNING in this JobManager, or -1. */
  firstRunningAt = -1;

  private nextCheckpointId = 1;
  readonly history: Array<CompletedCheckpoint | FailedCheckpoint> = [];
  /** Triggered and not finished, by id: listed first in the history as IN_PROGRESS, as Flink does. */
  readonly pending = new Map<number, PendingCheckpoint>();
  completedCount = 0;
  failedCount = 0;
  latestCompleted: CompletedCheckpoint | null = null;
  latestSavepoint: CompletedCheckpoint | null = null;
  latestFailed: FailedCheckpoint | null = null;
  restored: RestoredSnapshot | null = null;
  /** State sizes of the last STATE_SIZE_WINDOW completed checkpoints/savepoints (for the summary). */
  private readonly completedSizes: number[] = [];

  constructor(init: FlinkJobInit) {
    this.jobId = init.jobId;
    this.name = init.name;
    this.parallelismValue = init.parallelism;
    this.maxParallelism = init.maxParallelism;
    this.startTime = init.createdAt;
    this.lastModification = init.createdAt;
    this.timestamps.set('INITIALIZING', init.createdAt);
  }

  get parallelism(): number {
    return this.parallelismValue;
  }

  get parallelismLowerBound(): number {
    return this.lowerBoundValue;
  }

  /**
   * New resource requirements (the adaptive scheduler): the bounds change at once; a RUNNING job
   * restarts with the new parallelism (RUNNING → RESTARTING, not counted as a failure). True when it
   * restarts; the JobManager brings it back to RUNNING.
   */
  rescale(bounds: { lowerBound: number; upperBound: number }, at: number): boolean {
    this.lowerBoundValue = bounds.lowerBound;
    if (this.parallelismValue === bounds.upperBound) return false;
    this.parallelismValue = bounds.upperBound;
    return this.stateValue === 'RUNNING' && this.transition('RESTARTING', at);
  }

  get state(): JobStatus {
    return this.stateValue;
  }

  get endTime(): number {
    return this.endTimeValue;
  }

  get lastModified(): number {
    return this.lastModification;
  }

  get isTerminal(): boolean {
    return isGloballyTerminal(this.stateValue);
  }

  /** Moves the job to `next`. Returns false (and changes nothing) when the job is already terminal. */
  transition(next: JobStatus, at: number): boolean {
    if (this.isTerminal) return false;
    this.stateValue = next;
    this.timestamps.set(next, at);
    this.lastModification = at;
    if (next === 'RUNNING' && this.firstRunningAt < 0) this.firstRunningAt = at;
    if (isGloballyTerminal(next)) this.endTimeValue = at;
    return true;
  }

  /**
   * A failure the restart strategy recovers from: RUNNING → RESTARTING, counted, `exception` kept
   * in the history (the JobManager brings the job back to RUNNING later). False, and nothing
   * changes, unless the job is RUNNING.
   */
  failOver(exception: SimulatedException): boolean {
    if (this.stateValue !== 'RUNNING') return false;
    this.recordException(exception);
    this.restarts++;
    return this.transition('RESTARTING', exception.timestamp);
  }

  /** Records the snapshot the job was restored from; checkpoint numbering continues after it. */
  markRestored(snapshot: RestoredSnapshot): void {
    this.restored = snapshot;
    this.nextCheckpointId = Math.max(this.nextCheckpointId, snapshot.id + 1);
  }

  /** Reserves the next checkpoint id (a triggered checkpoint or savepoint). */
  reserveCheckpointId(): number {
    return this.nextCheckpointId++;
  }

  /** A triggered snapshot is under way (until recordCompleted / recordFailed with its id, or the job ends). */
  recordPending(pending: PendingCheckpoint): void {
    this.pending.set(pending.id, pending);
  }

  recordCompleted(checkpoint: CompletedCheckpoint): void {
    this.pending.delete(checkpoint.id);
    this.completedCount++;
    this.completedSizes.push(checkpoint.stateSize);
    if (this.completedSizes.length > STATE_SIZE_WINDOW) this.completedSizes.splice(0, this.completedSizes.length - STATE_SIZE_WINDOW);
    if (checkpoint.kind === 'CHECKPOINT') this.latestCompleted = checkpoint;
    else this.latestSavepoint = checkpoint;
    this.pushHistory(checkpoint);
  }

  recordFailed(failed: FailedCheckpoint): void {
    this.pending.delete(failed.id);
    this.failedCount++;
    this.latestFailed = failed;
    this.pushHistory(failed);
  }

  /** State sizes of every completed checkpoint (for the statistics summary). */
  get stateSizes(): readonly number[] {
    return this.completedSizes;
  }

  recordException(exception: SimulatedException): void {
    this.exceptions.unshift(exception);
    if (this.exceptions.length > EXCEPTION_HISTORY_SIZE) this.exceptions.length = EXCEPTION_HISTORY_SIZE;
  }

  /** Fails the job globally (terminal FAILED) with `exception`. No-op when already terminal. */
  fail(exception: SimulatedException): boolean {
    if (this.isTerminal) return false;
    this.recordException(exception);
    this.failureCause = exception;
    this.transition('FAILING', exception.timestamp);
    return this.transition('FAILED', exception.timestamp);
  }

  private pushHistory(entry: CompletedCheckpoint | FailedCheckpoint): void {
    this.history.unshift(entry);
    if (this.history.length > CHECKPOINT_HISTORY_SIZE) this.history.length = CHECKPOINT_HISTORY_SIZE;
  }
}
