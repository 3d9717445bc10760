/**
 * End-to-end harness: the development cluster with simulated kubelet and Flink, the CRD from
 * crds/, and the operator (the real Manager and reconciler) talking to it over HTTP through
 * client-node, exactly as `flink-operator run` does, with short intervals.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type KubeConfig,
  type V1ConfigMap,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { buildFlinkDeploymentCrd, buildFlinkSessionJobCrd } from '../../src/api/crd-generator.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startSimulatedCluster, type SimulatedCluster, type SimulationOptions } from '../../src/devcluster/simulated-cluster.js';
import { makeFlinkDeploymentReconciler } from '../../src/reconciler/reconciler-wiring.js';
import { makeFlinkSessionJobReconciler } from '../../src/reconciler/session-job-wiring.js';
import { makeFlinkStateSnapshotReconciler } from '../../src/reconciler/state-snapshot-wiring.js';
import { Manager } from '../../src/runtime/manager.js';
import { resolveOperatorConfig, type OperatorConfig } from '../../src/runtime/operator-config.js';
import { createLogger } from '../../src/runtime/logger.js';
import { defaultConfigurationSourceFor } from '../../src/cli/run-command.js';
import { readDefaultConfigurationFile } from '../../src/runtime/default-configuration-source.js';

export const CRD_FILE = fileURLToPath(new URL('../../crds/flinkdeployments.flink.apache.org.yaml', import.meta.url));
export const SESSION_JOB_CRD_FILE = fileURLToPath(new URL('../../crds/flinksessionjobs.flink.apache.org.yaml', import.meta.url));
export const STATE_SNAPSHOT_CRD_FILE = fileURLToPath(new URL('../../crds/flinkstatesnapshots.flink.apache.org.yaml', import.meta.url));
const GROUP = 'flink.apache.org';
const PLURAL = 'flinkdeployments';

export async function installCrd(kubeConfig: KubeConfig, file = CRD_FILE): Promise<void> {
  const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(file, 'utf8'));
  await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd });
}

/** Operator flags for tests: fast progress checks, proxy access to Flink, quiet logs. */
export function testOperatorConfig(overrides: Partial<Record<keyof OperatorConfig, unknown>> = {}): OperatorConfig {
  return resolveOperatorConfig({
    flags: {
      httpPort: 0,
      httpHost: '127.0.0.1',
      flinkRestAccess: 'apiserver-proxy',
      progressCheckIntervalMs: 100,
      reconcileIntervalMs: 3_000,
      requeueJitter: 0,
      retryBaseDelayMs: 20,
      retryMaxDelayMs: 1_000,
      watchRestartMinDelayMs: 50,
      logLevel: process.env.E2E_LOG_LEVEL ?? 'silent',
      identity: 'e2e-operator',
      ...overrides,
    },
    env: {},
  });
}

export interface OperatorHarness {
  readonly world: SimulatedCluster;
  readonly kubeConfig: KubeConfig;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  manager: Manager | undefined;
  startOperator(overrides?: Partial<Record<keyof OperatorConfig, unknown>>): Promise<Manager>;
  stopOperator(): Promise<void>;
  create(deployment: FlinkDeploymentV1): Promise<FlinkDeploymentV1>;
  get(name: string, namespace?: string): Promise<FlinkDeploymentV1 | undefined>;
  /** JSON merge patch of the main resource (spec/metadata), as `kubectl patch --type merge` sends it. */
  patch(name: string, patch: Record<string, unknown>, namespace?: string): Promise<FlinkDeploymentV1>;
  delete(name: string, namespace?: string): Promise<void>;
  waitFor(name: string, predicate: (d: FlinkDeploymentV1) => boolean, description: string, timeoutMs?: number, namespace?: string): Promise<FlinkDeploymentV1>;
  waitUntil<T>(probe: () => Promise<T | undefined> | T | undefined, description: string, timeoutMs?: number): Promise<T>;
  stateConfigMap(name: string, namespace?: string): Promise<V1ConfigMap | undefined>;
  events(name: string, namespace?: string): Promise<CoreV1Event[]>;
  stop(): Promise<void>;
}

export async function startHarness(
  options: {
    simulation?: SimulationOptions;
    operator?: Partial<Record<keyof OperatorConfig, unknown>> | false;
    /** Install the FlinkSessionJob CRD and reconcile session jobs too. */
    sessionJobs?: boolean;
    /** Install the FlinkStateSnapshot CRD and handle snapshot resources too. */
    stateSnapshots?: boolean;
    /**
     * false: install the CRDs without their CEL validation rules (crd-cel-rules.ts), as a resource
     * written before the rules existed finds them; for tests of the operator's own validation.
     */
    crdValidationRules?: boolean;
  } = {},
): Promise<OperatorHarness> {
  const world = await startSimulatedCluster({ simulation: { podReadyDelayMs: 30, jobStartDelayMs: 30, savepointDurationMs: 60, ...options.simulation } });
  const kubeConfig = world.cluster.kubeConfig();
  if (options.crdValidationRules === false) {
    const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    await extensions.createCustomResourceDefinition({ body: buildFlinkDeploymentCrd({ validationRules: false }) as unknown as V1CustomResourceDefinition });
    if (options.sessionJobs)
      await extensions.createCustomResourceDefinition({ body: buildFlinkSessionJobCrd({ validationRules: false }) as unknown as V1CustomResourceDefinition });
  } else {
    await installCrd(kubeConfig);
    if (options.sessionJobs) await installCrd(kubeConfig, SESSION_JOB_CRD_FILE);
  }
  if (options.stateSnapshots) await installCrd(kubeConfig, STATE_SNAPSHOT_CRD_FILE);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);

  const harness: OperatorHarness = {
    world,
    kubeConfig,
    custom,
    core,
    apps,
    manager: undefined,
    async startOperator(overrides = {}) {
      const config = testOperatorConfig(overrides);
      const logger = createLogger({ format: 'json', level: config.logLevel as never });
      const manager = new Manager({
        config,
        kubeConfig,
        makeReconciler: makeFlinkDeploymentReconciler,
        ...(options.sessionJobs ? { makeSessionJobReconciler: makeFlinkSessionJobReconciler } : {}),
        ...(options.stateSnapshots ? { makeStateSnapshotReconciler: makeFlinkStateSnapshotReconciler } : {}),
        logger,
        // Only a test that names a configuration directory gets defaults (never the machine's /opt/flink/conf).
        ...(overrides.flinkConfDir !== undefined
          ? {
              defaultConfiguration: defaultConfigurationSourceFor(config, logger, {
                defaults: readDefaultConfigurationFile(config.flinkConfDir),
                defaultsDirExplicit: true,
              }),
            }
          : {}),
      });
      await manager.start();
      harness.manager = manager;
      return manager;
    },
    async stopOperator() {
      await harness.manager?.stop();
      harness.manager = undefined;
    },
    async create(deployment) {
      const namespace = deployment.metadata.namespace ?? 'default';
      return (await custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace, plural: PLURAL, body: deployment })) as FlinkDeploymentV1;
    },
    async get(name, namespace = 'default') {
      try {
        return (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace, plural: PLURAL, name })) as FlinkDeploymentV1;
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    },
    async patch(name, patch, namespace = 'default') {
      return (await custom.patchNamespacedCustomObject(
        { group: GROUP, version: 'v1', namespace, plural: PLURAL, name, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )) as FlinkDeploymentV1;
    },
    async delete(name, namespace = 'default') {
      await custom.deleteNamespacedCustomObject({ group: GROUP, version: 'v1', namespace, plural: PLURAL, name });
    },
    waitUntil,
    async waitFor(name, predicate, description, timeoutMs = 15_000, namespace = 'default') {
      let last: FlinkDeploymentV1 | undefined;
      try {
        return await harness.waitUntil(
          async () => {
            last = await harness.get(name, namespace);
            return last && predicate(last) ? last : undefined;
          },
          description,
          timeoutMs,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}; last status: ${JSON.stringify(last?.status)}`);
      }
    },
    async stateConfigMap(name, namespace = 'default') {
      try {
        return await core.readNamespacedConfigMap({ namespace, name: `${name}-operator-state` });
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    },
    async events(name, namespace = 'default') {
      const list = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
      return list.items;
    },
    async stop() {
      await harness.stopOperator();
      await world.stop();
    },
  };
  if (options.operator !== false) await harness.startOperator(options.operator ?? {});
  return harness;
}

/**
 * Polls `probe` every 40 ms until it returns something other than undefined/false (its value is
 * returned); errors it throws count as "not yet" and the last one is named on timeout.
 */
export async function waitUntil<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, description: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

export function lifecycleOf(d: FlinkDeploymentV1 | undefined): string | undefined {
  return d?.status?.lifecycleState;
}
