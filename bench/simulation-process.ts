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
import { answerParentRequests } from './parent-requests.js';

export interface SimulationProcessOptions extends SimulationTiming {
  kubeconfigPath: string;
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]) as SimulationProcessOptions;
  const base = new KubeConfig();
  base.loadFromFile(options.kubeconfigPath);
  const server = await serveServiceProxy();
  const simulation = await startSimulation(
    { kubeConfig: () => base, setServiceProxy: (handler) => server.setHandler(handler) },
    {
      random: seededRandom(options.seed),
      podReadyDelayMs: options.podReadyDelayMs,
      jobStartDelayMs: options.jobStartDelayMs,
      savepointDurationMs: options.savepointDurationMs,
    },
  );

  answerParentRequests('simulation', {}, async () => {
    await simulation.stop();
    await server.stop();
  });
  process.send!({ type: 'ready', proxyUrl: server.url });
}

main().catch((error: unknown) => {
  console.error('simulation process:', error);
  process.exit(1);
});
