/**
 * The effective flinkConfiguration of one resource as `flink-operator inspect` shows it: every key
 * with its value and where it came from (the operator's defaults, scoped per namespace and Flink
 * version, a session job's cluster, the resource itself), with what it overrides. The precedence
 * is src/api/default-flink-configuration.ts's, so what inspect shows is what the reconciler uses.
 *
 * Where the defaults come from: the operator's default-configuration ConfigMap (the one manifests/
 * mount as the operator's configuration directory, `flink-operator/flink-operator-config` unless
 * `--operator-config NS/NAME` says otherwise), its `config.yaml` key, else `flink-conf.yaml`.
 *
 * Guarantees: read-only (GETs). A missing or unreadable ConfigMap is shown as such, not an error
 * of the command: the resource's own configuration is still listed.
 * Caveats: inspect reads the ConfigMap as stored; a running operator picks up a change at its next
 * check (`kubernetes.operator.dynamic.config.check.interval`), so for a few minutes the two can differ.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { describeSource, sourcedEffectiveConfiguration, type SourcedValue, DefaultFlinkConfiguration } from '../api/default-flink-configuration.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import type { FlinkSessionJobSpec } from '../api/flink-session-job-spec.js';
import { LEGACY_FLINK_CONFIG_FILE, STANDARD_FLINK_CONFIG_FILE } from '../api/flink-configuration.js';
import { toKubeApiError } from '../kube/api-errors.js';
import type { ConfigMapClient } from '../kube/configmap-client.js';
import { defaultConfigurationOf, parseDefaultConfigurationText } from '../runtime/default-configuration-source.js';

/** The operator's default-configuration ConfigMap as manifests/ install it. */
export const DEFAULT_OPERATOR_CONFIG_MAP = { namespace: 'flink-operator', name: 'flink-operator-config' } as const;
/** The same as `--operator-config`'s default. */
export const DEFAULT_OPERATOR_CONFIG_MAP_REF = `${DEFAULT_OPERATOR_CONFIG_MAP.namespace}/${DEFAULT_OPERATOR_CONFIG_MAP.name}`;

export interface EffectiveConfigurationEntry {
  readonly key: string;
  readonly value: string;
  /** e.g. `operator default for namespace team-a`, `spec.flinkConfiguration`. */
  readonly from: string;
  /** The lower-precedence sources this value hides, lowest first. */
  readonly overrides: readonly string[];
}

export interface EffectiveConfigurationView {
  /** Where the defaults were read from, or why there are none. */
  readonly defaults: string;
  readonly entries: readonly EffectiveConfigurationEntry[];
}

/** Parses `NS/NAME`. */
export function parseOperatorConfigMapRef(text: string): { namespace: string; name: string } {
  const match = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(text);
  if (!match) throw new Error(`--operator-config: expected NAMESPACE/NAME of a ConfigMap, got ${JSON.stringify(text)}`);
  return { namespace: match[1], name: match[2] };
}

/** The operator's defaults from its ConfigMap, with a line saying where they came from. */
export async function readOperatorDefaults(
  configMaps: Pick<ConfigMapClient, 'get'>,
  ref: { namespace: string; name: string },
): Promise<{ configuration: DefaultFlinkConfiguration; description: string }> {
  const where = `ConfigMap ${ref.namespace}/${ref.name}`;
  let configMap: V1ConfigMap | undefined;
  try {
    configMap = await configMaps.get(ref.namespace, ref.name);
  } catch (error) {
    return { configuration: DefaultFlinkConfiguration.EMPTY, description: `${where} could not be read (${toKubeApiError(error).message}); defaults not shown` };
  }
  if (!configMap) return { configuration: DefaultFlinkConfiguration.EMPTY, description: `${where} not found: no operator defaults` };
  for (const file of [STANDARD_FLINK_CONFIG_FILE, LEGACY_FLINK_CONFIG_FILE]) {
    const text = configMap.data?.[file];
    if (text === undefined) continue;
    try {
      return { configuration: defaultConfigurationOf(parseDefaultConfigurationText(file, text)), description: `${where}, ${file}` };
    } catch (error) {
      return { configuration: DefaultFlinkConfiguration.EMPTY, description: `${where}, ${file}: ${(error as Error).message}` };
    }
  }
  return {
    configuration: DefaultFlinkConfiguration.EMPTY,
    description: `${where} has no ${STANDARD_FLINK_CONFIG_FILE} or ${LEGACY_FLINK_CONFIG_FILE}: no operator defaults`,
  };
}

/**
 * The effective configuration of a resource in `namespace`: `own` over `sessionCluster` (a session
 * job's) over the defaults scoped to the namespace and the Flink version (the session cluster's for
 * a session job).
 */
export function effectiveConfigurationView(
  defaults: { configuration: DefaultFlinkConfiguration; description: string },
  namespace: string,
  own: (Pick<FlinkDeploymentSpec, 'flinkConfiguration'> & { flinkVersion?: FlinkDeploymentSpec['flinkVersion'] }) | undefined,
  sessionCluster?: Pick<FlinkDeploymentSpec, 'flinkConfiguration' | 'flinkVersion'>,
): EffectiveConfigurationView {
  const version = sessionCluster ? sessionCluster.flinkVersion : own?.flinkVersion;
  const sourced = sourcedEffectiveConfiguration(defaults.configuration.sourcedFor(namespace, version), own, sessionCluster);
  const entries = [...sourced.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => entryOf(key, value));
  return { defaults: defaults.description, entries };
}

function entryOf(key: string, sourced: SourcedValue): EffectiveConfigurationEntry {
  return { key, value: sourced.value, from: describeSource(sourced.source), overrides: sourced.overrides.map(describeSource) };
}

/** Text lines of the view (for inspect's text output). */
export function formatEffectiveConfiguration(view: EffectiveConfigurationView): string[] {
  const lines = ['', `Effective configuration (defaults: ${view.defaults}):`];
  if (view.entries.length === 0) lines.push('  (none)');
  const width = Math.min(60, Math.max(0, ...view.entries.map((e) => e.key.length)));
  for (const e of view.entries) {
    const over = e.overrides.length > 0 ? `; overrides ${e.overrides.join(', ')}` : '';
    lines.push(`  ${e.key.padEnd(width)}  ${e.value}  [${e.from}${over}]`);
  }
  return lines;
}

/** What reading a resource for its view needs (inspect's clients fit). */
export interface EffectiveConfigurationClients {
  readonly configMaps: Pick<ConfigMapClient, 'get'>;
  readonly deployments: { get(namespace: string, name: string): Promise<{ spec?: FlinkDeploymentSpec } | undefined> };
  readonly sessionJobs?: { get(namespace: string, name: string): Promise<{ spec?: FlinkSessionJobSpec } | undefined> };
}

/** The view of the FlinkDeployment or FlinkSessionJob `namespace/name` (GETs it and, for a session job, its cluster). */
export async function effectiveConfigurationOfResource(
  clients: EffectiveConfigurationClients,
  ref: { namespace: string; name: string },
  kind: 'FlinkDeployment' | 'FlinkSessionJob',
  namespace: string,
  name: string,
): Promise<EffectiveConfigurationView> {
  const defaults = await readOperatorDefaults(clients.configMaps, ref);
  if (kind === 'FlinkDeployment') return effectiveConfigurationView(defaults, namespace, (await clients.deployments.get(namespace, name))?.spec);
  const job = (await clients.sessionJobs?.get(namespace, name))?.spec;
  const clusterName = job?.deploymentName;
  const cluster = clusterName ? (await clients.deployments.get(namespace, clusterName).catch(() => undefined))?.spec : undefined;
  return effectiveConfigurationView(defaults, namespace, job, cluster ?? {});
}
