import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OperatorMetrics } from './metrics.js';

/**
 * The operator's one HTTP port: `/metrics` (Prometheus text format), `/healthz` (liveness) and
 * `/readyz` (readiness).
 *
 * - `/healthz`: 200 `ok` while `live()` says so (the process is running and not wedged), else 500.
 * - `/readyz`: 200 `ok` when `ready()` returns no reasons, else 503 with one reason per line.
 *   The manager's rule: caches synced and, with leader election, leader or a healthy standby.
 * - `/metrics`: the manager's own registry.
 * Anything else: 404. Only GET and HEAD.
 */
export interface HealthChecks {
  /** Reasons the process is unhealthy (empty = healthy). */
  live(): string[];
  /** Reasons the process is not ready (empty = ready). */
  ready(): string[];
}

export interface HealthServerOptions {
  readonly port: number;
  readonly host?: string;
  readonly metrics: OperatorMetrics;
  readonly checks: HealthChecks;
}

export class HealthServer {
  private server: Server | undefined;

  constructor(private readonly options: HealthServerOptions) {}

  /** Starts listening; resolves with the bound port (useful with port 0). */
  async start(): Promise<number> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed\n');
        return;
      }
      const text = (status: number, body: string) =>
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(req.method === 'HEAD' ? undefined : body);
      if (path === '/healthz' || path === '/livez') {
        const reasons = safe(() => this.options.checks.live());
        text(reasons.length === 0 ? 200 : 500, reasons.length === 0 ? 'ok\n' : reasons.join('\n') + '\n');
      } else if (path === '/readyz') {
        const reasons = safe(() => this.options.checks.ready());
        text(reasons.length === 0 ? 200 : 503, reasons.length === 0 ? 'ok\n' : reasons.join('\n') + '\n');
      } else if (path === '/metrics') {
        this.options.metrics.exposition().then(
          ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
          (error: Error) => text(500, `metrics failed: ${error.message}\n`),
        );
      } else {
        text(404, 'not found\n');
      }
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  port(): number | undefined {
    const address = this.server?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function safe(check: () => string[]): string[] {
  try {
    return check();
  } catch (error) {
    return [`check failed: ${(error as Error).message}`];
  }
}
