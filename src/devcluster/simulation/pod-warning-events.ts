/**
 * The Warning Events the simulated kubelet reports for a pod in trouble, so `kubectl describe pod`
 * shows why (as on a real node): `BackOff` "Back-off restarting failed container C in pod P_NS(UID)",
 * `Failed` "Failed to pull image …" / "Error: ImagePullBackOff", `FailedMount`
 * "MountVolume.SetUp failed for volume V : configmap "X" not found".
 *
 * Only warnings: the Normal events of a healthy start (Scheduled, Pulled, Created, Started) would
 * double the simulation's API traffic at benchmark scale for no test value.
 *
 * Guarantees: one Event object per (pod uid, reason, message); a repeat increments its `count` and
 * `lastTimestamp` (merge patch), as the kubelet's event correlator aggregates; failures to record an
 * event are reported to `onError` and never affect the pod.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { SimulationCoreApi } from './simulation-api-client.js';
import { type RandomSource, randomHex } from './simulation-random.js';

export const SIMULATED_NODE_NAME = 'devcluster-node';

interface Recorded {
  readonly name: string;
  count: number;
}

export class PodWarningEvents {
  private readonly recorded = new Map<string, Recorded>();

  constructor(
    private readonly core: SimulationCoreApi,
    private readonly random: RandomSource,
    private readonly onError?: (error: unknown, what: string) => void,
  ) {}

  /** Records (or re-counts) a Warning event about `pod`; fire-and-forget. */
  warn(pod: V1Pod, reason: string, message: string, container?: string): void {
    void this.record(pod, reason, message, container).catch((error: unknown) => this.onError?.(error, `event ${reason} for pod ${pod.metadata?.name}`));
  }

  /** Forgets a deleted pod's events (the API server's event TTL removes the objects themselves). */
  forget(podUid: string): void {
    for (const key of this.recorded.keys()) if (key.startsWith(`${podUid}/`)) this.recorded.delete(key);
  }

  private async record(pod: V1Pod, reason: string, message: string, container?: string): Promise<void> {
    const namespace = pod.metadata!.namespace!;
    const key = `${pod.metadata!.uid}/${reason}/${message}`;
    const now = new Date();
    const seen = this.recorded.get(key);
    if (seen) {
      seen.count++;
      await this.core.patchNamespacedEvent({ namespace, name: seen.name, body: { count: seen.count, lastTimestamp: now.toISOString() } });
      return;
    }
    const name = `${pod.metadata!.name}.${randomHex(this.random, 16)}`;
    this.recorded.set(key, { name, count: 1 });
    const body: CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        namespace,
        name: pod.metadata!.name!,
        uid: pod.metadata!.uid!,
        ...(container ? { fieldPath: `spec.containers{${container}}` } : {}),
      },
      reason,
      message,
      type: 'Warning',
      source: { component: 'kubelet', host: SIMULATED_NODE_NAME },
      reportingComponent: 'kubelet',
      reportingInstance: SIMULATED_NODE_NAME,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    await this.core.createNamespacedEvent({ namespace, body });
  }
}
