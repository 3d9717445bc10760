/**
 * `flink-operator inspect` on the development cluster.
 *
 * FlinkDeployments (a cluster with only the FlinkDeployment CRD, i.e. without the FlinkSessionJob
 * one): user status, internal state, status lag, pending spec change, an unmigrated resource, a
 * missing one, and `-o json` from the real process.
 *
 * FlinkSessionJobs (both CRDs, the operator running against simulated Flink): a session job the
 * operator submitted, upgraded with a savepoint and is about to resubmit, inspected at each step and
 * checked against what the session cluster actually ran (the simulation's lineage); its session
 * cluster missing or an application cluster; a name both kinds have; an Apache operator session job
 * before and after `migrate`; an older state copy put back (refused by the operator's store,
 * src/state/configmap-state-store.ts, RegressedStateError).
 */
import { reconciliationStateOfPhase } from '../../src/api/deployment-phase.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import { flinkSessionJob } from '../../src/api/flink-session-job-builder.js';
import { FLINK_SESSION_JOB_PLURAL, type FlinkSessionJobV1, type FlinkSessionJobV1beta1 } from '../../src/api/flink-session-job.js';
import {
  DeploymentNotFoundError,
  formatInspection,
  formatSessionJobInspection,
  inspectDeployment,
  inspectResource,
  inspectSessionJob,
  InspectUsageError,
  parseInspectTarget,
  ResourceNotFoundError,
  type Inspection,
  type SessionJobInspection,
} from '../../src/cli/inspect-command.js';
import { emptyJar } from '../../src/flink/session-job-artifacts.js';
import { KubeConfigMapClient } from '../../src/kube/configmap-client.js';
import { KubeFlinkDeploymentClient, KubeFlinkSessionJobClient } from '../../src/kube/flink-deployment-client.js';
import { MIGRATE_COMMAND_WRITER, migrateLegacyDeployment, migrateLegacySessionJob } from '../../src/state/legacy-migration.js';
import { startHarness, type OperatorHarness } from '../e2e/operator-harness.js';
import { startLegacyCluster, type LegacyCluster } from '../migration/legacy-cluster.js';
import { builtVariants, captureVariants } from '../migration/legacy-variants.js';
import { loadSessionJobVariant } from '../migration/session-job-variants.js';
import { runCli } from './run-cli.js';

let lc: LegacyCluster;
let kubeconfigFile: string;
const clients = () => ({ configMaps: lc.configMaps, deployments: lc.deployments });

before(async () => {
  lc = await startLegacyCluster();
  kubeconfigFile = join(mkdtempSync(join(tmpdir(), 'inspect-cli-')), 'kubeconfig');
  writeFileSync(kubeconfigFile, lc.cluster.kubeconfigYaml());
  const variants = builtVariants();
  const midUpgrade = variants.find((v) => v.object.metadata.name === 'mid-upgrade')!;
  const stored = await lc.createLegacy({ ...midUpgrade.object, metadata: { ...midUpgrade.object.metadata, name: 'orders' } }, midUpgrade.status);
  const outcome = await migrateLegacyDeployment(stored, {
    configMaps: lc.configMaps,
    deployments: lc.deployments,
    dryRun: false,
    writer: MIGRATE_COMMAND_WRITER,
  });
  assert.equal(outcome.kind, 'migrated');
  const current = variants[0];
  await lc.createLegacy({ ...current.object, metadata: { ...current.object.metadata, name: 'legacy' } }, current.status);
});
after(async () => {
  await lc?.stop();
});

test('a migrated deployment caught mid-upgrade: state, pending operation, no lag, the pending spec change', async () => {
  const i = await inspectDeployment(clients(), 'default', 'orders');
  assert.equal(i.legacyStatus, false);
  assert.equal(i.stateError, null);
  assert.equal(i.stateRevision, 1);
  assert.equal(i.statusRevision, 1);
  assert.equal(i.statusLagsState, false);
  assert.equal(reconciliationStateOfPhase(i.state!.phase), 'UPGRADING');
  assert.equal(i.state?.pendingSavepoint?.triggerId, 'trigger-42');
  assert.equal(i.legacyStatusArchived, true);
  // lastReconciledSpec has parallelism 4 (the upgrade being applied); the spec says 2
  assert.deepEqual(
    i.pendingSpecChange?.filter((op) => op.path.startsWith('/job')),
    [{ op: 'replace', path: '/job/parallelism', value: 2 }],
  );

  const text = formatInspection(i);
  assert.match(text, /^FlinkDeployment default\/orders \(generation 1\)$/m);
  assert.match(text, /lifecycleState: +UPGRADING/);
  assert.match(text, /job: +RUNNING {2}id a1b2c3d4e5f60718293a4b5c6d7e8f90/);
  assert.match(text, /lastSavepoint: +s3:\/\/b\/savepoints\/savepoint-1 at /);
  assert.match(text, /stateRef: +orders-operator-state revision 1/);
  assert.match(text, /revision: +1 {2}written by flink-operator\/[^,]+, leader flink-operator-migrate\/0/);
  assert.match(
    text,
    /pending operation: +restore from s3:\/\/b\/savepoints\/savepoint-0; savepoint UPGRADE \(stop job\) of job a1b2c3d4e5f60718293a4b5c6d7e8f90, requested .*Flink trigger trigger-42; checkpoint MANUAL/,
  );
  assert.match(text, /Status lags state: +no \(both at revision 1\)/);
  assert.match(text, /Pending spec change \(lastReconciledSpec → spec\):\n(.*\n)* {2}~ spec\.job\.parallelism: 4 → 2$/m);
});

test('status lag: the ConfigMap moved on and the status has not caught up yet', async () => {
  const cm = (await lc.configMaps.get('default', 'orders-operator-state'))!;
  await lc.configMaps.replace('default', 'orders-operator-state', { ...cm, data: { ...cm.data, revision: '2' } });
  const i = await inspectDeployment(clients(), 'default', 'orders');
  assert.equal(i.statusLagsState, true);
  assert.match(formatInspection(i), /Status lags state: +yes: the status reflects revision 1, the state is at revision 2/);
});

test('an unmigrated deployment says so and has no state', async () => {
  const i = await inspectDeployment(clients(), 'default', 'legacy');
  assert.equal(i.legacyStatus, true);
  assert.equal(i.state, null);
  assert.equal(i.statusLagsState, null);
  assert.equal(i.pendingSpecChange, null);
  const text = formatInspection(i);
  assert.match(text, /the status still carries Apache operator \(v1beta1\) internal fields: run `flink-operator migrate`/);
  assert.match(text, /ConfigMap default\/legacy-operator-state does not exist \(the status still has legacy fields/);
  assert.match(text, /unknown: no lastReconciledSpec/);
});

test('a missing deployment is an error naming it', async () => {
  await assert.rejects(
    inspectDeployment(clients(), 'default', 'nope'),
    (e: unknown) => e instanceof DeploymentNotFoundError && /default\/nope not found/.test(e.message),
  );
});

test('the command line: -o json is the inspection document; a missing deployment exits 1', async () => {
  const json = await runCli(['inspect', 'orders', '--kubeconfig', kubeconfigFile, '-n', 'default', '-o', 'json']);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout) as Inspection;
  assert.equal(doc.resource, 'default/orders');
  assert.equal(doc.state?.pendingSavepoint?.triggerId, 'trigger-42');
  assert.equal(doc.statusLagsState, true);
  const missing = await runCli(['inspect', 'nope', '--kubeconfig', kubeconfigFile]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /FlinkDeployment default\/nope not found \(nor a FlinkSessionJob of that name\)/);
});

test('a STABLE job migrated with the upgradeSavepointPath the Apache status keeps shows no pending restore', async () => {
  const green = captureVariants().find((v) => v.label.includes('green-after-savepoint-upgrade'))!;
  const stored = await lc.createLegacy({ ...green.object, metadata: { ...green.object.metadata, name: 'green' } }, green.status);
  const outcome = await migrateLegacyDeployment(stored, {
    configMaps: lc.configMaps,
    deployments: lc.deployments,
    dryRun: false,
    writer: MIGRATE_COMMAND_WRITER,
  });
  assert.equal(outcome.kind, 'migrated');
  const i = await inspectDeployment(clients(), 'default', 'green');
  assert.equal(i.status?.lifecycleState, 'STABLE');
  assert.equal(i.state?.upgradeSavepointPath, 's3://flink/savepoints/savepoint-66f218-64c1320e7a1f');
  const text = formatInspection(i);
  assert.doesNotMatch(text, /restore from/);
  assert.match(text, /pending operation: +none$/m);
  assert.match(
    text,
    /upgradeSavepointPath: +s3:\/\/flink\/savepoints\/savepoint-66f218-64c1320e7a1f \(what the running deployment was restored from or last upgraded with; not pending\)/,
  );
});

test('TYPE/NAME and TYPE NAME take the names kubectl takes for either CRD; anything else is a usage error', () => {
  assert.deepEqual(parseInspectTarget('orders'), { name: 'orders' });
  assert.deepEqual(parseInspectTarget('sessionjob/orders'), { kind: 'FlinkSessionJob', name: 'orders' });
  assert.deepEqual(parseInspectTarget('FlinkSessionJob', 'orders'), { kind: 'FlinkSessionJob', name: 'orders' });
  assert.deepEqual(parseInspectTarget('flinksessionjobs.flink.apache.org/orders'), { kind: 'FlinkSessionJob', name: 'orders' });
  assert.deepEqual(parseInspectTarget('flinkdep/orders'), { kind: 'FlinkDeployment', name: 'orders' });
  assert.deepEqual(parseInspectTarget('FLINKDEPLOYMENTS', 'orders'), { kind: 'FlinkDeployment', name: 'orders' });
  assert.throws(
    () => parseInspectTarget('deployment/orders'),
    (e: unknown) => e instanceof InspectUsageError && /unknown resource type "deployment"/.test(e.message),
  );
  assert.throws(() => parseInspectTarget('sessionjob/'), InspectUsageError);
  assert.throws(() => parseInspectTarget('sessionjob', 'a/b'), InspectUsageError);
});

test('without the FlinkSessionJob CRD: a bare name is still the FlinkDeployment, a missing name names both kinds, a bad TYPE exits 2', async () => {
  const withSessionJobs = { ...clients(), sessionJobs: new KubeFlinkSessionJobClient(lc.kubeConfig) };
  const found = await inspectResource(withSessionJobs, 'default', { name: 'orders' });
  assert.equal(found.inspection.kind, 'FlinkDeployment');
  assert.deepEqual(found.notes, []);
  await assert.rejects(
    inspectResource(withSessionJobs, 'default', { name: 'nope' }),
    (e: unknown) => e instanceof ResourceNotFoundError && e.kinds.length === 2,
  );
  const text = await runCli(['inspect', 'flinkdep/orders', '--kubeconfig', kubeconfigFile]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^FlinkDeployment default\/orders/);
  const sessionJob = await runCli(['inspect', 'sessionjob', 'orders', '--kubeconfig', kubeconfigFile]);
  assert.equal(sessionJob.code, 1);
  assert.match(sessionJob.stderr, /FlinkSessionJob default\/orders not found/);
  const badType = await runCli(['inspect', 'pod/orders', '--kubeconfig', kubeconfigFile]);
  assert.equal(badType.code, 2);
  assert.match(badType.stderr, /unknown resource type "pod": use flinkdeployment \(flinkdep\) or flinksessionjob \(sessionjob\)/);
});

describe('FlinkSessionJobs, with the operator running', () => {
  const NS = 'default';
  const CLUSTER = 'sessions';
  let h: OperatorHarness;
  let harnessKubeconfig: string;
  let jarServer: Server;
  let jarBase = '';
  /** While true, jar requests get no answer (the operator's submission waits on the fetch). */
  let holdJars = false;
  const heldJars: ServerResponse[] = [];
  const answerJar = (res: ServerResponse) => {
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/java-archive' });
    res.end(Buffer.from(emptyJar()));
  };
  const inspectClients = () => ({
    configMaps: new KubeConfigMapClient(h.kubeConfig),
    deployments: new KubeFlinkDeploymentClient(h.kubeConfig),
    sessionJobs: new KubeFlinkSessionJobClient(h.kubeConfig),
  });
  const sessionJobApi = (version: 'v1' | 'v1beta1') => ({ group: 'flink.apache.org', version, namespace: NS, plural: FLINK_SESSION_JOB_PLURAL });
  const createSessionJob = async (job: FlinkSessionJobV1) =>
    (await h.custom.createNamespacedCustomObject({ ...sessionJobApi('v1'), body: job })) as FlinkSessionJobV1;
  const getSessionJob = async (name: string) => (await h.custom.getNamespacedCustomObject({ ...sessionJobApi('v1'), name })) as FlinkSessionJobV1;
  const patchJob = (name: string, job: Record<string, unknown>) =>
    h.custom.patchNamespacedCustomObject({ ...sessionJobApi('v1'), name, body: { spec: { job } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const runningAt = (name: string, generation: number, otherThan?: string) =>
    h.waitUntil(
      async () => {
        const j = await getSessionJob(name);
        const ok =
          j.status?.lifecycleState === 'STABLE' &&
          j.status.observedGeneration === generation &&
          j.status.jobStatus?.state === 'RUNNING' &&
          j.status.jobStatus.jobId !== otherThan;
        return ok ? j : undefined;
      },
      `${name} RUNNING at generation ${generation}`,
      30_000,
    );
  const lineage = () => h.world.simulation.lineage(NS, CLUSTER);
  /** The job id of the job the operator runs for `orders`, after each step. */
  const jobIds: string[] = [];

  before(async () => {
    jarServer = createServer((req, res) => {
      if (holdJars) heldJars.push(res);
      else answerJar(res);
      req.resume();
    });
    await new Promise<void>((resolve) => jarServer.listen(0, '127.0.0.1', resolve));
    jarBase = `http://127.0.0.1:${(jarServer.address() as AddressInfo).port}`;
    // http on loopback: the operator is told to allow both (its defaults are https only, no private addresses)
    h = await startHarness({
      sessionJobs: true,
      operator: { sessionJobJarSchemes: ['http', 'https'], sessionJobJarRestrictedHosts: true, reconcileIntervalMs: 1_000 },
    });
    harnessKubeconfig = join(mkdtempSync(join(tmpdir(), 'inspect-sessionjobs-')), 'kubeconfig');
    writeFileSync(harnessKubeconfig, h.world.cluster.kubeconfigYaml());
    await h.create(flinkDeployment(CLUSTER).withoutJob().build());
    await h.waitFor(CLUSTER, (d) => d.status?.lifecycleState === 'STABLE', 'session cluster STABLE', 30_000);
    await createSessionJob(
      flinkSessionJob('orders')
        .onCluster(CLUSTER)
        .withJob({ jarURI: `${jarBase}/jobs/orders.jar`, entryClass: 'com.example.orders.Main', parallelism: 1, upgradeMode: 'savepoint' })
        .build(),
    );
    jobIds.push((await runningAt('orders', 1)).status!.jobStatus!.jobId!);
  });
  after(async () => {
    for (const res of heldJars.splice(0)) answerJar(res);
    await h?.stop();
    await new Promise((resolve) => jarServer?.close(resolve));
  });

  test('a running session job: its session cluster, the job id the cluster runs, no lag, nothing pending', async () => {
    const { inspection, notes } = await inspectResource(inspectClients(), NS, { name: 'orders' });
    assert.deepEqual(notes, []);
    assert.equal(inspection.kind, 'FlinkSessionJob', 'a bare name no FlinkDeployment has is the FlinkSessionJob');
    const i = inspection;
    assert.deepEqual(i.sessionCluster, { name: CLUSTER, found: 'session', deleting: false, lifecycleState: 'STABLE', jobManagerDeploymentStatus: 'READY' });
    assert.equal(i.configMap?.name, 'orders.sessionjob-state');
    assert.equal(i.stateError, null);
    assert.equal(i.state?.phase, 'RUNNING');
    // the job id in the state is the one job the session cluster ran for this resource
    const submitted = lineage().submissions.filter((s) => s.entryClass === 'com.example.orders.Main');
    assert.deepEqual(
      submitted.map((s) => s.jobId),
      [jobIds[0]],
    );
    assert.equal(i.state?.deployedJobId, jobIds[0]);
    assert.equal(i.statusJobId, jobIds[0]);
    assert.equal(i.statusJobIdAgrees, true);
    assert.equal(i.statusLagsState, false);
    assert.equal(i.stateOlderThanStatus, false);
    assert.deepEqual(i.pendingSpecChange, []);

    const text = formatSessionJobInspection(i);
    assert.match(text, /^FlinkSessionJob default\/orders \(generation 1\)$/m);
    assert.match(text, /^Session cluster: +sessions \(FlinkDeployment, STABLE, JobManager READY\)$/m);
    assert.doesNotMatch(text, /jobManagerDeploymentStatus/, 'a session job has no JobManager of its own');
    assert.match(text, new RegExp(`job: +RUNNING {2}id ${jobIds[0]}`));
    assert.match(text, /stateRef: +orders\.sessionjob-state revision \d+/);
    assert.match(text, /^Internal state \(ConfigMap orders\.sessionjob-state\):$/m);
    assert.match(
      text,
      new RegExp(
        `lastReconciledSpec: +generation 1: ${jarBase.replace(/\./g, '\\.')}/jobs/orders\\.jar, entryClass com\\.example\\.orders\\.Main, parallelism 1, upgradeMode savepoint, state running$`,
        'm',
      ),
    );
    assert.match(text, /lastStableSpec: +generation 1, the same spec$/m);
    assert.match(text, new RegExp(`deployedJobId: +${jobIds[0]}$`, 'm'));
    assert.match(text, /pending operation: +none$/m);
    assert.match(text, /savepoints: +0 \(none\)/);
    assert.match(text, /Status lags state: +no \(both at revision \d+\)/);
    assert.match(text, new RegExp(`Status job id: +agrees with the state \\(${jobIds[0]}\\)`));
    assert.match(text, /Pending spec change \(lastReconciledSpec → spec\):\n {2}none$/m);
  });

  test('after a savepoint upgrade: the savepoint in the history, the new job restored from it, the new spec stable', async () => {
    await patchJob('orders', { parallelism: 2 });
    jobIds.push((await runningAt('orders', 2, jobIds[0])).status!.jobStatus!.jobId!);
    const i = await inspectSessionJob(inspectClients(), NS, 'orders');
    const stop = lineage().savepoints.filter((s) => s.jobId === jobIds[0] && s.kind === 'stop-with-savepoint');
    assert.equal(stop.length, 1);
    const restoredFrom = lineage().submissions.find((s) => s.jobId === jobIds[1])?.restoredFrom;
    assert.equal(restoredFrom, stop[0]?.location);
    assert.equal(i.state?.deployedJobId, jobIds[1]);
    assert.equal(i.state?.deployedFrom, restoredFrom);
    assert.deepEqual(
      i.state?.savepointHistory.map((sp) => [sp.location, sp.triggerType]),
      [[stop[0]?.location, 'UPGRADE']],
    );
    const text = formatSessionJobInspection(i);
    assert.match(text, new RegExp(`deployedFrom: +${restoredFrom!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(what the last deployment restored from\\)`));
    assert.match(text, /savepoints: +1\n {4}\S+ {2}\S+ \(\d+\) {2}UPGRADE/);
    assert.match(text, /lastReconciledSpec: +generation 2: .*parallelism 2/);
    assert.match(text, /lastStableSpec: +generation 2, the same spec$/m);
    assert.match(text, /pending operation: +none$/m);
  });

  test('a spec change while the operator is down is pending; then the pinned job id is shown before it is submitted, and it is the one that runs', async () => {
    await h.stopOperator();
    await patchJob('orders', { parallelism: 3 });
    const waiting = await inspectSessionJob(inspectClients(), NS, 'orders');
    assert.equal(waiting.generation, 3);
    assert.deepEqual(waiting.pendingSpecChange, [{ op: 'replace', path: '/job/parallelism', value: 3 }]);
    assert.match(formatSessionJobInspection(waiting), /Pending spec change \(lastReconciledSpec → spec\):\n {2}~ spec\.job\.parallelism: 2 → 3$/m);

    // The operator stops the job with a savepoint, pins the next job id, and waits on the jar fetch.
    holdJars = true;
    await h.startOperator({ sessionJobJarSchemes: ['http', 'https'], sessionJobJarRestrictedHosts: true, reconcileIntervalMs: 1_000 });
    const pinned = await h.waitUntil(
      async () => {
        const i = await inspectSessionJob(inspectClients(), NS, 'orders');
        return i.state?.phase === 'DEPLOYING' && i.state.jobIdToSubmit && heldJars.length > 0 ? i : undefined;
      },
      'the next submission pinned and its jar being fetched',
      30_000,
    );
    const jobIdToSubmit = pinned.state!.jobIdToSubmit!;
    const upgradeSavepoint = lineage().savepoints.find((s) => s.jobId === jobIds[1] && s.kind === 'stop-with-savepoint')?.location;
    assert.ok(upgradeSavepoint, 'the running job was stopped with a savepoint');
    assert.equal(pinned.state?.upgradeSavepointPath, upgradeSavepoint);
    assert.equal(pinned.stateJobId, jobIdToSubmit);
    assert.equal(
      lineage().submissions.some((s) => s.jobId === jobIdToSubmit),
      false,
      'not yet submitted',
    );
    if (pinned.statusLagsState === false) assert.equal(pinned.statusJobIdAgrees, true, 'a status of the same revision shows the same job id');
    const text = formatSessionJobInspection(pinned);
    assert.match(text, /phase: +DEPLOYING/);
    assert.ok(text.includes(`pending operation:          restore from ${upgradeSavepoint}; submit job id ${jobIdToSubmit}`), text);
    assert.match(text, /lastReconciledSpec: +generation 3: .*parallelism 3, upgradeMode savepoint, state running$/m);
    assert.match(text, /lastStableSpec: +generation 2: .*parallelism 2, upgradeMode savepoint, state running$/m);

    holdJars = false;
    for (const res of heldJars.splice(0)) answerJar(res);
    const running = await runningAt('orders', 3, jobIds[1]);
    assert.equal(running.status?.jobStatus?.jobId, jobIdToSubmit, 'the job id inspect showed as about to be submitted is the one that runs');
    jobIds.push(jobIdToSubmit);
    const runs = lineage().submissions.filter((s) => s.jobId === jobIdToSubmit);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.restoredFrom, upgradeSavepoint);
  });

  test('an older copy of the state put back is shown as older than the status (the operator refuses it)', async () => {
    const current = await inspectSessionJob(inspectClients(), NS, 'orders');
    await h.stopOperator();
    const configMaps = new KubeConfigMapClient(h.kubeConfig);
    const cm = (await configMaps.get(NS, 'orders.sessionjob-state'))!;
    const older = current.stateRevision! - 2;
    await configMaps.replace(NS, 'orders.sessionjob-state', { ...cm, data: { ...cm.data, revision: String(older) } });
    const i = await inspectSessionJob(inspectClients(), NS, 'orders');
    assert.equal(i.stateOlderThanStatus, true);
    assert.equal(i.statusLagsState, false);
    assert.match(
      formatSessionJobInspection(i),
      new RegExp(
        `Status lags state: +no: the state \\(revision ${older}\\) is OLDER than the status \\(revision ${current.statusRevision}\\): an older copy of the ConfigMap was put back`,
      ),
    );
    const back = (await configMaps.get(NS, 'orders.sessionjob-state'))!;
    await configMaps.replace(NS, 'orders.sessionjob-state', { ...back, data: cm.data });
  });

  test('a name both kinds have: the bare name is the FlinkDeployment, with a note; sessionjob/NAME is the session job', async () => {
    // operator stopped (previous test): nothing reconciles the new session job
    await createSessionJob(
      flinkSessionJob(CLUSTER)
        .onCluster(CLUSTER)
        .withJob({ jarURI: `${jarBase}/jobs/s.jar`, state: 'suspended' })
        .build(),
    );
    const bare = await inspectResource(inspectClients(), NS, { name: CLUSTER });
    assert.equal(bare.inspection.kind, 'FlinkDeployment');
    assert.deepEqual(bare.notes, ['a FlinkSessionJob default/sessions exists too: `flink-operator inspect sessionjob/sessions` shows it']);
    const cli = await runCli(['inspect', CLUSTER, '--kubeconfig', harnessKubeconfig]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^FlinkDeployment default\/sessions/);
    assert.match(cli.stderr, /note: a FlinkSessionJob default\/sessions exists too/);
    const json = await runCli(['inspect', `sessionjob/${CLUSTER}`, '--kubeconfig', harnessKubeconfig, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout) as SessionJobInspection;
    assert.equal(doc.kind, 'FlinkSessionJob');
    assert.equal(doc.sessionCluster.name, CLUSTER);
    assert.equal(doc.state, null);
    assert.match(doc.stateError ?? '', /ConfigMap default\/sessions\.sessionjob-state does not exist \(the operator creates it on its first reconcile\)/);
    assert.equal(json.stderr, '', 'no note when the type is given');
  });

  test('the session cluster missing, or an application cluster, is said so', async () => {
    await h.create(flinkDeployment('app').build());
    await createSessionJob(flinkSessionJob('orphan').onCluster('nowhere').build());
    await createSessionJob(flinkSessionJob('misplaced').onCluster('app').build());
    const orphan = await inspectSessionJob(inspectClients(), NS, 'orphan');
    assert.equal(orphan.sessionCluster.found, 'missing');
    assert.match(formatSessionJobInspection(orphan), /^Session cluster: +nowhere: no FlinkDeployment nowhere in namespace default; the job waits for it$/m);
    const misplaced = await inspectSessionJob(inspectClients(), NS, 'misplaced');
    assert.equal(misplaced.sessionCluster.found, 'application');
    assert.match(formatSessionJobInspection(misplaced), /Session cluster: +app: an application cluster \(it has spec\.job\) and runs no session jobs/);
  });

  test('an Apache operator session job: legacy fields flagged before `migrate`; after it, the job id it was submitting is the one to submit', async () => {
    // mid-upgrade-submitting: the Apache operator recorded the new job id before running the jar (test/migration/session-job-variants/)
    const variant = loadSessionJobVariant('mid-upgrade-submitting').object;
    const { status, ...body } = variant;
    const created = (await h.custom.createNamespacedCustomObject({ ...sessionJobApi('v1beta1'), body })) as FlinkSessionJobV1beta1;
    const stored = (await h.custom.replaceNamespacedCustomObjectStatus({
      ...sessionJobApi('v1beta1'),
      name: created.metadata.name!,
      body: { ...created, status },
    })) as FlinkSessionJobV1beta1;
    const before = await inspectSessionJob(inspectClients(), NS, 'mid-upgrade-submitting');
    assert.equal(before.legacyStatus, true);
    assert.equal(before.state, null);
    const beforeText = formatSessionJobInspection(before);
    assert.match(beforeText, /the status still carries Apache operator \(v1beta1\) internal fields: run `flink-operator migrate`/);
    assert.match(beforeText, /ConfigMap default\/mid-upgrade-submitting\.sessionjob-state does not exist \(the status still has legacy fields/);

    const outcome = await migrateLegacySessionJob(stored, {
      configMaps: new KubeConfigMapClient(h.kubeConfig),
      sessionJobs: new KubeFlinkSessionJobClient(h.kubeConfig),
      dryRun: false,
      writer: MIGRATE_COMMAND_WRITER,
    });
    assert.equal(outcome.kind, 'migrated', outcome.message);
    const i = await inspectSessionJob(inspectClients(), NS, 'mid-upgrade-submitting');
    const apacheJobId = status?.jobStatus?.jobId;
    assert.ok(apacheJobId);
    assert.equal(i.legacyStatus, false);
    assert.equal(i.legacyStatusArchived, true);
    assert.equal(i.stateError, null);
    assert.equal(i.statusLagsState, false);
    assert.equal(i.state?.jobIdToSubmit, apacheJobId);
    assert.equal(i.state?.upgradeSavepointPath, status?.jobStatus?.upgradeSavepointPath);
    assert.equal(i.statusJobIdAgrees, true);
    const text = formatSessionJobInspection(i);
    assert.ok(text.includes(`restore from ${status?.jobStatus?.upgradeSavepointPath}; submit job id ${apacheJobId}`), text);
    assert.match(text, /legacy status archive: +the original Apache operator status, verbatim/);
    // the Apache 1.10+ spec metadata has no generation: the stable spec is shown without one
    assert.match(
      text,
      /lastStableSpec: +https:\/\/artifacts\.example\.com\/flink\/clickstream-enricher-3\.4\.0\.jar, .*upgradeMode stateless, state running$/m,
    );
  });
});
