/**
 * One watch request: a chunked HTTP response of newline-delimited `{"type","object"}` events.
 *
 * Guarantees: without a resourceVersion (or with "0") the stream starts with a synthetic ADDED for
 * every current match; with resourceVersion N it carries exactly the events after N (or an ERROR
 * 410 Expired event and the end of the stream when N is older than the retained history, as the
 * watch cache answers). BOOKMARKs are sent only when asked for (allowWatchBookmarks=true). The
 * stream ends when the client goes, when timeoutSeconds passes, on closeAllWatches, or on stop.
 * Table watches (kubectl get -w) carry one-row Tables, column definitions in the first only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gone, ApiError } from './errors.js';
import type { ApiOperations, Scope } from './api-operations.js';
import { apiVersionOf, type KubeObject } from './resource-types.js';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from './selectors.js';
import { tableOf, type TableRowObject } from './tables.js';
import type { Watcher, WatchEventType } from './watch-hub.js';

export interface WatchRequest {
  scope: Scope;
  allNamespaces: boolean;
  labels: LabelSelector;
  fields: FieldSelector;
  resourceVersion: string | undefined;
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
  if (w.expire) {
    write(errorLine(gone(`too old resource version: ${w.resourceVersion ?? 0} (${ops.store.currentRevision()})`)));
    close();
    return;
  }

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
    encodingKey: w.table ? `!table:${w.tableRowObject ?? 'Metadata'}` : type.crd ? `${type.version}|${type.crd.revision}` : 'builtin',
    encode: (t, obj) => (w.table ? encodeTable(t, obj) : `{"type":"${t}","object":${ops.encodeJson(type, obj)}}`),
    write,
    close,
  };

  const rv = w.resourceVersion;
  let fromRv: number | undefined;
  if (rv === undefined || rv === '' || rv === '0') {
    for (const o of ops.listStored(scope, w.labels, w.fields, w.allNamespaces)) write(watcher.encode('ADDED', o));
    fromRv = undefined;
  } else {
    fromRv = Number(rv);
  }
  try {
    unsubscribe = ops.store.watchHub.subscribe(watcher, fromRv);
  } catch (e) {
    if (e instanceof ApiError) write(errorLine(e));
    close();
    return;
  }
  if (w.timeoutSeconds !== undefined && w.timeoutSeconds > 0) timers.push(setTimeout(close, w.timeoutSeconds * 1000));
  if (w.bookmarks) {
    const sendBookmark = () => {
      if (closed) return;
      const rvNow = String(ops.store.currentRevision());
      write(JSON.stringify({ type: 'BOOKMARK', object: { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: rvNow } } }));
      timers.push(setTimeout(sendBookmark, options.bookmarkIntervalMs));
    };
    timers.push(setTimeout(sendBookmark, options.bookmarkIntervalMs));
  }
}
