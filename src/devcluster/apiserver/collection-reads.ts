/**
 * A GET on a collection (list) or with `watch=true` (watch, also of one object by name): decodes
 * the ListOptions (query-parameters.ts), then answers a list page (list-pagination.ts) as a
 * `<Kind>List` or a Table, or starts the watch stream (watch-stream.ts).
 *
 * Guarantees: the same option decoding, defaults and 422/400s for lists and watches as
 * kube-apiserver 1.32's `ListResource` handler (apiserver `pkg/endpoints/handlers/get.go`):
 * a watch on `…/NAME` with a `fieldSelector` naming another `metadata.name` is a 400
 * `fieldSelector metadata.name doesn't match requested name`; list metadata carries
 * `resourceVersion`, and `continue` / `remainingItemCount` when the page is not the last
 * (also in Tables, so `kubectl get --chunk-size` pages).
 * Caveats: HEAD is answered like GET.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiOperations, Scope } from './api-operations.js';
import { badRequest, gone } from './errors.js';
import type { JsonObject } from './json-clone.js';
import { readListPage } from './list-pagination.js';
import { parseListOptions } from './query-parameters.js';
import { apiVersionOf } from './resource-types.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { tableOf, tableRowObjectOf } from './tables.js';
import type { WatchExpiry } from './faults.js';
import { startWatch } from './watch-stream.js';

export interface CollectionRead {
  scope: Scope;
  /** a namespaced type read without /namespaces/NS/ */
  allNamespaces: boolean;
  /** '' for a collection; a name for `GET …/NAME?watch=true` */
  name: string;
  /** the Accept header asks for a Table */
  table: boolean;
}

export interface CollectionReadContext {
  ops: ApiOperations;
  bookmarkIntervalMs: number;
  /** an injected fault for the next watch (faults.ts) */
  expireWatch: WatchExpiry | undefined;
  /** called once a watch stream is about to start (request log) */
  watchStarted(): void;
  sendJson(code: number, body: string | object): void;
}

export async function serveCollectionRead(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  read: CollectionRead,
  ctx: CollectionReadContext,
): Promise<void> {
  const q = url.searchParams;
  const { scope, table } = read;
  const type = scope.type;
  const opts = parseListOptions(q);
  const labels = parseLabelSelector(q.get('labelSelector'));
  const fields = parseFieldSelector(q.get('fieldSelector'), scope.groupResource);
  if (read.name) {
    const named = fields.filter((f) => f.field === 'metadata.name');
    if (fields.length > 0 && (named.length !== 1 || named[0].negate || named[0].value !== read.name))
      throw badRequest("fieldSelector metadata.name doesn't match requested name");
    if (named.length === 0) fields.push({ field: 'metadata.name', negate: false, value: read.name });
  }
  const rv = opts.resourceVersion;
  if (rv !== '' && !/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${rv}`);
  const tableRowObject = tableRowObjectOf(q.get('includeObject'));

  if (opts.watch) {
    if (ctx.expireWatch === 'http') throw gone(`too old resource version: ${rv || 0} (${ctx.ops.store.currentRevision()})`);
    ctx.watchStarted();
    startWatch(
      ctx.ops,
      req,
      res,
      {
        scope,
        allNamespaces: read.allNamespaces,
        labels,
        fields,
        resourceVersion: rv,
        sendInitialEvents: opts.sendInitialEvents,
        timeoutSeconds: opts.timeoutSeconds,
        bookmarks: opts.allowWatchBookmarks,
        table,
        tableRowObject,
        expire: ctx.expireWatch === 'event',
      },
      { bookmarkIntervalMs: ctx.bookmarkIntervalMs, onBytes: () => undefined },
    );
    return;
  }

  const namespace = type.namespaced && read.allNamespaces ? undefined : scope.namespace || undefined;
  const page = await readListPage(ctx.ops.store, { groupResource: scope.groupResource, namespace, labels, fields }, opts);
  const listRv = String(page.resourceVersion);
  const more: JsonObject = {};
  if (page.continue !== undefined) more.continue = page.continue;
  if (page.remainingItemCount !== undefined) more.remainingItemCount = page.remainingItemCount;
  if (table) {
    const t = tableOf(
      type,
      scope.groupResource,
      page.items.map((o) => ctx.ops.encode(type, o)),
      listRv,
      true,
      tableRowObject,
    );
    return ctx.sendJson(200, { ...t, metadata: { ...t.metadata, ...more } });
  }
  const metadata = JSON.stringify({ resourceVersion: listRv, ...more });
  const items = page.items.map((o) => ctx.ops.encodeJson(type, o, true)).join(',');
  return ctx.sendJson(200, `{"kind":"${type.listKind}","apiVersion":"${apiVersionOf(type)}","metadata":${metadata},"items":[${items}]}`);
}
