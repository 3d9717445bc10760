/**
 * Fault safety: what a user notices when the world around a running FlinkDeployment goes wrong
 * (its state ConfigMap lost, rolled back, copied from another deployment; its status hand-edited;
 * Flink REST down at deletion; the JobManager gone mid-stop; API writes refused; a stop that keeps
 * failing). Each test reproduces one reported bug and asserts the behaviour after the fix, judged by
 * the simulator's lineage and the objects, not by exact messages.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Watch, PatchStrategy, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { defaultSpec, flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { LineageRecord } from '../../src/devcluster/simulation/lineage-recorder.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';

let h: OperatorHarness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  h?.world.cluster.faults.clear();
  await h?.stop();
});

const NS = 'default';
const TIMEOUT = 30_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' && d.status?.observedGeneration === generation && d.status?.jobStatus?.state === 'RUNNING';
const lineage = (name: string, namespace = NS): LineageRecord => h.world.simulation.lineage(namespace, name);
const stops = (l: LineageRecord) => l.savepoints.filter((s) => s.kind === 'stop-with-savepoint');
const stateName = (name: string) => `${name}-operator-state`;

/** The README example: a spec with no `job.state` (the API default `running` is implied). */
function readmeSpec(): FlinkDeploymentSpec {
  const spec = defaultSpec();
  delete spec.job!.state;
  return spec;
}

/** What the lineage holds now, to compare "nothing happened since". */
function counts(name: string) {
  const l = lineage(name);
  return { submissions: l.submissions.length, stops: stops(l).length, savepoints: l.savepoints.length, cancellations: l.cancellations.length };
}

function assertNoDuplicateJobIds(name: string): void {
  const ids = lineage(name)
    .submissions.filter((s) => s.origin === 'submitted')
    .map((s) => s.jobId);
  assert.equal(new Set(ids).size, ids.length, `no job id submitted twice (${ids.join(', ')})`);
}

async function deleteStateConfigMap(name: string): Promise<string | undefined> {
  const old = await h.stateConfigMap(name);
  await h.core.deleteNamespacedConfigMap({ namespace: NS, name: stateName(name) });
  return old?.metadata?.uid;
}

/** Waits for a state ConfigMap that is not the incarnation `oldUid`. */
function rebuiltStateConfigMap(name: string, oldUid: string | undefined): Promise<V1ConfigMap> {
  return h.waitUntil(
    async () => {
      const cm = await h.stateConfigMap(name);
      return cm && cm.metadata?.uid !== oldUid ? cm : undefined;
    },
    `the state ConfigMap of ${name} to exist again`,
    TIMEOUT,
  );
}

/** The status has caught up with the newest state revision (nothing left to write). */
async function settled(name: string, generation: number): Promise<FlinkDeploymentV1> {
  return h.waitUntil(
    async () => {
      const d = await h.get(name);
      const cm = await h.stateConfigMap(name);
      return d && cm && stable(generation)(d) && String(d.status?.stateRef?.revision) === cm.data?.revision ? d : undefined;
    },
    `${name} STABLE on generation ${generation}, its status reflecting the newest state revision`,
    TIMEOUT,
  );
}

async function replaceStateData(name: string, from: V1ConfigMap): Promise<V1ConfigMap> {
  const current = (await h.stateConfigMap(name))!;
  const body: V1ConfigMap = { ...current, data: { ...(from.data ?? {}) } };
  if (from.binaryData) body.binaryData = { ...from.binaryData };
  else delete body.binaryData;
  return h.core.replaceNamespacedConfigMap({ namespace: NS, name: stateName(name), body });
}

async function warningEvents(name: string, namespace = NS): Promise<Array<{ reason: string; message: string }>> {
  return (await h.events(name, namespace)).filter((e) => e.type === 'Warning').map((e) => ({ reason: e.reason ?? '', message: e.message ?? '' }));
}

async function patchStatus(name: string, status: Record<string, unknown>): Promise<void> {
  await h.custom.patchNamespacedCustomObjectStatus(
    { group: 'flink.apache.org', version: 'v1', namespace: NS, plural: 'flinkdeployments', name, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function jobManagerExists(name: string, namespace = NS): Promise<boolean> {
  try {
    await h.apps.readNamespacedDeployment({ namespace, name });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return false;
    throw error;
  }
}

/** A savepoint upgrade: a Flink configuration value the job sees changes. */
const upgrade = (name: string, value: string) => h.patch(name, { spec: { flinkConfiguration: { 'fault-safety.marker': value } } });

function waitForStopInProgress(name: string): Promise<true> {
  return h.waitUntil(
    () => (stops(lineage(name)).some((s) => s.status === 'IN_PROGRESS') ? true : undefined),
    `a stop-with-savepoint of ${name} in progress`,
    TIMEOUT,
  );
}

// ---------------------------------------------------------------------------------------------

/** Deletes the state ConfigMap of a running deployment; it comes back naming the running job, which nothing touched. */
async function deleteAndExpectRebuiltUntouched(name: string, jobId: string, before: ReturnType<typeof counts>): Promise<void> {
  const oldUid = await deleteStateConfigMap(name);
  await rebuiltStateConfigMap(name, oldUid);
  await sleep(1_500);
  assert.deepEqual(counts(name), before, 'no new submission, savepoint, stop or cancellation after the ConfigMap was deleted');
  const after = (await h.get(name))!;
  assert.equal(after.status?.jobStatus?.jobId, jobId, 'the same job');
  assert.equal(after.status?.jobStatus?.state, 'RUNNING');
  assert.equal(after.status?.lifecycleState, 'STABLE');
  assert.equal((await h.stateConfigMap(name))!.data?.deployedJobId, jobId, 'the rebuilt state names the running job');
}

test('1. a lost state ConfigMap of a STABLE deployment without job.state is rebuilt without touching the job', { timeout: 60_000 }, async () => {
  const name = 'lost-state';
  await h.create(flinkDeployment(name).withExactSpec(readmeSpec()).build());
  const running = await settled(name, 1);
  const jobId = running.status!.jobStatus!.jobId!;
  const before = counts(name);

  await deleteAndExpectRebuiltUntouched(name, jobId, before);
});

test(
  '2. a lost state ConfigMap after a manual savepoint: the job is untouched, and the next upgrade restores from the newest savepoint',
  { timeout: 60_000 },
  async () => {
    const name = 'lost-after-manual';
    await h.create(flinkDeployment(name).withExactSpec(readmeSpec()).build());
    await settled(name, 1);
    await h.patch(name, { spec: { job: { savepointTriggerNonce: 1 } } });
    await h.waitFor(name, (d) => d.status?.jobStatus?.lastSavepoint?.triggerType === 'MANUAL' && stable(2)(d), 'the manual savepoint', TIMEOUT);
    const running = await settled(name, 2);
    const jobId = running.status!.jobStatus!.jobId!;
    const manual = lineage(name).savepoints.find((s) => s.kind === 'savepoint' && s.status === 'COMPLETED');
    assert.ok(manual?.location, 'the manual savepoint completed');
    const before = counts(name);

    await deleteAndExpectRebuiltUntouched(name, jobId, before);

    await upgrade(name, 'v2');
    await h.waitFor(name, stable(3), `${name} STABLE after the upgrade`, TIMEOUT);
    const l = lineage(name);
    const upgradeStops = stops(l).slice(before.stops);
    assert.equal(upgradeStops.length, 1, 'the upgrade takes exactly one stop-with-savepoint');
    assert.equal(upgradeStops[0].status, 'COMPLETED');
    assert.equal(upgradeStops[0].jobId, jobId, 'it stops the running job');
    assert.equal(l.submissions.length, before.submissions + 1, 'one new job');
    assert.equal(l.submissions.at(-1)!.restoredFrom, upgradeStops[0].location, 'the new job restores from the upgrade savepoint (the newest)');
    assertNoDuplicateJobIds(name);
  },
);

test(
  '3. the state ConfigMap deleted while the upgrade stop-with-savepoint is in flight: one savepoint, the new job restores from it',
  { timeout: 60_000 },
  async () => {
    const name = 'lost-mid-stop';
    await h.create(flinkDeployment(name).withFlinkConfiguration({ 'simulator.savepoint.duration': '1500 ms' }).build());
    await settled(name, 1);
    await upgrade(name, 'v2');
    await waitForStopInProgress(name);
    await deleteStateConfigMap(name);

    const after = await h.waitFor(name, stable(2), `${name} STABLE on generation 2`, TIMEOUT);
    const l = lineage(name);
    const completed = stops(l).filter((s) => s.status === 'COMPLETED');
    assert.equal(
      completed.length,
      1,
      `exactly one completed stop-with-savepoint (savepoints: ${JSON.stringify(l.savepoints)}; submissions: ${JSON.stringify(l.submissions.map((s) => ({ jobId: s.jobId, restoredFrom: s.restoredFrom })))})`,
    );
    const last = l.submissions.at(-1)!;
    assert.equal(last.restoredFrom, completed[0].location, `the new job restores from the upgrade savepoint (${JSON.stringify(l.submissions)})`);
    assert.equal(after.status?.jobStatus?.jobId, last.jobId);
    assertNoDuplicateJobIds(name);
  },
);

test('4. a state ConfigMap put back to an older revision is refused, not acted on', { timeout: 60_000 }, async () => {
  const name = 'stale-state';
  await h.create(flinkDeployment(name).build());
  await settled(name, 1);
  const captured = (await h.stateConfigMap(name))!;
  const oldJobId = captured.data!.deployedJobId;
  await upgrade(name, 'v2');
  const upgraded = await settled(name, 2);
  const newJobId = upgraded.status!.jobStatus!.jobId!;
  assert.notEqual(newJobId, oldJobId);
  const newestRevision = Number((await h.stateConfigMap(name))!.data!.revision);
  assert.ok(Number(captured.data!.revision) < newestRevision);
  const before = counts(name);

  const put = await replaceStateData(name, captured);
  await sleep(3_000);

  assert.deepEqual(counts(name), before, 'no submission, savepoint, stop or cancellation after the old revision was put back');
  assert.equal(lineage(name).submissions.filter((s) => s.jobId === oldJobId).length, 1, 'the old job id is never submitted again');
  assertNoDuplicateJobIds(name);
  const cm = (await h.stateConfigMap(name))!;
  const untouched = cm.metadata?.resourceVersion === put.metadata?.resourceVersion;
  assert.ok(
    untouched || Number(cm.data?.revision) >= newestRevision,
    `the old revision is not built upon (revision now ${cm.data?.revision}, newest was ${newestRevision})`,
  );
  const d = await h.waitFor(name, (x) => /revision/i.test(x.status?.error ?? ''), 'status.error naming the revision', 5_000);
  assert.match(d.status!.error!, /revision/i);
  const warnings = await warningEvents(name);
  assert.ok(
    warnings.some((e) => e.reason === 'StateError'),
    `a StateError event (${JSON.stringify(warnings)})`,
  );
});

test("5. another deployment's state content copied into a state ConfigMap is refused; neither job is touched", { timeout: 60_000 }, async () => {
  const a = 'owner-a';
  const b = 'owner-b';
  await h.create(flinkDeployment(a).build());
  await h.create(flinkDeployment(b).withFlinkConfiguration({ 'fault-safety.marker': 'b' }).build());
  await settled(a, 1);
  await settled(b, 1);
  const beforeA = counts(a);
  const beforeB = counts(b);

  await replaceStateData(a, (await h.stateConfigMap(b))!);
  await sleep(3_000);

  assert.deepEqual(counts(a), beforeA, `${a}: no submission, savepoint, stop or cancellation`);
  assert.deepEqual(counts(b), beforeB, `${b}: no submission, savepoint, stop or cancellation`);
  const d = await h.waitFor(
    a,
    (x) => /belongs to|another FlinkDeployment|other FlinkDeployment/i.test(x.status?.error ?? ''),
    `${a}: status.error saying the state belongs to another deployment`,
    5_000,
  );
  assert.match(d.status!.error!, /belongs to|another FlinkDeployment|other FlinkDeployment/i);
});

test('6. hand-edited status (foreign savepoint, bogus job id) does not leak into a rebuilt state', { timeout: 90_000 }, async () => {
  const a = 'edited-a';
  const b = 'edited-b';
  await h.create(flinkDeployment(a).build());
  await h.create(flinkDeployment(b).build());
  const runningA = await settled(a, 1);
  await settled(b, 1);
  const jobA = runningA.status!.jobStatus!.jobId!;
  await h.patch(b, { spec: { job: { savepointTriggerNonce: 1 } } });
  await h.waitFor(b, (d) => d.status?.jobStatus?.lastSavepoint?.triggerType === 'MANUAL' && stable(2)(d), `${b}: the manual savepoint`, TIMEOUT);
  const foreign = lineage(b).savepoints.find((s) => s.kind === 'savepoint' && s.status === 'COMPLETED')!.location!;
  const bogus = 'deadbeef'.repeat(4);

  // With the operator down, so that the edit cannot be repaired before the ConfigMap is gone.
  await h.stopOperator();
  try {
    await patchStatus(a, { jobStatus: { jobId: bogus, lastSavepoint: { location: foreign, timeStamp: Date.now(), triggerType: 'MANUAL' } } });
    await h.core.deleteNamespacedConfigMap({ namespace: NS, name: stateName(a) });
  } finally {
    await h.startOperator();
  }
  const rebuilt = await rebuiltStateConfigMap(a, undefined);
  await sleep(1_500);
  const cm = (await h.stateConfigMap(a)) ?? rebuilt;
  assert.equal(cm.data?.deployedJobId, jobA, "the rebuilt state names A's running job, not the hand-edited id");
  assert.ok(!JSON.stringify(cm.data ?? {}).includes(foreign), "B's savepoint is not in A's state");

  const before = counts(a);
  await upgrade(a, 'v2');
  await h.waitFor(a, stable(2), `${a} STABLE after the upgrade`, TIMEOUT);
  const l = lineage(a);
  const upgradeStops = stops(l).slice(before.stops);
  assert.equal(upgradeStops.length, 1, 'one stop-with-savepoint of A');
  assert.equal(upgradeStops[0].status, 'COMPLETED');
  assert.equal(upgradeStops[0].jobId, jobA);
  const restoredFrom = l.submissions.at(-1)!.restoredFrom;
  assert.notEqual(restoredFrom, foreign, "A never restores from B's savepoint");
  assert.equal(restoredFrom, upgradeStops[0].location, 'A restores from its own upgrade savepoint');
  assert.ok(!JSON.stringify((await h.stateConfigMap(a))?.data ?? {}).includes(foreign), "B's savepoint is not in A's state after the upgrade");
  for (const who of [a, b]) {
    assert.ok(!lineage(who).disposals.some((x) => x.path === foreign), `B's savepoint is never disposed (lineage of ${who})`);
  }
});

test('7. savepoint-on-deletion with Flink REST down: the finalizer holds until the final savepoint is taken', { timeout: 60_000 }, async () => {
  const name = 'delete-outage';
  await h.create(flinkDeployment(name).withFlinkConfiguration({ 'kubernetes.operator.job.savepoint-on-deletion': 'true' }).build());
  await settled(name, 1);
  const faults = h.world.cluster.faults;
  const restProxy = new RegExp(`^/api/v1/namespaces/${NS}/services/${name}-rest(:[^/]*)?/proxy(/|$)`);
  faults.failNext({ path: restProxy }, { code: 503, message: `no endpoints available for service "${name}-rest"` }, 1_000_000);
  try {
    await h.delete(name);
    const until = Date.now() + 2_000;
    while (Date.now() < until) {
      const d = await h.get(name);
      assert.ok(d, 'the FlinkDeployment is held by its finalizer while Flink cannot take the savepoint');
      assert.ok(await jobManagerExists(name), 'the JobManager Deployment is not deleted while the savepoint cannot be taken');
      await sleep(100);
    }
    const d = (await h.get(name))!;
    const warnings = await warningEvents(name);
    assert.ok(
      /savepoint/i.test(d.status?.error ?? '') || warnings.some((e) => /savepoint/i.test(e.message)),
      `status.error or a Warning event mentions the savepoint (error: ${d.status?.error}; warnings: ${JSON.stringify(warnings)})`,
    );
  } finally {
    faults.clear();
  }
  await h.waitUntil(async () => ((await h.get(name)) === undefined ? true : undefined), `${name} to be deleted`, TIMEOUT);
  const goneAt = Date.now();
  const completed = stops(lineage(name)).filter((s) => s.status === 'COMPLETED');
  assert.equal(completed.length, 1, `one completed stop-with-savepoint (${JSON.stringify(lineage(name).savepoints)})`);
  assert.ok(Date.parse(completed[0].completedAt!) <= goneAt);
});

test('8. the JobManager Deployment deleted during the upgrade stop does not leave the deployment UPGRADING forever', { timeout: 60_000 }, async () => {
  const name = 'jm-gone';
  await h.create(flinkDeployment(name).withFlinkConfiguration({ 'simulator.savepoint.duration': '1500 ms' }).build());
  await settled(name, 1);
  await upgrade(name, 'v2');
  await waitForStopInProgress(name);
  await h.apps.deleteNamespacedDeployment({ namespace: NS, name });

  const d = await h.waitFor(name, (x) => stable(2)(x) || (x.status?.error ?? '') !== '', `${name} STABLE on generation 2 or a status.error`, 20_000);
  assert.ok(!(d.status?.lifecycleState === 'UPGRADING' && !d.status?.error), 'not UPGRADING without an error');
  if (stable(2)(d)) {
    const l = lineage(name);
    assert.ok(l.submissions.length >= 2, 'a new job was submitted');
    assert.equal(d.status?.jobStatus?.jobId, l.submissions.at(-1)!.jobId);
    assertNoDuplicateJobIds(name);
  }
});

test('9. a failing Kubernetes write during a deploy is reported in status.error, then the deployment recovers', { timeout: 60_000 }, async () => {
  const namespace = 'fault-safety';
  const name = 'forbidden-create';
  await h.core.createNamespace({ body: { metadata: { name: namespace } } });
  // Every version of the FlinkDeployment and the creation of its JobManager Deployment, in resourceVersion order.
  const versions: FlinkDeploymentV1[] = [];
  let jobManagerCreatedAt: number | undefined;
  const watch = new Watch(h.kubeConfig);
  const watches = [
    await watch.watch(
      `/apis/flink.apache.org/v1/namespaces/${namespace}/flinkdeployments`,
      {},
      (phase, obj: FlinkDeploymentV1) => {
        if (phase !== 'DELETED' && obj.metadata?.name === name) versions.push(obj);
      },
      () => {},
    ),
    await watch.watch(
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
      {},
      (phase, obj: { metadata?: { name?: string; resourceVersion?: string } }) => {
        if (phase === 'ADDED' && obj.metadata?.name === name && jobManagerCreatedAt === undefined) jobManagerCreatedAt = Number(obj.metadata.resourceVersion);
      },
      () => {},
    ),
  ];
  const faults = h.world.cluster.faults;
  try {
    faults.failNext(
      { verb: 'create', resource: 'deployments', namespace },
      { code: 403, message: `deployments.apps is forbidden: exceeded quota: compute-resources` },
      5,
    );
    await h.create(flinkDeployment(name).inNamespace(namespace).build());
    await h.waitUntil(() => (faults.pending() === 0 ? true : undefined), 'the injected failures to be consumed', TIMEOUT);
    await h.waitFor(name, stable(1), `${name} STABLE after the failures`, TIMEOUT, namespace);
    await h.waitUntil(() => jobManagerCreatedAt, 'the watch to report the JobManager Deployment', 5_000);
    const whileFailing = versions.filter((v) => Number(v.metadata.resourceVersion) < jobManagerCreatedAt! && v.status !== undefined);
    const seen = JSON.stringify(whileFailing.map((v) => ({ lifecycle: v.status?.lifecycleState, job: v.status?.jobStatus?.state, error: v.status?.error })));
    assert.ok(
      whileFailing.length > 0,
      `a status was written while the JobManager Deployment could not be created (${versions.length} versions watched, none with a status before the JobManager Deployment was created at resourceVersion ${jobManagerCreatedAt})`,
    );
    assert.ok((whileFailing.at(-1)!.status?.error ?? '') !== '', `status.error is set while the writes fail (statuses seen: ${seen})`);
  } finally {
    faults.clear();
    for (const w of watches) w.abort();
  }
});

test('10. a failed upgrade stop-with-savepoint is not retried on every pass; the old job keeps running', { timeout: 60_000 }, async () => {
  const name = 'stop-fails';
  await h.create(
    flinkDeployment(name)
      .withFlinkConfiguration({
        'simulator.savepoint.failure': 'fail',
        'kubernetes.operator.savepoint.trigger.grace-period': '400 ms',
      })
      .build(),
  );
  const running = await settled(name, 1);
  const jobId = running.status!.jobStatus!.jobId!;
  await upgrade(name, 'v2');
  await h.waitUntil(async () => ((await warningEvents(name)).some((e) => e.reason === 'SavepointError') ? true : undefined), 'a SavepointError event', TIMEOUT);
  await sleep(1_000);
  const failedSoon = stops(lineage(name)).filter((s) => s.status === 'FAILED').length;
  await sleep(3_000);
  const failedLater = stops(lineage(name)).filter((s) => s.status === 'FAILED').length;
  assert.ok(failedSoon >= 1, 'the stop failed');
  assert.equal(
    failedLater,
    failedSoon,
    `the failed stop is not retried on every pass (${failedSoon} failed attempts 1 s after the error, ${failedLater} 4 s after)`,
  );
  const d = (await h.get(name))!;
  assert.match(d.status?.error ?? '', /savepoint/i, 'status.error mentions the failed savepoint');
  assert.match(d.status?.error ?? '', /fail/i);
  assert.equal(d.status?.jobStatus?.jobId, jobId, 'the old job');
  assert.equal(d.status?.jobStatus?.state, 'RUNNING');
  const l = lineage(name);
  assert.equal(l.submissions.length, 1, 'no new job');
  assert.ok(!l.cancellations.some((c) => c.jobId === jobId), 'the old job is not cancelled');
});
