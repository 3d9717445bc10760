/**
 * Every Kubernetes object of one application cluster, rendered together so they agree (same spec,
 * same job id, same restore path): the configuration ConfigMap, the JobManager Deployment, the
 * TaskManager Deployment (standalone mode only), the REST Service and the headless internal
 * Service. `spec.mode` selects the mode: `standalone`, or `native` (also when unset, as the Apache
 * operator); native mode renders no TaskManagers, its JobManager creates TaskManager pods itself
 * (native-application-cluster.ts, design/009-native-mode.md).
 * The contract the development cluster's simulation reads: design/003b-simulation.md.
 *
 * Guarantees: pure and deterministic; the same inputs always give deep-equal objects, so a
 * reconciler that crashed after writing some of them can render again and compare.
 * Assumptions: `deployment.metadata.uid` is set (the owner reference needs it); `inputs.jobId` is
 * the id the operator recorded in its state BEFORE rendering (it is pinned in the configuration,
 * so a JobManager restart resubmits the same job id instead of a new one).
 */
import type { V1ConfigMap, V1Deployment, V1Service } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { isHighAvailabilityEnabled } from '../api/flink-configuration.js';
import { buildFlinkConfiguration } from './flink-config-builder.js';
import { buildFlinkConfigMap } from './flink-config-configmap.js';
import { buildInternalService, buildRestService, parseRestServiceExposedType, REST_SERVICE_EXPOSED_TYPE_KEY } from './flink-services.js';
import { buildJobManagerDeployment } from './jobmanager-deployment.js';
import { buildTaskManagerDeployment } from './taskmanager-deployment.js';
import { clusterModeOf, deploymentKey, type ClusterMode } from './flink-resource-naming.js';
import { configMapRecordAnnotations, JOB_ID_ANNOTATION } from './deployed-record.js';
import {
  buildNativeJobManagerDeployment,
  nativeFlinkConfiguration,
  TASK_MANAGER_POD_TEMPLATE_FILE,
  taskManagerPodTemplateYaml,
} from './native-application-cluster.js';

export interface FlinkClusterInputs {
  /** The spec being deployed (may differ from deployment.spec, e.g. on rollback). */
  readonly spec: FlinkDeploymentSpec;
  /** Generation this rendering belongs to (JobManager annotation). */
  readonly generation: number;
  /** Hash of `spec` (src/state's specHash), JobManager annotation. */
  readonly specHash: string;
  /** Job id to pin (32 hex). */
  readonly jobId: string;
  /** Savepoint or checkpoint path to restore from; absent = no state. */
  readonly restoreFrom?: string;
  readonly allowNonRestoredState?: boolean;
}

export interface FlinkClusterResources {
  /** `standalone` or `native` (from `spec.mode`, native when unset). */
  readonly mode: ClusterMode;
  readonly configMap: V1ConfigMap;
  readonly jobManagerDeployment: V1Deployment;
  /** Standalone only; in native mode the JobManager creates its TaskManager pods. */
  readonly taskManagerDeployment?: V1Deployment;
  readonly restService: V1Service;
  readonly internalService: V1Service;
}

/** Renders the cluster of `deployment` for `inputs`, stamped with its deployed record (deployed-record.ts). Throws on invalid inputs (bad job id, memory, slots, uid missing). */
export function buildFlinkClusterResources(deployment: FlinkDeploymentV1, inputs: FlinkClusterInputs): FlinkClusterResources {
  const resources = renderFlinkClusterResources(deployment, inputs);
  const jobManager = resources.jobManagerDeployment;
  jobManager.metadata = { ...jobManager.metadata, annotations: { ...jobManager.metadata?.annotations, [JOB_ID_ANNOTATION]: inputs.jobId } };
  const configMap = resources.configMap;
  configMap.metadata = { ...configMap.metadata, annotations: { ...configMap.metadata?.annotations, ...configMapRecordAnnotations(inputs.spec, inputs.jobId) } };
  return resources;
}

function renderFlinkClusterResources(deployment: FlinkDeploymentV1, inputs: FlinkClusterInputs): FlinkClusterResources {
  const { namespace, name } = deploymentKey(deployment);
  const restoreInputs = {
    ...(inputs.restoreFrom !== undefined ? { restoreFrom: inputs.restoreFrom } : {}),
    ...(inputs.allowNonRestoredState !== undefined ? { allowNonRestoredState: inputs.allowNonRestoredState } : {}),
  };
  const mode = clusterModeOf(inputs.spec);
  const standaloneConfig = buildFlinkConfiguration({ namespace, name, spec: inputs.spec, jobId: inputs.jobId, ...restoreInputs });
  const config = mode === 'native' ? nativeFlinkConfiguration(standaloneConfig, inputs.spec) : standaloneConfig;
  const restPort = Number(config['rest.port']);
  if (!Number.isInteger(restPort) || restPort < 1 || restPort > 65535) {
    throw new Error(`spec.flinkConfiguration.rest.port: "${config['rest.port']}" is not a port number`);
  }
  const exposedType = parseRestServiceExposedType(config[REST_SERVICE_EXPOSED_TYPE_KEY]) ?? 'ClusterIP';
  if (mode === 'native') {
    const template = taskManagerPodTemplateYaml(inputs.spec);
    return {
      mode,
      configMap: buildFlinkConfigMap(deployment, inputs.spec, config, mode, template !== undefined ? { [TASK_MANAGER_POD_TEMPLATE_FILE]: template } : {}),
      jobManagerDeployment: buildNativeJobManagerDeployment(deployment, {
        spec: inputs.spec,
        generation: inputs.generation,
        specHash: inputs.specHash,
        restPort,
      }),
      restService: buildRestService(deployment, restPort, mode, exposedType),
      internalService: buildInternalService(deployment, mode),
    };
  }
  return {
    mode,
    configMap: buildFlinkConfigMap(deployment, inputs.spec, config),
    jobManagerDeployment: buildJobManagerDeployment(deployment, {
      spec: inputs.spec,
      generation: inputs.generation,
      specHash: inputs.specHash,
      restPort,
      highAvailability: isHighAvailabilityEnabled(config),
      ...restoreInputs,
    }),
    taskManagerDeployment: buildTaskManagerDeployment(deployment, inputs.spec),
    restService: buildRestService(deployment, restPort, 'standalone', exposedType),
    internalService: buildInternalService(deployment),
  };
}
