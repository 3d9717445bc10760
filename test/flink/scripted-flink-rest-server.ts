/**
 * A scripted HTTP(S) server standing in for a Flink JobManager (or the API server's service proxy
 * in front of it): it expects an exact sequence of requests and answers each from the script.
 *
 * Every request is checked against the next scripted exchange (method, path incl. query, JSON
 * body, optional headers); a mismatch or an unscripted request is recorded and answered 599, and
 * `assertAllConsumed()` fails the test listing them. Listens on 127.0.0.1, port 0; `stop()` closes
 * every connection, including ones left hanging on purpose.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';

export type ScriptedAnswer =
  | { status: number; json?: unknown; text?: string; delayMs?: number }
  /** Never answer (tests the client's deadline). */
  | { hang: true }
  /** Drop the connection without an answer. */
  | { destroy: true };

export interface ScriptedExchange {
  method: string;
  path: string;
  /** Expected JSON body (deep-equal); omitted = the request must have no body. */
  body?: unknown;
  /** Headers that must be present with exactly these values (names lower-case). */
  headers?: Record<string, string>;
  answer: ScriptedAnswer;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  body: string;
  headers: http.IncomingHttpHeaders;
  clientCertificateSubject?: string;
}

export interface ScriptedServerOptions {
  /** Serve HTTPS with this key/cert; `requestCert` + `ca` to demand client certificates. */
  tls?: { key: string; cert: string; ca?: string; requestCert?: boolean };
}

export class ScriptedFlinkRestServer {
  readonly received: ReceivedRequest[] = [];
  readonly mismatches: string[] = [];
  private next = 0;

  private constructor(
    private readonly server: http.Server | https.Server,
    private readonly script: ScriptedExchange[],
    readonly url: string,
  ) {}

  static async start(script: ScriptedExchange[], options: ScriptedServerOptions = {}): Promise<ScriptedFlinkRestServer> {
    // The handler is bound before the server (and so the instance) exists.
    const created: { instance?: ScriptedFlinkRestServer } = {};
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => created.instance!.handle(req, res);
    const server = options.tls
      ? https.createServer(
          {
            key: options.tls.key,
            cert: options.tls.cert,
            ...(options.tls.ca ? { ca: options.tls.ca } : {}),
            requestCert: options.tls.requestCert ?? false,
            rejectUnauthorized: options.tls.requestCert ?? false,
          },
          handler,
        )
      : http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    created.instance = new ScriptedFlinkRestServer(server, script, `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`);
    return created.instance;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const socket = req.socket as { getPeerCertificate?: () => { subject?: { CN?: string } } };
      const subject = socket.getPeerCertificate?.()?.subject?.CN;
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        body,
        headers: req.headers,
        ...(subject ? { clientCertificateSubject: subject } : {}),
      };
      this.received.push(received);
      const expected = this.script[this.next];
      const problem = expected ? this.mismatch(expected, received) : `unscripted request ${received.method} ${received.path}`;
      if (problem !== undefined) {
        this.mismatches.push(problem);
        res.writeHead(599, { 'Content-Type': 'application/json' }).end(JSON.stringify({ errors: [problem] }));
        return;
      }
      this.next++;
      this.answer(expected.answer, req, res);
    });
  }

  private mismatch(expected: ScriptedExchange, received: ReceivedRequest): string | undefined {
    const where = `request #${this.received.length}`;
    if (expected.method !== received.method || expected.path !== received.path) {
      return `${where}: expected ${expected.method} ${expected.path}, got ${received.method} ${received.path}`;
    }
    if (expected.body === undefined && received.body !== '') return `${where}: expected no body, got ${received.body}`;
    if (expected.body !== undefined) {
      try {
        assert.deepEqual(JSON.parse(received.body), expected.body);
      } catch {
        return `${where}: expected body ${JSON.stringify(expected.body)}, got ${received.body}`;
      }
    }
    for (const [name, value] of Object.entries(expected.headers ?? {})) {
      if (received.headers[name] !== value) return `${where}: expected header ${name}: ${value}, got ${String(received.headers[name])}`;
    }
    return undefined;
  }

  private answer(answer: ScriptedAnswer, req: http.IncomingMessage, res: http.ServerResponse): void {
    if ('hang' in answer) return;
    if ('destroy' in answer) {
      req.socket.destroy();
      return;
    }
    const send = () => {
      const text = answer.text ?? (answer.json === undefined ? '' : JSON.stringify(answer.json));
      res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(text);
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  }

  /** Fails unless every scripted exchange happened, in order, and nothing else did. */
  assertAllConsumed(): void {
    assert.deepEqual(this.mismatches, [], 'unexpected requests');
    assert.equal(this.next, this.script.length, `only ${this.next} of ${this.script.length} scripted requests arrived`);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Runs `fn` against a scripted server and checks the script was followed exactly. */
export async function withScriptedServer<T>(
  script: ScriptedExchange[],
  fn: (server: ScriptedFlinkRestServer) => Promise<T>,
  options: ScriptedServerOptions = {},
): Promise<T> {
  const server = await ScriptedFlinkRestServer.start(script, options);
  try {
    const result = await fn(server);
    server.assertAllConsumed();
    return result;
  } finally {
    await server.stop();
  }
}
