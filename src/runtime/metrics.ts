import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The operator's Prometheus metrics, one set per Manager.
 *
 * Each `OperatorMetrics` owns its own prom-client `Registry` (never the global one), so two
 * managers can run in one process (tests) without clashing. Every metric name starts with
 * `flink_operator_`; process and Node.js runtime metrics (prom-client defaults) are included with
 * the same prefix.
 *
 * | metric | type | labels | meaning |
 * |---|---|---|---|
 * | flink_operator_reconcile_total | counter | result=success\|error\|aborted | finished reconciles |
 * | flink_operator_reconcile_duration_seconds | histogram | result | reconcile wall time |
 * | flink_operator_reconcile_errors_total | counter | error (class name) | failed reconciles by error class |
 * | flink_operator_workqueue_depth | gauge | | keys waiting for a worker |
 * | flink_operator_workqueue_queue_duration_seconds | histogram | | time from ready to picked up |
 * | flink_operator_workqueue_adds_total | counter | | keys added (before deduplication) |
 * | flink_operator_workqueue_retries_total | counter | | rate-limited re-adds after an error |
 * | flink_operator_workqueue_in_flight | gauge | | reconciles running now |
 * | flink_operator_api_requests_total | counter | verb, code | Kubernetes API requests by audit verb and HTTP code (code "error" = no response) |
 * | flink_operator_lifecycle_state | gauge | namespace, state | FlinkDeployments per namespace and status.lifecycleState (computed from the cache at scrape time) |
 * | flink_operator_lifecycle_state_duration_seconds | histogram | namespace, state | seconds a FlinkDeployment spent in a lifecycle state, observed when it leaves it (LifecycleTracker) |
 * | flink_operator_flink_rest_requests_total | counter | method, endpoint, outcome=2xx\|4xx\|5xx\|error | Flink REST requests (each attempt; endpoint = the path with ids replaced) |
 * | flink_operator_flink_rest_request_duration_seconds | histogram | method, endpoint, outcome | Flink REST request latency |
 * | flink_operator_watch_requests_total | counter | kind, verb=list\|watch | informer list and watch requests started |
 * | flink_operator_state_writes_total | counter | outcome | state ConfigMap writes (outcome e.g. created\|updated\|conflict\|stale\|error) |
 * | flink_operator_state_conflicts_total | counter | | state ConfigMap 409 conflicts |
 * | flink_operator_leader | gauge | | 1 while this instance leads (or election is off), else 0 |
 * | flink_operator_second_instance | gauge | | 1 while --no-leader-elect finds another live instance holding the Lease (this one refuses to act) |
 * | flink_operator_fenced_side_effects_total | counter | | side effects refused because the pass's leadership term was no longer valid |
 * | flink_operator_drift_detected_total | counter | | steady passes that found the running cluster differs from the one the state says was deployed |
 * | flink_operator_leader_transitions_total | counter | direction=acquired\|lost | leadership changes of this instance |
 * | flink_operator_informer_synced | gauge | resource | 1 once the informer's first list arrived |
 * | flink_operator_informer_restarts_total | counter | resource, reason | informer watch/list restarts |
 * | flink_operator_events_total | counter | type, reason, outcome=created\|aggregated\|dropped\|error | Kubernetes Events |
 * | flink_operator_echo_events_skipped_total | counter | kind | informer events skipped as echoes of our own writes |
 */
export class OperatorMetrics {
  readonly registry: Registry;
  readonly reconcileTotal: Counter<'result'>;
  readonly reconcileDuration: Histogram<'result'>;
  readonly reconcileErrors: Counter<'error'>;
  readonly queueDepth: Gauge;
  readonly queueWait: Histogram;
  readonly queueAdds: Counter;
  readonly queueRetries: Counter;
  readonly inFlight: Gauge;
  readonly apiRequests: Counter<'verb' | 'code'>;
  readonly lifecycleStates: Gauge<'namespace' | 'state'>;
  readonly lifecycleStateDuration: Histogram<'namespace' | 'state'>;
  readonly flinkRestRequests: Counter<'method' | 'endpoint' | 'outcome'>;
  readonly flinkRestDuration: Histogram<'method' | 'endpoint' | 'outcome'>;
  readonly watchRequests: Counter<'kind' | 'verb'>;
  readonly stateWrites: Counter<'outcome'>;
  readonly stateConflicts: Counter;
  readonly leader: Gauge;
  readonly secondInstance: Gauge;
  readonly fencedSideEffects: Counter;
  readonly driftDetected: Counter;
  readonly flinkUnreachable: Counter;
  readonly leaderTransitions: Counter<'direction'>;
  readonly informerSynced: Gauge<'resource'>;
  readonly informerRestarts: Counter<'resource' | 'reason'>;
  readonly events: Counter<'type' | 'reason' | 'outcome'>;
  readonly echoSkipped: Counter<'kind'>;
  private lifecycleSource: (() => LifecycleCounts) | undefined;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [(this.registry = new Registry())];
    const p = 'flink_operator_';
    this.reconcileTotal = new Counter({ name: `${p}reconcile_total`, help: 'Finished reconciles by result', labelNames: ['result'], registers });
    this.reconcileDuration = new Histogram({
      name: `${p}reconcile_duration_seconds`,
      help: 'Reconcile duration by result',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.reconcileErrors = new Counter({ name: `${p}reconcile_errors_total`, help: 'Failed reconciles by error class', labelNames: ['error'], registers });
    this.queueDepth = new Gauge({ name: `${p}workqueue_depth`, help: 'Keys waiting for a worker', registers });
    this.queueWait = new Histogram({
      name: `${p}workqueue_queue_duration_seconds`,
      help: 'Time a key waited in the queue before a worker picked it up',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60],
      registers,
    });
    this.queueAdds = new Counter({ name: `${p}workqueue_adds_total`, help: 'Keys added to the queue (before deduplication)', registers });
    this.queueRetries = new Counter({ name: `${p}workqueue_retries_total`, help: 'Rate-limited re-adds after a failed reconcile', registers });
    this.inFlight = new Gauge({ name: `${p}workqueue_in_flight`, help: 'Reconciles running now', registers });
    this.apiRequests = new Counter({
      name: `${p}api_requests_total`,
      help: 'Kubernetes API requests by verb and HTTP code',
      labelNames: ['verb', 'code'],
      registers,
    });
    this.lifecycleStates = new Gauge({
      name: `${p}lifecycle_state`,
      help: 'FlinkDeployments per namespace and lifecycle state',
      labelNames: ['namespace', 'state'],
      registers,
      collect: () => {
        const source = this.lifecycleSource;
        if (!source) return;
        this.lifecycleStates.reset();
        for (const [namespace, states] of source()) for (const [state, count] of states) this.lifecycleStates.set({ namespace, state }, count);
      },
    });
    this.lifecycleStateDuration = new Histogram({
      name: `${p}lifecycle_state_duration_seconds`,
      help: 'Seconds a FlinkDeployment spent in a lifecycle state, observed when it left the state',
      labelNames: ['namespace', 'state'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600],
      registers,
    });
    this.flinkRestRequests = new Counter({
      name: `${p}flink_rest_requests_total`,
      help: 'Flink REST requests (every attempt) by method, endpoint (ids replaced) and outcome (2xx, 4xx, 5xx, error = no answer)',
      labelNames: ['method', 'endpoint', 'outcome'],
      registers,
    });
    this.flinkRestDuration = new Histogram({
      name: `${p}flink_rest_request_duration_seconds`,
      help: 'Flink REST request latency by method, endpoint and outcome',
      labelNames: ['method', 'endpoint', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.watchRequests = new Counter({
      name: `${p}watch_requests_total`,
      help: 'Informer list and watch requests started, by kind',
      labelNames: ['kind', 'verb'],
      registers,
    });
    this.stateWrites = new Counter({ name: `${p}state_writes_total`, help: 'State ConfigMap writes by outcome', labelNames: ['outcome'], registers });
    this.stateConflicts = new Counter({ name: `${p}state_conflicts_total`, help: 'State ConfigMap write conflicts (409)', registers });
    this.leader = new Gauge({ name: `${p}leader`, help: '1 while this instance is the leader (or leader election is off)', registers });
    this.secondInstance = new Gauge({
      name: `${p}second_instance`,
      help: '1 while another live operator instance holds the Lease and this one refuses to act',
      registers,
    });
    this.fencedSideEffects = new Counter({
      name: `${p}fenced_side_effects_total`,
      help: 'Side effects refused because the leadership term was no longer valid',
      registers,
    });
    this.driftDetected = new Counter({
      name: `${p}drift_detected_total`,
      help: 'Steady passes that found the running cluster differs from the deployed state',
      registers,
    });
    this.flinkUnreachable = new Counter({
      name: `${p}flink_rest_unreachable_total`,
      help: "Passes that could not ask Flink's REST API although the JobManager was available (the operator cannot see the job)",
      registers,
    });
    this.leaderTransitions = new Counter({
      name: `${p}leader_transitions_total`,
      help: 'Leadership changes of this instance',
      labelNames: ['direction'],
      registers,
    });
    this.informerSynced = new Gauge({ name: `${p}informer_synced`, help: '1 once the informer has listed', labelNames: ['resource'], registers });
    this.informerRestarts = new Counter({
      name: `${p}informer_restarts_total`,
      help: 'Informer list/watch restarts',
      labelNames: ['resource', 'reason'],
      registers,
    });
    this.events = new Counter({
      name: `${p}events_total`,
      help: 'Kubernetes Events by type, reason and outcome',
      labelNames: ['type', 'reason', 'outcome'],
      registers,
    });
    this.echoSkipped = new Counter({
      name: `${p}echo_events_skipped_total`,
      help: 'Informer events skipped as echoes of our own writes',
      labelNames: ['kind'],
      registers,
    });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: p });
  }

  /**
   * Makes `flink_operator_lifecycle_state` computed at each scrape from `source` (the manager
   * counts `status.lifecycleState` per namespace over its FlinkDeployment cache); values set by
   * hand are then replaced at each scrape.
   */
  setLifecycleSource(source: () => LifecycleCounts): void {
    this.lifecycleSource = source;
  }

  /** Records one Flink REST request (the FlinkRestClient `onRequest` hook). */
  recordFlinkRestRequest(request: { method: string; endpoint: string; outcome: string; seconds: number }): void {
    const labels = { method: request.method, endpoint: request.endpoint, outcome: request.outcome };
    this.flinkRestRequests.inc(labels);
    this.flinkRestDuration.observe(labels, request.seconds);
  }

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** FlinkDeployments by namespace, then by lifecycle state. */
export type LifecycleCounts = Map<string, Map<string, number>>;

/**
 * Time in lifecycle state, as the Apache operator's `resource.lifecycle.metrics`: remembers, per
 * FlinkDeployment uid, the lifecycle state last seen and since when; when a later sighting shows
 * another state, the time spent in the previous one is observed in
 * `flink_operator_lifecycle_state_duration_seconds{namespace,state}`.
 *
 * Caveats: in memory: the first sighting after a start (or of a state entered while the operator
 * did not watch) starts the clock then, so that first interval is shorter than the real one. A
 * deleted deployment is forgotten without an observation (it did not leave its state for another).
 */
export class LifecycleTracker {
  private readonly byUid = new Map<string, { state: string; since: number }>();

  constructor(
    private readonly metrics: Pick<OperatorMetrics, 'lifecycleStateDuration'>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** A sighting of deployment `uid` in `state` (an informer add/update). */
  observe(uid: string, namespace: string, state: string): void {
    if (!uid) return;
    const at = this.now();
    const previous = this.byUid.get(uid);
    if (previous?.state === state) return;
    if (previous) this.metrics.lifecycleStateDuration.observe({ namespace, state: previous.state }, Math.max(0, at - previous.since) / 1000);
    this.byUid.set(uid, { state, since: at });
  }

  forget(uid: string): void {
    this.byUid.delete(uid);
  }

  /** Deployments tracked now (for tests). */
  size(): number {
    return this.byUid.size;
  }
}
