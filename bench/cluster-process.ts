/**
 * The benchmark's cluster process: the development cluster (emulated API server) with the
 * FlinkDeployment CRD installed and a request tally. The simulated kubelet, controllers and Flink
 * run either in a process of their own (simulation-process.ts, the default: as on a real cluster,
 * where kubelet and controller manager are not the API server's process) or, with
 * `simulation: 'in-process'`, inside this one (`startSimulatedCluster`, the layout of the tests and
 * the demo).
 *
 * Started by bench-processes.ts with `fork` (IPC channel). Argument: a JSON `ClusterProcessOptions`.
 * It writes the kubeconfig to `kubeconfigPath`, then sends `{ type: 'ready' }`.
 * Requests (each answered with `{ id, result }` or `{ id, error }`):
 * - `tally` → TallyRow[] since the last reset; `reset` clears the tally;
 * - `usage` → this process's CPU seconds, event-loop utilization since the last `usage`, RSS, heap;
 * - `proxyTo` (arg: URL) → the service proxy forwards to the simulation process there;
 * - `stop` → stops the simulation (when in this process) and the cluster, then exits.
 */
import { startDevCluster } from '../src/devcluster/dev-cluster.js';
import { forwardServiceProxy } from '../src/devcluster/remote-service-proxy.js';
import { seededRandom, startSimulatedCluster } from '../src/devcluster/simulated-cluster.js';
import { installCrd, STATE_SNAPSHOT_CRD_FILE } from '../test/e2e/operator-harness.js';
import { RequestTally } from './request-tally.js';
import { answerParentRequests } from './parent-requests.js';

export type { ProcessUsage } from './process-usage.js';

export interface SimulationTiming {
  seed: number;
  podReadyDelayMs: number;
  jobStartDelayMs: number;
  savepointDurationMs: number;
}

export interface ClusterProcessOptions extends SimulationTiming {
  kubeconfigPath: string;
  /** Where the simulation runs (default 'separate': simulation-process.ts). */
  simulation: 'separate' | 'in-process';
  /** Install the FlinkStateSnapshot CRD too (all of crds/, as `kubectl apply -f crds/` does). */
  stateSnapshotCrd?: boolean;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]) as ClusterProcessOptions;
  const clusterOptions = { kubeconfigPath: options.kubeconfigPath, requestLogSize: 1_000, watchHistorySize: 100_000 };
  const world =
    options.simulation === 'in-process'
      ? await startSimulatedCluster({
          ...clusterOptions,
          simulation: {
            random: seededRandom(options.seed),
            podReadyDelayMs: options.podReadyDelayMs,
            jobStartDelayMs: options.jobStartDelayMs,
            savepointDurationMs: options.savepointDurationMs,
          },
        })
      : await startDevCluster(clusterOptions).then((cluster) => ({ cluster, stop: () => cluster.stop() }));
  await installCrd(world.cluster.kubeConfig());
  if (options.stateSnapshotCrd) await installCrd(world.cluster.kubeConfig(), STATE_SNAPSHOT_CRD_FILE);
  const tally = new RequestTally();
  const log = world.cluster.requestLog;
  const record = log.record.bind(log);
  log.record = (entry) => {
    record(entry);
    tally.record(entry);
  };
  let forwarder: ReturnType<typeof forwardServiceProxy> | undefined;

  answerParentRequests(
    'cluster',
    {
      tally: () => tally.snapshot(),
      reset: () => tally.reset(),
      proxyTo: (url) => {
        forwarder?.close();
        forwarder = forwardServiceProxy(String(url));
        world.cluster.setServiceProxy(forwarder);
      },
    },
    async () => {
      forwarder?.close();
      await world.stop();
    },
  );
  process.send!({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error('cluster process:', error);
  process.exit(1);
});
