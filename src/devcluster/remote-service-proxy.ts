/**
 * The service proxy across a process boundary: the simulation (kubelet, controllers, simulated
 * Flink) can run in its own process, as a real kubelet and controller manager do, while the API
 * server keeps serving `/api/v1/namespaces/NS/services/NAME[:PORT]/proxy/PATH`.
 *
 * - `serveServiceProxy(handler)` (simulation side) listens on 127.0.0.1 and hands every request to
 *   the simulation's ServiceProxyHandler; the target travels in the path:
 *   `/<namespace>/<service>/<port>` (each URI-encoded, port may be empty) followed by the proxied
 *   path and query exactly as the API server received them.
 * - `forwardServiceProxy(url)` (API-server side) is a ServiceProxyHandler that sends each proxied
 *   request there over a keep-alive connection and streams the answer back, status, headers and body
 *   unchanged.
 *
 * Guarantees: the proxied method, body, Content-Type and Accept reach the handler; the handler's
 * status code, Content-Type and body reach the client. When the simulation process cannot be reached
 * the client gets the real API server's answer for an unreachable endpoint: 503 with a Status
 * `error trying to reach service: …` (never a hang: the connection error ends the request).
 * Caveats: a forwarded request costs one loopback HTTP exchange more than the in-process proxy;
 * the benchmark measures with it (design/performance.md).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceProxyHandler, ServiceProxyTarget } from './apiserver/http-api-server.js';

const FORWARDED_REQUEST_HEADERS = ['content-type', 'content-length', 'accept', 'user-agent'];
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'content-length'];

/** The API server's 503 Status answer (or, once headers are out, a cut connection). */
function sendServiceUnavailable(res: ServerResponse, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'ServiceUnavailable', code: 503 });
  res.writeHead(503, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The path a target travels in between the two processes. */
export function encodeProxyTarget(target: ServiceProxyTarget): string {
  const path = target.path.startsWith('/') ? target.path : `/${target.path}`;
  return `/${encodeURIComponent(target.namespace)}/${encodeURIComponent(target.service)}/${encodeURIComponent(target.port)}${path}`;
}

/** Inverse of encodeProxyTarget; undefined for a path that is not one. */
export function decodeProxyTarget(url: string): ServiceProxyTarget | undefined {
  const match = /^\/([^/?]+)\/([^/?]+)\/([^/?]*)(\/.*)?$/.exec(url);
  if (!match) return undefined;
  try {
    return { namespace: decodeURIComponent(match[1]), service: decodeURIComponent(match[2]), port: decodeURIComponent(match[3]), path: match[4] ?? '/' };
  } catch {
    return undefined;
  }
}

/** API-server side: a ServiceProxyHandler forwarding to `serveServiceProxy` at `baseUrl` (http://127.0.0.1:PORT). */
export function forwardServiceProxy(baseUrl: string): ServiceProxyHandler & { close(): void } {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const handler = (req: IncomingMessage, res: ServerResponse, target: ServiceProxyTarget): void => {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = http.request({ host: base.hostname, port: base.port, method: req.method, path: encodeProxyTarget(target), headers, agent }, (answer) => {
      const out: Record<string, string> = {};
      for (const name of FORWARDED_RESPONSE_HEADERS) {
        const value = answer.headers[name];
        if (typeof value === 'string') out[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (error) => sendServiceUnavailable(res, `error trying to reach service: ${error.message}`));
    req.pipe(upstream);
  };
  return Object.assign(handler, { close: () => agent.destroy() });
}

export interface ServiceProxyServer {
  /** http://127.0.0.1:PORT, for forwardServiceProxy */
  url: string;
  /** Replaces the handler (undefined: every request is answered 503 "no endpoints available"). */
  setHandler(handler: ServiceProxyHandler | undefined): void;
  stop(): Promise<void>;
}

/** Simulation side: serves the proxied requests that forwardServiceProxy sends. */
export async function serveServiceProxy(handler?: ServiceProxyHandler): Promise<ServiceProxyServer> {
  let current = handler;
  const server = http.createServer((req, res) => {
    const target = decodeProxyTarget(req.url ?? '');
    if (!target) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(`not a proxied service request: ${req.url}`);
      return;
    }
    if (!current) {
      sendServiceUnavailable(res, `no endpoints available for service "${target.service}"`);
      return;
    }
    current(req, res, target);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setHandler: (h) => {
      current = h;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
