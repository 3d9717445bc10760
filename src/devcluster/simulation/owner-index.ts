/**
 * An index from a controller owner's uid to the keys (`namespace/name`) of the objects it controls,
 * fed by informer events: how the simulated Deployment and ReplicaSet controllers find "my
 * ReplicaSets" / "my Pods" in O(owned) instead of scanning a namespace.
 *
 * Guarantees: reflects the informer's view (same staleness); an object whose controller owner
 * reference changes or disappears moves or leaves the index.
 */
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';

export function controllerOf(object: KubernetesObject): V1OwnerReference | undefined {
  return object.metadata?.ownerReferences?.find((r) => r.controller === true);
}

export function objectKey(object: KubernetesObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

export class OwnerIndex {
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly ownerOfKey = new Map<string, string>();

  /** Feed with every informer event of the owned kind. */
  observe(type: 'add' | 'update' | 'delete', object: KubernetesObject): void {
    const key = objectKey(object);
    const previous = this.ownerOfKey.get(key);
    const owner = type === 'delete' ? undefined : controllerOf(object)?.uid;
    if (previous === owner) return;
    if (previous !== undefined) {
      const set = this.byOwner.get(previous);
      set?.delete(key);
      if (set && set.size === 0) this.byOwner.delete(previous);
      this.ownerOfKey.delete(key);
    }
    if (owner !== undefined) {
      let set = this.byOwner.get(owner);
      if (!set) this.byOwner.set(owner, (set = new Set()));
      set.add(key);
      this.ownerOfKey.set(key, owner);
    }
  }

  /** Keys of the objects controlled by the owner with this uid. */
  owned(ownerUid: string | undefined): string[] {
    if (ownerUid === undefined) return [];
    return [...(this.byOwner.get(ownerUid) ?? [])];
  }
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
