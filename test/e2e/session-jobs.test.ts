/**
 * End-to-end: FlinkSessionJobs on a session cluster of the development cluster (issue 18, "Done
 * when"): three session jobs submitted through Flink's jar API, each upgraded with a savepoint, one
 * suspended and resumed, and the session cluster's deletion blocked until the jobs are gone.
 *
 * Judged by the simulated Flink's lineage (every submission, savepoint and cancel the JobManager
 * saw), not by the operator's logs: no job id is submitted twice, every upgrade stops its job with
 * exactly one savepoint and the new job is restored from it. The blocking follows the Apache
 * operator's SessionReconciler.cleanupInternal ("The session jobs [...] should be deleted first",
 * event reason CleanupFailed; apache/flink-kubernetes-operator @ 6e9caeb4).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { flinkSessionJob } from '../../src/api/flink-session-job-builder.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1 } from '../../src/api/flink-session-job.js';
import { emptyJar } from '../../src/flink/session-job-artifacts.js';
import { sessionJobStateConfigMapName } from '../../src/state/state-store.js';
import { startHarness, type OperatorHarness } from './operator-harness.js';
import { flinkStateSnapshot } from '../../src/api/flink-state-snapshot-builder.js';
import type { FlinkStateSnapshot } from '../../src/api/flink-state-snapshot.js';

const GROUP = 'flink.apache.org';
const NS = 'default';
const CLUSTER = 'shared-sessions';
const JOBS = ['orders', 'payments', 'fraud'] as const;

let h: OperatorHarness;
let jarServer: Server;
let jarBase = '';
const jarRequests: string[] = [];

before(async () => {
  // The jars, served over http on loopback: the operator is told to allow both (defaults: https only, no private addresses).
  jarServer = createServer((req, res) => {
    jarRequests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/java-archive' });
    res.end(Buffer.from(emptyJar()));
  });
  await new Promise<void>((resolve) => jarServer.listen(0, '127.0.0.1', resolve));
  jarBase = `http://127.0.0.1:${(jarServer.address() as AddressInfo).port}`;
  h = await startHarness({
    sessionJobs: true,
    stateSnapshots: true,
    operator: { sessionJobJarSchemes: ['http', 'https'], sessionJobJarRestrictedHosts: true, reconcileIntervalMs: 1_000 },
  });
});
after(async () => {
  await h?.stop();
  await new Promise((resolve) => jarServer?.close(resolve));
});

const sessionJobs = {
  create: async (job: FlinkSessionJobV1) =>
    (await h.custom.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: NS,
      plural: FLINK_SESSION_JOB_PLURAL,
      body: job,
    })) as FlinkSessionJobV1,
  get: async (name: string): Promise<FlinkSessionJobV1 | undefined> => {
    try {
      return (await h.custom.getNamespacedCustomObject({
        group: GROUP,
        version: 'v1',
        namespace: NS,
        plural: FLINK_SESSION_JOB_PLURAL,
        name,
      })) as FlinkSessionJobV1;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  },
  patchJob: async (name: string, job: Record<string, unknown>) =>
    h.custom.patchNamespacedCustomObject(
      { group: GROUP, version: 'v1', namespace: NS, plural: FLINK_SESSION_JOB_PLURAL, name, body: { spec: { job } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  delete: (name: string) => h.custom.deleteNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: NS, plural: FLINK_SESSION_JOB_PLURAL, name }),
  waitFor: (name: string, predicate: (j: FlinkSessionJobV1) => boolean, description: string, timeoutMs = 30_000) =>
    h.waitUntil(
      async () => {
        const job = await sessionJobs.get(name);
        return job && predicate(job) ? job : undefined;
      },
      `${name}: ${description}`,
      timeoutMs,
    ),
};

const runningAt = (generation: number) => (j: FlinkSessionJobV1) =>
  j.status?.lifecycleState === 'STABLE' &&
  j.status.observedGeneration === generation &&
  j.status.jobStatus?.state === 'RUNNING' &&
  j.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** The lineage of the session cluster: every job the JobManager ran, by job id. */
function lineage() {
  return h.world.simulation.lineage(NS, CLUSTER);
}

test('three session jobs on one session cluster: submitted once each, upgraded with a savepoint, one suspended and resumed, the cluster deletion blocked until they are gone', async () => {
  await h.create(flinkDeployment(CLUSTER).withoutJob().build());
  await h.waitFor(CLUSTER, (d) => d.status?.lifecycleState === 'STABLE', 'session cluster STABLE', 30_000);

  for (const name of JOBS) {
    await sessionJobs.create(
      flinkSessionJob(name)
        .onCluster(CLUSTER)
        .withJob({ jarURI: `${jarBase}/jobs/${name}.jar`, entryClass: `com.example.${name}.Main`, parallelism: 1, upgradeMode: 'savepoint' })
        .build(),
    );
  }
  const first = new Map<string, string>();
  for (const name of JOBS) {
    const job = await sessionJobs.waitFor(name, runningAt(1), 'RUNNING and STABLE');
    first.set(name, job.status!.jobStatus!.jobId!);
    // The companion ConfigMap: owned by the session job, labelled by it, never by a FlinkDeployment.
    const cm = await h.core.readNamespacedConfigMap({ namespace: NS, name: sessionJobStateConfigMapName(name) });
    assert.equal(cm.metadata?.ownerReferences?.[0]?.kind, 'FlinkSessionJob');
    assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, job.metadata.uid);
    assert.equal(cm.metadata?.labels?.['flink.apache.org/session-job'], name);
    assert.equal(cm.metadata?.labels?.['flink.apache.org/deployment'], undefined);
    assert.equal(cm.data?.phase, 'RUNNING');
    assert.equal(cm.data?.deployedJobId, first.get(name));
    assert.equal(job.status?.stateRef?.configMapName, `${name}.sessionjob-state`);
  }
  assert.equal(new Set(first.values()).size, 3, 'three different job ids');
  for (const name of JOBS) assert.ok(jarRequests.includes(`/jobs/${name}.jar`), `the operator fetched ${name}'s jar`);
  for (const [name, jobId] of first) {
    const run = lineage().submissions.filter((s) => s.jobId === jobId);
    assert.equal(run.length, 1, `${name}: job ${jobId} submitted once`);
    assert.equal(run[0]?.entryClass, `com.example.${name}.Main`);
    assert.equal(run[0]?.restoredFrom, null);
  }

  // Each upgraded with a savepoint.
  for (const name of JOBS) await sessionJobs.patchJob(name, { parallelism: 2 });
  const second = new Map<string, string>();
  for (const name of JOBS) {
    const job = await sessionJobs.waitFor(name, (j) => runningAt(2)(j) && j.status?.jobStatus?.jobId !== first.get(name), 'upgraded to generation 2');
    second.set(name, job.status!.jobStatus!.jobId!);
    const old = first.get(name)!;
    const stops = lineage().savepoints.filter((s) => s.jobId === old && s.kind === 'stop-with-savepoint');
    assert.equal(stops.length, 1, `${name}: exactly one stop-with-savepoint of ${old}`);
    assert.equal(stops[0]?.status, 'COMPLETED');
    const next = lineage().submissions.filter((s) => s.jobId === second.get(name));
    assert.equal(next.length, 1, `${name}: the new job submitted once`);
    assert.equal(next[0]?.restoredFrom, stops[0]?.location, `${name}: restored from its upgrade savepoint`);
    assert.equal(next[0]?.parallelism, 2);
    assert.equal(job.status?.jobStatus?.lastSavepoint?.location, stops[0]?.location);
  }

  // One suspended (a stop-with-savepoint, no job left), then resumed from that savepoint.
  await sessionJobs.patchJob('payments', { state: 'suspended' });
  const suspended = await sessionJobs.waitFor('payments', (j) => j.status?.lifecycleState === 'SUSPENDED' && j.status.observedGeneration === 3, 'SUSPENDED');
  assert.equal(suspended.status?.jobStatus?.state, 'SUSPENDED');
  const suspendStop = lineage().savepoints.filter((s) => s.jobId === second.get('payments') && s.kind === 'stop-with-savepoint');
  assert.equal(suspendStop.length, 1);
  await sessionJobs.patchJob('payments', { state: 'running' });
  const resumed = await sessionJobs.waitFor('payments', runningAt(4), 'resumed');
  const resumedRun = lineage().submissions.filter((s) => s.jobId === resumed.status?.jobStatus?.jobId);
  assert.equal(resumedRun.length, 1);
  assert.equal(resumedRun[0]?.restoredFrom, suspendStop[0]?.location, 'resumed from the suspend savepoint');

  // No job id was ever submitted twice on the cluster.
  const ids = lineage().submissions.map((s) => s.jobId);
  assert.equal(new Set(ids).size, ids.length, `job ids submitted: ${ids.join(', ')}`);

  // Deleting the session cluster waits for its session jobs (block-on-session-jobs, on by default).
  await h.delete(CLUSTER);
  await h.waitUntil(
    async () =>
      (await h.events(CLUSTER)).find(
        (e) => e.reason === 'CleanupFailed' && /The session jobs \[fraud, orders, payments\] should be deleted first/.test(e.message ?? ''),
      ),
    'CleanupFailed event naming the session jobs',
  );
  const blocked = await h.get(CLUSTER);
  assert.ok(blocked?.metadata.deletionTimestamp, 'the cluster is being deleted');
  assert.equal(blocked?.status?.lifecycleState, 'DELETING');
  assert.match(blocked?.status?.error ?? '', /should be deleted first/);
  assert.ok(await h.apps.readNamespacedDeployment({ namespace: NS, name: CLUSTER }), 'its JobManager still runs');

  // The jobs go (each cancelled first), then the cluster.
  for (const name of JOBS) await sessionJobs.delete(name);
  for (const name of JOBS) await h.waitUntil(async () => ((await sessionJobs.get(name)) ? undefined : true), `${name} deleted`, 30_000);
  for (const name of JOBS) {
    const last = lineage()
      .submissions.filter((s) => s.entryClass === `com.example.${name}.Main`)
      .at(-1)!;
    assert.ok(
      lineage().cancellations.some((c) => c.jobId === last.jobId),
      `${name}: its running job ${last.jobId} was cancelled before the FlinkSessionJob went`,
    );
  }
  await h.waitUntil(async () => ((await h.get(CLUSTER)) ? undefined : true), 'session cluster deleted once its jobs are gone', 30_000);
});

test('the session cluster upgraded underneath (its JobManager replaced, no HA): the lost job is submitted again under a new id from its newest savepoint, with a JobLost warning', async () => {
  const cluster = 'upgraded-sessions';
  await h.create(flinkDeployment(cluster).withoutJob().build());
  await h.waitFor(cluster, (d) => d.status?.lifecycleState === 'STABLE', 'session cluster STABLE', 30_000);
  const name = 'survivor';
  await sessionJobs.create(
    flinkSessionJob(name)
      .onCluster(cluster)
      .withJob({ jarURI: `${jarBase}/jobs/${name}.jar`, entryClass: 'com.example.Survivor', parallelism: 1, upgradeMode: 'savepoint' })
      .build(),
  );
  await sessionJobs.waitFor(name, runningAt(1), 'RUNNING');
  // A manual savepoint first (a new nonce), so there is a newest savepoint to come back from.
  await sessionJobs.patchJob(name, { savepointTriggerNonce: 1 });
  const before = await sessionJobs.waitFor(
    name,
    (j) => runningAt(2)(j) && j.status?.jobStatus?.lastSavepoint?.triggerType === 'MANUAL',
    'RUNNING with a manual savepoint',
  );
  const firstJob = before.status!.jobStatus!.jobId!;
  const savepoint = before.status!.jobStatus!.lastSavepoint!.location;

  await h.patch(cluster, { spec: { image: 'flink:1.20.1' } });
  const after = await sessionJobs.waitFor(
    name,
    (j) => runningAt(2)(j) && j.status?.jobStatus?.jobId !== firstJob,
    'running again after the cluster upgrade',
    45_000,
  );
  const lost = (await h.events(name)).find((e) => e.reason === 'JobLost');
  assert.match(lost?.message ?? '', new RegExp(`Job ${firstJob} is not known to session cluster ${cluster} any more`));
  const runs = h.world.simulation.lineage('default', cluster).submissions.filter((s) => s.entryClass === 'com.example.Survivor');
  assert.deepEqual(
    runs.map((s) => [s.jobId, s.restoredFrom]),
    [
      [firstJob, null],
      [after.status?.jobStatus?.jobId, savepoint],
    ],
    'submitted twice in all, under two ids, the second from the manual savepoint',
  );
});

test('the state ConfigMap deleted by hand: rebuilt from the session cluster (StateRebuilt), the running job adopted, never submitted a second time; the next upgrade still takes its savepoint', async () => {
  const cluster = 'rebuild-sessions';
  await h.create(flinkDeployment(cluster).withoutJob().build());
  await h.waitFor(cluster, (d) => d.status?.lifecycleState === 'STABLE', 'session cluster STABLE', 30_000);
  const name = 'rebuilt';
  await sessionJobs.create(
    flinkSessionJob(name)
      .onCluster(cluster)
      .withJob({ jarURI: `${jarBase}/jobs/${name}.jar`, entryClass: 'com.example.Rebuilt', parallelism: 1, upgradeMode: 'savepoint' })
      .build(),
  );
  const before = await sessionJobs.waitFor(name, runningAt(1), 'RUNNING');
  const jobId = before.status!.jobStatus!.jobId!;
  const revisionBefore = before.status!.stateRef!.revision;

  await h.core.deleteNamespacedConfigMap({ namespace: NS, name: sessionJobStateConfigMapName(name) });
  const rebuilt = await h.waitUntil(async () => {
    const cm = await h.core.readNamespacedConfigMap({ namespace: NS, name: sessionJobStateConfigMapName(name) }).catch(() => undefined);
    return cm?.data?.deployedJobId === jobId ? cm : undefined;
  }, 'the state ConfigMap rebuilt');
  assert.equal(rebuilt.data?.phase, 'RUNNING');
  assert.ok(Number(rebuilt.data?.revision) > revisionBefore, 'the revision continues from the status');
  const event = (await h.events(name)).find((e) => e.reason === 'StateRebuilt');
  assert.match(event?.message ?? '', new RegExp(`job ${jobId} is RUNNING`));

  await sessionJobs.patchJob(name, { parallelism: 2 });
  const after = await sessionJobs.waitFor(name, (j) => runningAt(2)(j) && j.status?.jobStatus?.jobId !== jobId, 'upgraded after the rebuild');
  const runs = h.world.simulation.lineage('default', cluster).submissions.filter((s) => s.entryClass === 'com.example.Rebuilt');
  const stops = h.world.simulation.lineage('default', cluster).savepoints.filter((s) => s.jobId === jobId && s.kind === 'stop-with-savepoint');
  assert.equal(stops.length, 1);
  assert.deepEqual(
    runs.map((s) => [s.jobId, s.restoredFrom]),
    [
      [jobId, null],
      [after.status?.jobStatus?.jobId, stops[0]?.location],
    ],
    'the rebuilt state never submitted the running job again',
  );
});

// As test/e2e/checkpoints.test.ts for a FlinkDeployment: the simulated JobManager's checkpoint history (POST /jobs/:id/checkpoints, Flink 1.19+).
test("a session job's checkpointTriggerNonce takes exactly one checkpoint on its session cluster, acknowledged only once Flink completed it", async () => {
  const cluster = 'checkpoint-sessions';
  await h.create(flinkDeployment(cluster).withoutJob().build());
  await h.waitFor(cluster, (d) => d.status?.lifecycleState === 'STABLE', 'session cluster STABLE', 30_000);
  const name = 'checkpointed';
  await sessionJobs.create(
    flinkSessionJob(name)
      .onCluster(cluster)
      .withJob({ jarURI: `${jarBase}/jobs/${name}.jar`, entryClass: 'com.example.Checkpointed', parallelism: 1, upgradeMode: 'savepoint' })
      .build(),
  );
  const running = await sessionJobs.waitFor(name, runningAt(1), 'RUNNING');
  const jobId = running.status!.jobStatus!.jobId!;
  // For a session cluster the JobManager's Deployment is named after the cluster.
  const checkpoints = () => {
    const jobManager = h.world.simulation.jobManagers().find((jm) => jm.deployment.name === cluster && !jm.isStopped);
    return (jobManager?.getJob(jobId)?.history ?? []).filter((c) => 'kind' in c && c.kind === 'CHECKPOINT' && 'completedTimestamp' in c);
  };
  assert.equal(checkpoints().length, 0, 'no checkpointing configured: none before the nonce');

  await sessionJobs.patchJob(name, { checkpointTriggerNonce: 1 });
  await h.waitUntil(async () => ((await h.events(name)).some((e) => e.reason === 'CheckpointCompleted') ? true : undefined), 'CheckpointCompleted event');
  await sessionJobs.waitFor(name, runningAt(2), 'RUNNING at generation 2');
  // A few more passes (reconcileIntervalMs is 1 s): the acknowledged nonce takes no second checkpoint.
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(checkpoints().length, 1, 'exactly one checkpoint for the nonce');
  const state = await h.core.readNamespacedConfigMap({ namespace: NS, name: sessionJobStateConfigMapName(name) });
  assert.match(state.data?.lastReconciledSpec ?? '', /checkpointTriggerNonce: 1/, 'the nonce is acknowledged in the state');
  assert.equal(state.data?.pendingOperation, undefined, 'no checkpoint left pending');
  assert.equal(h.world.simulation.lineage(NS, cluster).submissions.filter((s) => s.jobId === jobId).length, 1, 'the checkpoint resubmitted nothing');
  assert.equal(running.status?.jobStatus?.jobId, (await sessionJobs.get(name))?.status?.jobStatus?.jobId, 'the same job runs');

  // FlinkStateSnapshots of a session job (design/011): the operator's checkpoint is recorded as one; a user's savepoint is taken
  // exactly once through the session cluster, and deleting it disposes of the savepoint there.
  const snapshots = { group: GROUP, version: 'v1beta1', namespace: NS, plural: 'flinkstatesnapshots' };
  type Listed = { items: FlinkStateSnapshot[] };
  const ofJob = async () => ((await h.custom.listNamespacedCustomObject(snapshots)) as Listed).items.filter((s) => s.spec.jobReference?.name === name);
  await h.waitUntil(async () => ((await ofJob()).some((s) => s.spec.checkpoint && s.status?.state === 'COMPLETED') ? true : undefined), 'checkpoint resource');
  const [checkpointResource] = (await ofJob()).filter((s) => s.spec.checkpoint);
  assert.equal(checkpointResource.spec.jobReference?.kind, 'FlinkSessionJob');
  assert.equal(checkpointResource.metadata.labels?.['snapshot.trigger-type'], 'MANUAL');
  const savepointsBefore = h.world.simulation.lineage(NS, cluster).savepoints.filter((s) => s.jobId === jobId).length;
  await h.custom.createNamespacedCustomObject({ ...snapshots, body: flinkStateSnapshot(`${name}-on-request`).of('FlinkSessionJob', name).build() });
  const done = await h.waitUntil(async () => {
    const found = (await ofJob()).find((s) => s.metadata.name === `${name}-on-request`);
    return found?.status?.state === 'COMPLETED' ? found : undefined;
  }, 'the user snapshot COMPLETED');
  const taken = h.world.simulation.lineage(NS, cluster).savepoints.filter((s) => s.jobId === jobId);
  assert.equal(taken.length, savepointsBefore + 1, 'exactly one savepoint for it');
  assert.equal(taken.at(-1)?.location, done.status?.path);
  await h.custom.deleteNamespacedCustomObject({ ...snapshots, name: `${name}-on-request` });
  await h.waitUntil(async () => ((await ofJob()).some((s) => s.metadata.name === `${name}-on-request`) ? undefined : true), 'the user snapshot deleted');
  assert.ok(
    h.world.simulation.lineage(NS, cluster).disposals.some((d) => d.path === done.status?.path),
    'disposed of through the session cluster before the finalizer went',
  );
});
