/**
 * The benchmark's cluster process: the development cluster with its simulated kubelet and Flink
 * (`startSimulatedCluster`, which must share the API server's process because the simulation is the
 * cluster's service proxy), the FlinkDeployment CRD installed, and a request tally.
 *
 * Started by bench-processes.ts with `fork` (IPC channel). Argument: a JSON `ClusterProcessOptions`.
 * It writes the kubeconfig to `kubeconfigPath`, then sends `{ type: 'ready' }`.
 * Requests (each answered with `{ id, result }` or `{ id, error }`):
 * - `tally` → TallyRow[] since the last reset; `reset` clears the tally;
 * - `usage` → this process's CPU seconds, event-loop utilization since the last `usage`, RSS, heap;
 * - `stop` → stops the simulation and the cluster, then exits.
 */
import { performance } from 'node:perf_hooks';
import { seededRandom, startSimulatedCluster } from '../src/devcluster/simulated-cluster.js';
import { installCrd } from '../test/e2e/operator-harness.js';
import { RequestTally } from './request-tally.js';
import { startPhaseProfile, stopPhaseProfile } from './phase-profiler.js';

export interface ClusterProcessOptions {
  kubeconfigPath: string;
  seed: number;
  podReadyDelayMs: number;
  jobStartDelayMs: number;
  savepointDurationMs: number;
}

export interface ProcessUsage {
  cpuSeconds: number;
  /** event-loop utilization (0..1) since the previous `usage` request */
  eventLoopUtilization: number;
  rssBytes: number;
  heapUsedBytes: number;
}

let lastElu = performance.eventLoopUtilization();

/** CPU, event-loop utilization since the previous call, RSS and heap of this process. */
export function processUsage(): ProcessUsage {
  const now = performance.eventLoopUtilization();
  const delta = performance.eventLoopUtilization(now, lastElu);
  lastElu = now;
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return { cpuSeconds: (cpu.user + cpu.system) / 1e6, eventLoopUtilization: delta.utilization, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed };
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]!) as ClusterProcessOptions;
  const world = await startSimulatedCluster({
    kubeconfigPath: options.kubeconfigPath,
    requestLogSize: 1_000,
    watchHistorySize: 100_000,
    simulation: {
      random: seededRandom(options.seed),
      podReadyDelayMs: options.podReadyDelayMs,
      jobStartDelayMs: options.jobStartDelayMs,
      savepointDurationMs: options.savepointDurationMs,
    },
  });
  await installCrd(world.cluster.kubeConfig());
  const tally = new RequestTally();
  const log = world.cluster.requestLog;
  const record = log.record.bind(log);
  log.record = (entry) => {
    record(entry);
    tally.record(entry);
  };

  process.on('message', (message: { id: number; op: string }) => {
    const answer = (result: unknown) => process.send!({ id: message.id, result });
    switch (message.op) {
      case 'tally':
        return answer(tally.snapshot());
      case 'reset':
        tally.reset();
        return answer(null);
      case 'usage':
        return answer(processUsage());
      case 'profileStart':
        void startPhaseProfile().then(() => answer(null));
        return;
      case 'profileStop':
        void stopPhaseProfile(`${process.env.BENCH_PROFILE_DIR ?? '.'}/cluster-${Date.now()}.cpuprofile`).then(answer);
        return;
      case 'stop':
        void world.stop().then(() => {
          answer(null);
          process.exit(0);
        });
        return;
      default:
        process.send!({ id: message.id, error: `unknown op ${message.op}` });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error('cluster process:', error);
  process.exit(1);
});
