/**
 * The development cluster's HTTP admin endpoint under `/__devcluster/` (served only with
 * `adminEndpoint: true`): fault injection for a cluster in another process, and the request log's
 * counters.
 *
 * - `POST /__devcluster/faults` with `{op, match, failure, count, ms, as}`: `op` is one of
 *   `failNext`, `delay`, `closeAllWatches`, `expireNextWatch`, `clear` (see faults.ts); answers
 *   `{pending}`.
 * - `GET /__devcluster/requests?<filter>`: `{count}` of the request log entries matching the filter.
 * - `DELETE /__devcluster/requests`: resets the request log.
 *
 * Guarantees: a malformed body is a 400 naming the field; nothing is changed by a refused request.
 * Caveats: not part of any Kubernetes API; no authentication (it listens on loopback only).
 */
import { badRequest, pathNotFound } from './errors.js';
import type { FaultFailure, FaultInjector, FaultMatch } from './faults.js';
import { asObject, isJsonObject, type JsonObject, type JsonValue } from './json-clone.js';
import type { RequestLog } from './request-log.js';

export interface AdminEndpointContext {
  faults: FaultInjector;
  requestLog: RequestLog;
  /** the request body, parsed as JSON */
  readJsonBody(): Promise<JsonValue>;
}

const MATCH_FIELDS = ['verb', 'path', 'resource', 'subresource', 'namespace', 'name'] as const;

/** A FaultMatch from JSON: string fields, `pathRegex` (a RegExp source) instead of `path`. */
function faultMatchOf(value: JsonValue | undefined): FaultMatch {
  const body = asObject(value) ?? {};
  const match: FaultMatch = {};
  for (const k of MATCH_FIELDS) {
    const v = body[k];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw badRequest(`match.${k} must be a string`);
    match[k] = v;
  }
  if (body.pathRegex !== undefined) {
    if (typeof body.pathRegex !== 'string') throw badRequest('match.pathRegex must be a string');
    match.path = new RegExp(body.pathRegex);
  }
  return match;
}

/** A FaultFailure from JSON: "reset" or {code, retryAfterSeconds?, message?}. */
function faultFailureOf(value: JsonValue | undefined): FaultFailure {
  if (value === 'reset') return value;
  if (!isJsonObject(value) || typeof value.code !== 'number') throw badRequest('failure must be "reset" or {"code": N, ...}');
  const failure: FaultFailure = { code: value.code };
  if (typeof value.retryAfterSeconds === 'number') failure.retryAfterSeconds = value.retryAfterSeconds;
  if (typeof value.message === 'string') failure.message = value.message;
  return failure;
}

function countOf(value: JsonValue | undefined, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number') throw badRequest('count must be a number');
  return value;
}

/** Answers one admin request (`segs` are the path segments after `__devcluster`); the body to send with 200. */
export async function answerAdminRequest(method: string, url: URL, segs: readonly string[], ctx: AdminEndpointContext): Promise<JsonObject> {
  if (segs[0] === 'requests' && method === 'GET') {
    const filter: Record<string, string> = {};
    for (const [k, v] of url.searchParams) filter[k] = v;
    return { count: ctx.requestLog.count(filter) };
  }
  if (segs[0] === 'requests' && method === 'DELETE') {
    ctx.requestLog.reset();
    return {};
  }
  if (segs[0] === 'faults' && method === 'POST') {
    const body = asObject(await ctx.readJsonBody()) ?? {};
    switch (body.op) {
      case 'failNext':
        ctx.faults.failNext(faultMatchOf(body.match), faultFailureOf(body.failure), countOf(body.count, 1));
        break;
      case 'delay':
        ctx.faults.delay(faultMatchOf(body.match), Number(body.ms), countOf(body.count, Infinity));
        break;
      case 'closeAllWatches':
        ctx.faults.closeAllWatches();
        break;
      case 'expireNextWatch':
        ctx.faults.expireNextWatch(countOf(body.count, 1), body.as === 'http' ? 'http' : 'event');
        break;
      case 'clear':
        ctx.faults.clear();
        break;
      default:
        throw badRequest(`unknown op ${JSON.stringify(body.op)}`);
    }
    return { pending: ctx.faults.pending() };
  }
  throw pathNotFound();
}
