/**
 * `flink-operator demo`: the whole product on one laptop, no cluster needed.
 *
 * Starts the development cluster with the simulated kubelet and Flink JobManagers, installs the
 * CRD, starts the operator in this process (Flink REST through the API server's service proxy),
 * applies an example FlinkDeployment, then walks through a savepoint upgrade and a
 * suspend/resume, printing at each step the lifecycle state and the state ConfigMap as
 * `kubectl get configmap -o yaml` shows it. Then it prints the kubeconfig and commands to try and
 * keeps running until Ctrl-C (or stops at once with --exit).
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import type { Command } from 'commander';
import { stringify as toYaml } from 'yaml';
import { flinkDeployment } from '../api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { startSimulatedCluster } from '../devcluster/simulated-cluster.js';
import { makeFlinkDeploymentReconciler } from '../reconciler/reconciler-wiring.js';
import { createLogger } from '../runtime/logger.js';
import { Manager } from '../runtime/manager.js';
import { resolveOperatorConfig } from '../runtime/operator-config.js';

const GROUP = 'flink.apache.org';
const PLURAL = 'flinkdeployments';
const NAME = 'demo';

interface DemoOptions {
  exit?: boolean;
  port?: string;
  kubeconfig?: string;
  httpPort?: string;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('start the development cluster with simulated Flink and the operator, and walk through deploy, savepoint upgrade, suspend and resume')
    .option('--exit', 'stop after the walkthrough instead of running until Ctrl-C')
    .option('--port <n>', 'API server port (0 = any free port)', '0')
    .option('--kubeconfig <file>', 'where to write the kubeconfig (default: a temporary directory)')
    .option('--http-port <n>', 'operator metrics/health port (0 = any free port)', '0')
    .action(async (options: DemoOptions) => {
      await runDemo(options);
    });
}

function crdPath(): string {
  return fileURLToPath(new URL('../../crds/flinkdeployments.flink.apache.org.yaml', import.meta.url)).replace('/dist/crds/', '/crds/');
}

function kubectlAvailable(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function runDemo(options: DemoOptions): Promise<void> {
  const say = (line = '') => process.stdout.write(`${line}\n`);
  const world = await startSimulatedCluster({
    port: Number(options.port ?? 0),
    simulation: { podReadyDelayMs: 400, jobStartDelayMs: 400, savepointDurationMs: 800 },
  });
  const kubeconfigPath = options.kubeconfig ?? join(mkdtempSync(join(tmpdir(), 'flink-operator-demo-')), 'kubeconfig');
  writeFileSync(kubeconfigPath, world.cluster.kubeconfigYaml());
  const kubeConfig = world.cluster.kubeConfig();
  const useKubectl = kubectlAvailable();
  const cacheDir = mkdtempSync(join(tmpdir(), 'flink-operator-demo-kubectl-'));
  say(`Development cluster serving at ${world.cluster.url} (kubeconfig ${kubeconfigPath})`);

  const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(crdPath(), 'utf8'));
  await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd });
  say('Installed the FlinkDeployment CRD (crds/flinkdeployments.flink.apache.org.yaml)');

  const config = resolveOperatorConfig({
    flags: {
      httpPort: Number(options.httpPort ?? 0),
      httpHost: '127.0.0.1',
      flinkRestAccess: 'apiserver-proxy',
      progressCheckIntervalMs: 300,
      reconcileIntervalMs: 10_000,
      logLevel: 'warn',
      identity: 'demo-operator',
    },
    env: {},
  });
  const manager = new Manager({ config, kubeConfig, makeReconciler: makeFlinkDeploymentReconciler, logger: createLogger({ format: 'pretty', level: 'warn' }) });
  await manager.start();
  say('Started the operator (Flink REST through the API server service proxy)');

  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const get = async () =>
    (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: PLURAL, name: NAME })) as FlinkDeploymentV1;
  const patch = (body: Record<string, unknown>) =>
    custom.patchNamespacedCustomObject(
      { group: GROUP, version: 'v1', namespace: 'default', plural: PLURAL, name: NAME, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

  /** Prints each lifecycle change until `done` holds. */
  const follow = async (done: (d: FlinkDeploymentV1) => boolean, timeoutMs = 60_000) => {
    let last = '';
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = await get();
      const line = `  lifecycle ${d.status?.lifecycleState ?? '-'}, job ${d.status?.jobStatus?.state ?? '-'}, JobManager ${d.status?.jobManagerDeploymentStatus ?? '-'}, observedGeneration ${d.status?.observedGeneration ?? '-'}`;
      if (line !== last) say(line);
      last = line;
      if (done(d)) return d;
      if (Date.now() > deadline) throw new Error(`the demo deployment did not get there in ${timeoutMs / 1000} s; last status: ${JSON.stringify(d.status)}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const showState = async () => {
    say(`\n$ kubectl get configmap ${NAME}-operator-state -o yaml`);
    if (useKubectl) {
      // Asynchronous: the API server runs in this process and must keep answering kubectl.
      const { stdout } = await promisify(execFile)(
        'kubectl',
        ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, 'get', 'configmap', `${NAME}-operator-state`, '-o', 'yaml'],
        { encoding: 'utf8' },
      );
      say(stdout.trimEnd());
    } else {
      const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: `${NAME}-operator-state` });
      say(toYaml({ apiVersion: 'v1', kind: 'ConfigMap', ...cm }).trimEnd());
    }
    say();
  };
  const stableAt = (generation: number) => (d: FlinkDeploymentV1) =>
    d.status?.lifecycleState === 'STABLE' && d.status.observedGeneration === generation && d.status.jobStatus?.state === 'RUNNING';

  say('\n== 1. Create FlinkDeployment "demo" (upgradeMode: savepoint)');
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: 'v1',
    namespace: 'default',
    plural: PLURAL,
    body: flinkDeployment(NAME)
      .withSpec({ job: { upgradeMode: 'savepoint' } })
      .build(),
  });
  await follow(stableAt(1));
  await showState();

  say('== 2. Change the image: a savepoint upgrade (stop with savepoint, redeploy from it)');
  await patch({ spec: { image: 'flink:1.20.1' } });
  const upgraded = await follow(stableAt(2));
  say(`  restored from ${upgraded.status?.jobStatus?.lastSavepoint?.location}`);
  await showState();

  say('== 3. Suspend (job.state: suspended): a savepoint, then the cluster is removed');
  await patch({ spec: { job: { state: 'suspended' } } });
  await follow((d) => d.status?.lifecycleState === 'SUSPENDED' && d.status.observedGeneration === 3);
  say('== 4. Resume (job.state: running): the job restores from the suspend savepoint');
  await patch({ spec: { job: { state: 'running' } } });
  const resumed = await follow(stableAt(4));
  say(`  restored from ${resumed.status?.jobStatus?.lastSavepoint?.location}`);
  await showState();

  const lineage = world.simulation.lineage('default', NAME);
  say(`Simulated Flink saw ${lineage.submissions.length} job submissions and ${lineage.savepoints.length} savepoints:`);
  for (const s of lineage.submissions) say(`  job ${s.jobId} restored from ${s.restoredFrom ?? '(nothing)'}`);

  say('\nTry it yourself:');
  say(`  export KUBECONFIG=${kubeconfigPath}`);
  say('  kubectl get flinkdeployments');
  say(`  kubectl get configmap ${NAME}-operator-state -o yaml`);
  say(`  kubectl patch flinkdeployment ${NAME} --type merge -p '{"spec":{"job":{"parallelism":3}}}'`);
  say(`  kubectl describe flinkdeployment ${NAME}`);
  say(`  kubectl get --raw /api/v1/namespaces/default/services/${NAME}-rest:rest/proxy/jobs/overview`);

  const shutdown = async () => {
    await manager.stop();
    await world.stop();
  };
  if (options.exit) {
    await shutdown();
    say('\nDemo finished.');
    return;
  }
  say('\nThe cluster and the operator keep running; press Ctrl-C to stop.');
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void shutdown().then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
