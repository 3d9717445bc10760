/**
 * `flink-operator dev-cluster --kubeconfig FILE [--port N]`: runs the development cluster in the
 * foreground, writes a kubeconfig to FILE once it serves, logs one line with its URL, and stops
 * cleanly on SIGINT/SIGTERM.
 */
import type { Command } from 'commander';
import { startDevCluster } from '../devcluster/dev-cluster.js';

export function registerDevClusterCommand(program: Command): void {
  program
    .command('dev-cluster')
    .description('run an in-memory Kubernetes API server on 127.0.0.1 (the development cluster)')
    .requiredOption('--kubeconfig <file>', 'where to write the kubeconfig for the cluster')
    .option('--port <n>', 'port to listen on (0 = any free port)', '0')
    .option('--admin-endpoint', 'serve the fault-injection admin endpoint under /__devcluster/', false)
    .action(async (opts: { kubeconfig: string; port: string; adminEndpoint: boolean }) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${opts.port}`);
      const cluster = await startDevCluster({ port, kubeconfigPath: opts.kubeconfig, adminEndpoint: opts.adminEndpoint });
      process.stdout.write(`dev cluster serving at ${cluster.url} (kubeconfig: ${opts.kubeconfig})\n`);
      await new Promise<void>((resolve) => {
        const shutdown = () => {
          process.off('SIGINT', shutdown);
          process.off('SIGTERM', shutdown);
          cluster.stop().then(resolve, resolve);
        };
        process.on('SIGINT', shutdown);
        process.on('SIGTERM', shutdown);
      });
    });
}
