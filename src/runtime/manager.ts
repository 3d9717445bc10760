import {
  CoordinationV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Deployment,
  type V1Service,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { KubeConfigMapClient, OPERATOR_FIELD_MANAGER } from '../kube/configmap-client.js';
import type { ObservableObjectReader } from '../kube/object-reader.js';
import { ApiClientFactory } from './api-client-factory.js';
import { reuseConnections } from './connection-reuse.js';
import { Controller, retryOptions } from './controller.js';
import { routeEvent } from './event-mapping.js';
import { EventReason, KubernetesEventRecorder, type EventRecorder } from './event-recorder.js';
import type { FencingToken } from './fencing-token.js';
import { fenceForPass, type SideEffectFence } from './side-effect-fence.js';
import { currentReconcileContext } from './logger.js';
import { handoverGraceMs, shardFence, shardIdentity, ShardOwnership, type ShardedKind } from './shard.js';
import { ShardHandover } from './shard-handover.js';
import { HealthServer } from './health-server.js';
import { Informer } from './informer.js';
import { LeaderElector, type Leadership } from './leader-election.js';
import { createLogger } from './logger.js';
import { LifecycleTracker, OperatorMetrics, type LifecycleCounts } from './metrics.js';
import type { OperatorConfig } from './operator-config.js';
import { OwnWriteTracker, type WriteTracker } from './own-write-tracker.js';
import type { Reconciler } from './reconcile.js';
import { type DefaultConfigurationReader, type DefaultConfigurationSource, NO_DEFAULT_CONFIGURATION } from './default-configuration-source.js';
import { routeSessionJobEvent, SessionJobsByCluster, sessionClusterKeysOf } from './session-job-event-mapping.js';
import {
  configMaps,
  deployments,
  flinkDeployments,
  flinkSessionJobs,
  flinkStateSnapshots,
  services,
  type FlinkDeploymentObject,
  type WatchedResource,
} from './watched-resources.js';

/**
 * The manager: wires the runtime together and owns its lifecycle.
 *
 * start(): HTTP port → informers (every replica runs them, so a standby is warm) → leadership
 * (a Lease: election by default; with --no-leader-elect the single-instance guard, which refuses to
 * act while another live instance holds the Lease; leader-election.ts). Each leadership term gets a fresh controller,
 * started once every cache has synced, seeded with every known FlinkDeployment; with a session-job
 * reconciler, a second controller (its own work queue) for FlinkSessionJobs, seeded likewise; with
 * a state-snapshot reconciler, a third for FlinkStateSnapshots (an event of a snapshot also wakes
 * the FlinkDeployment or FlinkSessionJob its spec.jobReference names, which takes it).
 * Losing leadership stops those controllers at once (in-flight reconciles are aborted).
 * stop() (SIGTERM): stop handing out work, let in-flight reconciles finish for up to
 * `shutdownTimeoutMs`, release the Lease, stop the informers, flush Events, close the port.
 *
 * A reconcile that throws is retried with backoff and reported as a Warning Event (reason `Error`,
 * aggregated and rate-limited like every Event).
 *
 * Readiness (/readyz): every informer synced and — without election — the controller running, or
 * — with election — leading, or a standby that has reached the Lease within the lease duration.
 */
export interface OperatorReaders {
  readonly flinkDeployments: ObservableObjectReader<FlinkDeploymentObject>;
  readonly stateConfigMaps: ObservableObjectReader<V1ConfigMap>;
  readonly deployments: ObservableObjectReader<V1Deployment>;
  readonly services: ObservableObjectReader<V1Service>;
  /** FlinkSessionJobs (v1), when the manager reconciles them. */
  readonly flinkSessionJobs?: ObservableObjectReader<FlinkDeploymentObject>;
  /** FlinkStateSnapshots (v1beta1), when the manager handles them. */
  readonly flinkStateSnapshots?: ObservableObjectReader<FlinkDeploymentObject>;
}

/** What the runtime gives the reconciler (see reconcile.ts for the contract itself). */
export interface OperatorDependencies {
  readonly kubeConfig: KubeConfig;
  /** API clients whose requests are counted in the metrics; prefer them to kubeConfig.makeApiClient. */
  readonly apiClients: ApiClientFactory;
  /** Informer caches (read-only; wrap them with the read-your-writes overlay). */
  readonly readers: OperatorReaders;
  /** Record every write we make so its watch echo does not trigger a reconcile. */
  readonly writeTracker: WriteTracker;
  readonly events: EventRecorder;
  /** Lines logged during a reconcile carry namespace, name and reconcileId automatically. */
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
  /** The fencing token for state writes; undefined = not the leader (do not write). */
  fencingToken(): FencingToken | undefined;
  /**
   * The side-effect fence of one reconcile pass (side-effect-fence.ts): bound to the term leading now
   * and to the pass's AbortSignal; undefined when this instance does not lead.
   */
  fenceFor(signal: AbortSignal): SideEffectFence | undefined;
  readonly leadership: Pick<Leadership, 'isLeader' | 'currentToken' | 'onStoppedLeading'>;
  readonly config: OperatorConfig;
  /** Asks for a reconcile of `namespace/name` (no-op while not leading). */
  enqueue(key: string): void;
  /** The operator-wide default Flink configuration, as of now (default-configuration-source.ts). */
  readonly defaultConfiguration: DefaultConfigurationReader;
}

export type ReconcilerFactory = (deps: OperatorDependencies) => Reconciler;

export interface ManagerOptions {
  readonly config: OperatorConfig;
  readonly kubeConfig: KubeConfig;
  readonly makeReconciler: ReconcilerFactory;
  /** Reconcile FlinkSessionJobs too (their CRD must be installed: the manager watches them). */
  readonly makeSessionJobReconciler?: ReconcilerFactory;
  /**
   * Handle FlinkStateSnapshots too (their CRD must be installed): the manager watches them, gives
   * the other reconcilers their cache (readers.flinkStateSnapshots) and runs this reconciler for them.
   */
  readonly makeStateSnapshotReconciler?: ReconcilerFactory;
  readonly logger?: Logger;
  /** Serve the HTTP port (default true). */
  readonly serveHttp?: boolean;
  /**
   * The default configuration (default: none). The manager starts and stops its checks, and
   * reconciles every resource again when it changes.
   */
  readonly defaultConfiguration?: DefaultConfigurationSource;
}

export class Manager {
  readonly dependencies: OperatorDependencies;
  readonly metrics: OperatorMetrics;
  readonly logger: Logger;
  private readonly config: OperatorConfig;
  private readonly informers: Informer<KubernetesObject>[];
  private readonly flinkInformer: Informer<FlinkDeploymentObject>;
  private readonly leadership: Leadership;
  private readonly elector: LeaderElector;
  private readonly tracker = new OwnWriteTracker();
  private readonly recorder: KubernetesEventRecorder;
  private readonly health: HealthServer | undefined;
  private readonly reconciler: Reconciler;
  private controller: Controller | undefined;
  private readonly sessionJobInformer: Informer<FlinkDeploymentObject> | undefined;
  private readonly sessionJobReconciler: Reconciler | undefined;
  private sessionJobController: Controller | undefined;
  private readonly snapshotInformer: Informer<FlinkDeploymentObject> | undefined;
  private readonly snapshotReconciler: Reconciler | undefined;
  private snapshotController: Controller | undefined;
  private readonly sessionJobsByCluster = new SessionJobsByCluster();
  private readonly defaultConfiguration: DefaultConfigurationSource | undefined;
  private readonly informerKinds: Array<[Informer<KubernetesObject>, string]>;
  private term = 0;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private readonly unsubscribers: Array<() => void> = [];
  private readonly lifecycle: LifecycleTracker;
  /** Who owns which resource among the label-selector shards (design/012-shards.md). */
  readonly shard: ShardOwnership;
  private readonly handover: ShardHandover;

  constructor(options: ManagerOptions) {
    const config = (this.config = options.config);
    this.logger = options.logger ?? createLogger({ format: config.logFormat, level: config.logLevel as never, base: { identity: config.identity } });
    const metrics = (this.metrics = new OperatorMetrics());
    this.lifecycle = new LifecycleTracker(metrics);
    // client-node opens a new connection per request otherwise (connection-reuse.ts, design/performance.md)
    reuseConnections(options.kubeConfig);
    const clients = new ApiClientFactory(options.kubeConfig, (verb, code) => metrics.apiRequests.inc({ verb, code }));
    const informerFor = <T extends KubernetesObject>(resource: WatchedResource<T>, labelSelector?: string) =>
      new Informer<T>({
        kubeConfig: options.kubeConfig,
        resource,
        namespaces: config.namespaces,
        labelSelector: labelSelector || undefined,
        logger: this.logger.child({ informer: resource.resource }),
        minDelayMs: config.watchRestartMinDelayMs,
        maxDelayMs: config.watchRestartMaxDelayMs,
        onRestart: (reason) => metrics.informerRestarts.inc({ resource: resource.resource, reason }),
        onRequest: (verb, code) => metrics.apiRequests.inc({ verb, code }),
        onRequestStart: (verb) => metrics.watchRequests.inc({ kind: resource.kind, verb }),
      });
    // the sharded kinds follow their own labels (design/012-shards.md)
    this.flinkInformer = informerFor(flinkDeployments(clients), config.labelSelector);
    const stateInformer = informerFor(configMaps(clients), config.stateConfigMapSelector);
    const deploymentInformer = informerFor(deployments(clients), config.ownedResourceSelector);
    const serviceInformer = informerFor(services(clients), config.ownedResourceSelector);
    this.informers = [this.flinkInformer, stateInformer, deploymentInformer, serviceInformer] as Informer<KubernetesObject>[];
    this.informerKinds = [
      [this.informers[0], 'FlinkDeployment'],
      [this.informers[1], 'ConfigMap'],
      [this.informers[2], 'Deployment'],
      [this.informers[3], 'Service'],
    ];
    if (options.makeSessionJobReconciler) {
      this.sessionJobInformer = informerFor(flinkSessionJobs(clients), config.labelSelector);
      this.informers.push(this.sessionJobInformer);
      this.informerKinds.push([this.sessionJobInformer, 'FlinkSessionJob']);
    }
    if (options.makeStateSnapshotReconciler) {
      this.snapshotInformer = informerFor(flinkStateSnapshots(clients), config.labelSelector);
      this.informers.push(this.snapshotInformer);
      this.informerKinds.push([this.snapshotInformer, 'FlinkStateSnapshot']);
    }

    {
      this.elector = new LeaderElector({
        api: clients.make(CoordinationV1Api),
        namespace: config.leaseNamespace,
        leaseName: config.leaseName,
        identity: config.identity,
        leaseDurationMs: config.leaseDurationMs,
        renewDeadlineMs: config.renewDeadlineMs,
        retryPeriodMs: config.retryPeriodMs,
        logger: this.logger.child({ component: 'leader-election' }),
        metrics,
        mode: config.leaderElect ? 'elect' : 'single-instance',
        onSecondInstance: (holder, lease) =>
          this.recorder.warning(
            {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: {
                name: lease.metadata?.name ?? config.leaseName,
                namespace: lease.metadata?.namespace ?? config.leaseNamespace,
                uid: lease.metadata?.uid ?? '',
              },
            },
            'SecondInstance',
            `operator instance ${config.identity} found ${holder} holding this Lease and refuses to act while it is alive (leader election is off: run one replica, or turn it on)`,
          ),
      });
      this.leadership = this.elector;
    }
    this.recorder = new KubernetesEventRecorder({
      api: clients.make(CoreV1Api),
      instance: config.identity,
      burst: config.eventBurst,
      refillIntervalMs: config.eventRefillIntervalMs,
      logger: this.logger.child({ component: 'events' }),
      metrics,
    });
    const leadership = this.leadership;
    const sharded = new Map<ShardedKind, ObservableObjectReader<KubernetesObject>>([['FlinkDeployment', this.flinkInformer]]);
    if (this.sessionJobInformer) sharded.set('FlinkSessionJob', this.sessionJobInformer);
    if (this.snapshotInformer) sharded.set('FlinkStateSnapshot', this.snapshotInformer);
    const shard = (this.shard = new ShardOwnership({
      shard: shardIdentity(config),
      graceMs: handoverGraceMs(config),
      readers: sharded,
      stateConfigMaps: stateInformer,
    }));
    this.handover = new ShardHandover({
      ownership: shard,
      labelSelector: config.labelSelector,
      graceMs: handoverGraceMs(config),
      term: leadership,
      marginMs: fenceMarginMs(config),
      clients,
      configMaps: new KubeConfigMapClient(options.kubeConfig, OPERATOR_FIELD_MANAGER, clients.make(CoreV1Api)),
      events: this.recorder,
      logger: this.logger.child({ component: 'shard-handover' }),
      intervalMs: Math.min(1_000, config.retryPeriodMs),
      onTakenOver: (kind, key) =>
        (kind === 'FlinkSessionJob' ? this.sessionJobController : kind === 'FlinkStateSnapshot' ? this.snapshotController : this.controller)?.enqueue(key),
    });
    /** The token and fence of a pass of `kind`'s reconciler: the leadership term, made shard-aware for the resource of the pass. */
    const fencingFor = (kind: ShardedKind) => ({
      fencingToken: () => {
        const token = leadership.currentToken();
        const context = currentReconcileContext();
        return token && shard.tokenFor(token, context ? shard.uidOf(kind, context.namespace, context.name) : undefined);
      },
      fenceFor: (signal: AbortSignal) => {
        const base = fenceForPass({ term: leadership, signal, marginMs: fenceMarginMs(config) });
        const context = currentReconcileContext();
        if (!base) return undefined;
        return context ? shardFence(base, shard, kind, context.namespace, context.name) : { ...base, token: shard.tokenFor(base.token, undefined) };
      },
    });
    this.dependencies = {
      kubeConfig: options.kubeConfig,
      apiClients: clients,
      readers: {
        flinkDeployments: this.flinkInformer,
        stateConfigMaps: stateInformer,
        deployments: deploymentInformer,
        services: serviceInformer,
        ...(this.sessionJobInformer ? { flinkSessionJobs: this.sessionJobInformer } : {}),
        ...(this.snapshotInformer ? { flinkStateSnapshots: this.snapshotInformer } : {}),
      },
      writeTracker: this.tracker,
      events: this.recorder,
      logger: this.logger,
      metrics,
      ...fencingFor('FlinkDeployment'),
      leadership,
      config,
      enqueue: (key) => this.controller?.enqueue(key),
      defaultConfiguration: options.defaultConfiguration ?? NO_DEFAULT_CONFIGURATION,
    };
    this.defaultConfiguration = options.defaultConfiguration;
    options.defaultConfiguration?.onChange(() => this.reconcileEverything());
    metrics.setLifecycleSource(() => {
      const counts: LifecycleCounts = new Map();
      for (const deployment of this.flinkInformer.list()) {
        const namespace = deployment.metadata?.namespace ?? '';
        const states = counts.get(namespace) ?? new Map<string, number>();
        counts.set(namespace, states);
        const state = lifecycleStateOf(deployment);
        states.set(state, (states.get(state) ?? 0) + 1);
      }
      return counts;
    });
    this.reconciler = options.makeReconciler(this.dependencies);
    this.sessionJobReconciler = options.makeSessionJobReconciler?.({ ...this.dependencies, ...fencingFor('FlinkSessionJob') });
    this.snapshotReconciler = options.makeStateSnapshotReconciler?.({ ...this.dependencies, ...fencingFor('FlinkStateSnapshot') });
    if (options.serveHttp ?? true) {
      this.health = new HealthServer({
        port: config.httpPort,
        host: config.httpHost,
        metrics,
        checks: { live: () => this.liveReasons(), ready: () => this.readyReasons() },
      });
    }
  }

  /** Starts everything (see the class comment). Resolves once the HTTP port is open and informers started. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`cannot start a manager that is ${this.state}`);
    this.state = 'running';
    const port = await this.health?.start();
    if (port !== undefined) this.logger.info({ port }, 'serving /metrics, /healthz, /readyz');
    this.defaultConfiguration?.start();
    if (this.sessionJobInformer) this.unsubscribers.push(this.sessionJobInformer.subscribe((event) => this.sessionJobsByCluster.observe(event)));
    for (const [informer, kind] of this.informerKinds) {
      this.unsubscribers.push(
        informer.subscribe((event) => {
          // One echo check per event (it consumes the recorded write), shared by both mappings.
          const decision = routeEvent(kind, event, this.tracker);
          if (decision.echo) {
            this.metrics.echoSkipped.inc({ kind });
            return;
          }
          for (const key of decision.keys) this.controller?.enqueue(key);
          if (kind === 'FlinkStateSnapshot' && event.type !== 'relisted')
            this.snapshotController?.enqueue(`${event.object.metadata?.namespace}/${event.object.metadata?.name}`);
          if (!this.sessionJobInformer) return;
          for (const key of routeSessionJobEvent(kind, event, this.sessionJobsByCluster, decision.keys)) this.sessionJobController?.enqueue(key);
          for (const key of sessionClusterKeysOf(kind, event)) this.controller?.enqueue(key);
        }),
      );
      informer.start();
    }
    // Time in lifecycle state: every replica sees the status changes through its informer.
    this.unsubscribers.push(
      this.flinkInformer.subscribe((event) => {
        const objects = event.type === 'relisted' ? [] : [event.object];
        for (const object of objects) {
          const uid = object.metadata?.uid ?? '';
          if (event.type === 'deleted') this.lifecycle.forget(uid);
          else this.lifecycle.observe(uid, object.metadata?.namespace ?? '', lifecycleStateOf(object));
        }
      }),
    );
    this.unsubscribers.push(
      this.leadership.onStartedLeading((token) => {
        this.metrics.leader.set(1);
        void this.beginTerm(token);
      }),
    );
    this.unsubscribers.push(
      this.leadership.onStoppedLeading((reason) => {
        this.metrics.leader.set(0);
        this.endTerm(reason);
      }),
    );
    this.leadership.start();
    void this.waitForSync();
  }

  /** Graceful shutdown (see the class comment). Idempotent. */
  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    this.term++;
    const controllers = [this.controller, this.sessionJobController, this.snapshotController].filter((c): c is Controller => c !== undefined);
    this.controller = undefined;
    this.sessionJobController = undefined;
    this.snapshotController = undefined;
    if (controllers.length > 0) {
      const inFlight = controllers.reduce((n, c) => n + c.inFlightKeys().length, 0);
      this.logger.info({ inFlight, graceMs: this.config.shutdownTimeoutMs }, 'shutting down: finishing in-flight reconciles');
      await Promise.all(controllers.map((c) => c.stop(this.config.shutdownTimeoutMs)));
    }
    await this.handover.stop();
    await this.leadership.stop();
    this.defaultConfiguration?.stop();
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    this.shard.close();
    await Promise.all(this.informers.map((i) => i.stop()));
    await Promise.race([this.recorder.flush(), new Promise((r) => setTimeout(r, 2_000).unref())]);
    await this.health?.stop();
    this.metrics.leader.set(0);
    this.state = 'stopped';
    this.logger.info('stopped');
  }

  /**
   * Watches `namespaces` (empty = all) from now on, without a restart: every informer restarts its
   * watches for the new set (Informer.setNamespaces). The objects of namespaces no longer watched
   * leave the caches (reported deleted, so their keys are dropped: a queued key whose object is gone
   * is not reconciled again, and a pass in flight on one is fenced out, shard.ts); the objects of new
   * namespaces are listed and reconciled. Called on a config-file change when dynamicNamespaces is on.
   */
  async setWatchedNamespaces(namespaces: readonly string[]): Promise<void> {
    const wanted = [...new Set(namespaces)].sort();
    this.logger.info({ namespaces: wanted.length ? wanted : 'all' }, 'changing the watched namespaces');
    await Promise.all(this.informers.map((informer) => informer.setNamespaces(wanted)));
    void this.waitForSync();
  }

  httpPort(): number | undefined {
    return this.health?.port();
  }

  isReconciling(): boolean {
    return this.controller !== undefined;
  }

  liveReasons(): string[] {
    return this.state === 'stopped' ? ['stopped'] : [];
  }

  readyReasons(): string[] {
    const reasons: string[] = [];
    if (this.state !== 'running') reasons.push(`manager is ${this.state}`);
    for (const informer of this.informers) if (!informer.hasSynced()) reasons.push(`informer ${informer.resource} not synced`);
    const standbyHealthy = Date.now() - this.elector.lastContactAt() <= this.config.leaseDurationMs;
    if (!this.elector.isLeader() && !standbyHealthy) reasons.push('not leading and the lease has not been reached recently');
    return reasons;
  }

  private async waitForSync(): Promise<void> {
    for (const informer of this.informers) {
      while (this.state === 'running' && !(await informer.waitForSync(60_000))) {
        this.logger.warn({ resource: informer.resource }, 'informer not synced yet');
      }
      if (this.state === 'running') this.metrics.informerSynced.set({ resource: informer.resource }, 1);
    }
  }

  private async beginTerm(token: FencingToken): Promise<void> {
    const term = ++this.term;
    for (const informer of this.informers) {
      while (term === this.term && this.state === 'running' && !(await informer.waitForSync(1_000))) {
        /* keep waiting while still leading */
      }
    }
    if (term !== this.term || this.state !== 'running' || !this.leadership.isLeader()) return;
    const controller = new Controller({
      reconciler: this.reconciler,
      parallelism: this.config.parallelism,
      reconcileIntervalMs: this.config.reconcileIntervalMs,
      requeueJitter: this.config.requeueJitter,
      ...retryOptions(this.config),
      logger: this.logger,
      metrics: this.metrics,
      exists: (key) => this.flinkDeploymentOf(key) !== undefined,
      onError: (key, error) => {
        const subject = this.flinkDeploymentOf(key);
        if (subject) this.recorder.warning(subject, EventReason.Error, error instanceof Error ? error.message : String(error));
      },
    });
    this.controller = controller;
    controller.start();
    for (const object of this.flinkInformer.list()) controller.enqueue(`${object.metadata?.namespace}/${object.metadata?.name}`);
    const sessionJobs = this.sessionJobInformer;
    if (this.sessionJobReconciler && sessionJobs) this.sessionJobController = this.startController(this.sessionJobReconciler, sessionJobs, 'flinksessionjob');
    if (this.snapshotReconciler && this.snapshotInformer)
      this.snapshotController = this.startController(this.snapshotReconciler, this.snapshotInformer, 'flinkstatesnapshot');
    this.handover.start();
    this.logger.info({ token, deployments: this.flinkInformer.list().length, sessionJobs: sessionJobs?.list().length }, 'reconciling');
  }

  /** A controller of its own (its own work queue) for the objects of `informer`, seeded with all of them. */
  private startController(reconciler: Reconciler, informer: Informer<FlinkDeploymentObject>, name: string): Controller {
    const controller = new Controller({
      reconciler,
      parallelism: this.config.parallelism,
      reconcileIntervalMs: this.config.reconcileIntervalMs,
      requeueJitter: this.config.requeueJitter,
      ...retryOptions(this.config),
      logger: this.logger.child({ controller: name }),
      metrics: this.metrics,
      exists: (key) => objectOf(informer, key) !== undefined,
      onError: (key, error) => {
        const subject = objectOf(informer, key);
        if (subject) this.recorder.warning(subject, EventReason.Error, error instanceof Error ? error.message : String(error));
      },
    });
    controller.start();
    for (const object of informer.list()) controller.enqueue(`${object.metadata?.namespace}/${object.metadata?.name}`);
    return controller;
  }

  /** Every FlinkDeployment and FlinkSessionJob is reconciled again (after the default configuration changed). */
  private reconcileEverything(): void {
    for (const [controller, informer] of [
      [this.controller, this.flinkInformer],
      [this.sessionJobController, this.sessionJobInformer],
    ] as const) {
      if (!controller || !informer) continue;
      for (const object of informer.list()) controller.enqueue(`${object.metadata?.namespace}/${object.metadata?.name}`);
    }
  }

  private flinkDeploymentOf(key: string): FlinkDeploymentObject | undefined {
    return objectOf(this.flinkInformer, key);
  }

  private endTerm(reason: string): void {
    this.term++;
    const controllers = [this.controller, this.sessionJobController, this.snapshotController].filter((c): c is Controller => c !== undefined);
    this.controller = undefined;
    this.sessionJobController = undefined;
    this.snapshotController = undefined;
    void this.handover.stop();
    if (controllers.length > 0) {
      this.logger.warn({ reason, aborted: controllers.flatMap((c) => c.inFlightKeys()) }, 'stopped reconciling');
      for (const controller of controllers) void controller.stop(0);
    }
  }
}

/** The object of `namespace/name` in an informer's cache. */
function objectOf(informer: Informer<FlinkDeploymentObject>, key: string): FlinkDeploymentObject | undefined {
  const slash = key.indexOf('/');
  return informer.get(key.slice(0, slash), key.slice(slash + 1));
}

/** `status.lifecycleState` of a FlinkDeployment, `UNKNOWN` when it has none. */
function lifecycleStateOf(deployment: FlinkDeploymentObject): string {
  const state = (deployment.status as { lifecycleState?: unknown } | undefined)?.lifecycleState;
  return typeof state === 'string' && state ? state : 'UNKNOWN';
}

/**
 * How long the lease must stay valid after a fence check: long enough for one call, short enough
 * that a healthy leader (renewing every retryPeriod, valid for renewDeadline after each renewal)
 * always passes: at most 1 s, at most half of what is left between two renewals.
 */
export function fenceMarginMs(config: Pick<OperatorConfig, 'renewDeadlineMs' | 'retryPeriodMs'>): number {
  return Math.max(1, Math.min(1_000, Math.floor((config.renewDeadlineMs - config.retryPeriodMs) / 2)));
}
