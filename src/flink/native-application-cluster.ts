/**
 * Flink native Kubernetes application mode (`spec.mode: native`, or unset): what Flink's own
 * client (KubernetesClusterDescriptor.deployApplicationCluster, the Apache operator's
 * NativeFlinkService) would create, rendered by the operator so that it stays declarative and
 * re-renderable after a crash (design/009-native-mode.md):
 *
 * - the effective configuration: the standalone keys (flink-config-builder.ts) changed to native —
 *   `execution.target: kubernetes-application`, `pipeline.jars` (the jar URI as given, instead of
 *   `pipeline.classpaths`), `$internal.application.main` / `$internal.application.program-args`
 *   (the application entry point reads them; there are no CLI options in native mode),
 *   `kubernetes.container.image.ref` (or `kubernetes.container.image` before Flink 1.17),
 *   `kubernetes.container.image.pull-policy`, `kubernetes.service-account`,
 *   `kubernetes.jobmanager.replicas`, `kubernetes.rest-service.exposed.type` (default ClusterIP),
 *   `kubernetes.jobmanager.cpu` / `kubernetes.taskmanager.cpu` from the resources, and
 *   `kubernetes.pod-template-file.taskmanager` when the spec has TaskManager pod templates;
 *   the JobManager's resource manager builds its TaskManager pods from exactly these keys;
 * - the JobManager Deployment `<name>` as Flink's KubernetesJobManagerFactory builds it: labels
 *   and selector `type=flink-native-kubernetes, app=<name>, component=jobmanager`, container
 *   `flink-main-container` with command `/docker-entrypoint.sh` and args
 *   `["bash", "-c", "kubernetes-jobmanager.sh kubernetes-application "]` (CmdJobManagerDecorator;
 *   the trailing space is Flink's empty `kubernetes.jobmanager.entrypoint.args`), no strategy;
 * - NO TaskManager Deployment: the JobManager (KubernetesResourceManagerDriver) creates pods
 *   `<name>-taskmanager-<attempt>-<n>` owned by the JobManager Deployment, which needs the
 *   service account's RBAC (manifests/flink-job-rbac/).
 *
 * Guarantees: pure and deterministic, like the standalone rendering; a restore path is only in the
 * configuration (`execution.state-recovery.path` / `execution.savepoint.path`), never in args.
 * Caveats: program args are joined with `;` (Flink's list syntax in a flat configuration value),
 * so an argument containing `;` would be split by Flink.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { isFlinkVersionAtLeast } from './flink-config-builder.js';
import { componentResources, cpuCoresOf } from './flink-container-resources.js';
import { withoutApiFields } from './flink-pod-template.js';
import { mergeUserPodTemplates, templateListMerge } from './pod-template-merge.js';
import { jobManagerDeploymentWith } from './jobmanager-deployment.js';
import { deploymentKey, FLINK_CONF_DIR, nativeJobManagerSelector } from './flink-resource-naming.js';
import { REST_SERVICE_EXPOSED_TYPE_KEY } from './flink-services.js';

/** Flink's `kubernetes-jobmanager.sh` target for an application cluster (KubernetesDeploymentTarget.APPLICATION). */
export const NATIVE_APPLICATION_TARGET = 'kubernetes-application';
/** The target of a session cluster (`job` unset; KubernetesDeploymentTarget.SESSION). */
export const NATIVE_SESSION_TARGET = 'kubernetes-session';

/** `kubernetes-application` with a job, `kubernetes-session` without (as the Apache operator's FlinkConfigBuilder). */
export function nativeTargetOf(spec: FlinkDeploymentSpec): string {
  return spec.job ? NATIVE_APPLICATION_TARGET : NATIVE_SESSION_TARGET;
}
/** File name (in the configuration ConfigMap, so under /opt/flink/conf) of the TaskManager pod template. */
export const TASK_MANAGER_POD_TEMPLATE_FILE = 'taskmanager-pod-template.yaml';

/** The native JobManager container args: Flink's bash wrapper around `kubernetes-jobmanager.sh <target> <entrypoint args>` (entrypoint args empty). */
export function nativeJobManagerArgs(spec: FlinkDeploymentSpec): string[] {
  return ['bash', '-c', `kubernetes-jobmanager.sh ${nativeTargetOf(spec)} `];
}

/** CPU quantity (`2`, `500m`, `0.5`) as Flink's double, or undefined. */
function cpuCores(quantity: unknown): string | undefined {
  const cores = cpuCoresOf(quantity);
  return cores === undefined ? undefined : String(cores);
}

function cpuOf(component: FlinkDeploymentSpec['jobManager'] | FlinkDeploymentSpec['taskManager'], field: string): string | undefined {
  const { requirements } = componentResources(component, field);
  return cpuCores(requirements?.requests?.cpu ?? requirements?.limits?.cpu);
}

/**
 * The merged TaskManager pod template (`spec.podTemplate`, then `spec.taskManager.podTemplate`)
 * as the YAML of a Pod, or undefined when the spec has neither. Flink merges it with its own
 * TaskManager decoration when it creates each TaskManager pod.
 */
export function taskManagerPodTemplateYaml(spec: FlinkDeploymentSpec): string | undefined {
  if (spec.podTemplate === undefined && spec.taskManager?.podTemplate === undefined) return undefined;
  const merged = mergeUserPodTemplates(
    withoutApiFields(spec.podTemplate, 'spec.podTemplate'),
    withoutApiFields(spec.taskManager?.podTemplate, 'spec.taskManager.podTemplate'),
    templateListMerge(spec),
  );
  return toYaml({ apiVersion: 'v1', kind: 'Pod', ...merged }, { sortMapEntries: true });
}

/**
 * Turns the standalone configuration `standalone` (buildFlinkConfiguration's output for the same
 * inputs) into the native one. Returns a new map, keys sorted.
 */
export function nativeFlinkConfiguration(standalone: Readonly<Record<string, string>>, spec: FlinkDeploymentSpec): Record<string, string> {
  const config: Record<string, string> = { ...standalone };
  const user = flattenFlinkConfiguration(spec.flinkConfiguration);
  config['execution.target'] = nativeTargetOf(spec);
  delete config['pipeline.classpaths'];
  if (spec.job?.jarURI) config['pipeline.jars'] = spec.job.jarURI;
  if (spec.job?.entryClass) config['$internal.application.main'] = spec.job.entryClass;
  else delete config['$internal.application.main'];
  if (spec.job?.args && spec.job.args.length > 0) config['$internal.application.program-args'] = spec.job.args.join(';');
  else delete config['$internal.application.program-args'];
  if (spec.image !== undefined) {
    config[isFlinkVersionAtLeast(spec.flinkVersion, 'v1_17') ? 'kubernetes.container.image.ref' : 'kubernetes.container.image'] = spec.image;
  }
  if (spec.imagePullPolicy !== undefined) config['kubernetes.container.image.pull-policy'] = spec.imagePullPolicy;
  if (spec.serviceAccount !== undefined) config['kubernetes.service-account'] = spec.serviceAccount;
  if ((spec.jobManager?.replicas ?? 0) > 0) config['kubernetes.jobmanager.replicas'] = String(spec.jobManager!.replicas);
  config[REST_SERVICE_EXPOSED_TYPE_KEY] = user[REST_SERVICE_EXPOSED_TYPE_KEY]?.trim() || 'ClusterIP';
  const jmCpu = cpuOf(spec.jobManager, 'spec.jobManager');
  if (jmCpu !== undefined) config['kubernetes.jobmanager.cpu'] = jmCpu;
  const tmCpu = cpuOf(spec.taskManager, 'spec.taskManager');
  if (tmCpu !== undefined) config['kubernetes.taskmanager.cpu'] = tmCpu;
  if (taskManagerPodTemplateYaml(spec) !== undefined) {
    config['kubernetes.pod-template-file.taskmanager'] = `${FLINK_CONF_DIR}/${TASK_MANAGER_POD_TEMPLATE_FILE}`;
  } else {
    delete config['kubernetes.pod-template-file.taskmanager'];
  }
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(config).sort()) sorted[key] = config[key]!;
  return sorted;
}

export interface NativeJobManagerDeploymentInputs {
  readonly spec: FlinkDeploymentSpec;
  readonly generation: number;
  readonly specHash: string;
  readonly restPort?: number;
}

/** The native JobManager Deployment `<name>` (see the module comment). */
export function buildNativeJobManagerDeployment(deployment: FlinkDeploymentV1, inputs: NativeJobManagerDeploymentInputs): V1Deployment {
  const { name } = deploymentKey(deployment);
  return jobManagerDeploymentWith(deployment, inputs, { mode: 'native', args: nativeJobManagerArgs(inputs.spec), selector: nativeJobManagerSelector(name) });
}
