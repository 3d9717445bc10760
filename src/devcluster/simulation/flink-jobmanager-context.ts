/**
 * The vocabulary a simulated Flink JobManager process (flink-jobmanager.ts) is built from: its
 * context (pod, launch, shared storage, lineage, HA store, timing, clock), the asynchronous
 * operations it serves, the requests it takes (savepoint triggers, jar runs), and the error the
 * REST layer turns into Flink's `{"errors": [...]}` body.
 *
 * Guarantees: `restHandlerErrorText` writes an error the way Flink ≥ 1.15's AbstractHandler
 * answers a RestHandlerException: `ExceptionUtils.stringifyException` of it, i.e. the class name,
 * the message, a stack frame and the `Caused by:` chain, as one string.
 * Caveats: the stack frames are one simulated frame per exception, not Flink's real ones.
 */
import type { JobManagerLaunch } from './jobmanager-launch.js';
import type { DeploymentRef, LineageRecorder } from './lineage-recorder.js';
import type { SnapshotStorage } from './snapshot-storage.js';
import type { HaMetadataStore } from './ha-metadata.js';
import type { RandomSource } from './simulation-random.js';
import type { SimulatedException } from './flink-job.js';
import type { FlinkProcessLog } from './flink-log-lines.js';

/** An error the REST layer turns into Flink's `{"errors":[message]}` body with this HTTP status. */
export class FlinkRestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'FlinkRestError';
  }
}

export interface JobManagerTiming {
  /** INITIALIZING → RUNNING. */
  readonly jobStartDelayMs: number;
  /** Trigger → COMPLETED for savepoints, stop-with-savepoint and triggered checkpoints. */
  readonly savepointDurationMs: number;
  /** CANCELLING → CANCELED. */
  readonly cancelDurationMs: number;
  /** Savepoint disposal trigger → COMPLETED. */
  readonly disposalDurationMs: number;
  /** Used when the configuration enables checkpointing without an interval of its own; null = off. */
  readonly defaultCheckpointIntervalMs: number | null;
}

export interface JobManagerPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface JobManagerContext {
  readonly pod: JobManagerPod;
  /** The FlinkDeployment this JobManager belongs to (lineage key). */
  readonly deployment: DeploymentRef;
  readonly launch: JobManagerLaunch;
  readonly storage: SnapshotStorage;
  readonly lineage: LineageRecorder;
  /** Null when HA is off (or no HA store is available). */
  readonly ha: HaMetadataStore | null;
  readonly random: RandomSource;
  readonly timing: JobManagerTiming;
  readonly now?: () => number;
  readonly onError?: (error: unknown, what: string) => void;
  /** The container log the process writes (pod-log-book.ts); none when absent. */
  readonly log?: FlinkProcessLog;
  /** A job's parallelism changed in place (new resource requirements): a native JobManager's resource manager follows. */
  readonly onRescale?: (parallelism: number) => void;
}

export type OperationKind = 'savepoint' | 'stop-with-savepoint' | 'checkpoint' | 'savepoint-disposal';

export interface AsyncOperation {
  readonly triggerId: string;
  readonly kind: OperationKind;
  readonly jobId: string | null;
  status: 'IN_PROGRESS' | 'COMPLETED';
  location: string | null;
  checkpointId: number | null;
  failure: SimulatedException | null;
}

export interface SavepointRequest {
  readonly targetDirectory?: string | null;
  readonly cancelJob?: boolean;
  readonly drain?: boolean;
  readonly formatType?: string | null;
  readonly triggerId?: string | null;
}

/**
 * POST /jars/:jarid/run as the JobManager takes it (JarRunRequestBody, query parameters already
 * folded in by the REST layer; JarHandlerUtils.JarHandlerContext and JarRunHandler in Flink).
 */
export interface JarRunRequest {
  readonly jarId: string;
  /** `entryClass` (or `entry-class`); null: the jar manifest's class (not read by the simulation). */
  readonly entryClass: string | null;
  readonly programArgs: readonly string[];
  /** `parallelism`; null: `parallelism.default` of the effective configuration. */
  readonly parallelism: number | null;
  /** `jobId`; null: `$internal.pipeline.job-id` of the effective configuration, else a random id. */
  readonly jobId: string | null;
  readonly savepointPath: string | null;
  readonly allowNonRestoredState: boolean;
  readonly restoreMode: string | null;
  /** `flinkConfiguration` (Flink ≥ 1.17): overlaid on the cluster configuration for this job. */
  readonly flinkConfiguration: ReadonlyMap<string, string>;
}

/** Flink's RestHandlerException class, the exception every REST handler error is wrapped in. */
export const REST_HANDLER_EXCEPTION = 'org.apache.flink.runtime.rest.handler.RestHandlerException';

/**
 * The error text Flink's AbstractHandler sends for a RestHandlerException (Flink ≥ 1.15:
 * `ExceptionUtils.stringifyException(rhe)`): `<class>: <message>`, a stack frame, then each cause
 * as `Caused by: <class>: <message>`.
 */
export function restHandlerErrorText(message: string, causes: ReadonlyArray<{ className: string; message: string }> = []): string {
  let text = `${REST_HANDLER_EXCEPTION}: ${message}\n\tat org.apache.flink.runtime.rest.handler.AbstractHandler.respondAsLeader(AbstractHandler.java:1)`;
  for (const cause of causes) text += `\nCaused by: ${cause.className}: ${cause.message}\n\t... 1 more`;
  return text;
}

/**
 * JarRunHandler's answer when running the program failed: 400 "Could not execute application."
 * (its RestHandlerException), caused by DetachedApplicationRunner's FlinkRuntimeException, caused
 * by `causes`.
 */
export function jarRunFailure(causes: ReadonlyArray<{ className: string; message: string }>): FlinkRestError {
  return new FlinkRestError(
    400,
    restHandlerErrorText('Could not execute application.', [
      { className: 'java.util.concurrent.CompletionException', message: 'org.apache.flink.util.FlinkRuntimeException: Could not execute application.' },
      { className: 'org.apache.flink.util.FlinkRuntimeException', message: 'Could not execute application.' },
      ...causes,
    ]),
  );
}

/**
 * A jar run whose job id the Dispatcher already has (Dispatcher.submitJob →
 * DuplicateJobSubmissionException "Job has already been submitted.", thrown into the program's
 * `execute()` as FlinkException "Failed to execute job '<name>'." and wrapped by PackagedProgram
 * in ProgramInvocationException "The main method caused an error: ...").
 */
export function duplicateJobSubmission(jobName: string): FlinkRestError {
  return jarRunFailure([
    {
      className: 'org.apache.flink.client.program.ProgramInvocationException',
      message: `The main method caused an error: Failed to execute job '${jobName}'.`,
    },
    { className: 'org.apache.flink.util.FlinkException', message: `Failed to execute job '${jobName}'.` },
    { className: 'org.apache.flink.runtime.client.DuplicateJobSubmissionException', message: 'Job has already been submitted.' },
  ]);
}
