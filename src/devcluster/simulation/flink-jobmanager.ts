/**
 * A simulated Flink JobManager process: one per JobManager pod container start. It reads its launch
 * (args + mounted configuration) once, submits (or, with HA metadata present, recovers) its job,
 * runs it through INITIALIZING → RUNNING, takes periodic checkpoints, and serves the asynchronous
 * operations of Flink's REST API (savepoints, stop-with-savepoint, checkpoints, savepoint disposal,
 * cancellation). The REST shapes live in flink-rest-api.ts; this class is the behaviour.
 *
 * Guarantees:
 * - a new JobManager (new pod, or a restarted container) is a new process: in-flight operations and
 *   their trigger ids of the previous one are gone (GET of an old trigger id → 404, as in Flink);
 * - savepoint locations are unique: `<dir>/savepoint-<first 6 hex of job id>-<12 random hex>`;
 * - a job restored from a path that was never written, or was disposed or subsumed, FAILS during
 *   initialisation with Flink's FileNotFoundException text;
 * - every submission and every savepoint operation is recorded in the lineage before it takes effect.
 * - with `simulator.job.restart-every`, the job fails over every that long in RUNNING: RESTARTING
 *   (counted as Flink's numRestarts, the cause in the exception history, in-flight checkpoints and
 *   savepoints aborted as Flink's SchedulerBase.restoreState aborts pending checkpoints), RUNNING
 *   again after the job start delay (standing in for the restart strategy's delay);
 * - with `simulator.checkpoint.stall-after`, checkpoints stop completing that long after the job
 *   first ran: each stays IN_PROGRESS until `execution.checkpointing.timeout` expires it (FAILED,
 *   "Checkpoint expired before completing."), one periodic checkpoint at a time (Flink's default
 *   max-concurrent-checkpoints 1); the job keeps RUNNING, savepoints still complete.
 * - a session JobManager (`jobmanager` / `kubernetes-session`) starts with no job and runs the jobs
 *   submitted through `POST /jars/:jarid/run` (`runJar`), each with its own settings (the cluster
 *   configuration overlaid with the run's `flinkConfiguration`), checkpoint timer, savepoints and
 *   lineage entries; a job id it already has is refused (DuplicateJobSubmissionException).
 * Assumptions: an application JobManager runs exactly one job; time is the injected clock (`now`)
 * and Node's timers.
 * Caveats: a session cluster keeps no HA metadata (its jobs are not recovered by a new process);
 * besides `simulator.job.restart-every`, no restart strategy (a failure is global and
 * terminal); TaskManagers are not required for the job to run; reactive mode does not rescale
 * (new resource requirements do: rescaleJob, flink-resource-requirements.ts);
 * the JobManager stays up after its job ended whatever `execution.shutdown-on-application-finish`
 * says (the operator renders `false`; Flink's default `true` would shut the cluster down).
 */
import { type JobManagerLaunch, jobNameOf } from './jobmanager-launch.js';
import type { DeploymentRef } from './lineage-recorder.js';
import { childPath, missingSnapshotMessage } from './snapshot-storage.js';
import type { HaClusterRef } from './ha-metadata.js';
import { randomHex } from './simulation-random.js';
import { type CheckpointKind, type SimulatedException, SimulatedFlinkJob, simulatedException } from './flink-job.js';
import { type FlinkClusterSettings, readClusterSettings } from './flink-configuration.js';
import { UploadedJars } from './flink-jar-uploads.js';
import { AsyncOperations } from './flink-async-operations.js';
import {
  type AsyncOperation,
  FlinkRestError,
  type JarRunRequest,
  type JobManagerContext,
  type JobManagerPod,
  type OperationKind,
  type SavepointRequest,
  duplicateJobSubmission,
  jarRunFailure,
  restHandlerErrorText,
} from './flink-jobmanager-context.js';

/** Flink's CheckpointFailureReason.JOB_FAILOVER_REGION, with which a fail-over aborts pending checkpoints. */
const FAILOVER_ABORT_MESSAGE = 'FailoverRegion is restarting.';
/** Flink's CheckpointFailureReason.CHECKPOINT_EXPIRED. */
const CHECKPOINT_EXPIRED_MESSAGE = 'Checkpoint expired before completing.';

const NOT_RUNNING_MESSAGE =
  'Checkpoint triggering task Source: Simulated Source (1/1) of job %JOB% is not being executed at the moment. Aborting checkpoint. Failure reason: Not all required tasks are currently running.';

export class SimulatedJobManager {
  readonly startedAt: number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly jobs = new Map<string, SimulatedFlinkJob>();
  private readonly operations: AsyncOperations;
  /** Periodic checkpoint timer of each job that checkpoints. */
  private readonly checkpointTimers = new Map<string, NodeJS.Timeout>();
  /** Settings of jobs run through the REST API (jar run with `flinkConfiguration`); others use the launch's. */
  private readonly runSettings = new Map<string, FlinkClusterSettings>();
  /** Jars uploaded to this process (`POST /jars/upload`); gone with the process, as Flink's `web.upload.dir`. */
  readonly jars: UploadedJars;
  private stopped = false;
  private readonly now: () => number;
  private readonly haCluster: HaClusterRef | null;

  constructor(private readonly ctx: JobManagerContext) {
    this.now = ctx.now ?? Date.now;
    this.startedAt = this.now();
    const ha = ctx.launch.settings.highAvailability;
    this.jars = new UploadedJars(ctx.random, this.now);
    this.operations = new AsyncOperations({ lineage: ctx.lineage, deployment: ctx.deployment, random: ctx.random, now: this.now });
    // Session clusters keep no HA metadata in the simulation (see design/003b "Session clusters").
    const session = ctx.launch.args.role === 'session-jobmanager';
    this.haCluster = ha.enabled && ctx.ha && !session ? { namespace: ctx.pod.namespace, clusterId: ha.clusterId ?? ctx.deployment.name } : null;
  }

  get launch(): JobManagerLaunch {
    return this.ctx.launch;
  }

  get pod(): JobManagerPod {
    return this.ctx.pod;
  }

  get deployment(): DeploymentRef {
    return this.ctx.deployment;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** False while `simulator.rest.unavailable` keeps the REST endpoint down (connection refused). */
  restAvailable(): boolean {
    return !this.stopped && this.now() - this.startedAt >= this.ctx.launch.settings.simulator.restUnavailableForMs;
  }

  /** All jobs, oldest first. */
  listJobs(): SimulatedFlinkJob[] {
    return [...this.jobs.values()];
  }

  getJob(jobId: string): SimulatedFlinkJob | undefined {
    return this.jobs.get(jobId.toLowerCase());
  }

  /**
   * Starts the process: an application JobManager recovers its job from HA metadata when present,
   * otherwise submits the job from its launch. Resolves once the job exists (INITIALIZING).
   */
  async start(): Promise<void> {
    if (this.ctx.launch.args.role !== 'application-jobmanager') return;
    const recovered = this.haCluster ? await this.ctx.ha!.load(this.haCluster) : null;
    if (this.stopped) return;
    const settings = this.ctx.launch.settings;
    if (recovered) {
      const restoreFrom = recovered.latestCheckpoint?.location ?? recovered.restoredFrom;
      this.submit(recovered.jobId, restoreFrom, recovered.allowNonRestoredState, recovered.parallelism, 'ha-recovered');
    } else {
      const jobId = settings.pinnedJobId ?? randomHex(this.ctx.random, 32);
      this.submit(jobId, this.ctx.launch.restoreFrom, this.ctx.launch.allowNonRestoredState, settings.parallelism, 'submitted');
    }
  }

  /** Kills the process: timers stop, in-flight operations never complete (their lineage entries become FAILED). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const timer of this.checkpointTimers.values()) clearInterval(timer);
    this.checkpointTimers.clear();
    this.operations.failInFlightSavepoints();
  }

  private submit(
    jobId: string,
    restoreFrom: string | null,
    allowNonRestoredState: boolean,
    parallelism: number,
    origin: 'submitted' | 'ha-recovered',
    run?: { readonly settings: FlinkClusterSettings; readonly jarId: string; readonly entryClass: string | null },
  ): void {
    const now = this.now();
    const name = run ? jobNameOf(run.entryClass) : this.ctx.launch.jobName;
    const job = new SimulatedFlinkJob({ jobId, name, parallelism, maxParallelism: 128, createdAt: now });
    this.jobs.set(jobId, job);
    if (run) this.runSettings.set(jobId, run.settings);
    this.ctx.log?.jobSubmitted(job.name, jobId);
    this.ctx.lineage.submission(
      this.ctx.deployment,
      {
        jobId,
        restoredFrom: restoreFrom,
        allowNonRestoredState,
        parallelism,
        podName: this.ctx.pod.name,
        origin,
        ...(run ? { jarId: run.jarId, entryClass: run.entryClass } : {}),
      },
      now,
    );
    if (this.haCluster) {
      this.haWrite('jobSubmitted', () => this.ctx.ha!.jobSubmitted(this.haCluster!, { jobId, restoredFrom: restoreFrom, allowNonRestoredState, parallelism }));
    }
    const delay = this.settingsOf(job).simulator.jobStartDelayMs ?? this.ctx.timing.jobStartDelayMs;
    this.later(delay, () => this.initialize(job, restoreFrom));
  }

  /** The settings `job` runs with: the launch's, overlaid with its jar run's `flinkConfiguration`. */
  settingsOf(job: SimulatedFlinkJob): FlinkClusterSettings {
    return this.runSettings.get(job.jobId) ?? this.ctx.launch.settings;
  }

  /**
   * POST /jars/:jarid/run on a session cluster (Flink's JarRunHandler → DetachedApplicationRunner →
   * Dispatcher.submitJob): submits a job from an uploaded jar and returns its id once it is
   * INITIALIZING. A job id this cluster already has (running or terminated) is refused as the
   * Dispatcher refuses it (DuplicateJobSubmissionException, "Job has already been submitted."),
   * which JarRunHandler answers with 400 "Could not execute application.".
   */
  runJar(request: JarRunRequest): string {
    if (!this.jars.has(request.jarId)) {
      throw new FlinkRestError(400, restHandlerErrorText(`Jar file ${this.jars.pathOf(request.jarId)} does not exist`));
    }
    const config = new Map(this.ctx.launch.config);
    for (const [key, value] of request.flinkConfiguration) config.set(key, value);
    if (request.jobId !== null) config.set('$internal.pipeline.job-id', request.jobId);
    let settings: FlinkClusterSettings;
    try {
      settings = readClusterSettings(config);
    } catch (error) {
      throw jarRunFailure([{ className: 'java.lang.IllegalArgumentException', message: error instanceof Error ? error.message : String(error) }]);
    }
    const jobId = settings.pinnedJobId ?? randomHex(this.ctx.random, 32);
    if (this.jobs.has(jobId)) throw duplicateJobSubmission(jobNameOf(request.entryClass));
    const restoreFrom = request.savepointPath ?? settings.savepointPath;
    const parallelism = request.parallelism ?? settings.parallelism;
    this.submit(jobId, restoreFrom, request.allowNonRestoredState, parallelism, 'submitted', {
      settings,
      jarId: request.jarId,
      entryClass: request.entryClass,
    });
    return jobId;
  }

  private initialize(job: SimulatedFlinkJob, restoreFrom: string | null): void {
    const now = this.now();
    if (restoreFrom !== null) {
      const snapshot = this.ctx.storage.find(restoreFrom);
      if (!snapshot) {
        const cause = { className: 'java.io.FileNotFoundException', message: missingSnapshotMessage(restoreFrom) };
        this.failJob(job, simulatedException('org.apache.flink.runtime.client.JobInitializationException', 'Could not start the JobMaster.', now, [cause]));
        return;
      }
      job.markRestored({ id: snapshot.checkpointId, restoreTimestamp: now, isSavepoint: snapshot.kind === 'savepoint', externalPath: snapshot.location });
      this.ctx.log?.restoring(job.jobId, { id: snapshot.checkpointId, ...snapshot }, snapshot.kind === 'savepoint');
    }
    job.transition('CREATED', now);
    job.transition('RUNNING', now);
    this.ctx.log?.jobState(job.name, job.jobId, 'CREATED', 'RUNNING');
    this.startCheckpointing(job);
    this.scheduleFailOver(job);
    const sim = this.settingsOf(job).simulator;
    if (sim.jobFailAfterMs !== null) {
      this.later(sim.jobFailAfterMs, () => {
        const cause = { className: 'java.lang.RuntimeException', message: `Simulated job failure (${'simulator.job.fail-after'}=${sim.jobFailAfterMs}ms)` };
        this.failJob(
          job,
          simulatedException('org.apache.flink.runtime.JobException', 'Recovery is suppressed by NoRestartBackoffTimeStrategy', this.now(), [cause]),
        );
      });
    }
    if (sim.jobFinishAfterMs !== null) {
      this.later(sim.jobFinishAfterMs, () => {
        if (job.state === 'RUNNING') this.endJob(job, 'FINISHED');
      });
    }
  }

  private startCheckpointing(job: SimulatedFlinkJob): void {
    const interval = this.settingsOf(job).checkpointIntervalMs ?? this.ctx.timing.defaultCheckpointIntervalMs;
    if (interval === null || interval <= 0 || this.checkpointTimers.has(job.jobId)) return;
    const timer = setInterval(() => {
      if (job.state !== 'RUNNING') return;
      const now = this.now();
      if (!this.checkpointsStalled(job, now)) this.completeCheckpoint(job, 'CHECKPOINT', now);
      // max-concurrent-checkpoints 1: no new periodic checkpoint while a stalled one is pending
      else if (![...job.pending.values()].some((p) => p.kind === 'CHECKPOINT')) this.stallCheckpoint(job, job.reserveCheckpointId(), now, null);
    }, interval);
    timer.unref();
    this.checkpointTimers.set(job.jobId, timer);
  }

  /** `simulator.checkpoint.stall-after` has passed since the job first ran: no checkpoint completes any more. */
  private checkpointsStalled(job: SimulatedFlinkJob, now: number): boolean {
    const after = this.settingsOf(job).simulator.checkpointStallAfterMs;
    return after !== null && job.firstRunningAt >= 0 && now - job.firstRunningAt >= after;
  }

  /** A checkpoint that never completes: IN_PROGRESS until the checkpoint timeout expires it (and fails `op`, if triggered). */
  private stallCheckpoint(job: SimulatedFlinkJob, id: number, triggeredAt: number, op: AsyncOperation | null): void {
    job.recordPending({ id, kind: 'CHECKPOINT', triggerTimestamp: triggeredAt });
    const remaining = Math.max(0, triggeredAt + this.settingsOf(job).checkpointTimeoutMs - this.now());
    this.later(remaining, () => {
      if (!job.pending.has(id)) return; // aborted by a fail-over or settled otherwise
      const now = this.now();
      job.recordFailed({ id, kind: 'CHECKPOINT', triggerTimestamp: triggeredAt, failureTimestamp: now, failureMessage: CHECKPOINT_EXPIRED_MESSAGE });
      if (op)
        this.operations.finish(op, { failure: simulatedException('org.apache.flink.runtime.checkpoint.CheckpointException', CHECKPOINT_EXPIRED_MESSAGE, now) });
    });
  }

  /** `simulator.job.restart-every`: the next fail-over of `job`, that long after it (re)entered RUNNING. */
  private scheduleFailOver(job: SimulatedFlinkJob): void {
    const every = this.settingsOf(job).simulator.jobRestartEveryMs;
    if (every === null) return;
    this.later(every, () => {
      const now = this.now();
      const cause = simulatedException('java.lang.RuntimeException', `Simulated task failure (simulator.job.restart-every=${every}ms)`, now);
      if (job.failOver(cause)) this.restart(job, now, cause);
    });
  }

  /** RESTARTING (a fail-over or a rescale): pending snapshots aborted, RUNNING again after the job start delay. */
  private restart(job: SimulatedFlinkJob, now: number, cause?: SimulatedException): void {
    this.ctx.log?.jobState(job.name, job.jobId, 'RUNNING', 'RESTARTING', cause);
    this.abortInFlightSnapshots(job, now);
    this.later(this.settingsOf(job).simulator.jobStartDelayMs ?? this.ctx.timing.jobStartDelayMs, () => {
      if (job.state !== 'RESTARTING') return;
      job.transition('RUNNING', this.now());
      this.ctx.log?.jobState(job.name, job.jobId, 'RESTARTING', 'RUNNING');
      this.scheduleFailOver(job);
    });
  }

  /** Accepted resource requirements (flink-resource-requirements.ts): persisted in HA first (Flink's JobGraphStore), then the job restarts with them. */
  rescaleJob(job: SimulatedFlinkJob, bounds: { lowerBound: number; upperBound: number }): void {
    const [now, ref, to] = [this.now(), this.ctx.deployment, bounds.upperBound];
    const submitted = this.ctx.lineage.forJob(ref.namespace, ref.name, job.jobId).submissions.at(-1);
    if (job.parallelism !== to && submitted) {
      if (this.haCluster) this.haWrite('jobResourceRequirements', () => this.ctx.ha!.jobSubmitted(this.haCluster!, { ...submitted, parallelism: to }));
      this.ctx.lineage.rescale(ref, { jobId: job.jobId, fromParallelism: job.parallelism, toParallelism: to, podName: this.ctx.pod.name }, now);
      this.ctx.onRescale?.(to);
    }
    if (job.rescale(bounds, now)) this.restart(job, now);
  }

  /** A fail-over aborts the pending checkpoints and savepoints of the job (their operations complete with the failure). */
  private abortInFlightSnapshots(job: SimulatedFlinkJob, now: number): void {
    for (const pending of [...job.pending.values()]) {
      job.recordFailed({
        id: pending.id,
        kind: pending.kind,
        triggerTimestamp: pending.triggerTimestamp,
        failureTimestamp: now,
        failureMessage: FAILOVER_ABORT_MESSAGE,
      });
    }
    for (const op of this.operations.all()) {
      if (op.jobId === job.jobId && op.status === 'IN_PROGRESS' && op.kind !== 'savepoint-disposal') {
        this.operations.finish(op, { failure: simulatedException('org.apache.flink.runtime.checkpoint.CheckpointException', FAILOVER_ABORT_MESSAGE, now) });
      }
    }
  }

  private stateSizeFor(job: SimulatedFlinkJob, id: number): number {
    return 4096 * job.parallelism + 512 * (id % 7);
  }

  /** Completes a checkpoint (periodic or triggered) now; returns its id, or null when it failed. */
  private completeCheckpoint(job: SimulatedFlinkJob, kind: CheckpointKind, triggeredAt: number, reservedId?: number): number | null {
    const now = this.now();
    const id = reservedId ?? job.reserveCheckpointId();
    if (this.settingsOf(job).simulator.checkpointFailure) {
      job.recordFailed({
        id,
        kind,
        triggerTimestamp: triggeredAt,
        failureTimestamp: now,
        failureMessage: 'Checkpoint was declined (simulator.checkpoint.failure=fail).',
      });
      return null;
    }
    const dir = this.settingsOf(job).checkpointDir;
    const externalPath = dir === null ? null : childPath(dir, `${job.jobId}/chk-${id}`);
    job.recordCompleted({
      id,
      kind,
      externalPath,
      triggerTimestamp: triggeredAt,
      completedTimestamp: now,
      stateSize: this.stateSizeFor(job, id),
      savepointFormat: null,
      discarded: false,
    });
    if (reservedId === undefined) this.ctx.log?.checkpointTriggered(id, kind, triggeredAt, job.jobId);
    this.ctx.log?.checkpointCompleted(id, job.jobId, this.stateSizeFor(job, id), now - triggeredAt);
    if (externalPath !== null) {
      this.ctx.storage.write({ location: externalPath, kind: 'checkpoint', jobId: job.jobId, checkpointId: id, completedAt: now });
      if (this.haCluster) {
        // As Flink's CompletedCheckpointStore: the new pointer is made durable in the HA store first,
        // older checkpoints are discarded only afterwards (and not at all by a dead process), so the
        // HA metadata never points at a discarded checkpoint.
        const pointer = { id, location: externalPath };
        this.ctx.ha!.checkpointCompleted(this.haCluster, job.jobId, pointer).then(
          () => {
            if (!this.stopped) this.subsumeOldCheckpoints(job, id);
          },
          (error: unknown) => this.ctx.onError?.(error, 'HA metadata checkpointCompleted'),
        );
      } else {
        this.subsumeOldCheckpoints(job, id);
      }
    }
    return id;
  }

  /** Of the checkpoints up to `upToId` (the newest durable one), keeps only `num-retained` in storage; older ones are subsumed. */
  private subsumeOldCheckpoints(job: SimulatedFlinkJob, upToId: number): void {
    const retained = this.settingsOf(job).retainedCheckpoints;
    const mine = this.ctx.storage
      .checkpointsOf(job.jobId)
      .filter((s) => s.checkpointId <= upToId)
      .sort((a, b) => b.checkpointId - a.checkpointId);
    for (const old of mine.slice(retained)) {
      this.ctx.storage.remove(old.location, 'subsumed', this.now());
      for (const entry of job.history) if ('externalPath' in entry && entry.externalPath === old.location) entry.discarded = true;
    }
  }

  private failJob(job: SimulatedFlinkJob, exception: SimulatedException): void {
    const from = job.state;
    if (!job.fail(exception)) return;
    this.ctx.log?.jobState(job.name, job.jobId, from, 'FAILING', exception);
    this.ctx.log?.jobState(job.name, job.jobId, 'FAILING', 'FAILED');
    this.jobEnded(job);
  }

  private endJob(job: SimulatedFlinkJob, state: 'FINISHED' | 'CANCELED'): void {
    const from = job.state;
    if (!job.transition(state, this.now())) return;
    this.ctx.log?.jobState(job.name, job.jobId, from, state);
    this.jobEnded(job);
  }

  private jobEnded(job: SimulatedFlinkJob): void {
    const timer = this.checkpointTimers.get(job.jobId);
    if (timer) clearInterval(timer);
    this.checkpointTimers.delete(job.jobId);
    const now = this.now();
    for (const op of this.operations.all()) {
      if (op.jobId === job.jobId && op.status === 'IN_PROGRESS' && op.kind !== 'savepoint-disposal') {
        this.operations.finish(op, {
          failure: simulatedException(
            'org.apache.flink.runtime.checkpoint.CheckpointException',
            `Job ${job.jobId} reached terminal state ${job.state} before the operation completed.`,
            now,
          ),
        });
      }
    }
    if (this.haCluster) this.haWrite('jobTerminated', () => this.ctx.ha!.jobTerminated(this.haCluster!, job.jobId));
  }

  // ---- REST-facing operations -------------------------------------------------------------

  /** PATCH /jobs/:id?mode=cancel. */
  cancel(jobId: string): void {
    const job = this.getJob(jobId);
    if (!job) throw new FlinkRestError(404, 'Job could not be found.');
    if (job.isTerminal) {
      throw new FlinkRestError(409, `Job cancellation failed because the job has already reached another terminal state (${job.state}).`);
    }
    if (job.state === 'CANCELLING') return;
    this.ctx.lineage.cancellation(this.ctx.deployment, job.jobId, this.now());
    this.ctx.log?.jobState(job.name, job.jobId, job.state, 'CANCELLING');
    job.transition('CANCELLING', this.now());
    this.later(this.ctx.timing.cancelDurationMs, () => this.endJob(job, 'CANCELED'));
  }

  /** POST /jobs/:id/savepoints and POST /jobs/:id/stop. Returns the trigger id (request-id). */
  triggerSavepoint(jobId: string, request: SavepointRequest, kind: 'savepoint' | 'stop-with-savepoint'): string {
    const existing = request.triggerId ? this.operations.get(request.triggerId) : undefined;
    if (existing) return existing.triggerId; // client-provided trigger ids make the trigger idempotent
    const job = this.getJob(jobId);
    const targetDirectory = request.targetDirectory ?? (job ? this.settingsOf(job) : this.ctx.launch.settings).savepointDir;
    if (!targetDirectory) {
      const property = kind === 'savepoint' ? 'target-directory' : 'targetDirectory';
      throw new FlinkRestError(400, `Config key [execution.checkpointing.savepoint-dir] is not set. Property [${property}] must be provided.`);
    }
    const op = this.operations.create(kind, job?.jobId ?? jobId.toLowerCase(), request.triggerId ?? null);
    const triggeredAt = this.now();
    this.ctx.lineage.savepointTriggered(this.ctx.deployment, { triggerId: op.triggerId, jobId: op.jobId!, kind }, triggeredAt);
    if (!job || job.isTerminal) {
      this.operations.finish(op, {
        failure: simulatedException('org.apache.flink.runtime.messages.FlinkJobNotFoundException', `Could not find Flink job (${jobId})`, triggeredAt),
      });
      return op.triggerId;
    }
    if (job.state !== 'RUNNING') {
      this.operations.finish(op, {
        failure: simulatedException('org.apache.flink.runtime.checkpoint.CheckpointException', NOT_RUNNING_MESSAGE.replace('%JOB%', job.jobId), triggeredAt),
      });
      return op.triggerId;
    }
    const mode = this.settingsOf(job).simulator.savepointFailure;
    const id = job.reserveCheckpointId();
    job.recordPending({ id, kind: kind === 'savepoint' ? 'SAVEPOINT' : 'SYNC_SAVEPOINT', triggerTimestamp: triggeredAt });
    this.ctx.log?.savepointTriggered(job.jobId, kind === 'savepoint' && request.cancelJob ? 'cancel-with-savepoint' : kind);
    this.ctx.log?.checkpointTriggered(id, kind === 'savepoint' ? 'SAVEPOINT' : 'SYNC_SAVEPOINT', triggeredAt, job.jobId);
    if (mode === 'hang') return op.triggerId;
    const duration = this.settingsOf(job).simulator.savepointDurationMs ?? this.ctx.timing.savepointDurationMs;
    this.later(duration, () => {
      const now = this.now();
      if (job.state !== 'RUNNING' || op.status === 'COMPLETED') return; // jobEnded or a fail-over already failed the operation
      if (mode === 'fail') {
        job.recordFailed({
          id,
          kind: kind === 'savepoint' ? 'SAVEPOINT' : 'SYNC_SAVEPOINT',
          triggerTimestamp: triggeredAt,
          failureTimestamp: now,
          failureMessage: 'Simulated savepoint failure (simulator.savepoint.failure=fail).',
        });
        const cause = { className: 'java.lang.RuntimeException', message: 'Simulated savepoint failure (simulator.savepoint.failure=fail)' };
        this.operations.finish(op, {
          failure: simulatedException('org.apache.flink.runtime.checkpoint.CheckpointException', 'Checkpoint was declined.', now, [cause]),
        });
        return;
      }
      const location = childPath(targetDirectory, `savepoint-${job.jobId.slice(0, 6)}-${randomHex(this.ctx.random, 12)}`);
      const ckKind: CheckpointKind = kind === 'savepoint' ? 'SAVEPOINT' : 'SYNC_SAVEPOINT';
      job.recordCompleted({
        id,
        kind: ckKind,
        externalPath: location,
        triggerTimestamp: triggeredAt,
        completedTimestamp: now,
        stateSize: this.stateSizeFor(job, id),
        savepointFormat: request.formatType ?? 'CANONICAL',
        discarded: false,
      });
      this.ctx.log?.checkpointCompleted(id, job.jobId, this.stateSizeFor(job, id), now - triggeredAt);
      this.ctx.storage.write({ location, kind: 'savepoint', jobId: job.jobId, checkpointId: id, completedAt: now });
      // Flink completes the stop/cancel future after the job has terminated; both happen in this
      // same tick, so no observer can tell the order. The operation is settled first so that
      // jobEnded() does not fail it as "interrupted".
      this.operations.finish(op, { location });
      if (kind === 'stop-with-savepoint') this.endJob(job, 'FINISHED');
      else if (request.cancelJob) {
        this.ctx.lineage.cancellation(this.ctx.deployment, job.jobId, now);
        this.endJob(job, 'CANCELED');
      }
    });
    return op.triggerId;
  }

  /** POST /jobs/:id/checkpoints (Flink ≥ 1.19). */
  triggerCheckpoint(jobId: string, request: { checkpointType?: string | null; triggerId?: string | null }): string {
    const existing = request.triggerId ? this.operations.get(request.triggerId) : undefined;
    if (existing) return existing.triggerId;
    const job = this.getJob(jobId);
    const op = this.operations.create('checkpoint', job?.jobId ?? jobId.toLowerCase(), request.triggerId ?? null);
    const triggeredAt = this.now();
    if (!job || job.state !== 'RUNNING') {
      const message = job ? NOT_RUNNING_MESSAGE.replace('%JOB%', job.jobId) : `Could not find Flink job (${jobId})`;
      this.operations.finish(op, { failure: simulatedException('org.apache.flink.runtime.checkpoint.CheckpointException', message, triggeredAt) });
      return op.triggerId;
    }
    const id = job.reserveCheckpointId();
    this.later(this.settingsOf(job).simulator.savepointDurationMs ?? this.ctx.timing.savepointDurationMs, () => {
      if (job.state !== 'RUNNING' || op.status === 'COMPLETED') return;
      if (this.checkpointsStalled(job, this.now())) {
        this.stallCheckpoint(job, id, triggeredAt, op);
        return;
      }
      const done = this.completeCheckpoint(job, 'CHECKPOINT', triggeredAt, id);
      if (done === null)
        this.operations.finish(op, {
          failure: simulatedException('org.apache.flink.runtime.checkpoint.CheckpointException', 'Checkpoint was declined.', this.now()),
        });
      else this.operations.finish(op, { checkpointId: done });
    });
    return op.triggerId;
  }

  /** POST /savepoint-disposal. */
  disposeSavepoint(path: string): string {
    const op = this.operations.create('savepoint-disposal', null, null);
    this.later(this.ctx.timing.disposalDurationMs, () => {
      const now = this.now();
      if (this.ctx.storage.remove(path, 'disposed', now)) {
        this.ctx.lineage.disposal(this.ctx.deployment, path, now);
        this.operations.finish(op, {});
      } else {
        this.operations.finish(op, { failure: simulatedException('java.io.FileNotFoundException', missingSnapshotMessage(path), now) });
      }
    });
    return op.triggerId;
  }

  /** The operation behind a trigger id, checked against the job it was triggered for (404 otherwise). */
  operation(kind: OperationKind, triggerId: string, jobId: string | null): AsyncOperation {
    return this.operations.lookup(kind, triggerId, jobId);
  }

  private later(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      try {
        fn();
      } catch (error) {
        this.ctx.onError?.(error, 'simulated JobManager timer');
      }
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private haWrite(what: string, write: () => Promise<void>): void {
    write().catch((error: unknown) => this.ctx.onError?.(error, `HA metadata ${what}`));
  }
}
