/**
 * Applies and deletes the Kubernetes resources of one Flink cluster (the side effects of
 * deploying), idempotently.
 *
 * Guarantees: `apply` leaves every resource equal to its rendering; a resource whose live copy
 * already carries the rendering's hash (annotation `flink-operator.io/rendered-hash`) is not
 * written, so applying twice writes once. `delete` is idempotent (404 counts as done).
 * Assumptions: only this operator writes these resources; the readers are informers over the
 * owned Deployments and Services. A resource the informer does not hold is created at once (a
 * fresh cluster costs no GETs); when the create answers AlreadyExists (the informer lagged), the
 * live object is read and compared as if the informer had held it. The Flink ConfigMap has no
 * informer: it is created at once when the JobManager Deployment is not in the cache either (a
 * fresh cluster), else read first. The JobManager Deployment is read on a miss when HA metadata
 * is to be reset before it is written, so a lagging cache never resets the HA metadata of a
 * JobManager that already runs this rendering.
 * Caveats: an update uses the live resourceVersion (PUT); a 409 is thrown and the reconcile
 * retried, never forced.
 *
 * Native mode (no TaskManager Deployment in the objects; design/009-native-mode.md): the
 * JobManager creates its own TaskManager pods, and a new JobManager would adopt the pods of the
 * previous one (Flink recovers "previous attempt" workers by label). So a JobManager Deployment
 * whose rendering changed is never replaced in place: `apply` deletes it and answers `waitingFor`
 * until the old JobManager and TaskManager pods are gone (as the Apache operator's
 * NativeFlinkService deletes the cluster and waits for its shutdown), then creates the new one.
 * Guarantees: applying again after a crash at any point either waits for the same teardown or
 * finds the new JobManager already created (same hash): nothing is deleted twice or left behind.
 */
import { createHash } from 'node:crypto';
import { PatchStrategy, setHeaderOptions, type AppsV1Api, type CoreV1Api, type KubernetesObject, type V1ConfigMap, type V1Deployment, type V1Service } from '@kubernetes/client-node';
import type { ObjectReader } from '../kube/object-reader.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-errors.js';

export const RENDERED_HASH_ANNOTATION = 'flink-operator.io/rendered-hash';
export const CONFIG_HASH_ANNOTATION = 'flink-operator.io/config-hash';

export interface FlinkClusterObjects {
  /** Absent = standalone (the rendering of src/flink sets it). */
  mode?: 'standalone' | 'native';
  configMap: V1ConfigMap;
  jobManagerDeployment: V1Deployment;
  /** Standalone only. */
  taskManagerDeployment?: V1Deployment;
  restService: V1Service;
  internalService: V1Service;
}

/** Labels Flink puts on its Kubernetes HA ConfigMaps (`<cluster-id>-cluster-config-map`, leader ConfigMaps). */
export function haConfigMapSelector(clusterId: string): string {
  return `app=${clusterId},configmap-type=high-availability`;
}

export interface ApplyOptions {
  /**
   * Delete the cluster's Flink HA metadata before the JobManager changes, so a new JobManager
   * submits its new job instead of recovering the old one (every redeploy except last-state).
   * Done only when the JobManager Deployment is actually about to be written, so applying again
   * after a crash never deletes the HA metadata of the JobManager it already started.
   */
  resetHaMetadata: boolean;
}

export interface HaMetadataSummary {
  /** Job ids with a JobGraph in the HA store. */
  jobIds: string[];
  /** True when a completed checkpoint pointer is recorded. */
  hasCheckpoint: boolean;
}

export interface ApplyResult {
  /** `Kind/name` of every resource created or updated. */
  written: string[];
  /** Native mode: what the previous cluster's teardown still waits for; nothing was created yet. Apply again later. */
  waitingFor?: string;
}

/** Pods of a native cluster (JobManager and the TaskManagers it created). */
export function nativeClusterPodSelector(clusterId: string): string {
  return `app=${clusterId},type=flink-native-kubernetes`;
}

function hashOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

function annotate<T extends KubernetesObject>(object: T, hash: string): T {
  const copy = structuredClone(object);
  copy.metadata = { ...copy.metadata, annotations: { ...copy.metadata?.annotations, [RENDERED_HASH_ANNOTATION]: hash } };
  return copy;
}

/** Pods restart when the Flink configuration changes: the template carries the config's hash. */
function withConfigHash(deployment: V1Deployment, configHash: string): V1Deployment {
  const copy = structuredClone(deployment);
  const template = copy.spec!.template;
  template.metadata = { ...template.metadata, annotations: { ...template.metadata?.annotations, [CONFIG_HASH_ANNOTATION]: configHash } };
  return copy;
}

export class FlinkClusterApplier {
  constructor(
    private readonly apps: AppsV1Api,
    private readonly core: CoreV1Api,
    private readonly deployments: ObjectReader<V1Deployment>,
    private readonly services: ObjectReader<V1Service>,
  ) {}

  /** Creates or updates every resource; the JobManager last, so it starts with its configuration in place. */
  async apply(objects: FlinkClusterObjects, options: ApplyOptions = { resetHaMetadata: false }): Promise<ApplyResult> {
    const written: string[] = [];
    const configHash = hashOf(objects.configMap.data);
    const native = objects.mode === 'native' || objects.taskManagerDeployment === undefined;
    if (native) {
      const waitingFor = await this.tearDownStaleNativeCluster(withConfigHash(objects.jobManagerDeployment, configHash));
      if (waitingFor !== undefined) return { written, waitingFor };
    }
    const freshCluster = this.deployments.get(objects.jobManagerDeployment.metadata!.namespace!, objects.jobManagerDeployment.metadata!.name!) === undefined;
    if (await this.applyConfigMap(objects.configMap, freshCluster)) written.push(`ConfigMap/${objects.configMap.metadata?.name}`);
    for (const service of [objects.internalService, objects.restService]) {
      if (await this.applyService(service)) written.push(`Service/${service.metadata?.name}`);
    }
    if (objects.taskManagerDeployment && (await this.applyDeployment(withConfigHash(objects.taskManagerDeployment, configHash)))) {
      written.push(`Deployment/${objects.taskManagerDeployment.metadata?.name}`);
    }
    const jobManager = withConfigHash(objects.jobManagerDeployment, configHash);
    const beforeWrite = options.resetHaMetadata ? () => this.deleteHaMetadata(jobManager.metadata!.namespace!, objects.configMap.metadata!.labels?.app ?? jobManager.metadata!.name!) : undefined;
    if (await this.applyDeployment(jobManager, beforeWrite)) written.push(`Deployment/${jobManager.metadata?.name}`);
    return { written };
  }

  /**
   * Native mode: deletes a live JobManager Deployment whose rendering differs from `desired`
   * (its TaskManager pods go with it: they are owned by it), and reports what is still to go.
   * Undefined = nothing of a previous cluster is left (or the live one is already `desired`).
   */
  private async tearDownStaleNativeCluster(desired: V1Deployment): Promise<string | undefined> {
    const namespace = desired.metadata!.namespace!;
    const name = desired.metadata!.name!;
    const live = this.deployments.get(namespace, name) ?? (await this.readOrUndefined(() => this.apps.readNamespacedDeployment({ namespace, name })));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hashOf(desired)) return undefined;
    if (live) {
      try {
        // Only the exact object seen (uid precondition): a stale cache entry never deletes a newer Deployment of the same name.
        const uid = live.metadata?.uid;
        await this.apps.deleteNamespacedDeployment({ namespace, name, body: { propagationPolicy: 'Background', ...(uid ? { preconditions: { uid } } : {}) } });
      } catch (error) {
        if (!isNotFound(error) && !isConflict(error)) throw error;
      }
      return `the previous JobManager Deployment ${namespace}/${name} to be deleted`;
    }
    const pods = await this.core.listNamespacedPod({ namespace, labelSelector: nativeClusterPodSelector(name) });
    if (pods.items.length > 0) return `${pods.items.length} pod(s) of the previous JobManager to terminate (${pods.items.map((p) => p.metadata?.name).sort().join(', ')})`;
    return undefined;
  }

  /** What Flink's HA store holds for the cluster, or undefined when it has no HA ConfigMap. */
  async readHaMetadata(namespace: string, clusterId: string): Promise<HaMetadataSummary | undefined> {
    const list = await this.core.listNamespacedConfigMap({ namespace, labelSelector: haConfigMapSelector(clusterId) });
    if (list.items.length === 0) return undefined;
    const keys = list.items.flatMap((cm) => Object.keys(cm.data ?? {}));
    return {
      jobIds: keys.filter((k) => k.startsWith('jobGraph-')).map((k) => k.slice('jobGraph-'.length)),
      hasCheckpoint: keys.some((k) => k.startsWith('completedCheckpoint')),
    };
  }

  /** Deletes the cluster's Flink HA ConfigMaps (idempotent). */
  async deleteHaMetadata(namespace: string, clusterId: string): Promise<void> {
    const list = await this.core.listNamespacedConfigMap({ namespace, labelSelector: haConfigMapSelector(clusterId) });
    for (const cm of list.items) {
      try {
        await this.core.deleteNamespacedConfigMap({ namespace, name: cm.metadata!.name! });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  /** Deletes the JobManager and TaskManager Deployments. Returns the names still present in the cache. */
  async deleteDeployments(namespace: string, names: readonly string[]): Promise<string[]> {
    for (const name of names) {
      if (!this.deployments.get(namespace, name)) continue;
      try {
        await this.apps.deleteNamespacedDeployment({ namespace, name, propagationPolicy: 'Background' });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    return names.filter((name) => this.deployments.get(namespace, name) !== undefined);
  }

  /** Sets the replicas of a Deployment (merge patch of spec.replicas); nothing when already equal in the cache. */
  async scaleDeployment(namespace: string, name: string, replicas: number): Promise<void> {
    if (this.deployments.get(namespace, name)?.spec?.replicas === replicas) return;
    await this.apps.patchNamespacedDeployment(
      { namespace, name, body: { spec: { replicas } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** Deletes the Services and the Flink ConfigMap (used on deletion of the FlinkDeployment). */
  async deleteServicesAndConfig(namespace: string, serviceNames: readonly string[], configMapName: string): Promise<void> {
    for (const name of serviceNames) {
      try {
        await this.core.deleteNamespacedService({ namespace, name });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    try {
      await this.core.deleteNamespacedConfigMap({ namespace, name: configMapName });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** `createFirst`: the cluster looks new (no JobManager Deployment cached): try the create before any GET. */
  private async applyConfigMap(rendered: V1ConfigMap, createFirst: boolean): Promise<boolean> {
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const hash = hashOf(rendered);
    const desired = annotate(rendered, hash);
    if (createFirst && (await this.createUnlessExists(() => this.core.createNamespacedConfigMap({ namespace, body: desired })))) return true;
    const live = await this.readOrUndefined(() => this.core.readNamespacedConfigMap({ namespace, name }));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    if (!live) {
      await this.core.createNamespacedConfigMap({ namespace, body: desired });
    } else {
      desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
      await this.core.replaceNamespacedConfigMap({ namespace, name, body: desired });
    }
    return true;
  }

  private async applyService(rendered: V1Service): Promise<boolean> {
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const hash = hashOf(rendered);
    let live = this.services.get(namespace, name);
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    const desired = annotate(rendered, hash);
    if (!live) {
      if (await this.createUnlessExists(() => this.core.createNamespacedService({ namespace, body: desired }))) return true;
      live = await this.core.readNamespacedService({ namespace, name });
      if (live.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    }
    return this.replaceService(desired, live);
  }

  private async replaceService(desired: V1Service, live: V1Service): Promise<boolean> {
    desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
    // clusterIP is immutable once assigned: keep the live one.
    if (live.spec?.clusterIP && desired.spec) desired.spec.clusterIP = live.spec.clusterIP;
    await this.core.replaceNamespacedService({ namespace: desired.metadata!.namespace!, name: desired.metadata!.name!, body: desired });
    return true;
  }

  private async applyDeployment(rendered: V1Deployment, beforeWrite?: () => Promise<void>): Promise<boolean> {
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const hash = hashOf(rendered);
    let live = this.deployments.get(namespace, name);
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    const desired = annotate(rendered, hash);
    if (!live && !beforeWrite) {
      // nothing has to happen before the write: create at once, read only when it already exists
      if (await this.createUnlessExists(() => this.apps.createNamespacedDeployment({ namespace, body: desired }))) return true;
      live = await this.apps.readNamespacedDeployment({ namespace, name });
    }
    live ??= await this.readOrUndefined(() => this.apps.readNamespacedDeployment({ namespace, name }));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    await beforeWrite?.();
    if (!live) {
      try {
        await this.apps.createNamespacedDeployment({ namespace, body: desired });
        return true;
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        const current = await this.apps.readNamespacedDeployment({ namespace, name });
        desired.metadata!.resourceVersion = current.metadata?.resourceVersion;
      }
    } else {
      desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
    }
    await this.apps.replaceNamespacedDeployment({ namespace, name, body: desired });
    return true;
  }

  /** True when `create` created the object; false when it already exists (409 AlreadyExists). */
  private async createUnlessExists(create: () => Promise<unknown>): Promise<boolean> {
    try {
      await create();
      return true;
    } catch (error) {
      if (isAlreadyExists(error)) return false;
      throw error;
    }
  }

  private async readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await read();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}
