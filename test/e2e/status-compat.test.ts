/**
 * End-to-end, with the real kubectl against the development cluster: the status fields tooling
 * written for the Apache operator reads.
 *
 * - `kubectl wait --for=condition=Running flinkdeployment/<name>` returns once the job runs, and
 *   `--for=condition=Running=False` once it is suspended (Apache: FlinkDeploymentStatus
 *   .setRunningConditionIfRequired, ConditionsUtils: True iff the job is RUNNING, reason the job
 *   state in CamelCase; a session cluster: True iff the JobManager is READY, reason JobManagerReady).
 * - `status.clusterInfo` carries `flink-version` and `flink-revision` from Flink's GET /config (the
 *   version the simulated JobManager derives from its image), and `total-cpu` / `total-memory` as
 *   Apache's FlinkUtils.calculateClusterCpuUsage / calculateClusterMemoryUsage compute them
 *   (cores as a Java double, bytes as a Java long).
 * - GET /config is asked once per JobManager start, not on every periodic reconcile.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { KubectlRunner } from '../integration/devcluster/kubectl-runner.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
let kubectl: KubectlRunner;
before(async () => {
  h = await startHarness();
  kubectl = new KubectlRunner(h.world.cluster.kubeconfigYaml());
});
after(async () => {
  kubectl?.cleanup();
  await h?.stop();
});

const T = { timeout: 60_000 };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const runningOf = (d: FlinkDeploymentV1 | undefined) => d?.status?.conditions?.find((c) => c.type === 'Running');

/** GET /config calls that reached `name`'s Flink through the API server's service proxy. */
function configCalls(name: string): number {
  return h.world.cluster.requestLog
    .entries()
    .filter((e) => e.subresource === 'proxy' && e.name.startsWith(`${name}-rest`) && /\/proxy\/config(\?|$)/.test(e.path)).length;
}

test('kubectl wait --for=condition=Running succeeds once the job runs and Running=False once it is suspended', T, async () => {
  const name = 'compat-app';
  // 1.19 image, parallelism 2 on 2 slots: one TaskManager.
  await h.create(flinkDeployment(name).withSpec({ image: 'flink:1.19.1', flinkVersion: 'v1_19' }).build());

  const waited = await kubectl.run(['wait', '--for=condition=Running', `flinkdeployment/${name}`, '--timeout=40s']);
  assert.equal(waited.code, 0, `kubectl wait: ${waited.stderr}`);
  assert.match(waited.stdout, new RegExp(`flinkdeployment.flink.apache.org/${name} condition met`));
  const runningNow = await h.get(name);
  assert.equal(runningNow?.status?.jobStatus?.state, 'RUNNING', 'Running is True only while the job runs');
  assert.deepEqual([runningOf(runningNow)?.status, runningOf(runningNow)?.reason, runningOf(runningNow)?.message], ['True', 'Running', 'Job status RUNNING']);
  assert.equal(runningNow?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', 'Ready stays beside Running');

  // clusterInfo, as `kubectl get -o jsonpath` shows it.
  const info = await h.waitFor(
    name,
    (d) => d.status?.clusterInfo?.['total-memory'] !== undefined && d.status.clusterInfo['flink-version'] !== undefined,
    'clusterInfo with version and resources',
  );
  const shown = JSON.parse(await kubectl.ok(['get', `flinkdeployment/${name}`, '-o', 'jsonpath={.status.clusterInfo}'])) as Record<string, string>;
  assert.deepEqual(shown, info.status?.clusterInfo);
  assert.equal(shown['flink-version'], '1.19.1', 'the version the JobManager reports (its image)');
  assert.match(shown['flink-revision'] ?? '', /^[0-9a-f]{7} @ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/, "Flink's `<commit> @ <date>`");
  // 1 JobManager × 1 core + 1 TaskManager × 1 core; 1024m + 1024m.
  assert.equal(shown['total-cpu'], '2.0');
  assert.equal(shown['total-memory'], String(2 * 1024 ** 3));

  // Periodic reconciles (interval 3 s) of the same JobManager do not ask GET /config again.
  const asked = configCalls(name);
  assert.ok(asked >= 1, 'GET /config was asked');
  await sleep(7_000);
  assert.equal(configCalls(name), asked, 'no GET /config per periodic reconcile');

  await h.patch(name, { spec: { job: { state: 'suspended' } } });
  const suspended = await kubectl.run(['wait', '--for=condition=Running=False', `flinkdeployment/${name}`, '--timeout=40s']);
  assert.equal(suspended.code, 0, `kubectl wait Running=False: ${suspended.stderr}`);
  const after = await h.waitFor(name, (d) => d.status?.lifecycleState === 'SUSPENDED', 'SUSPENDED');
  assert.deepEqual([runningOf(after)?.status, runningOf(after)?.reason, runningOf(after)?.message], ['False', 'Suspended', 'Job status SUSPENDED']);
  assert.equal(after.status?.clusterInfo?.['flink-version'], '1.19.1', 'clusterInfo is kept while suspended (Apache never clears it)');
  await h.delete(name);
});

test('a session cluster: Running follows its JobManager (reason JobManagerReady)', T, async () => {
  const name = 'compat-session';
  await h.create(flinkDeployment(name).withoutJob().build());
  const waited = await kubectl.run(['wait', '--for=condition=Running', `flinkdeployment/${name}`, '--timeout=40s']);
  assert.equal(waited.code, 0, `kubectl wait: ${waited.stderr}`);
  const d = await h.get(name);
  assert.equal(d?.status?.jobManagerDeploymentStatus, 'READY');
  assert.deepEqual(
    [runningOf(d)?.status, runningOf(d)?.reason, runningOf(d)?.message],
    ['True', 'JobManagerReady', 'JobManager is running and ready to receive REST API calls'],
  );
  const info = await h.waitFor(name, (x) => x.status?.clusterInfo?.['flink-version'] !== undefined, 'clusterInfo');
  assert.equal(info.status?.clusterInfo?.['flink-version'], '1.20.0');
  await h.delete(name);
});
