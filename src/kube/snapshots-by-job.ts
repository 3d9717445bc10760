/**
 * FlinkStateSnapshots indexed by the job they reference (`spec.jobReference`: kind, name, in the
 * snapshot's namespace), kept up to date from the informer's events. A job's reconciler asks for
 * its own snapshots on every pass; scanning the whole namespace each time would cost
 * O(snapshots in the namespace) per pass (O(n²) per interval for n deployments in one namespace).
 *
 * Guarantees
 * - `ofJob` returns exactly the cached snapshots whose jobReference names that job (a FlinkDeployment
 *   and a FlinkSessionJob of the same name are different jobs), in no particular order.
 * - A relist replaces the whole index; a snapshot whose jobReference changes moves with it.
 * Assumptions
 * - Events arrive in order from one informer (an update carries the object's current form).
 * Caveats
 * - As fresh as the informer: it lags the API server like the cache it is built from.
 */
import type { FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import type { ObjectEvent, ObservableObjectReader } from './object-reader.js';

function jobKey(namespace: string, kind: string, name: string): string {
  return `${namespace}/${kind}/${name}`;
}

function snapshotKey(snapshot: FlinkStateSnapshot): string {
  return `${snapshot.metadata.namespace ?? ''}/${snapshot.metadata.name ?? ''}`;
}

export class SnapshotsByJob {
  private readonly byJob = new Map<string, Map<string, FlinkStateSnapshot>>();
  private readonly jobOf = new Map<string, string>();

  /** Indexes what `reader` holds now and follows its events from here on. */
  constructor(reader: ObservableObjectReader<FlinkStateSnapshot>) {
    for (const snapshot of reader.list()) this.put(snapshot);
    reader.subscribe((event) => this.observe(event));
  }

  /** The cached snapshots of the job `kind` `name` in `namespace`. */
  ofJob(kind: string, namespace: string, name: string): FlinkStateSnapshot[] {
    return [...(this.byJob.get(jobKey(namespace, kind, name))?.values() ?? [])];
  }

  private observe(event: ObjectEvent<FlinkStateSnapshot>): void {
    if (event.type === 'relisted') {
      this.byJob.clear();
      this.jobOf.clear();
      for (const snapshot of event.objects) this.put(snapshot);
      return;
    }
    if (event.type === 'deleted') this.remove(event.object);
    else this.put(event.object);
  }

  private put(snapshot: FlinkStateSnapshot): void {
    this.remove(snapshot);
    const reference = snapshot.spec?.jobReference;
    if (!reference?.kind || !reference.name) return;
    const job = jobKey(snapshot.metadata.namespace ?? '', reference.kind, reference.name);
    const snapshots = this.byJob.get(job) ?? new Map<string, FlinkStateSnapshot>();
    snapshots.set(snapshotKey(snapshot), snapshot);
    this.byJob.set(job, snapshots);
    this.jobOf.set(snapshotKey(snapshot), job);
  }

  private remove(snapshot: FlinkStateSnapshot): void {
    const key = snapshotKey(snapshot);
    const job = this.jobOf.get(key);
    if (job === undefined) return;
    this.jobOf.delete(key);
    const snapshots = this.byJob.get(job);
    snapshots?.delete(key);
    if (snapshots?.size === 0) this.byJob.delete(job);
  }
}
