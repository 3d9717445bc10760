/**
 * The operator's default-configuration file, read at start and again whenever it changes.
 *
 * The file is `<flinkConfDir>/config.yaml` (standard YAML, flat or nested keys), else
 * `<flinkConfDir>/flink-conf.yaml` (Flink 1.x's legacy flat format): the Apache Helm chart's
 * `flink-operator-config` ConfigMap mounted as a directory, which is how manifests/ ship it. Its
 * `kubernetes.operator.*` keys that name operator settings configure the process
 * (operator-config.ts, read once at start); every other key is a default of every resource's
 * flinkConfiguration (src/api/default-flink-configuration.ts), scoped per namespace and Flink
 * version.
 *
 * Dynamic configuration (`kubernetes.operator.dynamic.config.enabled`, default true): the file is
 * read again every `dynamic.config.check.interval` (default 5 min, as Apache; kubelet refreshes a
 * mounted ConfigMap within about a minute). A changed file replaces the defaults and tells the
 * listeners (the manager reconciles every resource again with them). Changed operator settings
 * take effect on restart, except the watched namespaces with `dynamic.namespaces.enabled`; the
 * log says which.
 *
 * Guarantees: `current()` always returns a complete, parsed configuration: a file that cannot be
 * read or parsed at start is a startup error naming it; on a later read it is logged and the last
 * good configuration stays (a half-written file never empties the defaults). Keys this operator
 * does not honour are reported once each, at start or when they first appear
 * (apache-option-catalog.ts): never silently ignored, never fatal.
 * Assumptions: the file is small (a ConfigMap, < 1 MiB); reading it is cheap.
 * Caveats: a change is seen at the next check, not at once; an explicitly given directory that
 * does not exist is an error, the default one (/opt/flink/conf) missing means no defaults.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DefaultFlinkConfiguration } from '../api/default-flink-configuration.js';
import { flattenFlinkConfiguration, LEGACY_FLINK_CONFIG_FILE, parseLegacyFlinkConf, STANDARD_FLINK_CONFIG_FILE } from '../api/flink-configuration.js';
import { isOperatorWideKey, unhonouredOperatorKeys } from './apache-option-catalog.js';
import { OperatorConfigError } from './operator-config.js';

/** The default-configuration file as read: its path and flat keys; undefined = no file. */
export interface DefaultConfigurationFile {
  readonly name: string;
  readonly text: string;
  readonly flat: Readonly<Record<string, string>>;
}

/**
 * Reads `<dir>/config.yaml`, else `<dir>/flink-conf.yaml`. Undefined when neither exists;
 * throws OperatorConfigError for a file that exists but is not valid YAML or not a mapping.
 */
export function readDefaultConfigurationFile(dir: string): DefaultConfigurationFile | undefined {
  for (const file of [STANDARD_FLINK_CONFIG_FILE, LEGACY_FLINK_CONFIG_FILE]) {
    const name = join(dir, file);
    let text: string;
    try {
      text = readFileSync(name, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      throw new OperatorConfigError(`${name}: cannot be read: ${(error as Error).message}`);
    }
    return { name, text, flat: parseDefaultConfigurationText(name, text) };
  }
  return undefined;
}

/** The flat keys of a default-configuration file's text (format chosen by the file name). */
export function parseDefaultConfigurationText(name: string, text: string): Record<string, string> {
  if (name.endsWith(LEGACY_FLINK_CONFIG_FILE)) return parseLegacyFlinkConf(text);
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : parseYaml(text);
  } catch (error) {
    throw new OperatorConfigError(`${name}: not valid YAML: ${(error as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new OperatorConfigError(`${name}: expected a mapping of configuration keys`);
  return flattenFlinkConfiguration(parsed as Record<string, unknown>);
}

/** Builds the defaults of a flat file (operator-wide keys left out). */
export function defaultConfigurationOf(flat: Readonly<Record<string, string>>): DefaultFlinkConfiguration {
  return new DefaultFlinkConfiguration(flat, isOperatorWideKey);
}

/** Where the defaults come from, read-only (what the reconcilers get). */
export interface DefaultConfigurationReader {
  current(): DefaultFlinkConfiguration;
}

/** No default configuration (an operator without a configuration file, unit tests). */
export const NO_DEFAULT_CONFIGURATION: DefaultConfigurationReader = { current: () => DefaultFlinkConfiguration.EMPTY };

/** What the source reports through (the operator's logger fits). */
export interface DefaultConfigurationLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface DefaultConfigurationSourceOptions {
  readonly dir: string;
  /** The directory was given explicitly (flag or FLINK_CONF_DIR): missing is an error. */
  readonly explicit: boolean;
  /** The file as read at start (operator-config.ts used it already); undefined = none. */
  readonly initial: DefaultConfigurationFile | undefined;
  readonly dynamic: boolean;
  readonly checkIntervalMs: number;
  readonly log: DefaultConfigurationLog;
}

export class DefaultConfigurationSource implements DefaultConfigurationReader {
  private configuration: DefaultFlinkConfiguration;
  private lastText: string | undefined;
  private readonly reported = new Set<string>();
  private readonly listeners: Array<(next: DefaultFlinkConfiguration, previous: DefaultFlinkConfiguration) => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: DefaultConfigurationSourceOptions) {
    if (options.initial === undefined && options.explicit) {
      throw new OperatorConfigError(
        `${options.dir}: no ${STANDARD_FLINK_CONFIG_FILE} or ${LEGACY_FLINK_CONFIG_FILE} there; create one (it may be empty) or leave --flink-conf-dir / FLINK_CONF_DIR unset`,
      );
    }
    this.lastText = options.initial?.text;
    this.configuration = defaultConfigurationOf(options.initial?.flat ?? {});
    if (options.initial) {
      options.log.info(
        { file: options.initial.name, keys: Object.keys(options.initial.flat).length },
        `default configuration read from ${options.initial.name}`,
      );
    }
    this.report(this.configuration);
  }

  current(): DefaultFlinkConfiguration {
    return this.configuration;
  }

  /** Calls `listener` after each change of the defaults. */
  onChange(listener: (next: DefaultFlinkConfiguration, previous: DefaultFlinkConfiguration) => void): void {
    this.listeners.push(listener);
  }

  /** Starts checking the file every checkIntervalMs (no-op when dynamic configuration is off). */
  start(): void {
    if (!this.options.dynamic || this.timer) return;
    this.timer = setInterval(() => this.check(), this.options.checkIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads the file again; applies it when it changed. Returns whether the defaults changed. */
  check(): boolean {
    let file: DefaultConfigurationFile | undefined;
    try {
      file = readDefaultConfigurationFile(this.options.dir);
    } catch (error) {
      this.options.log.error({ dir: this.options.dir, err: (error as Error).message }, 'default configuration not reloaded; the last good one stays');
      return false;
    }
    if (file?.text === this.lastText) return false;
    const previous = this.configuration;
    const next = defaultConfigurationOf(file?.flat ?? {});
    this.lastText = file?.text;
    this.configuration = next;
    const changed = changedKeys(previous.all, next.all);
    this.options.log.info(
      { file: file?.name ?? this.options.dir, changed },
      `default configuration changed (${changed.length} key(s)); every resource is reconciled again with it`,
    );
    const process = changed.filter(isOperatorWideKey);
    if (process.length > 0) {
      this.options.log.warn({ keys: process }, `operator settings changed in the default configuration take effect on restart: ${process.join(', ')}`);
    }
    this.report(next);
    for (const listener of this.listeners) listener(next, previous);
    return true;
  }

  private report(configuration: DefaultFlinkConfiguration): void {
    for (const problem of [...configuration.problems, ...unhonouredOperatorKeys(configuration.all)]) {
      const line = `${problem.key}: ${problem.message}`;
      if (this.reported.has(line)) continue;
      this.reported.add(line);
      this.options.log.warn({ key: problem.key }, `default configuration: ${line}`);
    }
  }
}

/** Keys added, removed or changed between two flat configurations, sorted. */
export function changedKeys(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => before[key] !== after[key]).sort();
}
