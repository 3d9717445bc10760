/**
 * The benchmark's simulation process: the simulated Deployment/ReplicaSet controllers, kubelet and
 * Flink JobManagers (`startSimulation`), talking to the cluster process's API server over HTTP as
 * a real kubelet and controller manager do, and answering the API server's service proxy through
 * `serveServiceProxy` (src/devcluster/remote-service-proxy.ts). Keeping it out of the API server's
 * process is what lets the benchmark tell the API server's capacity from the simulation's cost.
 *
 * Started by bench-processes.ts with `fork` (IPC channel). Argument: a JSON `SimulationProcessOptions`.
 * Sends `{ type: 'ready', proxyUrl }` once its informers have synced.
 * Requests: `usage` (as cluster-process.ts), `profileStart` / `profileStop`, `stop`.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { serveServiceProxy } from '../src/devcluster/remote-service-proxy.js';
import { seededRandom, startSimulation } from '../src/devcluster/simulated-cluster.js';
import type { SimulationTiming } from './cluster-process.js';
import { startPhaseProfile, stopPhaseProfile } from './phase-profiler.js';
import { processUsage } from './process-usage.js';

export interface SimulationProcessOptions extends SimulationTiming {
  kubeconfigPath: string;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]!) as SimulationProcessOptions;
  const base = new KubeConfig();
  base.loadFromFile(options.kubeconfigPath);
  const server = await serveServiceProxy();
  const simulation = await startSimulation(
    { kubeConfig: () => base, setServiceProxy: (handler) => server.setHandler(handler) },
    { random: seededRandom(options.seed), podReadyDelayMs: options.podReadyDelayMs, jobStartDelayMs: options.jobStartDelayMs, savepointDurationMs: options.savepointDurationMs },
  );

  process.on('message', (message: { id: number; op: string }) => {
    const answer = (result: unknown) => process.send!({ id: message.id, result });
    switch (message.op) {
      case 'usage':
        return answer(processUsage());
      case 'profileStart':
        void startPhaseProfile().then(() => answer(null));
        return;
      case 'profileStop':
        void stopPhaseProfile(`${process.env.BENCH_PROFILE_DIR ?? '.'}/simulation-${Date.now()}.cpuprofile`).then(answer);
        return;
      case 'stop':
        void simulation
          .stop()
          .then(() => server.stop())
          .then(() => {
            answer(null);
            process.exit(0);
          });
        return;
      default:
        process.send!({ id: message.id, error: `unknown op ${message.op}` });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'ready', proxyUrl: server.url });
}

main().catch((error: unknown) => {
  console.error('simulation process:', error);
  process.exit(1);
});
