/**
 * Test fixture: the development cluster with the FlinkDeployment and FlinkSessionJob CRDs from
 * crds/, and helpers to put FlinkDeployments and FlinkSessionJobs there exactly as the Apache
 * operator left them (spec via POST, then the legacy status via a v1beta1 PUT .../status, as its
 * status writes do); when asked, also the FlinkStateSnapshot CRD, with helpers for its resources.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { FlinkDeploymentV1, FlinkDeploymentV1beta1 } from '../../src/api/flink-deployment.js';
import type { FlinkDeploymentStatusV1beta1 } from '../../src/api/flink-deployment-status.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1, type FlinkSessionJobV1beta1 } from '../../src/api/flink-session-job.js';
import { FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION, type FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';
import { startDevCluster, type DevCluster } from '../../src/devcluster/dev-cluster.js';
import { KubeConfigMapClient } from '../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient, KubeFlinkSessionJobClient } from '../../src/kube/flink-deployment-client.js';

export const CRD_FILE = fileURLToPath(new URL('../../crds/flinkdeployments.flink.apache.org.yaml', import.meta.url));
const GROUP = 'flink.apache.org';
const PLURAL = 'flinkdeployments';

export const SESSION_JOB_CRD_FILE = fileURLToPath(new URL('../../crds/flinksessionjobs.flink.apache.org.yaml', import.meta.url));
export const STATE_SNAPSHOT_CRD_FILE = fileURLToPath(new URL('../../crds/flinkstatesnapshots.flink.apache.org.yaml', import.meta.url));

export function readCrd(): V1CustomResourceDefinition {
  return parseYaml(readFileSync(CRD_FILE, 'utf8')) as V1CustomResourceDefinition;
}

export function readSessionJobCrd(): V1CustomResourceDefinition {
  return parseYaml(readFileSync(SESSION_JOB_CRD_FILE, 'utf8')) as V1CustomResourceDefinition;
}

export interface LegacyCluster {
  readonly cluster: DevCluster;
  readonly kubeConfig: KubeConfig;
  readonly custom: CustomObjectsApi;
  readonly configMaps: KubeConfigMapClient;
  readonly deployments: KubeFlinkDeploymentClient;
  /** POSTs the object (v1beta1; status dropped by the server) then PUTs `status` through v1beta1/status. */
  createLegacy(object: FlinkDeploymentV1beta1, status?: FlinkDeploymentStatusV1beta1 | Record<string, unknown>): Promise<FlinkDeploymentV1beta1>;
  getV1beta1(name: string, namespace?: string): Promise<FlinkDeploymentV1beta1>;
  getV1(name: string, namespace?: string): Promise<FlinkDeploymentV1>;
  readonly sessionJobs: KubeFlinkSessionJobClient;
  /** createLegacy for a FlinkSessionJob (the status in the object, as the variants carry it). */
  createLegacySessionJob(object: FlinkSessionJobV1beta1): Promise<FlinkSessionJobV1beta1>;
  getSessionJobV1beta1(name: string, namespace?: string): Promise<FlinkSessionJobV1beta1>;
  getSessionJobV1(name: string, namespace?: string): Promise<FlinkSessionJobV1>;
  /** POSTs a FlinkStateSnapshot then PUTs its status (status subresource), as the Apache operator's writes leave it. */
  createSnapshot(object: FlinkStateSnapshot): Promise<FlinkStateSnapshot>;
  listSnapshots(namespace?: string): Promise<FlinkStateSnapshot[]>;
  stop(): Promise<void>;
}

export async function installCrd(kubeConfig: KubeConfig): Promise<void> {
  await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: readCrd() });
}

export async function installSessionJobCrd(kubeConfig: KubeConfig): Promise<void> {
  await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: readSessionJobCrd() });
}

export async function installStateSnapshotCrd(kubeConfig: KubeConfig): Promise<void> {
  const crd = parseYaml(readFileSync(STATE_SNAPSHOT_CRD_FILE, 'utf8')) as V1CustomResourceDefinition;
  await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd });
}

/** `installSessionJobCrd` defaults to `installCrd` (both CRDs, or neither); the FlinkStateSnapshot CRD only when asked. */
export async function startLegacyCluster(
  options: { installCrd?: boolean; installSessionJobCrd?: boolean; installStateSnapshotCrd?: boolean } = {},
): Promise<LegacyCluster> {
  const cluster = await startDevCluster();
  const kubeConfig = cluster.kubeConfig();
  if (options.installCrd !== false) await installCrd(kubeConfig);
  if (options.installSessionJobCrd ?? options.installCrd !== false) await installSessionJobCrd(kubeConfig);
  if (options.installStateSnapshotCrd === true) await installStateSnapshotCrd(kubeConfig);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const params = (version: string, namespace: string) => ({ group: GROUP, version, namespace, plural: PLURAL });
  const sessionJobParams = (version: string, namespace: string) => ({ group: GROUP, version, namespace, plural: FLINK_SESSION_JOB_PLURAL });
  const lc: LegacyCluster = {
    cluster,
    kubeConfig,
    custom,
    configMaps: new KubeConfigMapClient(kubeConfig),
    deployments: new KubeFlinkDeploymentClient(kubeConfig),
    async createLegacy(object, status) {
      const namespace = object.metadata.namespace ?? 'default';
      const { status: inline, ...body } = structuredClone(object);
      const created = (await custom.createNamespacedCustomObject({ ...params('v1beta1', namespace), body })) as FlinkDeploymentV1beta1;
      const legacyStatus = status ?? inline;
      if (!legacyStatus) return created;
      return (await custom.replaceNamespacedCustomObjectStatus({
        ...params('v1beta1', namespace),
        name: created.metadata.name!,
        body: { ...created, status: legacyStatus },
      })) as FlinkDeploymentV1beta1;
    },
    async getV1beta1(name, namespace = 'default') {
      return (await custom.getNamespacedCustomObject({ ...params('v1beta1', namespace), name })) as FlinkDeploymentV1beta1;
    },
    async getV1(name, namespace = 'default') {
      return (await custom.getNamespacedCustomObject({ ...params('v1', namespace), name })) as FlinkDeploymentV1;
    },
    sessionJobs: new KubeFlinkSessionJobClient(kubeConfig),
    async createLegacySessionJob(object) {
      const namespace = object.metadata.namespace ?? 'default';
      const { status, ...body } = structuredClone(object);
      const created = (await custom.createNamespacedCustomObject({ ...sessionJobParams('v1beta1', namespace), body })) as FlinkSessionJobV1beta1;
      if (!status) return created;
      return (await custom.replaceNamespacedCustomObjectStatus({
        ...sessionJobParams('v1beta1', namespace),
        name: created.metadata.name!,
        body: { ...created, status },
      })) as FlinkSessionJobV1beta1;
    },
    async getSessionJobV1beta1(name, namespace = 'default') {
      return (await custom.getNamespacedCustomObject({ ...sessionJobParams('v1beta1', namespace), name })) as FlinkSessionJobV1beta1;
    },
    async getSessionJobV1(name, namespace = 'default') {
      return (await custom.getNamespacedCustomObject({ ...sessionJobParams('v1', namespace), name })) as FlinkSessionJobV1;
    },
    async createSnapshot(object) {
      const snapshotParams = { ...params(FLINK_STATE_SNAPSHOT_VERSION, object.metadata.namespace ?? 'default'), plural: FLINK_STATE_SNAPSHOT_PLURAL };
      const { status, ...body } = structuredClone(object);
      const created = (await custom.createNamespacedCustomObject({ ...snapshotParams, body })) as FlinkStateSnapshot;
      if (!status) return created;
      return (await custom.replaceNamespacedCustomObjectStatus({
        ...snapshotParams,
        name: created.metadata.name!,
        body: { ...created, status },
      })) as FlinkStateSnapshot;
    },
    async listSnapshots(namespace = 'default') {
      const snapshotParams = { ...params(FLINK_STATE_SNAPSHOT_VERSION, namespace), plural: FLINK_STATE_SNAPSHOT_PLURAL };
      return ((await custom.listNamespacedCustomObject(snapshotParams)) as { items: FlinkStateSnapshot[] }).items;
    },
    stop: () => cluster.stop(),
  };
  return lc;
}
