/**
 * Applies and deletes the Kubernetes resources of one Flink cluster (the side effects of
 * deploying), idempotently.
 *
 * Guarantees: `apply` leaves every resource equal to its rendering; a resource whose live copy
 * already carries the rendering's hash (annotation `flink-operator.io/rendered-hash`) is not
 * written, so applying twice writes once. `delete` is idempotent (404 counts as done).
 * Assumptions: only this operator writes these resources; the readers are informers over the
 * owned Deployments and Services (the Ingress has none: it is read only when it is to be written). A resource the informer does not hold is created at once (a
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
 *
 * Fencing (design/004): every write and delete is preceded by `fence.check` (the pass's leadership
 * term is current and its lease valid), every object written carries the writer's term in
 * LEADER_ANNOTATION (outside the rendered hash, so a new term rewrites nothing), and an object whose
 * stamp names a newer term than the fence's is never replaced or deleted (StaleLeaderError): a
 * paused leader that wakes up cannot overwrite what its successor deployed.
 */
import { createHash } from 'node:crypto';
import {
  PatchStrategy,
  setHeaderOptions,
  type AppsV1Api,
  type CoreV1Api,
  type KubernetesObject,
  type V1ConfigMap,
  type NetworkingV1Api,
  type V1Deployment,
  type V1Ingress,
  type V1Service,
} from '@kubernetes/client-node';
import type { ObjectReader } from '../kube/object-reader.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-errors.js';
import { assertNotStale, formatFencingToken, LEADER_ANNOTATION, storedFencingToken } from '../runtime/fencing-token.js';
import type { SideEffectFence } from '../runtime/side-effect-fence.js';
import type { DeletionPropagation } from '../api/flink-configuration.js';
import { LAST_SAVEPOINT_ANNOTATION } from '../flink/deployed-record.js';

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
  /** Checked before every write; its token is stamped on every object written. */
  fence: SideEffectFence;
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

function annotate<T extends KubernetesObject>(object: T, hash: string, fence: SideEffectFence): T {
  const copy = structuredClone(object);
  copy.metadata = {
    ...copy.metadata,
    annotations: { ...copy.metadata?.annotations, [RENDERED_HASH_ANNOTATION]: hash, [LEADER_ANNOTATION]: formatFencingToken(fence.token) },
  };
  return copy;
}

/** Before a write or delete: the pass may still act, and `live` (if any) was not written by a newer term. */
function guard(fence: SideEffectFence, what: string, live?: KubernetesObject): void {
  fence.check(what);
  if (live) assertNotStale(storedFencingToken(live.metadata), fence.token);
}

/** Pods restart when the Flink configuration changes: the template carries the config's hash. */
function withConfigHash(deployment: V1Deployment, configHash: string): V1Deployment {
  const copy = structuredClone(deployment);
  const template = copy.spec!.template;
  template.metadata = { ...template.metadata, annotations: { ...template.metadata?.annotations, [CONFIG_HASH_ANNOTATION]: configHash } };
  return copy;
}

export class FlinkClusterApplier {
  /** The Flink ConfigMaps this process wrote last, by namespace/name: the resourceVersion and rendered hash of that write, and its term. */
  private readonly writtenConfigMaps = new Map<string, { resourceVersion: string; hash: string; term: string }>();
  /** The text of the last term seen, so every entry of one term shares one string (heap per deployment). */
  private lastTerm: { token: SideEffectFence['token']; text: string } | undefined;

  private termOf(fence: SideEffectFence): string {
    if (this.lastTerm?.token !== fence.token) this.lastTerm = { token: fence.token, text: formatFencingToken(fence.token) };
    return this.lastTerm.text;
  }

  constructor(
    private readonly apps: AppsV1Api,
    private readonly core: CoreV1Api,
    private readonly deployments: ObjectReader<V1Deployment>,
    private readonly services: ObjectReader<V1Service>,
    /** For the deployment's Ingress (applyIngress, deleteIngress); absent: those throw. */
    private readonly networking?: NetworkingV1Api,
  ) {}

  /** Creates or updates every resource; the JobManager last, so it starts with its configuration in place. */
  async apply(objects: FlinkClusterObjects, options: ApplyOptions): Promise<ApplyResult> {
    const written: string[] = [];
    const fence = options.fence;
    const configHash = hashOf(objects.configMap.data);
    const native = objects.mode === 'native' || objects.taskManagerDeployment === undefined;
    if (native) {
      const waitingFor = await this.tearDownStaleNativeCluster(withConfigHash(objects.jobManagerDeployment, configHash), fence);
      if (waitingFor !== undefined) return { written, waitingFor };
    }
    const freshCluster = this.deployments.get(objects.jobManagerDeployment.metadata!.namespace!, objects.jobManagerDeployment.metadata!.name!) === undefined;
    if (await this.applyConfigMap(objects.configMap, freshCluster, fence)) written.push(`ConfigMap/${objects.configMap.metadata?.name}`);
    for (const service of [objects.internalService, objects.restService]) {
      if (await this.applyService(service, fence)) written.push(`Service/${service.metadata?.name}`);
    }
    if (objects.taskManagerDeployment && (await this.applyDeployment(withConfigHash(objects.taskManagerDeployment, configHash), fence))) {
      written.push(`Deployment/${objects.taskManagerDeployment.metadata?.name}`);
    }
    const jobManager = withConfigHash(objects.jobManagerDeployment, configHash);
    const beforeWrite = options.resetHaMetadata
      ? () => this.deleteHaMetadata(jobManager.metadata!.namespace!, objects.configMap.metadata!.labels?.app ?? jobManager.metadata!.name!, fence)
      : undefined;
    if (await this.applyDeployment(jobManager, fence, beforeWrite)) written.push(`Deployment/${jobManager.metadata?.name}`);
    return { written };
  }

  /**
   * Native mode: deletes a live JobManager Deployment whose rendering differs from `desired`
   * (its TaskManager pods go with it: they are owned by it), and reports what is still to go.
   * Undefined = nothing of a previous cluster is left (or the live one is already `desired`).
   */
  private async tearDownStaleNativeCluster(desired: V1Deployment, fence: SideEffectFence): Promise<string | undefined> {
    const namespace = desired.metadata!.namespace!;
    const name = desired.metadata!.name!;
    const live = this.deployments.get(namespace, name) ?? (await this.readOrUndefined(() => this.apps.readNamespacedDeployment({ namespace, name })));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hashOf(desired)) return undefined;
    if (live) {
      guard(fence, `delete the previous JobManager Deployment ${namespace}/${name}`, live);
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
    if (pods.items.length > 0)
      return `${pods.items.length} pod(s) of the previous JobManager to terminate (${pods.items
        .map((p) => p.metadata?.name)
        .sort()
        .join(', ')})`;
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
  async deleteHaMetadata(namespace: string, clusterId: string, fence: SideEffectFence): Promise<void> {
    const list = await this.core.listNamespacedConfigMap({ namespace, labelSelector: haConfigMapSelector(clusterId) });
    for (const cm of list.items) {
      fence.check(`delete the Flink HA ConfigMap ${namespace}/${cm.metadata?.name}`);
      try {
        await this.core.deleteNamespacedConfigMap({ namespace, name: cm.metadata!.name! });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }

  /**
   * Deletes the JobManager and TaskManager Deployments with `propagation`
   * (`kubernetes.operator.resource.deletion.propagation`). Returns the names still present in the
   * cache: with Foreground, a Deployment stays there (marked deleting) until its pods are gone.
   */
  async deleteDeployments(
    namespace: string,
    names: readonly string[],
    fence: SideEffectFence,
    propagation: DeletionPropagation = 'Foreground',
  ): Promise<string[]> {
    for (const name of names) {
      const live = this.deployments.get(namespace, name);
      // Already being deleted (Foreground: until its pods are gone): nothing more to ask.
      if (!live || live.metadata?.deletionTimestamp) continue;
      guard(fence, `delete Deployment ${namespace}/${name}`, live);
      try {
        const uid = live.metadata?.uid;
        await this.apps.deleteNamespacedDeployment({ namespace, name, body: { propagationPolicy: propagation, ...(uid ? { preconditions: { uid } } : {}) } });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    return names.filter((name) => this.deployments.get(namespace, name) !== undefined);
  }

  /** Sets the replicas of a Deployment (merge patch of spec.replicas); nothing when already equal in the cache. */
  async scaleDeployment(namespace: string, name: string, replicas: number, fence: SideEffectFence): Promise<void> {
    const live = this.deployments.get(namespace, name);
    if (live?.spec?.replicas === replicas) return;
    guard(fence, `scale Deployment ${namespace}/${name} to ${replicas}`, live);
    await this.apps.patchNamespacedDeployment(
      { namespace, name, body: { metadata: { annotations: { [LEADER_ANNOTATION]: formatFencingToken(fence.token) } }, spec: { replicas } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /**
   * Annotates the Flink ConfigMap with the savepoint a suspend stopped the job with
   * (deployed-record.ts): a locked read-modify-write (the RBAC grants update, not patch); nothing when
   * the ConfigMap is gone or already says so.
   */
  async recordLastSavepoint(namespace: string, configMapName: string, location: string, fence: SideEffectFence): Promise<void> {
    const live = await this.readOrUndefined(() => this.core.readNamespacedConfigMap({ namespace, name: configMapName }));
    if (!live || live.metadata?.annotations?.[LAST_SAVEPOINT_ANNOTATION] === location) return;
    guard(fence, `annotate ConfigMap ${namespace}/${configMapName} with the suspend savepoint`, live);
    const body = structuredClone(live);
    body.metadata = {
      ...body.metadata,
      annotations: { ...body.metadata?.annotations, [LAST_SAVEPOINT_ANNOTATION]: location, [LEADER_ANNOTATION]: formatFencingToken(fence.token) },
    };
    const written = await this.core.replaceNamespacedConfigMap({ namespace, name: configMapName, body });
    // the remembered write is not this content any more (its hash still is: the annotation is outside the rendering)
    const known = this.writtenConfigMaps.get(`${namespace}/${configMapName}`);
    if (known && written.metadata?.resourceVersion) known.resourceVersion = written.metadata.resourceVersion;
  }

  /** Deletes the Services and the Flink ConfigMap (used on deletion of the FlinkDeployment). */
  async deleteServicesAndConfig(namespace: string, serviceNames: readonly string[], configMapName: string, fence: SideEffectFence): Promise<void> {
    for (const name of serviceNames) {
      guard(fence, `delete Service ${namespace}/${name}`, this.services.get(namespace, name));
      try {
        await this.core.deleteNamespacedService({ namespace, name });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    fence.check(`delete ConfigMap ${namespace}/${configMapName}`);
    this.writtenConfigMaps.delete(`${namespace}/${configMapName}`);
    try {
      await this.core.deleteNamespacedConfigMap({ namespace, name: configMapName });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * `createFirst`: the cluster looks new (no JobManager Deployment cached): try the create before any GET.
   * A ConfigMap this process wrote last in the pass's leadership term (`writtenConfigMaps`) is not
   * read again: an unchanged rendering writes nothing, a changed one is a PUT locked on the
   * resourceVersion of that write. Anyone else's write since makes that PUT answer 409 (or 404), and
   * the ConfigMap is then read and guarded as if nothing had been remembered; a write of another
   * term (another instance, or this one before it lost the lease) is never trusted.
   * Caveat: within a term, a hand edit that keeps the rendered-hash annotation is not reverted (as
   * before: the hash is what is compared) and a hand deletion is not noticed until the rendering changes.
   */
  private async applyConfigMap(rendered: V1ConfigMap, createFirst: boolean, fence: SideEffectFence): Promise<boolean> {
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const key = `${namespace}/${name}`;
    const hash = hashOf(rendered);
    const desired = annotate(rendered, hash, fence);
    if (createFirst) {
      fence.check(`create ConfigMap ${namespace}/${name}`);
      const created = await this.createUnlessExists(() => this.core.createNamespacedConfigMap({ namespace, body: desired }));
      if (created) return this.rememberConfigMap(key, created, hash, fence);
    }
    const term = this.termOf(fence);
    const remembered = this.writtenConfigMaps.get(key);
    const known = remembered?.term === term ? remembered : undefined;
    if (known?.hash === hash) return false;
    if (known) {
      fence.check(`write ConfigMap ${namespace}/${name}`);
      try {
        const body = { ...desired, metadata: { ...desired.metadata, resourceVersion: known.resourceVersion } };
        return this.rememberConfigMap(key, await this.core.replaceNamespacedConfigMap({ namespace, name, body }), hash, fence);
      } catch (error) {
        this.writtenConfigMaps.delete(key);
        if (!isConflict(error) && !isNotFound(error)) throw error;
      }
    }
    const live = await this.readOrUndefined(() => this.core.readNamespacedConfigMap({ namespace, name }));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    guard(fence, `write ConfigMap ${namespace}/${name}`, live);
    if (!live) return this.rememberConfigMap(key, await this.core.createNamespacedConfigMap({ namespace, body: desired }), hash, fence);
    desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
    return this.rememberConfigMap(key, await this.core.replaceNamespacedConfigMap({ namespace, name, body: desired }), hash, fence);
  }

  /** Our write of a Flink ConfigMap landed: its resourceVersion and rendered hash (always true: something was written). */
  private rememberConfigMap(key: string, written: V1ConfigMap, hash: string, fence: SideEffectFence): true {
    const resourceVersion = written.metadata?.resourceVersion;
    if (resourceVersion) this.writtenConfigMaps.set(key, { resourceVersion, hash, term: this.termOf(fence) });
    else this.writtenConfigMaps.delete(key);
    return true;
  }

  private async applyService(rendered: V1Service, fence: SideEffectFence): Promise<boolean> {
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const hash = hashOf(rendered);
    let live = this.services.get(namespace, name);
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    const desired = annotate(rendered, hash, fence);
    if (!live) {
      fence.check(`create Service ${namespace}/${name}`);
      if (await this.createUnlessExists(() => this.core.createNamespacedService({ namespace, body: desired }))) return true;
      live = await this.core.readNamespacedService({ namespace, name });
      if (live.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    }
    guard(fence, `replace Service ${namespace}/${name}`, live);
    return this.replaceService(desired, live);
  }

  private async replaceService(desired: V1Service, live: V1Service): Promise<boolean> {
    const namespace = desired.metadata!.namespace!;
    const name = desired.metadata!.name!;
    if ((desired.spec?.clusterIP === 'None') !== (live.spec?.clusterIP === 'None')) {
      // clusterIP is immutable: a Service becomes headless (or stops being so) only by being recreated.
      const uid = live.metadata?.uid;
      await this.core.deleteNamespacedService({ namespace, name, ...(uid ? { body: { preconditions: { uid } } } : {}) });
      await this.core.createNamespacedService({ namespace, body: desired });
      return true;
    }
    desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
    // clusterIP is immutable once assigned: keep the live one.
    if (live.spec?.clusterIP && desired.spec) desired.spec.clusterIP = live.spec.clusterIP;
    await this.core.replaceNamespacedService({ namespace, name, body: desired });
    return true;
  }

  /**
   * Creates or replaces the deployment's Ingress (a GET first: there is no Ingress informer);
   * nothing when the live one already carries this rendering's hash. True when written.
   */
  async applyIngress(rendered: V1Ingress, fence: SideEffectFence): Promise<boolean> {
    const networking = this.networkingApi();
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const hash = hashOf(rendered);
    const live = await this.readOrUndefined(() => networking.readNamespacedIngress({ namespace, name }));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    guard(fence, `write Ingress ${namespace}/${name}`, live);
    const desired = annotate(rendered, hash, fence);
    if (!live) {
      await networking.createNamespacedIngress({ namespace, body: desired });
      return true;
    }
    desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
    await networking.replaceNamespacedIngress({ namespace, name, body: desired });
    return true;
  }

  /** Deletes the Ingress `name` if it exists and the FlinkDeployment `ownerUid` owns it (another one is left alone). True when deleted. */
  async deleteIngress(namespace: string, name: string, ownerUid: string, fence: SideEffectFence): Promise<boolean> {
    const networking = this.networkingApi();
    const live = await this.readOrUndefined(() => networking.readNamespacedIngress({ namespace, name }));
    if (!live?.metadata?.ownerReferences?.some((o) => o.uid === ownerUid)) return false;
    guard(fence, `delete Ingress ${namespace}/${name}`, live);
    try {
      const uid = live.metadata.uid;
      await networking.deleteNamespacedIngress({ namespace, name, ...(uid ? { body: { preconditions: { uid } } } : {}) });
    } catch (error) {
      if (!isNotFound(error) && !isConflict(error)) throw error;
    }
    return true;
  }

  private networkingApi(): NetworkingV1Api {
    if (!this.networking) throw new Error('FlinkClusterApplier was built without a NetworkingV1Api: it cannot write Ingresses');
    return this.networking;
  }

  private async applyDeployment(rendered: V1Deployment, fence: SideEffectFence, beforeWrite?: () => Promise<void>): Promise<boolean> {
    const namespace = rendered.metadata!.namespace!;
    const name = rendered.metadata!.name!;
    const hash = hashOf(rendered);
    let live = this.deployments.get(namespace, name);
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    const desired = annotate(rendered, hash, fence);
    if (!live && !beforeWrite) {
      // nothing has to happen before the write: create at once, read only when it already exists
      fence.check(`create Deployment ${namespace}/${name}`);
      if (await this.createUnlessExists(() => this.apps.createNamespacedDeployment({ namespace, body: desired }))) return true;
      live = await this.apps.readNamespacedDeployment({ namespace, name });
    }
    live ??= await this.readOrUndefined(() => this.apps.readNamespacedDeployment({ namespace, name }));
    if (live?.metadata?.annotations?.[RENDERED_HASH_ANNOTATION] === hash) return false;
    guard(fence, `write Deployment ${namespace}/${name}`, live);
    await beforeWrite?.();
    guard(fence, `write Deployment ${namespace}/${name}`, live);
    if (!live) {
      try {
        await this.apps.createNamespacedDeployment({ namespace, body: desired });
        return true;
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        const current = await this.apps.readNamespacedDeployment({ namespace, name });
        guard(fence, `replace Deployment ${namespace}/${name}`, current);
        desired.metadata!.resourceVersion = current.metadata?.resourceVersion;
      }
    } else {
      desired.metadata!.resourceVersion = live.metadata?.resourceVersion;
    }
    await this.apps.replaceNamespacedDeployment({ namespace, name, body: desired });
    return true;
  }

  /** True when `create` created the object; false when it already exists (409 AlreadyExists). */
  /** The created object; undefined when it exists already. */
  private async createUnlessExists<T>(create: () => Promise<T>): Promise<T | undefined> {
    try {
      return await create();
    } catch (error) {
      if (isAlreadyExists(error)) return undefined;
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
