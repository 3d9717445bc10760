/**
 * What a simulated Flink process writes to its container log, worded as Flink writes it and laid
 * out by the official image's log4j console pattern
 * `%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n` (the empty NDC prints `[]`), in UTC.
 *
 * Messages (apache/flink sources): ClusterEntrypoint `Starting {}.`, `Shutting {} down with
 * application status {}. Diagnostics {}.`, `Terminating cluster entrypoint process {} with exit
 * code {}.`, `Could not start cluster entrypoint {}.`; SignalHandler `RECEIVED SIGNAL 15: SIGTERM.
 * Shutting down as requested.`; Dispatcher `Received JobGraph submission '{}' ({}).`, `Submitting
 * job '{}' ({}).`; JobMaster `Initializing job '{}' ({}).`, `Triggering {}savepoint for job {}.`,
 * `Triggering stop-with-savepoint for job {}.`; ExecutionGraph `Job {} ({}) switched from state {}
 * to {}.`; CheckpointCoordinator `Starting job {} from savepoint {} ({})`, `Reset the checkpoint ID
 * of job {} to {}.`, `Restoring job {} from {}.` (CompletedCheckpoint.toString: `<type> <id> @
 * <timestamp> for <job> located at <pointer>`), `Triggering checkpoint {} (type={}) @ {} for job
 * {}.`, `Completed checkpoint {} for job {} ({} bytes, checkpointDuration={} ms,
 * finalizationTime={} ms).`; TaskExecutor `Successful registration at resource manager {} under
 * registration id {}.`.
 * Caveats: a few lines per event, not Flink's full start-up banner; no stack traces beyond the
 * simulated exception text.
 */
import type { CheckpointKind, JobStatus, SimulatedException } from './flink-job.js';

const ENTRYPOINT_LOGGER = 'org.apache.flink.runtime.entrypoint.ClusterEntrypoint';
const DISPATCHER_LOGGER = 'org.apache.flink.runtime.dispatcher.StandaloneDispatcher';
const JOBMASTER_LOGGER = 'org.apache.flink.runtime.jobmaster.JobMaster';
const EXECUTION_GRAPH_LOGGER = 'org.apache.flink.runtime.executiongraph.ExecutionGraph';
const CHECKPOINT_LOGGER = 'org.apache.flink.runtime.checkpoint.CheckpointCoordinator';
const SIGNAL_LOGGER = 'org.apache.flink.runtime.util.SignalHandler';
const TASK_EXECUTOR_LOGGER = 'org.apache.flink.runtime.taskexecutor.TaskExecutor';
/** ApplicationStatus.UNKNOWN's process exit code (a cluster closed externally). */
const UNKNOWN_EXIT_CODE = 1445;

type Level = 'INFO' | 'WARN' | 'ERROR';

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** One line of the log4j console layout. */
export function log4jLine(at: number, level: Level, logger: string, message: string): string {
  const d = new Date(at);
  const date = `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())},${String(d.getUTCMilliseconds()).padStart(3, '0')}`;
  return `${date} ${level.padEnd(5)} ${logger.padEnd(60)} [] - ${message}`;
}

const CHECKPOINT_TYPE_NAMES: Record<CheckpointKind, string> = { CHECKPOINT: 'Checkpoint', SAVEPOINT: 'Savepoint', SYNC_SAVEPOINT: 'Terminate Savepoint' };

function checkpointTypeText(kind: CheckpointKind): string {
  if (kind === 'CHECKPOINT') return "CheckpointType{name='Checkpoint', sharingFilesStrategy=FORWARD_BACKWARD}";
  const action = kind === 'SAVEPOINT' ? 'NONE' : 'TERMINATE';
  return `SavepointType{name='${CHECKPOINT_TYPE_NAMES[kind]}', postCheckpointAction=${action}, formatType=CANONICAL}`;
}

/** The log of one Flink process (one container instance); `write` appends a finished line. */
export class FlinkProcessLog {
  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  private line(level: Level, logger: string, message: string): void {
    for (const text of message.split('\n')) this.write(log4jLine(this.now(), level, logger, text));
  }

  // ---- process lifecycle (ClusterEntrypoint) ----

  entrypointStarting(entrypoint: string): void {
    this.line('INFO', ENTRYPOINT_LOGGER, `Starting ${entrypoint}.`);
  }

  entrypointFailed(entrypoint: string, error: string): void {
    this.line('ERROR', ENTRYPOINT_LOGGER, `Could not start cluster entrypoint ${entrypoint}.\n${error}`);
  }

  /** SIGTERM from the kubelet: the shutdown hook closes the cluster. */
  terminatedBySignal(entrypoint: string): void {
    this.line('INFO', SIGNAL_LOGGER, 'RECEIVED SIGNAL 15: SIGTERM. Shutting down as requested.');
    this.line(
      'INFO',
      ENTRYPOINT_LOGGER,
      `Shutting ${entrypoint} down with application status UNKNOWN. Diagnostics Cluster entrypoint has been closed externally..`,
    );
    this.line('INFO', ENTRYPOINT_LOGGER, `Terminating cluster entrypoint process ${entrypoint} with exit code ${UNKNOWN_EXIT_CODE}.`);
  }

  // ---- jobs (Dispatcher, JobMaster, ExecutionGraph) ----

  jobSubmitted(jobName: string, jobId: string): void {
    this.line('INFO', DISPATCHER_LOGGER, `Received JobGraph submission '${jobName}' (${jobId}).`);
    this.line('INFO', DISPATCHER_LOGGER, `Submitting job '${jobName}' (${jobId}).`);
    this.line('INFO', JOBMASTER_LOGGER, `Initializing job '${jobName}' (${jobId}).`);
  }

  jobState(jobName: string, jobId: string, from: JobStatus, to: JobStatus, cause?: SimulatedException): void {
    const level: Level = to === 'FAILING' || to === 'FAILED' || to === 'RESTARTING' ? 'WARN' : 'INFO';
    const message = `Job ${jobName} (${jobId}) switched from state ${from} to ${to}.`;
    this.line(level, EXECUTION_GRAPH_LOGGER, cause ? `${message}\n${cause.stackTrace}` : message);
  }

  // ---- snapshots (CheckpointCoordinator) ----

  /** The restore of a job at start: from a savepoint (given on the command line) or a retained checkpoint (HA). */
  restoring(jobId: string, snapshot: { id: number; kind: 'checkpoint' | 'savepoint'; completedAt: number; location: string }, fromSavepoint: boolean): void {
    if (fromSavepoint) {
      this.line('INFO', CHECKPOINT_LOGGER, `Starting job ${jobId} from savepoint ${snapshot.location} ()`);
      this.line('INFO', CHECKPOINT_LOGGER, `Reset the checkpoint ID of job ${jobId} to ${snapshot.id + 1}.`);
    }
    const type = snapshot.kind === 'savepoint' ? 'Savepoint' : 'Checkpoint';
    this.line(
      'INFO',
      CHECKPOINT_LOGGER,
      `Restoring job ${jobId} from ${type} ${snapshot.id} @ ${snapshot.completedAt} for ${jobId} located at ${snapshot.location}.`,
    );
  }

  savepointTriggered(jobId: string, kind: 'savepoint' | 'cancel-with-savepoint' | 'stop-with-savepoint'): void {
    const message =
      kind === 'stop-with-savepoint'
        ? `Triggering stop-with-savepoint for job ${jobId}.`
        : `Triggering ${kind === 'cancel-with-savepoint' ? 'cancel-with-' : ''}savepoint for job ${jobId}.`;
    this.line('INFO', JOBMASTER_LOGGER, message);
  }

  checkpointTriggered(id: number, kind: CheckpointKind, triggeredAt: number, jobId: string): void {
    this.line('INFO', CHECKPOINT_LOGGER, `Triggering checkpoint ${id} (type=${checkpointTypeText(kind)}) @ ${triggeredAt} for job ${jobId}.`);
  }

  checkpointCompleted(id: number, jobId: string, bytes: number, durationMs: number): void {
    this.line(
      'INFO',
      CHECKPOINT_LOGGER,
      `Completed checkpoint ${id} for job ${jobId} (${bytes} bytes, checkpointDuration=${durationMs} ms, finalizationTime=0 ms).`,
    );
  }

  // ---- TaskManager ----

  taskManagerRegistered(resourceManagerAddress: string, registrationId: string): void {
    this.line('INFO', TASK_EXECUTOR_LOGGER, `Successful registration at resource manager ${resourceManagerAddress} under registration id ${registrationId}.`);
  }
}

/** The entry point class a JobManager process runs (`ClusterEntrypoint` subclass simple name). */
export function entrypointClassName(role: string, native: boolean): string {
  if (role === 'application-jobmanager') return native ? 'KubernetesApplicationClusterEntrypoint' : 'StandaloneApplicationClusterEntryPoint';
  return native ? 'KubernetesSessionClusterEntrypoint' : 'StandaloneSessionClusterEntrypoint';
}
