/**
 * Classifies the JobManager Deployment of a FlinkDeployment into the Apache operator's
 * JobManagerDeploymentStatus, naming a pod failure reason when there is one.
 *
 * READY needs more than Kubernetes readiness: the reconciler upgrades DEPLOYED_NOT_READY to READY
 * only once Flink's REST API has answered (see flink-deployment-reconciler.ts).
 */
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { JobManagerDeploymentStatus } from '../api/flink-deployment-status.js';

/** Container waiting reasons that mean the pod will not come up by itself. */
const FAILURE_REASONS = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

export interface JobManagerObservation {
  status: JobManagerDeploymentStatus;
  /** For ERROR: what failed and what to do, e.g. `JobManager pod orders-5d9c-x: CrashLoopBackOff (...)`. */
  error?: string;
}

/** True when the Deployment's current template has at least one available replica. */
export function isDeploymentAvailable(deployment: V1Deployment): boolean {
  const status = deployment.status ?? {};
  const generation = deployment.metadata?.generation ?? 0;
  const observed = status.observedGeneration ?? 0;
  const wanted = deployment.spec?.replicas ?? 1;
  return observed >= generation && (status.availableReplicas ?? 0) >= Math.min(1, wanted) && (status.updatedReplicas ?? 0) >= wanted && wanted > 0;
}

/** The first failure a pod of the Deployment reports, as a sentence. */
export function podFailure(pods: readonly V1Pod[]): string | undefined {
  for (const pod of pods) {
    for (const container of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      const waiting = container.state?.waiting;
      if (waiting?.reason && FAILURE_REASONS.has(waiting.reason)) {
        const hint = waiting.reason.includes('Image')
          ? 'check spec.image and the image pull secrets'
          : 'check the JobManager logs (kubectl logs) and the Flink configuration';
        return `pod ${pod.metadata?.name}: container ${container.name} is in ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ''}${container.restartCount ? `, ${container.restartCount} restarts` : ''}; ${hint}`;
      }
    }
  }
  return undefined;
}

export function classifyJobManager(deployment: V1Deployment | undefined, pods: readonly V1Pod[] | undefined): JobManagerObservation {
  if (!deployment) return { status: 'MISSING' };
  const failure = pods ? podFailure(pods) : undefined;
  if (failure) return { status: 'ERROR', error: `JobManager Deployment ${deployment.metadata?.name} failed: ${failure}` };
  const replicaFailure = deployment.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  if (replicaFailure)
    return {
      status: 'ERROR',
      error: `JobManager Deployment ${deployment.metadata?.name} cannot create pods: ${replicaFailure.message ?? replicaFailure.reason}`,
    };
  if (isDeploymentAvailable(deployment)) return { status: 'DEPLOYED_NOT_READY' };
  return { status: 'DEPLOYING' };
}
