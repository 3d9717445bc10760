/**
 * A log of every API request the dev cluster answered, with counters, so tests can assert how many
 * calls the operator made (and filter out the simulated kubelet by User-Agent).
 *
 * Guarantees: `count()` is exact for every request since the last `reset()` (counters are kept
 * apart from the bounded entry list); `entries()` returns at most the last `maxEntries` requests.
 * Verbs are named as Kubernetes audit names them: get, list, watch, create, update, patch, delete,
 * deletecollection (and `get`/`post`... lowercased HTTP methods for non-resource paths).
 */

export interface RequestLogEntry {
  time: number;
  method: string;
  path: string;
  verb: string;
  apiGroup: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  code: number;
  requestBytes: number;
  responseBytes: number;
  userAgent: string;
  durationMs: number;
}

export interface RequestFilter {
  verb?: string;
  apiGroup?: string;
  version?: string;
  resource?: string;
  /** '' matches only requests without a subresource */
  subresource?: string;
  namespace?: string;
  name?: string;
  code?: number;
  userAgentPrefix?: string;
  excludeUserAgentPrefix?: string;
}

const COUNTER_FIELDS = new Set(['verb', 'apiGroup', 'resource', 'subresource', 'code', 'userAgentPrefix', 'excludeUserAgentPrefix']);

interface Counter {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  userAgent: string;
  code: number;
  n: number;
}

function matches(f: RequestFilter, e: Omit<RequestLogEntry, 'time'> | Counter): boolean {
  if (f.verb !== undefined && f.verb !== e.verb) return false;
  if (f.apiGroup !== undefined && f.apiGroup !== e.apiGroup) return false;
  if (f.resource !== undefined && f.resource !== e.resource) return false;
  if (f.subresource !== undefined && f.subresource !== e.subresource) return false;
  if (f.code !== undefined && f.code !== e.code) return false;
  if (f.userAgentPrefix !== undefined && !e.userAgent.startsWith(f.userAgentPrefix)) return false;
  if (f.excludeUserAgentPrefix !== undefined && e.userAgent.startsWith(f.excludeUserAgentPrefix)) return false;
  if ('namespace' in e) {
    const entry = e as RequestLogEntry;
    if (f.version !== undefined && f.version !== entry.version) return false;
    if (f.namespace !== undefined && f.namespace !== entry.namespace) return false;
    if (f.name !== undefined && f.name !== entry.name) return false;
  }
  return true;
}

export class RequestLog {
  private list: RequestLogEntry[] = [];
  private counters = new Map<string, Counter>();

  constructor(private readonly maxEntries = 100_000) {}

  record(e: RequestLogEntry): void {
    this.list.push(e);
    if (this.list.length > this.maxEntries * 1.5) this.list = this.list.slice(this.list.length - this.maxEntries);
    const key = `${e.verb}\u0000${e.apiGroup}\u0000${e.resource}\u0000${e.subresource}\u0000${e.userAgent}\u0000${e.code}`;
    const c = this.counters.get(key);
    if (c) c.n++;
    else
      this.counters.set(key, {
        verb: e.verb,
        apiGroup: e.apiGroup,
        resource: e.resource,
        subresource: e.subresource,
        userAgent: e.userAgent,
        code: e.code,
        n: 1,
      });
  }

  /** Number of requests matching the filter (all requests without one). */
  count(filter: RequestFilter = {}): number {
    const usesCounters = Object.keys(filter).every((k) => COUNTER_FIELDS.has(k));
    if (usesCounters) {
      let n = 0;
      for (const c of this.counters.values()) if (matches(filter, c)) n += c.n;
      return n;
    }
    return this.entries(filter).length;
  }

  /** The retained entries matching the filter, oldest first. */
  entries(filter: RequestFilter = {}): RequestLogEntry[] {
    const start = Math.max(0, this.list.length - this.maxEntries);
    const out: RequestLogEntry[] = [];
    for (let i = start; i < this.list.length; i++) if (matches(filter, this.list[i])) out.push(this.list[i]);
    return out;
  }

  reset(): void {
    this.list = [];
    this.counters = new Map();
  }
}
