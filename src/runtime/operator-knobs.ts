/**
 * Every operator setting ("knob"): its flag, environment variable, config-file key, Apache name
 * and default, in one table (`OPERATOR_KNOBS`) from which the CLI flags, the env lookup, the
 * config-file reader (operator-config.ts) and the README's settings table are derived.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { STATE_CONFIGMAP_SELECTOR } from '../state/state-configmap-codec.js';
import type { OperatorConfig } from './operator-config.js';

export type KnobType = 'string' | 'int' | 'number' | 'duration' | 'bool' | 'list' | 'enum';
/** A knob's value: what its type parses to (or undefined when unset). */
type KnobValue = string | number | boolean | readonly string[] | undefined;

export interface Knob {
  readonly key: keyof OperatorConfig;
  /** Long flag without dashes, e.g. `http-port`. */
  readonly flag: string;
  readonly env: string;
  readonly type: KnobType;
  readonly values?: readonly string[];
  /** The default, or a function computing it from the environment. */
  readonly default: KnobValue | ((env: NodeJS.ProcessEnv) => KnobValue);
  /** The default as documented. */
  readonly defaultText: string;
  readonly description: string;
  /**
   * The Apache operator's name of this setting (`kubernetes.operator.*`), accepted in the config
   * file and the default-configuration file with the same meaning; absent = this operator's own.
   */
  readonly apacheKey?: string;
  /** Apache's default where it differs from ours (`defaultText`), as Apache's reference writes it. */
  readonly apacheDefaultText?: string;
  /** Why our default or behaviour differs from Apache's. */
  readonly apacheDifference?: string;
  /**
   * How a value written under `apacheKey` becomes this knob's raw value (e.g. an inverted boolean);
   * absent = as written, durations in Flink's syntax (`10 s`, `1 min`).
   */
  readonly fromApacheValue?: (value: string) => unknown;
}

const ENV_PREFIX = 'FLINK_OPERATOR_';

function knob(k: Omit<Knob, 'env' | 'defaultText'> & { env?: string; defaultText?: string }): Knob {
  const env = k.env ?? ENV_PREFIX + k.flag.replace(/-/g, '_').toUpperCase();
  const defaultText = k.defaultText ?? (Array.isArray(k.default) ? (k.default.length ? k.default.join(',') : '(none)') : String(k.default));
  return { ...k, env, defaultText };
}

export const OPERATOR_KNOBS: readonly Knob[] = [
  knob({
    key: 'kubeconfig',
    flag: 'kubeconfig',
    env: 'KUBECONFIG',
    type: 'string',
    default: undefined,
    defaultText: '$KUBECONFIG, ~/.kube/config, then in-cluster',
    description: 'kubeconfig file of the cluster to operate on',
  }),
  knob({
    key: 'namespaces',
    flag: 'namespace',
    env: `${ENV_PREFIX}NAMESPACES`,
    type: 'list',
    default: [],
    defaultText: 'all namespaces',
    description: 'namespace to watch; repeat the flag (env and file: comma-separated list / YAML list) for several',
    apacheKey: 'kubernetes.operator.watched.namespaces',
    // Apache's default value (JOSDK's name for "all namespaces") means what our empty list means
    fromApacheValue: (value) => (value.trim() === 'JOSDK_ALL_NAMESPACES' ? [] : value),
  }),
  knob({
    key: 'labelSelector',
    flag: 'label-selector',
    type: 'string',
    default: undefined,
    defaultText: '(none: all resources)',
    description:
      'label selector of the FlinkDeployments, FlinkSessionJobs and FlinkStateSnapshots this install owns, e.g. flink-operator.io/shard=a; installs with disjoint selectors and their own lease-name split the resources between them, and a relabelled resource moves between them with a fenced hand-over (design/012-shards.md)',
    apacheKey: 'kubernetes.operator.label.selector',
  }),
  knob({
    key: 'dynamicNamespaces',
    flag: 'dynamic-namespaces',
    type: 'bool',
    default: false,
    description: 'when the config file changes the watched namespaces, watch the new set without a restart (the informers are restarted for it)',
    apacheKey: 'kubernetes.operator.dynamic.namespaces.enabled',
  }),
  knob({
    key: 'httpPort',
    flag: 'http-port',
    type: 'int',
    default: 8085,
    description: 'port serving /metrics, /healthz and /readyz (0 = any free port)',
    apacheKey: 'kubernetes.operator.health.probe.port',
  }),
  knob({ key: 'httpHost', flag: 'http-host', type: 'string', default: '0.0.0.0', description: 'address the HTTP port binds to' }),
  knob({
    key: 'reconcileIntervalMs',
    flag: 'reconcile-interval',
    type: 'duration',
    default: 60_000,
    defaultText: '60s',
    description: 'periodic reconcile of every FlinkDeployment when nothing happens (jittered)',
    apacheKey: 'kubernetes.operator.reconcile.interval',
  }),
  knob({
    key: 'progressCheckIntervalMs',
    flag: 'progress-check-interval',
    type: 'duration',
    default: 10_000,
    defaultText: '10s',
    description: 'reconcile interval while a transition is in progress (the reconciler asks for it through requeueAfter)',
    apacheKey: 'kubernetes.operator.observer.progress-check.interval',
  }),
  knob({
    key: 'observationHoldMs',
    flag: 'observation-hold',
    type: 'duration',
    default: 1_000,
    defaultText: '1s',
    description:
      "how long a status change that only reports an observation (TaskManager replicas, the JobManager getting ready, a job initializing) may wait to go out with the next transition's status patch; 0 writes every change at once",
  }),
  knob({
    key: 'requeueJitter',
    flag: 'requeue-jitter',
    type: 'number',
    default: 0.1,
    description: 'periodic and requested requeues are delayed by up to this fraction more, at random',
  }),
  knob({
    key: 'parallelism',
    flag: 'parallelism',
    type: 'int',
    default: 50,
    description: "reconciles running at once (different FlinkDeployments; one key never runs twice at once; the Apache operator's default too)",
    apacheKey: 'kubernetes.operator.reconcile.parallelism',
  }),
  knob({
    key: 'retryBaseDelayMs',
    flag: 'retry-base-delay',
    type: 'duration',
    default: 5,
    defaultText: '5ms',
    description:
      'delay of the first two retries after a failed reconcile of a resource; each later one is the previous times retry-interval-multiplier (the Java Operator SDK GenericRetry the Apache operator uses)',
    apacheKey: 'kubernetes.operator.retry.initial.interval',
    apacheDefaultText: '5 s',
    apacheDifference:
      'every pass is idempotent and resumes from the state ConfigMap, and most failures are one-off (a 409 on a resourceVersion-locked write, a dropped connection): retried in milliseconds instead of 5 s, a savepoint upgrade or a recovery interrupted by one is not held up; a lasting failure still backs off and ends at the periodic reconcile',
  }),
  knob({
    key: 'retryMultiplier',
    flag: 'retry-interval-multiplier',
    type: 'number',
    default: 1.5,
    description: 'growth of the retry delay from the third consecutive failure of a resource on (at least 1)',
    apacheKey: 'kubernetes.operator.retry.interval.multiplier',
  }),
  knob({
    key: 'retryMaxDelayMs',
    flag: 'retry-max-delay',
    type: 'duration',
    default: undefined,
    defaultText: '(none)',
    description: 'cap of the per-resource retry delay',
    apacheKey: 'kubernetes.operator.retry.max.interval',
  }),
  knob({
    key: 'retryMaxAttempts',
    flag: 'retry-max-attempts',
    type: 'int',
    default: 15,
    description:
      'retries after consecutive failed reconciles of a resource; then no more backoff: it is reconciled again every reconcile-interval (and on every change) until a pass succeeds, its status keeping the last error and saying retries are exhausted',
    apacheKey: 'kubernetes.operator.retry.max.attempts',
  }),
  knob({
    key: 'rateLimiterLimit',
    flag: 'rate-limiter-limit',
    type: 'int',
    default: 0,
    defaultText: '0 (off)',
    description: 'reconciles of one resource per rate-limiter-refresh-period; more wait for the next period (0 = no limit)',
    apacheKey: 'kubernetes.operator.rate-limiter.limit',
    apacheDefaultText: '5',
    apacheDifference:
      'a transition here is many short passes, one side effect each (intent, action, result written around it): 5 per 15 s would stall a savepoint upgrade or a recovery for up to 15 s in its middle; a pass that changed nothing never asks to run again at once (it waits for the progress interval), so there is no hot loop to limit',
  }),
  knob({
    key: 'rateLimiterRefreshPeriodMs',
    flag: 'rate-limiter-refresh-period',
    type: 'duration',
    default: 15_000,
    defaultText: '15s',
    description: 'window of rate-limiter-limit (per resource)',
    apacheKey: 'kubernetes.operator.rate-limiter.refresh-period',
  }),
  knob({
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout',
    type: 'duration',
    default: 20_000,
    defaultText: '20s',
    description: 'on SIGTERM, how long in-flight reconciles may finish before they are aborted',
    apacheKey: 'kubernetes.operator.termination.timeout',
    apacheDefaultText: '10 s',
    apacheDifference: 'a pass that is stopping a job with a savepoint gets the time to record its trigger; the manifests give the pod 30 s',
  }),
  knob({
    key: 'leaderElect',
    flag: 'leader-elect',
    type: 'bool',
    default: true,
    description:
      'leader election on a coordination.k8s.io/v1 Lease: only the leader reconciles, other replicas wait as standbys. --no-leader-elect (false) is for one replica: the Lease is still held, and an instance that finds another live one holding it refuses to act and reports it (log, Warning Event on the Lease, metric flink_operator_second_instance)',
    apacheKey: 'kubernetes.operator.leader-election.enabled',
    apacheDefaultText: 'false',
    apacheDifference:
      'on by default: even one replica holds the Lease, so a second instance started by mistake refuses to act (design/004), and every state write is fenced by its term',
  }),
  knob({
    key: 'leaseName',
    flag: 'lease-name',
    type: 'string',
    default: 'flink-operator-lock',
    description: 'name of the leader-election Lease; with label-selector shards, each shard needs its own (the Lease names the shard, design/012-shards.md)',
    apacheKey: 'kubernetes.operator.leader-election.lease-name',
    apacheDefaultText: '(none)',
  }),
  knob({
    key: 'leaseNamespace',
    flag: 'lease-namespace',
    type: 'string',
    default: (env: NodeJS.ProcessEnv) => env.POD_NAMESPACE || serviceAccountNamespace() || 'default',
    defaultText: "$POD_NAMESPACE, else the pod's service-account namespace, else default",
    description: 'namespace of the leader-election Lease',
  }),
  knob({
    key: 'identity',
    flag: 'identity',
    type: 'string',
    default: (env: NodeJS.ProcessEnv) => env.POD_NAME || `${hostname()}-${randomBytes(4).toString('hex')}`,
    defaultText: '$POD_NAME, else <hostname>-<random>',
    description: "this instance's leader-election identity (Lease holderIdentity)",
  }),
  knob({
    key: 'leaseDurationMs',
    flag: 'lease-duration',
    type: 'duration',
    default: 15_000,
    defaultText: '15s',
    description: 'how long a standby waits after the last observed renewal before taking the Lease',
    apacheKey: 'kubernetes.operator.leader-election.lease-duration',
  }),
  knob({
    key: 'renewDeadlineMs',
    flag: 'renew-deadline',
    type: 'duration',
    default: 10_000,
    defaultText: '10s',
    description: 'the leader stops reconciling if it could not renew for this long (must be < lease duration)',
    apacheKey: 'kubernetes.operator.leader-election.renew-deadline',
  }),
  knob({
    key: 'retryPeriodMs',
    flag: 'retry-period',
    type: 'duration',
    default: 2_000,
    defaultText: '2s',
    description: 'interval between Lease acquire/renew attempts (must be < renew deadline)',
    apacheKey: 'kubernetes.operator.leader-election.retry-period',
  }),
  knob({
    key: 'logFormat',
    flag: 'log-format',
    type: 'enum',
    values: ['json', 'pretty'],
    default: 'json',
    description: 'json: one pino JSON object per line; pretty: human-readable',
  }),
  knob({
    key: 'logLevel',
    flag: 'log-level',
    type: 'enum',
    values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    default: 'info',
    description: 'minimum log level',
  }),
  knob({
    key: 'flinkRestAccess',
    flag: 'flink-rest-access',
    type: 'enum',
    values: ['auto', 'direct', 'apiserver-proxy'],
    default: 'auto',
    description:
      "how to reach Flink's REST API: direct (http://<name>-rest.<ns>.svc:8081, needs the cluster network), through the API server's service proxy (works from anywhere the API server is reachable; the development cluster's only way), or auto: direct in a pod, apiserver-proxy elsewhere",
  }),
  knob({
    key: 'ownedResourceSelector',
    flag: 'owned-resource-selector',
    type: 'string',
    default: 'type in (flink-standalone-kubernetes,flink-native-kubernetes)',
    description: 'label selector of the Deployments and Services the operator watches',
  }),
  knob({
    key: 'stateConfigMapSelector',
    flag: 'state-configmap-selector',
    type: 'string',
    default: STATE_CONFIGMAP_SELECTOR,
    description: "label selector of the state ConfigMaps the operator watches (FlinkDeployments' and FlinkSessionJobs')",
  }),
  knob({
    key: 'watchRestartMinDelayMs',
    flag: 'watch-restart-min-delay',
    type: 'duration',
    default: 200,
    defaultText: '200ms',
    description: 'first delay before re-listing/re-watching after an informer error or a watch closed early; doubles per repeat',
  }),
  knob({
    key: 'watchRestartMaxDelayMs',
    flag: 'watch-restart-max-delay',
    type: 'duration',
    default: 30_000,
    defaultText: '30s',
    description: 'cap of the informer restart delay',
  }),
  knob({
    key: 'eventBurst',
    flag: 'event-burst',
    type: 'int',
    default: 25,
    description: 'Kubernetes Events one object may get in a burst before rate limiting',
  }),
  knob({
    key: 'eventRefillIntervalMs',
    flag: 'event-refill-interval',
    type: 'duration',
    default: 300_000,
    defaultText: '300s',
    description: 'one more Event per object is allowed after each such interval (client-go: 1 per 5 min)',
  }),
  knob({
    key: 'sessionJobJarSchemes',
    flag: 'session-job-jar-scheme',
    env: `${ENV_PREFIX}SESSION_JOB_JAR_SCHEMES`,
    type: 'list',
    // The schemes the operator can fetch itself (session-job-artifacts.ts); a Flink filesystem scheme (s3, gs, ...) would pass validation and fail at submission.
    values: ['http', 'https', 'file'],
    default: ['https'],
    description:
      "jarURI scheme a FlinkSessionJob may use (the Apache operator's kubernetes.operator.user.artifacts.allowed-schemes, https by default); repeat for several: http, https or file (the operator fetches the jar and uploads it to the session cluster)",
    apacheKey: 'kubernetes.operator.user.artifacts.allowed-schemes',
  }),
  knob({
    key: 'sessionJobJarRestrictedHosts',
    flag: 'session-job-jar-restricted-hosts',
    type: 'bool',
    default: false,
    description:
      'let session-job jars be fetched from loopback, link-local (cloud metadata) and private addresses; off by default so a jarURI cannot make the operator read internal endpoints',
    apacheKey: 'kubernetes.operator.user.artifacts.disallow-restricted-hosts',
    apacheDefaultText: 'true',
    apacheDifference: 'the same setting inverted: Apache names what is refused (disallow … true), this flag what is allowed (false)',
    fromApacheValue: (value) => !/^true$/i.test(value.trim()),
  }),
  knob({
    key: 'flinkConfDir',
    flag: 'flink-conf-dir',
    env: 'FLINK_CONF_DIR',
    type: 'string',
    default: '/opt/flink/conf',
    description:
      "directory of the operator's default configuration: config.yaml (else flink-conf.yaml) holding Flink and kubernetes.operator.* defaults for every resource and the Apache names of these settings (the Apache operator's flink-operator-config ConfigMap, mounted there by manifests/); absent at the default path = no defaults",
  }),
  knob({
    key: 'dynamicConfigEnabled',
    flag: 'dynamic-config',
    type: 'bool',
    default: true,
    description: 'pick up changes of the default configuration without a restart (resources are reconciled again with the new defaults)',
    apacheKey: 'kubernetes.operator.dynamic.config.enabled',
  }),
  knob({
    key: 'dynamicConfigCheckIntervalMs',
    flag: 'dynamic-config-check-interval',
    type: 'duration',
    default: 300_000,
    defaultText: '5m',
    description: 'how often the default configuration is read again for changes',
    apacheKey: 'kubernetes.operator.dynamic.config.check.interval',
    apacheDefaultText: '5 min',
  }),
];

/** The namespace of the pod we run in (in-cluster only). */
function serviceAccountNamespace(): string | undefined {
  try {
    return readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Markdown table of every knob (for the README). */
export function knobsMarkdownTable(): string {
  const rows = OPERATOR_KNOBS.map(
    (k) => `| \`--${k.flag}\` | \`${k.env}\` | \`${k.key}\` | ${k.apacheKey ? `\`${k.apacheKey}\`` : '-'} | ${k.defaultText} | ${k.description} |`,
  );
  return ['| flag | environment | config-file key | Apache name (also accepted) | default | meaning |', '|---|---|---|---|---|---|', ...rows].join('\n');
}
