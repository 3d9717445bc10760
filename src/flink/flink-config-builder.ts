/**
 * The effective Flink configuration of a standalone application cluster, rendered into
 * ConfigMap `flink-config-<name>` as the file its Flink version reads at start (what the
 * JobManager and TaskManagers read): `config.yaml` (standard YAML) for Flink ≥ 1.19,
 * `flink-conf.yaml` (Flink's legacy flat format) for Flink 1.15–1.18 (flinkConfigFileOf in
 * src/api/flink-configuration.ts).
 *
 * Mirrors the Apache operator's FlinkConfigBuilder for standalone application mode
 * (../shared/reference/flink-operator.md §5): the user's flinkConfiguration (flat or nested,
 * flattened by src/api/flink-configuration.ts), then the keys the operator owns, which win:
 *
 * | key | value |
 * |---|---|
 * | `kubernetes.cluster-id`, `kubernetes.namespace` | name, namespace |
 * | `execution.target` | `remote` |
 * | `execution.shutdown-on-application-finish` | `false` (the JobManager stays up after the job ends, so the operator can observe it) |
 * | `$internal.pipeline.job-id` | the job id the operator pinned (input) |
 * | `parallelism.default` | `taskManager.replicas` × slots when replicas are set (the Apache operator's rule), else `job.parallelism` |
 * | `taskmanager.numberOfTaskSlots` | user value, else `1` (written explicitly) |
 * | `pipeline.classpaths` | `job.jarURI` with `local://` rewritten to `file://` |
 * | `jobmanager.memory.process.size`, `taskmanager.memory.process.size` | from the component resources |
 * | `jobmanager.rpc.address` | `<name>.<ns>` (the headless Service; TaskManagers find the JobManager through it) |
 * | `jobmanager.rpc.port`, `blob.server.port`, `taskmanager.rpc.port` | 6123, 6124, 6122 |
 * | `rest.port` | user value, else 8081 |
 * | restore path | `execution.state-recovery.path` (Flink ≥ 1.20) or `execution.savepoint.path` = restoreFrom; REMOVED when not restoring |
 * | ignore unclaimed state | `execution.state-recovery.ignore-unclaimed-state` / `execution.savepoint.ignore-unclaimed-state` = `true` when allowed |
 *
 * Guarantees: deterministic (same inputs → same map, same rendered text); a restore path in the
 * user's configuration never leaks into a deployment that is not restoring (a stateless redeploy
 * must not silently restore an old savepoint).
 * Caveats: the Apache operator's random job-result-store path per deployment (FLINK-27569) is not
 * set: the rendering must be reproducible after an operator crash. `flink-conf.yaml` cannot carry
 * every value (a line break, '#', surrounding whitespace, an empty value): validation refuses such
 * a spec for Flink 1.15–1.18, and rendering one throws rather than write a value Flink would read
 * differently.
 */
import type { FlinkDeploymentSpec, FlinkVersion } from '../api/flink-deployment-spec.js';
import { FLINK_VERSIONS } from '../api/flink-deployment-spec.js';
import {
  flattenFlinkConfiguration,
  flinkConfigFileOf,
  type FlinkConfigFileName,
  LEGACY_FLINK_CONFIG_FILE,
  legacyFlinkConfKeyProblem,
  legacyFlinkConfValueProblem,
} from '../api/flink-configuration.js';
import { componentResources } from './flink-container-resources.js';
import { FLINK_PORTS } from './flink-resource-naming.js';

export interface FlinkConfigInputs {
  readonly namespace: string;
  readonly name: string;
  /** The spec being deployed (may differ from the resource's current spec, e.g. on rollback). */
  readonly spec: FlinkDeploymentSpec;
  /** Job id to pin (32 hex), as `$internal.pipeline.job-id`. */
  readonly jobId: string;
  /** Savepoint/checkpoint path to restore from; absent = start without state. */
  readonly restoreFrom?: string;
  readonly allowNonRestoredState?: boolean;
}

/** The version assumed when `spec.flinkVersion` is unset. */
export const DEFAULT_FLINK_VERSION: FlinkVersion = 'v1_20';

/** True when `version` (default: DEFAULT_FLINK_VERSION) is `atLeast` or newer. */
export function isFlinkVersionAtLeast(version: FlinkVersion | undefined, atLeast: FlinkVersion): boolean {
  return FLINK_VERSIONS.indexOf(version ?? DEFAULT_FLINK_VERSION) >= FLINK_VERSIONS.indexOf(atLeast);
}

const RESTORE_PATH_KEYS = ['execution.state-recovery.path', 'execution.savepoint.path'] as const;
const IGNORE_UNCLAIMED_KEYS = ['execution.state-recovery.ignore-unclaimed-state', 'execution.savepoint.ignore-unclaimed-state'] as const;

/** Task slots per TaskManager: `taskmanager.numberOfTaskSlots`, default 1. Throws on a non-positive integer. */
export function taskSlotsOf(flat: Readonly<Record<string, string>>): number {
  const raw = flat['taskmanager.numberOfTaskSlots']?.trim();
  if (raw === undefined || raw === '') return 1;
  const slots = Number(raw);
  if (!Number.isInteger(slots) || slots < 1) {
    throw new Error(`spec.flinkConfiguration.taskmanager.numberOfTaskSlots: "${raw}" is not a positive integer`);
  }
  return slots;
}

/** `local:///x.jar` → `file:///x.jar`; other schemes unchanged. */
export function classpathEntryForJar(jarURI: string): string {
  return jarURI.startsWith('local://') ? `file://${jarURI.slice('local://'.length)}` : jarURI;
}

/** The effective configuration (flat `key → string`), keys in sorted order. */
export function buildFlinkConfiguration(inputs: FlinkConfigInputs): Record<string, string> {
  const { spec, name, namespace } = inputs;
  if (!/^[0-9a-fA-F]{32}$/.test(inputs.jobId)) throw new Error(`invalid job id "${inputs.jobId}": expected 32 hexadecimal characters`);
  const config: Record<string, string> = { ...flattenFlinkConfiguration(spec.flinkConfiguration) };
  const modern = isFlinkVersionAtLeast(spec.flinkVersion, 'v1_20');

  config['kubernetes.cluster-id'] = name;
  config['kubernetes.namespace'] = namespace;
  config['execution.target'] = 'remote';
  config['execution.shutdown-on-application-finish'] = 'false';
  // A session cluster fixes no job id: the jobs submitted to it choose theirs (Apache: only ApplicationReconciler sets it).
  if (spec.job) config['$internal.pipeline.job-id'] = inputs.jobId.toLowerCase();
  config['taskmanager.numberOfTaskSlots'] = String(taskSlotsOf(config));
  config['jobmanager.rpc.address'] = `${name}.${namespace}`;
  config['jobmanager.rpc.port'] = String(FLINK_PORTS.jobManagerRpc.port);
  config['blob.server.port'] = String(FLINK_PORTS.blobServer.port);
  config['taskmanager.rpc.port'] = String(FLINK_PORTS.taskManagerRpc.port);
  config['rest.port'] = config['rest.port']?.trim() || String(FLINK_PORTS.rest.port);

  // As the Apache operator: taskManager.replicas, when set, decides the parallelism (replicas × slots).
  const replicas = spec.taskManager?.replicas;
  if (spec.job && replicas !== undefined && replicas > 0) config['parallelism.default'] = String(replicas * taskSlotsOf(config));
  else if (spec.job?.parallelism !== undefined) config['parallelism.default'] = String(spec.job.parallelism);
  if (spec.job?.jarURI) config['pipeline.classpaths'] = classpathEntryForJar(spec.job.jarURI);

  const jm = componentResources(spec.jobManager, 'spec.jobManager');
  if (jm.processSize !== undefined) config['jobmanager.memory.process.size'] = jm.processSize;
  const tm = componentResources(spec.taskManager, 'spec.taskManager');
  if (tm.processSize !== undefined) config['taskmanager.memory.process.size'] = tm.processSize;

  for (const key of [...RESTORE_PATH_KEYS, ...IGNORE_UNCLAIMED_KEYS]) delete config[key];
  if (inputs.restoreFrom !== undefined) {
    config[modern ? RESTORE_PATH_KEYS[0] : RESTORE_PATH_KEYS[1]] = inputs.restoreFrom;
    if (inputs.allowNonRestoredState) config[modern ? IGNORE_UNCLAIMED_KEYS[0] : IGNORE_UNCLAIMED_KEYS[1]] = 'true';
  }

  const sorted: Record<string, string> = {};
  for (const key of Object.keys(config).sort()) sorted[key] = config[key]!;
  return sorted;
}

const PLAIN_KEY = /^[A-Za-z0-9$_][A-Za-z0-9$_.\-/]*$/;

/**
 * Flat YAML of a configuration: one `key: "value"` line per entry, keys sorted, values as YAML
 * double-quoted strings (JSON string syntax is a subset of it), keys quoted only when needed.
 * Stable: the same map always renders the same text.
 */
export function renderFlinkConfigYaml(config: Readonly<Record<string, string>>): string {
  const lines = Object.keys(config)
    .sort()
    .map((key) => `${PLAIN_KEY.test(key) ? key : JSON.stringify(key)}: ${JSON.stringify(config[key])}`);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * `flink-conf.yaml` of a configuration, Flink 1.x's legacy flat format: one `key: value` line per
 * entry, keys sorted, nothing quoted (Flink 1.x GlobalConfiguration.loadYAMLResource splits each
 * line at the first ": " and takes the rest, trimmed, verbatim). Stable like renderFlinkConfigYaml.
 * Throws, naming the key, on a key or value that format cannot carry (validation refuses them
 * first; see legacyFlinkConfValueProblem).
 */
export function renderLegacyFlinkConf(config: Readonly<Record<string, string>>): string {
  const lines = Object.keys(config)
    .sort()
    .map((key) => {
      const value = config[key];
      const problem = legacyFlinkConfKeyProblem(key) ?? legacyFlinkConfValueProblem(value);
      if (problem) throw new Error(`cannot render ${LEGACY_FLINK_CONFIG_FILE}: configuration key ${JSON.stringify(key)} ${problem.reason}; ${problem.fix}`);
      return `${key}: ${value}`;
    });
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** The configuration file for `version` (flinkConfigFileOf): its data key and its text. */
export function renderFlinkConfigFile(
  config: Readonly<Record<string, string>>,
  version: FlinkVersion | undefined,
): { file: FlinkConfigFileName; text: string } {
  const file = flinkConfigFileOf(version);
  return { file, text: file === LEGACY_FLINK_CONFIG_FILE ? renderLegacyFlinkConf(config) : renderFlinkConfigYaml(config) };
}
