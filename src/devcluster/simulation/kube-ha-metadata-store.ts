/**
 * Flink Kubernetes HA metadata kept in a real ConfigMap on the (dev) API server, as Flink's
 * KubernetesHaServices keep it: `<cluster-id>-cluster-config-map`, labels `app=<cluster-id>`,
 * `configmap-type=high-availability`, `type=flink-native-kubernetes`, no owner reference.
 * Formats and keys: see ha-metadata.ts.
 *
 * Guarantees: writes for one cluster are serialized (a promise chain per ConfigMap), so a
 * checkpoint pointer is never overwritten by an older one; `load` reads the server directly (not
 * a cache), as a starting JobManager does, so an HA ConfigMap the operator just deleted is seen
 * as gone.
 * Caveats: a write racing the operator's delete of the ConfigMap may re-create it (Flink has the
 * same race; the operator deletes HA data only after the JobManager is gone).
 */

import type { SimulationCoreApi } from './simulation-api-client.js';
import {
  type HaCheckpointPointer,
  type HaClusterRef,
  type HaJobRecord,
  type HaMetadataStore,
  checkpointCompletedData,
  haConfigMapLabels,
  haConfigMapName,
  haRecordFromData,
  jobSubmittedData,
  jobTerminatedData,
} from './ha-metadata.js';

function code(error: unknown): number | undefined {
  return (error as { code?: number }).code;
}

export class KubeHaMetadataStore implements HaMetadataStore {
  private readonly chains = new Map<string, Promise<void>>();
  /** The data as of our last read or write, per ConfigMap: writes skip a GET (we are its only writer while the JobManager runs). */
  private readonly known = new Map<string, Record<string, string>>();

  constructor(private readonly core: SimulationCoreApi) {}

  private key(cluster: HaClusterRef): string {
    return `${cluster.namespace}/${cluster.clusterId}`;
  }

  private async read(cluster: HaClusterRef): Promise<Record<string, string> | undefined> {
    try {
      const cm = await this.core.readNamespacedConfigMap({ namespace: cluster.namespace, name: haConfigMapName(cluster.clusterId) });
      this.known.set(this.key(cluster), cm.data ?? {});
      return cm.data ?? {};
    } catch (error) {
      if (code(error) === 404) {
        this.known.delete(this.key(cluster));
        return undefined;
      }
      throw error;
    }
  }

  async load(cluster: HaClusterRef): Promise<HaJobRecord | null> {
    return haRecordFromData(await this.read(cluster));
  }

  /** Runs `write` after every earlier write of the same cluster (whatever their outcome). */
  private serialize(cluster: HaClusterRef, write: () => Promise<void>): Promise<void> {
    const key = `${cluster.namespace}/${cluster.clusterId}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).catch(() => undefined).then(write);
    this.chains.set(key, next);
    void next
      .finally(() => {
        if (this.chains.get(key) === next) this.chains.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  private update(
    cluster: HaClusterRef,
    changes: (existing: Record<string, string> | undefined) => Record<string, string | null>,
    createIfMissing: boolean,
  ): Promise<void> {
    return this.serialize(cluster, async () => {
      const cached = this.known.get(this.key(cluster));
      const existing = cached ?? (await this.read(cluster));
      const delta = changes(existing);
      const name = haConfigMapName(cluster.clusterId);
      if (existing === undefined) {
        if (!createIfMissing) return;
        const data: Record<string, string> = {};
        for (const [k, v] of Object.entries(delta)) if (v !== null) data[k] = v;
        try {
          const created = await this.core.createNamespacedConfigMap({
            namespace: cluster.namespace,
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: cluster.namespace, labels: haConfigMapLabels(cluster.clusterId) }, data },
          });
          this.known.set(this.key(cluster), created.data ?? {});
          return;
        } catch (error) {
          if (code(error) !== 409) throw error; // created concurrently: fall through to a patch
        }
      }
      if (Object.keys(delta).length === 0) return;
      try {
        const patched = await this.core.patchNamespacedConfigMap({ namespace: cluster.namespace, name, body: { data: delta } });
        this.known.set(this.key(cluster), patched.data ?? {});
      } catch (error) {
        this.known.delete(this.key(cluster));
        if (code(error) !== 404 || cached === undefined) throw error;
        // deleted behind our back (the operator's HA cleanup): start over from the server's view
        const fresh = await this.read(cluster);
        if (fresh !== undefined || !createIfMissing) return;
        const data: Record<string, string> = {};
        for (const [k, v] of Object.entries(changes(undefined))) if (v !== null) data[k] = v;
        const created = await this.core.createNamespacedConfigMap({
          namespace: cluster.namespace,
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: cluster.namespace, labels: haConfigMapLabels(cluster.clusterId) }, data },
        });
        this.known.set(this.key(cluster), created.data ?? {});
      }
    });
  }

  jobSubmitted(cluster: HaClusterRef, job: Omit<HaJobRecord, 'latestCheckpoint'>): Promise<void> {
    return this.update(cluster, () => jobSubmittedData(job), true);
  }

  checkpointCompleted(cluster: HaClusterRef, _jobId: string, checkpoint: HaCheckpointPointer): Promise<void> {
    return this.update(cluster, (existing) => checkpointCompletedData(existing, checkpoint), true);
  }

  jobTerminated(cluster: HaClusterRef, jobId: string): Promise<void> {
    return this.update(cluster, (existing) => jobTerminatedData(existing, jobId), false);
  }
}
