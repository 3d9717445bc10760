/**
 * Event mapping for FlinkSessionJobs: which session jobs (and which session clusters) to
 * reconcile when a watched object changes. The FlinkDeployment mapping is event-mapping.ts.
 *
 * Mapping rules (keys are `namespace/name` of a FlinkSessionJob):
 * - a FlinkSessionJob maps to itself;
 * - a state ConfigMap whose controller ownerReference is a FlinkSessionJob maps to it;
 * - a FlinkDeployment, or an object owned by one (its JobManager Deployment, its Services), maps
 *   to every session job whose spec.deploymentName names it: a session cluster that comes up, goes
 *   away or is upgraded is seen by its jobs at once, not at their next periodic pass;
 * - anything else maps to nothing.
 * And the other way: a FlinkSessionJob that is deleted (or changes) maps to its session cluster's
 * FlinkDeployment key, so a deletion blocked on its jobs (block-on-session-jobs) goes on as soon as
 * the last one is gone.
 *
 * Guarantees: the index is updated from the session-job informer's own events, before the
 * controller sees them; a relist rebuilds it.
 * Assumptions: the caller has already dropped echoes of our own writes (one OwnWriteTracker check
 * per event, shared with event-mapping.ts: a check consumes the recorded write).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectEvent } from '../kube/object-reader.js';
import { FLINK_GROUP, snapshotJobReferenceOf } from './event-mapping.js';

export const FLINK_SESSION_JOB_KIND = 'FlinkSessionJob';

/** `spec.deploymentName` of a session job object, if it names one. */
export function sessionClusterNameOf(object: KubernetesObject): string | undefined {
  const name = (object as { spec?: { deploymentName?: unknown } }).spec?.deploymentName;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Session jobs by the session cluster they name: `namespace/deploymentName` → session job names. */
export class SessionJobsByCluster {
  private readonly byCluster = new Map<string, Set<string>>();
  private readonly clusterOf = new Map<string, string>();

  observe(event: ObjectEvent<KubernetesObject>): void {
    if (event.type === 'relisted') {
      this.byCluster.clear();
      this.clusterOf.clear();
      for (const object of event.objects) this.put(object);
      return;
    }
    if (event.type === 'deleted') this.remove(event.object);
    else this.put(event.object);
  }

  /** The session job keys of the cluster `namespace/name`. */
  jobsOf(clusterKey: string): string[] {
    const namespace = clusterKey.slice(0, clusterKey.indexOf('/'));
    return [...(this.byCluster.get(clusterKey) ?? [])].map((name) => `${namespace}/${name}`);
  }

  private put(object: KubernetesObject): void {
    this.remove(object);
    const namespace = object.metadata?.namespace;
    const name = object.metadata?.name;
    const cluster = sessionClusterNameOf(object);
    if (!namespace || !name || !cluster) return;
    const clusterKey = `${namespace}/${cluster}`;
    const jobs = this.byCluster.get(clusterKey) ?? new Set<string>();
    jobs.add(name);
    this.byCluster.set(clusterKey, jobs);
    this.clusterOf.set(`${namespace}/${name}`, clusterKey);
  }

  private remove(object: KubernetesObject): void {
    const key = `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
    const clusterKey = this.clusterOf.get(key);
    if (clusterKey === undefined) return;
    this.clusterOf.delete(key);
    const jobs = this.byCluster.get(clusterKey);
    jobs?.delete(object.metadata?.name ?? '');
    if (jobs?.size === 0) this.byCluster.delete(clusterKey);
  }
}

/**
 * The session job keys one informer event maps to (see the module comment). `clusterKeys` are the
 * FlinkDeployment keys event-mapping.ts already routed the event to (the object itself for a
 * FlinkDeployment, its owner for a Deployment or Service): their session jobs are reconciled too.
 */
export function routeSessionJobEvent(
  kind: string,
  event: ObjectEvent<KubernetesObject>,
  index: SessionJobsByCluster,
  clusterKeys: readonly string[],
): string[] {
  if (event.type === 'relisted') return [];
  const object = event.object;
  const namespace = object.metadata?.namespace;
  const name = object.metadata?.name;
  if (!namespace || !name) return [];
  if (kind === FLINK_SESSION_JOB_KIND) return [`${namespace}/${name}`];
  if (kind === 'FlinkStateSnapshot') {
    const reference = snapshotJobReferenceOf(object);
    return reference?.kind === FLINK_SESSION_JOB_KIND ? [`${namespace}/${reference.name}`] : [];
  }
  if (kind === 'ConfigMap') {
    const owner = (object.metadata?.ownerReferences ?? []).find(
      (ref) => ref.controller === true && ref.kind === FLINK_SESSION_JOB_KIND && ref.apiVersion.startsWith(`${FLINK_GROUP}/`),
    );
    return owner ? [`${namespace}/${owner.name}`] : [];
  }
  return clusterKeys.flatMap((cluster) => index.jobsOf(cluster));
}

/** The FlinkDeployment key a session job event maps to (its session cluster), for deletion blocking. */
export function sessionClusterKeysOf(kind: string, event: ObjectEvent<KubernetesObject>): string[] {
  if (kind !== FLINK_SESSION_JOB_KIND || event.type === 'relisted') return [];
  const namespace = event.object.metadata?.namespace;
  const cluster = sessionClusterNameOf(event.object);
  return namespace && cluster && event.type === 'deleted' ? [`${namespace}/${cluster}`] : [];
}
