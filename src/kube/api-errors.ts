/**
 * Kubernetes API failures, as the rest of the operator sees them.
 *
 * client-node 1.x throws `ApiException {code, body, headers}` with `body` the raw response text
 * (usually a `Status` JSON document), and lets network failures (connection reset, refused) escape
 * as plain errors with a `code` such as `ECONNRESET`. `toKubeApiError` turns all of them into one
 * `KubeApiError {code, reason, message, retryAfterSeconds?}`; the predicates below are the only place
 * that interprets status codes.
 *
 * Guarantees: never throws; a failure that is not an API answer becomes code 0 (`isTransient`).
 * Caveat: a transient failure of a *write* leaves its fate unknown (it may have been applied);
 * callers must re-read before deciding (see design/004-sync-protocol.md).
 */
import { ApiException } from '@kubernetes/client-node';

export class KubeApiError extends Error {
  /** HTTP status code; 0 when the request got no answer (connection reset, refused, timeout). */
  readonly code: number;
  /** The Status reason (Conflict, NotFound, AlreadyExists, Invalid, ...), or '' when unknown. */
  readonly reason: string;
  /** Seconds the server asked us to wait (429), if it said. */
  readonly retryAfterSeconds: number | undefined;
  /** The raw Status document, if the body was one. */
  readonly status: Record<string, unknown> | undefined;

  constructor(code: number, reason: string, message: string, options: { retryAfterSeconds?: number; status?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'KubeApiError';
    this.code = code;
    this.reason = reason;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.status = options.status;
  }
}

function parseStatus(body: unknown): Record<string, unknown> | undefined {
  if (typeof body === 'object' && body !== null) return body as Record<string, unknown>;
  if (typeof body !== 'string' || body.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** Any thrown value → KubeApiError (returns the value itself when it already is one). */
export function toKubeApiError(error: unknown): KubeApiError {
  if (error instanceof KubeApiError) return error;
  if (error instanceof ApiException) {
    const status = parseStatus(error.body);
    const reason = typeof status?.reason === 'string' ? status.reason : '';
    const message = typeof status?.message === 'string' ? status.message : `HTTP ${error.code}: ${String(error.body ?? '').slice(0, 200)}`;
    const details = status?.details as { retryAfterSeconds?: unknown } | undefined;
    const headerRetry = Number(headerValue(error.headers, 'retry-after'));
    const retryAfterSeconds =
      typeof details?.retryAfterSeconds === 'number' ? details.retryAfterSeconds : Number.isFinite(headerRetry) && headerRetry > 0 ? headerRetry : undefined;
    return new KubeApiError(error.code, reason, message, { retryAfterSeconds, status, cause: error });
  }
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new KubeApiError(0, typeof code === 'string' ? code : '', `request failed without an answer: ${message}`, { cause: error });
}

export function isNotFound(error: unknown): boolean {
  return toKubeApiError(error).code === 404;
}

/** 409 of either kind: a stale resourceVersion (Conflict) or a create of an existing name (AlreadyExists). */
export function isConflict(error: unknown): boolean {
  return toKubeApiError(error).code === 409;
}

export function isAlreadyExists(error: unknown): boolean {
  const e = toKubeApiError(error);
  return e.code === 409 && e.reason === 'AlreadyExists';
}

/** 422 Invalid (validation failed; also a failed json-patch `test` op on a real server). */
export function isInvalid(error: unknown): boolean {
  return toKubeApiError(error).code === 422;
}

/** Worth retrying after a re-read: no answer, 429, or a 5xx. */
export function isTransient(error: unknown): boolean {
  const code = toKubeApiError(error).code;
  return code === 0 || code === 429 || (code >= 500 && code <= 599);
}
