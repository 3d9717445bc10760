import { CoordinationV1Api, V1MicroTime, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { FencingToken } from './fencing-token.js';
import type { OperatorMetrics } from './metrics.js';
import type { LeaseTerm } from './side-effect-fence.js';

/**
 * Leadership: who may reconcile, and the fencing token that proves it on state writes.
 *
 * `LeaderElector` runs client-go's algorithm (tools/leaderelection) on a coordination.k8s.io/v1
 * Lease (client-node has none):
 * - every `retryPeriodMs`, read the Lease; create it if absent (leaseTransitions 0);
 * - a Lease held by someone else is respected until `leaseDurationSeconds` have passed since this
 *   instance last *observed* it change (local clock only: no cross-node clock comparison);
 * - taking it over from another holder (or from an empty holder after a release) increments
 *   `leaseTransitions`; renewing our own keeps it; every write is a PUT locked on the
 *   resourceVersion read, so of two candidates only one wins (the other gets 409);
 * - the leader gives up when it has not renewed for `renewDeadlineMs` (a watchdog timer, so a hung
 *   request cannot delay it) or sees another holder; since renewDeadline < leaseDuration, the old
 *   leader stops before any standby may take over;
 * - `stop()` releases the Lease (empty holder, 1 s duration) so a standby takes over at once.
 *
 * Guarantees: `onStoppedLeading` callbacks run synchronously the moment leadership is lost; after
 * that `isLeader()` is false and `currentToken()` undefined until leadership is acquired again,
 * with a strictly higher token if another instance led meanwhile.
 * Assumptions: clocks run at similar rates (not necessarily synchronised); the API server is the
 * only arbiter.
 * Caveats: a leader paused for longer than the lease (GC pause, SIGSTOP) may run briefly after
 * waking before its watchdog fires; every side effect is therefore fenced on `leaseValidUntil()`
 * (side-effect-fence.ts), which is already in the past the moment such a process runs again.
 *
 * `mode: 'single-instance'` (`--no-leader-elect`): the same Lease protocol, for a deployment meant
 * to run one replica. It does not wait as a silent standby: an instance that finds the Lease held by
 * another live instance refuses to act and says so (an error log line, a Warning Event on the
 * Lease, the metric `flink_operator_second_instance` = 1) on every retry until the other one is gone.
 */
export interface Leadership extends LeaseTerm {
  isLeader(): boolean;
  /** The token to stamp on state writes; undefined = not leader, do not write. */
  currentToken(): FencingToken | undefined;
  onStartedLeading(callback: (token: FencingToken) => void): () => void;
  onStoppedLeading(callback: (reason: string) => void): () => void;
  start(): void;
  /** Stops competing; releases the Lease if held. */
  stop(): Promise<void>;
}

export interface LeaderElectorOptions {
  readonly api: CoordinationV1Api;
  readonly namespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly logger?: Logger;
  readonly metrics?: OperatorMetrics;
  /** `elect` (default): a standby waits silently. `single-instance`: a second instance is an error it reports (see above). */
  readonly mode?: 'elect' | 'single-instance';
  /** Called (at most once per retry period) when single-instance mode finds another live holder. */
  readonly onSecondInstance?: (holder: string, lease: V1Lease) => void;
}

export class LeaderElector implements Leadership {
  private leader = false;
  private token: FencingToken | undefined;
  private running = false;
  private tickTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private observedKey = '';
  private observedAt = 0;
  private observedHolder = '';
  private ticking: Promise<void> | undefined;
  private lastContact = 0;
  private validUntil = 0;
  private lastLease: V1Lease | undefined;
  private readonly startedCallbacks = new Set<(token: FencingToken) => void>();
  private readonly stoppedCallbacks = new Set<(reason: string) => void>();

  constructor(private readonly options: LeaderElectorOptions) {
    if (!(options.retryPeriodMs < options.renewDeadlineMs && options.renewDeadlineMs < options.leaseDurationMs)) {
      throw new Error('leader election needs retryPeriod < renewDeadline < leaseDuration');
    }
  }

  isLeader(): boolean {
    return this.leader;
  }

  currentToken(): FencingToken | undefined {
    return this.leader ? this.token : undefined;
  }

  leaseValidUntil(): number {
    return this.leader ? this.validUntil : 0;
  }

  /** When the Lease was last read or written successfully (epoch ms; 0 = never). */
  lastContactAt(): number {
    return this.lastContact;
  }

  /** The holder this instance last saw in the Lease ('' if none). */
  observedLeader(): string {
    return this.observedHolder;
  }

  onStartedLeading(callback: (token: FencingToken) => void): () => void {
    this.startedCallbacks.add(callback);
    return () => this.startedCallbacks.delete(callback);
  }

  onStoppedLeading(callback: (reason: string) => void): () => void {
    this.stoppedCallbacks.add(callback);
    return () => this.stoppedCallbacks.delete(callback);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.options.metrics?.leader.set(0);
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
    await this.ticking;
    const wasLeader = this.leader;
    if (wasLeader) this.loseLeadership('stopping');
    if (wasLeader) await this.release();
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.tickTimer = setTimeout(() => {
      this.tickTimer = undefined;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        this.schedule(this.options.retryPeriodMs);
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const startedAt = Date.now();
    let acquired: boolean;
    try {
      acquired = await withTimeout(this.tryAcquireOrRenew(), this.options.renewDeadlineMs);
    } catch (error) {
      this.options.logger?.warn({ err: error, lease: this.options.leaseName }, 'lease acquire/renew failed');
      return; // the watchdog decides when a leader gives up
    }
    if (!this.running) return;
    // A renewal counts from when it was sent: others may have seen the previous record that long ago.
    const validForMs = startedAt + this.options.renewDeadlineMs - Date.now();
    if (acquired && validForMs <= 0) acquired = false;
    if (acquired) {
      this.validUntil = startedAt + this.options.renewDeadlineMs;
      this.options.metrics?.secondInstance.set(0);
      this.armWatchdog(validForMs);
      if (!this.leader) {
        this.leader = true;
        this.options.metrics?.leader.set(1);
        this.options.metrics?.leaderTransitions.inc({ direction: 'acquired' });
        this.options.logger?.info({ lease: this.options.leaseName, token: this.token }, 'became leader');
        for (const cb of this.startedCallbacks) cb(this.token!);
      }
    } else {
      if (this.leader && this.observedHolder !== this.options.identity) this.loseLeadership(`the lease is held by ${this.observedHolder || 'nobody'}`);
      if (!this.leader && this.options.mode === 'single-instance' && this.observedHolder && this.observedHolder !== this.options.identity) {
        this.options.metrics?.secondInstance.set(1);
        this.options.logger?.error(
          { lease: this.options.leaseName, holder: this.observedHolder },
          `another operator instance (${this.observedHolder}) holds the lease ${this.options.namespace}/${this.options.leaseName}; ` +
            'this instance refuses to act while it is alive. Run one replica, or turn leader election on (the default) to run standbys',
        );
        if (this.lastLease) this.options.onSecondInstance?.(this.observedHolder, this.lastLease);
      }
    }
  }

  private armWatchdog(validForMs: number): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = undefined;
      if (this.leader) this.loseLeadership(`could not renew the lease within ${this.options.renewDeadlineMs} ms`);
    }, validForMs);
  }

  private loseLeadership(reason: string): void {
    if (!this.leader) return;
    this.leader = false;
    this.validUntil = 0;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.options.metrics?.leader.set(0);
    this.options.metrics?.leaderTransitions.inc({ direction: 'lost' });
    this.options.logger?.warn({ lease: this.options.leaseName, reason }, 'lost leadership');
    for (const cb of this.stoppedCallbacks) cb(reason);
  }

  private leaseSeconds(): number {
    return Math.max(1, Math.ceil(this.options.leaseDurationMs / 1000));
  }

  /** One round of client-go's tryAcquireOrRenew; true if we hold the Lease afterwards. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { api, namespace, leaseName: name, identity } = this.options;
    const now = new V1MicroTime();
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
      const spec: V1LeaseSpec = { holderIdentity: identity, leaseDurationSeconds: this.leaseSeconds(), acquireTime: now, renewTime: now, leaseTransitions: 0 };
      try {
        await api.createNamespacedLease({ namespace, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec } });
      } catch (createError) {
        if (statusOf(createError) === 409) return false;
        throw createError;
      }
      this.observe(spec, Date.now());
      this.token = { holderIdentity: identity, leaseTransitions: 0 };
      return true;
    }
    this.lastLease = lease;
    const spec = lease.spec ?? {};
    const observedAt = this.observe(spec, Date.now());
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? this.leaseSeconds()) * 1000;
    if (holder && holder !== identity && observedAt + durationMs > Date.now()) return false;
    const transitions = spec.leaseTransitions ?? 0;
    const next: V1LeaseSpec =
      holder === identity
        ? { ...spec, holderIdentity: identity, leaseDurationSeconds: this.leaseSeconds(), renewTime: now, leaseTransitions: transitions }
        : { holderIdentity: identity, leaseDurationSeconds: this.leaseSeconds(), acquireTime: now, renewTime: now, leaseTransitions: transitions + 1 };
    try {
      await api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: next } });
    } catch (error) {
      if (statusOf(error) === 409) return false;
      throw error;
    }
    this.observe(next, Date.now());
    this.token = { holderIdentity: identity, leaseTransitions: next.leaseTransitions ?? 0 };
    return true;
  }

  /** Records the Lease record seen; returns when it was first seen in this form (local clock). */
  private observe(spec: V1LeaseSpec, now: number): number {
    const key = JSON.stringify([spec.holderIdentity ?? '', spec.renewTime ? new Date(spec.renewTime).getTime() : 0, spec.leaseTransitions ?? 0]);
    this.observedHolder = spec.holderIdentity ?? '';
    this.lastContact = now;
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAt = now;
    }
    return this.observedAt;
  }

  /** Gives the Lease up so a standby can take it at once (client-go ReleaseOnCancel). */
  private async release(): Promise<void> {
    const { api, namespace, leaseName: name, identity } = this.options;
    try {
      const lease = await api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      const now = new V1MicroTime();
      await api.replaceNamespacedLease({
        name,
        namespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now } },
      });
      this.options.logger?.info({ lease: name }, 'released the lease');
    } catch (error) {
      this.options.logger?.warn({ err: error, lease: name }, 'could not release the lease (a standby takes over when it expires)');
    }
  }
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
