/**
 * The container runtime for Flink pods: when the simulated kubelet starts a pod's containers, a
 * Flink JobManager container (args `standalone-job …` or `jobmanager …`) becomes a
 * SimulatedJobManager that reads the args and the Flink configuration mounted at /opt/flink/conf
 * (the rendered ConfigMap `flink-config-<name>`): the file its Flink version reads, the version
 * taken from the image tag (flinkVersionFromImage) — `flink-conf.yaml` before 1.19, `config.yaml`
 * (else `flink-conf.yaml`) for 1.19/1.20, `config.yaml` for 2.x (loadFlinkConfiguration). A 1.17
 * JobManager never sees a `config.yaml`; given only that, it exits at start as Flink does. Other
 * containers (TaskManagers included) just "run".
 *
 * Guarantees: one SimulatedJobManager per running JobManager container; a restarted container or a
 * replacement pod gets a NEW one (which re-reads args and config); a configuration the JobManager
 * cannot start with makes the container fail (the kubelet turns it into CrashLoopBackOff), as a
 * real JobManager exits on an invalid configuration.
 * Assumptions: the FlinkDeployment name is the pod's `app` label (the rendered contract), else
 * `kubernetes.cluster-id`, else the pod name.
 *
 * Native application JobManagers (`bash -c "kubernetes-jobmanager.sh kubernetes-application"`,
 * see jobmanager-launch.ts) additionally run a NativeResourceManager that creates their
 * TaskManager pods through the API server (`kube` deps; without them no pods are created).
 *
 * Container logs (`logs` deps, pod-log-book.ts): a JobManager writes its entry point start, its job's
 * submission, restore, state changes and snapshots (flink-log-lines.ts), an exception when it
 * cannot start, and its SIGTERM shutdown when its pod is deleted; a TaskManager its registration at
 * the ResourceManager.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { SimulationCoreApi, SimulationAppsApi } from './simulation-api-client.js';
import { NativeResourceManager } from './native-resource-manager.js';
import { SimulatedJobManager } from './flink-jobmanager.js';
import type { JobManagerTiming } from './flink-jobmanager-context.js';
import { buildJobManagerLaunch, flinkVersionFromImage, parseFlinkArgs } from './jobmanager-launch.js';
import { type LoadedFlinkConfiguration, loadFlinkConfiguration, STANDARD_CONFIG_FILE } from './flink-configuration.js';
import type { ContainerRuntimeHooks, PodIdentity, PodStartResult } from './kubelet.js';
import type { LineageRecorder } from './lineage-recorder.js';
import type { SnapshotStorage } from './snapshot-storage.js';
import type { HaMetadataStore } from './ha-metadata.js';
import { randomHex, type RandomSource } from './simulation-random.js';
import { entrypointClassName, FlinkProcessLog } from './flink-log-lines.js';
import type { PodLogBook } from './pod-log-book.js';

export const FLINK_MAIN_CONTAINER = 'flink-main-container';
const FLINK_CONF_DIR = '/opt/flink/conf';

export interface FlinkProcessRuntimeDeps {
  readonly lineage: LineageRecorder;
  readonly storage: SnapshotStorage;
  readonly ha: HaMetadataStore | null;
  readonly random: RandomSource;
  readonly timing: JobManagerTiming;
  readonly onError?: (error: unknown, what: string) => void;
  /** API clients a native JobManager creates its TaskManager pods with. */
  readonly kube?: { readonly core: SimulationCoreApi; readonly apps: SimulationAppsApi };
  /** Where the processes' container logs go; none when absent. */
  readonly logs?: PodLogBook;
}

/** The Flink container of a pod: `flink-main-container`, else the first container. */
export function flinkContainer(pod: V1Pod): V1Container | undefined {
  const containers = pod.spec?.containers ?? [];
  return containers.find((c) => c.name === FLINK_MAIN_CONTAINER) ?? containers[0];
}

/**
 * The configuration the Flink process of `container` loads from /opt/flink/conf: the file its
 * version (from the image tag) reads, parsed by that file's rules; empty when nothing is mounted
 * there. Throws (the process exits) when the mounted directory lacks that file or it is invalid.
 */
export function mountedFlinkConfiguration(
  pod: V1Pod,
  container: V1Container,
  configMaps: ReadonlyMap<string, Record<string, string>>,
): LoadedFlinkConfiguration {
  return loadFlinkConfiguration(mountedConfDirectory(pod, container, configMaps), flinkVersionFromImage(container.image));
}

/** The files of the ConfigMap mounted at /opt/flink/conf in `container` (key = file name), if any. */
export function mountedConfDirectory(
  pod: V1Pod,
  container: V1Container,
  configMaps: ReadonlyMap<string, Record<string, string>>,
): Record<string, string> | undefined {
  const mount = container.volumeMounts?.find((m) => m.mountPath.replace(/\/+$/, '') === FLINK_CONF_DIR);
  const volume = mount && pod.spec?.volumes?.find((v) => v.name === mount.name);
  return volume?.configMap?.name ? configMaps.get(volume.configMap.name) : undefined;
}

export class FlinkProcessRuntime implements ContainerRuntimeHooks {
  private readonly byPodUid = new Map<string, SimulatedJobManager>();
  private readonly resourceManagers = new Map<string, NativeResourceManager>();
  /** Entry point class and log of each JobManager process, by pod uid (for its shutdown lines). */
  private readonly processLogs = new Map<string, { entrypoint: string; log: FlinkProcessLog }>();

  constructor(private readonly deps: FlinkProcessRuntimeDeps) {}

  /** The JobManager running in the pod with this uid, if any. */
  jobManagerOf(podUid: string): SimulatedJobManager | undefined {
    return this.byPodUid.get(podUid);
  }

  /** Every running JobManager. */
  jobManagers(): SimulatedJobManager[] {
    return [...this.byPodUid.values()];
  }

  async podStarted(pod: V1Pod, configMaps: ReadonlyMap<string, Record<string, string>>): Promise<PodStartResult> {
    const container = flinkContainer(pod);
    if (!container) return { ok: true };
    const args = [
      ...(container.command?.filter((c) => !c.endsWith('docker-entrypoint.sh') && !c.endsWith('kubernetes-entry.sh')) ?? []),
      ...(container.args ?? []),
    ];
    const role = parseFlinkArgsSafe(args);
    const uid = pod.metadata!.uid!;
    const logs = this.deps.logs;
    const log = new FlinkProcessLog((line) => logs?.append(uid, container.name, line));
    if (role === 'taskmanager') {
      const address = `pekko.tcp://flink@${pod.metadata?.labels?.['app'] ?? 'jobmanager'}:6123/user/rpc/resourcemanager_0`;
      log.taskManagerRegistered(address, randomHex(this.deps.random, 32));
    }
    if (role !== 'application-jobmanager' && role !== 'session-jobmanager') return { ok: true };
    const entrypoint = entrypointClassName(
      role,
      args.some((a) => a.includes('kubernetes-jobmanager.sh')),
    );
    log.entrypointStarting(entrypoint);
    let jm: SimulatedJobManager;
    try {
      const loaded = mountedFlinkConfiguration(pod, container, configMaps);
      const launch = buildJobManagerLaunch(args, loaded.config, container.image);
      const namespace = pod.metadata!.namespace!;
      const name = pod.metadata?.labels?.['app'] ?? launch.settings.highAvailability.clusterId ?? pod.metadata!.name!;
      jm = new SimulatedJobManager({
        pod: { namespace, name: pod.metadata!.name!, uid: pod.metadata!.uid! },
        deployment: { namespace, name },
        launch,
        storage: this.deps.storage,
        lineage: this.deps.lineage,
        ha: this.deps.ha,
        random: this.deps.random,
        timing: this.deps.timing,
        onError: this.deps.onError,
        log,
        onRescale: (parallelism) => {
          const rm = this.resourceManagers.get(uid);
          rm?.requirementsChanged(parallelism).catch((error: unknown) => this.deps.onError?.(error, `native resource manager of ${namespace}/${name}`));
        },
      });
      this.byPodUid.set(pod.metadata!.uid!, jm);
      this.processLogs.set(uid, { entrypoint, log });
      await jm.start();
      if (launch.args.native && launch.args.role === 'application-jobmanager' && this.deps.kube) {
        this.startResourceManager(
          pod,
          launch.config,
          launch.settings,
          mountedConfDirectory(pod, container, configMaps) ?? {},
          loaded.file ?? STANDARD_CONFIG_FILE,
        );
      }
    } catch (error) {
      this.byPodUid.delete(pod.metadata!.uid!);
      this.processLogs.delete(uid);
      const text = error instanceof Error ? error.message : String(error);
      log.entrypointFailed(
        entrypoint,
        `org.apache.flink.runtime.entrypoint.ClusterEntrypointException: Failed to initialize the cluster entrypoint ${entrypoint}.\nCaused by: ${text}`,
      );
      return { ok: false, message: `Flink JobManager failed to start: ${text}` };
    }
    return { ok: true };
  }

  /** The resource manager of the native JobManager in the pod with this uid, if any. */
  resourceManagerOf(podUid: string): NativeResourceManager | undefined {
    return this.resourceManagers.get(podUid);
  }

  /** Native JobManager: creates its TaskManager pods in the background (errors go to onError, as a JobManager logs them). */
  private startResourceManager(
    pod: V1Pod,
    config: ReadonlyMap<string, string>,
    settings: { parallelism: number; slotsPerTaskManager: number },
    confFiles: Record<string, string>,
    configFile: string,
  ): void {
    const namespace = pod.metadata!.namespace!;
    const clusterId = config.get('kubernetes.cluster-id') ?? pod.metadata?.labels?.['app'] ?? pod.metadata!.name!;
    const templatePath = config.get('kubernetes.pod-template-file.taskmanager');
    const templateFile = templatePath?.startsWith(`${FLINK_CONF_DIR}/`) ? confFiles[templatePath.slice(FLINK_CONF_DIR.length + 1)] : undefined;
    const rm = new NativeResourceManager({
      core: this.deps.kube!.core,
      apps: this.deps.kube!.apps,
      namespace,
      clusterId,
      config,
      parallelism: settings.parallelism,
      slotsPerTaskManager: settings.slotsPerTaskManager,
      configFile,
      ...(templateFile !== undefined ? { podTemplateYaml: templateFile } : {}),
    });
    this.resourceManagers.set(pod.metadata!.uid!, rm);
    rm.start().catch((error: unknown) => this.deps.onError?.(error, `native resource manager of ${namespace}/${clusterId}`));
  }

  podStopped(pod: PodIdentity, reason?: 'killed' | 'crashed'): void {
    this.resourceManagers.get(pod.uid)?.stop();
    this.resourceManagers.delete(pod.uid);
    const process = this.processLogs.get(pod.uid);
    this.processLogs.delete(pod.uid);
    if (process && reason === 'killed') process.log.terminatedBySignal(process.entrypoint);
    const jm = this.byPodUid.get(pod.uid);
    if (!jm) return;
    this.byPodUid.delete(pod.uid);
    jm.stop();
  }

  stopAll(): void {
    for (const rm of this.resourceManagers.values()) rm.stop();
    this.resourceManagers.clear();
    for (const jm of this.byPodUid.values()) jm.stop();
    this.byPodUid.clear();
    this.processLogs.clear();
  }
}

function parseFlinkArgsSafe(args: readonly string[]): string {
  try {
    return parseFlinkArgs(args).role;
  } catch {
    // an unparsable command line still identifies the role by its first word
    return args[0] === 'standalone-job' ? 'application-jobmanager' : args[0] === 'jobmanager' ? 'session-jobmanager' : 'unknown';
  }
}
