/**
 * FlinkDeployment (and FlinkSessionJob) reads and writes under both served versions, typed,
 * failures as KubeApiError. One client class for both kinds (they differ only in the plural and
 * their types): `KubeFlinkDeploymentClient`, `KubeFlinkSessionJobClient`.
 *
 * - v1: the operator's working version (`get`, `list`, `patchStatus` with a JSON patch, `update`).
 * - v1beta1: the legacy layout (`getV1beta1`, `replaceStatusV1beta1`), used by the legacy state store
 *   and the migration command.
 *
 * Guarantees: every write returns the server's object; `replaceStatusV1beta1` and `update` are PUTs
 * locked on the object's resourceVersion (a stale one is a 409); `patchStatus` sends exactly the ops
 * given (RFC 6902, `application/json-patch+json`, client-node's default PATCH type).
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { Operation } from 'fast-json-patch';
import {
  API_VERSION_V1,
  API_VERSION_V1BETA1,
  FLINK_DEPLOYMENT_PLURAL,
  FLINK_GROUP,
  type FlinkDeploymentV1,
  type FlinkDeploymentV1beta1,
} from '../api/flink-deployment.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1, type FlinkSessionJobV1beta1 } from '../api/flink-session-job.js';
import { isNotFound, toKubeApiError } from './api-errors.js';

/** A flink.apache.org object as the client needs it. */
interface FlinkObject {
  metadata: { namespace?: string; name?: string };
}

/** Reads and writes of one flink.apache.org kind, `V1` its v1 type and `V1beta1` its v1beta1 type. */
export interface FlinkResourceClient<V1 extends FlinkObject, V1beta1 extends FlinkObject> {
  get(namespace: string, name: string): Promise<V1 | undefined>;
  list(namespace?: string): Promise<V1[]>;
  /** PATCH .../status with a JSON patch (include a `test` op to make it conditional). */
  patchStatus(namespace: string, name: string, ops: readonly Operation[]): Promise<V1>;
  /** PUT of the main resource (spec, metadata), locked on metadata.resourceVersion. */
  update(deployment: V1): Promise<V1>;
  getV1beta1(namespace: string, name: string): Promise<V1beta1 | undefined>;
  /** PUT .../status under v1beta1, locked on metadata.resourceVersion. */
  replaceStatusV1beta1(deployment: V1beta1): Promise<V1beta1>;
}

export type FlinkDeploymentClient = FlinkResourceClient<FlinkDeploymentV1, FlinkDeploymentV1beta1>;
export type FlinkSessionJobClient = FlinkResourceClient<FlinkSessionJobV1, FlinkSessionJobV1beta1>;

class KubeFlinkResourceClient<V1 extends FlinkObject, V1beta1 extends FlinkObject> implements FlinkResourceClient<V1, V1beta1> {
  private readonly api: CustomObjectsApi;

  constructor(
    private readonly plural: string,
    kubeConfig: KubeConfig,
    private readonly fieldManager: string,
    api: CustomObjectsApi | undefined,
  ) {
    this.api = api ?? kubeConfig.makeApiClient(CustomObjectsApi);
  }

  private params(version: string, namespace: string, name: string) {
    return { group: FLINK_GROUP, version, namespace, plural: this.plural, name };
  }

  async get(namespace: string, name: string): Promise<V1 | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject(this.params(API_VERSION_V1, namespace, name))) as V1;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async list(namespace?: string): Promise<V1[]> {
    try {
      const list = (
        namespace
          ? await this.api.listNamespacedCustomObject({ group: FLINK_GROUP, version: API_VERSION_V1, namespace, plural: this.plural })
          : await this.api.listClusterCustomObject({ group: FLINK_GROUP, version: API_VERSION_V1, plural: this.plural })
      ) as { items?: V1[] };
      return list.items ?? [];
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async patchStatus(namespace: string, name: string, ops: readonly Operation[]): Promise<V1> {
    try {
      return (await this.api.patchNamespacedCustomObjectStatus({
        ...this.params(API_VERSION_V1, namespace, name),
        body: ops,
        fieldManager: this.fieldManager,
      })) as V1;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async update(deployment: V1): Promise<V1> {
    const { namespace = '', name = '' } = deployment.metadata;
    try {
      return (await this.api.replaceNamespacedCustomObject({
        ...this.params(API_VERSION_V1, namespace, name),
        body: deployment,
        fieldManager: this.fieldManager,
      })) as V1;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async getV1beta1(namespace: string, name: string): Promise<V1beta1 | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject(this.params(API_VERSION_V1BETA1, namespace, name))) as V1beta1;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async replaceStatusV1beta1(deployment: V1beta1): Promise<V1beta1> {
    const { namespace = '', name = '' } = deployment.metadata;
    try {
      return (await this.api.replaceNamespacedCustomObjectStatus({
        ...this.params(API_VERSION_V1BETA1, namespace, name),
        body: deployment,
        fieldManager: this.fieldManager,
      })) as V1beta1;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }
}

export class KubeFlinkDeploymentClient extends KubeFlinkResourceClient<FlinkDeploymentV1, FlinkDeploymentV1beta1> {
  /** `api` defaults to a client of `kubeConfig`; the operator passes one whose requests are counted in its metrics. */
  constructor(kubeConfig: KubeConfig, fieldManager = 'flink-operator', api?: CustomObjectsApi) {
    super(FLINK_DEPLOYMENT_PLURAL, kubeConfig, fieldManager, api);
  }
}

export class KubeFlinkSessionJobClient extends KubeFlinkResourceClient<FlinkSessionJobV1, FlinkSessionJobV1beta1> {
  /** As KubeFlinkDeploymentClient, for flinksessionjobs. */
  constructor(kubeConfig: KubeConfig, fieldManager = 'flink-operator', api?: CustomObjectsApi) {
    super(FLINK_SESSION_JOB_PLURAL, kubeConfig, fieldManager, api);
  }
}
