/**
 * The development cluster: an in-memory Kubernetes API server on 127.0.0.1 that kubectl and
 * @kubernetes/client-node use like a real one (see design/003-dev-cluster.md).
 *
 * `startDevCluster()` starts it in-process (tests, demo); `flink-operator dev-cluster` runs it in
 * the foreground (src/cli/dev-cluster-command.ts), with the simulation of simulated-cluster.ts
 * unless `--api-only`. The namespaces `default`, `kube-system`,
 * `kube-public` and `kube-node-lease` exist at start, as on a real cluster.
 */
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ApiOperations, scopeFor } from './apiserver/api-operations.js';
import { FaultInjector } from './apiserver/faults.js';
import { GarbageCollector } from './apiserver/garbage-collector.js';
import { HttpApiServer, type ServiceProxyHandler, type ServiceProxyTarget } from './apiserver/http-api-server.js';
import { ObjectStore } from './apiserver/object-store.js';
import { ResourceRegistry } from './apiserver/resource-registry.js';
import { RequestLog } from './apiserver/request-log.js';

export type { ServiceProxyHandler, ServiceProxyTarget };
export { FaultInjector } from './apiserver/faults.js';
export type { FaultMatch, FaultFailure } from './apiserver/faults.js';
export { RequestLog } from './apiserver/request-log.js';
export type { RequestLogEntry, RequestFilter } from './apiserver/request-log.js';

export interface DevClusterOptions {
  /** default 0 (any free port); host is always 127.0.0.1 */
  port?: number;
  /** when set, the kubeconfig is written there */
  kubeconfigPath?: string;
  /** routes /api/v1/namespaces/NS/services/NAME[:PORT]/proxy/PATH; without it: 503 */
  serviceProxy?: ServiceProxyHandler;
  /** retained watch events per resource type (default 10,000); older resourceVersions get 410 */
  watchHistorySize?: number;
  /** HTTP fault-injection admin endpoint under /__devcluster/, off by default */
  adminEndpoint?: boolean;
  logger?: Logger;
  /** interval of BOOKMARK events on watches that allow them (default 60 s) */
  bookmarkIntervalMs?: number;
  /** retained request log entries (default 100,000; counters are always exact) */
  requestLogSize?: number;
}

export interface DevCluster {
  /** http://127.0.0.1:PORT */
  url: string;
  kubeconfigPath: string | undefined;
  /** a fresh client-node KubeConfig for this server (skipTLSVerify true), context "dev-cluster", namespace "default" */
  kubeConfig(): KubeConfig;
  kubeconfigYaml(): string;
  faults: FaultInjector;
  requestLog: RequestLog;
  setServiceProxy(handler: ServiceProxyHandler | undefined): void;
  /** resolves once the garbage collector (and namespace/CRD cleanup) has nothing left to do */
  settled(): Promise<void>;
  /** number of open watch streams */
  openWatches(): number;
  /** closes every watch and the listener */
  stop(): Promise<void>;
}

const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export function kubeconfigYamlFor(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: dev-cluster',
    '  cluster:',
    `    server: ${url}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: dev-cluster',
    '  user:',
    '    token: dev-cluster',
    'contexts:',
    '- name: dev-cluster',
    '  context:',
    '    cluster: dev-cluster',
    '    user: dev-cluster',
    '    namespace: default',
    'current-context: dev-cluster',
    'preferences: {}',
    '',
  ].join('\n');
}

export async function startDevCluster(options: DevClusterOptions = {}): Promise<DevCluster> {
  const store = new ObjectStore(options.watchHistorySize ?? 10_000);
  const registry = new ResourceRegistry();
  const ops = new ApiOperations(store, registry);
  const gc = new GarbageCollector(ops);
  const requestLog = new RequestLog(options.requestLogSize ?? 100_000);
  const faults = new FaultInjector(() => store.watchHub.closeAll());
  const nsType = registry.resolve('', 'v1', 'namespaces')!;
  for (const name of INITIAL_NAMESPACES) ops.create(scopeFor(nsType, ''), { metadata: { name } }, {});

  const http = new HttpApiServer({
    ops,
    gc,
    registry,
    faults,
    requestLog,
    adminEndpoint: options.adminEndpoint ?? false,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    logger: options.logger,
    serviceProxy: options.serviceProxy,
  });
  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(options.port ?? 0, '127.0.0.1', () => {
      http.server.off('error', reject);
      resolve();
    });
  });
  const port = (http.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  http.setServerAddress(`127.0.0.1:${port}`);
  const yaml = kubeconfigYamlFor(url);
  if (options.kubeconfigPath) await writeFile(options.kubeconfigPath, yaml, { mode: 0o600 });
  options.logger?.info({ url }, `dev cluster serving at ${url}`);

  let stopped: Promise<void> | undefined;
  return {
    url,
    kubeconfigPath: options.kubeconfigPath,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromString(yaml);
      return kc;
    },
    kubeconfigYaml: () => yaml,
    faults,
    requestLog,
    setServiceProxy: (h) => http.setServiceProxy(h),
    settled: () => gc.settled(),
    openWatches: () => store.watchHub.watcherCount(),
    stop() {
      stopped ??= (async () => {
        gc.stop();
        store.watchHub.closeAll();
        await new Promise<void>((resolve) => {
          http.server.close(() => resolve());
          http.server.closeAllConnections();
        });
      })();
      return stopped;
    },
  };
}
