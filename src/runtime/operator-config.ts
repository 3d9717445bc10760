import type { FlinkRestAccessSetting } from '../flink/flink-rest-access.js';
import { STATE_CONFIGMAP_SELECTOR } from '../state/state-configmap-codec.js';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml } from 'yaml';

/**
 * The operator's configuration: every knob, its flag, environment variable, config-file key and
 * default, in one table (`OPERATOR_KNOBS`) from which the CLI flags, the env lookup, the config-file
 * reader and the README section are derived.
 *
 * Precedence (highest first): command-line flag > environment variable > config file (YAML or
 * JSON, `--config FILE` or FLINK_OPERATOR_CONFIG) > default.
 * Durations accept `500ms`, `10s`, `1m`, `1h` or a plain number of milliseconds.
 */
export type LogFormat = 'json' | 'pretty';

export interface OperatorConfig {
  readonly kubeconfig: string | undefined;
  /** Watched namespaces; empty = all namespaces. */
  readonly namespaces: readonly string[];
  readonly httpPort: number;
  readonly httpHost: string;
  readonly reconcileIntervalMs: number;
  readonly progressCheckIntervalMs: number;
  readonly requeueJitter: number;
  readonly parallelism: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly shutdownTimeoutMs: number;
  readonly leaderElect: boolean;
  readonly leaseName: string;
  readonly leaseNamespace: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly logFormat: LogFormat;
  readonly logLevel: string;
  readonly flinkRestAccess: FlinkRestAccessSetting;
  readonly ownedResourceSelector: string;
  readonly stateConfigMapSelector: string;
  readonly watchRestartMinDelayMs: number;
  readonly watchRestartMaxDelayMs: number;
  readonly eventBurst: number;
  readonly eventRefillIntervalMs: number;
  /** jarURI schemes a FlinkSessionJob may use (the Apache `kubernetes.operator.user.artifacts.allowed-schemes`). */
  readonly sessionJobJarSchemes: readonly string[];
  /** Fetch session-job jars from loopback, link-local and private addresses too. */
  readonly sessionJobJarRestrictedHosts: boolean;
}

type KnobType = 'string' | 'int' | 'number' | 'duration' | 'bool' | 'list' | 'enum';
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
  }),
  knob({ key: 'httpPort', flag: 'http-port', type: 'int', default: 8085, description: 'port serving /metrics, /healthz and /readyz (0 = any free port)' }),
  knob({ key: 'httpHost', flag: 'http-host', type: 'string', default: '0.0.0.0', description: 'address the HTTP port binds to' }),
  knob({
    key: 'reconcileIntervalMs',
    flag: 'reconcile-interval',
    type: 'duration',
    default: 60_000,
    defaultText: '60s',
    description: 'periodic reconcile of every FlinkDeployment when nothing happens (jittered)',
  }),
  knob({
    key: 'progressCheckIntervalMs',
    flag: 'progress-check-interval',
    type: 'duration',
    default: 10_000,
    defaultText: '10s',
    description: 'reconcile interval while a transition is in progress (the reconciler asks for it through requeueAfter)',
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
  }),
  knob({
    key: 'retryBaseDelayMs',
    flag: 'retry-base-delay',
    type: 'duration',
    default: 5,
    defaultText: '5ms',
    description: 'first retry delay after a failed reconcile; doubles per consecutive failure of the same key',
  }),
  knob({
    key: 'retryMaxDelayMs',
    flag: 'retry-max-delay',
    type: 'duration',
    default: 300_000,
    defaultText: '300s',
    description: 'cap of the per-key retry delay',
  }),
  knob({
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout',
    type: 'duration',
    default: 20_000,
    defaultText: '20s',
    description: 'on SIGTERM, how long in-flight reconciles may finish before they are aborted',
  }),
  knob({
    key: 'leaderElect',
    flag: 'leader-elect',
    type: 'bool',
    default: true,
    description:
      'leader election on a coordination.k8s.io/v1 Lease: only the leader reconciles, other replicas wait as standbys. --no-leader-elect (false) is for one replica: the Lease is still held, and an instance that finds another live one holding it refuses to act and reports it (log, Warning Event on the Lease, metric flink_operator_second_instance)',
  }),
  knob({ key: 'leaseName', flag: 'lease-name', type: 'string', default: 'flink-operator-lock', description: 'name of the leader-election Lease' }),
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
  }),
  knob({
    key: 'renewDeadlineMs',
    flag: 'renew-deadline',
    type: 'duration',
    default: 10_000,
    defaultText: '10s',
    description: 'the leader stops reconciling if it could not renew for this long (must be < lease duration)',
  }),
  knob({
    key: 'retryPeriodMs',
    flag: 'retry-period',
    type: 'duration',
    default: 2_000,
    defaultText: '2s',
    description: 'interval between Lease acquire/renew attempts (must be < renew deadline)',
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
  }),
  knob({
    key: 'sessionJobJarRestrictedHosts',
    flag: 'session-job-jar-restricted-hosts',
    type: 'bool',
    default: false,
    description:
      'let session-job jars be fetched from loopback, link-local (cloud metadata) and private addresses; off by default so a jarURI cannot make the operator read internal endpoints',
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

export class OperatorConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperatorConfigError';
  }
}

/** Parses `500ms`, `10s`, `1.5m`, `2h` or a plain number of milliseconds. */
export function parseDurationMs(value: unknown, what = 'duration'): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const match = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
    if (match) {
      const n = Number(match[1]);
      const unit = match[2] ?? 'ms';
      return Math.round(n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!);
    }
  }
  throw new OperatorConfigError(`${what}: invalid duration ${JSON.stringify(value)} (use e.g. 500ms, 10s, 1m, or milliseconds)`);
}

function convert(k: Knob, raw: unknown, source: string): unknown {
  const what = `${k.key} (${source})`;
  switch (k.type) {
    case 'string':
      if (typeof raw !== 'string' && typeof raw !== 'number') throw new OperatorConfigError(`${what}: expected a string`);
      return String(raw);
    case 'int':
    case 'number': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      if (!Number.isFinite(n) || n < 0 || (k.type === 'int' && !Number.isInteger(n)))
        throw new OperatorConfigError(`${what}: expected a non-negative ${k.type === 'int' ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`);
      return n;
    }
    case 'duration':
      return parseDurationMs(raw, what);
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string' && /^(true|1|yes|on)$/i.test(raw)) return true;
      if (typeof raw === 'string' && /^(false|0|no|off)$/i.test(raw)) return false;
      throw new OperatorConfigError(`${what}: expected true or false, got ${JSON.stringify(raw)}`);
    case 'list': {
      const items = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(',') : undefined;
      if (!items) throw new OperatorConfigError(`${what}: expected a list`);
      const list = items.map((s) => s.trim()).filter((s) => s.length > 0);
      const unknown = k.values ? list.filter((item) => !k.values!.includes(item)) : [];
      if (unknown.length > 0) throw new OperatorConfigError(`${what}: expected values among ${k.values!.join(', ')}, got ${unknown.join(', ')}`);
      return list;
    }
    case 'enum':
      if (typeof raw !== 'string' || !k.values!.includes(raw))
        throw new OperatorConfigError(`${what}: expected one of ${k.values!.join(', ')}, got ${JSON.stringify(raw)}`);
      return raw;
  }
}

export interface ConfigSources {
  /** Values from command-line flags, keyed by OperatorConfig key; undefined = not given. */
  readonly flags?: Partial<Record<keyof OperatorConfig, unknown>>;
  readonly env?: NodeJS.ProcessEnv;
  /** The config file's text (YAML or JSON) and its name for messages. */
  readonly file?: { readonly name: string; readonly text: string };
}

/** Resolves the configuration from its sources (see the module comment) and validates it. */
export function resolveOperatorConfig(sources: ConfigSources = {}): OperatorConfig {
  const env = sources.env ?? {};
  const fileValues = parseConfigFile(sources.file);
  const out: Record<string, unknown> = {};
  for (const k of OPERATOR_KNOBS) {
    const flagValue = sources.flags?.[k.key];
    const envValue = env[k.env];
    if (flagValue !== undefined && !(Array.isArray(flagValue) && flagValue.length === 0)) out[k.key] = convert(k, flagValue, `--${k.flag}`);
    else if (envValue !== undefined && envValue !== '') out[k.key] = convert(k, envValue, k.env);
    else if (fileValues[k.key] !== undefined) out[k.key] = convert(k, fileValues[k.key], sources.file!.name);
    else out[k.key] = typeof k.default === 'function' ? k.default(env) : k.default;
  }
  const config = out as unknown as OperatorConfig;
  validate(config);
  return config;
}

function parseConfigFile(file: ConfigSources['file']): Record<string, unknown> {
  if (!file) return {};
  let parsed: unknown;
  try {
    parsed = parseYaml(file.text);
  } catch (error) {
    throw new OperatorConfigError(`${file.name}: not valid YAML/JSON: ${(error as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new OperatorConfigError(`${file.name}: expected a mapping of settings`);
  const known = new Set<string>(OPERATOR_KNOBS.map((k) => k.key));
  for (const key of Object.keys(parsed)) {
    if (!known.has(key)) throw new OperatorConfigError(`${file.name}: unknown setting "${key}" (known: ${[...known].join(', ')})`);
  }
  return parsed as Record<string, unknown>;
}

function validate(c: OperatorConfig): void {
  const fail = (m: string) => {
    throw new OperatorConfigError(m);
  };
  if (c.httpPort > 65535) fail(`httpPort ${c.httpPort} is not a port`);
  if (c.parallelism < 1) fail('parallelism must be at least 1');
  if (c.reconcileIntervalMs <= 0 || c.progressCheckIntervalMs <= 0) fail('reconcile intervals must be positive');
  if (c.requeueJitter > 1) fail('requeueJitter must be between 0 and 1');
  if (c.retryBaseDelayMs <= 0 || c.retryMaxDelayMs < c.retryBaseDelayMs) fail('retry delays: need 0 < base ≤ max');
  if (c.watchRestartMinDelayMs <= 0 || c.watchRestartMaxDelayMs < c.watchRestartMinDelayMs) fail('watch restart delays: need 0 < min ≤ max');
  if (!(c.retryPeriodMs > 0 && c.retryPeriodMs < c.renewDeadlineMs && c.renewDeadlineMs < c.leaseDurationMs)) {
    fail(
      `leader election needs 0 < retry period (${c.retryPeriodMs} ms) < renew deadline (${c.renewDeadlineMs} ms) < lease duration (${c.leaseDurationMs} ms)`,
    );
  }
  if (c.eventBurst < 1) fail('eventBurst must be at least 1');
  if (!c.identity) fail('identity must not be empty');
}

/** Markdown table of every knob (for the README). */
export function knobsMarkdownTable(): string {
  const rows = OPERATOR_KNOBS.map((k) => `| \`--${k.flag}\` | \`${k.env}\` | \`${k.key}\` | ${k.defaultText} | ${k.description} |`);
  return ['| flag | environment | config-file key | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}
