/**
 * The Flink configuration as a simulated JobManager sees it: the configuration file the operator
 * rendered into ConfigMap `flink-config-<name>` (the one the JobManager's Flink version reads),
 * plus `-D` dynamic properties from the container args, reduced to the handful of settings the
 * simulation acts on.
 *
 * Reading rules follow Flink (`GlobalConfiguration` + `ConfigOptions` fallback keys):
 * - which file ({@link loadFlinkConfiguration}): Flink 1.x before 1.19 reads only
 *   `flink-conf.yaml`; 1.19 and 1.20 read `config.yaml`, else `flink-conf.yaml`; 2.x only
 *   `config.yaml`; the file missing from a mounted configuration directory stops the JobManager;
 * - `config.yaml` may be flat (`a.b: "x"`) or nested (`a: {b: x}`); nested keys are joined with `.`;
 * - `flink-conf.yaml` is Flink 1.x's legacy flat format ({@link parseLegacyFlinkConf}): `key: value`
 *   lines, '#' comments, values taken verbatim (not unquoted).
 * - Where Flink has a new key and a deprecated fallback key, the new key wins.
 * - Durations accept Flink's `TimeUtils.parseDuration` forms: `500`, `500 ms`, `30s`, `10 s`, `2 min`, `1h`, `1 d`.
 *
 * `simulator.*` keys are reserved for the simulation (Flink ignores unknown keys); they select
 * failure modes and per-JobManager timing overrides. See SIMULATOR_KEYS below and
 * design/003b-simulation.md for the full list.
 */
import { parse as parseYaml } from 'yaml';
import { SIMULATED_VERTEX_ID } from './flink-job.js';

/** Flat key → string value view of a Flink configuration. */
export type FlinkConfigMap = ReadonlyMap<string, string>;

/** Parses `config.yaml` text (flat or nested YAML) into a flat key → value map. Invalid YAML throws. */
export function parseFlinkConfigYaml(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const doc: unknown = text.trim() === '' ? {} : parseYaml(text);
  if (doc === null || doc === undefined) return out;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error('Flink config.yaml must be a YAML mapping');
  flatten(doc as Record<string, unknown>, '', out);
  return out;
}

/**
 * Java's String.trim(): every char up to U+0020 at either end. (The simulation shares no code with
 * the operator, which has its own in src/api/flink-configuration.ts: a Flink stand-in that reused
 * the operator's parser would hide the operator's parsing bugs.)
 */
function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

/**
 * Parses `flink-conf.yaml` text as Flink 1.x does (GlobalConfiguration.loadYAMLResource): line by
 * line, everything from the first '#' is a comment; the rest is trimmed and split at the first
 * ": "; key and value are trimmed; a line without ": ", or with an empty key or value, is skipped
 * (Flink logs a warning); a later line wins. Values are NOT unquoted: `a: "x"` is the three
 * characters `"x"`. Never throws (Flink accepts a malformed file).
 */
export function parseLegacyFlinkConf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r\n|\n|\r/)) {
    const conf = javaTrim(line.split('#', 1)[0]);
    const separator = conf.indexOf(': ');
    if (conf === '' || separator < 0) continue;
    const key = javaTrim(conf.slice(0, separator));
    const value = javaTrim(conf.slice(separator + 2));
    if (key !== '' && value !== '') out.set(key, value);
  }
  return out;
}

export const STANDARD_CONFIG_FILE = 'config.yaml';
export const LEGACY_CONFIG_FILE = 'flink-conf.yaml';

/** The configuration a Flink process loaded, and from which file (null: no configuration directory mounted). */
export interface LoadedFlinkConfiguration {
  readonly file: typeof STANDARD_CONFIG_FILE | typeof LEGACY_CONFIG_FILE | null;
  readonly config: Map<string, string>;
}

/**
 * What Flink `version` (`1.17.2`, `2.0.0`) loads from its configuration directory, given the
 * directory's files (ConfigMap data; undefined = nothing mounted over the image's own directory,
 * whose defaults the simulation treats as empty). As Flink's GlobalConfiguration.loadConfiguration:
 * - before 1.19: `flink-conf.yaml` only, legacy format; a `config.yaml` next to it is ignored;
 * - 1.19, 1.20: `config.yaml` (standard YAML) when present, else `flink-conf.yaml` (legacy format);
 * - 2.x: `config.yaml` only;
 * - none of the files it reads → throws Flink's IllegalConfigurationException text (the JobManager
 *   exits at start, so the container crash-loops).
 * Invalid standard YAML throws too ("Error parsing YAML configuration.").
 */
export function loadFlinkConfiguration(files: Readonly<Record<string, string>> | undefined, version: string): LoadedFlinkConfiguration {
  if (files === undefined) return { file: null, config: new Map() };
  const [major = 1, minor = 0] = version.split('.').map(Number);
  const readsStandard = major >= 2 || (major === 1 && minor >= 19);
  const readsLegacy = major < 2;
  if (readsStandard && files[STANDARD_CONFIG_FILE] !== undefined) {
    return { file: STANDARD_CONFIG_FILE, config: parseFlinkConfigYaml(files[STANDARD_CONFIG_FILE]) };
  }
  if (readsLegacy && files[LEGACY_CONFIG_FILE] !== undefined) {
    return { file: LEGACY_CONFIG_FILE, config: parseLegacyFlinkConf(files[LEGACY_CONFIG_FILE]) };
  }
  const expected = `/opt/flink/conf/${readsStandard ? STANDARD_CONFIG_FILE : LEGACY_CONFIG_FILE}`;
  throw new Error(`org.apache.flink.configuration.IllegalConfigurationException: The Flink config file '${expected}' (${expected}) does not exist.`);
}

/** A YAML scalar as Flink's configuration text (a nested list or map inside a list is its JSON). */
function scalarText(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
    ? String(value)
    : JSON.stringify(value);
}

function flatten(node: Record<string, unknown>, prefix: string, out: Map<string, string>): void {
  for (const [key, value] of Object.entries(node)) {
    const full = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      flatten(value as Record<string, unknown>, full, out);
    } else if (Array.isArray(value)) {
      out.set(full, value.map((v) => scalarText(v)).join(';'));
    } else if (value !== null && value !== undefined) {
      out.set(full, scalarText(value));
    }
  }
}

const DURATION_UNITS: ReadonlyArray<[RegExp, number]> = [
  [/^(ns|nano|nanos|nanosecond|nanoseconds)$/, 1e-6],
  [/^(µs|us|micro|micros|microsecond|microseconds)$/, 1e-3],
  [/^(ms|milli|millis|millisecond|milliseconds)$/, 1],
  [/^(s|sec|secs|second|seconds)$/, 1000],
  [/^(m|min|mins|minute|minutes)$/, 60_000],
  [/^(h|hour|hours)$/, 3_600_000],
  [/^(d|day|days)$/, 86_400_000],
];

/** Parses a Flink duration string to milliseconds (a bare number is milliseconds). Throws on garbage. */
export function parseFlinkDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Zµ]*)\s*$/.exec(text);
  if (!match) throw new Error(`invalid Flink duration "${text}"`);
  const amount = Number(match[1]);
  const unit = (match[2] ?? '').toLowerCase();
  if (unit === '') return amount;
  for (const [pattern, factor] of DURATION_UNITS) if (pattern.test(unit)) return Math.round(amount * factor);
  throw new Error(`invalid Flink duration unit "${match[2]}" in "${text}"`);
}

/** Keys reserved for the simulation; Flink itself ignores them. Values documented in design/003b-simulation.md. */
export const SIMULATOR_KEYS = {
  /** Duration after the job reaches RUNNING at which it FAILS with a simulated user exception (`0` = right at start). */
  jobFailAfter: 'simulator.job.fail-after',
  /** Duration after the job reaches RUNNING at which it FINISHES on its own (a bounded job). */
  jobFinishAfter: 'simulator.job.finish-after',
  /** `fail`: every savepoint (and stop-with-savepoint) fails; `hang`: it stays IN_PROGRESS forever. */
  savepointFailure: 'simulator.savepoint.failure',
  /** `true`: the REST endpoint never answers (connection refused); a duration: it is unavailable that long after JM start. */
  restUnavailable: 'simulator.rest.unavailable',
  /** Overrides the simulation-wide job start delay (INITIALIZING → RUNNING) for this JobManager. */
  jobStartDelay: 'simulator.job.start-delay',
  /** Overrides the simulation-wide savepoint duration for this JobManager. */
  savepointDuration: 'simulator.savepoint.duration',
  /** `fail`: every periodic and triggered checkpoint fails (the job keeps running). */
  checkpointFailure: 'simulator.checkpoint.failure',
  /** Duration: every that long in RUNNING, the job fails over (RESTARTING, then RUNNING again), as under a restart strategy. */
  jobRestartEvery: 'simulator.job.restart-every',
  /** Duration after the job first reaches RUNNING from which no checkpoint completes any more (they hang until the checkpoint timeout). */
  checkpointStallAfter: 'simulator.checkpoint.stall-after',
} as const;

export type SavepointFailureMode = 'none' | 'fail' | 'hang';

export interface HighAvailabilitySettings {
  readonly enabled: boolean;
  readonly storageDir: string | null;
  /** `kubernetes.cluster-id`; names the HA ConfigMap `<clusterId>-cluster-config-map`. */
  readonly clusterId: string | null;
}

/** What the simulation reads from a Flink configuration. All fields have Flink's defaults applied. */
export interface FlinkClusterSettings {
  /** `$internal.pipeline.job-id`, lower-cased, or null (the JobManager then generates one). */
  readonly pinnedJobId: string | null;
  /** The simulated vertex's parallelism: its `pipeline.jobvertex-parallelism-overrides` entry, else `parallelism.default`. */
  readonly parallelism: number;
  readonly slotsPerTaskManager: number;
  readonly reactive: boolean;
  /** `jobmanager.scheduler: adaptive`, or reactive mode (which runs the adaptive scheduler): resource requirements can change. */
  readonly adaptiveScheduler: boolean;
  readonly savepointDir: string | null;
  readonly checkpointDir: string | null;
  /** Null when periodic checkpointing is off (no interval configured). */
  readonly checkpointIntervalMs: number | null;
  /** `state.checkpoints.num-retained` / `execution.checkpointing.num-retained` (default 1). */
  readonly retainedCheckpoints: number;
  /** `execution.checkpointing.timeout` (default 10 min): a checkpoint not completed by then expires (FAILED). */
  readonly checkpointTimeoutMs: number;
  /** `execution.savepoint.path` from the configuration (the `--fromSavepoint` arg overrides it). */
  readonly savepointPath: string | null;
  readonly allowNonRestoredState: boolean;
  readonly highAvailability: HighAvailabilitySettings;
  /** `rest.port` (default 8081): the only port the JobManager answers on. */
  readonly restPort: number;
  readonly simulator: SimulatorSettings;
}

export interface SimulatorSettings {
  readonly jobFailAfterMs: number | null;
  readonly jobFinishAfterMs: number | null;
  readonly savepointFailure: SavepointFailureMode;
  readonly checkpointFailure: boolean;
  /** `Infinity` = never available; 0 = available at once. */
  readonly restUnavailableForMs: number;
  readonly jobStartDelayMs: number | null;
  readonly savepointDurationMs: number | null;
  /** `simulator.job.restart-every`; null = no simulated restarts. */
  readonly jobRestartEveryMs: number | null;
  /** `simulator.checkpoint.stall-after`; null = checkpoints keep completing. */
  readonly checkpointStallAfterMs: number | null;
}

function first(config: FlinkConfigMap, ...keys: string[]): string | null {
  for (const key of keys) {
    const value = config.get(key);
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return null;
}

function positiveInt(value: string | null, fallback: number, key: string): number {
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`invalid value "${value}" for ${key}: expected a positive integer`);
  return n;
}

function optionalDuration(value: string | null): number | null {
  return value === null ? null : parseFlinkDuration(value);
}

/** A duration that must be more than 0 (a restart loop with no time in RUNNING is not a restart strategy). */
function positiveDuration(value: string | null, key: string): number | null {
  const ms = optionalDuration(value);
  if (ms !== null && ms <= 0) throw new Error(`invalid value "${value}" for ${key}: expected a duration above 0`);
  return ms;
}

const PARALLELISM_OVERRIDES_KEY = 'pipeline.jobvertex-parallelism-overrides';

/** The simulated vertex's entry of `pipeline.jobvertex-parallelism-overrides` (Flink's map format `id:value,id:value`), or null. */
function vertexOverride(overrides: string | null): string | null {
  for (const entry of (overrides ?? '').split(',')) {
    const [id, value] = entry.split(':').map((part) => part.trim());
    if (id?.toLowerCase() === SIMULATED_VERTEX_ID && value) return value;
  }
  return null;
}

const HA_KUBERNETES = new Set(['kubernetes', 'org.apache.flink.kubernetes.highavailability.KubernetesHaServicesFactory']);

/** Derives the simulation's settings from a flat config map. Throws (like a JobManager failing to start) on invalid values. */
export function readClusterSettings(config: FlinkConfigMap): FlinkClusterSettings {
  const jobId = first(config, '$internal.pipeline.job-id');
  if (jobId !== null && !/^[0-9a-fA-F]{32}$/.test(jobId)) {
    throw new Error(`invalid value "${jobId}" for $internal.pipeline.job-id: expected 32 hexadecimal characters`);
  }
  const haType = first(config, 'high-availability.type', 'high-availability');
  const restUnavailable = first(config, SIMULATOR_KEYS.restUnavailable);
  const savepointFailure = (first(config, SIMULATOR_KEYS.savepointFailure) ?? 'none').toLowerCase();
  if (!['none', 'fail', 'hang'].includes(savepointFailure)) {
    throw new Error(`invalid value "${savepointFailure}" for ${SIMULATOR_KEYS.savepointFailure}: expected fail, hang or none`);
  }
  const reactive = (first(config, 'scheduler-mode') ?? '').toUpperCase() === 'REACTIVE';
  return {
    pinnedJobId: jobId === null ? null : jobId.toLowerCase(),
    parallelism: positiveInt(vertexOverride(first(config, PARALLELISM_OVERRIDES_KEY)) ?? first(config, 'parallelism.default'), 1, 'parallelism.default'),
    slotsPerTaskManager: positiveInt(first(config, 'taskmanager.numberOfTaskSlots'), 1, 'taskmanager.numberOfTaskSlots'),
    reactive,
    adaptiveScheduler: reactive || (first(config, 'jobmanager.scheduler') ?? '').toLowerCase() === 'adaptive',
    savepointDir: first(config, 'execution.checkpointing.savepoint-dir', 'state.savepoints.dir'),
    checkpointDir: first(config, 'execution.checkpointing.dir', 'state.checkpoints.dir'),
    checkpointIntervalMs: optionalDuration(first(config, 'execution.checkpointing.interval')),
    retainedCheckpoints: positiveInt(
      first(config, 'execution.checkpointing.num-retained', 'state.checkpoints.num-retained'),
      1,
      'execution.checkpointing.num-retained',
    ),
    checkpointTimeoutMs: optionalDuration(first(config, 'execution.checkpointing.timeout')) ?? 600_000,
    savepointPath: first(config, 'execution.state-recovery.path', 'execution.savepoint.path'),
    allowNonRestoredState:
      (first(config, 'execution.state-recovery.ignore-unclaimed-state', 'execution.savepoint.ignore-unclaimed-state') ?? 'false') === 'true',
    restPort: Number.parseInt(first(config, 'rest.port') ?? '8081', 10) || 8081, // a range "8081-8089" binds its first port
    highAvailability: {
      enabled: haType !== null && HA_KUBERNETES.has(haType),
      storageDir: first(config, 'high-availability.storageDir'),
      clusterId: first(config, 'kubernetes.cluster-id'),
    },
    simulator: {
      jobFailAfterMs: optionalDuration(first(config, SIMULATOR_KEYS.jobFailAfter)),
      jobFinishAfterMs: optionalDuration(first(config, SIMULATOR_KEYS.jobFinishAfter)),
      savepointFailure: savepointFailure as SavepointFailureMode,
      checkpointFailure: (first(config, SIMULATOR_KEYS.checkpointFailure) ?? '').toLowerCase() === 'fail',
      restUnavailableForMs:
        restUnavailable === null || restUnavailable === 'false'
          ? 0
          : restUnavailable === 'true'
            ? Number.POSITIVE_INFINITY
            : parseFlinkDuration(restUnavailable),
      jobStartDelayMs: optionalDuration(first(config, SIMULATOR_KEYS.jobStartDelay)),
      savepointDurationMs: optionalDuration(first(config, SIMULATOR_KEYS.savepointDuration)),
      jobRestartEveryMs: positiveDuration(first(config, SIMULATOR_KEYS.jobRestartEvery), SIMULATOR_KEYS.jobRestartEvery),
      checkpointStallAfterMs: optionalDuration(first(config, SIMULATOR_KEYS.checkpointStallAfter)),
    },
  };
}
