import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * Own-write echo filtering: telling our own writes apart from everyone else's when their watch
 * events come back.
 *
 * Every component that writes an object the operator watches (the state store, the status
 * recorder, the resource renderer) calls `recordOwnWrite` with the resourceVersion the API server
 * returned for that write. When the informer later delivers an event whose object carries exactly
 * that resourceVersion, the event is our own echo and need not trigger a reconcile.
 *
 * Guarantees (the rules, in order):
 * 1. a delete is never an echo;
 * 2. a FlinkDeployment event whose metadata.generation differs from the last generation the tracker
 *    saw for that key is never an echo (a spec change is always reconciled);
 * 3. otherwise an event is an echo only if its resourceVersion equals one we recorded for that
 *    exact kind/namespace/name. A user's write always gets a different resourceVersion (one per
 *    write, server-assigned), so a user's change is never dropped, even one arriving right after
 *    our own write (the JOSDK 5.3–5.5 bug class).
 * Assumptions: resourceVersions are unique per write (true for etcd-backed servers).
 * Caveats: each recorded version matches at most once and only the last few per object are kept;
 * an unmatched record merely costs one extra (harmless, level-based) reconcile.
 */
export interface WriteTracker {
  /** Call after every successful write, with the resourceVersion (and generation) of the response. */
  recordOwnWrite(kind: string, namespace: string, name: string, resourceVersion: string | undefined, generation?: number): void;
}

export type WatchEventType = 'added' | 'updated' | 'deleted';

const KEPT_VERSIONS_PER_OBJECT = 8;

/** The kinds whose generation rule 2 applies to (the only ones whose generation is remembered). */
const GENERATION_KINDS: ReadonlySet<string> = new Set(['FlinkDeployment', 'FlinkSessionJob']);

/** What is remembered of one object: kept only while it holds a version or a generation. */
interface TrackedObject {
  /** our writes' resourceVersions not yet seen as events, oldest first (one, the usual case, as a plain string) */
  versions: string | string[] | undefined;
  /** the last generation seen (FlinkDeployment, FlinkSessionJob only) */
  generation: number | undefined;
}

export class OwnWriteTracker implements WriteTracker {
  /** one entry (and one key string) per object, instead of one per map of versions and of generations */
  private readonly tracked = new Map<string, TrackedObject>();
  private skipped = 0;

  recordOwnWrite(kind: string, namespace: string, name: string, resourceVersion: string | undefined, generation?: number): void {
    if (!resourceVersion) return;
    const key = trackerKey(kind, namespace, name);
    let entry = this.tracked.get(key);
    if (!entry) this.tracked.set(key, (entry = { versions: undefined, generation: undefined }));
    const versions = entry.versions;
    if (versions === undefined) entry.versions = resourceVersion;
    else if (typeof versions === 'string') {
      if (versions !== resourceVersion) entry.versions = [versions, resourceVersion];
    } else {
      if (!versions.includes(resourceVersion)) versions.push(resourceVersion);
      if (versions.length > KEPT_VERSIONS_PER_OBJECT) versions.splice(0, versions.length - KEPT_VERSIONS_PER_OBJECT);
    }
    if (generation !== undefined && entry.generation === undefined && GENERATION_KINDS.has(kind)) entry.generation = generation;
  }

  /**
   * Decides whether an informer event is the echo of our own write (see the rules above), and
   * remembers the event's generation for later decisions. Call exactly once per event.
   */
  isOwnEcho(kind: string, type: WatchEventType, object: KubernetesObject): boolean {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    const key = trackerKey(kind, namespace, name);
    if (type === 'deleted') {
      this.tracked.delete(key);
      return false;
    }
    const generation = object.metadata?.generation;
    let entry = this.tracked.get(key);
    const lastGeneration = entry?.generation;
    if (generation !== undefined && GENERATION_KINDS.has(kind)) {
      if (!entry) this.tracked.set(key, (entry = { versions: undefined, generation }));
      else entry.generation = generation;
    }
    const versions = entry?.versions;
    const rv = object.metadata?.resourceVersion;
    if (!entry || !versions || !rv) return false;
    if (typeof versions === 'string') {
      if (versions !== rv) return false;
      entry.versions = undefined;
    } else {
      const index = versions.indexOf(rv);
      if (index < 0) return false;
      versions.splice(index, 1);
      if (versions.length === 1) entry.versions = versions[0];
    }
    if (entry.versions === undefined && entry.generation === undefined) this.tracked.delete(key);
    if (generation !== undefined && lastGeneration !== undefined && generation !== lastGeneration && GENERATION_KINDS.has(kind)) return false;
    this.skipped++;
    return true;
  }

  /** How many events were recognised as echoes (for metrics and tests). */
  skippedEchoes(): number {
    return this.skipped;
  }
}

function trackerKey(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}
