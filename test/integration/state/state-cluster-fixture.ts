/**
 * Fixtures for the state layer's integration tests on the development cluster: a cluster with the
 * real FlinkDeployment CRD, FlinkDeployments created through the API (so they have a uid), the
 * real clients, and fault-injecting decorators that make a fraction of *writes* fail at the server
 * (the dev cluster's FaultInjector answers them 409 / 500 / 503 / connection reset before storage).
 */
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { Operation } from 'fast-json-patch';
import { buildFlinkDeploymentCrd } from '../../../src/api/crd-generator.js';
import { flinkDeployment } from '../../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../../../src/api/flink-deployment.js';
import type { DevCluster, FaultFailure, FaultMatch } from '../../../src/devcluster/dev-cluster.js';
import { KubeConfigMapClient, type ConfigMapClient } from '../../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient, type FlinkDeploymentClient } from '../../../src/kube/flink-deployment-client.js';
import { seededRandom } from '../../../src/devcluster/simulation/simulation-random.js';
export { seededRandom };

export async function installFlinkCrd(kc: KubeConfig): Promise<void> {
  await kc.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: buildFlinkDeploymentCrd() as unknown as V1CustomResourceDefinition });
}

export async function createNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
}

/** Creates a FlinkDeployment (v1) through the API and returns the server's object. */
export async function createFlinkDeployment(kc: KubeConfig, namespace: string, name: string): Promise<FlinkDeploymentV1> {
  const body = flinkDeployment(name).inNamespace(namespace).build();
  return (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'flink.apache.org',
    version: 'v1',
    namespace,
    plural: 'flinkdeployments',
    body,
  })) as FlinkDeploymentV1;
}

/** Conflicts and server errors: answered by the server, so its request log shows them as failures. */
export const CONFLICTS_AND_5XX: readonly FaultFailure[] = [{ code: 409 }, { code: 500 }, { code: 503 }];
/**
 * Dropped connections as well. Caveat: the dev cluster's request log records a reset request with
 * code 200 although it did not apply it, so counts of successful writes are not exact with these.
 */
export const WITH_RESETS: readonly FaultFailure[] = [...CONFLICTS_AND_5XX, 'reset'];

/** Arms a server-side failure for the next matching request with probability `rate`. */
export class WriteFaults {
  injected = 0;
  constructor(
    private readonly cluster: DevCluster,
    private readonly random: () => number,
    private readonly rate: number,
    private readonly failures: readonly FaultFailure[] = CONFLICTS_AND_5XX,
  ) {}
  maybeFail(match: FaultMatch): void {
    if (this.random() >= this.rate) return;
    const failure = this.failures[Math.floor(this.random() * this.failures.length)];
    this.cluster.faults.failNext(match, failure);
    this.injected++;
  }
}

export class FlakyConfigMapClient implements ConfigMapClient {
  constructor(
    private readonly inner: KubeConfigMapClient,
    private readonly faults: WriteFaults,
  ) {}
  get(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    return this.inner.get(namespace, name);
  }
  create(namespace: string, configMap: V1ConfigMap): Promise<V1ConfigMap> {
    this.faults.maybeFail({ verb: 'create', resource: 'configmaps', namespace });
    return this.inner.create(namespace, configMap);
  }
  replace(namespace: string, name: string, configMap: V1ConfigMap): Promise<V1ConfigMap> {
    this.faults.maybeFail({ verb: 'update', resource: 'configmaps', namespace, name });
    return this.inner.replace(namespace, name, configMap);
  }
  delete(namespace: string, name: string): Promise<void> {
    return this.inner.delete(namespace, name);
  }
}

export class FlakyFlinkDeploymentClient implements FlinkDeploymentClient {
  constructor(
    private readonly inner: KubeFlinkDeploymentClient,
    private readonly faults: WriteFaults,
  ) {}
  get(namespace: string, name: string) {
    return this.inner.get(namespace, name);
  }
  list(namespace?: string) {
    return this.inner.list(namespace);
  }
  patchStatus(namespace: string, name: string, ops: readonly Operation[]) {
    this.faults.maybeFail({ verb: 'patch', resource: 'flinkdeployments', subresource: 'status', namespace, name });
    return this.inner.patchStatus(namespace, name, ops);
  }
  update(deployment: FlinkDeploymentV1) {
    return this.inner.update(deployment);
  }
  getV1beta1(namespace: string, name: string) {
    return this.inner.getV1beta1(namespace, name);
  }
  replaceStatusV1beta1(deployment: FlinkDeploymentV1beta1) {
    return this.inner.replaceStatusV1beta1(deployment);
  }
}
