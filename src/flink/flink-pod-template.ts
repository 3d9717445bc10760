/**
 * The pod template of a Flink component (JobManager or TaskManager): the user's templates merged
 * (`spec.podTemplate`, then `spec.jobManager|taskManager.podTemplate`; their lists as
 * `kubernetes.operator.pod-template.merge-arrays-by-name` says, when set), then the operator's
 * decoration of container `flink-main-container` merged over them (pod-template-merge.ts rules):
 *
 * - labels `app`, `component`, `type` (the operator's win over the user's);
 * - `serviceAccountName` from `spec.serviceAccount`;
 * - container `flink-main-container`: command `/docker-entrypoint.sh`, the component's args, image,
 *   imagePullPolicy, resources (flink-container-resources.ts), ports, env `_POD_IP_ADDRESS` from
 *   `status.podIP`, the config volume mounted at /opt/flink/conf, and (JobManager) a startup
 *   probe HTTP GET /config on port `rest`;
 * - volume `flink-config-volume` from ConfigMap `flink-config-<name>`.
 *
 * Whatever the user's templates set and the operator does not (sidecars, extra volumes and mounts,
 * env, node selectors, tolerations, security contexts, annotations) is kept.
 */
import type { V1Container, V1PodTemplateSpec, V1Probe, V1ResourceRequirements } from '@kubernetes/client-node';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { mergePodTemplates, mergeUserPodTemplates, templateListMerge, type JsonObject } from './pod-template-merge.js';
import {
  componentLabels,
  FLINK_CONF_DIR,
  FLINK_CONFIG_VOLUME,
  FLINK_MAIN_CONTAINER,
  flinkConfigMapName,
  type ClusterMode,
  type FlinkComponent,
} from './flink-resource-naming.js';

/** The Flink image's entry point (Flink's `kubernetes.entry.path`). */
export const FLINK_ENTRYPOINT = '/docker-entrypoint.sh';
/** Env var with the pod IP, referenced as `$(_POD_IP_ADDRESS)` in args. */
export const POD_IP_ENV = '_POD_IP_ADDRESS';

export interface FlinkPodTemplateInputs {
  readonly name: string;
  readonly spec: FlinkDeploymentSpec;
  readonly component: FlinkComponent;
  readonly args: readonly string[];
  readonly ports: ReadonlyArray<{ name: string; port: number }>;
  readonly resources?: V1ResourceRequirements;
  readonly startupProbe?: V1Probe;
  /** Selects the `type` label; default standalone. */
  readonly mode?: ClusterMode;
}

/** JobManager startup probe: HTTP GET /config on port `rest` every second until it answers (as the Apache operator). */
export function jobManagerStartupProbe(): V1Probe {
  return {
    httpGet: { path: '/config', port: 'rest', scheme: 'HTTP' },
    periodSeconds: 1,
    failureThreshold: 2_147_483_647,
  };
}

/** The merged pod template for one component. Throws when a user template is not an object. */
export function buildFlinkPodTemplate(inputs: FlinkPodTemplateInputs): V1PodTemplateSpec {
  const { spec, component, name } = inputs;
  const userComponentTemplate = component === 'jobmanager' ? spec.jobManager?.podTemplate : spec.taskManager?.podTemplate;
  const container: V1Container = {
    name: FLINK_MAIN_CONTAINER,
    command: [FLINK_ENTRYPOINT],
    args: [...inputs.args],
    ports: inputs.ports.map((p) => ({ name: p.name, containerPort: p.port, protocol: 'TCP' })),
    env: [{ name: POD_IP_ENV, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } }],
    volumeMounts: [{ name: FLINK_CONFIG_VOLUME, mountPath: FLINK_CONF_DIR }],
  };
  if (spec.image !== undefined) container.image = spec.image;
  if (spec.imagePullPolicy !== undefined) container.imagePullPolicy = spec.imagePullPolicy;
  if (inputs.resources !== undefined) container.resources = inputs.resources;
  if (inputs.startupProbe !== undefined) container.startupProbe = inputs.startupProbe;

  const operatorTemplate: V1PodTemplateSpec = {
    metadata: { labels: componentLabels(name, component, inputs.mode ?? 'standalone') },
    spec: {
      ...(spec.serviceAccount !== undefined ? { serviceAccountName: spec.serviceAccount } : {}),
      containers: [container],
      volumes: [{ name: FLINK_CONFIG_VOLUME, configMap: { name: flinkConfigMapName(name) } }],
    },
  };
  const user = mergeUserPodTemplates(
    withoutApiFields(spec.podTemplate, 'spec.podTemplate'),
    withoutApiFields(userComponentTemplate, `spec.${component === 'jobmanager' ? 'jobManager' : 'taskManager'}.podTemplate`),
    templateListMerge(spec),
  );
  const merged = mergePodTemplates(user, JSON.parse(JSON.stringify(operatorTemplate)) as JsonObject);
  return merged;
}

/** A user pod template (a Pod) reduced to what a pod template holds: metadata and spec. */
export function withoutApiFields(template: Record<string, unknown> | undefined, field: string): JsonObject | undefined {
  if (template === undefined) return undefined;
  if (typeof template !== 'object' || template === null || Array.isArray(template)) throw new Error(`${field} must be an object (a Pod)`);
  const out: JsonObject = {};
  if (template.metadata !== undefined) {
    const { labels, annotations } = template.metadata as { labels?: unknown; annotations?: unknown };
    const metadata: JsonObject = {};
    if (labels !== undefined) metadata.labels = labels as JsonObject;
    if (annotations !== undefined) metadata.annotations = annotations as JsonObject;
    out.metadata = metadata;
  }
  if (template.spec !== undefined) out.spec = template.spec as JsonObject;
  return out;
}
