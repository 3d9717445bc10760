/**
 * How a Flink REST request reaches the JobManager: one HTTP exchange with a deadline.
 *
 * Two access modes:
 * - `direct`: plain HTTP to `http://<name>-rest.<ns>.svc:<rest.port>` (the operator runs in the
 *   cluster, as the Apache operator does);
 * - `apiserver-proxy`: through the API server's service proxy,
 *   `<apiserver>/api/v1/namespaces/<ns>/services/<name>-rest:rest/proxy/<flink path>`,
 *   authenticated with the KubeConfig (bearer tokens, exec/auth providers, client certificates,
 *   CA data, skipTLSVerify, proxy-url — all applied by client-node's `applyToHTTPSOptions`).
 *   This is the only mode that works from outside the cluster and on the development cluster.
 *
 * Guarantees: `send` settles exactly once: with the status and body of a complete answer, or by
 * throwing `FlinkTransportFailure` (connection error, or `ETIMEDOUT` when the whole exchange, body
 * included, exceeds `timeoutMs`; the socket is then destroyed).
 * Caveat: a failure after the request was written means the server may have acted on it; whether
 * to retry is the caller's decision (see flink-rest-client.ts).
 * Also here: how a jar travels in a request (`multipartJarUpload`) and how a status reads in messages.
 */
import { randomBytes } from 'node:crypto';
import http, { STATUS_CODES } from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { FlinkTransportFailure } from './flink-rest-error.js';

export type FlinkRestAccessMode = 'direct' | 'apiserver-proxy';

export interface TransportRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Flink path including the query string, starting with `/`. */
  readonly path: string;
  /** The body, if any: JSON text, or bytes (a multipart jar upload) whose type `contentType` names. */
  readonly body?: string | Uint8Array;
  /** Content type of the body; default `application/json`. */
  readonly contentType?: string;
  readonly timeoutMs: number;
  /**
   * Called synchronously right before the request is written (after every asynchronous
   * preparation): the leadership fence's last check. A throw stops the request; it is not sent.
   */
  readonly beforeWrite?: () => void;
}

export interface TransportResponse {
  readonly status: number;
  readonly body: string;
}

export interface FlinkRestTransport {
  readonly mode: FlinkRestAccessMode;
  /** Base URL the Flink paths are appended to (no trailing slash, no credentials). */
  readonly baseUrl: string;
  send(request: TransportRequest): Promise<TransportResponse>;
}

/** Adds authentication/TLS settings to the request options (e.g. from a KubeConfig). */
export type RequestOptionsPreparer = (options: https.RequestOptions) => Promise<void>;

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A transport that sends each request to `baseUrl + path` with node:http(s). */
export class HttpFlinkRestTransport implements FlinkRestTransport {
  readonly baseUrl: string;

  constructor(
    readonly mode: FlinkRestAccessMode,
    baseUrl: string,
    private readonly prepare?: RequestOptionsPreparer,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    const url = new URL(this.baseUrl + request.path);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (request.body !== undefined) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(request.body));
    }
    const options: https.RequestOptions = { method: request.method, headers };
    if (this.prepare) {
      try {
        await this.prepare(options);
      } catch (error) {
        throw new FlinkTransportFailure(`cannot apply Kubernetes credentials: ${(error as Error).message}`, 'EKUBECONFIG');
      }
    }
    request.beforeWrite?.();
    const requestFn = url.protocol === 'https:' ? https.request : http.request;
    return new Promise<TransportResponse>((resolve, reject) => {
      let settled = false;
      const finish = (error: FlinkTransportFailure | null, response?: TransportResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(response!);
      };
      const req = requestFn(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            req.destroy();
            finish(new FlinkTransportFailure(`response larger than ${MAX_BODY_BYTES} bytes`, 'ERESPONSETOOLARGE'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error: NodeJS.ErrnoException) => finish(new FlinkTransportFailure(error.message, error.code ?? 'ERESPONSE')));
        res.on('aborted', () => finish(new FlinkTransportFailure('response aborted', 'ECONNRESET')));
      });
      const timer = setTimeout(() => {
        finish(new FlinkTransportFailure(`no complete answer within ${request.timeoutMs} ms`, 'ETIMEDOUT'));
        req.destroy();
      }, request.timeoutMs);
      req.on('error', (error: NodeJS.ErrnoException) => finish(new FlinkTransportFailure(error.message, error.code ?? 'EREQUEST')));
      if (request.body !== undefined) req.write(request.body);
      req.end();
    });
  }
}

/** Base URL of the direct mode: `http://<name>-rest.<ns>.svc:<port>`. */
export function directBaseUrl(namespace: string, name: string, restPort: number): string {
  return `http://${name}-rest.${namespace}.svc:${restPort}`;
}

/** Base URL of the service-proxy mode: `<server>/api/v1/namespaces/<ns>/services/<name>-rest:rest/proxy`. */
export function serviceProxyBaseUrl(apiServer: string, namespace: string, name: string): string {
  const server = apiServer.replace(/\/+$/, '');
  return `${server}/api/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(`${name}-rest`)}:rest/proxy`;
}

/** A transport through the API server's service proxy, authenticated with `kubeConfig`'s current context. */
export function serviceProxyTransport(kubeConfig: KubeConfig, namespace: string, name: string): HttpFlinkRestTransport {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the KubeConfig has no current cluster; cannot reach Flink through the API server proxy');
  return new HttpFlinkRestTransport('apiserver-proxy', serviceProxyBaseUrl(cluster.server, namespace, name), (options) =>
    kubeConfig.applyToHTTPSOptions(options),
  );
}

/**
 * The `multipart/form-data` body of POST /jars/upload: one file part `jarfile`, as Flink's web UI
 * and the REST docs' `curl -F "jarfile=@job.jar"` send it (JarUploadHandler takes any part name and
 * only checks the file name ends in `.jar`; the Apache operator's Flink RestClient names it `file_0`).
 */
export function multipartJarUpload(jar: Uint8Array, fileName: string): { body: Uint8Array; contentType: string } {
  if (!fileName.endsWith('.jar') || /["\r\n/\\]/.test(fileName)) {
    throw new Error(`invalid jar file name "${fileName}": Flink only takes names ending in .jar (JarUploadHandler), without quotes, line breaks or slashes`);
  }
  const bytes = Buffer.from(jar.buffer, jar.byteOffset, jar.byteLength); // a view, not a copy
  let boundary: string;
  do boundary = `----FlinkOperatorJar${randomBytes(16).toString('hex')}`;
  while (bytes.includes(boundary));
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="jarfile"; filename="${fileName}"\r\nContent-Type: application/x-java-archive\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head, 'utf8'), bytes, Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1')]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** `404 Not Found`: a status code with its reason phrase, for messages. */
export function statusText(status: number): string {
  return `${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
}
