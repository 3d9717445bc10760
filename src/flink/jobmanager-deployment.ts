/**
 * JobManager Deployment `<name>` of a standalone cluster.
 *
 * - container args of an application cluster (`spec.job` set): `standalone-job [--job-classname C]
 *   [--fromSavepoint P] [--allowNonRestoredState] [-D jobmanager.rpc.address=$(_POD_IP_ADDRESS)
 *   (HA only)] <job args...>` (Flink's StandaloneApplicationClusterEntryPoint grammar: options
 *   first, program args after the first non-option);
 * - of a session cluster (no `spec.job`): `jobmanager [-D jobmanager.rpc.address=$(_POD_IP_ADDRESS)
 *   (HA only)]`, the Flink docker image's session entry point (docker-entrypoint.sh runs
 *   `jobmanager.sh start-foreground`, i.e. StandaloneSessionClusterEntrypoint, which accepts `-D`
 *   and has no job options); `standalone-job` there would start an application cluster;
 * - replicas `jobManager.replicas` (default 1), strategy Recreate (two JobManagers of one job must
 *   never run side by side without HA);
 * - annotations `flinkdeployment.flink.apache.org/generation` and `flink-operator.io/spec-hash`.
 *
 * Guarantees (crash safety): the generation and spec-hash annotations let a restarted operator
 * tell whether THIS rendering already reached the API server (the Apache operator's observer uses
 * the generation annotation the same way), so it neither deploys twice nor forgets a deploy.
 * Assumption: the caller passes the hash of exactly the spec it renders (src/state computes it).
 */
import type { V1Deployment, V1DeploymentStrategy } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { componentResources } from './flink-container-resources.js';
import { buildFlinkPodTemplate, jobManagerStartupProbe, POD_IP_ENV } from './flink-pod-template.js';
import {
  componentLabels,
  componentSelector,
  deploymentKey,
  FLINK_PORTS,
  GENERATION_ANNOTATION,
  jobManagerDeploymentName,
  ownerReferenceTo,
  SPEC_HASH_ANNOTATION,
} from './flink-resource-naming.js';

export interface JobManagerArgsInputs {
  readonly spec: FlinkDeploymentSpec;
  readonly restoreFrom?: string;
  readonly allowNonRestoredState?: boolean;
  /** Flink HA configured: the JobManager then advertises its pod IP as RPC address. */
  readonly highAvailability?: boolean;
}

/** The JobManager container args (see the module comment for the grammar). */
export function jobManagerArgs(inputs: JobManagerArgsInputs): string[] {
  if (!inputs.spec.job) return ['jobmanager', ...(inputs.highAvailability ? ['-D', `jobmanager.rpc.address=$(${POD_IP_ENV})`] : [])];
  const args = ['standalone-job'];
  const entryClass = inputs.spec.job?.entryClass;
  if (entryClass) args.push('--job-classname', entryClass);
  if (inputs.restoreFrom !== undefined) {
    args.push('--fromSavepoint', inputs.restoreFrom);
    if (inputs.allowNonRestoredState) args.push('--allowNonRestoredState');
  }
  if (inputs.highAvailability) args.push('-D', `jobmanager.rpc.address=$(${POD_IP_ENV})`);
  args.push(...(inputs.spec.job?.args ?? []));
  return args;
}

export interface JobManagerDeploymentInputs extends JobManagerArgsInputs {
  readonly generation: number;
  readonly specHash: string;
  /** REST port (rest.port), default 8081. */
  readonly restPort?: number;
}

/** What differs between a standalone and a native JobManager Deployment. */
export interface JobManagerDeploymentShape {
  readonly mode: 'standalone' | 'native';
  readonly args: string[];
  readonly selector: Record<string, string>;
  /** Standalone replaces its pod with Recreate; Flink's native decorators set no strategy. */
  readonly strategy?: V1DeploymentStrategy;
}

/** The JobManager Deployment of either mode: the pod template, labels, annotations and owner shared by both. */
export function jobManagerDeploymentWith(
  deployment: FlinkDeploymentV1,
  inputs: Omit<JobManagerDeploymentInputs, 'restoreFrom' | 'allowNonRestoredState' | 'highAvailability'>,
  shape: JobManagerDeploymentShape,
): V1Deployment {
  const { namespace, name } = deploymentKey(deployment);
  const { requirements } = componentResources(inputs.spec.jobManager, 'spec.jobManager');
  const native = shape.mode === 'native';
  const template = buildFlinkPodTemplate({
    name,
    spec: inputs.spec,
    component: 'jobmanager',
    ...(native ? { mode: 'native' as const } : {}),
    args: shape.args,
    ports: [{ name: FLINK_PORTS.rest.name, port: inputs.restPort ?? FLINK_PORTS.rest.port }, FLINK_PORTS.jobManagerRpc, FLINK_PORTS.blobServer],
    ...(requirements !== undefined ? { resources: requirements } : {}),
    startupProbe: jobManagerStartupProbe(),
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: jobManagerDeploymentName(name),
      namespace,
      labels: native ? componentLabels(name, 'jobmanager', 'native') : componentLabels(name, 'jobmanager'),
      annotations: {
        [GENERATION_ANNOTATION]: String(inputs.generation),
        [SPEC_HASH_ANNOTATION]: inputs.specHash,
      },
      ownerReferences: [ownerReferenceTo(deployment)],
    },
    spec: {
      replicas: inputs.spec.jobManager?.replicas ?? 1,
      ...(shape.strategy ? { strategy: shape.strategy } : {}),
      selector: { matchLabels: shape.selector },
      template,
    },
  };
}

/** The standalone JobManager Deployment for `deployment`, rendering `inputs.spec`. */
export function buildJobManagerDeployment(deployment: FlinkDeploymentV1, inputs: JobManagerDeploymentInputs): V1Deployment {
  const { name } = deploymentKey(deployment);
  return jobManagerDeploymentWith(deployment, inputs, {
    mode: 'standalone',
    args: jobManagerArgs(inputs),
    selector: componentSelector(name, 'jobmanager'),
    strategy: { type: 'Recreate' },
  });
}
