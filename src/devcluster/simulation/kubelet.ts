/**
 * The simulated kubelet (one virtual node for the whole cluster): runs every Pod it sees through
 * the kubelet lifecycle and writes the pod status a real kubelet writes.
 *
 *   created ─▶ Pending/ContainerCreating ─(podReadyDelayMs, ConfigMap volumes mounted)─▶ Running+Ready
 *
 * Failure modes, chosen through the pod spec (a container's image tag, see pod-status.ts):
 * - `crashloop`: the container starts, exits with code 1 after podReadyDelayMs, and is restarted
 *   with doubling back-off (CrashLoopBackOff, restartCount growing, lastState.terminated);
 * - `missing`: ErrImagePull, then ImagePullBackOff; the pod stays Pending;
 * - `notready`: Running, but never Ready (a failing readiness probe).
 * A ConfigMap volume (non-optional) whose ConfigMap does not exist keeps the pod in
 * ContainerCreating, retried every mountRetryMs, as the kubelet does (FailedMount).
 *
 * Containers are simulated processes: `hooks.podStarted` is called when the containers start
 * (with the mounted ConfigMaps' data) and may refuse (the process "crashes" at start → the pod
 * goes into CrashLoopBackOff); `hooks.podStopped` when they stop (crash, pod deleted or replaced).
 *
 * Scheduling: a pod without `spec.nodeName` is bound to the one node, {@link NODE_NAME}, through
 * `pods/NAME/binding` (the scheduler's call) before its containers start, so pod deletions are
 * graceful as on a real cluster (garbage-collector.ts): the pod shows Terminating until this
 * kubelet has stopped its containers (at once, or after `terminationDelayMs`; a Flink process logs
 * its SIGTERM shutdown) and deleted it with gracePeriodSeconds=0.
 *
 * Container logs: each container start opens a new log instance in the PodLogBook (the previous
 * one is kept for `kubectl logs --previous`), each stop closes it (ending `kubectl logs -f`).
 *
 * Guarantees: a pod's containers are started at most once per container start, and stopped before
 * a replacement pod with the same name starts; pods with a deletionTimestamp are stopped and then
 * removed with gracePeriodSeconds=0 (the kubelet's final delete).
 * Caveats: one node for all pods, no scheduling decisions; probes are not run; init containers are
 * ignored; pod status is written with merge patches (the kubelet owns pod status); the terminated
 * container state is not written before the final delete; terminationDelayMs does not follow the
 * pod's grace period.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { SimulationCoreApi } from './simulation-api-client.js';
import { KeyedWorkQueue } from './keyed-work-queue.js';
import { objectKey, splitKey } from './owner-index.js';
import type { SimulationInformer } from './simulation-informer.js';
import { type ContainerStage, type PodFailureMode, buildPodStatus, podFailureMode } from './pod-status.js';
import type { PodWarningEvents } from './pod-warning-events.js';
import type { PodLogBook } from './pod-log-book.js';

/** The simulation's one node (spec.nodeName of every pod it runs). */
export const NODE_NAME = 'devcluster-node';

export interface PodIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export type PodStartResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

export interface ContainerRuntimeHooks {
  /** Containers of `pod` start; `configMaps` holds the data of its mounted ConfigMaps by name. */
  podStarted(pod: V1Pod, configMaps: ReadonlyMap<string, Record<string, string>>): Promise<PodStartResult> | PodStartResult;
  /** Containers of the pod stopped (crash, deletion, replacement); `killed`: SIGTERM from the kubelet (pod deleted). */
  podStopped(pod: PodIdentity, reason?: 'killed' | 'crashed'): void;
}

export interface KubeletOptions {
  readonly podReadyDelayMs: number;
  /** First CrashLoopBackOff delay; doubles per restart up to crashLoopMaxBackoffMs. */
  readonly crashLoopBackoffMs: number;
  readonly crashLoopMaxBackoffMs: number;
  readonly mountRetryMs: number;
  /** Deleted pod → containers stopped (SIGTERM handled). Default 0: at once. */
  readonly terminationDelayMs?: number;
}

export interface KubeletDeps {
  readonly core: SimulationCoreApi;
  readonly pods: SimulationInformer<V1Pod>;
  readonly hooks: ContainerRuntimeHooks;
  readonly options: KubeletOptions;
  readonly onError?: (error: unknown, what: string) => void;
  readonly concurrency?: number;
  /** Warning Events (BackOff, Failed, FailedMount); none when absent. */
  readonly events?: PodWarningEvents;
  /** Container logs (kubectl logs); none when absent. */
  readonly logs?: PodLogBook;
}

interface PodRuntime {
  readonly key: string;
  readonly uid: string;
  readonly mode: PodFailureMode;
  readonly startTime: Date;
  readonly podIP: string;
  stage: ContainerStage;
  restartCount: number;
  /** True while the containers run (hooks.podStarted succeeded and no stop since). */
  processRunning: boolean;
  timer: NodeJS.Timeout | null;
  /** The stage whose status is still to be written (written by the next sync). */
  dirty: boolean;
  /** When the kubelet first saw the pod's deletionTimestamp. */
  terminatingSince: number | null;
  /** Containers stopped for the pod's deletion (only the final delete is left). */
  terminated: boolean;
}

const HOST_IP = '10.0.0.1';

function code(error: unknown): number | undefined {
  return (error as { code?: number }).code;
}

export class SimulatedKubelet {
  private readonly queue: KeyedWorkQueue;
  private readonly runtimes = new Map<string, PodRuntime>();
  private ipCounter = 2;
  private stopped = false;

  constructor(private readonly deps: KubeletDeps) {
    this.queue = new KeyedWorkQueue((key) => this.sync(key), {
      concurrency: deps.concurrency ?? 16,
      onError: (key, error) => {
        if (code(error) !== 404) deps.onError?.(error, `kubelet sync ${key}`);
      },
    });
    deps.pods.on((_type, pod) => this.queue.add(objectKey(pod)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.queue.stop();
    for (const rt of this.runtimes.values()) this.stopRuntime(rt);
    this.runtimes.clear();
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private allocateIp(): string {
    const n = this.ipCounter++;
    return `10.244.${(n >> 8) & 255}.${n & 255}`;
  }

  private podOf(rt: PodRuntime): V1Pod | undefined {
    const { namespace, name } = splitKey(rt.key);
    const pod = this.deps.pods.get(namespace, name);
    return pod?.metadata?.uid === rt.uid ? pod : undefined;
  }

  private warn(rt: PodRuntime, reason: string, message: (pod: V1Pod) => string): void {
    const pod = this.podOf(rt);
    if (pod && this.deps.events) this.deps.events.warn(pod, reason, message(pod), pod.spec?.containers?.[0]?.name);
  }

  private stopRuntime(rt: PodRuntime, reason?: 'killed' | 'crashed'): void {
    if (rt.timer) clearTimeout(rt.timer);
    rt.timer = null;
    if (rt.processRunning) {
      rt.processRunning = false;
      const { namespace, name } = splitKey(rt.key);
      this.deps.hooks.podStopped({ namespace, name, uid: rt.uid }, reason);
    }
    this.deps.logs?.containersStopped(rt.uid);
  }

  private startLogs(rt: PodRuntime, pod: V1Pod): void {
    for (const c of pod.spec?.containers ?? []) this.deps.logs?.containerStarted(rt.uid, c.name);
  }

  private schedule(rt: PodRuntime, ms: number, fn: () => Promise<void> | void): void {
    if (rt.timer) clearTimeout(rt.timer);
    rt.timer = setTimeout(() => {
      rt.timer = null;
      if (this.stopped || this.runtimes.get(rt.key) !== rt) return;
      Promise.resolve(fn()).catch((error: unknown) => this.deps.onError?.(error, `kubelet ${rt.key}`));
    }, ms);
  }

  private setStage(rt: PodRuntime, stage: ContainerStage): void {
    rt.stage = stage;
    rt.dirty = true;
    this.queue.add(rt.key);
  }

  private async sync(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.deps.pods.get(namespace, name);
    let rt = this.runtimes.get(key);
    if (rt && (!pod || pod.metadata?.uid !== rt.uid)) {
      this.stopRuntime(rt);
      this.runtimes.delete(key);
      this.deps.events?.forget(rt.uid);
      this.deps.logs?.forget(rt.uid);
      rt = undefined;
    }
    if (!pod) return;
    if (pod.metadata?.deletionTimestamp) {
      if (rt && !rt.terminated) {
        rt.terminatingSince ??= Date.now();
        const wait = rt.processRunning ? rt.terminatingSince + (this.deps.options.terminationDelayMs ?? 0) - Date.now() : 0;
        if (wait > 0) {
          this.schedule(rt, wait, () => this.queue.add(key));
          return;
        }
        this.stopRuntime(rt, 'killed');
        rt.terminated = true;
      }
      // the final delete (grace 0); a pod already at grace 0 waits for its finalizers only
      if (pod.metadata.deletionGracePeriodSeconds !== 0 || !pod.metadata.finalizers?.length) {
        try {
          await this.deps.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
        } catch (error) {
          if (code(error) !== 404) throw error;
        }
      }
      return;
    }
    if (!rt) {
      if (!pod.spec?.nodeName) await this.bind(namespace, name);
      const mode = podFailureMode(pod);
      rt = {
        key,
        uid: pod.metadata!.uid!,
        mode,
        startTime: new Date(),
        podIP: this.allocateIp(),
        stage: mode === 'missing' ? { kind: 'image-pull', backOff: false } : { kind: 'creating' },
        restartCount: 0,
        processRunning: false,
        timer: null,
        dirty: true,
        terminatingSince: null,
        terminated: false,
      };
      this.runtimes.set(key, rt);
      const runtime = rt;
      if (mode === 'missing') {
        const image = (p: V1Pod) => p.spec?.containers?.find((c) => c.image?.endsWith(':missing') || c.image?.includes(':missing@'))?.image ?? '';
        this.warn(
          rt,
          'Failed',
          (p) => `Failed to pull image "${image(p)}": rpc error: code = NotFound desc = failed to pull and unpack image "${image(p)}": not found`,
        );
        this.schedule(rt, this.deps.options.podReadyDelayMs, () => {
          this.warn(runtime, 'BackOff', (p) => `Back-off pulling image "${image(p)}"`);
          this.setStage(runtime, { kind: 'image-pull', backOff: true });
        });
      } else this.schedule(rt, this.deps.options.podReadyDelayMs, () => this.startContainers(runtime));
    }
    if (rt.dirty) {
      rt.dirty = false;
      const status = buildPodStatus(
        pod,
        {
          stage: rt.stage,
          restartCount: rt.restartCount,
          podIP: rt.stage.kind === 'creating' || rt.stage.kind === 'image-pull' ? null : rt.podIP,
          hostIP: HOST_IP,
          startTime: rt.startTime,
          containerIdSeed: rt.uid,
        },
        new Date(),
      );
      try {
        await this.deps.core.patchNamespacedPodStatus({ namespace, name, body: { status } });
      } catch (error) {
        if (code(error) === 404) return; // deleted meanwhile; the delete event cleans up
        rt.dirty = true;
        throw error;
      }
    }
  }

  /** The scheduler's part: binds the pod to this node (409: bound already, by someone else or a previous sync). */
  private async bind(namespace: string, name: string): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: NODE_NAME } };
    try {
      await this.deps.core.createNamespacedPodBinding({ namespace, name, body });
    } catch (error) {
      if (code(error) !== 409) throw error;
    }
  }

  private async mountedConfigMaps(pod: V1Pod): Promise<Map<string, Record<string, string>> | { missing: string; volume: string }> {
    const out = new Map<string, Record<string, string>>();
    for (const volume of pod.spec?.volumes ?? []) {
      const ref = volume.configMap;
      if (!ref?.name) continue;
      try {
        const cm = await this.deps.core.readNamespacedConfigMap({ namespace: pod.metadata!.namespace!, name: ref.name });
        out.set(ref.name, { ...(cm.data ?? {}) });
      } catch (error) {
        if (code(error) !== 404) throw error;
        if (!ref.optional) return { missing: ref.name, volume: volume.name };
      }
    }
    return out;
  }

  private async startContainers(rt: PodRuntime): Promise<void> {
    const { namespace, name } = splitKey(rt.key);
    const pod = this.deps.pods.get(namespace, name);
    if (!pod || pod.metadata?.uid !== rt.uid || pod.metadata?.deletionTimestamp) return;
    const mounts = await this.mountedConfigMaps(pod);
    if (this.runtimes.get(rt.key) !== rt) return;
    if ('missing' in mounts) {
      this.warn(rt, 'FailedMount', () => `MountVolume.SetUp failed for volume "${mounts.volume}" : configmap "${mounts.missing}" not found`);
      this.schedule(rt, this.deps.options.mountRetryMs, () => this.startContainers(rt));
      return;
    }
    const startedAt = new Date();
    this.startLogs(rt, pod);
    if (rt.mode === 'crashloop') {
      this.setStage(rt, { kind: 'running', ready: false, startedAt });
      this.schedule(rt, this.deps.options.podReadyDelayMs, () => this.crash(rt, startedAt));
      return;
    }
    const result = await this.deps.hooks.podStarted(pod, mounts);
    if (this.runtimes.get(rt.key) !== rt) {
      if (result.ok) this.deps.hooks.podStopped({ namespace, name, uid: rt.uid }, 'killed');
      return;
    }
    if (!result.ok) {
      this.deps.onError?.(new Error(result.message), `container start of pod ${rt.key}`);
      this.crash(rt, startedAt);
      return;
    }
    rt.processRunning = true;
    this.setStage(rt, { kind: 'running', ready: rt.mode !== 'notready', startedAt });
  }

  private crash(rt: PodRuntime, lastStartedAt: Date): void {
    this.stopRuntime(rt, 'crashed');
    const backoff = Math.min(this.deps.options.crashLoopBackoffMs * 2 ** rt.restartCount, this.deps.options.crashLoopMaxBackoffMs);
    rt.restartCount++;
    this.warn(
      rt,
      'BackOff',
      (p) => `Back-off restarting failed container ${p.spec?.containers?.[0]?.name} in pod ${p.metadata?.name}_${p.metadata?.namespace}(${p.metadata?.uid})`,
    );
    this.setStage(rt, { kind: 'crashed', backOffSeconds: Math.max(1, Math.round(backoff / 1000)), lastStartedAt, finishedAt: new Date() });
    this.schedule(rt, backoff, () => this.startContainers(rt));
  }
}
