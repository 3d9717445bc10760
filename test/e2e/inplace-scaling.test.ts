/**
 * End-to-end: in-place scaling (Apache `kubernetes.operator.job.upgrade.inplace-scaling.enabled`,
 * default true). A change of `pipeline.jobvertex-parallelism-overrides` of a native deployment on
 * Flink 1.18+ with the adaptive scheduler goes through Flink's resource-requirements API
 * (PUT /jobs/:jobid/resource-requirements, ../shared/reference/flink-rest-v1-dispatcher.yml): the
 * same job keeps running with the new parallelism, nothing is submitted again. On Flink 1.17 (no
 * such endpoint), without the adaptive scheduler, or with the key off, it is a full savepoint upgrade,
 * as Apache's NativeFlinkService.scale falls back. An intent a crash left behind is settled by
 * reading the bounds back from Flink, never by sending them again.
 *
 * Judged by the simulated Flink: its lineage (submissions, rescales, savepoints) and the job's
 * parallelism as its JobManager runs it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { SIMULATED_VERTEX_ID } from '../../src/devcluster/simulation/flink-job.js';
import { flinkRestClientFor } from '../../src/flink/flink-rest-access.js';
import { FlinkRestError } from '../../src/flink/flink-rest-error.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness({ operator: { reconcileIntervalMs: 500 } });
});
after(async () => {
  await h?.stop();
});

const OVERRIDES = 'pipeline.jobvertex-parallelism-overrides';
const overrides = (parallelism: number) => `${SIMULATED_VERTEX_ID}:${parallelism}`;
const ADAPTIVE = { 'jobmanager.scheduler': 'adaptive' };

const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';

function deployment(name: string, flink: '1.17' | '1.18' | '1.20', config: Record<string, string>): FlinkDeploymentV1 {
  return flinkDeployment(name)
    .withSpec({
      mode: 'native',
      image: `flink:${flink}`,
      flinkVersion: `v${flink.replace('.', '_')}` as FlinkDeploymentSpec['flinkVersion'],
      job: { parallelism: 2 },
      flinkConfiguration: { [OVERRIDES]: overrides(2), ...config },
    })
    .build();
}

/** The parallelism the simulated JobManager runs job `jobId` with. */
function runningParallelism(name: string, jobId: string): number | undefined {
  const jm = h.world.simulation.jobManagers().find((j) => j.deployment.name === name && !j.isStopped);
  return jm?.getJob(jobId)?.parallelism;
}

/** The operator's own Flink REST client of `d`, through the API server's service proxy. */
function flinkClient(d: FlinkDeploymentV1) {
  return flinkRestClientFor(d, { mode: 'apiserver-proxy', kubeConfig: h.kubeConfig, retry: { getAttempts: 1, backoffMs: [] } });
}

/** The FlinkRestError `call` fails with (it must fail). */
async function flinkErrorOf(call: Promise<unknown>): Promise<FlinkRestError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof FlinkRestError, `a FlinkRestError, got ${String(error)}`);
  return error;
}

async function rescaleTo(name: string, parallelism: number): Promise<void> {
  await h.patch(name, { spec: { flinkConfiguration: { [OVERRIDES]: overrides(parallelism) } } });
}

async function reconciledOverrides(name: string): Promise<string | undefined> {
  const cm = await h.stateConfigMap(name);
  const spec = parseYaml(cm?.data?.lastReconciledSpec ?? '{}') as FlinkDeploymentSpec;
  return spec.flinkConfiguration?.[OVERRIDES] as string | undefined;
}

test('Flink 1.18, adaptive scheduler: a parallelism-overrides change rescales the running job in place, no new submission', async () => {
  await h.create(deployment('inplace', '1.18', ADAPTIVE));
  const first = await h.waitFor('inplace', (d) => stable(1)(d) && d.status?.taskManager?.replicas === 1, 'inplace STABLE with 1 TaskManager');
  const jobId = first.status!.jobStatus!.jobId!;
  assert.equal(runningParallelism('inplace', jobId), 2);
  // Flink's answers, through the operator's client: the bounds (lower = min parallelism 1), and
  // JobResourceRequirements.validate's refusal of a request that names another vertex (400).
  const client = flinkClient(first);
  assert.deepEqual(await client.getResourceRequirements(jobId), { [SIMULATED_VERTEX_ID]: { parallelism: { lowerBound: 1, upperBound: 2 } } });
  const other = 'f'.repeat(32);
  const invalid = await flinkErrorOf(client.updateResourceRequirements(jobId, { [other]: { parallelism: { lowerBound: 1, upperBound: 3 } } }));
  assert.equal(invalid.status, 400);
  assert.deepEqual((invalid.serverMessages ?? []).join('\n').split('\n'), [
    `Job vertex [${other}] was not found in the JobGraph.`,
    `The request is incomplete, missing job vertex [${SIMULATED_VERTEX_ID}] resource requirements.`,
  ]);
  const jobManagerUid = (await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'inplace' })).metadata?.uid;

  await rescaleTo('inplace', 4);
  // 4 / 2 slots: the native JobManager asks for a second TaskManager for the new requirements
  const scaled = await h.waitFor(
    'inplace',
    (d) => stable(2)(d) && d.status?.taskManager?.replicas === 2,
    'inplace STABLE on generation 2 with 2 TaskManagers',
    20_000,
  );
  await h.waitUntil(() => runningParallelism('inplace', jobId) === 4 || undefined, 'the job to run with parallelism 4');

  const lineage = h.world.simulation.lineage('default', 'inplace');
  assert.equal(lineage.submissions.length, 1, 'the job was submitted once: no redeploy');
  assert.deepEqual(
    lineage.rescales.map((r) => [r.jobId, r.fromParallelism, r.toParallelism]),
    [[jobId, 2, 4]],
    'one in-place rescale of the same job',
  );
  assert.equal(lineage.savepoints.length, 0, 'no upgrade savepoint');
  assert.equal(lineage.cancellations.length, 0);
  assert.equal(scaled.status?.jobStatus?.jobId, jobId, 'status: the same job');
  const jobManager = await h.apps.readNamespacedDeployment({ namespace: 'default', name: 'inplace' });
  assert.equal(jobManager.metadata?.uid, jobManagerUid, 'the JobManager Deployment was not replaced');
  assert.equal(await reconciledOverrides('inplace'), overrides(4), 'the new overrides are the reconciled spec');
  const pending = parseYaml((await h.stateConfigMap('inplace'))?.data?.pendingOperation ?? '{}') as Record<string, unknown> | null;
  assert.equal(pending?.inPlaceScaling, undefined, 'no in-place intent left');
  const events = await h.events('inplace');
  assert.ok(
    events.some((e) => e.reason === 'Scaling' && e.message?.startsWith('In-place scaling triggered')),
    'the Scaling event',
  );
});

test('Flink 1.17 (no resource-requirements API): the same change is a full savepoint upgrade', async () => {
  await h.create(deployment('oldflink', '1.17', ADAPTIVE));
  const first = await h.waitFor('oldflink', stable(1), 'oldflink STABLE');
  // Flink 1.17's router has no such route: 404 "Not found" (the endpoint came with FLIP-291 in 1.18).
  const notFound = await flinkErrorOf(flinkClient(first).getResourceRequirements(first.status!.jobStatus!.jobId!));
  assert.equal(notFound.status, 404);
  assert.match(notFound.serverMessages?.[0] ?? '', /^Not found: \/jobs\/[0-9a-f]{32}\/resource-requirements$/);
  await rescaleTo('oldflink', 4);
  const upgraded = await h.waitFor('oldflink', stable(2), 'oldflink STABLE on generation 2', 20_000);

  const lineage = h.world.simulation.lineage('default', 'oldflink');
  assert.equal(lineage.rescales.length, 0, 'nothing rescaled in place');
  assert.equal(lineage.submissions.length, 2, 'a new job');
  const stop = lineage.savepoints.find((s) => s.kind === 'stop-with-savepoint' && s.status === 'COMPLETED');
  assert.ok(stop, 'the old job stopped with a savepoint');
  assert.equal(lineage.submissions[1].restoredFrom, stop.location, 'the new job restored from it');
  assert.equal(lineage.submissions[1].parallelism, 4, 'the new job runs with the new override');
  assert.notEqual(upgraded.status?.jobStatus?.jobId, first.status?.jobStatus?.jobId);
});

test('without the adaptive scheduler, or with the key off, the change is a full upgrade', async () => {
  await h.create(deployment('defaultsched', '1.18', {}));
  await h.create(deployment('keyoff', '1.18', { ...ADAPTIVE, 'kubernetes.operator.job.upgrade.inplace-scaling.enabled': 'false' }));
  const defaultsched = await h.waitFor('defaultsched', stable(1), 'defaultsched STABLE');
  // Flink's SchedulerNG default (DefaultScheduler): UnsupportedOperationException, answered 500 by the REST handler.
  const refused = await flinkErrorOf(
    flinkClient(defaultsched).updateResourceRequirements(defaultsched.status!.jobStatus!.jobId!, {
      [SIMULATED_VERTEX_ID]: { parallelism: { lowerBound: 1, upperBound: 3 } },
    }),
  );
  assert.equal(refused.status, 500);
  assert.match(
    (refused.serverMessages ?? []).join('\n'),
    /The DefaultScheduler does not support changing the parallelism without a job restart\. This feature is currently only expected to work with the AdaptiveScheduler\./,
  );
  await h.waitFor('keyoff', stable(1), 'keyoff STABLE');
  await rescaleTo('defaultsched', 3);
  await rescaleTo('keyoff', 3);
  for (const name of ['defaultsched', 'keyoff']) {
    await h.waitFor(name, stable(2), `${name} STABLE on generation 2`, 20_000);
    const lineage = h.world.simulation.lineage('default', name);
    assert.equal(lineage.rescales.length, 0, `${name}: nothing rescaled in place`);
    assert.deepEqual(
      lineage.submissions.map((s) => s.parallelism),
      [2, 3],
      `${name}: a new job with the new parallelism`,
    );
  }
});

test('Flink refuses the bounds (above the vertex max parallelism 128): the change falls back to the full upgrade', async () => {
  await h.create(deployment('toohigh', '1.18', ADAPTIVE));
  await h.waitFor('toohigh', stable(1), 'toohigh STABLE');
  await rescaleTo('toohigh', 200);
  await h.waitFor('toohigh', stable(2), 'toohigh STABLE on generation 2', 20_000);
  const lineage = h.world.simulation.lineage('default', 'toohigh');
  assert.equal(lineage.rescales.length, 0);
  assert.deepEqual(
    lineage.submissions.map((s) => s.parallelism),
    [2, 200],
  );
  const events = await h.events('toohigh');
  const warning = events.find((e) => e.type === 'Warning' && e.reason === 'Scaling');
  // JobResourceRequirements.validate's text, through Dispatcher.updateJobResourceRequirements (400).
  assert.match(warning?.message ?? '', /exceeds its maximum parallelism 128/);
});

/**
 * A crash between the intent and its result: the operator is stopped, the state ConfigMap given
 * the intent a crashed operator would have left (its spec and bounds), and the spec changed to it.
 * `flinkTookIt`: Flink got the PUT before the crash (the bounds are applied here through its REST
 * API); otherwise the PUT was never sent.
 */
async function crashAfterIntent(name: string, flinkTookIt: boolean): Promise<string> {
  await h.create(deployment(name, '1.20', ADAPTIVE));
  const first = await h.waitFor(name, stable(1), `${name} STABLE`);
  const jobId = first.status!.jobStatus!.jobId!;
  await h.stopOperator();
  const cm = (await h.stateConfigMap(name))!;
  const spec = parseYaml(cm.data!.lastReconciledSpec) as FlinkDeploymentSpec;
  spec.flinkConfiguration = { ...spec.flinkConfiguration, [OVERRIDES]: overrides(5) };
  const bounds = { [SIMULATED_VERTEX_ID]: { lowerBound: 1, upperBound: 5 } };
  const pending = (parseYaml(cm.data!.pendingOperation ?? '{}') as Record<string, unknown> | null) ?? {};
  cm.data!.pendingOperation = stringifyYaml({ ...pending, inPlaceScaling: { generation: 2, jobId, requirements: bounds, spec } });
  await h.core.replaceNamespacedConfigMap({ namespace: 'default', name: cm.metadata!.name!, body: cm });
  await rescaleTo(name, 5);
  if (flinkTookIt) {
    const jm = h.world.simulation.jobManagers().find((j) => j.deployment.name === name && !j.isStopped)!;
    const { routeResourceRequirements } = await import('../../src/devcluster/simulation/flink-resource-requirements.js');
    const answer = routeResourceRequirements(jm, 'PUT', jobId, { [SIMULATED_VERTEX_ID]: { parallelism: bounds[SIMULATED_VERTEX_ID] } });
    assert.equal(answer?.status, 200);
  }
  await h.startOperator({ reconcileIntervalMs: 500 });
  return jobId;
}

test('crash after the PUT reached Flink: the intent is settled by reading the bounds back, nothing is sent again', async () => {
  const jobId = await crashAfterIntent('lostanswer', true);
  await h.waitFor('lostanswer', stable(2), 'lostanswer STABLE on generation 2', 20_000);
  await h.waitUntil(async () => ((await reconciledOverrides('lostanswer')) === overrides(5) ? true : undefined), 'the intent settled');
  const lineage = h.world.simulation.lineage('default', 'lostanswer');
  assert.equal(lineage.submissions.length, 1, 'no new submission');
  assert.equal(lineage.rescales.length, 1, 'the one rescale from before the crash, not repeated');
  assert.equal(runningParallelism('lostanswer', jobId), 5);
});

test('crash before the PUT was sent: Flink does not show the bounds, so the change goes through the full upgrade', async () => {
  await crashAfterIntent('neversent', false);
  await h.waitFor('neversent', stable(2), 'neversent STABLE on generation 2', 20_000);
  const lineage = h.world.simulation.lineage('default', 'neversent');
  assert.equal(lineage.rescales.length, 0, 'the PUT was not sent after the crash');
  assert.deepEqual(
    lineage.submissions.map((s) => s.parallelism),
    [2, 5],
    'a full upgrade to the new parallelism',
  );
  assert.ok(lineage.savepoints.some((s) => s.kind === 'stop-with-savepoint' && s.status === 'COMPLETED'));
  const events = await h.events('neversent');
  assert.ok(events.some((e) => e.type === 'Warning' && e.reason === 'Scaling' && e.message?.includes('does not show the requested resource requirements')));
});
