/**
 * The development cluster: an in-memory Kubernetes API server on 127.0.0.1 that kubectl and
 * @kubernetes/client-node use like a real one (see design/003-dev-cluster.md).
 *
 * `startDevCluster()` starts it in-process (tests, demo); `flink-operator dev-cluster` runs it in
 * the foreground (src/cli/dev-cluster-command.ts), with the simulation of simulated-cluster.ts
 * unless `--api-only`. The namespaces `default`, `kube-system`,
 * `kube-public` and `kube-node-lease` exist at start, as on a real cluster.
 * So do the bootstrap ClusterRoles/Bindings (bootstrap-rbac.ts); requests are authenticated and
 * RBAC-authorized (access-control.ts): the admin kubeconfig is `system:masters`, ServiceAccount
 * tokens (`kubectl create token`) are their ServiceAccounts.
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { AccessControl } from './apiserver/access-control.js';
import { ApiOperations, scopeFor } from './apiserver/api-operations.js';
import { ADMIN_TOKEN, type UnauthenticatedAccess } from './apiserver/authentication.js';
import { ClusterRoleAggregation } from './apiserver/bootstrap-rbac.js';
import { FaultInjector } from './apiserver/faults.js';
import { GarbageCollector } from './apiserver/garbage-collector.js';
import { HttpApiServer, type ServiceProxyHandler, type ServiceProxyTarget } from './apiserver/http-api-server.js';
import { NamespaceDefaults } from './apiserver/namespace-defaults.js';
import { generateClusterCaPem } from './apiserver/cluster-ca-certificate.js';
import { ObjectStore } from './apiserver/object-store.js';
import type { PodLogSource } from './apiserver/pod-logs.js';
import { ResourceRegistry } from './apiserver/resource-registry.js';
import { RequestLog } from './apiserver/request-log.js';
import { watchWindowOptions, type WatchWindowOptions } from './apiserver/watch-window.js';

export type { ServiceProxyHandler, ServiceProxyTarget };
export type { PodLogSource, PodLogRequest, PodLogOptions } from './apiserver/pod-logs.js';
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
  /**
   * the most watch events retained per resource type: the watch cache's upper bound capacity
   * (default 102,400, as kube-apiserver's); a watch from an RV the window no longer reaches gets 410
   */
  watchHistorySize?: number;
  /**
   * the rest of the watch cache window (watch-window.ts): `lowerBoundCapacity` (default 100, at
   * most watchHistorySize), `eventFreshDurationMs` (default 75 s), `now` (the clock, for tests)
   */
  watchWindow?: Partial<Omit<WatchWindowOptions, 'upperBoundCapacity'>>;
  /** HTTP fault-injection admin endpoint under /__devcluster/, off by default */
  adminEndpoint?: boolean;
  logger?: Logger;
  /** interval of BOOKMARK events on watches that allow them (default 60 s) */
  bookmarkIntervalMs?: number;
  /** retained request log entries (default 100,000; counters are always exact) */
  requestLogSize?: number;
  /**
   * Requests without credentials: 'admin' (default) serves them as the cluster administrator, like
   * kube-apiserver's pre-1.20 insecure port; 'anonymous' makes them `system:anonymous`, as a real
   * secure port does (authentication.ts). Requests with a bearer token are authenticated either way.
   */
  unauthenticated?: UnauthenticatedAccess;
  /**
   * Serve HTTPS (a self-signed certificate made at start; the kubeconfig keeps
   * `insecure-skip-tls-verify: true`) instead of HTTP. kubectl sends a kubeconfig's bearer token
   * only over TLS (client-go clientcmd), so a kubectl authenticating as a ServiceAccount needs it.
   */
  tls?: boolean;
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
  /** answers pods/NAME/log for bound pods (the simulated kubelet); without it: 500 "kubelet unreachable" */
  setPodLogSource(source: PodLogSource | undefined): void;
  /** resolves once the garbage collector (and namespace/CRD cleanup) has nothing left to do */
  settled(): Promise<void>;
  /** number of open watch streams */
  openWatches(): number;
  /** closes every watch and the listener */
  stop(): Promise<void>;
}

const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The kubeconfig of this server; `token` defaults to the admin's (a ServiceAccount token from `kubectl create token` fits). */
export function kubeconfigYamlFor(url: string, token = ADMIN_TOKEN): string {
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
    `    token: ${token}`,
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
  const store = new ObjectStore(watchWindowOptions(options.watchHistorySize, options.watchWindow));
  const registry = new ResourceRegistry();
  const ops = new ApiOperations(store, registry);
  const gc = new GarbageCollector(ops);
  const requestLog = new RequestLog(options.requestLogSize ?? 100_000);
  const faults = new FaultInjector(() => store.watchHub.closeAll());
  const nsType = registry.resolve('', 'v1', 'namespaces')!;
  for (const name of INITIAL_NAMESPACES) ops.create(scopeFor(nsType, ''), { metadata: { name } }, {});
  // default ServiceAccount, kube-root-ca.crt and default/kubernetes, as the control plane's controllers keep them
  const namespaceDefaults = new NamespaceDefaults(ops, generateClusterCaPem());
  namespaceDefaults.start();

  // the bootstrap RBAC policy (cluster-admin, admin/edit/view, system:discovery, ...) and authn/authz
  new ClusterRoleAggregation(ops).bootstrap();
  const access = new AccessControl(ops, { unauthenticated: options.unauthenticated ?? 'admin' });

  const tlsKeys = options.tls ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : undefined;
  const http = new HttpApiServer({
    tls: tlsKeys && {
      key: tlsKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      cert: generateClusterCaPem(new Date(), 'kube-apiserver', tlsKeys),
    },
    access,
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
  const url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
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
    setPodLogSource: (source) => http.setPodLogSource(source),
    settled: async () => {
      await gc.settled();
      await namespaceDefaults.settled();
      await gc.settled();
    },
    openWatches: () => store.watchHub.watcherCount(),
    stop() {
      stopped ??= (async () => {
        gc.stop();
        namespaceDefaults.stop();
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
