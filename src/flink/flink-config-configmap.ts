/**
 * ConfigMap `flink-config-<name>`: the files mounted at /opt/flink/conf in every Flink pod.
 *
 * Data keys:
 * - the effective Flink configuration (flink-config-builder.ts), in the one file its Flink version
 *   reads: `config.yaml` (flat YAML, quoted values) for Flink ≥ 1.19, `flink-conf.yaml` (Flink's
 *   legacy `key: value` lines) for Flink 1.15–1.18; {@link flinkConfigurationTextOf} reads either;
 * - `log4j-console.properties`: from `spec.logConfiguration`, else Flink's default console setup;
 * - any other file named in `spec.logConfiguration` (e.g. `logback-console.xml`), verbatim.
 * - (native mode, when the spec has TaskManager pod templates) `taskmanager-pod-template.yaml`: the
 *   merged TaskManager pod template the JobManager reads (`kubernetes.pod-template-file.taskmanager`).
 * Labels `app=<name>`, `type=flink-standalone-kubernetes` (native: `flink-native-kubernetes`);
 * owned by the FlinkDeployment.
 *
 * Guarantees: exactly one configuration file, the one `spec.flinkVersion` reads (a version change
 * replaces the ConfigMap, so no stale file of the other name is left for Flink 1.19/1.20, which
 * would read `config.yaml` first); a `spec.logConfiguration` entry named like either
 * configuration file never replaces it.
 * Caveat: a ConfigMap is read by a Flink process only at its start; changing it does not
 * reconfigure running pods (the operator redeploys for that).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { javaTrim } from '../api/flink-configuration.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { renderFlinkConfigFile, renderFlinkConfigYaml } from './flink-config-builder.js';
import {
  clusterLabels,
  type ClusterMode,
  deploymentKey,
  FLINK_CONFIG_FILE,
  flinkConfigMapName,
  LEGACY_FLINK_CONFIG_FILE,
  LOG4J_CONSOLE_FILE,
  ownerReferenceTo,
} from './flink-resource-naming.js';

/** Flink's default `log4j-console.properties` (console appender, INFO), shortened. */
export const DEFAULT_LOG4J_CONSOLE = [
  'rootLogger.level = INFO',
  'rootLogger.appenderRef.console.ref = ConsoleAppender',
  'logger.akka.name = akka',
  'logger.akka.level = INFO',
  'logger.pekko.name = org.apache.pekko',
  'logger.pekko.level = INFO',
  'logger.kafka.name= org.apache.kafka',
  'logger.kafka.level = INFO',
  'logger.hadoop.name = org.apache.hadoop',
  'logger.hadoop.level = WARN',
  'logger.zookeeper.name = org.apache.zookeeper',
  'logger.zookeeper.level = INFO',
  'appender.console.name = ConsoleAppender',
  'appender.console.type = CONSOLE',
  'appender.console.layout.type = PatternLayout',
  'appender.console.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n',
  'logger.netty.name = org.jboss.netty.channel.DefaultChannelPipeline',
  'logger.netty.level = OFF',
  '',
].join('\n');

/** The configuration ConfigMap for `deployment`, holding `config` (the effective configuration). */
export function buildFlinkConfigMap(
  deployment: FlinkDeploymentV1,
  spec: FlinkDeploymentSpec,
  config: Readonly<Record<string, string>>,
  mode: ClusterMode = 'standalone',
  extraFiles: Readonly<Record<string, string>> = {},
): V1ConfigMap {
  const { namespace, name } = deploymentKey(deployment);
  const data: Record<string, string> = {};
  for (const [file, content] of Object.entries(spec.logConfiguration ?? {})) {
    if (file !== FLINK_CONFIG_FILE && file !== LEGACY_FLINK_CONFIG_FILE) data[file] = content;
  }
  data[LOG4J_CONSOLE_FILE] ??= DEFAULT_LOG4J_CONSOLE;
  for (const [file, content] of Object.entries(extraFiles)) data[file] = content;
  const rendered = renderFlinkConfigFile(config, spec.flinkVersion);
  data[rendered.file] = rendered.text;
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(data).sort()) sorted[key] = data[key]!;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: flinkConfigMapName(name),
      namespace,
      labels: clusterLabels(name, mode),
      ownerReferences: [ownerReferenceTo(deployment)],
    },
    data: sorted,
  };
}

/**
 * The Flink configuration of a rendered Flink ConfigMap as standard YAML text, whichever file it
 * holds: `config.yaml` verbatim; a `flink-conf.yaml` (Flink 1.15–1.18) re-rendered as `config.yaml`
 * from the values Flink 1.x reads out of it (its legacy rules, below), so that a YAML reader sees
 * exactly what Flink sees (a legacy value such as `a: b`, `*x` or an all-digit job id is not YAML
 * of the same meaning). Undefined when the ConfigMap has neither file.
 *
 * `config.yaml` wins when both are present, as in Flink 1.19/1.20 (the operator renders only one).
 */
export function flinkConfigurationTextOf(configMap: V1ConfigMap | undefined): string | undefined {
  const data = configMap?.data;
  const standard = data?.[FLINK_CONFIG_FILE];
  if (standard !== undefined) return standard;
  const legacy = data?.[LEGACY_FLINK_CONFIG_FILE];
  return legacy === undefined ? undefined : renderFlinkConfigYaml(readLegacyFlinkConf(legacy));
}

/**
 * The key → value pairs Flink 1.x reads from a `flink-conf.yaml` text (GlobalConfiguration
 * .loadYAMLResource): per line, everything from the first '#' is a comment; the rest is split at
 * the first ": "; key and value are trimmed (Java's trim: every char up to U+0020); a line without
 * ": " or with an empty key or value is skipped; a later line wins. Values are not unquoted.
 */
function readLegacyFlinkConf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r\n|\n|\r/)) {
    const conf = javaTrim(line.split('#', 1)[0]);
    const separator = conf.indexOf(': ');
    if (separator < 0) continue;
    const key = javaTrim(conf.slice(0, separator));
    const value = javaTrim(conf.slice(separator + 2));
    if (key !== '' && value !== '') out[key] = value;
  }
  return out;
}
