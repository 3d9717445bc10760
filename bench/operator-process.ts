/**
 * The benchmark's operator process: exactly what `flink-operator run` starts (`startOperator` with
 * the real Manager and reconciler), in its own process, plus a bench-only IPC channel.
 *
 * Started by bench-processes.ts with `fork` and `--expose-gc`. Argument: a JSON
 * `OperatorProcessOptions`. Sends `{ type: 'ready', httpPort }` once the manager runs.
 * Heap, RSS and CPU are read from the operator's own /metrics (prom-client default metrics);
 * the IPC channel only adds what a scrape cannot do:
 * - `gc` → runs a full garbage collection (so the next scrape's heap figure is the live heap);
 * - `informerHeap` → estimated heap bytes held by the informer caches' objects (see below);
 * - `usage` → CPU seconds and event-loop utilization since the previous `usage`;
 * - `heapSnapshot` (arg: a file path) → full GC, then `v8.writeHeapSnapshot(path)`; answers the path
 *   (for bench/heap-census.ts);
 * - `stop` → graceful shutdown, then exit.
 */
import { makeFlinkDeploymentReconcilerWith, type StateLayout } from '../src/reconciler/reconciler-wiring.js';
import { startOperator } from '../src/cli/run-command.js';
import { makeFlinkStateSnapshotReconciler } from '../src/reconciler/state-snapshot-wiring.js';
import { resolveOperatorConfig, type OperatorConfig } from '../src/runtime/operator-config.js';
import { KubeConfig } from '@kubernetes/client-node';
import { writeHeapSnapshot } from 'node:v8';
import { kubeConfigWithUserAgent } from '../test/integration/manifests/user-agent-kube-config.js';
import { answerParentRequests } from './parent-requests.js';

export interface OperatorProcessOptions {
  kubeconfigPath: string;
  stateLayout: StateLayout;
  /** operator knobs (OperatorConfig keys), as flags */
  flags: Partial<Record<keyof OperatorConfig, unknown>>;
  /** Handle FlinkStateSnapshots too (as `flink-operator run` does when their CRD is installed). */
  stateSnapshots?: boolean;
  /** Every request of this process (API, watches, Flink REST through the proxy) carries this User-Agent (shard-bench.ts: one per shard). */
  userAgent?: string;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('the operator process needs --expose-gc');
  collect();
  collect();
}

function kubeConfigFrom(path: string, userAgent: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return userAgent === undefined ? kc : kubeConfigWithUserAgent(kc, userAgent);
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2]) as OperatorProcessOptions;
  const config = resolveOperatorConfig({
    flags: {
      httpPort: 0,
      httpHost: '127.0.0.1',
      logLevel: process.env.BENCH_OPERATOR_LOG_LEVEL ?? 'error',
      flinkRestAccess: 'apiserver-proxy',
      ...options.flags,
      kubeconfig: options.kubeconfigPath,
    },
    env: {},
  });
  const flinkDeployments = makeFlinkDeploymentReconcilerWith({ stateLayout: options.stateLayout });
  const handle = await startOperator(
    config,
    options.stateSnapshots ? { flinkDeployments, flinkStateSnapshots: makeFlinkStateSnapshotReconciler } : flinkDeployments,
    kubeConfigFrom(options.kubeconfigPath, options.userAgent),
  );
  const readers = handle.manager.dependencies.readers;

  /**
   * The heap a copy of every cached object takes: GC, measure, structuredClone all of them, GC,
   * measure, drop the copies. A clone is shaped like the informer's decoded JSON, so this estimates
   * what the caches hold without a heap snapshot (a few % off: hidden classes and internalized
   * strings are shared differently).
   */
  const informerHeap = (): number => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const copies = [readers.flinkDeployments.list(), readers.stateConfigMaps.list(), readers.deployments.list(), readers.services.list()].map((l) =>
      structuredClone(l),
    );
    gc();
    const after = process.memoryUsage().heapUsed;
    copies.length = 0;
    return after - before;
  };

  answerParentRequests(
    'operator',
    {
      gc: () => gc(),
      informerHeap: () => informerHeap(),
      heapSnapshot: (path) => {
        gc();
        return writeHeapSnapshot(String(path));
      },
    },
    () => handle.shutdown(),
  );
  process.send!({ type: 'ready', httpPort: handle.manager.httpPort() });
}

main().catch((error: unknown) => {
  console.error('operator process:', error);
  process.exit(1);
});
