import { setTimeout as sleep } from 'node:timers/promises';
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';

/**
 * Fixtures for the runtime's integration tests on the development cluster: a minimal
 * FlinkDeployment CRD (our own, so these tests do not depend on the full generated schema) and
 * object builders.
 */
export const MINIMAL_FLINK_CRD: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'flinkdeployments.flink.apache.org' },
  spec: {
    group: 'flink.apache.org',
    scope: 'Namespaced',
    names: { plural: 'flinkdeployments', singular: 'flinkdeployment', kind: 'FlinkDeployment', shortNames: ['flinkdep'] },
    versions: ['v1', 'v1beta1'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
            status: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
          },
        },
      },
    })),
  },
};

export async function installMinimalFlinkCrd(kc: KubeConfig): Promise<void> {
  await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: MINIMAL_FLINK_CRD });
}

export interface FlinkDeploymentFixture {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string; generation?: number; labels?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export function flinkDeployment(
  name: string,
  namespace = 'default',
  spec: Record<string, unknown> = { image: 'flink:2.2', job: { parallelism: 1 } },
): FlinkDeploymentFixture {
  return { apiVersion: 'flink.apache.org/v1', kind: 'FlinkDeployment', metadata: { name, namespace }, spec };
}

export function flinkApi(kc: KubeConfig) {
  const api = kc.makeApiClient(CustomObjectsApi);
  const base = { group: 'flink.apache.org', version: 'v1', plural: 'flinkdeployments' };
  return {
    create: async (fd: FlinkDeploymentFixture) =>
      (await api.createNamespacedCustomObject({ ...base, namespace: fd.metadata.namespace, body: fd })) as FlinkDeploymentFixture,
    get: async (namespace: string, name: string) => (await api.getNamespacedCustomObject({ ...base, namespace, name })) as FlinkDeploymentFixture,
    replace: async (fd: FlinkDeploymentFixture) =>
      (await api.replaceNamespacedCustomObject({ ...base, namespace: fd.metadata.namespace, name: fd.metadata.name, body: fd })) as FlinkDeploymentFixture,
    replaceStatus: async (fd: FlinkDeploymentFixture) =>
      (await api.replaceNamespacedCustomObjectStatus({
        ...base,
        namespace: fd.metadata.namespace,
        name: fd.metadata.name,
        body: fd,
      })) as FlinkDeploymentFixture,
    delete: async (namespace: string, name: string) => api.deleteNamespacedCustomObject({ ...base, namespace, name }),
  };
}

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}
