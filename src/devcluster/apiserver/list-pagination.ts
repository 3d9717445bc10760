/**
 * Lists as kube-apiserver 1.32 serves them: which revision a list reads (resourceVersion,
 * resourceVersionMatch, continue), `limit`/`continue` pages and their opaque continue tokens.
 *
 * Guarantees (sources: apiserver `pkg/storage/cacher/cacher.go` GetList / shouldDelegateList /
 * computeListLimit, `pkg/storage/etcd3/store.go` GetList / resolveGetListRev, `etcd3/errors.go`,
 * `pkg/storage/continue.go`):
 * - Continue tokens are `storage.EncodeContinue`'s: unpadded base64url of
 *   `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the last item>\u0000"}` where the key is the
 *   object's etcd key below the list's prefix (`name` in a namespace or for cluster-scoped types,
 *   `namespace/name` across namespaces). Malformed tokens → 400 `invalid continue token: …`.
 * - Every page after the first reads the state as of the first page's revision (the snapshot
 *   etcd serves at `rv`): objects created, changed or deleted since do not show. When that state
 *   can no longer be rebuilt → 410 `The provided continue parameter is too old …` carrying a new
 *   token (`rv: -1`, same start) in `metadata.continue`, which continues at the latest state.
 * - `resourceVersion` "" and "N" (NotOlderThan) read the latest state; "N" newer than the current
 *   revision waits up to 3 s for it, then 504 `Timeout: Too large resource version: N, current: M`.
 *   "0" reads the latest state and ignores `limit` (the watch cache does). `resourceVersionMatch=Exact`
 *   (and the legacy `limit` + `resourceVersion=N` without a match) read exactly revision N: 410
 *   `The resourceVersion for the provided list is too old.` when gone, 500
 *   `etcdserver: mvcc: required revision is a future revision` when N is in the future.
 *   `continue` with a resourceVersion other than "" / "0" → 400 `specifying resource version is
 *   not allowed when using continue`.
 * - A page holds at most `limit` matching items; a token is returned while unread keys remain
 *   (even if none of them matches), `metadata.remainingItemCount` only without selectors.
 * Caveats: an older revision is rebuilt from the watch window of the type (ObjectStore.stateAt),
 * so it stays readable as long as that window reaches back (the real server: until etcd's
 * compaction, every 5 minutes); keys compare by UTF-16 code units (etcd: bytes; equal for ASCII).
 */
import { ApiError, badRequest, gone, tooLargeResourceVersion } from './errors.js';
import type { JsonObject } from './json-clone.js';
import type { ObjectStore } from './object-store.js';
import type { ListOptions } from './query-parameters.js';
import type { KubeObject } from './resource-types.js';
import { matchesFields, matchesLabels, type FieldSelector, type LabelSelector } from './selectors.js';

export interface ContinueToken {
  /** the revision the pages read; -1: the latest */
  rv: number;
  /** the first key of the next page */
  start: string;
}

export interface ListRange {
  groupResource: string;
  /** undefined: every namespace (and cluster-scoped types) */
  namespace: string | undefined;
  labels: LabelSelector;
  fields: FieldSelector;
}

export interface ListPage {
  items: KubeObject[];
  resourceVersion: number;
  continue?: string;
  remainingItemCount?: number;
}

/** How long a list waits for a resourceVersion newer than the current revision (watch cache `blockTimeout`). */
export const FRESHNESS_BLOCK_TIMEOUT_MS = 3_000;

const TOKEN_VERSION = 'meta.k8s.io/v1';

const EXPIRED_LIST = 'The resourceVersion for the provided list is too old.';
const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** A 410 whose Status carries `metadata.continue` (etcd3 `handleCompactedErrorForPaging`). */
class ExpiredContinueError extends ApiError {
  constructor(private readonly token: string) {
    super(410, 'Expired', INCONSISTENT_CONTINUE);
  }
  override toStatus(): JsonObject {
    return { ...super.toStatus(), metadata: { continue: this.token } };
  }
}

/** A plain (non-Status) storage error the apiserver answers as 500 without a reason (`ErrorToAPIStatus`). */
class StorageError extends ApiError {
  constructor(message: string) {
    super(500, '', message);
  }
  override toStatus(): JsonObject {
    const { reason: _reason, ...status } = super.toStatus();
    return status;
  }
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv: token.rv, start: token.start }), 'utf8').toString('base64url');
}

/** `storage.DecodeContinue`, its errors as the etcd3 store answers them (400). */
export function decodeContinue(value: string): ContinueToken {
  const invalidToken = (why: string) => badRequest(`invalid continue token: continue key is not valid${why}`);
  if (!/^[A-Za-z0-9_-]*$/.test(value)) throw invalidToken(': illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch (e) {
    throw invalidToken(`: ${(e as Error).message}`);
  }
  const o = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  if (o.v !== TOKEN_VERSION) throw invalidToken(`: server does not recognize this encoded version ${typeof o.v === 'string' ? o.v : ''}`);
  const rv = typeof o.rv === 'number' ? o.rv : 0;
  if (rv === 0) throw invalidToken(`: incorrect encoded start resourceVersion (version ${TOKEN_VERSION})`);
  const start = typeof o.start === 'string' ? o.start : '';
  if (start === '') throw invalidToken(`: encoded start key empty (version ${TOKEN_VERSION})`);
  const key = start.startsWith('/') ? start : `/${start}`;
  if (cleanPath(key) !== key) throw invalidToken(`: ${start}`);
  return { rv, start: key.slice(1) };
}

/** Go's `path.Clean` for an absolute path (enough to refuse `..`, `.` and `//` in a start key). */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** The key of an object below the list's etcd prefix. */
function keyOf(o: KubeObject, acrossNamespaces: boolean): string {
  return acrossNamespaces && o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/** Resolves after `rv` is the current revision or `timeoutMs` passed; true when fresh. */
export async function waitForRevision(store: ObjectStore, rv: number, timeoutMs = FRESHNESS_BLOCK_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (store.currentRevision() < rv) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** Waits for a NotOlderThan resourceVersion, or throws the 504 the watch cache answers. */
export async function requireFresh(store: ObjectStore, rv: number): Promise<void> {
  if (await waitForRevision(store, rv)) return;
  throw tooLargeResourceVersion(rv, store.currentRevision(), 1);
}

/** One page of a list, read at the revision its options ask for. */
export async function readListPage(store: ObjectStore, range: ListRange, opts: ListOptions): Promise<ListPage> {
  const current = store.currentRevision();
  if (opts.continue !== '') {
    if (opts.resourceVersion !== '' && opts.resourceVersion !== '0') throw badRequest('specifying resource version is not allowed when using continue');
    const token = decodeContinue(opts.continue);
    const rv = token.rv > 0 ? token.rv : current;
    const objects = objectsAt(store, range, rv);
    if (!objects) throw new ExpiredContinueError(encodeContinue({ rv: -1, start: token.start }));
    return pageOf(objects, range, opts.limit, token.start, rv);
  }
  const rvText = opts.resourceVersion;
  const exact = opts.resourceVersionMatch === 'Exact' || (opts.resourceVersionMatch === '' && opts.limit > 0 && rvText !== '' && rvText !== '0');
  if (exact) {
    const rv = Number(rvText);
    if (rv > current) throw new StorageError('etcdserver: mvcc: required revision is a future revision');
    const objects = objectsAt(store, range, rv);
    if (!objects) throw gone(EXPIRED_LIST);
    return pageOf(objects, range, opts.limit, undefined, rv);
  }
  if (rvText !== '' && rvText !== '0') await requireFresh(store, Number(rvText));
  // the watch cache ignores the limit of a resourceVersion=0 list (computeListLimit)
  const limit = rvText === '0' ? 0 : opts.limit;
  return pageOf(liveCandidates(store, range, limit), range, limit, undefined, store.currentRevision());
}

/** The current objects of the range; without paging, `metadata.name=X` in one namespace is a direct lookup. */
function liveCandidates(store: ObjectStore, range: ListRange, limit: number): KubeObject[] {
  const byName = limit > 0 ? undefined : range.fields.find((f) => f.field === 'metadata.name' && !f.negate);
  if (byName && range.namespace !== undefined) {
    const one = store.get(range.groupResource, range.namespace, byName.value);
    return one ? [one] : [];
  }
  return [...store.list(range.groupResource, range.namespace)];
}

function objectsAt(store: ObjectStore, range: ListRange, rv: number): KubeObject[] | undefined {
  if (rv === store.currentRevision()) return liveCandidates(store, range, 1);
  return store.stateAt(range.groupResource, rv, range.namespace);
}

function pageOf(objects: KubeObject[], range: ListRange, limit: number, start: string | undefined, rv: number): ListPage {
  const across = range.namespace === undefined;
  const keyed = objects.map((o) => ({ key: keyOf(o, across), o }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  let i = 0;
  if (start !== undefined) {
    let hi = keyed.length;
    while (i < hi) {
      const mid = (i + hi) >> 1;
      if (keyed[mid].key < start) i = mid + 1;
      else hi = mid;
    }
  }
  const unfiltered = range.labels.length === 0 && range.fields.length === 0;
  const items: KubeObject[] = [];
  let lastKey = '';
  for (; i < keyed.length; i++) {
    if (limit > 0 && items.length >= limit) break;
    const { key, o } = keyed[i];
    lastKey = key;
    if ((unfiltered || matchesLabels(range.labels, o.metadata.labels)) && (range.fields.length === 0 || matchesFields(range.fields, o))) items.push(o);
  }
  const page: ListPage = { items, resourceVersion: rv };
  if (limit > 0 && i < keyed.length) {
    page.continue = encodeContinue({ rv, start: `${lastKey}\u0000` });
    if (unfiltered) page.remainingItemCount = keyed.length - i;
  }
  return page;
}
