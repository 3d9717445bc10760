/**
 * Recovery when the state ConfigMap is missing (deleted by a user, or a crash before its first
 * write): rebuild what can be rebuilt from the world, never invent what cannot.
 *
 * The resource builders annotate the JobManager Deployment with the generation and the `specHash`
 * of the spec it was rendered from (SPEC_HASH_ANNOTATION, GENERATION_ANNOTATION). If both match
 * the deployment's current spec, that spec is what was last reconciled; otherwise the last
 * reconciled spec is unknown and the state says "first deployment, restore from the last known
 * savepoint" (the user-facing status keeps `jobStatus.lastSavepoint`).
 *
 * Guarantees: the rebuilt state passes the internal-state schema; it never claims a spec was
 * deployed unless the Deployment's hash proves it; its revision continues from the status'
 * stateRef.revision (the store adds one), so revisions stay monotonic across the rebuild.
 * Assumptions: `specHash` is stable across processes and versions (canonical JSON, sorted keys).
 * Caveats: pending operations (a savepoint in flight) are lost with the ConfigMap; the reconciler
 * re-observes Flink. Savepoint history before the last savepoint is lost.
 */
import { createHash } from 'node:crypto';
import type { V1Deployment } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { emptyInternalState, type InternalState, type SavepointRecord } from '../api/internal-state.js';

// The annotations are defined once, with the resources that carry them.
import { GENERATION_ANNOTATION, SPEC_HASH_ANNOTATION } from '../flink/flink-resource-naming.js';
export { GENERATION_ANNOTATION, SPEC_HASH_ANNOTATION };

/** JSON with object keys sorted at every level (arrays keep their order); undefined members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** sha256 of the canonical JSON of the spec, first 16 hex digits. */
export function specHash(spec: FlinkDeploymentSpec): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 16);
}

export interface ObservedWorld {
  /** The JobManager Deployment, if it exists. */
  readonly jobManagerDeployment?: V1Deployment;
  /** The newest savepoint location known from elsewhere (defaults to status.jobStatus.lastSavepoint). */
  readonly lastSavepoint?: string;
}

export interface RebuiltState {
  readonly state: InternalState;
  /** True when the running Deployment provably came from the current spec. */
  readonly specConfirmed: boolean;
  /** One sentence for the event the reconciler emits (reason StateRebuilt). */
  readonly message: string;
}

/** Rebuilds the internal state of `deployment` from the observed world. */
export function rebuildStateFromWorld(deployment: FlinkDeploymentV1, observed: ObservedWorld, now: Date = new Date()): RebuiltState {
  const state = emptyInternalState();
  state.revision = deployment.status?.stateRef?.revision ?? 0;
  state.reconciliationTimestamp = now.toISOString();
  const statusSavepoint = deployment.status?.jobStatus?.lastSavepoint;
  if (statusSavepoint) {
    const record: SavepointRecord = {
      location: statusSavepoint.location,
      timeStamp: statusSavepoint.timeStamp,
      triggerType: statusSavepoint.triggerType ?? 'UNKNOWN',
      ...(statusSavepoint.formatType ? { formatType: statusSavepoint.formatType } : {}),
    };
    state.savepointHistory = [record];
  }
  const lastSavepoint = observed.lastSavepoint ?? statusSavepoint?.location;
  const annotations = observed.jobManagerDeployment?.metadata?.annotations ?? {};
  const generation = deployment.metadata.generation;
  const specConfirmed =
    observed.jobManagerDeployment !== undefined &&
    generation !== undefined &&
    annotations[GENERATION_ANNOTATION] === String(generation) &&
    annotations[SPEC_HASH_ANNOTATION] === specHash(deployment.spec);
  const name = `${deployment.metadata.namespace ?? ''}/${deployment.metadata.name ?? ''}`;
  if (specConfirmed) {
    state.reconciliationState = 'DEPLOYED';
    state.firstDeployment = false;
    state.lastReconciledSpec = structuredClone(deployment.spec);
    state.lastReconciledGeneration = generation;
    const jobId = deployment.status?.jobStatus?.jobId;
    if (jobId) state.deployedJobId = jobId;
    return {
      state,
      specConfirmed,
      message: `operator state of ${name} was missing; rebuilt from the running JobManager Deployment (generation ${generation}, spec hash matches)`,
    };
  }
  state.reconciliationState = 'UPGRADING';
  state.firstDeployment = true;
  if (lastSavepoint) state.upgradeSavepointPath = lastSavepoint;
  return {
    state,
    specConfirmed,
    message:
      `operator state of ${name} was missing and the deployed spec cannot be confirmed; ` +
      (lastSavepoint ? `redeploying from the last savepoint ${lastSavepoint}` : 'redeploying without a savepoint (none is known)'),
  };
}
