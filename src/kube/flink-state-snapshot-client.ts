/**
 * FlinkStateSnapshot reads and writes (v1beta1, the kind's only version), typed, failures as
 * KubeApiError. The reader (`FlinkStateSnapshotLister`, the migration's) and the writer
 * (`FlinkStateSnapshotWriter`, the reconcilers') are separate interfaces; one class serves both.
 *
 * Guarantees
 * - One request per call (no watch, no cache); every write returns the server's object.
 * - The CRD not installed (the API server answers 404 for the resource) is `undefined` from
 *   `listInNamespace`, not an error, so a caller can tell "none exist" (`[]`) from "the kind does
 *   not exist here"; a write then fails with a 404 KubeApiError (`isNotFound`).
 * - `patchStatus` and `patchMetadata` are JSON merge patches (RFC 7386); `delete` can be made
 *   conditional on the uid (a precondition: a recreated object of the same name is left alone).
 * Assumptions
 * - The caller may list/get/create/patch/delete flinkstatesnapshots (and their status) in the
 *   namespace (the operator's ClusterRole / Role grant it; a 403 is thrown like any failure).
 * Caveats
 * - Objects are returned as the server sends them: nothing is validated here; readers check the
 *   fields they use (flink-state-snapshot-validation.ts).
 */
import { OPERATOR_FIELD_MANAGER } from './configmap-client.js';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { FLINK_GROUP } from '../api/flink-deployment.js';
import { FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION, type FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import type { FlinkStateSnapshotStatus } from '../api/flink-state-snapshot-status.js';
import { isNotFound, toKubeApiError } from './api-errors.js';

/** Reads the FlinkStateSnapshots of a namespace. */
export interface FlinkStateSnapshotLister {
  /** Every FlinkStateSnapshot in `namespace`; `undefined` when the FlinkStateSnapshot CRD is not installed. */
  listInNamespace(namespace: string): Promise<FlinkStateSnapshot[] | undefined>;
}

/** The metadata a merge patch may change. */
export interface SnapshotMetadataPatch {
  labels?: Record<string, string | null>;
  /** Replaces the whole list (a merge patch replaces arrays). */
  finalizers?: string[];
  /** Makes the patch conditional: a 409 when the object changed since. */
  resourceVersion?: string;
}

/** Writes FlinkStateSnapshots. */
export interface FlinkStateSnapshotWriter {
  get(namespace: string, name: string): Promise<FlinkStateSnapshot | undefined>;
  /** POST; an existing object of that name is a 409 (`isAlreadyExists`). */
  create(snapshot: FlinkStateSnapshot): Promise<FlinkStateSnapshot>;
  /** PATCH .../status (merge patch): the fields given replace theirs; `null` removes one. */
  patchStatus(
    namespace: string,
    name: string,
    status: { [K in keyof FlinkStateSnapshotStatus]?: FlinkStateSnapshotStatus[K] | null },
  ): Promise<FlinkStateSnapshot>;
  /** PATCH of metadata (merge patch). */
  patchMetadata(namespace: string, name: string, patch: SnapshotMetadataPatch): Promise<FlinkStateSnapshot>;
  /** DELETE; `uid` makes it conditional on the object being that one. A missing object is not an error. */
  delete(namespace: string, name: string, uid?: string): Promise<void>;
}

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export class KubeFlinkStateSnapshotClient implements FlinkStateSnapshotLister, FlinkStateSnapshotWriter {
  private readonly api: CustomObjectsApi;

  /** `api` defaults to a client of `kubeConfig`; the operator passes one whose requests are counted in its metrics. */
  constructor(
    kubeConfig: KubeConfig,
    api?: CustomObjectsApi,
    private readonly fieldManager = OPERATOR_FIELD_MANAGER,
  ) {
    this.api = api ?? kubeConfig.makeApiClient(CustomObjectsApi);
  }

  private params(namespace: string) {
    return { group: FLINK_GROUP, version: FLINK_STATE_SNAPSHOT_VERSION, namespace, plural: FLINK_STATE_SNAPSHOT_PLURAL };
  }

  async listInNamespace(namespace: string): Promise<FlinkStateSnapshot[] | undefined> {
    try {
      const list = (await this.api.listNamespacedCustomObject(this.params(namespace))) as { items?: FlinkStateSnapshot[] };
      return list.items ?? [];
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async get(namespace: string, name: string): Promise<FlinkStateSnapshot | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ ...this.params(namespace), name })) as FlinkStateSnapshot;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async create(snapshot: FlinkStateSnapshot): Promise<FlinkStateSnapshot> {
    try {
      return (await this.api.createNamespacedCustomObject({
        ...this.params(snapshot.metadata.namespace ?? ''),
        body: snapshot,
        fieldManager: this.fieldManager,
      })) as FlinkStateSnapshot;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async patchStatus(
    namespace: string,
    name: string,
    status: { [K in keyof FlinkStateSnapshotStatus]?: FlinkStateSnapshotStatus[K] | null },
  ): Promise<FlinkStateSnapshot> {
    try {
      return (await this.api.patchNamespacedCustomObjectStatus(
        { ...this.params(namespace), name, body: { status }, fieldManager: this.fieldManager },
        MERGE_PATCH,
      )) as FlinkStateSnapshot;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async patchMetadata(namespace: string, name: string, patch: SnapshotMetadataPatch): Promise<FlinkStateSnapshot> {
    try {
      return (await this.api.patchNamespacedCustomObject(
        { ...this.params(namespace), name, body: { metadata: patch }, fieldManager: this.fieldManager },
        MERGE_PATCH,
      )) as FlinkStateSnapshot;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async delete(namespace: string, name: string, uid?: string): Promise<void> {
    try {
      await this.api.deleteNamespacedCustomObject({ ...this.params(namespace), name, ...(uid ? { body: { preconditions: { uid } } } : {}) });
    } catch (error) {
      if (isNotFound(error)) return;
      throw toKubeApiError(error);
    }
  }
}
