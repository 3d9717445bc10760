/**
 * The simulated ReplicaSet controller: keeps `spec.replicas` Pods per ReplicaSet (named
 * `<replicaset>-<5 chars>`, built from the pod template, owner-referenced to the ReplicaSet) and
 * keeps the ReplicaSet's status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
 * observedGeneration).
 *
 * Guarantees: never creates more pods than asked because of a stale cache: creations and deletions
 * it issued are remembered ("expectations", as in client-go) until the informer shows them, or for
 * at most `expectationTimeoutMs`; excess pods are deleted not-ready first, then newest first.
 * Caveats: minReadySeconds counts as 0 (available = ready); pods are not adopted or released by
 * label (only ownerReferences count).
 */
import type { V1Pod, V1ReplicaSet, V1ReplicaSetStatus } from '@kubernetes/client-node';
import type { SimulationCoreApi, SimulationAppsApi } from './simulation-api-client.js';
import { KeyedWorkQueue } from './keyed-work-queue.js';
import { OwnerIndex, controllerOf, objectKey, splitKey } from './owner-index.js';
import type { SimulationInformer } from './simulation-informer.js';
import { type RandomSource, randomNameSuffix } from './simulation-random.js';
import { stableJson } from './deployment-status.js';
import { UnseenOwnWrites } from './unseen-own-writes.js';

export interface ReplicaSetControllerDeps {
  readonly apps: SimulationAppsApi;
  readonly core: SimulationCoreApi;
  readonly replicaSets: SimulationInformer<V1ReplicaSet>;
  readonly pods: SimulationInformer<V1Pod>;
  readonly random: RandomSource;
  readonly onError?: (error: unknown, what: string) => void;
  readonly concurrency?: number;
  readonly expectationTimeoutMs?: number;
}

interface Expectations {
  readonly creates: Map<string, number>;
  readonly deletes: Map<string, number>;
}

export function podIsReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function code(error: unknown): number | undefined {
  return (error as { code?: number }).code;
}

export class ReplicaSetController {
  private readonly queue: KeyedWorkQueue;
  private readonly podIndex = new OwnerIndex();
  private readonly expectations = new Map<string, Expectations>();
  private readonly expectationTimeoutMs: number;
  /** ReplicaSets whose status this controller wrote and whose cache does not show it yet. */
  private readonly ownStatusWrites = new UnseenOwnWrites();

  constructor(private readonly deps: ReplicaSetControllerDeps) {
    this.expectationTimeoutMs = deps.expectationTimeoutMs ?? 30_000;
    this.queue = new KeyedWorkQueue((key) => this.sync(key), {
      concurrency: deps.concurrency ?? 8,
      onError: (key, error) => {
        if (code(error) !== 409 && code(error) !== 404) deps.onError?.(error, `replicaset controller sync ${key}`);
      },
    });
    deps.replicaSets.on((type, rs) => {
      if (type === 'delete') {
        this.expectations.delete(objectKey(rs));
        this.ownStatusWrites.forget(objectKey(rs));
      } else this.queue.add(objectKey(rs));
    });
    deps.pods.on((type, pod) => {
      this.podIndex.observe(type, pod);
      const owner = controllerOf(pod);
      if (owner?.kind !== 'ReplicaSet') return;
      const rsKey = `${pod.metadata?.namespace}/${owner.name}`;
      const exp = this.expectations.get(rsKey);
      if (exp) {
        if (type !== 'delete') exp.creates.delete(pod.metadata!.name!);
        else exp.deletes.delete(pod.metadata!.name!);
      }
      this.queue.add(rsKey);
    });
  }

  async stop(): Promise<void> {
    await this.queue.stop();
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private ownedPods(rs: V1ReplicaSet): V1Pod[] {
    const out: V1Pod[] = [];
    for (const key of this.podIndex.owned(rs.metadata?.uid)) {
      const { namespace, name } = splitKey(key);
      const pod = this.deps.pods.get(namespace, name);
      if (pod) out.push(pod);
    }
    return out;
  }

  private expectationsFor(key: string): Expectations {
    let exp = this.expectations.get(key);
    if (!exp) this.expectations.set(key, (exp = { creates: new Map(), deletes: new Map() }));
    const cutoff = Date.now() - this.expectationTimeoutMs;
    for (const map of [exp.creates, exp.deletes]) for (const [name, at] of map) if (at < cutoff) map.delete(name);
    return exp;
  }

  private async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const rs = this.deps.replicaSets.get(namespace, name);
    if (!rs || rs.metadata?.deletionTimestamp) return;
    const exp = this.expectationsFor(key);
    const pods = this.ownedPods(rs).filter((p) => !p.metadata?.deletionTimestamp);
    const live = pods.filter((p) => !exp.deletes.has(p.metadata!.name!));
    const effective = live.length + exp.creates.size;
    const desired = rs.spec?.replicas ?? 1;

    if (effective < desired) {
      await Promise.all(Array.from({ length: desired - effective }, () => this.createPod(rs, exp)));
    } else if (effective > desired && exp.creates.size === 0) {
      const victims = [...live]
        .sort((a, b) => {
          const ra = podIsReady(a) ? 1 : 0;
          const rb = podIsReady(b) ? 1 : 0;
          if (ra !== rb) return ra - rb;
          return String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? ''));
        })
        .slice(0, effective - desired);
      await Promise.all(victims.map((p) => this.deletePod(p, exp)));
    }

    const ready = pods.filter(podIsReady).length;
    const status: V1ReplicaSetStatus = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: rs.metadata?.generation ?? 0,
    };
    const current = rs.status ?? { replicas: 0 };
    const comparable = (s: V1ReplicaSetStatus) =>
      stableJson({ r: s.replicas ?? 0, f: s.fullyLabeledReplicas ?? 0, rd: s.readyReplicas ?? 0, a: s.availableReplicas ?? 0, g: s.observedGeneration ?? 0 });
    // A status write while the cache still shows the version our previous status write replaced
    // would carry a stale resourceVersion (a sure 409); the watch event of that write requeues
    // this key and the next sync writes from the fresh object (see unseen-own-writes.ts).
    if (comparable(current) !== comparable(status) && !this.ownStatusWrites.cacheIsBehind(key, rs.metadata?.resourceVersion)) {
      await this.deps.apps.replaceNamespacedReplicaSetStatus({ namespace, name, body: { ...rs, status } });
      this.ownStatusWrites.noteWrite(key, [rs.metadata?.resourceVersion]);
    }
  }

  private async createPod(rs: V1ReplicaSet, exp: Expectations): Promise<void> {
    const template = rs.spec?.template;
    for (let attempt = 0; attempt < 3; attempt++) {
      const podName = `${rs.metadata!.name}-${randomNameSuffix(this.deps.random)}`;
      exp.creates.set(podName, Date.now());
      const body: V1Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: podName,
          namespace: rs.metadata!.namespace!,
          labels: { ...(template?.metadata?.labels ?? {}) },
          annotations: template?.metadata?.annotations ? { ...template.metadata.annotations } : undefined,
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata!.name!, uid: rs.metadata!.uid!, controller: true, blockOwnerDeletion: true },
          ],
        },
        spec: structuredClone(template?.spec ?? { containers: [] }),
      };
      try {
        await this.deps.core.createNamespacedPod({ namespace: rs.metadata!.namespace!, body });
        return;
      } catch (error) {
        exp.creates.delete(podName);
        if (code(error) !== 409) throw error; // a name collision: try another suffix
      }
    }
  }

  private async deletePod(pod: V1Pod, exp: Expectations): Promise<void> {
    const name = pod.metadata!.name!;
    exp.deletes.set(name, Date.now());
    try {
      await this.deps.core.deleteNamespacedPod({ namespace: pod.metadata!.namespace!, name });
    } catch (error) {
      exp.deletes.delete(name);
      if (code(error) !== 404) throw error;
    }
  }
}
