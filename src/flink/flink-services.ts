/**
 * The two Services of a standalone Flink cluster (Flink's InternalServiceDecorator and
 * ExternalServiceDecorator, standalone flavour):
 * - `<name>-rest`: ClusterIP, port `rest` (rest.port, default 8081) → the JobManager's REST API;
 *   the operator reaches Flink through it (directly or via the API server's service proxy);
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

/** Service `<name>-rest` exposing the REST port (`restPort`, default 8081) under the port name `rest`. */
export function buildRestService(deployment: FlinkDeploymentV1, restPort: number = FLINK_PORTS.rest.port, mode: ClusterMode = 'standalone'): V1Service {
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
      type: 'ClusterIP',
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
