/**
 * The working context of one reconcile pass, shared by the reconciler's step modules.
 */
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { InternalState } from '../api/internal-state.js';
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
  api: FlinkJobApi;
  settings: DeploymentOperatorSettings;
  /** Milliseconds until something time-based (a periodic savepoint) is due, if sooner than the steady interval. */
  wakeUpInMs?: number;
}

/** What step modules may use besides the dependencies. */
export interface PassContext {
  readonly deps: FlinkDeploymentReconcilerDependencies;
  /** Writes `fn` through the state store and makes the result the pass's state. */
  save(pass: Pass, fn: StateUpdateFunction): Promise<void>;
  /** Emits an event once per (deployment, reason, key) in this process. */
  announceOnce(deployment: FlinkDeploymentV1, key: string, type: 'Normal' | 'Warning', reason: string, message: string): void;
}
