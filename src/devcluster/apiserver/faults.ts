/**
 * Fault injection for tests: make the next N matching requests fail (409, 500, 429 with
 * Retry-After, 503, or a reset connection), delay matching responses, close every open watch, or
 * answer the next watch(es) with 410 Expired.
 *
 * Guarantees: rules are consumed in the order they were added; a failing rule answers the request
 * before it touches storage (the write does not happen); `closeAllWatches` ends every open stream
 * cleanly so clients re-watch from their last resourceVersion.
 */

export interface FaultMatch {
  /** audit verb: get, list, watch, create, update, patch, delete, deletecollection */
  verb?: string;
  /** string: path prefix (query excluded); RegExp: tested against path + query */
  path?: string | RegExp;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export type WatchExpiry = 'event' | 'http';

/** `code` 409, 429, 500 and 503 are answered with the real server's Status for that code; any other code with a generic one. */
export type FaultFailure = { code: number; retryAfterSeconds?: number; message?: string } | 'reset';

export interface RequestFacts {
  verb: string;
  path: string;
  query: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

interface FailRule {
  match: FaultMatch;
  remaining: number;
  failure: FaultFailure;
}
interface DelayRule {
  match: FaultMatch;
  remaining: number;
  ms: number;
}

function matches(m: FaultMatch, r: RequestFacts): boolean {
  if (m.verb !== undefined && m.verb !== r.verb) return false;
  if (m.resource !== undefined && m.resource !== r.resource) return false;
  if (m.subresource !== undefined && m.subresource !== r.subresource) return false;
  if (m.namespace !== undefined && m.namespace !== r.namespace) return false;
  if (m.name !== undefined && m.name !== r.name) return false;
  if (typeof m.path === 'string' && !r.path.startsWith(m.path)) return false;
  if (m.path instanceof RegExp && !m.path.test(r.query ? `${r.path}?${r.query}` : r.path)) return false;
  return true;
}

export class FaultInjector {
  private fails: FailRule[] = [];
  private delays: DelayRule[] = [];
  private expireWatches: WatchExpiry[] = [];

  constructor(private readonly closeWatches: () => void) {}

  /** The next `count` (default 1) requests matching `match` fail with `failure`. */
  failNext(match: FaultMatch, failure: FaultFailure, count = 1): void {
    this.fails.push({ match, remaining: count, failure });
  }

  /** Delays the next `count` matching responses by `ms` (count Infinity: until clear()). */
  delay(match: FaultMatch, ms: number, count = Infinity): void {
    this.delays.push({ match, remaining: count, ms });
  }

  /** Ends every open watch stream now. */
  closeAllWatches(): void {
    this.closeWatches();
  }

  /**
   * The next `count` watch requests are answered 410 Expired: as an ERROR event followed by the end
   * of the stream ('event', what the watch cache does), or as an HTTP 410 Status ('http').
   */
  expireNextWatch(count = 1, as: WatchExpiry = 'event'): void {
    for (let i = 0; i < count; i++) this.expireWatches.push(as);
  }

  clear(): void {
    this.fails = [];
    this.delays = [];
    this.expireWatches = [];
  }

  pending(): number {
    return this.fails.reduce((n, r) => n + r.remaining, 0) + this.expireWatches.length;
  }

  /** Called by the server for each request: the failure to answer with, and the delay. */
  take(r: RequestFacts): { failure?: FaultFailure; delayMs: number; expireWatch: WatchExpiry | undefined } {
    let failure: FaultFailure | undefined;
    const idx = this.fails.findIndex((f) => f.remaining > 0 && matches(f.match, r));
    if (idx >= 0) {
      failure = this.fails[idx].failure;
      if (--this.fails[idx].remaining <= 0) this.fails.splice(idx, 1);
    }
    let delayMs = 0;
    for (const d of this.delays) {
      if (d.remaining > 0 && matches(d.match, r)) {
        delayMs += d.ms;
        d.remaining--;
      }
    }
    this.delays = this.delays.filter((d) => d.remaining > 0);
    let expireWatch: WatchExpiry | undefined;
    if (!failure && r.verb === 'watch' && this.expireWatches.length > 0) expireWatch = this.expireWatches.shift();
    return { failure, delayMs, expireWatch };
  }
}
