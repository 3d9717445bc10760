/**
 * The steps the decision function (decide.ts) chooses from, and what executing one returns.
 *
 * A step is data: it names one side effect (or none) and carries every value the executor needs,
 * so a table test of `decide` can say exactly what a pass will do. The executor
 * (step-executor.ts) performs one step per pass, always intent → side effect → result, each arrow
 * a write to the state ConfigMap where the step has one (design/005 tabulates them).
 */
import type { DeploymentPhase } from '../api/deployment-phase.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { SnapshotResourceRef } from '../api/internal-state.js';
import type { GatherableFact, Observation } from './observation.js';

/** An event to emit once per (deployment, reason, key) in this process. */
export interface Announcement {
  type: 'Normal' | 'Warning';
  reason: string;
  key: string;
  message: string;
}

/** A new deployment of the cluster: the intent recorded first (job id pinned), then applied. */
export interface DeployIntent {
  /** DEPLOYING records `spec` as reconciled; ROLLING_BACK deploys lastStableSpec and keeps the user's spec. */
  phase: 'DEPLOYING' | 'ROLLING_BACK';
  /** The spec to record as reconciled (DEPLOYING). */
  spec?: FlinkDeploymentSpec;
  generation?: number;
  /** The savepoint or checkpoint the new job restores from; none: without state (or last-state through HA). */
  restoreFrom?: string;
  /** Keep this job id (last-state: the new JobManager recovers it from Flink's HA metadata). */
  keepJobId?: string;
  /** Delete the running JobManager and TaskManager Deployments before applying (a restart of an unchanged cluster). */
  replaceRunningCluster?: boolean;
  /** The Submit event's words for why, e.g. "upgrade to generation 4". */
  why: string;
}

export interface SavepointRequest {
  triggerType: 'MANUAL' | 'PERIODIC' | 'UPGRADE';
  /** Stop the job with the savepoint (upgrade, suspend, deletion). */
  stopJob: boolean;
  jobId: string;
  /** The spec whose configuration names the target directory and format. */
  spec: FlinkDeploymentSpec;
  nonce?: number;
  /** Taken for this user-created FlinkStateSnapshot (MANUAL). */
  snapshotResource?: SnapshotResourceRef;
  /** Its trigger was sent by a state that is gone: adopt this trigger id (and its time) and follow it, without sending anything. */
  inFlight?: { triggerId: string; triggeredAt: number };
  /** The snapshot resource's spec.savepoint.path and formatType, over the configuration's. */
  targetDirectory?: string;
  formatType?: 'CANONICAL' | 'NATIVE';
}

/** A checkpoint through Flink's trigger endpoint (POST /jobs/:id/checkpoints, Flink 1.19+ here). */
export interface CheckpointRequest {
  triggerType: 'MANUAL' | 'PERIODIC';
  jobId: string;
  /** FULL or INCREMENTAL (`kubernetes.operator.checkpoint.type`, FULL by default as in the Apache operator). */
  checkpointType: 'FULL' | 'INCREMENTAL';
  nonce?: number;
  /** Taken for this user-created FlinkStateSnapshot (MANUAL). */
  snapshotResource?: SnapshotResourceRef;
  /** Its trigger was sent by a state that is gone: adopt this trigger id (and its time) and follow it, without sending anything. */
  inFlight?: { triggerId: string; triggeredAt: number };
}

export type ReconcileStep =
  /** No side effect: gather a fact the decision needs (decide is asked again with it). */
  | { kind: 'gather'; fact: GatherableFact }
  /** Nothing to do now; `error` is what the status says is wrong, with what to do. */
  | { kind: 'wait'; requeue: 'progress' | 'steady'; error?: string; wakeUpInMs?: number }
  | { kind: 'deploy'; intent: DeployIntent }
  /** DEPLOYING / ROLLING_BACK: apply the pinned deployment, then record it deployed. */
  | { kind: 'apply-pinned' }
  /** Intent (pending savepoint, STOPPING when it stops the job), then the trigger. */
  | { kind: 'start-savepoint'; request: SavepointRequest }
  | { kind: 'follow-savepoint' }
  /** Intent (pendingCheckpoint with its trigger id), then the trigger. */
  | { kind: 'start-checkpoint'; request: CheckpointRequest }
  | { kind: 'follow-checkpoint' }
  /** Record the suspended spec (SUSPENDING), keep the suspend savepoint on the Flink ConfigMap, delete the cluster (SUSPENDED). */
  | { kind: 'suspend'; spec: FlinkDeploymentSpec; generation: number; savepoint?: string }
  /** Delete the JobManager and TaskManager Deployments, then enter `then`. */
  | { kind: 'shut-down'; then: Extract<DeploymentPhase, 'SUSPENDED' | 'FINISHED'> }
  /** SCALE: record the spec, then set the TaskManager replicas (no restart). */
  | { kind: 'rescale'; spec: FlinkDeploymentSpec; generation: number }
  /** SCALE (native, Flink 1.18+, adaptive scheduler): read the bounds, record them with the spec, PUT them (inplace-scaling-steps.ts). */
  | { kind: 'scale-in-place'; spec: FlinkDeploymentSpec; generation: number }
  /** A recorded in-place rescale: settled by reading the bounds back from Flink, never sent again. */
  | { kind: 'follow-in-place-scaling' }
  | { kind: 'scale-task-managers'; replicas: number }
  /** DEPLOYED → RUNNING: the deployed spec ran; it becomes the stable spec. */
  | { kind: 'mark-running' }
  /** Record a change that needs no redeploy (or a suspended spec's change). */
  | { kind: 'acknowledge'; spec: FlinkDeploymentSpec; generation: number }
  /** Carry out the oldest FlinkStateSnapshot write the state owes (snapshot-resource-steps.ts), then drop it. */
  | { kind: 'publish-snapshot-resource' }
  /** A user's FlinkStateSnapshot this job cannot take: taken up and FAILED with `error`, in one write (published next). */
  | { kind: 'refuse-user-snapshot'; snapshot: SnapshotResourceRef; snapshotType: 'SAVEPOINT' | 'CHECKPOINT'; error: string }
  /** Delete the operator's checkpoint resources beyond `state.checkpoints.num-retained` (nothing is lost: Flink keeps the checkpoints). */
  | { kind: 'trim-checkpoint-resources'; names: string[] }
  /** Dispose savepoints past the history limits (and those the size rules dropped), then drop them. */
  | { kind: 'trim-history' }
  /** The job FAILED and is not restarted: its exception into status.error. */
  | { kind: 'report-failed-job'; jobId: string };

/** What a decision says besides its step: events to emit and a status error that holds whatever the step does. */
export interface Decision {
  step: ReconcileStep;
  announce?: Announcement;
  /** An error the status shows for this pass (e.g. drift, a missing JobManager being recovered). */
  error?: string;
  /** A metric to bump with this decision. */
  count?: 'drift';
}

/** When to look again: now, after the progress-check interval, or after the steady interval. */
export type Requeue = 'continue' | 'progress' | 'steady';

/** What executing a step returns. */
export interface StepResult {
  requeue: Requeue;
  /** What went wrong, with what to do (into status.error). */
  error?: string;
  /** Milliseconds until something time-based is due, if sooner than the steady interval. */
  wakeUpInMs?: number;
  /** What the step changed in the world that the status should show now (e.g. the JobManager is DEPLOYING). */
  observed?: Partial<Observation>;
}
