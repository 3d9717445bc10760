/**
 * `spec.flinkConfiguration`: reading it the way Flink and the Apache operator do.
 *
 * The CRD accepts both a flat string map (`state.savepoints.dir: s3://...`) and nested YAML
 * (`state: { savepoints.dir: s3://... }`) (FLINK-37406). Everything that reads configuration goes
 * through {@link flattenFlinkConfiguration} first, so both spellings mean the same thing:
 *
 * - nested keys are joined with `.`;
 * - arrays become `;`-joined strings (Flink's list syntax);
 * - numbers and booleans become their string form (`2` → `"2"`, `true` → `"true"`);
 * - `null` values are dropped (an unset key).
 *
 * When the flat and nested spellings of one key are both present, the one that comes later in the
 * document wins (as when Flink reads a YAML file with a repeated key).
 *
 * Which file Flink reads the configuration from depends on its version ({@link flinkConfigFileOf}):
 * Flink 1.15–1.18 read only `conf/flink-conf.yaml`, in Flink's legacy flat format; Flink 1.19 and
 * 1.20 read `config.yaml` (standard YAML) and fall back to `flink-conf.yaml` when it is absent;
 * Flink 2.x reads only `config.yaml` (FLIP-366; Flink's GlobalConfiguration of each version). The
 * legacy format cannot carry every value ({@link legacyFlinkConfValueProblem}).
 */
import type { FlinkDeploymentSpec, FlinkVersion } from './flink-deployment-spec.js';

/** `execution.checkpointing.savepoint-dir` (Flink ≥ 1.20 name) or its older alias. */
export const SAVEPOINT_DIRECTORY_KEYS = ['execution.checkpointing.savepoint-dir', 'state.savepoints.dir'] as const;
/** `execution.checkpointing.dir` (Flink ≥ 1.20 name) or its older alias. */
export const CHECKPOINT_DIRECTORY_KEYS = ['execution.checkpointing.dir', 'state.checkpoints.dir'] as const;
/** `high-availability.type` (Flink ≥ 1.17 name) or the legacy `high-availability`. */
export const HIGH_AVAILABILITY_KEYS = ['high-availability.type', 'high-availability'] as const;

/** `kubernetes.operator.resource.deletion.propagation` values: DeleteOptions.propagationPolicy (Kubernetes "Use cascading deletion"). */
export const DELETION_PROPAGATIONS = ['Foreground', 'Background', 'Orphan'] as const;
export type DeletionPropagation = (typeof DELETION_PROPAGATIONS)[number];
export const DELETION_PROPAGATION_KEY = 'kubernetes.operator.resource.deletion.propagation';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalarToString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

function flattenInto(out: Record<string, string>, prefix: string, value: unknown): void {
  if (value === null || value === undefined) return;
  if (isPlainObject(value)) {
    for (const [key, inner] of Object.entries(value)) {
      flattenInto(out, prefix === '' ? key : `${prefix}.${key}`, inner);
    }
    return;
  }
  if (prefix === '') return;
  // A key set again later in the document wins; delete first so the key moves to its latest position.
  delete out[prefix];
  if (Array.isArray(value)) {
    out[prefix] = value
      .filter((item) => item !== null && item !== undefined)
      .map(scalarToString)
      .join(';');
    return;
  }
  out[prefix] = scalarToString(value);
}

/**
 * The flat `key → string` view of a flinkConfiguration, flat or nested.
 *
 *   flattenFlinkConfiguration({ state: { 'savepoints.dir': 's3://b/sp' }, 'taskmanager.numberOfTaskSlots': 2 })
 *   // → { 'state.savepoints.dir': 's3://b/sp', 'taskmanager.numberOfTaskSlots': '2' }
 */
export function flattenFlinkConfiguration(config: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!config) return out;
  flattenInto(out, '', config);
  return out;
}

/** One configuration value of a spec, looked up in the flattened configuration. */
export function configValue(spec: FlinkDeploymentSpec, key: string): string | undefined {
  return flattenFlinkConfiguration(spec.flinkConfiguration)[key];
}

function firstNonEmpty(flat: Record<string, string>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = flat[key]?.trim();
    if (value) return value;
  }
  return undefined;
}

/** The savepoint directory: `execution.checkpointing.savepoint-dir`, else `state.savepoints.dir`. */
export function savepointDirectory(flat: Record<string, string>): string | undefined {
  return firstNonEmpty(flat, SAVEPOINT_DIRECTORY_KEYS);
}

/** The checkpoint directory: `execution.checkpointing.dir`, else `state.checkpoints.dir`. */
export function checkpointDirectory(flat: Record<string, string>): string | undefined {
  return firstNonEmpty(flat, CHECKPOINT_DIRECTORY_KEYS);
}

/**
 * Whether Flink high availability is configured: `high-availability.type` (or the legacy key
 * `high-availability`) is set to anything other than `NONE` (any case). `kubernetes`,
 * `zookeeper` and factory class names all count.
 */
export function isHighAvailabilityEnabled(flat: Record<string, string>): boolean {
  const value = firstNonEmpty(flat, HIGH_AVAILABILITY_KEYS);
  return value !== undefined && value.toUpperCase() !== 'NONE';
}

/** Milliseconds per unit, by every unit label Flink's TimeUtils accepts (lower case). */
const MILLIS_PER_UNIT: ReadonlyArray<[readonly string[], number]> = [
  [['d', 'day', 'days'], 86_400_000],
  [['h', 'hour', 'hours'], 3_600_000],
  [['m', 'min', 'mins', 'minute', 'minutes'], 60_000],
  [['s', 'sec', 'secs', 'second', 'seconds'], 1_000],
  [['ms', 'milli', 'millis', 'millisecond', 'milliseconds'], 1],
  [['us', 'µs', 'micro', 'micros', 'microsecond', 'microseconds'], 0.001],
  [['ns', 'nano', 'nanos', 'nanosecond', 'nanoseconds'], 0.000_001],
];

const UNIT_TO_MILLIS = new Map<string, number>(MILLIS_PER_UNIT.flatMap(([labels, ms]) => labels.map((l) => [l, ms] as [string, number])));

/**
 * A Flink duration in milliseconds, as Flink's `TimeUtils.parseDuration` reads it: a non-negative
 * whole number, optional whitespace, an optional unit (`ms`, `s`, `min`, `h`, `d`, their long
 * forms, `us`, `ns`; case-insensitive). No unit means milliseconds.
 *
 *   parseFlinkDuration('30s') === 30_000; parseFlinkDuration('1 min') === 60_000; parseFlinkDuration('500') === 500
 *
 * @throws Error naming the value and the accepted forms, for anything else (`'soon'`, `'-1s'`, `'1.5h'`, `''`).
 */
export function parseFlinkDuration(value: string): number {
  const match = /^\s*(\d+)\s*([a-zA-Zµ]*)\s*$/.exec(value);
  if (!match) {
    throw new Error(`'${value}' is not a Flink duration; use a whole number with an optional unit, e.g. 500ms, 30s, 1 min, 2h, 1d`);
  }
  const amount = Number(match[1]);
  const unit = (match[2] ?? '').toLowerCase();
  if (unit === '') return amount;
  const factor = UNIT_TO_MILLIS.get(unit);
  if (factor === undefined) {
    throw new Error(`'${value}' has an unknown time unit '${match[2]}'; use one of ms, s, min, h, d (or their long forms)`);
  }
  return amount * factor;
}

/** The configuration file of Flink ≥ 1.19: standard YAML (flat or nested keys, quoted values). */
export const STANDARD_FLINK_CONFIG_FILE = 'config.yaml';
/** The configuration file of Flink 1.x before 1.19: one `key: value` per line, Flink's legacy flat format. */
export const LEGACY_FLINK_CONFIG_FILE = 'flink-conf.yaml';
export type FlinkConfigFileName = typeof STANDARD_FLINK_CONFIG_FILE | typeof LEGACY_FLINK_CONFIG_FILE;

/** Flink versions (spec.flinkVersion) that read only `flink-conf.yaml`; the older ones are not supported. */
const LEGACY_CONFIG_FILE_VERSIONS: ReadonlySet<FlinkVersion> = new Set(['v1_13', 'v1_14', 'v1_15', 'v1_16', 'v1_17', 'v1_18']);

/**
 * The file the operator renders the configuration into for `version`: `flink-conf.yaml` for
 * v1_15–v1_18 (the only file they read), `config.yaml` for v1_19 and newer (1.19 and 1.20 would
 * also read a `flink-conf.yaml`, but only when no `config.yaml` is there; 2.x never does).
 * Unset: `config.yaml`, the file of the operator's default version (v1_20).
 */
export function flinkConfigFileOf(version: FlinkVersion | undefined): FlinkConfigFileName {
  return version !== undefined && LEGACY_CONFIG_FILE_VERSIONS.has(version) ? LEGACY_FLINK_CONFIG_FILE : STANDARD_FLINK_CONFIG_FILE;
}

/** Java's String.trim() (how Flink 1.x trims configuration keys and values): every char up to U+0020 goes at either end. */
export function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

/** Why a key or value cannot go into `flink-conf.yaml` unchanged, and how to change it. */
export interface LegacyFlinkConfProblem {
  /** What is wrong, e.g. `contains '#', and Flink 1.x reads everything from '#' on as a comment`. */
  readonly reason: string;
  /** What to change in the value (or key) itself, e.g. `remove the '#'`. */
  readonly fix: string;
}

/**
 * Why `value` cannot be written to `flink-conf.yaml` so that Flink 1.x reads it back unchanged;
 * undefined when it can. The rules of Flink 1.x `GlobalConfiguration.loadYAMLResource`: the file
 * is read line by line (`\n`, `\r`), everything from the first `#` on is a comment, the line is
 * split at the first `": "`, key and value are trimmed (Java's trim) and a line with an empty key
 * or value is skipped. Values are not unquoted: quotes, `: ` and YAML syntax inside a value are
 * carried verbatim.
 */
export function legacyFlinkConfValueProblem(value: string): LegacyFlinkConfProblem | undefined {
  if (/[\n\r]/.test(value)) return { reason: 'contains a line break, and flink-conf.yaml holds one `key: value` per line', fix: 'put the value on one line' };
  if (value.includes('#')) return { reason: "contains '#', and Flink 1.x reads everything from '#' on as a comment", fix: "remove the '#'" };
  if (value === '') return { reason: 'is empty, and Flink 1.x skips a line with an empty value', fix: 'remove the key or give it a value' };
  if (javaTrim(value) !== value) return { reason: 'has leading or trailing whitespace, which Flink 1.x trims away', fix: 'remove the whitespace' };
  return undefined;
}

/** Like {@link legacyFlinkConfValueProblem}, for a key; a key also must not contain `": "`, where Flink 1.x splits the line. */
export function legacyFlinkConfKeyProblem(key: string): LegacyFlinkConfProblem | undefined {
  if (/[\n\r]/.test(key)) return { reason: 'the key contains a line break, and flink-conf.yaml holds one `key: value` per line', fix: 'rename the key' };
  if (key.includes('#')) return { reason: "the key contains '#', and Flink 1.x reads everything from '#' on as a comment", fix: 'rename the key' };
  if (key.includes(': ')) return { reason: "the key contains ': ', where Flink 1.x splits the key from the value", fix: 'rename the key' };
  if (javaTrim(key) !== key) return { reason: 'the key has leading or trailing whitespace, which Flink 1.x trims away', fix: 'remove the whitespace' };
  return undefined;
}

/**
 * Reads `flink-conf.yaml` text as Flink 1.x does (GlobalConfiguration.loadYAMLResource): line by
 * line, everything from the first `#` on is a comment, the rest is split at the first `": "`, key and
 * value are trimmed (Java's trim), a line without `": "` or with an empty key or value is skipped, a
 * later line wins, and values are not unquoted. Never throws (Flink accepts a malformed file).
 */
export function parseLegacyFlinkConf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r\n|\n|\r/)) {
    const content = javaTrim(line.split('#', 1)[0] ?? '');
    const separator = content.indexOf(': ');
    if (content === '' || separator < 0) continue;
    const key = javaTrim(content.slice(0, separator));
    const value = javaTrim(content.slice(separator + 2));
    if (key === '' || value === '') continue;
    delete out[key];
    out[key] = value;
  }
  return out;
}
