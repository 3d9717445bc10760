/**
 * The development cluster with its simulated node: the emulated API server (dev-cluster.ts) plus
 * the simulation (src/devcluster/simulation/): Deployment and ReplicaSet controllers, a kubelet
 * running every Pod, a simulated Flink JobManager behind every Flink JobManager pod, and the
 * service proxy that routes `/api/v1/namespaces/NS/services/NAME:PORT/proxy/PATH` to it. A
 * native-mode JobManager creates its TaskManager pods through the API server (design/009).
 *
 * The simulation talks to the API server only over HTTP through @kubernetes/client-node (informers
 * + per-key work queues), sending `User-Agent: flink-operator-devcluster-simulation/0.1`.
 * What it covers and what it does not: design/003b-simulation.md.
 */
import type { V1Deployment, V1Pod, V1ReplicaSet, V1Service } from '@kubernetes/client-node';
import { type DevCluster, type DevClusterOptions, startDevCluster } from './dev-cluster.js';
import { DeploymentController } from './simulation/deployment-controller.js';
import { FlinkProcessRuntime } from './simulation/flink-process-runtime.js';
import type { SimulatedJobManager } from './simulation/flink-jobmanager.js';
import { KubeHaMetadataStore } from './simulation/kube-ha-metadata-store.js';
import { SimulatedKubelet } from './simulation/kubelet.js';
import { NATIVE_JOBMANAGER_USER_AGENT } from './simulation/native-resource-manager.js';
import { PodWarningEvents } from './simulation/pod-warning-events.js';
import { PodLogBook } from './simulation/pod-log-book.js';
import { type LineageRecord, LineageRecorder } from './simulation/lineage-recorder.js';
import { ReplicaSetController } from './simulation/replicaset-controller.js';
import { SimulatedServiceProxy } from './simulation/service-proxy.js';
import { simulationApis } from './simulation/simulation-api-client.js';
import { SimulationInformer } from './simulation/simulation-informer.js';
import { simulationKubeConfig, SIMULATION_USER_AGENT } from './simulation/simulation-kube-config.js';
import { SnapshotStorage, type StoredSnapshot } from './simulation/snapshot-storage.js';

export type { LineageRecord } from './simulation/lineage-recorder.js';
export { SIMULATION_USER_AGENT } from './simulation/simulation-kube-config.js';
export { NATIVE_JOBMANAGER_USER_AGENT } from './simulation/native-resource-manager.js';
export { seededRandom } from './simulation/simulation-random.js';
export { SIMULATOR_KEYS } from './simulation/flink-configuration.js';

export interface SimulationOptions {
  /** Pod created → Running and Ready (also: the crash period of a `crashloop` pod). Default 30 ms. */
  podReadyDelayMs?: number;
  /** Flink job INITIALIZING → RUNNING. Default 30 ms. */
  jobStartDelayMs?: number;
  /** Savepoint / stop-with-savepoint / triggered checkpoint duration. Default 50 ms. */
  savepointDurationMs?: number;
  /** Periodic checkpoint interval for jobs whose configuration sets none; default: only jobs with `execution.checkpointing.interval` checkpoint. */
  checkpointIntervalMs?: number;
  /** CANCELLING → CANCELED. Default 10 ms. */
  cancelDurationMs?: number;
  /** First CrashLoopBackOff delay (doubles per restart). Default 4 × podReadyDelayMs. */
  crashLoopBackoffMs?: number;
  /** CrashLoopBackOff cap. Default 40 × podReadyDelayMs. */
  crashLoopMaxBackoffMs?: number;
  /** A deleted pod's containers stop (and the kubelet deletes it) that long after the deletion. Default 0. */
  terminationDelayMs?: number;
  /** Seedable randomness for ids and names (see seededRandom). Default Math.random. */
  random?: () => number;
  /** Called with errors the simulation survives (failed writes it retries, crashed JobManager starts, ...). */
  onError?: (error: unknown, what: string) => void;
}

/** Slower timings for a human watching the demo. */
export const DEMO_SIMULATION_TIMING: Readonly<SimulationOptions> = {
  podReadyDelayMs: 2_000,
  jobStartDelayMs: 3_000,
  savepointDurationMs: 2_000,
  cancelDurationMs: 1_000,
};

export interface Simulation {
  /** The lineage record of FlinkDeployment `namespace/name` (also served at GET …/proxy/simulator/lineage). */
  lineage(namespace: string, name: string): LineageRecord;
  /** The running simulated JobManagers (one per running JobManager container). */
  jobManagers(): SimulatedJobManager[];
  /** Savepoints and checkpoints currently restorable in the simulated storage. */
  snapshots(): StoredSnapshot[];
  /** Resolves when the simulated controllers and kubelet have no queued work (timers may still be pending). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export interface SimulatedCluster {
  cluster: DevCluster;
  simulation: Simulation;
  stop(): Promise<void>;
}

/**
 * What the simulation needs of a cluster: its client configuration and a place to attach the
 * service proxy. A DevCluster in this process is one; so is a remote API server whose proxy
 * forwards to `serveServiceProxy` (remote-service-proxy.ts), when the simulation runs in a process
 * of its own (the benchmark's layout).
 */
export type SimulationHost = Pick<DevCluster, 'kubeConfig' | 'setServiceProxy'> & Partial<Pick<DevCluster, 'setPodLogSource'>>;

/** Starts the simulation against `cluster` and attaches it as the cluster's service proxy. */
export async function startSimulation(cluster: SimulationHost, options: SimulationOptions = {}): Promise<Simulation> {
  const random = options.random ?? Math.random;
  const podReadyDelayMs = options.podReadyDelayMs ?? 30;
  const onError = options.onError;
  const kc = simulationKubeConfig(cluster.kubeConfig(), SIMULATION_USER_AGENT);
  const { core, apps } = simulationApis(kc, SIMULATION_USER_AGENT);
  const informerError = (what: string) => (error: unknown) => onError?.(error, `${what} informer`);

  const deployments = new SimulationInformer<V1Deployment>({
    kubeConfig: kc,
    path: '/apis/apps/v1/deployments',
    list: () => apps.listDeploymentForAllNamespaces(),
    onError: informerError('deployments'),
  });
  const replicaSets = new SimulationInformer<V1ReplicaSet>({
    kubeConfig: kc,
    path: '/apis/apps/v1/replicasets',
    list: () => apps.listReplicaSetForAllNamespaces(),
    onError: informerError('replicasets'),
  });
  const pods = new SimulationInformer<V1Pod>({
    kubeConfig: kc,
    path: '/api/v1/pods',
    list: () => core.listPodForAllNamespaces(),
    onError: informerError('pods'),
  });
  const services = new SimulationInformer<V1Service>({
    kubeConfig: kc,
    path: '/api/v1/services',
    list: () => core.listServiceForAllNamespaces(),
    onError: informerError('services'),
  });

  const lineage = new LineageRecorder();
  const logs = new PodLogBook();
  const storage = new SnapshotStorage();
  const runtime = new FlinkProcessRuntime({
    lineage,
    storage,
    ha: new KubeHaMetadataStore(core),
    random,
    onError,
    kube: simulationApis(cluster.kubeConfig(), NATIVE_JOBMANAGER_USER_AGENT),
    logs,
    timing: {
      jobStartDelayMs: options.jobStartDelayMs ?? 30,
      savepointDurationMs: options.savepointDurationMs ?? 50,
      cancelDurationMs: options.cancelDurationMs ?? 10,
      disposalDurationMs: Math.max(1, Math.round((options.savepointDurationMs ?? 50) / 5)),
      defaultCheckpointIntervalMs: options.checkpointIntervalMs ?? null,
    },
  });
  const deploymentController = new DeploymentController({ apps, deployments, replicaSets, onError });
  const replicaSetController = new ReplicaSetController({ apps, core, replicaSets, pods, random, onError });
  const kubelet = new SimulatedKubelet({
    core,
    pods,
    hooks: runtime,
    onError,
    events: new PodWarningEvents(core, random, onError),
    logs,
    options: {
      podReadyDelayMs,
      crashLoopBackoffMs: options.crashLoopBackoffMs ?? podReadyDelayMs * 4,
      crashLoopMaxBackoffMs: options.crashLoopMaxBackoffMs ?? podReadyDelayMs * 40,
      mountRetryMs: Math.max(podReadyDelayMs, 50),
      terminationDelayMs: options.terminationDelayMs ?? 0,
    },
  });
  const proxy = new SimulatedServiceProxy({ services, pods, runtime, lineage, random });

  const informers = [deployments, replicaSets, pods, services];
  await Promise.all(informers.map((i) => i.start()));
  cluster.setServiceProxy(proxy.handle);
  // a host in another process has no setPodLogSource: its bound pods answer "kubelet unreachable" (design/003b)
  cluster.setPodLogSource?.(logs);

  let stopping: Promise<void> | undefined;
  return {
    lineage: (namespace, name) => lineage.get(namespace, name),
    jobManagers: () => runtime.jobManagers(),
    snapshots: () => storage.list(),
    async idle() {
      await Promise.all([deploymentController.idle(), replicaSetController.idle(), kubelet.idle()]);
    },
    stop() {
      stopping ??= (async () => {
        cluster.setServiceProxy(undefined);
        cluster.setPodLogSource?.(undefined);
        await Promise.all(informers.map((i) => i.stop()));
        await Promise.all([deploymentController.stop(), replicaSetController.stop(), kubelet.stop()]);
        runtime.stopAll();
      })();
      return stopping;
    },
  };
}

/** Starts a dev cluster and the simulation on it. `stop()` stops both. */
export async function startSimulatedCluster(options: DevClusterOptions & { simulation?: SimulationOptions } = {}): Promise<SimulatedCluster> {
  const { simulation: simulationOptions, ...clusterOptions } = options;
  const cluster = await startDevCluster(clusterOptions);
  let simulation: Simulation;
  try {
    simulation = await startSimulation(cluster, simulationOptions);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return {
    cluster,
    simulation,
    async stop() {
      await simulation.stop();
      await cluster.stop();
    },
  };
}
