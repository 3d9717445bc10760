import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { withoutManagedFields, type ObjectEvent, type ObjectEventListener, type ObservableObjectReader } from '../kube/object-reader.js';
import type { WatchedResource } from './watched-resources.js';

/**
 * An informer: a client-node `ListWatch` per watched scope (all namespaces, or each configured
 * namespace), made to run forever, exposed as a read-only `ObservableObjectReader`.
 *
 * What client-node 1.4.0 does not do, and this wrapper adds (kube-api.md §1):
 * - it STOPS on any non-410 watch error and on a failed list → restarted here after a backoff
 *   (`minDelayMs` doubling to `maxDelayMs`), resuming from the last resourceVersion (a relist only
 *   if it had none, or after a 410);
 * - it re-watches AT ONCE when the server closes a stream → a watch that ended quickly without
 *   delivering a single object event delays the next one by the same backoff, so a server that
 *   closes streams immediately cannot make us spin;
 * - it asks for bookmarks and a server-side `timeoutSeconds` (jittered 5–10 min, like client-go's
 *   reflector) so long-lived streams are renewed regularly.
 *
 * Guarantees: after any sequence of closes, errors and 410s, the cache converges to the server's
 * state (every object change is seen as an event, or the final state is seen by the relist that
 * follows a 410; objects gone during a gap are reported as `deleted` by the relist).
 * Events are delivered in order per scope. `relisted` is emitted after each (re)list, once that
 * list's added/updated/deleted events have been delivered.
 * Objects are cached without `metadata.managedFields` (`withoutManagedFields`, src/kube/object-reader.ts).
 * Caveats: the cache lags the server (use the read-your-writes overlay for our own writes); the
 * `old` field of `updated` events is not provided (client-node does not expose it).
 */
export interface InformerOptions<T extends KubernetesObject> {
  readonly kubeConfig: KubeConfig;
  readonly resource: WatchedResource<T>;
  /** Namespaces to watch; empty = all namespaces (one cluster-wide watch). */
  readonly namespaces?: readonly string[];
  readonly labelSelector?: string;
  readonly logger?: Logger;
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /** A watch shorter than this that delivered no object event counts as a failed one. Default 1 s. */
  readonly minHealthyWatchMs?: number;
  /** Server-side watch timeout range in seconds; default [300, 600]. */
  readonly watchTimeoutSeconds?: readonly [number, number];
  readonly onRestart?: (reason: 'error' | 'early-close') => void;
  readonly onRequest?: (verb: 'list' | 'watch', code: string) => void;
  /** Called as each list or watch request starts (onRequest: when it ends). Must not throw. */
  readonly onRequestStart?: (verb: 'list' | 'watch') => void;
}

export class Informer<T extends KubernetesObject> implements ObservableObjectReader<T> {
  private scopes: InformerScope<T>[];
  private readonly listeners = new Set<ObjectEventListener<T>>();
  private readonly syncWaiters = new Set<() => void>();
  private started = false;
  readonly resource: string;

  constructor(private readonly options: InformerOptions<T>) {
    this.resource = options.resource.resource;
    this.scopes = scopeNamespaces(options.namespaces).map((ns) => this.newScope(ns));
  }

  private newScope(namespace: string | undefined): InformerScope<T> {
    return new InformerScope<T>(
      this.options,
      namespace,
      (event) => this.emit(event),
      () => this.checkSynced(),
    );
  }

  /** Starts listing and watching (idempotent). */
  start(): void {
    this.started = true;
    for (const scope of this.scopes) scope.start();
  }

  /**
   * Watches `namespaces` (empty = all) from now on, without a restart of the others: scopes no longer
   * wanted are stopped and each object they held that no new scope covers is reported `deleted`
   * (so listeners drop its keys); new scopes list and report their objects `added`. Until the new
   * scopes have listed, `hasSynced()` is false and their objects are unknown.
   */
  async setNamespaces(namespaces: readonly string[]): Promise<void> {
    const wanted = scopeNamespaces(namespaces);
    const kept = this.scopes.filter((scope) => wanted.includes(scope.namespace));
    const dropped = this.scopes.filter((scope) => !kept.includes(scope));
    const added = wanted.filter((ns) => !kept.some((scope) => scope.namespace === ns)).map((ns) => this.newScope(ns));
    this.scopes = [...kept, ...added];
    for (const scope of dropped) {
      await scope.stop();
      for (const object of scope.listWatch.list()) {
        if (!this.scopes.some((s) => s.covers(object.metadata?.namespace ?? ''))) this.emit({ type: 'deleted', object });
      }
    }
    if (this.started) for (const scope of added) scope.start();
  }

  /** Stops every watch and pending restart. */
  async stop(): Promise<void> {
    await Promise.all(this.scopes.map((s) => s.stop()));
    for (const wake of this.syncWaiters) wake();
    this.syncWaiters.clear();
  }

  get(namespace: string, name: string): T | undefined {
    for (const scope of this.scopes) {
      if (scope.covers(namespace)) return scope.listWatch.get(name, namespace);
    }
    return undefined;
  }

  list(namespace?: string): T[] {
    if (namespace !== undefined) {
      const scope = this.scopes.find((s) => s.covers(namespace));
      return scope ? [...scope.listWatch.list(namespace)] : [];
    }
    return this.scopes.flatMap((s) => s.listWatch.list());
  }

  subscribe(listener: ObjectEventListener<T>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  hasSynced(): boolean {
    return this.scopes.every((s) => s.synced);
  }

  /** Resolves true once synced, false if `timeoutMs` passed or the informer was stopped first. */
  waitForSync(timeoutMs: number): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.syncWaiters.delete(wake);
        resolve(this.hasSynced());
      };
      const timer = setTimeout(wake, timeoutMs);
      this.syncWaiters.add(wake);
    });
  }

  private checkSynced(): void {
    if (!this.hasSynced()) return;
    for (const wake of [...this.syncWaiters]) wake();
  }

  private emit(event: ObjectEvent<T>): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // a listener's failure must not break the informer or other listeners
      }
    }
  }
}

/** The scopes for a namespace list: each namespace once, or the whole cluster (undefined) for none. */
function scopeNamespaces(namespaces: readonly string[] | undefined): Array<string | undefined> {
  return namespaces && namespaces.length > 0 ? [...new Set(namespaces)] : [undefined];
}

/** One ListWatch over one scope (a namespace, or the whole cluster), with restart and backoff. */
class InformerScope<T extends KubernetesObject> {
  readonly listWatch: ListWatch<T>;
  synced = false;
  private stopped = true;
  private started = false;
  private justListed = false;
  private delayMs = 0;
  private skipNextDelay = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly sleeps = new Set<() => void>();
  private readonly minDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly minHealthyWatchMs: number;
  private readonly timeoutRange: readonly [number, number];

  constructor(
    private readonly options: InformerOptions<T>,
    readonly namespace: string | undefined,
    private readonly emit: (event: ObjectEvent<T>) => void,
    private readonly onSynced: () => void,
  ) {
    this.minDelayMs = options.minDelayMs ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.minHealthyWatchMs = options.minHealthyWatchMs ?? 1_000;
    this.timeoutRange = options.watchTimeoutSeconds ?? [300, 600];
    const resource = options.resource;
    const listFn = async (): Promise<KubernetesListObject<T>> => {
      options.onRequestStart?.('list');
      try {
        const list = await resource.list(namespace, options.labelSelector);
        for (const item of list.items) withoutManagedFields(item);
        options.onRequest?.('list', '200');
        this.justListed = true;
        return list;
      } catch (error) {
        options.onRequest?.('list', requestCode((error as { code?: unknown }).code));
        throw error;
      }
    };
    const watch = new Watch(options.kubeConfig);
    const throttled = { watch: this.throttledWatch.bind(this, watch) } as unknown as Watch;
    this.listWatch = new ListWatch<T>(resource.path(namespace), throttled, listFn, false, options.labelSelector);
    this.listWatch.on('add', (object) => this.emit({ type: 'added', object }));
    this.listWatch.on('update', (object) => this.emit({ type: 'updated', object }));
    this.listWatch.on('delete', (object) => this.emit({ type: 'deleted', object }));
    this.listWatch.on('error', (error) => this.onError(error));
  }

  covers(namespace: string): boolean {
    return this.namespace === undefined || this.namespace === namespace;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopped = false;
    void this.listWatch.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    for (const wake of [...this.sleeps]) wake();
    await this.listWatch.stop();
  }

  private onError(error: unknown): void {
    if (this.stopped) return;
    const delay = this.nextDelay();
    this.options.onRestart?.('error');
    this.options.logger?.warn(
      { resource: this.options.resource.resource, namespace: this.namespace, err: describeError(error), retryInMs: delay },
      'informer stopped by an error; restarting',
    );
    this.skipNextDelay = true;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped) void this.listWatch.start();
    }, delay);
  }

  private nextDelay(): number {
    this.delayMs = this.delayMs === 0 ? this.minDelayMs : Math.min(this.delayMs * 2, this.maxDelayMs);
    return this.delayMs;
  }

  /** Stands in for Watch.watch: emits `relisted` after a list, delays the watch after a bad one. */
  private async throttledWatch(
    inner: Watch,
    path: string,
    params: Record<string, unknown>,
    callback: (phase: string, object: unknown, watchObject?: unknown) => void,
    done: (error: unknown) => void,
  ): Promise<AbortController> {
    if (this.justListed) {
      this.justListed = false;
      const firstSync = !this.synced;
      this.synced = true;
      this.emit({ type: 'relisted', objects: this.listWatch.list(this.namespace) });
      if (firstSync) this.onSynced();
    }
    if (this.skipNextDelay) this.skipNextDelay = false;
    else if (this.delayMs > 0) await this.sleep(this.delayMs);
    if (this.stopped) return new AbortController();
    const [lo, hi] = this.timeoutRange;
    const timeoutSeconds = Math.round(lo + Math.random() * Math.max(0, hi - lo));
    const started = Date.now();
    let objectEvents = 0;
    this.options.onRequestStart?.('watch');
    return inner.watch(
      path,
      { ...params, allowWatchBookmarks: true, timeoutSeconds },
      (phase, object, watchObject) => {
        if (phase !== 'ERROR') objectEvents++;
        if (phase !== 'ERROR' && typeof object === 'object' && object !== null) withoutManagedFields(object as KubernetesObject);
        callback(phase, object, watchObject);
      },
      (error) => {
        const code = error ? requestCode((error as { statusCode?: unknown }).statusCode) : '200';
        this.options.onRequest?.('watch', code);
        const healthy = objectEvents > 0 || Date.now() - started >= this.minHealthyWatchMs;
        const status = (error as { statusCode?: unknown } | null)?.statusCode;
        if (healthy) {
          this.delayMs = 0; // a restart after an error then starts from the minimum delay again
        } else if (!this.stopped && (!error || status === 410)) {
          // closed (or expired) at once: client-node re-lists/re-watches immediately, so slow it down
          const delay = this.nextDelay();
          this.options.onRestart?.('early-close');
          this.options.logger?.debug(
            { resource: this.options.resource.resource, namespace: this.namespace, retryInMs: delay },
            'watch closed early; backing off',
          );
        } // other errors: onError() picks the next delay
        done(error);
      },
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleeps.add(wake);
    });
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error)
    return `${error.name}: ${error.message}${(error as { statusCode?: number }).statusCode ? ` (HTTP ${(error as { statusCode?: number }).statusCode})` : ''}`;
  return String(error);
}

/** The code label of a failed request: the HTTP status when there is one, else `error`. */
function requestCode(code: unknown): string {
  return typeof code === 'number' || typeof code === 'string' ? String(code) : 'error';
}
