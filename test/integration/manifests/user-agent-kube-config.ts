/**
 * A KubeConfig whose every request (generated API clients, `Watch` and the Flink REST calls through
 * the service proxy) carries a given User-Agent,
 * so the development cluster's request log can tell the operator under test from the test itself
 * and from the simulation (client-node 1.4.0: API clients call `applySecurityAuthentication`,
 * `Watch` calls `applyToFetchOptions`; node-fetch only adds its own User-Agent when none is set).
 */
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

class UserAgentKubeConfig extends KubeConfig {
  constructor(private readonly userAgent: string) {
    super();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('User-Agent', this.userAgent);
  }

  override async applyToFetchOptions(opts: Parameters<KubeConfig['applyToFetchOptions']>[0]): ReturnType<KubeConfig['applyToFetchOptions']> {
    const init = await super.applyToFetchOptions(opts);
    const headers = init.headers as { set?: (k: string, v: string) => void } | undefined;
    if (headers && typeof headers.set === 'function') headers.set('User-Agent', this.userAgent);
    else init.headers = { ...(init.headers as Record<string, string> | undefined), 'User-Agent': this.userAgent };
    return init;
  }

  // Flink REST calls through the API server's service proxy (src/flink/flink-rest-transport.ts).
  override async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const withHeaders = opts as { headers?: Record<string, string | string[] | number | undefined> };
    withHeaders.headers = { ...withHeaders.headers, 'User-Agent': this.userAgent };
  }
}

/** A copy of `base` whose requests carry `userAgent`. */
export function kubeConfigWithUserAgent(base: KubeConfig, userAgent: string): KubeConfig {
  const kc = new UserAgentKubeConfig(userAgent);
  kc.loadFromString(base.exportConfig());
  return kc;
}
