/**
 * Remembers, per object, the versions that a simulated controller's own last write superseded,
 * until its informer shows a newer one: "my last write has not reached my cache yet".
 *
 * Why: a controller's sync reads the object from its informer cache. Right after it wrote the
 * object (a status update, an annotation patch), the cache still holds the version the write was
 * based on; a sync that runs before the watch event arrives (another event for the same key came
 * in meanwhile, e.g. a pod turning Ready) sees the old status, computes a "changed" status and
 * sends it again: an update with a stale resourceVersion, which the API server answers with 409
 * Conflict, and the key is retried with back-off. Under load (2,000 FlinkDeployments created at
 * once) these redundant writes were a large part of the simulation's requests.
 *
 * Contract: after a successful write to `key` based on the cached version `basedOn` (and any
 * intermediate versions the same sync produced), `cacheIsBehind(key, cachedVersion)` answers true
 * while the cache still shows one of those versions; the first other version clears the entry.
 *
 * Guarantees: skipping a write while `cacheIsBehind` is true loses nothing: the watch event of the
 * write that created the entry will update the cache and requeue the key (every simulated
 * controller queues a key on each informer event of its object), and that sync computes and writes
 * from the fresh object.
 * Assumptions: resourceVersions differ between versions of an object (the dev API server's, like
 * etcd's, are strictly increasing); the informer eventually delivers every write (a relist after
 * a 410 delivers the newest version, which also clears the entry).
 * Caveats: the entry for a deleted object is dropped by `forget`; entries for objects whose watch
 * event never comes (informer stopped) stay until `forget`, harmlessly.
 */
export class UnseenOwnWrites {
  private readonly superseded = new Map<string, ReadonlySet<string>>();

  /** Records a successful write to `key` that replaced the versions `supersededVersions`. */
  noteWrite(key: string, supersededVersions: ReadonlyArray<string | undefined>): void {
    const versions = supersededVersions.filter((v): v is string => v !== undefined);
    if (versions.length > 0) this.superseded.set(key, new Set(versions));
  }

  /** Whether the cached version of `key` predates this controller's last write to it (and so any write now would be based on a stale object). */
  cacheIsBehind(key: string, cachedVersion: string | undefined): boolean {
    const versions = this.superseded.get(key);
    if (!versions) return false;
    if (cachedVersion !== undefined && versions.has(cachedVersion)) return true;
    this.superseded.delete(key);
    return false;
  }

  forget(key: string): void {
    this.superseded.delete(key);
  }

  /** Number of objects whose last write the cache has not shown yet (for tests). */
  get size(): number {
    return this.superseded.size;
  }
}
