import type { FlinkRestAccessSetting } from '../flink/flink-rest-access.js';
import { parse as parseYaml } from 'yaml';
import { parseFlinkDuration } from '../api/flink-configuration.js';
import { type Knob, OPERATOR_KNOBS } from './operator-knobs.js';

/**
 * The operator's configuration, resolved from the knobs of operator-knobs.ts (their flags,
 * environment variables, config-file keys, Apache names and defaults) and validated.
 *
 * Precedence (highest first): command-line flag > environment variable > config file (YAML or
 * JSON, `--config FILE` or FLINK_OPERATOR_CONFIG) > the default-configuration file's Apache names
 * (`apacheFile`) > default.
 * Durations accept `500ms`, `10s`, `1m`, `1h` or a plain number of milliseconds.
 */
export type LogFormat = 'json' | 'pretty';

export interface OperatorConfig {
  readonly kubeconfig: string | undefined;
  /** Watched namespaces; empty = all namespaces. */
  readonly namespaces: readonly string[];
  /**
   * Label selector of the FlinkDeployments, FlinkSessionJobs and FlinkStateSnapshots this install
   * owns (its shard, design/012-shards.md); undefined = all of them.
   */
  readonly labelSelector: string | undefined;
  /** Watched namespaces may change at run time (Manager.setWatchedNamespaces on a config change). */
  readonly dynamicNamespaces: boolean;
  readonly httpPort: number;
  readonly httpHost: string;
  readonly reconcileIntervalMs: number;
  readonly progressCheckIntervalMs: number;
  readonly observationHoldMs: number;
  readonly requeueJitter: number;
  readonly parallelism: number;
  /** `kubernetes.operator.retry.*` (controller.ts, rate-limiter.ts GenericRetry). */
  readonly retryBaseDelayMs: number;
  readonly retryMultiplier: number;
  /** undefined = no cap. */
  readonly retryMaxDelayMs: number | undefined;
  readonly retryMaxAttempts: number;
  /** `kubernetes.operator.rate-limiter.*` (rate-limiter.ts ReconcileRateLimiter); limit 0 = off. */
  readonly rateLimiterLimit: number;
  readonly rateLimiterRefreshPeriodMs: number;
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
  /** Directory of the default configuration file (config.yaml / flink-conf.yaml). */
  readonly flinkConfDir: string;
  readonly dynamicConfigEnabled: boolean;
  readonly dynamicConfigCheckIntervalMs: number;
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
  /**
   * The default-configuration file (flinkConfDir's config.yaml / flink-conf.yaml), flattened: its
   * `kubernetes.operator.*` keys that are knobs' `apacheKey`s set those knobs (below the config file);
   * every other key is left to the default configuration (src/runtime/default-configuration-source.ts).
   */
  readonly apacheFile?: { readonly name: string; readonly flat: Readonly<Record<string, string>> };
}

/** Resolves the configuration from its sources (see the module comment) and validates it. */
export function resolveOperatorConfig(sources: ConfigSources = {}): OperatorConfig {
  const env = sources.env ?? {};
  const fileValues = parseConfigFile(sources.file);
  const apacheValues = sources.apacheFile?.flat ?? {};
  const out: Record<string, unknown> = {};
  for (const k of OPERATOR_KNOBS) {
    const flagValue = sources.flags?.[k.key];
    const envValue = env[k.env];
    const apacheValue = k.apacheKey !== undefined ? apacheValues[k.apacheKey] : undefined;
    if (flagValue !== undefined && !(Array.isArray(flagValue) && flagValue.length === 0)) out[k.key] = convert(k, flagValue, `--${k.flag}`);
    else if (envValue !== undefined && envValue !== '') out[k.key] = convert(k, envValue, k.env);
    else if (fileValues[k.key] !== undefined) out[k.key] = convert(k, fileValues[k.key], sources.file!.name);
    else if (apacheValue !== undefined) out[k.key] = convertApacheValue(k, apacheValue, `${k.apacheKey} (${sources.apacheFile!.name})`);
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
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    const byApacheName = OPERATOR_KNOBS.find((k) => k.apacheKey === key);
    if (byApacheName) {
      out[byApacheName.key] = typeof value === 'string' ? apacheRawValue(byApacheName, value) : value;
      continue;
    }
    if (!known.has(key)) {
      const hint = key.startsWith('kubernetes.operator.')
        ? `; Apache operator keys that configure resources (and Flink keys) belong in the default configuration, <flink-conf-dir>/config.yaml`
        : '';
      throw new OperatorConfigError(`${file.name}: unknown setting "${key}"${hint} (known: ${[...known].join(', ')}, or their kubernetes.operator.* names)`);
    }
    out[key] = value;
  }
  return out;
}

/** A value written under a knob's Apache name, as the knob's raw value: durations in Flink's syntax. */
function apacheRawValue(k: Knob, value: string): unknown {
  if (k.fromApacheValue) return k.fromApacheValue(value);
  if (k.type === 'duration') {
    try {
      return parseFlinkDuration(value);
    } catch {
      return value; // convert() reports it with the knob's name
    }
  }
  return value;
}

function convertApacheValue(k: Knob, value: string, what: string): unknown {
  return convert(k, apacheRawValue(k, value), what);
}

function validate(c: OperatorConfig): void {
  const fail = (m: string) => {
    throw new OperatorConfigError(m);
  };
  if (c.httpPort > 65535) fail(`httpPort ${c.httpPort} is not a port`);
  if (c.parallelism < 1) fail('parallelism must be at least 1');
  if (c.reconcileIntervalMs <= 0 || c.progressCheckIntervalMs <= 0) fail('reconcile intervals must be positive');
  if (c.requeueJitter > 1) fail('requeueJitter must be between 0 and 1');
  if (c.retryBaseDelayMs <= 0 || (c.retryMaxDelayMs !== undefined && c.retryMaxDelayMs < c.retryBaseDelayMs)) fail('retry delays: need 0 < base ≤ max');
  if (c.retryMultiplier < 1) fail('retryMultiplier must be at least 1');
  if (c.watchRestartMinDelayMs <= 0 || c.watchRestartMaxDelayMs < c.watchRestartMinDelayMs) fail('watch restart delays: need 0 < min ≤ max');
  if (!(c.retryPeriodMs > 0 && c.retryPeriodMs < c.renewDeadlineMs && c.renewDeadlineMs < c.leaseDurationMs)) {
    fail(
      `leader election needs 0 < retry period (${c.retryPeriodMs} ms) < renew deadline (${c.renewDeadlineMs} ms) < lease duration (${c.leaseDurationMs} ms)`,
    );
  }
  if (c.eventBurst < 1) fail('eventBurst must be at least 1');
  if (!c.identity) fail('identity must not be empty');
}
