/**
 * One watch request: a chunked HTTP response of newline-delimited `{"type","object"}` events, as
 * kube-apiserver 1.32's watch cache serves it (apiserver `pkg/storage/cacher/cacher.go` Watch,
 * `cache_watcher.go`, `pkg/endpoints/handlers/get.go` ListResource).
 *
 * Guarantees:
 * - `sendInitialEvents=true` (the default of a watch from resourceVersion "" or "0", see
 *   query-parameters.ts) starts with a synthetic ADDED for every current match; with
 *   `allowWatchBookmarks` those are followed by a BOOKMARK at the current revision annotated
 *   `k8s.io/initial-events-end: "true"`. With `sendInitialEvents=true` and a resourceVersion newer
 *   than the current revision the watch waits up to 3 s, then sends an ERROR 504 `Timeout: Too
 *   large resource version: N, current: M` and ends. `sendInitialEvents=false` streams from now.
 * - From resourceVersion N (no initial events) the stream carries exactly the events after N; an N
 *   newer than the current revision is served (it receives the events past N); an N the watch
 *   window no longer reaches gets an ERROR 410 Expired event and the end of the stream.
 * - Every watch has a deadline: `timeoutSeconds`, or the server's default min-request-timeout of
 *   1800 s times a random factor in [1, 2) (handlers/get.go). The stream ends there.
 * - BOOKMARKs only when asked for (allowWatchBookmarks): each one at the earlier of "interval
 *   after the previous one (or the start)" (the real `defaultBookmarkFrequency`, 1 min, is
 *   `bookmarkIntervalMs`) and 2 s before the deadline; none when that is already past
 *   (`cacheWatcher.nextBookmarkTime`). A bookmark carries the current revision.
 * - The stream also ends when the client goes, on closeAllWatches, or on stop.
 * Table watches (kubectl get -w) carry one-row Tables, column definitions in the first only.
 * Caveats: bookmarks are sent at their time exactly (the real dispatcher ticks every ~1 s, so a
 * real bookmark lands up to ~1.25 s later); a bookmark's object is `{kind, apiVersion,
 * metadata.resourceVersion}` (the real one is the kind's empty object, e.g. `creationTimestamp: null`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gone, ApiError, tooLargeResourceVersion } from './errors.js';
import type { ApiOperations, Scope } from './api-operations.js';
import type { JsonObject } from './json-clone.js';
import { waitForRevision } from './list-pagination.js';
import { apiVersionOf, type KubeObject } from './resource-types.js';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from './selectors.js';
import { tableOf, type TableRowObject } from './tables.js';
import type { Watcher, WatchEventType } from './watch-hub.js';

export interface WatchRequest {
  scope: Scope;
  allNamespaces: boolean;
  labels: LabelSelector;
  fields: FieldSelector;
  /** '' when absent */
  resourceVersion: string;
  /** after defaulting (query-parameters.ts) */
  sendInitialEvents: boolean | undefined;
  timeoutSeconds: number | undefined;
  bookmarks: boolean;
  table: boolean;
  /** With `table`: what each row carries (includeObject). */
  tableRowObject?: TableRowObject;
  /** answer with ERROR 410 and close (fault injection) */
  expire: boolean;
}

export interface WatchStreamOptions {
  bookmarkIntervalMs: number;
  onBytes(n: number): void;
}

/** kube-apiserver's `--min-request-timeout` default: a watch without timeoutSeconds lasts 1–2 times this. */
export const MIN_REQUEST_TIMEOUT_SECONDS = 1800;
/** A bookmark is due this long before the watch's deadline (`cacheWatcher.nextBookmarkTime`). */
export const PRE_TIMEOUT_BOOKMARK_MS = 2_000;

/** When the next bookmark is due (ms since epoch), or undefined when none will be sent. */
export function nextBookmarkTime(now: number, intervalMs: number, deadline: number): number | undefined {
  const heartbeat = Math.min(now + intervalMs, deadline - PRE_TIMEOUT_BOOKMARK_MS);
  return heartbeat < now ? undefined : heartbeat;
}

export function startWatch(ops: ApiOperations, req: IncomingMessage, res: ServerResponse, w: WatchRequest, options: WatchStreamOptions): void {
  const { scope } = w;
  const type = scope.type;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  let closed = false;
  let unsubscribe: (() => void) | undefined;
  const timers: NodeJS.Timeout[] = [];
  // Events of one event-loop turn go out as one chunk (one syscall) instead of one chunk each:
  // under load the watch fan-out was the dev cluster's largest cost (writev, design/performance.md).
  // Order is kept; an event waits at most until the end of the current turn (setImmediate).
  let pending: string[] = [];
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    if (!closed) res.write(chunk);
  };
  const write = (line: string) => {
    if (closed) return;
    const chunk = `${line}\n`;
    options.onBytes(Buffer.byteLength(chunk));
    pending.push(chunk);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };
  const close = () => {
    if (closed) return;
    flush();
    closed = true;
    unsubscribe?.();
    for (const t of timers) clearTimeout(t);
    res.end();
  };
  req.on('close', close);
  res.on('close', close);

  const errorLine = (e: ApiError) => JSON.stringify({ type: 'ERROR', object: e.toStatus() });
  const fail = (e: ApiError) => {
    write(errorLine(e));
    close();
  };
  if (w.expire) return fail(gone(`too old resource version: ${w.resourceVersion || 0} (${ops.store.currentRevision()})`));

  let firstTable = true;
  const encodeTable = (t: WatchEventType, obj: KubeObject) => {
    const table = tableOf(type, scope.groupResource, [ops.encode(type, obj)], obj.metadata.resourceVersion, firstTable, w.tableRowObject);
    firstTable = false;
    return JSON.stringify({ type: t, object: table });
  };
  const watcher: Watcher = {
    groupResource: scope.groupResource,
    namespace: type.namespaced && !w.allNamespaces ? scope.namespace : undefined,
    labels: w.labels,
    matches: (obj) => (w.labels.length === 0 || matchesLabels(w.labels, obj.metadata.labels)) && (w.fields.length === 0 || matchesFields(w.fields, obj)),
    encodingKey: w.table
      ? `!table:${w.tableRowObject ?? 'Metadata'}`
      : type.crd
        ? `${type.version}|${type.crd.revision}`
        : type.storedAs
          ? apiVersionOf(type)
          : 'builtin',
    encode: (t, obj) => (w.table ? encodeTable(t, obj) : `{"type":"${t}","object":${ops.encodeJson(type, obj)}}`),
    write,
    close,
  };
  const bookmarkLine = (initialEventsEnd: boolean) => {
    const metadata: JsonObject = { resourceVersion: String(ops.store.currentRevision()) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    return JSON.stringify({ type: 'BOOKMARK', object: { kind: type.kind, apiVersion: apiVersionOf(type), metadata } });
  };

  const timeoutMs = (w.timeoutSeconds && w.timeoutSeconds > 0 ? w.timeoutSeconds : MIN_REQUEST_TIMEOUT_SECONDS * (1 + Math.random())) * 1000;
  const deadline = Date.now() + timeoutMs;
  timers.push(setTimeout(close, timeoutMs));

  const begin = () => {
    if (closed) return;
    const rv = w.resourceVersion;
    let fromRv: number | undefined;
    if (w.sendInitialEvents === true) {
      for (const o of ops.listStored(scope, w.labels, w.fields, w.allNamespaces)) write(watcher.encode('ADDED', o));
      if (w.bookmarks) write(bookmarkLine(true));
      fromRv = undefined;
    } else if (w.sendInitialEvents === false && (rv === '' || rv === '0')) {
      fromRv = undefined;
    } else {
      fromRv = Number(rv);
    }
    try {
      unsubscribe = ops.store.watchHub.subscribe(watcher, fromRv);
    } catch (e) {
      if (e instanceof ApiError) return fail(e);
      throw e;
    }
    if (w.bookmarks) scheduleBookmark();
  };
  const scheduleBookmark = () => {
    const now = Date.now();
    const at = nextBookmarkTime(now, options.bookmarkIntervalMs, deadline);
    if (at === undefined) return;
    timers.push(
      setTimeout(() => {
        if (closed) return;
        write(bookmarkLine(false));
        scheduleBookmark();
      }, at - now),
    );
  };

  const wanted = Number(w.resourceVersion);
  if (w.sendInitialEvents === true && w.resourceVersion !== '' && wanted > ops.store.currentRevision()) {
    void waitForRevision(ops.store, wanted).then((fresh) => (fresh ? begin() : fail(tooLargeResourceVersion(wanted, ops.store.currentRevision(), 1))));
    return;
  }
  begin();
}
