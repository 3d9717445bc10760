import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * A read-only view of Kubernetes objects of one kind, usually an informer's cache.
 *
 * Readers are separated from writers (kube-runtime's Store/Writer split): code that only decides
 * gets a reader; the read-your-writes overlay (src/state/read-your-writes-cache.ts) wraps a reader
 * so that our own writes are visible at once, before the informer catches up.
 *
 * Caveat: an informer-backed reader may lag the API server; see the overlay for the guarantees
 * about our own writes. Cached objects carry no `metadata.managedFields` ({@link withoutManagedFields}).
 */
export interface ObjectReader<T extends KubernetesObject> {
  /** The object, or undefined if the reader does not (yet, or any more) know it. */
  get(namespace: string, name: string): T | undefined;
  /** Every known object, optionally only in one namespace. */
  list(namespace?: string): T[];
}

/** What an informer tells its listeners, in order, for one kind. */
export type ObjectEvent<T extends KubernetesObject> =
  | { readonly type: 'added'; readonly object: T }
  | { readonly type: 'updated'; readonly object: T; readonly old?: T }
  | { readonly type: 'deleted'; readonly object: T }
  /** The informer relisted: `objects` is now the complete set it knows. */
  | { readonly type: 'relisted'; readonly objects: readonly T[] };

export type ObjectEventListener<T extends KubernetesObject> = (event: ObjectEvent<T>) => void;

/** A reader that also reports changes (an informer). */
export interface ObservableObjectReader<T extends KubernetesObject> extends ObjectReader<T> {
  subscribe(listener: ObjectEventListener<T>): () => void;
  /** True once the first list has been received. */
  hasSynced(): boolean;
}

/**
 * The object without `metadata.managedFields`, changed in place: what readers cache. The server
 * records field ownership on every write (several entries per object, often larger than the spec);
 * nothing in the operator reads it, and a write that omits the field keeps the server's entries.
 * Dropping it keeps the informer's memory per object to what the operator uses, as
 * controller-runtime's `cache.TransformStripManagedFields` does.
 */
export function withoutManagedFields<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields !== undefined) delete object.metadata.managedFields;
  return object;
}
