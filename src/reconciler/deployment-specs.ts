/**
 * Pure answers about the specs a state holds: which one the cluster runs, where a new job of a spec
 * restores from, and how a spec is recorded once reconciled (the rewrites the Apache operator makes).
 */
import { isDeployedPhase } from '../api/deployment-phase.js';
import { effectiveFlatConfiguration } from '../api/default-flink-configuration.js';
import { isHighAvailabilityEnabled } from '../api/flink-configuration.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { AnyInternalState, InternalState } from '../api/internal-state.js';

/** `spec` with `job.state: running` (the state a deployment records its spec with). */
export function withRunningState(spec: FlinkDeploymentSpec): FlinkDeploymentSpec {
  const copy = structuredClone(spec);
  if (copy.job) copy.job.state = 'running';
  return copy;
}

/** The spec the cluster runs: the last stable one while rolling back or rolled back, else the reconciled one. */
export function deployedSpecOf(state: InternalState): FlinkDeploymentSpec | undefined {
  return state.phase === 'ROLLING_BACK' || state.phase === 'ROLLED_BACK' ? state.lastStableSpec : state.lastReconciledSpec;
}

/** The generation of the spec the cluster runs. */
export function deployedGenerationOf(state: InternalState): number | undefined {
  return state.phase === 'ROLLING_BACK' || state.phase === 'ROLLED_BACK' ? state.lastStableGeneration : state.lastReconciledGeneration;
}

/**
 * The newest savepoint the state knows: the one a stop just took, else the newest in the history.
 * On a deployed cluster `upgradeSavepointPath` is not a pending restore: this operator clears it
 * when the deployment is made, and a state migrated from the Apache operator (which leaves it set)
 * carries there what that deployment restored from (restorePathOfDeployment).
 */
export function newestSavepointOf(state: InternalState): string | undefined {
  const pending = isDeployedPhase(state.phase) ? undefined : state.upgradeSavepointPath;
  return pending ?? state.savepointHistory.at(-1)?.location;
}

/** What the current deployment restored from: recorded by this operator, or left by the Apache operator in upgradeSavepointPath. */
export function restorePathOfDeployment(state: InternalState): string | undefined {
  return state.deployedFrom ?? (isDeployedPhase(state.phase) ? state.upgradeSavepointPath : undefined);
}

/** Where a new job of `desired` restores from: nothing when stateless, else the newest savepoint. */
export function restorePathFor(desired: FlinkDeploymentSpec, state: InternalState): string | undefined {
  return (desired.job?.upgradeMode ?? 'stateless') === 'stateless' ? undefined : newestSavepointOf(state);
}

/** The spec to record as reconciled in a steady pass: the desired one, but a savepoint or checkpoint nonce only once its snapshot was taken. */
export function acknowledgedSpec(desired: FlinkDeploymentSpec, state: InternalState): FlinkDeploymentSpec {
  const spec = withRunningState(desired);
  if (spec.job) {
    for (const field of ['savepointTriggerNonce', 'checkpointTriggerNonce'] as const) {
      const acked = state.lastReconciledSpec?.job?.[field];
      if (acked === undefined) delete spec.job[field];
      else spec.job[field] = acked;
    }
  }
  return spec;
}

/**
 * The state (of either kind) with a manual savepoint's (or, with `field`, checkpoint's) nonce
 * acknowledged in lastReconciledSpec — and in lastStableSpec too while RUNNING (a nonce is not a
 * spec change: the running spec stays the stable one).
 */
export function withNonceAcknowledged<S extends AnyInternalState>(
  state: S,
  nonce: number | undefined,
  field: 'savepointTriggerNonce' | 'checkpointTriggerNonce' = 'savepointTriggerNonce',
): S {
  if (nonce === undefined || !state.lastReconciledSpec?.job) return state;
  let next: S = { ...state, lastReconciledSpec: { ...state.lastReconciledSpec, job: { ...state.lastReconciledSpec.job, [field]: nonce } } };
  if (state.phase === 'RUNNING' && state.lastStableSpec?.job)
    next = { ...next, lastStableSpec: { ...state.lastStableSpec, job: { ...state.lastStableSpec.job, [field]: nonce } } };
  return next;
}

/** Flink HA is on in the spec's effective configuration (its own over the operator's `defaults`). */
export function haOn(spec: FlinkDeploymentSpec, defaults: Readonly<Record<string, string>>): boolean {
  return isHighAvailabilityEnabled(effectiveFlatConfiguration(spec, defaults));
}

/** The desired spec keeps the Flink version the cluster runs (last-state needs it). */
export function sameFlinkVersion(state: InternalState, desired: FlinkDeploymentSpec): boolean {
  return desired.flinkVersion === deployedSpecOf(state)?.flinkVersion;
}
