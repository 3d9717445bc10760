/**
 * The one error type of the Flink REST client, with messages a user can act on.
 *
 * `source` tells who answered:
 * - `flink`: the JobManager answered with an HTTP error (`{"errors": [...]}` body);
 * - `apiserver`: the Kubernetes API server's service proxy answered instead of Flink (a
 *   `kind: Status` body: no ready endpoint, Service missing, forbidden...);
 * - `transport`: no answer at all (connection refused, DNS failure, timeout, reset).
 * Callers must only treat a 404 as "job (or trigger) missing" when `source === 'flink'`: a 404 from
 * the API server means the Service is missing, which says nothing about the job.
 */

export type FlinkRestErrorSource = 'flink' | 'apiserver' | 'transport';

export interface FlinkRestErrorDetails {
  /** HTTP status, absent when no answer arrived. */
  readonly status?: number;
  /** Flink path of the call, e.g. `/jobs/<id>/stop`. */
  readonly path: string;
  readonly method: string;
  /** Full URL the call went to (without credentials). */
  readonly url: string;
  readonly source: FlinkRestErrorSource;
  /** Node error code for transport failures (`ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`...). */
  readonly code?: string;
  /** Flink's `errors` array, or the API server Status message, when there was one. */
  readonly serverMessages?: readonly string[];
  /** Attempts made (more than 1 only for retried GETs). */
  readonly attempts?: number;
}

export class FlinkRestError extends Error implements FlinkRestErrorDetails {
  readonly status?: number;
  readonly path: string;
  readonly method: string;
  readonly url: string;
  readonly source: FlinkRestErrorSource;
  readonly code?: string;
  readonly serverMessages?: readonly string[];
  readonly attempts?: number;

  constructor(message: string, details: FlinkRestErrorDetails) {
    super(message);
    this.name = 'FlinkRestError';
    this.path = details.path;
    this.method = details.method;
    this.url = details.url;
    this.source = details.source;
    if (details.status !== undefined) this.status = details.status;
    if (details.code !== undefined) this.code = details.code;
    if (details.serverMessages !== undefined) this.serverMessages = details.serverMessages;
    if (details.attempts !== undefined) this.attempts = details.attempts;
  }

  /** True when Flink itself said 404 (job, trigger or savepoint unknown to this JobManager). */
  get isFlinkNotFound(): boolean {
    return this.source === 'flink' && this.status === 404;
  }

  /** True when the JobManager could not be reached at all (transport failure or proxy 502/503/504). */
  get isUnreachable(): boolean {
    return this.source === 'transport' || (this.source === 'apiserver' && (this.status === 502 || this.status === 503 || this.status === 504));
  }
}

/** A transport failure before any HTTP answer. `code` is Node's error code or `ETIMEDOUT` for our deadline. */
export class FlinkTransportFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'FlinkTransportFailure';
  }
}

/** What the answering side said, parsed from an error body: Flink `errors`, or a Kubernetes Status. */
export function parseErrorBody(body: string): { source: 'flink' | 'apiserver' | 'unknown'; messages: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body.trim();
    return { source: 'unknown', messages: text === '' ? [] : [text.length > 500 ? `${text.slice(0, 500)}…` : text] };
  }
  if (typeof parsed === 'object' && parsed !== null) {
    const record = parsed as Record<string, unknown>;
    if (record.kind === 'Status' && typeof record.message === 'string') return { source: 'apiserver', messages: [record.message] };
    if (Array.isArray(record.errors)) {
      // Flink puts the message first and, in some versions, the server-side stack trace second.
      const messages = record.errors.map((e) => String(e)).map((m) => (m.length > 1000 ? `${m.slice(0, 1000)}…` : m));
      return { source: 'flink', messages };
    }
  }
  return { source: 'unknown', messages: [] };
}

/** First line of each message (Flink error strings often carry a whole stack trace). */
export function summarizeMessages(messages: readonly string[]): string {
  return messages
    .map((m) => m.split('\n')[0].trim())
    .filter((m) => m !== '')
    .join('; ');
}
