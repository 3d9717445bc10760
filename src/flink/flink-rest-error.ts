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
  /** Exception classes of the `Caused by:` lines of Flink's error text, outermost first (flinkCauseClasses). */
  readonly causes?: readonly string[];
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
  readonly causes?: readonly string[];

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
    if (details.causes !== undefined) this.causes = details.causes;
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

/**
 * Flink's DuplicateJobSubmissionException (flink-runtime, org.apache.flink.runtime.client): the
 * Dispatcher refuses a job id it already has, running or terminated ("Job has already been
 * submitted.", Dispatcher.submitJob).
 */
export const DUPLICATE_JOB_SUBMISSION_EXCEPTION = 'org.apache.flink.runtime.client.DuplicateJobSubmissionException';

/**
 * The exception classes of the `Caused by: <class>: <message>` lines in a Flink error body, outermost
 * first. Flink's AbstractHandler answers a RestHandlerException with its whole stack trace
 * (`ExceptionUtils.stringifyException`), causes included, as the first `errors` entry. Reads the
 * untruncated body: real stack traces are long and the cause that matters comes last.
 */
export function flinkCauseClasses(body: string): string[] {
  let texts: string[] = [body];
  try {
    const parsed = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(parsed.errors)) texts = parsed.errors.map((e) => String(e));
  } catch {
    // not JSON: read the text as it is
  }
  return texts.flatMap((text) => [...text.matchAll(/^\s*Caused by: ([\w$.]+)/gm)].map((m) => m[1]));
}

/**
 * True when Flink refused a job submission (POST /jars/:jarid/run) because a job with that id
 * exists or existed in the cluster: JarRunHandler answers 400 "Could not execute application."
 * caused, through the program's FlinkException, by DuplicateJobSubmissionException.
 * Caveat: a JobManager whose error text carries no cause chain cannot be told apart; look for the
 * job id (GET /jobs/:jobid) instead.
 */
export function isDuplicateJobSubmission(error: unknown): error is FlinkRestError {
  return error instanceof FlinkRestError && error.source === 'flink' && (error.causes ?? []).includes(DUPLICATE_JOB_SUBMISSION_EXCEPTION);
}
