/**
 * `flink-operator dev-cluster --kubeconfig FILE [--port N] [--api-only] [--tls] [timings]`: runs the
 * development cluster in the foreground, writes a kubeconfig to FILE once it serves, logs one line
 * with its URL, and stops cleanly on SIGINT/SIGTERM.
 *
 * By default it runs with the simulation (src/devcluster/simulated-cluster.ts): Deployment and
 * ReplicaSet controllers, a kubelet and a simulated Flink JobManager behind every JobManager pod,
 * reached through the API server's service proxy, so that an operator run against it
 * (`flink-operator run --flink-rest-access apiserver-proxy`) deploys and runs jobs. The timings
 * default to the demo's human-scale DEMO_SIMULATION_TIMING (pods ready after 2 s, jobs RUNNING 3 s
 * after their JobManager starts, savepoints taking 2 s). `--api-only` serves the emulated API
 * server alone: objects are stored and watched, but nothing runs them (no pods, no Flink).
 * `--tls` serves HTTPS with a self-signed certificate (the kubeconfig skips verification): kubectl
 * sends a bearer token only over TLS, so `kubectl --token $(kubectl create token SA)` needs it.
 */
import type { Command } from 'commander';
import { startDevCluster } from '../devcluster/dev-cluster.js';
import { DEMO_SIMULATION_TIMING, startSimulatedCluster, type SimulationOptions } from '../devcluster/simulated-cluster.js';
import { parseDurationMs } from '../runtime/operator-config.js';

export interface DevClusterCommandOptions {
  kubeconfig: string;
  port: string;
  adminEndpoint: boolean;
  apiOnly: boolean;
  tls: boolean;
  podReadyDelay?: string;
  jobStartDelay?: string;
  savepointDuration?: string;
}

const ms = (value: number | undefined) => `${value ?? 0}ms`;

export function registerDevClusterCommand(program: Command): void {
  program
    .command('dev-cluster')
    .description(
      'run the development cluster on 127.0.0.1: an in-memory Kubernetes API server with a simulated kubelet, controllers and Flink JobManagers (--api-only: the API server alone)',
    )
    .requiredOption('--kubeconfig <file>', 'where to write the kubeconfig for the cluster')
    .option('--port <n>', 'port to listen on (0 = any free port)', '0')
    .option('--admin-endpoint', 'serve the fault-injection admin endpoint under /__devcluster/', false)
    .option('--api-only', 'serve the API server alone: no simulated kubelet, controllers or Flink (nothing runs the pods)', false)
    .option('--tls', 'serve HTTPS with a self-signed certificate (kubectl sends ServiceAccount tokens only over TLS)', false)
    .option(
      '--pod-ready-delay <duration>',
      `simulation: a pod is Running and Ready this long after it is created (default ${ms(DEMO_SIMULATION_TIMING.podReadyDelayMs)})`,
    )
    .option(
      '--job-start-delay <duration>',
      `simulation: a Flink job goes INITIALIZING → RUNNING after this long (default ${ms(DEMO_SIMULATION_TIMING.jobStartDelayMs)})`,
    )
    .option('--savepoint-duration <duration>', `simulation: how long a savepoint takes (default ${ms(DEMO_SIMULATION_TIMING.savepointDurationMs)})`)
    .action(async (opts: DevClusterCommandOptions) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${opts.port}`);
      const clusterOptions = { port, kubeconfigPath: opts.kubeconfig, adminEndpoint: opts.adminEndpoint, tls: opts.tls };
      let url: string;
      let stop: () => Promise<void>;
      let what: string;
      if (opts.apiOnly) {
        if (opts.podReadyDelay ?? opts.jobStartDelay ?? opts.savepointDuration)
          throw new Error('--pod-ready-delay, --job-start-delay and --savepoint-duration set the simulation, which --api-only leaves out');
        const cluster = await startDevCluster(clusterOptions);
        ({ url } = cluster);
        stop = () => cluster.stop();
        what = 'API server only, no simulation';
      } else {
        const simulation = simulationTimingFromFlags(opts);
        const world = await startSimulatedCluster({ ...clusterOptions, simulation });
        url = world.cluster.url;
        stop = () => world.stop();
        what = `simulated kubelet, controllers and Flink: pod ready ${ms(simulation.podReadyDelayMs)}, job start ${ms(simulation.jobStartDelayMs)}, savepoint ${ms(simulation.savepointDurationMs)}`;
      }
      // The handlers are in place before the line that tells a caller the cluster is up, so a caller
      // that signals as soon as it reads the line always gets the clean shutdown.
      const stopped = new Promise<void>((resolve) => {
        const shutdown = () => {
          process.off('SIGINT', shutdown);
          process.off('SIGTERM', shutdown);
          stop().then(resolve, resolve);
        };
        process.on('SIGINT', shutdown);
        process.on('SIGTERM', shutdown);
      });
      process.stdout.write(`dev cluster serving at ${url} (kubeconfig: ${opts.kubeconfig}; ${what})\n`);
      await stopped;
    });
}

/** The simulation's timings: DEMO_SIMULATION_TIMING, overridden by the duration flags (`500ms`, `2s`, or milliseconds). */
export function simulationTimingFromFlags(opts: Pick<DevClusterCommandOptions, 'podReadyDelay' | 'jobStartDelay' | 'savepointDuration'>): SimulationOptions {
  const timing: SimulationOptions = { ...DEMO_SIMULATION_TIMING };
  if (opts.podReadyDelay !== undefined) timing.podReadyDelayMs = parseDurationMs(opts.podReadyDelay, '--pod-ready-delay');
  if (opts.jobStartDelay !== undefined) timing.jobStartDelayMs = parseDurationMs(opts.jobStartDelay, '--job-start-delay');
  if (opts.savepointDuration !== undefined) timing.savepointDurationMs = parseDurationMs(opts.savepointDuration, '--savepoint-duration');
  return timing;
}
