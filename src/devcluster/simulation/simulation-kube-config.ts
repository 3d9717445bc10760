/**
 * The client-node configuration the simulation talks to the API server with. It is the cluster's
 * own KubeConfig plus one header: every request (API clients AND watches) carries
 * `User-Agent: flink-operator-devcluster-simulation/0.1`, so the dev cluster's request log can
 * tell simulated-kubelet traffic from the operator's.
 *
 * How (client-node 1.4.0): generated API clients call `applySecurityAuthentication(context)` on
 * every request; `Watch` calls `applyToFetchOptions()`. Both are public and overridden here.
 * node-fetch only adds its default User-Agent when none is set.
 */
import http from 'node:http';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import type { RequestInit } from 'node-fetch';

export const SIMULATION_USER_AGENT = 'flink-operator-devcluster-simulation/0.1';

class UserAgentKubeConfig extends KubeConfig {
  /**
   * client-node makes a new agent (a new TCP connection) per request; the simulation reuses one
   * keep-alive agent instead, so the dev cluster does not spend its time accepting connections
   * (measured in design/performance.md). Its idle sockets are unref'd by Node: they keep nothing alive.
   */
  private readonly keepAlive = new http.Agent({ keepAlive: true });

  constructor(private readonly userAgent: string) {
    super();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('User-Agent', this.userAgent);
    const fresh = context.getAgent();
    if (fresh && (Object.getPrototypeOf(fresh) as { constructor?: unknown } | null)?.constructor === http.Agent) {
      fresh.destroy();
      context.setAgent(this.keepAlive);
    }
  }

  override async applyToFetchOptions(opts: Parameters<KubeConfig['applyToFetchOptions']>[0]): Promise<RequestInit> {
    const init = await super.applyToFetchOptions(opts);
    const headers = init.headers as { set?: (k: string, v: string) => void } | undefined;
    if (headers && typeof headers.set === 'function') headers.set('User-Agent', this.userAgent);
    else init.headers = { ...(init.headers as Record<string, string> | undefined), 'User-Agent': this.userAgent };
    return init;
  }
}

/** A copy of `base` (clusters, users, contexts, current context) whose requests carry the simulation's User-Agent. */
export function simulationKubeConfig(base: KubeConfig, userAgent = SIMULATION_USER_AGENT): KubeConfig {
  const kc = new UserAgentKubeConfig(userAgent);
  kc.loadFromString(base.exportConfig());
  return kc;
}
