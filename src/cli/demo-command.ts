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
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { flinkDeployment } from '../api/flink-deployment-builder.js';
import { FLINK_DEPLOYMENT_PLURAL, type FlinkDeploymentV1 } from '../api/flink-deployment.js';
import { flinkSessionJob } from '../api/flink-session-job-builder.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1 } from '../api/flink-session-job.js';
import { type SimulatedCluster, startSimulatedCluster } from '../devcluster/simulated-cluster.js';
import { makeFlinkDeploymentReconciler } from '../reconciler/reconciler-wiring.js';
import { makeFlinkSessionJobReconciler } from '../reconciler/session-job-wiring.js';
import { makeFlinkStateSnapshotReconciler } from '../reconciler/state-snapshot-wiring.js';
import { flinkStateSnapshot } from '../api/flink-state-snapshot-builder.js';
import { FLINK_STATE_SNAPSHOT_PLURAL, FLINK_STATE_SNAPSHOT_VERSION, type FlinkStateSnapshot } from '../api/flink-state-snapshot.js';
import { sessionJobStateConfigMapName } from '../state/state-store.js';
import { createLogger } from '../runtime/logger.js';
import { Manager } from '../runtime/manager.js';
import { resolveOperatorConfig } from '../runtime/operator-config.js';

const GROUP = 'flink.apache.org';
const PLURAL = FLINK_DEPLOYMENT_PLURAL;
const NAME = 'demo';
const SESSION_CLUSTER = 'demo-sessions';
const SESSION_JOB = 'demo-session-job';

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
      // Ctrl-C during the walkthrough: everything is stopped and removed, and the exit status says it was cut short.
      if ((await runDemo(options)) === 'interrupted') process.exitCode = 130;
    });
}

function crdPath(file = 'flinkdeployments.flink.apache.org.yaml'): string {
  return fileURLToPath(new URL(`../../crds/${file}`, import.meta.url)).replace('/dist/crds/', '/crds/');
}

function kubectlAvailable(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the demo until the walkthrough ends (`--exit`) or SIGINT/SIGTERM. However it ends (finished,
 * Ctrl-C during or after the walkthrough, an error), the operator and the cluster are stopped and
 * the temporary directories it made (the kubeconfig's, kubectl's cache) are removed before it
 * returns. Resolves 'interrupted' when a signal cut the walkthrough short.
 */
export async function runDemo(options: DemoOptions): Promise<'finished' | 'interrupted'> {
  const say = (line = '') => process.stdout.write(`${line}\n`);
  // Temporary directories this run made (kubeconfig, kubectl cache): removed however it ends.
  const tempDirs: string[] = [];
  const makeTempDir = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    tempDirs.push(dir);
    return dir;
  };
  let signalled!: () => void;
  const interrupted = new Promise<'interrupted'>((resolve) => (signalled = () => resolve('interrupted')));
  const onSignal = () => signalled();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const running: { world?: SimulatedCluster; manager?: Manager; aborted: boolean } = { aborted: false };
  const walkthrough = walkThrough(options, say, makeTempDir, running);
  walkthrough.catch(() => undefined); // abandoned on Ctrl-C: its errors (the cluster is gone) are not reported
  let outcome: 'done' | 'interrupted' = 'interrupted';
  try {
    outcome = await Promise.race([walkthrough.then(() => 'done' as const), interrupted]);
    if (outcome === 'done' && !options.exit) {
      say('\nThe cluster and the operator keep running; press Ctrl-C to stop.');
      await interrupted;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    running.aborted = true;
    if (outcome === 'interrupted') say('\nStopping the operator and the development cluster.');
    await running.manager?.stop();
    await running.world?.stop();
    // An interrupted walkthrough fails fast once the cluster is gone; it may have started something meanwhile.
    await Promise.race([walkthrough.catch(() => undefined), new Promise((r) => setTimeout(r, 5_000).unref())]);
    await running.manager?.stop();
    await running.world?.stop();
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  }
  if (outcome === 'interrupted') return 'interrupted';
  if (options.exit) say('\nDemo finished.');
  return 'finished';
}

async function walkThrough(
  options: DemoOptions,
  say: (line?: string) => void,
  makeTempDir: (prefix: string) => string,
  running: { world?: SimulatedCluster; manager?: Manager; aborted: boolean },
): Promise<void> {
  const checkNotAborted = () => {
    if (running.aborted) throw new Error('demo interrupted');
  };
  const world = await startSimulatedCluster({
    port: Number(options.port ?? 0),
    simulation: { podReadyDelayMs: 400, jobStartDelayMs: 400, savepointDurationMs: 800 },
  });
  running.world = world;
  checkNotAborted();
  const kubeconfigPath = options.kubeconfig ?? join(makeTempDir('flink-operator-demo-'), 'kubeconfig');
  writeFileSync(kubeconfigPath, world.cluster.kubeconfigYaml());
  const kubeConfig = world.cluster.kubeConfig();
  const useKubectl = kubectlAvailable();
  const cacheDir = makeTempDir('flink-operator-demo-kubectl-');
  say(`Development cluster serving at ${world.cluster.url} (kubeconfig ${kubeconfigPath})`);

  for (const file of ['flinkdeployments.flink.apache.org.yaml', 'flinksessionjobs.flink.apache.org.yaml', 'flinkstatesnapshots.flink.apache.org.yaml']) {
    const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(crdPath(file), 'utf8'));
    await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd });
  }
  say('Installed the FlinkDeployment, FlinkSessionJob and FlinkStateSnapshot CRDs (crds/)');

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
  checkNotAborted();
  const manager = new Manager({
    config,
    kubeConfig,
    makeReconciler: makeFlinkDeploymentReconciler,
    makeSessionJobReconciler: makeFlinkSessionJobReconciler,
    makeStateSnapshotReconciler: makeFlinkStateSnapshotReconciler,
    logger: createLogger({ format: 'pretty', level: 'warn' }),
  });
  running.manager = manager;
  await manager.start();
  checkNotAborted();
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
  /** The state ConfigMap's data at the last showState(): the first call prints it all, later ones what changed. */
  let shownData: Record<string, string> | undefined;
  let shownRevision: string | undefined;
  const showState = async () => {
    let yaml: string;
    if (useKubectl) {
      // Asynchronous: the API server runs in this process and must keep answering kubectl.
      const { stdout } = await promisify(execFile)(
        'kubectl',
        ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, 'get', 'configmap', `${NAME}-operator-state`, '-o', 'yaml'],
        { encoding: 'utf8' },
      );
      yaml = stdout.trimEnd();
    } else {
      const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: `${NAME}-operator-state` });
      yaml = toYaml({ apiVersion: 'v1', kind: 'ConfigMap', ...cm }).trimEnd();
    }
    const data = configMapData(yaml);
    const revision = data.revision;
    if (shownData === undefined) {
      say(`\n$ kubectl get configmap ${NAME}-operator-state -o yaml`);
      say(yaml);
    } else {
      say(`\nState ConfigMap ${NAME}-operator-state, what changed in its data (revision ${shownRevision ?? '-'} → ${revision ?? '-'}):`);
      const lines = diffConfigMapData(shownData, data);
      for (const line of lines.length ? lines : ['  (nothing)']) say(line);
    }
    say();
    shownData = data;
    shownRevision = revision;
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

  say('\n== 5. A FlinkStateSnapshot: a savepoint on request, taken exactly once (the operator also recorded its own savepoints as snapshots)');
  const snapshots = { group: GROUP, version: FLINK_STATE_SNAPSHOT_VERSION, namespace: 'default', plural: FLINK_STATE_SNAPSHOT_PLURAL };
  await custom.createNamespacedCustomObject({ ...snapshots, body: flinkStateSnapshot(`${NAME}-on-request`).of('FlinkDeployment', NAME).build() });
  for (const deadline = Date.now() + 30_000; ;) {
    const snapshot = (await custom.getNamespacedCustomObject({ ...snapshots, name: `${NAME}-on-request` })) as FlinkStateSnapshot;
    if (snapshot.status?.state === 'COMPLETED') break;
    if (Date.now() > deadline) throw new Error(`the demo snapshot did not complete in 30 s; last status: ${JSON.stringify(snapshot.status)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  if (useKubectl) {
    say(`\n$ kubectl get flinkstatesnapshots`);
    const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, 'get', 'flinkstatesnapshots'], {
      encoding: 'utf8',
    });
    say(stdout.trimEnd());
  } else {
    const list = (await custom.listNamespacedCustomObject(snapshots)) as { items: FlinkStateSnapshot[] };
    // kubectl's columns (the CRD's printer columns): name, path, result timestamp, state
    for (const item of list.items)
      say(`${item.metadata.name}  ${item.status?.path ?? '-'}  ${item.status?.resultTimestamp ?? '-'}  ${item.status?.state ?? 'TRIGGER_PENDING'}`);
  }

  say('\n== 6. A session cluster and a FlinkSessionJob on it (no jarURI: the entry class comes from the cluster classpath)');
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: 'v1',
    namespace: 'default',
    plural: PLURAL,
    body: flinkDeployment(SESSION_CLUSTER).withoutJob().build(),
  });
  const sessionJob = flinkSessionJob(SESSION_JOB).onCluster(SESSION_CLUSTER).build();
  const { jarURI: _jar, ...jobWithoutJar } = sessionJob.spec.job ?? {};
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: 'v1',
    namespace: 'default',
    plural: FLINK_SESSION_JOB_PLURAL,
    body: { ...sessionJob, spec: { ...sessionJob.spec, job: jobWithoutJar } },
  });
  const getSessionJob = async () =>
    (await custom.getNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'default',
      plural: FLINK_SESSION_JOB_PLURAL,
      name: SESSION_JOB,
    })) as FlinkSessionJobV1;
  const deadline = Date.now() + 60_000;
  let lastLine = '';
  for (;;) {
    const j = await getSessionJob();
    const line =
      `  session job: lifecycle ${j.status?.lifecycleState ?? '-'}, job ${j.status?.jobStatus?.state ?? '-'} ${j.status?.jobStatus?.jobId ?? ''}`.trimEnd();
    if (line !== lastLine) say(line);
    lastLine = line;
    if (j.status?.lifecycleState === 'STABLE' && j.status.jobStatus?.state === 'RUNNING') break;
    if (Date.now() > deadline) throw new Error(`the demo session job did not start in 60 s; last status: ${JSON.stringify(j.status)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  say(`  its state: kubectl get configmap ${sessionJobStateConfigMapName(SESSION_JOB)} -o yaml`);

  say('\nTry it yourself:');
  say(`  export KUBECONFIG=${kubeconfigPath}`);
  say('  kubectl get flinkdeployments,flinksessionjobs,flinkstatesnapshots');
  say(`  kubectl get configmap ${NAME}-operator-state -o yaml`);
  say(`  kubectl patch flinkdeployment ${NAME} --type merge -p '{"spec":{"job":{"parallelism":3}}}'`);
  say(`  kubectl describe flinkdeployment ${NAME}`);
  say(`  kubectl get --raw /api/v1/namespaces/default/services/${NAME}-rest:rest/proxy/jobs/overview`);
}

/** The `data` of a ConfigMap printed as YAML (string values only). */
function configMapData(yaml: string): Record<string, string> {
  const parsed: unknown = parseYaml(yaml);
  const data = typeof parsed === 'object' && parsed !== null ? (parsed as { data?: unknown }).data : undefined;
  const out: Record<string, string> = {};
  if (typeof data === 'object' && data !== null) for (const [key, value] of Object.entries(data)) out[key] = String(value);
  return out;
}

/**
 * What changed between two versions of a ConfigMap's data, compactly: `+ key: value` for an added
 * key, `- key: value` for a removed one, `~ key: old → new` for a changed one-line value, and for a
 * changed multi-line value (the specs, the savepoint history) `~ key:` followed by the removed
 * (`-`) and added (`+`) lines only.
 */
export function diffConfigMapData(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const linesOf = (value: string) => value.replace(/\n$/, '').split('\n');
  const show = (sign: string, key: string, value: string) => {
    const lines = linesOf(value);
    if (lines.length === 1) out.push(`  ${sign} ${key}: ${lines[0]}`);
    else out.push(`  ${sign} ${key}:`, ...lines.map((line) => `      ${line}`));
  };
  for (const key of keys) {
    const old = before[key];
    const now = after[key];
    if (old === now) continue;
    if (old === undefined) show('+', key, now);
    else if (now === undefined) show('-', key, old);
    else {
      const oldLines = linesOf(old);
      const newLines = linesOf(now);
      if (oldLines.length === 1 && newLines.length === 1) out.push(`  ~ ${key}: ${oldLines[0]} → ${newLines[0]}`);
      else out.push(`  ~ ${key}:`, ...lineDiff(oldLines, newLines).map((line) => `    ${line}`));
    }
  }
  return out;
}

/** The removed (`- line`) and added (`+ line`) lines between `a` and `b` (longest common subsequence). */
function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  return out;
}
