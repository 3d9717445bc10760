/**
 * FlinkDeployment reads and writes under both served versions, typed, failures as KubeApiError.
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
import { isNotFound, toKubeApiError } from './api-errors.js';

export interface FlinkDeploymentClient {
  get(namespace: string, name: string): Promise<FlinkDeploymentV1 | undefined>;
  list(namespace?: string): Promise<FlinkDeploymentV1[]>;
  /** PATCH .../status with a JSON patch (include a `test` op to make it conditional). */
  patchStatus(namespace: string, name: string, ops: readonly Operation[]): Promise<FlinkDeploymentV1>;
  /** PUT of the main resource (spec, metadata), locked on metadata.resourceVersion. */
  update(deployment: FlinkDeploymentV1): Promise<FlinkDeploymentV1>;
  getV1beta1(namespace: string, name: string): Promise<FlinkDeploymentV1beta1 | undefined>;
  /** PUT .../status under v1beta1, locked on metadata.resourceVersion. */
  replaceStatusV1beta1(deployment: FlinkDeploymentV1beta1): Promise<FlinkDeploymentV1beta1>;
}

export class KubeFlinkDeploymentClient implements FlinkDeploymentClient {
  private readonly api: CustomObjectsApi;

  /** `api` defaults to a client of `kubeConfig`; the operator passes one whose requests are counted in its metrics. */
  constructor(
    kubeConfig: KubeConfig,
    private readonly fieldManager = 'flink-operator',
    api?: CustomObjectsApi,
  ) {
    this.api = api ?? kubeConfig.makeApiClient(CustomObjectsApi);
  }

  private params(version: string, namespace: string, name: string) {
    return { group: FLINK_GROUP, version, namespace, plural: FLINK_DEPLOYMENT_PLURAL, name };
  }

  async get(namespace: string, name: string): Promise<FlinkDeploymentV1 | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject(this.params(API_VERSION_V1, namespace, name))) as FlinkDeploymentV1;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async list(namespace?: string): Promise<FlinkDeploymentV1[]> {
    try {
      const list = (
        namespace
          ? await this.api.listNamespacedCustomObject({ group: FLINK_GROUP, version: API_VERSION_V1, namespace, plural: FLINK_DEPLOYMENT_PLURAL })
          : await this.api.listClusterCustomObject({ group: FLINK_GROUP, version: API_VERSION_V1, plural: FLINK_DEPLOYMENT_PLURAL })
      ) as { items?: FlinkDeploymentV1[] };
      return list.items ?? [];
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async patchStatus(namespace: string, name: string, ops: readonly Operation[]): Promise<FlinkDeploymentV1> {
    try {
      return (await this.api.patchNamespacedCustomObjectStatus({
        ...this.params(API_VERSION_V1, namespace, name),
        body: ops,
        fieldManager: this.fieldManager,
      })) as FlinkDeploymentV1;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async update(deployment: FlinkDeploymentV1): Promise<FlinkDeploymentV1> {
    const { namespace = '', name = '' } = deployment.metadata;
    try {
      return (await this.api.replaceNamespacedCustomObject({
        ...this.params(API_VERSION_V1, namespace, name),
        body: deployment,
        fieldManager: this.fieldManager,
      })) as FlinkDeploymentV1;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async getV1beta1(namespace: string, name: string): Promise<FlinkDeploymentV1beta1 | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject(this.params(API_VERSION_V1BETA1, namespace, name))) as FlinkDeploymentV1beta1;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async replaceStatusV1beta1(deployment: FlinkDeploymentV1beta1): Promise<FlinkDeploymentV1beta1> {
    const { namespace = '', name = '' } = deployment.metadata;
    try {
      return (await this.api.replaceNamespacedCustomObjectStatus({
        ...this.params(API_VERSION_V1BETA1, namespace, name),
        body: deployment,
        fieldManager: this.fieldManager,
      })) as FlinkDeploymentV1beta1;
    } catch (error) {
      throw toKubeApiError(error);
    }
  }
}
