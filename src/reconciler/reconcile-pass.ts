/**
 * The working context of one reconcile pass, shared by the reconciler's step modules, and the
 * fencing of the pass's Flink REST calls.
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { InternalState } from '../api/internal-state.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import type { StateUpdateFunction } from '../state/state-store.js';
import type { DeploymentOperatorSettings } from './deployment-operator-settings.js';
import type { FlinkDeploymentReconcilerDependencies, FlinkJobApi } from './reconciler-dependencies.js';
import type { PassOutcome } from './status-builder.js';

/** Requeue now (`continue`), after the progress-check interval, or after the steady interval. */
export type StepResult = 'continue' | 'progress' | 'steady';

export interface Pass {
  deployment: FlinkDeploymentV1;
  /** The state as last read or written in this pass. */
  state: InternalState;
  outcome: PassOutcome;
  /** The deployment's Flink REST API; its calls that change something are fenced. */
  api: FlinkJobApi;
  /** The leadership term this pass acts in; checked before every side effect. */
  fence: SideEffectFence;
  settings: DeploymentOperatorSettings;
  /** Milliseconds until something time-based (a periodic savepoint) is due, if sooner than the steady interval. */
  wakeUpInMs?: number;
  /** Why Flink's REST API could not be asked in this pass (it should have answered: the JobManager is available). */
  restUnreachable?: string;
}

/** What step modules may use besides the dependencies. */
export interface PassContext {
  readonly deps: FlinkDeploymentReconcilerDependencies;
  /**
   * Writes `fn` through the state store, decided on the pass's current state (its revision is the
   * precondition) and fenced by the pass's term; the result becomes the pass's state.
   */
  save(pass: Pass, fn: StateUpdateFunction): Promise<void>;
  /** Emits an event once per (deployment, reason, key) in this process. */
  announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** Forgets the announcements of a deployment that is gone. */
  forgetAnnouncements(deployment: FlinkDeploymentV1): void;
}

/** `api` with every call that changes something in Flink preceded by `fence.check`. */
export function fencedFlinkApi(api: FlinkJobApi, fence: SideEffectFence): FlinkJobApi {
  return {
    getConfig: () => api.getConfig(),
    listJobs: () => api.listJobs(),
    getSavepointStatus: (jobId, triggerId) => api.getSavepointStatus(jobId, triggerId),
    getCheckpoints: (jobId) => api.getCheckpoints(jobId),
    getExceptions: (jobId) => api.getExceptions(jobId),
    getDisposalStatus: (triggerId) => api.getDisposalStatus(triggerId),
    cancelJob: (jobId) => {
      fence.check(`cancel Flink job ${jobId}`);
      return api.cancelJob(jobId);
    },
    stopWithSavepoint: (jobId, options) => {
      fence.check(`stop Flink job ${jobId} with a savepoint`);
      return api.stopWithSavepoint(jobId, options);
    },
    triggerSavepoint: (jobId, options) => {
      fence.check(`trigger a savepoint of Flink job ${jobId}`);
      return api.triggerSavepoint(jobId, options);
    },
    disposeSavepoint: (savepointPath) => {
      fence.check(`dispose savepoint ${savepointPath}`);
      return api.disposeSavepoint(savepointPath);
    },
  };
}
