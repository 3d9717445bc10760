/**
 * The resource manager of a simulated NATIVE application JobManager (Flink's
 * KubernetesResourceManagerDriver + KubernetesTaskManagerFactory + Fabric8FlinkKubeClient): once
 * the JobManager runs, it creates its TaskManager pods through the API server, as a real native
 * JobManager does with its service account.
 *
 * - pods `<cluster-id>-taskmanager-<attempt>-<n>`: attempt = 1 + the highest attempt among the
 *   cluster's existing TaskManager pods (Flink's recoverWorkerNodesFromPreviousAttempts), n counts
 *   from 1 within this JobManager;
 * - how many: ceil(parallelism.default / taskmanager.numberOfTaskSlots), minus the live
 *   TaskManager pods of previous attempts, which the new JobManager adopts (Flink recovers them);
 * - labels `type=flink-native-kubernetes, app=<cluster-id>, component=taskmanager` (plus
 *   `kubernetes.taskmanager.labels`), owner reference (controller, blockOwnerDeletion) to the
 *   JobManager Deployment `<cluster-id>` read from the API server first, as Flink does: deleting
 *   that Deployment garbage-collects the TaskManagers;
 * - container `flink-main-container`: command `/docker-entrypoint.sh`, args
 *   `["bash", "-c", "kubernetes-taskmanager.sh -Dtaskmanager.resource-id=<pod> "]`, image
 *   `kubernetes.container.image.ref` (or `kubernetes.container.image`), port `taskmanager-rpc`
 *   6122, env `_POD_IP_ADDRESS`, memory `taskmanager.memory.process.size` (default 1728m), cpu
 *   `kubernetes.taskmanager.cpu` (default: the slot count), ConfigMap `flink-config-<cluster-id>`
 *   mounted at /opt/flink/conf with the configuration file the JobManager itself read
 *   (`flink-conf.yaml` or `config.yaml`, as Flink's FlinkConfMountDecorator names it by the
 *   loaded format) and `log4j-console.properties`, restartPolicy Never, service account
 *   `kubernetes.taskmanager.service-account` / `kubernetes.service-account`;
 * - a TaskManager pod template (`kubernetes.pod-template-file.taskmanager`, read from the mounted
 *   configuration directory) is the base the decoration is merged over.
 *
 * Guarantees: pods are created only while the JobManager runs (stop() stops further creations);
 * a create answered 409 (the pod exists) counts as created.
 * - new resource requirements of the job (an in-place rescale, flink-resource-requirements.ts):
 *   as many more TaskManagers as the new parallelism needs are created, numbered on (the adaptive
 *   scheduler declares the new requirements to the resource manager).
 * Caveats: no watch — a TaskManager pod deleted later is not replaced, and idle TaskManagers are
 * never released (nor after a rescale down); the job does not wait for its slots (it runs after
 * the JobManager's start delay).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { SimulationCoreApi, SimulationAppsApi } from './simulation-api-client.js';
import { parse as parseYaml } from 'yaml';

export const NATIVE_TYPE_LABEL = 'flink-native-kubernetes';
/**
 * User-Agent of the requests native JobManagers make (their service account's requests on a real
 * cluster), so the request log tells them from the rest of the simulation (same prefix).
 */
export const NATIVE_JOBMANAGER_USER_AGENT = 'flink-operator-devcluster-simulation/0.1 (native-jobmanager)';
const MAIN_CONTAINER = 'flink-main-container';
const CONF_DIR = '/opt/flink/conf';
const CONFIG_VOLUME = 'flink-config-volume';

export interface NativeTaskManagerPodInputs {
  readonly namespace: string;
  readonly clusterId: string;
  readonly podName: string;
  /** The JobManager Deployment's uid (owner reference). */
  readonly ownerUid: string;
  /** The JobManager's effective configuration. */
  readonly config: ReadonlyMap<string, string>;
  /** Parsed TaskManager pod template (a Pod), if any. */
  readonly template?: V1Pod;
  /** The configuration file the JobManager read (`config.yaml` or `flink-conf.yaml`); default `config.yaml`. */
  readonly configFile?: string;
}

/** Native TaskManager pod selector of a cluster. */
export function nativeTaskManagerLabels(clusterId: string): Record<string, string> {
  return { type: NATIVE_TYPE_LABEL, app: clusterId, component: 'taskmanager' };
}

/** Flink memory size (`1728m`, `2 gb`, `1073741824`) in MiB, rounded down; undefined when unparsable. */
export function flinkMemoryMiB(value: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  if (!match) return undefined;
  const factor: Record<string, number> = {
    '': 1,
    b: 1,
    bytes: 1,
    k: 1024,
    kb: 1024,
    m: 1024 ** 2,
    mb: 1024 ** 2,
    g: 1024 ** 3,
    gb: 1024 ** 3,
    t: 1024 ** 4,
    tb: 1024 ** 4,
  };
  const f = factor[match[2].toLowerCase()];
  return f === undefined ? undefined : Math.floor((Number(match[1]) * f) / 1024 ** 2);
}

/** `k1:v1,k2:v2` (Flink's map syntax) as an object. */
function flinkMap(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (value ?? '').split(',')) {
    const colon = entry.indexOf(':');
    if (colon > 0) out[entry.slice(0, colon).trim()] = entry.slice(colon + 1).trim();
  }
  return out;
}

/** The TaskManager pod a native JobManager creates (see the module comment). Pure. */
export function buildNativeTaskManagerPod(inputs: NativeTaskManagerPodInputs): V1Pod {
  const { config, clusterId, podName, template } = inputs;
  const slots = Number(config.get('taskmanager.numberOfTaskSlots') ?? '1') || 1;
  const memoryMiB = flinkMemoryMiB(config.get('taskmanager.memory.process.size') ?? '1728m') ?? 1728;
  const cpu = config.get('kubernetes.taskmanager.cpu') ?? String(slots);
  const templateMain = template?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER);
  const image = config.get('kubernetes.container.image.ref') ?? config.get('kubernetes.container.image') ?? templateMain?.image;
  const pullPolicy = config.get('kubernetes.container.image.pull-policy') ?? templateMain?.imagePullPolicy;
  const main: V1Container = {
    ...templateMain,
    name: MAIN_CONTAINER,
    ...(image !== undefined ? { image } : {}),
    ...(pullPolicy !== undefined ? { imagePullPolicy: pullPolicy } : {}),
    command: ['/docker-entrypoint.sh'],
    args: ['bash', '-c', `kubernetes-taskmanager.sh -Dtaskmanager.resource-id=${podName} `],
    ports: [...(templateMain?.ports ?? []), { name: 'taskmanager-rpc', containerPort: 6122, protocol: 'TCP' }],
    env: [...(templateMain?.env ?? []), { name: '_POD_IP_ADDRESS', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } }],
    volumeMounts: [...(templateMain?.volumeMounts ?? []).filter((m) => m.name !== CONFIG_VOLUME), { name: CONFIG_VOLUME, mountPath: CONF_DIR }],
    resources: {
      requests: { cpu, memory: `${memoryMiB}Mi` },
      limits: { cpu, memory: `${memoryMiB}Mi` },
    },
  };
  const serviceAccount = config.get('kubernetes.taskmanager.service-account') ?? config.get('kubernetes.service-account') ?? template?.spec?.serviceAccountName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace: inputs.namespace,
      labels: { ...template?.metadata?.labels, ...flinkMap(config.get('kubernetes.taskmanager.labels')), ...nativeTaskManagerLabels(clusterId) },
      ...(template?.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: clusterId, uid: inputs.ownerUid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      ...template?.spec,
      ...(serviceAccount !== undefined ? { serviceAccountName: serviceAccount } : {}),
      restartPolicy: 'Never',
      containers: [main, ...(template?.spec?.containers ?? []).filter((c) => c.name !== MAIN_CONTAINER)],
      volumes: [
        ...(template?.spec?.volumes ?? []).filter((v) => v.name !== CONFIG_VOLUME),
        {
          name: CONFIG_VOLUME,
          configMap: {
            name: `flink-config-${clusterId}`,
            items: [
              { key: inputs.configFile ?? 'config.yaml', path: inputs.configFile ?? 'config.yaml' },
              { key: 'log4j-console.properties', path: 'log4j-console.properties' },
            ],
          },
        },
      ],
    },
  };
}

/** Attempt number of a native TaskManager pod name `<cluster-id>-taskmanager-<attempt>-<n>`, or 0. */
export function taskManagerAttemptOf(clusterId: string, podName: string): number {
  const prefix = `${clusterId}-taskmanager-`;
  if (!podName.startsWith(prefix)) return 0;
  const match = /^(\d+)-\d+$/.exec(podName.slice(prefix.length));
  return match ? Number(match[1]) : 0;
}

export interface NativeResourceManagerDeps {
  readonly core: SimulationCoreApi;
  readonly apps: SimulationAppsApi;
  readonly namespace: string;
  readonly clusterId: string;
  readonly config: ReadonlyMap<string, string>;
  readonly parallelism: number;
  readonly slotsPerTaskManager: number;
  /** The configuration file the JobManager read, mounted into its TaskManagers (default `config.yaml`). */
  readonly configFile?: string;
  /** Text of the TaskManager pod template file, if the configuration names one that is mounted. */
  readonly podTemplateYaml?: string;
}

export class NativeResourceManager {
  private stopped = false;
  /** Names of the pods this JobManager created. */
  readonly created: string[] = [];
  private parallelism: number;
  /** The attempt number of this JobManager's pods (set by start()). */
  private attempt: number | undefined;
  /** The start or re-check under way: one at a time, so no pod name is created twice. */
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly deps: NativeResourceManagerDeps) {
    this.parallelism = deps.parallelism;
  }

  /** How many TaskManagers the job needs: ceil(parallelism / slots), at least 1. */
  get requiredTaskManagers(): number {
    return Math.max(1, Math.ceil(this.parallelism / Math.max(1, this.deps.slotsPerTaskManager)));
  }

  /** The job's parallelism changed in place: the TaskManagers it needs now are created (none released). */
  requirementsChanged(parallelism: number): Promise<void> {
    this.parallelism = parallelism;
    return this.serially(() => (this.attempt === undefined ? Promise.resolve() : this.createMissing()));
  }

  /** Recovers the previous attempts' TaskManagers and creates the missing ones. Throws what the API server answers. */
  start(): Promise<void> {
    return this.serially(() => this.createMissing());
  }

  /** Runs `work` after the one under way (whatever became of it). */
  private serially(work: () => Promise<void>): Promise<void> {
    this.running = this.running.catch(() => undefined).then(work);
    return this.running;
  }

  /** Lists the cluster's live TaskManager pods (the first time: fixes the attempt) and creates the ones missing. */
  private async createMissing(): Promise<void> {
    const { core, apps, namespace, clusterId } = this.deps;
    const selector = Object.entries(nativeTaskManagerLabels(clusterId))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const existing = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items;
    const attempt = (this.attempt ??= 1 + Math.max(0, ...existing.map((p) => taskManagerAttemptOf(clusterId, p.metadata?.name ?? ''))));
    const live = existing.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded').length;
    const missing = this.requiredTaskManagers - live;
    if (missing <= 0 || this.stopped) return;
    const owner = await apps.readNamespacedDeployment({ namespace, name: clusterId });
    const template = this.deps.podTemplateYaml ? (parseYaml(this.deps.podTemplateYaml) as V1Pod) : undefined;
    const first = this.created.length + 1;
    for (let n = first; n < first + missing && !this.stopped; n++) {
      const pod = buildNativeTaskManagerPod({
        namespace,
        clusterId,
        podName: `${clusterId}-taskmanager-${attempt}-${n}`,
        ownerUid: owner.metadata!.uid!,
        config: this.deps.config,
        ...(this.deps.configFile !== undefined ? { configFile: this.deps.configFile } : {}),
        ...(template ? { template } : {}),
      });
      try {
        await core.createNamespacedPod({ namespace, body: pod });
      } catch (error) {
        if ((error as { code?: number }).code !== 409) throw error;
      }
      this.created.push(pod.metadata!.name!);
    }
  }

  /** The JobManager process ended: no further pods. */
  stop(): void {
    this.stopped = true;
  }
}
