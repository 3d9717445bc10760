/**
 * The two Services of a standalone Flink cluster (Flink's InternalServiceDecorator and
 * ExternalServiceDecorator, standalone flavour):
 * - `<name>-rest`: port `rest` (rest.port, default 8081) → the JobManager's REST API; the operator
 *   reaches Flink through it (directly or via the API server's service proxy). Its type is Flink's
 *   `kubernetes.rest-service.exposed.type`: ClusterIP (the default), NodePort, LoadBalancer, or
 *   Headless_ClusterIP (type ClusterIP with clusterIP None), as Flink's ServiceType classes render it;
 * - `<name>`: headless (clusterIP None), ports `jobmanager-rpc` 6123 and `blobserver` 6124;
 *   TaskManagers find the JobManager through it (`jobmanager.rpc.address: <name>.<ns>`).
 * Both select `app=<name>, component=jobmanager`, carry the cluster labels and are owned by the
 * FlinkDeployment. In native mode (`mode: 'native'`) they carry `type=flink-native-kubernetes` and
 * select all three JobManager labels, as Flink's native decorators render them.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import {
  clusterLabels,
  componentSelector,
  nativeJobManagerSelector,
  type ClusterMode,
  deploymentKey,
  FLINK_PORTS,
  internalServiceName,
  ownerReferenceTo,
  restServiceName,
} from './flink-resource-naming.js';

/** Flink's option naming the REST Service's type (KubernetesConfigOptions.REST_SERVICE_EXPOSED_TYPE). */
export const REST_SERVICE_EXPOSED_TYPE_KEY = 'kubernetes.rest-service.exposed.type';
/** Its values (KubernetesConfigOptions.ServiceExposedType); ClusterIP is Flink's default. */
export const REST_SERVICE_EXPOSED_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'Headless_ClusterIP'] as const;
export type RestServiceExposedType = (typeof REST_SERVICE_EXPOSED_TYPES)[number];

/** The exposed type a configuration value names (Flink reads enum options case-insensitively); undefined when it names none. */
export function parseRestServiceExposedType(value: string | undefined): RestServiceExposedType | undefined {
  const wanted = value?.trim() || 'ClusterIP';
  return REST_SERVICE_EXPOSED_TYPES.find((t) => t.toLowerCase() === wanted.toLowerCase());
}

/** What is wrong with a `kubernetes.rest-service.exposed.type` value, with the fix; undefined when Flink takes it. */
export function restServiceExposedTypeProblem(value: string | undefined): string | undefined {
  if (parseRestServiceExposedType(value) !== undefined) return undefined;
  return `"${value}" is not a REST Service type; set one of ${REST_SERVICE_EXPOSED_TYPES.join(', ')} (ClusterIP when unset)`;
}

/**
 * Service `<name>-rest` exposing the REST port (`restPort`, default 8081) under the port name
 * `rest`, of type `exposedType` (Headless_ClusterIP: ClusterIP with clusterIP None).
 */
export function buildRestService(
  deployment: FlinkDeploymentV1,
  restPort: number = FLINK_PORTS.rest.port,
  mode: ClusterMode = 'standalone',
  exposedType: RestServiceExposedType = 'ClusterIP',
): V1Service {
  const { namespace, name } = deploymentKey(deployment);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: restServiceName(name),
      namespace,
      labels: clusterLabels(name, mode),
      ownerReferences: [ownerReferenceTo(deployment)],
    },
    spec: {
      type: exposedType === 'Headless_ClusterIP' ? 'ClusterIP' : exposedType,
      ...(exposedType === 'Headless_ClusterIP' ? { clusterIP: 'None' } : {}),
      selector: jobManagerSelector(name, mode),
      ports: [{ name: FLINK_PORTS.rest.name, port: restPort, targetPort: restPort, protocol: 'TCP' }],
    },
  };
}

/** Headless Service `<name>` with the JobManager RPC and blob server ports. */
export function buildInternalService(deployment: FlinkDeploymentV1, mode: ClusterMode = 'standalone'): V1Service {
  const { namespace, name } = deploymentKey(deployment);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: internalServiceName(name),
      namespace,
      labels: clusterLabels(name, mode),
      ownerReferences: [ownerReferenceTo(deployment)],
    },
    spec: {
      clusterIP: 'None',
      selector: jobManagerSelector(name, mode),
      ports: [
        { name: FLINK_PORTS.jobManagerRpc.name, port: FLINK_PORTS.jobManagerRpc.port, targetPort: FLINK_PORTS.jobManagerRpc.port, protocol: 'TCP' },
        { name: FLINK_PORTS.blobServer.name, port: FLINK_PORTS.blobServer.port, targetPort: FLINK_PORTS.blobServer.port, protocol: 'TCP' },
      ],
    },
  };
}

function jobManagerSelector(name: string, mode: ClusterMode): Record<string, string> {
  return mode === 'native' ? nativeJobManagerSelector(name) : componentSelector(name, 'jobmanager');
}
