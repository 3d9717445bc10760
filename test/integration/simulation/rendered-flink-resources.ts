/**
 * Fixture builder: the Kubernetes resources the operator renders for a FlinkDeployment in
 * standalone application mode (the contract in design/003b-simulation.md), so the
 * simulation can be tested without the operator.
 */
import type { V1ConfigMap, V1Deployment, V1Service } from '@kubernetes/client-node';
import type { Harness } from './simulation-harness.js';

export const DEMO_JOB_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

export interface RenderOptions {
  /** Extra (or overriding) Flink configuration keys. */
  config?: Record<string, string>;
  /** Extra container args after `--job-classname C` (e.g. `--fromSavepoint P`). */
  args?: string[];
  image?: string;
  jobId?: string;
}

export interface RenderedFlinkResources {
  configMap: V1ConfigMap;
  jobManager: V1Deployment;
  taskManager: V1Deployment;
  restService: V1Service;
  headlessService: V1Service;
}

export function flinkConfigYaml(name: string, options: RenderOptions = {}): string {
  const config: Record<string, string> = {
    '$internal.pipeline.job-id': options.jobId ?? DEMO_JOB_ID,
    'kubernetes.cluster-id': name,
    'parallelism.default': '2',
    'taskmanager.numberOfTaskSlots': '1',
    'execution.checkpointing.savepoint-dir': 'file:///flink-data/savepoints',
    'execution.checkpointing.dir': 'file:///flink-data/checkpoints',
    'kubernetes.operator.savepoint.format.type': 'CANONICAL',
    ...(options.config ?? {}),
  };
  return (
    Object.entries(config)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join('\n') + '\n'
  );
}

export function renderFlinkResources(name: string, options: RenderOptions = {}): RenderedFlinkResources {
  const labels = (component?: string) => ({ app: name, ...(component ? { component } : {}), type: 'flink-standalone-kubernetes' });
  const image = options.image ?? 'flink:1.20';
  const confVolume = { name: 'flink-config-volume', configMap: { name: `flink-config-${name}` } };
  const confMount = { name: 'flink-config-volume', mountPath: '/opt/flink/conf' };
  return {
    configMap: {
      metadata: { name: `flink-config-${name}`, labels: labels() },
      data: { 'config.yaml': flinkConfigYaml(name, options), 'log4j-console.properties': 'rootLogger.level = INFO\n' },
    },
    jobManager: {
      metadata: { name, labels: labels('jobmanager'), annotations: { 'flinkdeployment.flink.apache.org/generation': '1' } },
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' },
        selector: { matchLabels: labels('jobmanager') },
        template: {
          metadata: { labels: labels('jobmanager') },
          spec: {
            containers: [
              {
                name: 'flink-main-container',
                image,
                args: ['standalone-job', '--job-classname', 'org.apache.flink.streaming.examples.statemachine.StateMachineExample', ...(options.args ?? [])],
                ports: [
                  { name: 'rest', containerPort: 8081 },
                  { name: 'jobmanager-rpc', containerPort: 6123 },
                  { name: 'blobserver', containerPort: 6124 },
                ],
                volumeMounts: [confMount],
              },
            ],
            volumes: [confVolume],
          },
        },
      },
    },
    taskManager: {
      metadata: { name: `${name}-taskmanager`, labels: labels('taskmanager') },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels('taskmanager') },
        template: {
          metadata: { labels: labels('taskmanager') },
          spec: { containers: [{ name: 'flink-main-container', image, args: ['taskmanager'], volumeMounts: [confMount] }], volumes: [confVolume] },
        },
      },
    },
    restService: {
      metadata: { name: `${name}-rest`, labels: labels() },
      spec: { selector: { app: name, component: 'jobmanager' }, ports: [{ name: 'rest', port: 8081, targetPort: 8081 }] },
    },
    headlessService: {
      metadata: { name, labels: labels() },
      spec: {
        clusterIP: 'None',
        selector: { app: name, component: 'jobmanager' },
        ports: [
          { name: 'jobmanager-rpc', port: 6123, targetPort: 6123 },
          { name: 'blobserver', port: 6124, targetPort: 6124 },
        ],
      },
    },
  };
}

/** Creates all rendered resources in `namespace`. */
export async function applyRendered(h: Harness, namespace: string, r: RenderedFlinkResources): Promise<void> {
  await h.core.createNamespacedConfigMap({ namespace, body: r.configMap });
  await h.core.createNamespacedService({ namespace, body: r.restService });
  await h.core.createNamespacedService({ namespace, body: r.headlessService });
  await h.apps.createNamespacedDeployment({ namespace, body: r.jobManager });
  await h.apps.createNamespacedDeployment({ namespace, body: r.taskManager });
}
