/**
 * TaskManager Deployment `<name>-taskmanager` of a standalone cluster: args `["taskmanager"]`,
 * port `taskmanager-rpc` 6122, replicas `taskManager.replicas`, else ceil(parallelism / slots)
 * (the Apache operator's rule; parallelism default 1, slots from
 * `taskmanager.numberOfTaskSlots`, default 1).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { taskSlotsOf } from './flink-config-builder.js';
import { componentResources } from './flink-container-resources.js';
import { buildFlinkPodTemplate } from './flink-pod-template.js';
import { componentLabels, componentSelector, deploymentKey, FLINK_PORTS, ownerReferenceTo, taskManagerDeploymentName } from './flink-resource-naming.js';

/** TaskManager replicas: `taskManager.replicas`, else ceil(job.parallelism / slots) (at least 1). */
export function taskManagerReplicas(spec: FlinkDeploymentSpec): number {
  if (spec.taskManager?.replicas !== undefined) return spec.taskManager.replicas;
  const parallelism = spec.job?.parallelism ?? 1;
  const slots = taskSlotsOf(flattenFlinkConfiguration(spec.flinkConfiguration));
  return Math.max(1, Math.ceil(parallelism / slots));
}

/** The TaskManager Deployment for `deployment`, rendering `spec`. */
export function buildTaskManagerDeployment(deployment: FlinkDeploymentV1, spec: FlinkDeploymentSpec): V1Deployment {
  const { namespace, name } = deploymentKey(deployment);
  const { requirements } = componentResources(spec.taskManager, 'spec.taskManager');
  const template = buildFlinkPodTemplate({
    name,
    spec,
    component: 'taskmanager',
    args: ['taskmanager'],
    ports: [FLINK_PORTS.taskManagerRpc],
    ...(requirements !== undefined ? { resources: requirements } : {}),
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: taskManagerDeploymentName(name),
      namespace,
      labels: componentLabels(name, 'taskmanager'),
      ownerReferences: [ownerReferenceTo(deployment)],
    },
    spec: {
      replicas: taskManagerReplicas(spec),
      selector: { matchLabels: componentSelector(name, 'taskmanager') },
      template,
    },
  };
}
