/**
 * An index of Pods by namespace + label pair, fed by the pods informer, so that resolving a
 * Service selector to its Pods (the service proxy, on every proxied request) costs O(pods matching
 * the rarest selector pair) instead of a scan of the namespace. With 2,000 Flink clusters in one
 * namespace, a scan would touch 4,000+ pods per request.
 *
 * Guarantees: `select` returns exactly the cached pods whose labels match every selector pair (an
 * empty selector matches nothing, as for a Service); same staleness as the informer.
 */
import type { V1Pod } from '@kubernetes/client-node';

function pairKey(namespace: string, key: string, value: string): string {
  return `${namespace}\u0000${key}=${value}`;
}

export class PodLabelIndex {
  private readonly byPair = new Map<string, Set<string>>();
  private readonly labelsOf = new Map<string, { namespace: string; labels: Record<string, string> }>();

  constructor(private readonly getPod: (namespace: string, name: string) => V1Pod | undefined) {}

  observe(type: 'add' | 'update' | 'delete', pod: V1Pod): void {
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const id = `${namespace}/${name}`;
    const previous = this.labelsOf.get(id);
    if (previous) {
      for (const [k, v] of Object.entries(previous.labels)) {
        const set = this.byPair.get(pairKey(namespace, k, v));
        set?.delete(name);
        if (set && set.size === 0) this.byPair.delete(pairKey(namespace, k, v));
      }
      this.labelsOf.delete(id);
    }
    if (type === 'delete') return;
    const labels = { ...(pod.metadata?.labels ?? {}) };
    this.labelsOf.set(id, { namespace, labels });
    for (const [k, v] of Object.entries(labels)) {
      const pk = pairKey(namespace, k, v);
      let set = this.byPair.get(pk);
      if (!set) this.byPair.set(pk, (set = new Set()));
      set.add(name);
    }
  }

  /** Pods in `namespace` matching every pair of `selector`. */
  select(namespace: string, selector: Record<string, string>): V1Pod[] {
    const pairs = Object.entries(selector);
    if (pairs.length === 0) return [];
    let smallest: Set<string> | undefined;
    for (const [k, v] of pairs) {
      const set = this.byPair.get(pairKey(namespace, k, v));
      if (!set) return [];
      if (!smallest || set.size < smallest.size) smallest = set;
    }
    const out: V1Pod[] = [];
    for (const name of smallest!) {
      const pod = this.getPod(namespace, name);
      if (pod && pairs.every(([k, v]) => pod.metadata?.labels?.[k] === v)) out.push(pod);
    }
    return out;
  }
}
