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
 */
import type { FlinkDeploymentSpec } from './flink-deployment-spec.js';

/** `execution.checkpointing.savepoint-dir` (Flink ≥ 1.20 name) or its older alias. */
export const SAVEPOINT_DIRECTORY_KEYS = ['execution.checkpointing.savepoint-dir', 'state.savepoints.dir'] as const;
/** `execution.checkpointing.dir` (Flink ≥ 1.20 name) or its older alias. */
export const CHECKPOINT_DIRECTORY_KEYS = ['execution.checkpointing.dir', 'state.checkpoints.dir'] as const;
/** `high-availability.type` (Flink ≥ 1.17 name) or the legacy `high-availability`. */
export const HIGH_AVAILABILITY_KEYS = ['high-availability.type', 'high-availability'] as const;

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
    out[prefix] = value.filter((item) => item !== null && item !== undefined).map(scalarToString).join(';');
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
