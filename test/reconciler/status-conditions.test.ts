/**
 * The `Running` condition beside `Ready` in the v1 status, and the GET /config once per JobManager
 * start behind status.clusterInfo's flink-version / flink-revision.
 *
 * Apache's semantics: flink-kubernetes-operator-api api/status/FlinkDeploymentStatus
 * .setRunningConditionIfRequired and api/utils/ConditionsUtils (application mode: True iff the job
 * is RUNNING, reason the job state in CamelCase, message `Job status <STATE>`; session mode: True
 * iff the JobManager is READY, reason/message of api/status/JobManagerDeploymentStatus; nothing
 * before a spec was deployed; lastTransitionTime kept while the status is unchanged), and
 * FlinkDeploymentStatusConditionsTest there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition } from '../../src/api/flink-deployment-status.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { emptyInternalState, type InternalState } from '../../src/api/internal-state.js';
import { validateStatusSchema } from '../../src/api/schema-validator.js';
import type { FlinkDashboardConfig } from '../../src/flink/flink-rest-types.js';
import { FlinkRestError } from '../../src/flink/flink-rest-error.js';
import { FlinkBuildObserver } from '../../src/reconciler/flink-build-observer.js';
import type { Observation } from '../../src/reconciler/observation.js';
import type { ReconcilerLog } from '../../src/reconciler/reconciler-dependencies.js';
import { buildStatus, type PassOutcome } from '../../src/reconciler/status-builder.js';

const JOB_ID = 'e0896d685ba400cb33d4ce9cdf9e0d57';
const NOW = new Date('2026-07-14T08:00:00Z');
const EARLIER = '2026-07-14T07:00:00Z';

const APPLICATION: FlinkDeploymentSpec = {
  image: 'flink:1.20',
  flinkVersion: 'v1_20',
  jobManager: { resource: { cpu: 1, memory: '2048m' } },
  taskManager: { resource: { cpu: 1, memory: '2048m' } },
  job: { jarURI: 'local:///opt/flink/usrlib/orders.jar', upgradeMode: 'savepoint', parallelism: 2 },
};
const { job: _job, ...SESSION } = APPLICATION;

function deployment(spec: FlinkDeploymentSpec, conditions?: Condition[]): FlinkDeploymentV1 {
  return {
    apiVersion: 'flink.apache.org/v1',
    kind: 'FlinkDeployment',
    metadata: { name: 'orders', namespace: 'default', uid: 'uid-orders' },
    spec,
    ...(conditions ? { status: { conditions } } : {}),
  };
}

function stateOf(phase: InternalState['phase'], spec: FlinkDeploymentSpec | undefined): InternalState {
  return { ...emptyInternalState(), revision: 3, phase, deployedJobId: JOB_ID, ...(spec ? { lastReconciledSpec: spec, lastReconciledGeneration: 1 } : {}) };
}

const RUNNING_JOB = { jobId: JOB_ID, state: 'RUNNING' as const, name: 'orders' };

function running(d: FlinkDeploymentV1, state: InternalState, observed: Observation, extra: Partial<PassOutcome> = {}): Condition | undefined {
  const status = buildStatus(d, state, { observed, ...extra }, NOW);
  assert.deepEqual(validateStatusSchema(status, 'v1'), [], 'the status stays within the CRD schema');
  return status.conditions?.find((c) => c.type === 'Running');
}

test('application mode: Running True with reason Running while the job runs, beside Ready', () => {
  const d = deployment(APPLICATION);
  const status = buildStatus(d, stateOf('RUNNING', APPLICATION), { observed: { jobManager: 'READY', job: RUNNING_JOB, savepointsAwaitingDisposal: 0 } }, NOW);
  assert.deepEqual(
    status.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      ['Ready', 'True', 'JobRunning', `Job ${JOB_ID} is running`],
      ['Running', 'True', 'Running', 'Job status RUNNING'],
    ],
  );
  assert.equal(status.conditions?.[1]?.lastTransitionTime, '2026-07-14T08:00:00Z');
});

test('application mode: Running False with the job state as reason when suspended, failed, finished or not yet observed', () => {
  const d = deployment(APPLICATION);
  const suspended = running(d, stateOf('SUSPENDED', APPLICATION), { jobManager: 'MISSING', savepointsAwaitingDisposal: 0 });
  assert.deepEqual([suspended?.status, suspended?.reason, suspended?.message], ['False', 'Suspended', 'Job status SUSPENDED']);
  const failed = running(d, stateOf('RUNNING', APPLICATION), { jobManager: 'READY', job: { ...RUNNING_JOB, state: 'FAILED' }, savepointsAwaitingDisposal: 0 });
  assert.deepEqual([failed?.status, failed?.reason, failed?.message], ['False', 'Failed', 'Job status FAILED']);
  const finished = running(d, stateOf('FINISHED', APPLICATION), { jobManager: 'MISSING', savepointsAwaitingDisposal: 0 });
  assert.deepEqual([finished?.status, finished?.reason], ['False', 'Finished']);
  // Deploying: the JobManager is not READY, the job not seen: Apache's RECONCILING.
  const deploying = running(d, stateOf('DEPLOYING', APPLICATION), { jobManager: 'DEPLOYING', savepointsAwaitingDisposal: 0 });
  assert.deepEqual([deploying?.status, deploying?.reason, deploying?.message], ['False', 'Reconciling', 'Job status RECONCILING']);
  const initializing = running(d, stateOf('DEPLOYED', APPLICATION), {
    jobManager: 'READY',
    job: { ...RUNNING_JOB, state: 'INITIALIZING' },
    savepointsAwaitingDisposal: 0,
  });
  assert.deepEqual([initializing?.status, initializing?.reason], ['False', 'Initializing']);
});

test('no Running condition before a spec was deployed (Apache: no last reconciled spec)', () => {
  const d = deployment(APPLICATION);
  const status = buildStatus(d, stateOf('NEW', undefined), { observed: { jobManager: 'MISSING', savepointsAwaitingDisposal: 0 }, error: 'Invalid spec' }, NOW);
  assert.deepEqual(
    status.conditions?.map((c) => c.type),
    ['Ready'],
  );
});

test('session mode: Running follows the JobManager, with the reasons and messages of JobManagerDeploymentStatus', () => {
  const d = deployment(SESSION);
  const state = stateOf('RUNNING', SESSION);
  const cases: Array<[Observation['jobManager'], Condition['status'], string, string]> = [
    ['READY', 'True', 'JobManagerReady', 'JobManager is running and ready to receive REST API calls'],
    ['DEPLOYED_NOT_READY', 'False', 'DeployedNotReady', 'JobManager is running but not yet ready to receive REST API calls'],
    ['DEPLOYING', 'False', 'JobManagerIsDeploying', 'JobManager process is starting up'],
    ['MISSING', 'False', 'JobManagerDeploymentMissing', 'JobManager deployment not found'],
    ['ERROR', 'False', 'Error', 'JobManager deployment failed'],
  ];
  for (const [jobManager, status, reason, message] of cases) {
    const c = running(d, state, { jobManager, savepointsAwaitingDisposal: 0 });
    assert.deepEqual([c?.status, c?.reason, c?.message], [status, reason, message], jobManager);
  }
});

test('lastTransitionTime stays while the status stays, and moves when it changes', () => {
  const before: Condition = { type: 'Running', status: 'True', reason: 'Running', message: 'Job status RUNNING', lastTransitionTime: EARLIER };
  const d = deployment(APPLICATION, [before]);
  const still = running(d, stateOf('RUNNING', APPLICATION), { jobManager: 'READY', job: RUNNING_JOB, savepointsAwaitingDisposal: 0 });
  assert.equal(still?.lastTransitionTime, EARLIER);
  const restarting = running(d, stateOf('RUNNING', APPLICATION), {
    jobManager: 'READY',
    job: { ...RUNNING_JOB, state: 'RESTARTING' },
    savepointsAwaitingDisposal: 0,
  });
  assert.deepEqual([restarting?.status, restarting?.reason, restarting?.lastTransitionTime], ['False', 'Restarting', '2026-07-14T08:00:00Z']);
});

test("clusterInfo: the pass's clusterInfo replaces the previous one; without one the previous stays", () => {
  const d: FlinkDeploymentV1 = { ...deployment(APPLICATION), status: { clusterInfo: { 'flink-version': '1.19.1' } } };
  const observed: Observation = { jobManager: 'READY', job: RUNNING_JOB, savepointsAwaitingDisposal: 0 };
  assert.deepEqual(buildStatus(d, stateOf('RUNNING', APPLICATION), { observed }, NOW).clusterInfo, { 'flink-version': '1.19.1' });
  assert.deepEqual(buildStatus(d, stateOf('RUNNING', APPLICATION), { observed, clusterInfo: { 'flink-version': '1.20.0' } }, NOW).clusterInfo, {
    'flink-version': '1.20.0',
  });
});

// ---- GET /config once per JobManager start ----

const silentLog: ReconcilerLog = { info: () => {}, debug: () => {}, warn: () => {} };

function configApi(version: string, revision = 'b2ca390 @ 2022-02-03T14:54:22+01:00') {
  const api = {
    calls: 0,
    failWith: undefined as Error | undefined,
    async getConfig(): Promise<FlinkDashboardConfig> {
      api.calls++;
      if (api.failWith) throw api.failWith;
      return { 'refresh-interval': 3000, 'flink-version': version, 'flink-revision': revision };
    },
  };
  return api;
}

const readySince = (since: number): Observation => ({ jobManager: 'READY', jobManagerAvailableSince: since, savepointsAwaitingDisposal: 0 });

test('GET /config is asked once per JobManager start, again when the JobManager restarts', async () => {
  const observer = new FlinkBuildObserver(silentLog);
  const api = configApi('1.20.0');
  const d = deployment(APPLICATION);
  const first = await observer.observe(d, readySince(1000), api);
  assert.deepEqual(first.flinkBuild, { version: '1.20.0', revision: 'b2ca390 @ 2022-02-03T14:54:22+01:00' });
  for (let pass = 0; pass < 5; pass++) assert.deepEqual((await observer.observe(d, readySince(1000), api)).flinkBuild, first.flinkBuild);
  assert.equal(api.calls, 1, 'periodic passes of the same JobManager ask nothing');
  const restarted = await observer.observe(d, readySince(90_000), configApi('1.20.1'));
  assert.equal(restarted.flinkBuild?.version, '1.20.1', 'a new JobManager start is asked again');
});

test('GET /config is not asked while the JobManager is not READY, and a failure is asked again next pass', async () => {
  const observer = new FlinkBuildObserver(silentLog);
  const api = configApi('1.20.0');
  const d = deployment(APPLICATION);
  assert.equal((await observer.observe(d, { jobManager: 'DEPLOYED_NOT_READY', savepointsAwaitingDisposal: 0 }, api)).flinkBuild, undefined);
  assert.equal(api.calls, 0);
  api.failWith = new FlinkRestError('GET /config: 503', {
    status: 503,
    path: '/config',
    method: 'GET',
    url: 'http://orders-rest:8081/config',
    source: 'flink',
  });
  assert.equal((await observer.observe(d, readySince(1000), api)).flinkBuild, undefined, 'a failed GET /config never fails the pass');
  api.failWith = undefined;
  assert.equal((await observer.observe(d, readySince(1000), api)).flinkBuild?.version, '1.20.0');
  assert.equal(api.calls, 2);
  observer.forget('uid-orders');
  await observer.observe(d, readySince(1000), api);
  assert.equal(api.calls, 3, 'a forgotten resource is asked again');
});
