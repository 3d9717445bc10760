/**
 * The ConfigMap operations the state store needs, typed, with failures as KubeApiError.
 *
 * `ConfigMapClient` is the seam: `KubeConfigMapClient` talks to an API server through client-node's
 * CoreV1Api; tests may pass a scripted fake. Every method returns the server's object (its
 * resourceVersion is what the caller locks its next write on).
 *
 * Guarantees: `replace` sends the object's metadata.resourceVersion unchanged, so a stale write is a
 * 409 (optimistic lock); `get` answers undefined for 404 instead of throwing.
 */
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { isNotFound, toKubeApiError } from './api-errors.js';

export interface ConfigMapClient {
  /** The object, or undefined when it does not exist. */
  get(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  /** POST; 409 AlreadyExists when the name is taken. */
  create(namespace: string, configMap: V1ConfigMap): Promise<V1ConfigMap>;
  /** PUT, locked on `configMap.metadata.resourceVersion`. */
  replace(namespace: string, name: string, configMap: V1ConfigMap): Promise<V1ConfigMap>;
  /** DELETE; resolves when gone (404 counts as gone). */
  delete(namespace: string, name: string): Promise<void>;
}

/** The field manager of every write the operator makes (managedFields; how a foreign write is told apart, src/state/foreign-state-write.ts). */
export const OPERATOR_FIELD_MANAGER = 'flink-operator';

export class KubeConfigMapClient implements ConfigMapClient {
  private readonly api: CoreV1Api;

  /** `api` defaults to a client of `kubeConfig`; the operator passes one whose requests are counted in its metrics. */
  constructor(
    kubeConfig: KubeConfig,
    private readonly fieldManager = OPERATOR_FIELD_MANAGER,
    api?: CoreV1Api,
  ) {
    this.api = api ?? kubeConfig.makeApiClient(CoreV1Api);
  }

  async get(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await this.api.readNamespacedConfigMap({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw toKubeApiError(error);
    }
  }

  async create(namespace: string, configMap: V1ConfigMap): Promise<V1ConfigMap> {
    try {
      return await this.api.createNamespacedConfigMap({ namespace, body: configMap, fieldManager: this.fieldManager });
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async replace(namespace: string, name: string, configMap: V1ConfigMap): Promise<V1ConfigMap> {
    try {
      return await this.api.replaceNamespacedConfigMap({ namespace, name, body: configMap, fieldManager: this.fieldManager });
    } catch (error) {
      throw toKubeApiError(error);
    }
  }

  async delete(namespace: string, name: string): Promise<void> {
    try {
      await this.api.deleteNamespacedConfigMap({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) return;
      throw toKubeApiError(error);
    }
  }
}
