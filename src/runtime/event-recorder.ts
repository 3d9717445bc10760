import { PatchStrategy, setHeaderOptions, type CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { OperatorMetrics } from './metrics.js';

/**
 * Kubernetes Events (core/v1) about FlinkDeployments: what `kubectl describe` shows users.
 *
 * Reasons follow the Apache Flink operator's EventRecorder where they apply (`EventReason`).
 *
 * Guarantees:
 * - recording never throws and never blocks a reconcile: writes are queued and sent in order in
 *   the background (`flush()` waits for them);
 * - repeats are aggregated like client-go's EventCorrelator: the same object + type + reason +
 *   message within `aggregationWindowMs` bumps `count` and `lastTimestamp` of the existing Event
 *   (merge patch) instead of creating a new one;
 * - rate limited per involved object with a token bucket (client-go's spam filter: burst 25,
 *   one token per 5 minutes by default); excess events are dropped and counted
 *   (`flink_operator_events_total{outcome="dropped"}`).
 * Caveats: aggregation state is in memory (a restart creates a fresh Event for the next repeat);
 * an Event write failure is logged and counted, not retried. The aggregation key is remembered as
 * a SHA-1 digest of object + type + reason + message (28 characters instead of up to a KiB of
 * message per remembered Event); the token bucket is keyed by the object's uid when it has one.
 */
export const EventReason = {
  SpecChanged: 'SpecChanged',
  Submit: 'Submit',
  Suspended: 'Suspended',
  Rollback: 'Rollback',
  JobStatusChanged: 'JobStatusChanged',
  SavepointError: 'SavepointError',
  CheckpointError: 'CheckpointError',
  Cleanup: 'Cleanup',
  CleanupFailed: 'CleanupFailed',
  Missing: 'Missing',
  ValidationError: 'ValidationError',
  RecoverDeployment: 'RecoverDeployment',
  RestartUnhealthyJob: 'RestartUnhealthyJob',
  UpgradeFailed: 'UpgradeFailed',
  Scaling: 'Scaling',
  UnsupportedFlinkVersion: 'UnsupportedFlinkVersion',
  SnapshotError: 'SnapshotError',
  SnapshotAbandoned: 'SnapshotAbandoned',
  JobException: 'JobException',
  Error: 'Error',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason] | (string & {});
export type EventType = 'Normal' | 'Warning';

/** The object an Event is about. */
export interface EventSubject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string; readonly resourceVersion?: string };
}

export interface EventRecorder {
  normal(subject: EventSubject, reason: EventReason, message: string): void;
  warning(subject: EventSubject, reason: EventReason, message: string): void;
  /** Resolves when every event recorded so far has been written (or failed). */
  flush(): Promise<void>;
}

export interface KubernetesEventRecorderOptions {
  readonly api: CoreV1Api;
  readonly component?: string;
  /** reportingInstance / source.host, e.g. the operator identity. */
  readonly instance: string;
  readonly burst?: number;
  readonly refillIntervalMs?: number;
  readonly aggregationWindowMs?: number;
  readonly logger?: Logger;
  readonly metrics?: OperatorMetrics;
  readonly now?: () => number;
}

const MAX_MESSAGE = 1024;
const MAX_TRACKED = 4096;

interface Aggregate {
  name: string;
  namespace: string;
  count: number;
  lastSeen: number;
}

export class KubernetesEventRecorder implements EventRecorder {
  private chain: Promise<void> = Promise.resolve();
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly buckets = new Map<string, { tokens: number; updated: number }>();
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private sequence = 0;

  constructor(private readonly options: KubernetesEventRecorderOptions) {
    this.burst = options.burst ?? 25;
    this.refillMs = options.refillIntervalMs ?? 300_000;
    this.windowMs = options.aggregationWindowMs ?? 600_000;
    this.now = options.now ?? Date.now;
  }

  normal(subject: EventSubject, reason: EventReason, message: string): void {
    this.record(subject, 'Normal', reason, message);
  }

  warning(subject: EventSubject, reason: EventReason, message: string): void {
    this.record(subject, 'Warning', reason, message);
  }

  flush(): Promise<void> {
    return this.chain;
  }

  private record(subject: EventSubject, type: EventType, reason: string, rawMessage: string): void {
    const namespace = subject.metadata?.namespace;
    const name = subject.metadata?.name;
    if (!namespace || !name) return;
    const message = rawMessage.length > MAX_MESSAGE ? `${rawMessage.slice(0, MAX_MESSAGE - 3)}...` : rawMessage;
    const uid = subject.metadata?.uid;
    // a uid names one object of one kind; without one, kind/namespace/name does
    const objectKey = uid ? uid : `${subject.kind}/${namespace}/${name}/`;
    if (!this.takeToken(objectKey)) {
      this.options.metrics?.events.inc({ type, reason, outcome: 'dropped' });
      return;
    }
    const key = aggregationKey(`${subject.kind}/${namespace}/${name}/${uid ?? ''}\u0000${type}\u0000${reason}\u0000${message}`);
    const now = this.now();
    const existing = this.aggregates.get(key);
    if (existing && now - existing.lastSeen <= this.windowMs) {
      existing.count++;
      existing.lastSeen = now;
      const count = existing.count;
      this.enqueue(async () => {
        try {
          await this.options.api.patchNamespacedEvent(
            { name: existing.name, namespace: existing.namespace, body: { count, lastTimestamp: new Date(now) } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
          this.options.metrics?.events.inc({ type, reason, outcome: 'aggregated' });
        } catch (error) {
          if ((error as { code?: number }).code === 404) {
            // the Event expired or was deleted: start a new one
            const fresh = this.newAggregate(key, subject.metadata!.namespace!, subject.metadata!.name!, now);
            await this.create(key, fresh.name, subject, type, reason, message, now);
          } else this.fail(error, type, reason);
        }
      });
      return;
    }
    // remembered at once (not after the write) so repeats recorded meanwhile aggregate into it
    const aggregate = this.newAggregate(key, namespace, name, now);
    this.enqueue(() => this.create(key, aggregate.name, subject, type, reason, message, now));
  }

  private newAggregate(key: string, namespace: string, subjectName: string, now: number): Aggregate {
    const name = `${subjectName}.${(BigInt(now) * 1_000_000n + BigInt(this.sequence++ % 1_000_000)).toString(16)}`;
    const aggregate = { name, namespace, count: 1, lastSeen: now };
    this.aggregates.delete(key);
    this.aggregates.set(key, aggregate);
    if (this.aggregates.size > MAX_TRACKED) this.aggregates.delete(this.aggregates.keys().next().value!);
    return aggregate;
  }

  private async create(key: string, name: string, subject: EventSubject, type: EventType, reason: string, message: string, now: number): Promise<void> {
    const namespace = subject.metadata!.namespace!;
    const subjectName = subject.metadata!.name!;
    const component = this.options.component ?? 'flink-operator';
    const body: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: subject.apiVersion,
        kind: subject.kind,
        name: subjectName,
        namespace,
        uid: subject.metadata?.uid,
        resourceVersion: subject.metadata?.resourceVersion,
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: new Date(now),
      lastTimestamp: new Date(now),
      source: { component, host: this.options.instance },
      reportingComponent: component,
      reportingInstance: this.options.instance,
    };
    try {
      await this.options.api.createNamespacedEvent({ namespace, body });
      this.options.metrics?.events.inc({ type, reason, outcome: 'created' });
    } catch (error) {
      if (this.aggregates.get(key)?.name === name) this.aggregates.delete(key);
      this.fail(error, type, reason);
    }
  }

  private fail(error: unknown, type: EventType, reason: string): void {
    this.options.metrics?.events.inc({ type, reason, outcome: 'error' });
    this.options.logger?.warn({ err: error, reason }, 'could not write a Kubernetes Event');
  }

  private takeToken(objectKey: string): boolean {
    const now = this.now();
    const bucket = this.buckets.get(objectKey) ?? { tokens: this.burst, updated: now };
    const refilled = Math.floor((now - bucket.updated) / this.refillMs);
    if (refilled > 0) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + refilled);
      bucket.updated += refilled * this.refillMs;
    }
    if (bucket.tokens >= this.burst) bucket.updated = now;
    this.buckets.delete(objectKey);
    this.buckets.set(objectKey, bucket);
    if (this.buckets.size > MAX_TRACKED) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens < 1) return false;
    bucket.tokens--;
    return true;
  }

  private enqueue(write: () => Promise<void>): void {
    this.chain = this.chain.then(write, write);
  }
}

/** The remembered form of an aggregation key: its SHA-1 digest (base64). */
function aggregationKey(full: string): string {
  return createHash('sha1').update(full).digest('base64');
}

/** An EventRecorder that keeps events in memory (for tests of code that records events). */
export class InMemoryEventRecorder implements EventRecorder {
  readonly events: Array<{ type: EventType; reason: string; message: string; namespace?: string; name?: string }> = [];
  normal(subject: EventSubject, reason: EventReason, message: string): void {
    this.events.push({ type: 'Normal', reason, message, namespace: subject.metadata?.namespace, name: subject.metadata?.name });
  }
  warning(subject: EventSubject, reason: EventReason, message: string): void {
    this.events.push({ type: 'Warning', reason, message, namespace: subject.metadata?.namespace, name: subject.metadata?.name });
  }
  async flush(): Promise<void> {}
}
