/**
 * Lists the FlinkStateSnapshot resources of one namespace (v1beta1, the kind's only version), typed,
 * failures as KubeApiError. Used by the migration to adopt the Apache operator's savepoint records
 * (design/008-migration.md "FlinkStateSnapshot resources").
 *
 * Guarantees
 * - One LIST request per call (no watch, no cache): the migration reads what is stored now.
 * - The CRD not installed (the API server answers 404 for the resource) is `undefined`, not an
 *   error, so a caller can tell "none exist" (`[]`) from "the kind does not exist here".
 * Assumptions
 * - The caller may `list` flinkstatesnapshots in the namespace (the operator's ClusterRole / Role
 *   grant it; a 403 is thrown as a KubeApiError like any other failure).
 * Caveats
 * - The items are returned as the server sends them: nothing is validated here; readers check
 *   the fields they use.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { FLINK_GROUP } from '../api/flink-deployment.js';
import { FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION, type FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import { isNotFound, toKubeApiError } from './api-errors.js';

/** Reads the FlinkStateSnapshots of a namespace. */
export interface FlinkStateSnapshotLister {
  /** Every FlinkStateSnapshot in `namespace`; `undefined` when the FlinkStateSnapshot CRD is not installed. */
  listInNamespace(namespace: string): Promise<FlinkStateSnapshot[] | undefined>;
}

export class KubeFlinkStateSnapshotLister implements FlinkStateSnapshotLister {
  private readonly api: CustomObjectsApi;

  /** `api` defaults to a client of `kubeConfig`; the operator passes one whose requests are counted in its metrics. */
  constructor(kubeConfig: KubeConfig, api?: CustomObjectsApi) {
    this.api = api ?? kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async listInNamespace(namespace: string): Promise<FlinkStateSnapshot[] | undefined> {
    try {
      const list = (await this.api.listNamespacedCustomObject({
        group: FLINK_GROUP,
        version: FLINK_STATE_SNAPSHOT_VERSION,
        namespace,
        plural: FLINK_STATE_SNAPSHOT_PLURAL,
      })) as { items?: FlinkStateSnapshot[] };
      return list.items ?? [];
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }
}
