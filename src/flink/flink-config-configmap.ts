/**
 * ConfigMap `flink-config-<name>`: the files mounted at /opt/flink/conf in every Flink pod.
 *
 * Data keys:
 * - `config.yaml`: the effective Flink configuration (flink-config-builder.ts), flat YAML;
 * - `log4j-console.properties`: from `spec.logConfiguration`, else Flink's default console setup;
 * - any other file named in `spec.logConfiguration` (e.g. `logback-console.xml`), verbatim.
 * - (native mode, when the spec has TaskManager pod templates) `taskmanager-pod-template.yaml`: the
 *   merged TaskManager pod template the JobManager reads (`kubernetes.pod-template-file.taskmanager`).
 * Labels `app=<name>`, `type=flink-standalone-kubernetes` (native: `flink-native-kubernetes`);
 * owned by the FlinkDeployment.
 *
 * Caveat: a ConfigMap is read by a Flink process only at its start; changing it does not
 * reconfigure running pods (the operator redeploys for that).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import type { FlinkDeploymentSpec } from '../api/flink-deployment-spec.js';
import { renderFlinkConfigYaml } from './flink-config-builder.js';
import { clusterLabels, type ClusterMode, deploymentKey, FLINK_CONFIG_FILE, flinkConfigMapName, LOG4J_CONSOLE_FILE, ownerReferenceTo } from './flink-resource-naming.js';

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
    if (file !== FLINK_CONFIG_FILE) data[file] = content;
  }
  data[LOG4J_CONSOLE_FILE] ??= DEFAULT_LOG4J_CONSOLE;
  for (const [file, content] of Object.entries(extraFiles)) data[file] = content;
  data[FLINK_CONFIG_FILE] = renderFlinkConfigYaml(config);
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
