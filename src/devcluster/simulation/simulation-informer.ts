/**
 * A cluster-wide client-node informer (`ListWatch`) for the simulated controllers and kubelet,
 * made to keep running: client-node 1.4.0 stops an informer on any non-410 watch error or failed
 * list, so it is restarted here after `restartDelayMs` (doubling up to 30 s, reset by any event).
 * Relists happen only when client-node needs one (start, 410); there is no periodic resync.
 *
 * Guarantees: handlers see add/update/delete in the order client-node delivers them; a handler
 * that throws does not stop the informer. `start()` resolves after the first list was delivered.
 * Caveats: the cache lags the server; readers must tolerate stale objects (all simulated
 * controllers are level-based and requeue on conflicts).
 */
import { type KubeConfig, type KubernetesListObject, type KubernetesObject, ListWatch, Watch } from '@kubernetes/client-node';

export type InformerHandler<T> = (type: 'add' | 'update' | 'delete', object: T) => void;

export interface SimulationInformerOptions<T extends KubernetesObject> {
  readonly kubeConfig: KubeConfig;
  /** Watch path, e.g. `/api/v1/pods` or `/apis/apps/v1/deployments`. */
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly labelSelector?: string;
  readonly restartDelayMs?: number;
  readonly onError?: (error: unknown) => void;
}

export class SimulationInformer<T extends KubernetesObject> {
  private readonly listWatch: ListWatch<T>;
  private readonly handlers: InformerHandler<T>[] = [];
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private delayMs: number;

  constructor(private readonly options: SimulationInformerOptions<T>) {
    this.delayMs = options.restartDelayMs ?? 200;
    this.listWatch = new ListWatch<T>(options.path, new Watch(options.kubeConfig), options.list, false, options.labelSelector);
    this.listWatch.on('add', (o) => this.emit('add', o));
    this.listWatch.on('update', (o) => this.emit('update', o));
    this.listWatch.on('delete', (o) => this.emit('delete', o));
    this.listWatch.on('error', (e) => this.restartLater(e));
  }

  on(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.listWatch.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.listWatch.stop();
  }

  get(namespace: string, name: string): T | undefined {
    return this.listWatch.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.listWatch.list(namespace);
  }

  private emit(type: 'add' | 'update' | 'delete', object: T): void {
    this.delayMs = this.options.restartDelayMs ?? 200;
    for (const handler of this.handlers) {
      try {
        handler(type, object);
      } catch (error) {
        this.options.onError?.(error);
      }
    }
  }

  private restartLater(error: unknown): void {
    if (this.stopped) return;
    this.options.onError?.(error);
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, 30_000);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopped) this.listWatch.start().catch((e: unknown) => this.restartLater(e));
    }, delay);
  }
}
