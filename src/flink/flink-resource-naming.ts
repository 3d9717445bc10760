/**
 * Names, labels, ports and the owner reference shared by every Kubernetes object the operator
 * renders for a FlinkDeployment in standalone application mode.
 *
 * The values mirror the Apache Flink operator's standalone mode (see
 * ../shared/reference/flink-operator.md §5 and design/003b-simulation.md), so the
 * simulated kubelet/JobManager of the development cluster, and people used to the Apache operator,
 * find the objects where they expect them.
 */
import type { V1OwnerReference } from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_KIND, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { STANDARD_FLINK_CONFIG_FILE } from '../api/flink-configuration.js';

/** `type` label value of standalone-mode objects. */
export const STANDALONE_TYPE_LABEL_VALUE = 'flink-standalone-kubernetes';
/** `type` label value of native-mode objects (Flink's Constants.LABEL_TYPE_NATIVE_TYPE); TaskManager pods created by the JobManager carry it too. */
export const NATIVE_TYPE_LABEL_VALUE = 'flink-native-kubernetes';

/** How the cluster runs: `standalone` (the operator renders the TaskManagers) or `native` (the JobManager creates them). */
export type ClusterMode = 'standalone' | 'native';

/** The mode `spec.mode` selects: `native` when unset, as the Apache operator. */
export function clusterModeOf(spec: { mode?: string | undefined }): ClusterMode {
  return spec.mode === 'standalone' ? 'standalone' : 'native';
}

function typeLabelOf(mode: ClusterMode): string {
  return mode === 'native' ? NATIVE_TYPE_LABEL_VALUE : STANDALONE_TYPE_LABEL_VALUE;
}

export type FlinkComponent = 'jobmanager' | 'taskmanager';

/** The container the Flink process runs in; user pod templates address it by this name. */
export const FLINK_MAIN_CONTAINER = 'flink-main-container';
/** Where the rendered configuration (config.yaml or flink-conf.yaml, log4j-console.properties) is mounted. */
export const FLINK_CONF_DIR = '/opt/flink/conf';
/** Name of the pod volume holding the configuration ConfigMap. */
export const FLINK_CONFIG_VOLUME = 'flink-config-volume';
/** Data key of the effective Flink configuration for Flink ≥ 1.19 (standard YAML); flinkConfigFileOf picks by version. */
export const FLINK_CONFIG_FILE = STANDARD_FLINK_CONFIG_FILE;
/** Data key of the effective Flink configuration for Flink 1.15–1.18 (Flink's legacy flat format). */
export { LEGACY_FLINK_CONFIG_FILE } from '../api/flink-configuration.js';
export const LOG4J_CONSOLE_FILE = 'log4j-console.properties';

/** Fixed ports (Flink's kubernetes.utils.Constants); rest.port may override the REST port. */
export const FLINK_PORTS = {
  rest: { name: 'rest', port: 8081 },
  jobManagerRpc: { name: 'jobmanager-rpc', port: 6123 },
  blobServer: { name: 'blobserver', port: 6124 },
  taskManagerRpc: { name: 'taskmanager-rpc', port: 6122 },
} as const;

/** Annotation on the JobManager Deployment: the FlinkDeployment generation it was rendered from. */
export const GENERATION_ANNOTATION = 'flinkdeployment.flink.apache.org/generation';
/** Annotation on the JobManager Deployment: hash of the spec it was rendered from (computed by src/state). */
export const SPEC_HASH_ANNOTATION = 'flink-operator.io/spec-hash';

/** JobManager Deployment name: `<name>`. */
export function jobManagerDeploymentName(name: string): string {
  return name;
}

/** TaskManager Deployment name: `<name>-taskmanager`. */
export function taskManagerDeploymentName(name: string): string {
  return `${name}-taskmanager`;
}

/** REST Service name: `<name>-rest`. */
export function restServiceName(name: string): string {
  return `${name}-rest`;
}

/** Headless internal Service name (JobManager RPC and blob server): `<name>`. */
export function internalServiceName(name: string): string {
  return name;
}

/** Flink configuration ConfigMap name: `flink-config-<name>`. */
export function flinkConfigMapName(name: string): string {
  return `flink-config-${name}`;
}

/** Labels of every object of the cluster: `app=<name>, type=flink-standalone-kubernetes` (native: `flink-native-kubernetes`). */
export function clusterLabels(name: string, mode: ClusterMode = 'standalone'): Record<string, string> {
  return { app: name, type: typeLabelOf(mode) };
}

/** Labels of one component's Deployment and pods: cluster labels plus `component=<component>`. */
export function componentLabels(name: string, component: FlinkComponent, mode: ClusterMode = 'standalone'): Record<string, string> {
  return { ...clusterLabels(name, mode), component };
}

/**
 * Selector of the native JobManager pods: Flink's KubernetesJobManagerParameters.getSelectors,
 * i.e. all three labels (`type`, `app`, `component`); the native Services select on it too.
 */
export function nativeJobManagerSelector(name: string): Record<string, string> {
  return componentLabels(name, 'jobmanager', 'native');
}

/** Selector of one component's pods (`app`, `component`); what Services and Deployments select on. */
export function componentSelector(name: string, component: FlinkComponent): Record<string, string> {
  return { app: name, component };
}

/**
 * The owner reference every rendered object carries: the FlinkDeployment as controller, so that
 * deleting the FlinkDeployment garbage-collects the cluster and `kubectl get` shows the owner.
 *
 * Assumption: the deployment was read from the API server (metadata.uid set); building resources
 * for an object without a uid is a programming error and throws.
 */
export function ownerReferenceTo(deployment: FlinkDeploymentV1): V1OwnerReference {
  const { name, uid } = deployment.metadata;
  if (!name) throw new Error('cannot render Flink resources: the FlinkDeployment has no metadata.name');
  if (!uid) {
    throw new Error(
      `cannot render Flink resources for ${deployment.metadata.namespace ?? '?'}/${name}: metadata.uid is missing (read the object from the API server first)`,
    );
  }
  return {
    apiVersion: deployment.apiVersion,
    kind: FLINK_DEPLOYMENT_KIND,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** `namespace` and `name` of a deployment, with a clear error if either is missing. */
export function deploymentKey(deployment: FlinkDeploymentV1): { namespace: string; name: string } {
  const { name, namespace } = deployment.metadata;
  if (!name) throw new Error('FlinkDeployment has no metadata.name');
  return { name, namespace: namespace ?? 'default' };
}
