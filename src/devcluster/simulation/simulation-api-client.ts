/**
 * The simulation's API client: plain JSON over one keep-alive HTTP(S) connection pool, with the
 * method names and request shapes of client-node's CoreV1Api / AppsV1Api for the calls the
 * simulated kubelet, controllers and JobManagers make.
 *
 * Why not client-node's generated clients: every call through them walks the whole typed model
 * twice (ObjectSerializer.serialize of the body, deserialize of the answer) and goes through
 * node-fetch; with 2,000 FlinkDeployments that was the largest part of the simulation's CPU
 * (design/performance.md, finding 7). The simulation is a stand-in for kubelet and controller
 * manager, so what it costs is not what is measured; the operator keeps client-node.
 *
 * Guarantees: bodies are sent as JSON (patches as JSON merge patches,
 * `application/merge-patch+json`, the only patch type the simulation uses); a 2xx answer is the
 * parsed JSON body; any other status is thrown as client-node's `ApiException` with `code` and the
 * parsed Status body, so callers test `error.code` exactly as before. Every request carries the
 * simulation's User-Agent.
 * Assumptions: the KubeConfig's current context is the dev cluster; its credentials are static
 * (a token or client certificate), so they are resolved once, at the first request.
 * Caveats: answers are the API server's JSON as is: timestamps are strings, not Date objects
 * (the informers' objects always were).
 */
import http from 'node:http';
import https from 'node:https';
import {
  ApiException,
  type KubeConfig,
  type KubernetesListObject,
  type V1ConfigMap,
  type V1Deployment,
  type V1Pod,
  type V1ReplicaSet,
  type V1Service,
  type CoreV1Event,
} from '@kubernetes/client-node';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Connection {
  readonly module: typeof http | typeof https;
  readonly options: https.RequestOptions;
}

const MERGE_PATCH = 'application/merge-patch+json';

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

/** JSON requests to one API server. */
export class KubeJsonClient {
  private connection: Promise<Connection> | undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly userAgent: string,
  ) {}

  private connect(): Promise<Connection> {
    this.connection ??= (async () => {
      const server = new URL(this.kubeConfig.getCurrentCluster()?.server ?? 'http://127.0.0.1');
      const options: https.RequestOptions = { headers: {} };
      await this.kubeConfig.applyToHTTPSOptions(options);
      const secure = server.protocol === 'https:';
      const base: https.RequestOptions = {
        protocol: server.protocol,
        hostname: server.hostname,
        port: server.port || (secure ? 443 : 80),
        headers: { ...(options.headers as Record<string, string>), 'User-Agent': this.userAgent, Accept: 'application/json' },
        agent: secure
          ? new https.Agent({
              keepAlive: true,
              ca: options.ca,
              cert: options.cert,
              key: options.key,
              rejectUnauthorized: options.rejectUnauthorized,
              servername: options.servername,
            })
          : new http.Agent({ keepAlive: true }),
      };
      return { module: secure ? https : http, options: base };
    })();
    // a failed setup (credentials not readable yet) is tried again by the next request
    this.connection.catch(() => (this.connection = undefined));
    return this.connection;
  }

  /** Sends one request; resolves with the parsed 2xx body, rejects with an ApiException otherwise. */
  async request<T>(
    method: Method,
    path: string,
    options: { query?: Record<string, string | number | undefined>; body?: unknown; contentType?: string } = {},
  ): Promise<T> {
    const { module, options: base } = await this.connect();
    const query = Object.entries(options.query ?? {}).filter(([, v]) => v !== undefined);
    const fullPath = query.length ? `${path}?${query.map(([k, v]) => `${enc(k)}=${enc(String(v))}`).join('&')}` : path;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string | number> = { ...(base.headers as Record<string, string>) };
    if (payload !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    return new Promise<T>((resolve, reject) => {
      const req = module.request({ ...base, method, path: fullPath, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            // not JSON: kept as text for the error
          }
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve(body as T);
          else
            reject(
              new ApiException(
                code,
                `${method} ${path}: ${(body as { message?: string } | undefined)?.message ?? text}`,
                body,
                res.headers as Record<string, string>,
              ),
            );
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }
}

type ListOptions = { labelSelector?: string; resourceVersion?: string };

/** The CoreV1Api calls of the simulation (same names and request shapes as client-node's). */
export class SimulationCoreApi {
  constructor(private readonly client: KubeJsonClient) {}

  readNamespacedConfigMap(r: { namespace: string; name: string }): Promise<V1ConfigMap> {
    return this.client.request('GET', `/api/v1/namespaces/${enc(r.namespace)}/configmaps/${enc(r.name)}`);
  }

  createNamespacedConfigMap(r: { namespace: string; body: V1ConfigMap }): Promise<V1ConfigMap> {
    return this.client.request('POST', `/api/v1/namespaces/${enc(r.namespace)}/configmaps`, { body: r.body });
  }

  /** JSON merge patch. */
  patchNamespacedConfigMap(r: { namespace: string; name: string; body: object }): Promise<V1ConfigMap> {
    return this.client.request('PATCH', `/api/v1/namespaces/${enc(r.namespace)}/configmaps/${enc(r.name)}`, { body: r.body, contentType: MERGE_PATCH });
  }

  createNamespacedPod(r: { namespace: string; body: V1Pod }): Promise<V1Pod> {
    return this.client.request('POST', `/api/v1/namespaces/${enc(r.namespace)}/pods`, { body: r.body });
  }

  deleteNamespacedPod(r: { namespace: string; name: string; gracePeriodSeconds?: number }): Promise<V1Pod> {
    return this.client.request('DELETE', `/api/v1/namespaces/${enc(r.namespace)}/pods/${enc(r.name)}`, { query: { gracePeriodSeconds: r.gracePeriodSeconds } });
  }

  /** POST pods/NAME/binding (what a scheduler does): assigns the pod to a node. */
  createNamespacedPodBinding(r: { namespace: string; name: string; body: object }): Promise<object> {
    return this.client.request('POST', `/api/v1/namespaces/${enc(r.namespace)}/pods/${enc(r.name)}/binding`, { body: r.body });
  }

  /** JSON merge patch of the status subresource. */
  patchNamespacedPodStatus(r: { namespace: string; name: string; body: object }): Promise<V1Pod> {
    return this.client.request('PATCH', `/api/v1/namespaces/${enc(r.namespace)}/pods/${enc(r.name)}/status`, { body: r.body, contentType: MERGE_PATCH });
  }

  listNamespacedPod(r: { namespace: string } & ListOptions): Promise<KubernetesListObject<V1Pod>> {
    return this.client.request('GET', `/api/v1/namespaces/${enc(r.namespace)}/pods`, {
      query: { labelSelector: r.labelSelector, resourceVersion: r.resourceVersion },
    });
  }

  listPodForAllNamespaces(r: ListOptions = {}): Promise<KubernetesListObject<V1Pod>> {
    return this.client.request('GET', '/api/v1/pods', { query: { ...r } });
  }

  listServiceForAllNamespaces(r: ListOptions = {}): Promise<KubernetesListObject<V1Service>> {
    return this.client.request('GET', '/api/v1/services', { query: { ...r } });
  }

  createNamespacedEvent(r: { namespace: string; body: CoreV1Event }): Promise<CoreV1Event> {
    return this.client.request('POST', `/api/v1/namespaces/${enc(r.namespace)}/events`, { body: r.body });
  }

  /** JSON merge patch. */
  patchNamespacedEvent(r: { namespace: string; name: string; body: object }): Promise<CoreV1Event> {
    return this.client.request('PATCH', `/api/v1/namespaces/${enc(r.namespace)}/events/${enc(r.name)}`, { body: r.body, contentType: MERGE_PATCH });
  }
}

/** The AppsV1Api calls of the simulation (same names and request shapes as client-node's). */
export class SimulationAppsApi {
  constructor(private readonly client: KubeJsonClient) {}

  readNamespacedDeployment(r: { namespace: string; name: string }): Promise<V1Deployment> {
    return this.client.request('GET', `/apis/apps/v1/namespaces/${enc(r.namespace)}/deployments/${enc(r.name)}`);
  }

  /** JSON merge patch. */
  patchNamespacedDeployment(r: { namespace: string; name: string; body: object }): Promise<V1Deployment> {
    return this.client.request('PATCH', `/apis/apps/v1/namespaces/${enc(r.namespace)}/deployments/${enc(r.name)}`, { body: r.body, contentType: MERGE_PATCH });
  }

  replaceNamespacedDeploymentStatus(r: { namespace: string; name: string; body: V1Deployment }): Promise<V1Deployment> {
    return this.client.request('PUT', `/apis/apps/v1/namespaces/${enc(r.namespace)}/deployments/${enc(r.name)}/status`, { body: r.body });
  }

  createNamespacedReplicaSet(r: { namespace: string; body: V1ReplicaSet }): Promise<V1ReplicaSet> {
    return this.client.request('POST', `/apis/apps/v1/namespaces/${enc(r.namespace)}/replicasets`, { body: r.body });
  }

  /** JSON merge patch. */
  patchNamespacedReplicaSet(r: { namespace: string; name: string; body: object }): Promise<V1ReplicaSet> {
    return this.client.request('PATCH', `/apis/apps/v1/namespaces/${enc(r.namespace)}/replicasets/${enc(r.name)}`, { body: r.body, contentType: MERGE_PATCH });
  }

  replaceNamespacedReplicaSetStatus(r: { namespace: string; name: string; body: V1ReplicaSet }): Promise<V1ReplicaSet> {
    return this.client.request('PUT', `/apis/apps/v1/namespaces/${enc(r.namespace)}/replicasets/${enc(r.name)}/status`, { body: r.body });
  }

  deleteNamespacedReplicaSet(r: { namespace: string; name: string }): Promise<V1ReplicaSet> {
    return this.client.request('DELETE', `/apis/apps/v1/namespaces/${enc(r.namespace)}/replicasets/${enc(r.name)}`);
  }

  listDeploymentForAllNamespaces(r: ListOptions = {}): Promise<KubernetesListObject<V1Deployment>> {
    return this.client.request('GET', '/apis/apps/v1/deployments', { query: { ...r } });
  }

  listReplicaSetForAllNamespaces(r: ListOptions = {}): Promise<KubernetesListObject<V1ReplicaSet>> {
    return this.client.request('GET', '/apis/apps/v1/replicasets', { query: { ...r } });
  }
}

/** Both APIs over one client for `kubeConfig`, every request with `userAgent`. */
export function simulationApis(kubeConfig: KubeConfig, userAgent: string): { core: SimulationCoreApi; apps: SimulationAppsApi } {
  const client = new KubeJsonClient(kubeConfig, userAgent);
  return { core: new SimulationCoreApi(client), apps: new SimulationAppsApi(client) };
}
