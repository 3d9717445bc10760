import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import type { ObjectEvent } from '../kube/object-reader.js';
import type { OwnWriteTracker } from './own-write-tracker.js';

/**
 * Event mapping: which FlinkDeployment must be reconciled when some watched object changes.
 *
 * Reconcilers are level-based (src/runtime/reconcile.ts), so an event only ever yields a key
 * `namespace/name` of a FlinkDeployment; its payload is dropped here.
 *
 * Mapping rules:
 * - a FlinkDeployment maps to itself;
 * - a FlinkStateSnapshot maps to the FlinkDeployment its spec.jobReference names (it has no
 *   ownerReference: a savepoint outlives its deployment);
 * - a state ConfigMap (`<name>-operator-state`, label `flink.apache.org/deployment=<name>`) maps to
 *   the label's value;
 * - any other object maps to its owner through an ownerReference of kind FlinkDeployment with an
 *   apiVersion in the group `flink.apache.org` (any version);
 * - failing that, objects labelled `type=flink-standalone-kubernetes` or
 *   `type=flink-native-kubernetes` map to their `app` label (Flink's native mode creates such
 *   objects without our ownerReference);
 * - anything else maps to nothing.
 *
 * Echo filtering (see own-write-tracker.ts): events that are the echo of our own write are
 * skipped; deletes and FlinkDeployment generation changes never are.
 */
export const FLINK_GROUP = 'flink.apache.org';
export const FLINK_DEPLOYMENT_KIND = 'FlinkDeployment';
export const STATE_CONFIGMAP_SUFFIX = '-operator-state';
export const STATE_CONFIGMAP_LABEL = 'flink.apache.org/deployment';
export const FLINK_TYPE_LABEL = 'type';
export const FLINK_APP_LABEL = 'app';
export const FLINK_RESOURCE_TYPES: readonly string[] = ['flink-standalone-kubernetes', 'flink-native-kubernetes'];

export type WatchedKind = 'FlinkDeployment' | 'FlinkSessionJob' | 'FlinkStateSnapshot' | 'ConfigMap' | 'Deployment' | 'Service';

/** The `spec.jobReference` of a FlinkStateSnapshot event's object: the job it is a snapshot of. */
export function snapshotJobReferenceOf(object: KubernetesObject): { kind: string; name: string } | undefined {
  const reference = (object as { spec?: { jobReference?: { kind?: unknown; name?: unknown } } }).spec?.jobReference;
  return typeof reference?.kind === 'string' && typeof reference.name === 'string' && reference.name
    ? { kind: reference.kind, name: reference.name }
    : undefined;
}

/** The FlinkDeployment keys (`namespace/name`) an object of `kind` maps to (0 or 1 of them). */
export function ownerKeysOf(kind: string, object: KubernetesObject): string[] {
  const namespace = object.metadata?.namespace;
  const name = object.metadata?.name;
  if (!namespace || !name) return [];
  if (kind === FLINK_DEPLOYMENT_KIND) return [`${namespace}/${name}`];
  if (kind === 'FlinkStateSnapshot') {
    const reference = snapshotJobReferenceOf(object);
    return reference?.kind === FLINK_DEPLOYMENT_KIND ? [`${namespace}/${reference.name}`] : [];
  }
  const labels = object.metadata?.labels ?? {};
  if (kind === 'ConfigMap' && name.endsWith(STATE_CONFIGMAP_SUFFIX)) {
    const owner = labels[STATE_CONFIGMAP_LABEL];
    if (owner) return [`${namespace}/${owner}`];
  }
  const owner = (object.metadata?.ownerReferences ?? []).find(isFlinkDeploymentOwner);
  if (owner?.name) return [`${namespace}/${owner.name}`];
  const type = labels[FLINK_TYPE_LABEL];
  const app = labels[FLINK_APP_LABEL];
  if (type && FLINK_RESOURCE_TYPES.includes(type) && app) return [`${namespace}/${app}`];
  return [];
}

function isFlinkDeploymentOwner(reference: V1OwnerReference): boolean {
  return reference.kind === FLINK_DEPLOYMENT_KIND && typeof reference.apiVersion === 'string' && reference.apiVersion.startsWith(`${FLINK_GROUP}/`);
}

export interface EventRoutingDecision {
  readonly keys: readonly string[];
  /** True when the event was our own write's echo and produced no keys. */
  readonly echo: boolean;
}

/**
 * Turns one informer event into the keys to enqueue.
 *
 * `relisted` yields no keys: the informer reports each added, changed and vanished object of a
 * relist as its own event, so only those are enqueued.
 */
export function routeEvent(kind: string, event: ObjectEvent<KubernetesObject>, tracker?: OwnWriteTracker): EventRoutingDecision {
  if (event.type === 'relisted') return { keys: [], echo: false };
  if (tracker && tracker.isOwnEcho(kind, event.type, event.object)) return { keys: [], echo: true };
  return { keys: ownerKeysOf(kind, event.object), echo: false };
}
