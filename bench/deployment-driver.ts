/**
 * The benchmark's user: creates and patches FlinkDeployments and watches what the operator reports,
 * with the driver User-Agent so the request tally keeps its traffic apart.
 *
 * The watch keeps, per FlinkDeployment, its generation, status.observedGeneration, lifecycle state
 * and job state, and resolves waiters when a predicate holds; `spec write → observedGeneration`
 * latencies are timed from just before the PATCH is sent to the watch event that shows it.
 *
 * Caveats: latencies include the watch delivery to this process (as a user's `kubectl get -w`
 * would see it); a watch that ends is re-listed and re-watched.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { flinkDeployment } from '../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../src/api/flink-deployment.js';

const GROUP = 'flink.apache.org';
const VERSION = 'v1';
const PLURAL = 'flinkdeployments';

export interface ObservedDeployment {
  generation: number;
  observedGeneration: number;
  lifecycleState: string | undefined;
  jobState: string | undefined;
}

export const isStable = (d: ObservedDeployment): boolean => d.lifecycleState === 'STABLE' && d.jobState === 'RUNNING' && d.observedGeneration === d.generation;

export class DeploymentDriver {
  readonly custom: CustomObjectsApi;
  readonly observed = new Map<string, ObservedDeployment>();
  private readonly pendingLatency = new Map<string, { generation: number; startedAt: number }>();
  readonly latenciesMs: number[] = [];
  private waiters: Array<() => void> = [];
  private abort: AbortController | undefined;
  private stopped = false;

  constructor(
    private readonly kubeConfig: KubeConfig,
    readonly namespace = 'default',
  ) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async start(): Promise<void> {
    const list = (await this.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL })) as {
      items: FlinkDeploymentV1[];
      metadata: { resourceVersion: string };
    };
    for (const item of list.items) this.update(item);
    this.watchFrom(list.metadata.resourceVersion);
  }

  private watchFrom(resourceVersion: string): void {
    if (this.stopped) return;
    const watch = new Watch(this.kubeConfig);
    void watch
      .watch(
        `/apis/${GROUP}/${VERSION}/namespaces/${this.namespace}/${PLURAL}`,
        { resourceVersion, allowWatchBookmarks: true },
        (type: string, object: FlinkDeploymentV1) => {
          if (type === 'ADDED' || type === 'MODIFIED') this.update(object);
          else if (type === 'DELETED') this.observed.delete(object.metadata.name ?? '');
          if (object?.metadata?.resourceVersion) resourceVersion = object.metadata.resourceVersion;
        },
        () => {
          if (!this.stopped) setTimeout(() => void this.start().catch(() => this.watchFrom(resourceVersion)), 50);
        },
      )
      .then((controller) => {
        this.abort = controller;
      });
  }

  private update(object: FlinkDeploymentV1): void {
    const name = object.metadata.name ?? '';
    const observed: ObservedDeployment = {
      generation: object.metadata.generation ?? 0,
      observedGeneration: object.status?.observedGeneration ?? 0,
      lifecycleState: object.status?.lifecycleState,
      jobState: object.status?.jobStatus?.state,
    };
    this.observed.set(name, observed);
    const pending = this.pendingLatency.get(name);
    if (pending && observed.observedGeneration >= pending.generation) {
      this.latenciesMs.push(performance.now() - pending.startedAt);
      this.pendingLatency.delete(name);
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once `predicate` holds over what the watch has shown (rejects after `timeoutMs`). */
  async waitUntil(predicate: () => boolean, description: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description} (${this.summary()})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Counts by lifecycle/job state and a few deployments that are not STABLE (for timeout messages). */
  summary(): string {
    const counts = new Map<string, number>();
    const notStable: string[] = [];
    for (const [name, d] of this.observed) {
      const key = `${d.lifecycleState ?? '-'}/${d.jobState ?? '-'}${d.observedGeneration === d.generation ? '' : ` (gen ${d.observedGeneration}/${d.generation})`}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (!isStable(d) && notStable.length < 3) notStable.push(`${name}: ${JSON.stringify(d)}`);
    }
    return `${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}; e.g. ${notStable.join('; ') || 'none'}`;
  }

  allStable(names: readonly string[]): boolean {
    return names.every((n) => {
      const d = this.observed.get(n);
      return d !== undefined && isStable(d);
    });
  }

  /**
   * Creates FlinkDeployments `names` (savepoint upgrade mode, the builder's defaults), with the
   * labels `labelsOf` gives each (none by default), `concurrency` requests in flight.
   */
  async createAll(names: readonly string[], labelsOf: (name: string) => Record<string, string> = () => ({}), concurrency = 32): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, names.length) }, async () => {
        while (next < names.length) {
          const name = names[next++];
          await this.custom.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: this.namespace,
            plural: PLURAL,
            body: flinkDeployment(name).inNamespace(this.namespace).withLabels(labelsOf(name)).build(),
          });
        }
      }),
    );
  }

  /** A spec change (job parallelism 2 ↔ 3: a savepoint upgrade); times it until observedGeneration shows it. */
  async changeSpec(name: string, timed = true): Promise<void> {
    const current = this.observed.get(name);
    const parallelism = (current?.generation ?? 1) % 2 === 1 ? 3 : 2;
    const startedAt = performance.now();
    const written = (await this.custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name, body: { spec: { job: { parallelism } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as FlinkDeploymentV1;
    const generation = written.metadata.generation ?? 0;
    if (!timed) return;
    const seen = this.observed.get(name);
    if (seen && seen.observedGeneration >= generation) this.latenciesMs.push(performance.now() - startedAt);
    else this.pendingLatency.set(name, { generation, startedAt });
  }

  /** Whether a timed spec change of `name` still waits for its observedGeneration. */
  isPending(name: string): boolean {
    return this.pendingLatency.has(name);
  }

  /** Spec changes still waiting for their observedGeneration. */
  pendingChanges(): number {
    return this.pendingLatency.size;
  }

  /**
   * The number of state ConfigMaps (`*-operator-state`) in the namespace. The request log has no
   * name for a POST, so state ConfigMap creations are counted as the growth of this number.
   */
  async stateConfigMaps(): Promise<number> {
    const list = await this.kubeConfig.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: this.namespace });
    return list.items.filter((cm) => cm.metadata?.name?.endsWith('-operator-state')).length;
  }

  async delete(name: string): Promise<void> {
    await this.custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name });
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }
}

/**
 * The operator's warm-up before anything is measured (design/performance.md): `names` created in
 * namespace `warmup` (with the labels `labelsOf` gives them), all STABLE, then deleted and gone.
 */
export async function warmUpOperator(kubeConfig: KubeConfig, names: readonly string[], labelsOf?: (name: string) => Record<string, string>): Promise<void> {
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'warmup' } } });
  const warmup = new DeploymentDriver(kubeConfig, 'warmup');
  try {
    await warmup.start();
    await warmup.createAll(names, labelsOf);
    await warmup.waitUntil(() => warmup.allStable(names), 'warm-up deployments STABLE', 60_000);
    await Promise.all(names.map((n) => warmup.delete(n)));
    await warmup.waitUntil(() => warmup.observed.size === 0, 'warm-up deployments deleted', 60_000);
  } finally {
    warmup.stop();
  }
}

/** The names of the usual warm-up: 20 deployments. */
export const WARMUP_NAMES: readonly string[] = Array.from({ length: 20 }, (_, i) => `warmup-${i}`);
