/**
 * The reconcile phase of one FlinkDeployment: where the operator is in carrying out the spec.
 * Stored in the state ConfigMap (key `phase`, format 2) and shown by `flink-operator inspect`; the
 * reconciler's decision function (src/reconciler/decide.ts) starts from it.
 *
 * Each phase names one situation; the Apache operator's `reconciliationStatus.state` (four values,
 * `UPGRADING` standing for five different situations) is derived from it for the legacy status
 * and derived back when a format-1 state or an Apache status is read.
 *
 * | phase | meaning | Apache state |
 * |---|---|---|
 * | NEW | nothing deployed or intended yet | UPGRADING |
 * | DEPLOYING | a deployment is pinned (job id, restore path, spec); the cluster is being applied | UPGRADING |
 * | DEPLOYED | the cluster of `deployedJobId` is applied; not yet seen running | DEPLOYED |
 * | RUNNING | seen running (JobManager ready, job RUNNING) since it was deployed; the spec was promoted stable | DEPLOYED |
 * | STOPPING | the job is being stopped with a savepoint for an upgrade or a suspend | UPGRADING |
 * | STOPPED | the job is stopped (or gone) for an upgrade; the new deployment is recorded next | UPGRADING |
 * | SUSPENDING | the job is stopped for a suspend; the cluster is being deleted | UPGRADING |
 * | SUSPENDED | suspended as asked; no cluster runs | DEPLOYED |
 * | FINISHED | the job finished; its cluster was shut down after `jm-deployment.shutdown-ttl` | DEPLOYED |
 * | ROLLING_BACK | a rollback to the last stable spec is pinned; the cluster is being applied | ROLLING_BACK |
 * | ROLLED_BACK | the last stable spec runs after a rollback | ROLLED_BACK |
 *
 * Guarantees: `phaseFromReconciliationState(reconciliationStateOfPhase(p), fields)` is `p` for every
 * state the operator writes (tested), so a migration to the Apache layout and back keeps the phase.
 */
import type { ReconciliationState } from './flink-deployment-status.js';

export const DEPLOYMENT_PHASES = [
  'NEW',
  'DEPLOYING',
  'DEPLOYED',
  'RUNNING',
  'STOPPING',
  'STOPPED',
  'SUSPENDING',
  'SUSPENDED',
  'FINISHED',
  'ROLLING_BACK',
  'ROLLED_BACK',
] as const;
export type DeploymentPhase = (typeof DEPLOYMENT_PHASES)[number];

/** The Apache operator's `status.reconciliationStatus.state` for a phase. */
export function reconciliationStateOfPhase(phase: DeploymentPhase): ReconciliationState {
  switch (phase) {
    case 'DEPLOYED':
    case 'RUNNING':
    case 'SUSPENDED':
    case 'FINISHED':
      return 'DEPLOYED';
    case 'ROLLING_BACK':
      return 'ROLLING_BACK';
    case 'ROLLED_BACK':
      return 'ROLLED_BACK';
    default:
      return 'UPGRADING';
  }
}

/** What the phase needs of a spec (a FlinkDeployment's or a FlinkSessionJob's): whether its job is suspended. */
export interface PhaseEvidenceSpec {
  readonly job?: { readonly state?: string | undefined } | undefined;
}

/** The fields of a state (format 1, or decoded from an Apache status) that tell its phase. */
export interface PhaseEvidence {
  lastReconciledSpec?: PhaseEvidenceSpec | undefined;
  lastStableSpec?: PhaseEvidenceSpec | undefined;
  jobIdToSubmit?: string | undefined;
  deployedJobId?: string | undefined;
  pendingSavepoint?: { stopJob: boolean } | undefined;
  /** True when the stable spec equals the reconciled one (the deployment was promoted stable). */
  reconciledIsStable: boolean;
  /** An Apache status whose job FINISHED and whose JobManager Deployment is gone (shut down after its TTL). */
  finishedAndShutDown?: boolean;
}

/**
 * The phase a format-1 state (or an Apache status) was in. UPGRADING is told apart by what it
 * holds: a pinned job id (DEPLOYING), a stopping savepoint (STOPPING), nothing reconciled (NEW), a
 * suspended spec (SUSPENDING), else the job is stopped for an upgrade (STOPPED). DEPLOYED with a
 * suspended spec is SUSPENDED, with a stable spec RUNNING.
 */
export function phaseFromReconciliationState(state: ReconciliationState, evidence: PhaseEvidence): DeploymentPhase {
  const suspended = evidence.lastReconciledSpec?.job?.state === 'suspended';
  switch (state) {
    case 'ROLLING_BACK':
      return 'ROLLING_BACK';
    case 'ROLLED_BACK':
      return 'ROLLED_BACK';
    case 'DEPLOYED':
      if (!evidence.lastReconciledSpec && !evidence.deployedJobId) return 'NEW';
      if (evidence.pendingSavepoint?.stopJob) return 'STOPPING';
      if (suspended) return 'SUSPENDED';
      if (evidence.finishedAndShutDown) return 'FINISHED';
      return evidence.lastReconciledSpec && evidence.reconciledIsStable ? 'RUNNING' : 'DEPLOYED';
    case 'UPGRADING':
      if (evidence.jobIdToSubmit) return 'DEPLOYING';
      if (evidence.pendingSavepoint?.stopJob) return 'STOPPING';
      if (!evidence.lastReconciledSpec) return evidence.deployedJobId ? 'STOPPED' : 'NEW';
      return suspended ? 'SUSPENDING' : 'STOPPED';
  }
}

/** Phases in which the cluster of `deployedJobId` is meant to run (observation compares it with the world). */
export function isDeployedPhase(phase: DeploymentPhase): boolean {
  return phase === 'DEPLOYED' || phase === 'RUNNING' || phase === 'ROLLED_BACK';
}
