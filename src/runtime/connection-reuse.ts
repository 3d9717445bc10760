import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig, RequestContext } from '@kubernetes/client-node';

/**
 * Keep-alive connections for the operator's Kubernetes API requests.
 *
 * Why: @kubernetes/client-node 1.4.0 builds a new `http.Agent`/`https.Agent` for every request
 * (`KubeConfig.applySecurityAuthentication` → `createAgent`), so every GET, PUT and PATCH opens a
 * new TCP connection — and against a real cluster a new TLS handshake — and node-fetch then sends
 * `Connection: close`. Measured (design/performance.md): ~6% of the operator's busy CPU in
 * `net.internalConnect` and a matching accept cost on the API server side.
 *
 * What: `reuseConnections(kc)` makes `kc`'s API requests use one keep-alive agent per distinct set
 * of agent options (CA, client certificate/key, servername, verification). Everything else
 * (headers, tokens, exec plugins, proxies) stays client-node's own code path.
 *
 * Guarantees: a request gets an agent with exactly the TLS options client-node computed for it
 *   (certificates re-read from files are a different set, hence a different agent).
 * Assumptions: the agent class client-node picked is plain `http.Agent` or `https.Agent`; any
 *   other agent (SOCKS or HTTP(S) proxy agents) is used as client-node made it (no reuse).
 * Caveats: at most MAX_AGENTS option sets are kept; the oldest is destroyed beyond that. Watches
 *   (client-node `Watch`, long-lived) do not go through this path and keep their own connection.
 *   `applyToHTTPSOptions` (used by the Flink REST client in apiserver-proxy mode) is pooled too.
 */
const MAX_AGENTS = 8;

type PlainAgent = http.Agent & { options?: Record<string, unknown> };

/** One keep-alive agent per distinct set of agent options. */
export class KeepAliveAgentPool {
  private readonly agents = new Map<string, http.Agent>();

  /** The pooled agent equivalent to `fresh` (which is destroyed), or `fresh` itself when it is not a plain HTTP(S) agent. */
  reusable(fresh: PlainAgent): http.Agent {
    const kind = (Object.getPrototypeOf(fresh) as { constructor?: unknown } | null)?.constructor;
    const isHttps = kind === https.Agent;
    if (!isHttps && kind !== http.Agent) return fresh;
    const options = { ...(fresh.options ?? {}) };
    const key = createHash('sha256')
      .update(isHttps ? 'https' : 'http')
      .update(JSON.stringify(options, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('base64') : v)))
      .digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      const agentOptions = { ...options, keepAlive: true };
      agent = isHttps ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
      this.agents.set(key, agent);
      if (this.agents.size > MAX_AGENTS) {
        const [oldestKey, oldest] = this.agents.entries().next().value as [string, http.Agent];
        this.agents.delete(oldestKey);
        oldest.destroy();
      }
    }
    fresh.destroy();
    return agent;
  }

  /** Closes every pooled connection. */
  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  get size(): number {
    return this.agents.size;
  }
}

const pools = new WeakMap<KubeConfig, KeepAliveAgentPool>();

/**
 * Makes `kc`'s API requests reuse connections (see the module comment) and returns it. It wraps
 * the instance's own `applySecurityAuthentication` (a subclass's override, e.g. one setting a
 * User-Agent, keeps working); calling it again on the same KubeConfig changes nothing.
 * Caveat: it changes `kc` itself, so every API client made from it, before or after, shares the pool.
 */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  if (pools.has(kc)) return kc;
  const pool = new KeepAliveAgentPool();
  pools.set(kc, pool);
  const original = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await original(context);
    const fresh = context.getAgent() as PlainAgent | undefined;
    if (fresh) context.setAgent(pool.reusable(fresh));
  };
  // Plain `http(s).request` users of the KubeConfig (the Flink REST client through the API server's
  // service proxy) get a fresh agent from `applyToHTTPSOptions` too: same treatment.
  const originalHttps = kc.applyToHTTPSOptions.bind(kc);
  kc.applyToHTTPSOptions = async (opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> => {
    await originalHttps(opts);
    const fresh = (opts as { agent?: unknown }).agent;
    if (fresh instanceof http.Agent) (opts as { agent?: unknown }).agent = pool.reusable(fresh);
  };
  return kc;
}

/** The pool `reuseConnections` attached to `kc`, if any. */
export function connectionPoolOf(kc: KubeConfig): KeepAliveAgentPool | undefined {
  return pools.get(kc);
}
