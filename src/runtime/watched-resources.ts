import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesListObject,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Deployment,
  type V1Service,
} from '@kubernetes/client-node';
import { FLINK_DEPLOYMENT_PLURAL } from '../api/flink-deployment.js';
import { FLINK_SESSION_JOB_PLURAL } from '../api/flink-session-job.js';
import { FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION } from '../api/flink-state-snapshot.js';
import type { ApiClientFactory } from './api-client-factory.js';
import type { WatchedKind } from './event-mapping.js';

/**
 * The kinds the operator watches (FlinkSessionJobs only when session jobs are reconciled), described for the informer: the watch path and the list
 * call (cluster-wide or per namespace) with a label selector.
 *
 * FlinkDeployments are watched in version v1 (group flink.apache.org, plural flinkdeployments).
 */
export interface WatchedResource<T extends KubernetesObject> {
  readonly kind: WatchedKind;
  /** Plural, used in metric labels and logs. */
  readonly resource: string;
  /** The watch/list path, cluster-wide when `namespace` is undefined. */
  path(namespace: string | undefined): string;
  list(namespace: string | undefined, labelSelector: string | undefined): Promise<KubernetesListObject<T>>;
}

export const FLINK_DEPLOYMENT_VERSION = 'v1';

/** A FlinkDeployment as the runtime sees it; the domain types live in src/api/. */
export interface FlinkDeploymentObject extends KubernetesObject {
  spec?: unknown;
  status?: unknown;
}

export function flinkDeployments(clients: ApiClientFactory): WatchedResource<FlinkDeploymentObject> {
  return flinkResources(clients, 'FlinkDeployment', FLINK_DEPLOYMENT_PLURAL);
}

/** A flink.apache.org kind in `version` (v1 unless said). */
function flinkResources(
  clients: ApiClientFactory,
  kind: 'FlinkDeployment' | 'FlinkSessionJob' | 'FlinkStateSnapshot',
  plural: string,
  version: string = FLINK_DEPLOYMENT_VERSION,
): WatchedResource<FlinkDeploymentObject> {
  const api = clients.make(CustomObjectsApi);
  const group = 'flink.apache.org';
  return {
    kind,
    resource: plural,
    path: (ns) => (ns ? `/apis/${group}/${version}/namespaces/${ns}/${plural}` : `/apis/${group}/${version}/${plural}`),
    list: async (ns, labelSelector) =>
      (ns
        ? await api.listNamespacedCustomObject({ group, version, namespace: ns, plural, ...(labelSelector ? { labelSelector } : {}) })
        : await api.listClusterCustomObject({
            group,
            version,
            plural,
            ...(labelSelector ? { labelSelector } : {}),
          })) as KubernetesListObject<FlinkDeploymentObject>,
  };
}

/** FlinkSessionJobs, watched in v1 like FlinkDeployments. */
export function flinkSessionJobs(clients: ApiClientFactory): WatchedResource<FlinkDeploymentObject> {
  return flinkResources(clients, 'FlinkSessionJob', FLINK_SESSION_JOB_PLURAL);
}

/** FlinkStateSnapshots, watched in v1beta1 (the kind's only version). */
export function flinkStateSnapshots(clients: ApiClientFactory): WatchedResource<FlinkDeploymentObject> {
  return flinkResources(clients, 'FlinkStateSnapshot', FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION);
}

export function configMaps(clients: ApiClientFactory): WatchedResource<V1ConfigMap> {
  const api = clients.make(CoreV1Api);
  return {
    kind: 'ConfigMap',
    resource: 'configmaps',
    path: (ns) => (ns ? `/api/v1/namespaces/${ns}/configmaps` : '/api/v1/configmaps'),
    list: (ns, labelSelector) =>
      ns
        ? api.listNamespacedConfigMap({ namespace: ns, ...(labelSelector ? { labelSelector } : {}) })
        : api.listConfigMapForAllNamespaces(labelSelector ? { labelSelector } : {}),
  };
}

export function deployments(clients: ApiClientFactory): WatchedResource<V1Deployment> {
  const api = clients.make(AppsV1Api);
  return {
    kind: 'Deployment',
    resource: 'deployments',
    path: (ns) => (ns ? `/apis/apps/v1/namespaces/${ns}/deployments` : '/apis/apps/v1/deployments'),
    list: (ns, labelSelector) =>
      ns
        ? api.listNamespacedDeployment({ namespace: ns, ...(labelSelector ? { labelSelector } : {}) })
        : api.listDeploymentForAllNamespaces(labelSelector ? { labelSelector } : {}),
  };
}

export function services(clients: ApiClientFactory): WatchedResource<V1Service> {
  const api = clients.make(CoreV1Api);
  return {
    kind: 'Service',
    resource: 'services',
    path: (ns) => (ns ? `/api/v1/namespaces/${ns}/services` : '/api/v1/services'),
    list: (ns, labelSelector) =>
      ns
        ? api.listNamespacedService({ namespace: ns, ...(labelSelector ? { labelSelector } : {}) })
        : api.listServiceForAllNamespaces(labelSelector ? { labelSelector } : {}),
  };
}
