/**
 * What a step of one pass works with: the deployment, what was observed, the fenced Flink REST
 * API, the settings, and the pass's state cursor (the state as last read or written in this pass;
 * `save` is its only writer). Steps return their result (reconcile-step.ts StepResult); they share
 * nothing else.
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkJobResourceRequirements } from '../flink/flink-rest-types.js';
import type { InternalState } from '../api/internal-state.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import type { StateUpdateFunction } from '../state/state-store.js';
import type { DeploymentOperatorSettings } from './deployment-operator-settings.js';
import type { Observation } from './observation.js';
import type { FlinkDeploymentReconcilerDependencies, FlinkJobApi } from './reconciler-dependencies.js';

export interface StepContext {
  readonly deps: FlinkDeploymentReconcilerDependencies;
  readonly deployment: FlinkDeploymentV1;
  readonly observed: Observation;
  /** The deployment's Flink REST API; its calls that change something are fenced. */
  readonly api: FlinkJobApi;
  /** The leadership term this pass acts in; checked before every side effect. */
  readonly fence: SideEffectFence;
  readonly settings: DeploymentOperatorSettings;
  /** The operator's default configuration for this deployment (flat, scoped); specs are read over it. */
  readonly configurationDefaults: Readonly<Record<string, string>>;
  /** The state as last read or written in this pass. */
  state(): InternalState;
  /**
   * Writes `fn` through the state store, decided on the pass's current state (its revision is the
   * precondition) and fenced by the pass's term; the result becomes the pass's state.
   */
  save(fn: StateUpdateFunction): Promise<InternalState>;
  /** Emits an event once per (deployment, reason, key) in this process. */
  announceOnce(type: 'Normal' | 'Warning', reason: string, key: string, message: string): void;
}

/**
 * The pass's state cursor: the state it read, replaced by every write it makes. Every write is
 * fenced by the pass's term and decided on the revision the cursor holds (the store refuses it with
 * StatePreconditionError when the state changed under the pass).
 */
export class PassState {
  private current: InternalState;

  constructor(
    private readonly deps: Pick<FlinkDeploymentReconcilerDependencies, 'store'>,
    private readonly deployment: FlinkDeploymentV1,
    private readonly fence: SideEffectFence,
    state: InternalState,
  ) {
    this.current = state;
  }

  get(): InternalState {
    return this.current;
  }

  async save(fn: StateUpdateFunction): Promise<InternalState> {
    this.current = await this.deps.store.update(this.deployment, fn, { fence: this.fence, basedOnRevision: this.current.revision });
    return this.current;
  }
}

/** The context of one step: `passState` is its state cursor, `announce` its once-per-key event sink. */
export function stepContext(
  parts: Omit<StepContext, 'state' | 'save' | 'announceOnce'>,
  passState: PassState,
  announce: (type: 'Normal' | 'Warning', reason: string, key: string, message: string) => void,
): StepContext {
  return { ...parts, state: () => passState.get(), save: (fn) => passState.save(fn), announceOnce: announce };
}

/** `api` with every call that changes something in Flink preceded by `fence.check`. */
export function fencedFlinkApi(api: FlinkJobApi, fence: SideEffectFence): FlinkJobApi {
  return {
    getConfig: () => api.getConfig(),
    listJobs: () => api.listJobs(),
    getSavepointStatus: (jobId, triggerId) => api.getSavepointStatus(jobId, triggerId),
    getCheckpoints: (jobId) => api.getCheckpoints(jobId),
    getCheckpointStatus: (jobId, triggerId) => api.getCheckpointStatus(jobId, triggerId),
    getExceptions: (jobId) => api.getExceptions(jobId),
    getJobMetrics: (jobId, names) => api.getJobMetrics(jobId, names),
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
    triggerCheckpoint: (jobId, checkpointType, triggerId) => {
      fence.check(`trigger a checkpoint of Flink job ${jobId}`);
      return api.triggerCheckpoint(jobId, checkpointType, triggerId);
    },
    disposeSavepoint: (savepointPath) => {
      fence.check(`dispose savepoint ${savepointPath}`);
      return api.disposeSavepoint(savepointPath);
    },
    ...fencedResourceRequirements(api, fence),
  };
}

/** The resource-requirements calls of `api`, where it has them, the PUT fenced. */
function fencedResourceRequirements(api: FlinkJobApi, fence: SideEffectFence): Pick<FlinkJobApi, 'getResourceRequirements' | 'updateResourceRequirements'> {
  const get = api.getResourceRequirements?.bind(api);
  const put = api.updateResourceRequirements?.bind(api);
  if (!get || !put) return {};
  return {
    getResourceRequirements: get,
    updateResourceRequirements: (jobId: string, requirements: FlinkJobResourceRequirements) => {
      fence.check(`rescale Flink job ${jobId} in place`);
      return put(jobId, requirements);
    },
  };
}
