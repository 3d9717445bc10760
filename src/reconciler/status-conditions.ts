/**
 * The `Running` condition of a FlinkDeployment, as the Apache operator sets it, beside this
 * operator's own `Ready` condition (status-builder.ts), so that tooling written for the Apache
 * operator (`kubectl wait --for=condition=Running flinkdeployment/x`, dashboards) reads the same.
 *
 * Apache's rules (flink-kubernetes-operator-api: status/FlinkDeploymentStatus
 * .setRunningConditionIfRequired, utils/ConditionsUtils; set at the end of every reconcile by
 * FlinkDeploymentController):
 * - only once a spec has been deployed (the last reconciled spec exists); before, no condition;
 * - application mode (a `job`): status `True` iff `status.jobStatus.state` is RUNNING; reason the
 *   state in CamelCase (`Running`, `Suspended`, `Failed`, `Reconciling`, `Finished`, ...), message
 *   `Job status <STATE>`;
 * - session mode (no `job`): `True` iff `status.jobManagerDeploymentStatus` is READY; reason and
 *   message those of Apache's JobManagerDeploymentStatus (`JobManagerReady`, `JobManager is running
 *   and ready to receive REST API calls`, ...);
 * - `lastTransitionTime` kept while the status stays the same, now when it changes.
 * FlinkSessionJobs get none: Apache's FlinkSessionJobStatus has no conditions.
 *
 * Differences from `Ready`: `Running` says only whether the job (or session cluster) runs; `Ready`
 * also says why not, with the operator's error, and is True while suspended as asked.
 * Caveats: Apache replaces the whole list with this one condition; here it is appended after
 * Ready. Apache writes lastTransitionTime with nanoseconds; here in seconds, as every condition.
 */
import type { Condition, FlinkJobState, JobManagerDeploymentStatus } from '../api/flink-deployment-status.js';

/** The condition type (Apache FlinkDeploymentStatus.CONDITION_TYPE_RUNNING). */
export const RUNNING_CONDITION_TYPE = 'Running';

/** Reason and message of each JobManagerDeploymentStatus (Apache api/status/JobManagerDeploymentStatus). */
const JOB_MANAGER_STATUS_TEXT: Readonly<Record<JobManagerDeploymentStatus, { reason: string; message: string }>> = {
  READY: { reason: 'JobManagerReady', message: 'JobManager is running and ready to receive REST API calls' },
  DEPLOYED_NOT_READY: { reason: 'DeployedNotReady', message: 'JobManager is running but not yet ready to receive REST API calls' },
  DEPLOYING: { reason: 'JobManagerIsDeploying', message: 'JobManager process is starting up' },
  MISSING: { reason: 'JobManagerDeploymentMissing', message: 'JobManager deployment not found' },
  ERROR: { reason: 'Error', message: 'JobManager deployment failed' },
};

/** What the condition is computed from: the status being built and whether a spec was ever deployed. */
export interface RunningConditionInputs {
  /** A spec has been deployed (Apache: the last reconciled spec deserializes). */
  readonly deployed: boolean;
  /** Application mode (the spec has a job). */
  readonly hasJob: boolean;
  /** status.jobStatus.state being written (application mode). */
  readonly jobState?: FlinkJobState;
  /** status.jobManagerDeploymentStatus being written (session mode). */
  readonly jobManager: JobManagerDeploymentStatus;
}

/** `RUNNING` → `Running` (Apache ConditionsUtils.toCamelCase: lower case, first letter upper). */
function camelCase(state: string): string {
  const lower = state.toLowerCase();
  return lower.charAt(0).toUpperCase() + lower.slice(1);
}

/** The Running condition, or undefined before anything was deployed. `previous`: the conditions written before. */
export function runningCondition(inputs: RunningConditionInputs, previous: readonly Condition[] | undefined, now: string): Condition | undefined {
  if (!inputs.deployed) return undefined;
  let status: Condition['status'];
  let reason: string;
  let message: string;
  if (inputs.hasJob) {
    const state = inputs.jobState ?? 'RECONCILING';
    status = state === 'RUNNING' ? 'True' : 'False';
    reason = camelCase(state);
    message = `Job status ${state}`;
  } else {
    status = inputs.jobManager === 'READY' ? 'True' : 'False';
    ({ reason, message } = JOB_MANAGER_STATUS_TEXT[inputs.jobManager]);
  }
  const before = previous?.find((c) => c.type === RUNNING_CONDITION_TYPE);
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : now;
  return { type: RUNNING_CONDITION_TYPE, status, reason, message, lastTransitionTime };
}
