/**
 * Choosing how the operator reaches one FlinkDeployment's REST API, and building its client.
 *
 *   const flink = flinkRestClientFor(deployment, { mode: 'apiserver-proxy', kubeConfig });
 *   const jobs = await flink.listJobs();
 *
 * - `direct`: `http://<name>-rest.<ns>.svc:<rest.port>` (rest.port from the deployment's
 *   flinkConfiguration, default 8081); needs the operator to run inside the cluster network.
 * - `apiserver-proxy`: `<apiserver>/api/v1/namespaces/<ns>/services/<name>-rest:rest/proxy`,
 *   authenticated with the KubeConfig; works from anywhere the API server is reachable and is the
 *   only mode of the development cluster. Needs RBAC `get`, `create`, `patch` on `services/proxy`.
 * - `auto` (the default setting): `direct` inside a pod (the service-account token is mounted and
 *   KUBERNETES_SERVICE_HOST is set, as the kubelet does for every pod), `apiserver-proxy` elsewhere.
 */
import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { flattenFlinkConfiguration } from '../api/flink-configuration.js';
import { FlinkRestClient, type FlinkRestClientOptions, type FlinkRestRetryPolicy, type FlinkRestTimeouts } from './flink-rest-client.js';
import { directBaseUrl, HttpFlinkRestTransport, serviceProxyTransport, type FlinkRestAccessMode } from './flink-rest-transport.js';
import { deploymentKey, FLINK_PORTS } from './flink-resource-naming.js';

/** The `--flink-rest-access` setting: a mode, or `auto` (resolveFlinkRestAccess). */
export type FlinkRestAccessSetting = FlinkRestAccessMode | 'auto';

/** Where a pod's service-account token is mounted (the in-cluster client config reads it too). */
export const SERVICE_ACCOUNT_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The mode `setting` means here: `auto` is `direct` in a pod, `apiserver-proxy` outside one. */
export function resolveFlinkRestAccess(
  setting: FlinkRestAccessSetting,
  env: NodeJS.ProcessEnv,
  tokenMounted: () => boolean = () => existsSync(SERVICE_ACCOUNT_TOKEN_PATH),
): FlinkRestAccessMode {
  if (setting !== 'auto') return setting;
  return env.KUBERNETES_SERVICE_HOST && tokenMounted() ? 'direct' : 'apiserver-proxy';
}

export interface FlinkRestAccessOptions {
  readonly mode: FlinkRestAccessMode;
  /** Required for `apiserver-proxy`. */
  readonly kubeConfig?: KubeConfig;
  readonly timeouts?: Partial<FlinkRestTimeouts>;
  readonly retry?: Partial<FlinkRestRetryPolicy>;
  /** `direct` only: replaces `http://<name>-rest.<ns>.svc:<port>` (e.g. a port-forward). */
  readonly directUrlOverride?: string;
  /** See FlinkRestClientOptions.beforeWrite (the leadership fence). */
  readonly beforeWrite?: (method: string, path: string) => void;
  /** See FlinkRestClientOptions.onRequest (metrics). */
  readonly onRequest?: FlinkRestClientOptions['onRequest'];
}

/** REST port of a deployment: `rest.port` from its flinkConfiguration, default 8081. Throws on garbage. */
export function restPortOf(deployment: FlinkDeploymentV1): number {
  const raw = flattenFlinkConfiguration(deployment.spec.flinkConfiguration)['rest.port']?.trim();
  if (raw === undefined || raw === '') return FLINK_PORTS.rest.port;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`spec.flinkConfiguration.rest.port: "${raw}" is not a port number`);
  return port;
}

/** The REST client of `deployment`'s JobManager for the chosen access mode. */
export function flinkRestClientFor(deployment: FlinkDeploymentV1, options: FlinkRestAccessOptions): FlinkRestClient {
  const { namespace, name } = deploymentKey(deployment);
  const clientOptions = {
    resource: `${namespace}/${name}`,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.beforeWrite ? { beforeWrite: options.beforeWrite } : {}),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
  };
  if (options.mode === 'apiserver-proxy') {
    if (!options.kubeConfig) throw new Error('Flink REST access mode apiserver-proxy needs a KubeConfig');
    return new FlinkRestClient(serviceProxyTransport(options.kubeConfig, namespace, name), clientOptions);
  }
  const baseUrl = options.directUrlOverride ?? directBaseUrl(namespace, name, restPortOf(deployment));
  return new FlinkRestClient(new HttpFlinkRestTransport('direct', baseUrl), clientOptions);
}
