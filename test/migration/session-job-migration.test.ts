/**
 * The FlinkSessionJob migration (src/state/legacy-migration.ts: migrateLegacySessionJob,
 * migrateIfLegacySessionJob) and its way back (src/state/legacy-revert.ts: revertSessionJob) on the
 * development cluster, over every Apache-operator v1beta1 variant in session-job-variants/ (each
 * file's header says what state the Apache operator 1.13.0 left and what a lossless migration keeps;
 * the expectations below are those, written out).
 *
 * Also: what the migrated mid-upgrade states mean to the session-job reconciler
 * (src/reconciler/session-job-decide.ts): it resubmits from the upgrade savepoint, or adopts the job
 * id the Apache operator recorded before submitting; the two UPGRADING statuses the Apache layout
 * leaves ambiguous are refused with nothing written; resume after an interrupted status write;
 * refusal of a ConfigMap that is not the session job's; dry run; `migrate` without the
 * FlinkSessionJob CRD, and stopped by a webhook for flinksessionjobs.
 */
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FLINK_SESSION_JOB_KIND, type FlinkSessionJobV1beta1 } from '../../src/api/flink-session-job.js';
import type { FlinkSessionJobSpec } from '../../src/api/flink-session-job-spec.js';
import type { PendingSnapshot, SessionJobInternalState } from '../../src/api/internal-state.js';
import { decodeLegacySessionJobStatus, encodeLegacySessionJobStatus, hasLegacyFields } from '../../src/api/legacy-status-codec.js';
import { migrateClientsFor, runMigrate, type MigrateClients } from '../../src/cli/migrate-command.js';
import { deploymentOperatorSettings } from '../../src/reconciler/deployment-operator-settings.js';
import { decideSessionJob, runningSpec, type ListedJob } from '../../src/reconciler/session-job-decide.js';
import { runRequestOf } from '../../src/reconciler/session-job-steps.js';
import {
  MIGRATE_COMMAND_WRITER,
  migrateIfLegacySessionJob,
  migrateLegacySessionJob,
  type SessionJobMigrationDependencies,
} from '../../src/state/legacy-migration.js';
import { readLegacyStatusArchive } from '../../src/state/legacy-status-archive.js';
import { revertSessionJob } from '../../src/state/legacy-revert.js';
import { decodeStateConfigMap, encodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { DEPLOYMENT_LABEL, FLINK_SESSION_JOB_STATE, SESSION_JOB_LABEL } from '../../src/state/state-kinds.js';
import { startLegacyCluster, type LegacyCluster } from './legacy-cluster.js';
import { builtVariants } from './legacy-variants.js';
import { loadSessionJobVariant, SESSION_JOB_VARIANT_MOMENTS, SESSION_JOB_VARIANTS, type SessionJobVariantName } from './session-job-variants.js';

let lc: LegacyCluster;
let deps: SessionJobMigrationDependencies;
before(async () => {
  lc = await startLegacyCluster();
  deps = { configMaps: lc.configMaps, sessionJobs: lc.sessionJobs, dryRun: false, writer: MIGRATE_COMMAND_WRITER, retryDelayMs: 1 };
});
afterEach(() => {
  lc.cluster.faults.clear();
});
after(async () => {
  await lc?.stop();
});

const configMapOf = (name: string) => `${name}.sessionjob-state`;
const mark = () => lc.cluster.requestLog.entries().length;
/** Write requests (anything but get/list/watch) since `m`. */
function writesSince(m: number): string[] {
  return lc.cluster.requestLog
    .entries()
    .slice(m)
    .filter((e) => !['get', 'list', 'watch'].includes(e.verb))
    .map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.name}`);
}

/** A variant under another name (so each test has its own resource). */
function variantAs(variant: SessionJobVariantName, name: string): FlinkSessionJobV1beta1 {
  const object = loadSessionJobVariant(variant).object;
  return { ...object, metadata: { ...object.metadata, name } };
}

/**
 * A legacy spec string as the state must hold it: the `spec` of the envelope, Jackson's nulls
 * dropped, and `"parallelism":0` (Jackson's value of the unset Java int) as unset — the Apache
 * operator submits `parallelism > 0 ? parallelism : null` (AbstractFlinkService, release-1.13.0).
 */
function specOfLegacyString(json: string): FlinkSessionJobSpec {
  const { spec } = JSON.parse(json, (_key, value: unknown) => (value === null ? undefined : value)) as { spec: FlinkSessionJobSpec };
  if (spec.job?.parallelism === 0) delete spec.job.parallelism;
  return spec;
}

interface Expected {
  phase: SessionJobInternalState['phase'];
  deployedJobId?: string;
  jobIdToSubmit?: string;
  upgradeSavepointPath?: string;
  pendingSavepoint?: Partial<PendingSnapshot>;
  /** [location, triggerType, timeStamp, triggerNonce?], oldest first. */
  history: [string, string, number, number?][];
  lastReconciledGeneration: number;
  firstDeployment: boolean;
  lastPeriodicSavepointTimestamp?: number;
  lastPeriodicCheckpointTimestamp?: number;
}

const SP = 's3://flink/savepoints';
/** What each variant's header comment says the migrated state is. */
const EXPECTED: Readonly<Record<Exclude<SessionJobVariantName, 'never-deployed'>, Expected>> = {
  'running-stable': {
    phase: 'RUNNING',
    deployedJobId: 'bb804a9747916189dd39aa36d03d436e',
    upgradeSavepointPath: `${SP}/savepoint-0d6ec9-1848ed847b7d`,
    history: [
      [`${SP}/savepoint-0d6ec9-1848ed847b7d`, 'UPGRADE', 1784020324318],
      [`${SP}/savepoint-bb804a-5340deea14cd`, 'PERIODIC', 1784030441226],
    ],
    lastReconciledGeneration: 2,
    firstDeployment: false,
    lastPeriodicSavepointTimestamp: 1784030441226,
  },
  'mid-upgrade-savepoint': {
    // stopped for the upgrade: no job runs, the redeploy restores from the upgrade savepoint
    phase: 'STOPPED',
    upgradeSavepointPath: `${SP}/savepoint-800c59-d7990123f6e2`,
    history: [[`${SP}/savepoint-800c59-d7990123f6e2`, 'UPGRADE', 1784020324318]],
    lastReconciledGeneration: 2,
    firstDeployment: false,
  },
  'mid-upgrade-submitting': {
    // the id patched before the jar run: submitted under that id, or adopted if the cluster has it
    phase: 'DEPLOYING',
    jobIdToSubmit: 'b52dd103f5e6c2cc437403b2985cd09c',
    upgradeSavepointPath: `${SP}/savepoint-ae9c19-8f04c253c9bf`,
    history: [[`${SP}/savepoint-ae9c19-8f04c253c9bf`, 'UPGRADE', 1784020324318]],
    lastReconciledGeneration: 2,
    firstDeployment: false,
  },
  suspended: {
    phase: 'SUSPENDED',
    upgradeSavepointPath: `${SP}/savepoint-b42574-d5ea5db6adb8`,
    history: [[`${SP}/savepoint-b42574-d5ea5db6adb8`, 'UPGRADE', 1784050200145]],
    lastReconciledGeneration: 2,
    firstDeployment: true,
  },
  'manual-savepoint-in-flight': {
    phase: 'RUNNING',
    deployedJobId: 'a42aefd0f82ac3f12d1dabd9efab46b3',
    pendingSavepoint: {
      kind: 'savepoint',
      triggerType: 'MANUAL',
      triggerId: '431a3336c79cf444ef001f572ada59ca',
      jobId: 'a42aefd0f82ac3f12d1dabd9efab46b3',
      requestedAt: 1784040459870,
      formatType: 'CANONICAL',
      stopJob: false,
      // the spec's nonce, which the savepoint answers (the reconciled one is still 1)
      triggerNonce: 2,
    },
    history: [[`${SP}/savepoint-a42aef-1945a1e018d3`, 'MANUAL', 1784023511402, 1]],
    lastReconciledGeneration: 3,
    firstDeployment: true,
  },
  'last-state-running': {
    phase: 'RUNNING',
    deployedJobId: 'e0896d685ba400cb33d4ce9cdf9e0d57',
    upgradeSavepointPath: 's3://flink/checkpoints/8ef67997d28de620d814e1234cf9ae5f/chk-187',
    history: [],
    lastReconciledGeneration: 2,
    firstDeployment: false,
    lastPeriodicCheckpointTimestamp: 1784032982517,
  },
  'failed-job': {
    phase: 'RUNNING',
    deployedJobId: 'c3a8a5419f413be59e7c617742267cc3',
    upgradeSavepointPath: 's3://flink/checkpoints/c3a8a5419f413be59e7c617742267cc3/chk-561',
    history: [],
    lastReconciledGeneration: 1,
    firstDeployment: true,
  },
  'first-deploy-failed': {
    // nothing deployed yet; the attempt's id is checked on the cluster before it is submitted again
    phase: 'DEPLOYING',
    jobIdToSubmit: '9ff8a6ec0720935096834f2150c818a3',
    history: [],
    lastReconciledGeneration: 1,
    firstDeployment: true,
  },
};

const USER_KEYS = ['observedGeneration', 'lifecycleState', 'error', 'conditions'] as const;
const USER_JOB_KEYS = ['jobName', 'jobId', 'state', 'startTime', 'updateTime'] as const;

for (const name of SESSION_JOB_VARIANTS) {
  if (name === 'never-deployed') continue;
  const expected = EXPECTED[name];
  test(`${name} (${SESSION_JOB_VARIANT_MOMENTS[name]}): migrated losslessly, a rerun changes nothing, the revert gives the original status back`, async () => {
    const stored = await lc.createLegacySessionJob(loadSessionJobVariant(name).object);
    const original = stored.status!;
    assert.ok(hasLegacyFields(original), 'stored with its legacy fields');

    const outcome = await migrateLegacySessionJob(stored, deps);
    assert.equal(outcome.kind, 'migrated', outcome.message);

    // The ConfigMap: owned by the session job, labelled as a session job's state (never a deployment's).
    const cm = await lc.configMaps.get('default', configMapOf(name));
    assert.ok(cm, `ConfigMap ${configMapOf(name)} created`);
    const owner = cm.metadata?.ownerReferences?.find((r) => r.controller);
    assert.deepEqual([owner?.kind, owner?.name, owner?.uid], [FLINK_SESSION_JOB_KIND, name, stored.metadata.uid]);
    assert.equal(cm.metadata?.labels?.[SESSION_JOB_LABEL], name);
    assert.equal(cm.metadata?.labels?.[DEPLOYMENT_LABEL], undefined, 'not labelled as a FlinkDeployment state');
    assert.equal(readLegacyStatusArchive(cm), JSON.stringify(original), 'the original status is archived verbatim');

    const state = decodeStateConfigMap(cm, FLINK_SESSION_JOB_STATE);
    assert.equal(state.phase, expected.phase);
    assert.equal(state.deployedJobId, expected.deployedJobId);
    assert.equal(state.jobIdToSubmit, expected.jobIdToSubmit);
    assert.equal(state.upgradeSavepointPath, expected.upgradeSavepointPath);
    if (expected.pendingSavepoint) assert.deepEqual(state.pendingSavepoint, expected.pendingSavepoint);
    else assert.equal(state.pendingSavepoint, undefined);
    assert.equal(state.pendingCheckpoint, undefined);
    assert.deepEqual(
      state.savepointHistory.map((r) => [r.location, r.triggerType, r.timeStamp, ...(r.triggerNonce !== undefined ? [r.triggerNonce] : [])]),
      expected.history,
      'the history, oldest first',
    );
    assert.ok(state.savepointHistory.every((r) => r.formatType === 'CANONICAL'));
    assert.equal(state.lastReconciledGeneration, expected.lastReconciledGeneration);
    assert.equal(state.firstDeployment, expected.firstDeployment);
    assert.equal(state.lastPeriodicSavepointTimestamp, expected.lastPeriodicSavepointTimestamp ?? 0);
    assert.equal(state.lastPeriodicCheckpointTimestamp, expected.lastPeriodicCheckpointTimestamp ?? 0);
    const rs = original.reconciliationStatus!;
    assert.deepEqual(state.lastReconciledSpec, specOfLegacyString(rs.lastReconciledSpec!));
    if (rs.lastStableSpec) assert.deepEqual(state.lastStableSpec, specOfLegacyString(rs.lastStableSpec));
    else assert.equal(state.lastStableSpec, undefined);
    assert.equal(state.reconciliationTimestamp, new Date(rs.reconciliationTimestamp!).toISOString());
    assert.equal(state.lastWriter?.holderIdentity, MIGRATE_COMMAND_WRITER.holderIdentity);

    // The status: user fields as they were, no legacy field, stateRef; the same through v1.
    const migrated = await lc.getSessionJobV1beta1(name);
    assert.equal(hasLegacyFields(migrated.status), false);
    for (const key of USER_KEYS) assert.deepEqual(migrated.status?.[key], original[key], `status.${key} kept`);
    for (const key of USER_JOB_KEYS) assert.deepEqual(migrated.status?.jobStatus?.[key], original.jobStatus?.[key], `status.jobStatus.${key} kept`);
    // the user-facing last savepoint (its triggerNonce stays in the history record)
    const { triggerNonce: _nonce, ...lastSavepoint } = original.jobStatus?.savepointInfo?.lastSavepoint ?? {};
    assert.deepEqual(migrated.status?.jobStatus?.lastSavepoint, lastSavepoint.location ? lastSavepoint : undefined, 'the last savepoint stays user-facing');
    assert.deepEqual(migrated.status?.stateRef, { configMapName: configMapOf(name), revision: 1 });
    assert.deepEqual((await lc.getSessionJobV1(name)).status, migrated.status, 'the v1 view shows the same status');

    // Idempotent.
    const m = mark();
    assert.equal((await migrateLegacySessionJob(migrated, deps)).kind, 'already-migrated');
    assert.deepEqual(writesSince(m), []);

    // The way back: nothing changed since, so the Apache operator gets exactly its status again.
    const reverted = await revertSessionJob(migrated, { configMaps: lc.configMaps, sessionJobs: lc.sessionJobs, dryRun: false });
    assert.equal(reverted.kind, 'reverted', reverted.message);
    assert.equal(reverted.kind === 'reverted' && reverted.verbatim, true);
    assert.deepEqual((await lc.getSessionJobV1beta1(name)).status, original, 'the status the Apache operator left, exactly');
    assert.equal(await lc.configMaps.get('default', configMapOf(name)), undefined, 'ConfigMap deleted');
    const again = await revertSessionJob(await lc.getSessionJobV1beta1(name), { configMaps: lc.configMaps, sessionJobs: lc.sessionJobs, dryRun: false });
    assert.equal(again.kind, 'unchanged');
  });
}

test('the session-job codec round-trips every variant: decode(encode(decode(x))) is decode(x), in the Apache field order', () => {
  for (const name of SESSION_JOB_VARIANTS) {
    const { object } = loadSessionJobVariant(name);
    if (!object.status) continue;
    const once = decodeLegacySessionJobStatus(object.status, `default/${name}`, configMapOf(name), object.spec);
    const encoded = encodeLegacySessionJobStatus(once.state, once.userStatus);
    assert.equal(hasLegacyFields(encoded), true);
    assert.equal('jobManagerDeploymentStatus' in encoded || 'clusterInfo' in encoded || 'taskManager' in encoded, false, `${name}: no cluster fields`);
    const twice = decodeLegacySessionJobStatus(encoded, `default/${name}`, configMapOf(name), object.spec);
    assert.deepEqual(twice, once, name);
    // The spec string is the Apache one (nulls and the unset int dropped), even from a spec object whose keys come in another order.
    const reversed = Object.fromEntries(Object.entries(once.state.lastReconciledSpec!).reverse()) as FlinkSessionJobSpec;
    const fromReversed = encodeLegacySessionJobStatus({ ...once.state, lastReconciledSpec: reversed }, once.userStatus);
    const apacheText = JSON.stringify(
      JSON.parse(object.status.reconciliationStatus!.lastReconciledSpec!, (key, value: unknown) =>
        value === null || (key === 'parallelism' && value === 0) ? undefined : value,
      ),
    );
    assert.equal(fromReversed.reconciliationStatus?.lastReconciledSpec, apacheText, `${name}: Jackson's FlinkSessionJobSpec field order`);
  }
});

test('never-deployed (no status at all): nothing to migrate, nothing written', async () => {
  const stored = await lc.createLegacySessionJob(loadSessionJobVariant('never-deployed').object);
  const m = mark();
  const outcome = await migrateLegacySessionJob(stored, deps);
  assert.equal(outcome.kind, 'already-migrated');
  assert.deepEqual(writesSince(m), []);
  assert.equal(await lc.configMaps.get('default', configMapOf('never-deployed')), undefined);
});

/** The session-job decision on a migrated state, the session cluster ready and listing `jobs`. */
function decide(object: FlinkSessionJobV1beta1, state: SessionJobInternalState, jobs: ListedJob[]) {
  return decideSessionJob({
    state,
    desired: object.spec,
    desiredGeneration: object.metadata.generation ?? 1,
    observed: { cluster: { kind: 'ready', highAvailability: false }, jobs },
    settings: deploymentOperatorSettings(object.spec),
    deleting: false,
    now: Date.parse('2026-07-14T09:20:00Z'),
    resource: `default/${object.metadata.name ?? ''}`,
  }).step;
}

async function migratedState(object: FlinkSessionJobV1beta1): Promise<SessionJobInternalState> {
  const outcome = await migrateLegacySessionJob(await lc.createLegacySessionJob(object), deps);
  assert.equal(outcome.kind, 'migrated', outcome.message);
  return decodeStateConfigMap((await lc.configMaps.get('default', configMapOf(object.metadata.name!)))!, FLINK_SESSION_JOB_STATE);
}

test('mid-upgrade-savepoint: the operator resubmits the new spec from the upgrade savepoint, and nothing else is stopped or submitted', async () => {
  const object = variantAs('mid-upgrade-savepoint', 'mid-upgrade-sp-decide');
  const state = await migratedState(object);
  // STOPPED: the old job is gone (stopped with its savepoint), the new one is not pinned yet.
  assert.equal(state.phase, 'STOPPED');
  assert.equal(state.deployedJobId, undefined);
  assert.equal(state.lastReconciledSpec?.job?.state, 'suspended', "the Apache operator's reconciled spec between stop and redeploy");
  assert.equal(state.lastReconciledSpec?.job?.jarURI, object.spec.job?.jarURI, 'the reconciled spec is the new one');
  const step = decide(object, state, []);
  assert.deepEqual(step, {
    kind: 'pin',
    spec: runningSpec(object.spec),
    generation: 2,
    restoreFrom: `${SP}/savepoint-800c59-d7990123f6e2`,
    why: 'upgrade to generation 2',
  });
});

test('mid-upgrade-submitting: the recorded job id is adopted when the cluster runs it, else submitted under that id from the upgrade savepoint', async () => {
  const object = variantAs('mid-upgrade-submitting', 'mid-upgrade-sub-decide');
  const state = await migratedState(object);
  const jobId = 'b52dd103f5e6c2cc437403b2985cd09c';
  assert.equal(state.phase, 'DEPLOYING');
  assert.equal(state.jobIdToSubmit, jobId);
  assert.deepEqual(decide(object, state, [{ jobId, state: 'RUNNING' }]), { kind: 'record-submitted' }, 'the job runs: adopted, never a second one');
  assert.deepEqual(decide(object, state, []), { kind: 'submit' });
  const run = runRequestOf(state);
  assert.equal(run.jobId, jobId, 'the same id: Flink refuses a duplicate, so a landed submission cannot start twice');
  assert.equal(run.savepointPath, `${SP}/savepoint-ae9c19-8f04c253c9bf`);
  assert.equal(run.entryClass, 'com.example.clickstream.EnricherJob');
  assert.equal(run.parallelism, 2);
});

test('first-deploy-failed: the attempt is checked on the cluster, then submitted again without state', async () => {
  const object = variantAs('first-deploy-failed', 'first-deploy-decide');
  const state = await migratedState(object);
  assert.deepEqual(decide(object, state, []), { kind: 'submit' });
  assert.equal(runRequestOf(state).savepointPath, undefined);
  assert.deepEqual(decide(object, state, [{ jobId: '9ff8a6ec0720935096834f2150c818a3', state: 'RUNNING' }]), { kind: 'record-submitted' });
});

test('an asynchronous cancel in flight (UPGRADING, reconciled spec still running) is refused: the checkpoint to restore from is not known yet', async () => {
  // AbstractJobReconciler.reconcileSpecChange (release-1.13.0) for a stateless / last-state session
  // job: cancelJobOrError sets jobStatus.state CANCELLING, the state UPGRADING, and only the
  // reconciled upgradeMode changes; the checkpoint is recorded once the cancel is observed.
  const object = variantAs('last-state-running', 'cancel-in-flight');
  const status = object.status!;
  status.reconciliationStatus!.state = 'UPGRADING';
  status.jobStatus!.state = 'CANCELLING';
  status.lifecycleState = 'UPGRADING';
  const stored = await lc.createLegacySessionJob(object);
  const m = mark();
  const outcome = await migrateLegacySessionJob(stored, deps);
  assert.equal(outcome.kind, 'refused');
  assert.equal(outcome.kind === 'refused' && outcome.field, 'status.reconciliationStatus.state');
  assert.match(outcome.message, /^default\/cancel-in-flight: job e0896d685ba400cb33d4ce9cdf9e0d57 is being cancelled .*start the Apache operator again/);
  assert.deepEqual(writesSince(m), []);
  assert.deepEqual((await lc.getSessionJobV1beta1('cancel-in-flight')).status, stored.status);
});

test('a job id that is either the cancelled job or the next one (UPGRADING, suspended, CANCELED) is refused with how to tell', async () => {
  // After the cancel is observed (JobStatusObserver.markSuspended) the old id stays until
  // SessionJobReconciler.deploy patches the new one; the job state stays CANCELED either way.
  const object = variantAs('mid-upgrade-submitting', 'ambiguous-id');
  object.status!.jobStatus!.state = 'CANCELED';
  const stored = await lc.createLegacySessionJob(object);
  const m = mark();
  const outcome = await migrateLegacySessionJob(stored, deps);
  assert.equal(outcome.kind, 'refused');
  assert.equal(outcome.kind === 'refused' && outcome.field, 'status.jobStatus.jobId');
  assert.match(
    outcome.message,
    /GET \/jobs\/b52dd103f5e6c2cc437403b2985cd09c.*if it runs, set status\.jobStatus\.state to RUNNING; if it is CANCELED or unknown, remove status\.jobStatus\.jobId/,
  );
  assert.deepEqual(writesSince(m), []);
});

test('interrupted after the ConfigMap was written: the rerun only writes the status', async () => {
  const stored = await lc.createLegacySessionJob(variantAs('mid-upgrade-savepoint', 'interrupted-sj'));
  lc.cluster.faults.failNext({ verb: 'update', resource: 'flinksessionjobs', subresource: 'status' }, 'reset');
  const first = await migrateLegacySessionJob(stored, { ...deps, maxAttempts: 1 });
  assert.equal(first.kind, 'failed', first.message);
  assert.ok(await lc.configMaps.get('default', configMapOf('interrupted-sj')));
  assert.ok(hasLegacyFields((await lc.getSessionJobV1beta1('interrupted-sj')).status), 'the legacy status is still there');

  const m = mark();
  const second = await migrateLegacySessionJob(await lc.getSessionJobV1beta1('interrupted-sj'), deps);
  assert.equal(second.kind, 'resumed', second.message);
  assert.deepEqual(writesSince(m), ['update flinksessionjobs/status interrupted-sj']);
  assert.deepEqual((await lc.getSessionJobV1beta1('interrupted-sj')).status?.stateRef, { configMapName: configMapOf('interrupted-sj'), revision: 1 });
});

test("a ConfigMap of that name that is not this session job's state is refused, never overwritten", async () => {
  const stored = await lc.createLegacySessionJob(variantAs('running-stable', 'clash-sj'));
  // a state ConfigMap controlled as a FlinkDeployment's (same name and uid), under the session job's ConfigMap name
  const empty: SessionJobInternalState = { formatVersion: 2, revision: 1, phase: 'NEW', savepointHistory: [] };
  const other = encodeStateConfigMap(empty, { deployment: stored }).configMap;
  await lc.configMaps.create('default', { ...other, metadata: { ...other.metadata, name: configMapOf('clash-sj') } });
  const m = mark();
  const outcome = await migrateLegacySessionJob(stored, deps);
  assert.equal(outcome.kind, 'refused');
  assert.match(outcome.message, /its controller is FlinkDeployment clash-sj uid .*this FlinkSessionJob's uid/);
  assert.deepEqual(writesSince(m), []);
  assert.ok(hasLegacyFields((await lc.getSessionJobV1beta1('clash-sj')).status));
});

test('dry run: the diff names the FlinkSessionJob and its ConfigMap; nothing written', async () => {
  const stored = await lc.createLegacySessionJob(variantAs('manual-savepoint-in-flight', 'dry-sj'));
  const m = mark();
  const outcome = await migrateLegacySessionJob(stored, { ...deps, dryRun: true });
  assert.equal(outcome.kind, 'would-migrate');
  const diff = outcome.kind === 'would-migrate' ? outcome.diff : '';
  assert.match(diff, /^FlinkSessionJob default\/dry-sj status \(v1beta1 PUT \.\.\.\/status\):/);
  assert.match(diff, /\+ status\.stateRef: \{"configMapName":"dry-sj\.sessionjob-state","revision":1\}/);
  assert.match(diff, /ConfigMap default\/dry-sj\.sessionjob-state \(create, owned by FlinkSessionJob uid /);
  assert.match(diff, /\+ data\.sessionJob: default\/dry-sj/);
  assert.deepEqual(writesSince(m), []);
});

test('migrateIfLegacySessionJob (the reconciler entry point) reads through v1beta1, stamps the leader, and is idempotent', async () => {
  await lc.createLegacySessionJob(variantAs('suspended', 'by-operator-sj'));
  const outcome = await migrateIfLegacySessionJob('default', 'by-operator-sj', {
    configMaps: lc.configMaps,
    sessionJobs: lc.sessionJobs,
    dryRun: false,
    writer: { holderIdentity: 'op-1', leaseTransitions: 4 },
  });
  assert.equal(outcome.kind, 'migrated', outcome.message);
  assert.equal((await lc.configMaps.get('default', configMapOf('by-operator-sj')))?.metadata?.annotations?.['flink-operator.io/leader'], 'op-1/4');
  assert.equal((await migrateIfLegacySessionJob('default', 'by-operator-sj', deps)).kind, 'already-migrated');
  assert.equal((await migrateIfLegacySessionJob('default', 'nope', deps)).kind, 'failed');
});

test('the revert after the operator moved on writes the current state; unchanged fields keep their original text', async () => {
  const object = variantAs('running-stable', 'moved-on-sj');
  const stored = await lc.createLegacySessionJob(object);
  await migrateLegacySessionJob(stored, deps);
  const existing = (await lc.configMaps.get('default', configMapOf('moved-on-sj')))!;
  const state = decodeStateConfigMap(existing, FLINK_SESSION_JOB_STATE);
  const newer = { location: `${SP}/savepoint-bb804a-newer`, timeStamp: 1784052041226, triggerType: 'PERIODIC' as const, formatType: 'CANONICAL' as const };
  const moved = { ...state, revision: 3, savepointHistory: [...state.savepointHistory, newer], lastPeriodicSavepointTimestamp: newer.timeStamp };
  const owner = await lc.getSessionJobV1beta1('moved-on-sj');
  await lc.configMaps.replace(
    'default',
    configMapOf('moved-on-sj'),
    encodeStateConfigMap(moved, { deployment: owner, kind: FLINK_SESSION_JOB_STATE, existing }).configMap,
  );
  const outcome = await revertSessionJob(owner, { configMaps: lc.configMaps, sessionJobs: lc.sessionJobs, dryRun: false });
  assert.equal(outcome.kind, 'reverted', outcome.message);
  assert.equal(outcome.kind === 'reverted' && outcome.verbatim, false);
  const back = (await lc.getSessionJobV1beta1('moved-on-sj')).status!;
  const original = stored.status!;
  assert.deepEqual(back.jobStatus?.savepointInfo?.savepointHistory, [...original.jobStatus!.savepointInfo!.savepointHistory!, newer]);
  assert.equal(back.jobStatus?.savepointInfo?.lastPeriodicSavepointTimestamp, newer.timeStamp);
  assert.equal(
    back.reconciliationStatus?.lastReconciledSpec,
    original.reconciliationStatus?.lastReconciledSpec,
    'the spec string as the Apache operator wrote it',
  );
  assert.equal(back.reconciliationStatus?.state, 'DEPLOYED');
  assert.equal(back.jobStatus?.jobId, original.jobStatus?.jobId);
  assert.equal(back.jobStatus?.upgradeSavepointPath, original.jobStatus?.upgradeSavepointPath);
  assert.equal(back.stateRef, undefined);
});

test('migrate without the FlinkSessionJob CRD says so and migrates the FlinkDeployments', async () => {
  const bare = await startLegacyCluster({ installSessionJobCrd: false });
  try {
    const v = builtVariants()[0];
    await bare.createLegacy({ ...v.object, metadata: { ...v.object.metadata, name: 'only-deployments' } }, v.status);
    const lines: string[] = [];
    const report = await runMigrate(migrateClientsFor(bare.kubeConfig), { namespace: 'default' }, (l) => lines.push(l));
    assert.equal(report.exitCode, 0, lines.join('\n'));
    assert.deepEqual(
      report.outcomes.map((o) => o.kind),
      ['migrated'],
    );
    assert.deepEqual(report.sessionJobOutcomes, []);
    assert.equal(
      lines.at(-1),
      'the FlinkSessionJob CustomResourceDefinition flinksessionjobs.flink.apache.org is not installed: no FlinkSessionJobs to migrate',
    );
  } finally {
    await bare.stop();
  }
});

test('a webhook configuration for flinksessionjobs alone stops migrate before anything is listed or written', async () => {
  const calls: string[] = [];
  const clients: MigrateClients = {
    ...migrateClientsFor(lc.kubeConfig),
    listV1beta1: async () => {
      calls.push('list');
      return [];
    },
    listWebhookConfigurations: async () => ({
      configurations: [
        {
          kind: 'ValidatingWebhookConfiguration',
          name: 'session-jobs-only',
          webhooks: [
            { name: 'w', failurePolicy: 'Fail', rules: [{ apiGroups: ['flink.apache.org'], operations: ['UPDATE'], resources: ['flinksessionjobs'] }] },
          ],
        },
      ],
    }),
  };
  const lines: string[] = [];
  const report = await runMigrate(clients, { allNamespaces: true }, (l) => lines.push(l));
  assert.equal(report.exitCode, 1);
  assert.deepEqual(calls, []);
  assert.match(
    lines[0] ?? '',
    /^error: admission webhook configuration\(s\) for flink\.apache\.org flinksessionjobs are registered: ValidatingWebhookConfiguration session-jobs-only\./,
  );
  assert.ok(lines.includes('  kubectl delete validatingwebhookconfiguration session-jobs-only'), lines.join('\n'));
});
