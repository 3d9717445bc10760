import {
  IsomorphicFetchHttpLibrary,
  ServerConfiguration,
  createConfiguration,
  wrapHttpLibrary,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';

/**
 * Kubernetes API clients whose every request is counted (metric
 * `flink_operator_api_requests_total{verb, code}`).
 *
 * `make(CoreV1Api)` is a drop-in replacement for `kubeConfig.makeApiClient(CoreV1Api)`: same
 * server, same authentication, same 1.x call style; only the HTTP library is wrapped so the verb
 * (the audit verb: get, list, watch, create, update, patch, delete, deletecollection) and the HTTP
 * status code of each request reach the `observe` callback. Requests without a response (refused
 * connection, reset) are reported with code `error`.
 *
 * Caveat: watches opened by client-node's `Watch` (informers) do not go through these clients;
 * the informers count their own list/watch requests.
 */
export type ApiRequestObserver = (verb: string, code: string) => void;

// The generated API classes take a Configuration; we only need to construct them.
type ApiConstructor<T> = new (configuration: ReturnType<typeof createConfiguration>) => T;

export class ApiClientFactory {
  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly observe: ApiRequestObserver = () => {},
  ) {}

  make<T>(apiClass: ApiConstructor<T>): T {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const inner = new IsomorphicFetchHttpLibrary();
    const observe = this.observe;
    const httpApi = wrapHttpLibrary({
      async send(request: RequestContext): Promise<ResponseContext> {
        const verb = auditVerb(request.getHttpMethod().toString(), request.getUrl());
        try {
          const response = await inner.send(request).toPromise();
          observe(verb, String(response.httpStatusCode));
          return response;
        } catch (error) {
          observe(verb, 'error');
          throw error;
        }
      },
    });
    const configuration = createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: this.kubeConfig },
      httpApi,
    });
    return new apiClass(configuration);
  }
}

/** The Kubernetes audit verb of a request (method + whether the path names one object). */
export function auditVerb(method: string, url: string): string {
  const parsed = new URL(url, 'http://x');
  const m = method.toUpperCase();
  if (m === 'GET') {
    if (/^(1|true)$/.test(parsed.searchParams.get('watch') ?? '')) return 'watch';
    return namesOneObject(parsed.pathname) ? 'get' : 'list';
  }
  if (m === 'POST') return 'create';
  if (m === 'PUT') return 'update';
  if (m === 'PATCH') return 'patch';
  if (m === 'DELETE') return namesOneObject(parsed.pathname) ? 'delete' : 'deletecollection';
  return m.toLowerCase();
}

/**
 * /api/v1/namespaces/ns/configmaps/x → one object; /api/v1/namespaces/ns/configmaps → a collection;
 * /api/v1/namespaces/ns → one object (a namespace); subresources (…/x/status) name one object.
 */
function namesOneObject(pathname: string): boolean {
  const parts = pathname.split('/').filter(Boolean);
  // strip the group/version prefix: api/v1 or apis/G/V
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : parts;
  if (rest[0] === 'namespaces' && rest.length >= 3) return rest.length >= 4; // namespaces/ns/plural[/name…]
  return rest.length >= 2; // plural/name (cluster-scoped, including namespaces/ns)
}
