/**
 * rebuildStateFromWorld: the state of a deployment whose ConfigMap is gone, from what the world
 * proves. The worlds here are rendered by the same builder `deploy` uses
 * (buildFlinkClusterResources), so the annotations are the ones a real cluster carries, and Flink's
 * answers are shaped like GET /jobs/overview and GET /jobs/:id/checkpoints of
 * ../shared/reference/flink-rest-v1-dispatcher.yml (CheckpointingStatistics).
 */
import { reconciliationStateOfPhase } from '../../src/api/deployment-phase.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentSpec } from '../../src/api/flink-deployment-spec.js';
import { canonicalJson } from '../../src/api/canonical-json.js';
import { DEPLOYED_SPEC_ANNOTATION, LAST_SAVEPOINT_ANNOTATION, specHash } from '../../src/flink/deployed-record.js';
import { buildFlinkClusterResources } from '../../src/flink/flink-cluster-resources.js';
import type { FlinkCheckpointingStatistics, FlinkCheckpointStatistics, FlinkJobOverview } from '../../src/flink/flink-rest-types.js';
import { withRunningState } from '../../src/reconciler/deployment-specs.js';
import { rebuildStateFromWorld, type ObservedWorld } from '../../src/state/state-rebuild.js';

const JOB = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const BOGUS = 'ffffffffffffffffffffffffffffffff';
const NOW = new Date('2026-11-30T00:00:00Z');

/** The README example: no job.state, savepoint upgrades. */
const spec: FlinkDeploymentSpec = {
  image: 'flink:1.20',
  flinkVersion: 'v1_20',
  mode: 'standalone',
  flinkConfiguration: { 'state.savepoints.dir': 's3://bucket/savepoints' },
  jobManager: { resource: { memory: '2048m', cpu: 1 } },
  taskManager: { resource: { memory: '2048m', cpu: 1 } },
  job: { jarURI: 'local:///opt/flink/examples/streaming/StateMachineExample.jar', parallelism: 2, upgradeMode: 'savepoint' },
};

/** A deployment whose status was hand-edited to point at another deployment's savepoint and a bogus job id. */
const deployment = flinkDeployment('orders')
  .withUid('u1')
  .withGeneration(6)
  .withSpec(spec)
  .withStatus({
    stateRef: { configMapName: 'orders-operator-state', revision: 41 },
    jobStatus: { jobId: BOGUS, state: 'RUNNING', lastSavepoint: { location: 's3://other-team/savepoint-9', timeStamp: 1700, triggerType: 'MANUAL' } },
  })
  .build();

/** What `deploy` rendered for generation 4: the spec as recorded (job.state running), job id pinned. */
function renderedWorld(deployedSpec = withRunningState(spec)): Required<Pick<ObservedWorld, 'jobManagerDeployment' | 'flinkConfigMap'>> {
  const objects = buildFlinkClusterResources(deployment, { spec: deployedSpec, generation: 4, specHash: specHash(deployedSpec), jobId: JOB });
  return { jobManagerDeployment: objects.jobManagerDeployment, flinkConfigMap: objects.configMap };
}

function job(state: string, startTime = 1_000): FlinkJobOverview {
  return { jid: JOB, name: 'StateMachineExample', state, 'start-time': startTime, 'end-time': -1, duration: 1, 'last-modification': startTime };
}

function checkpoint(partial: Partial<FlinkCheckpointStatistics>): FlinkCheckpointStatistics {
  return { id: 1, status: 'COMPLETED', is_savepoint: false, trigger_timestamp: 0, latest_ack_timestamp: 0, ...partial };
}

function statistics(history: FlinkCheckpointStatistics[], restored?: string): FlinkCheckpointingStatistics {
  const savepoints = history.filter((c) => c.is_savepoint && c.status === 'COMPLETED');
  return {
    counts: { restored: restored ? 1 : 0, total: history.length, in_progress: 0, completed: 0, failed: 0 },
    summary: {},
    latest: {
      completed: history.find((c) => !c.is_savepoint && c.status === 'COMPLETED') ?? null,
      savepoint: savepoints.at(-1) ?? null,
      failed: null,
      restored: restored ? { id: 0, restore_timestamp: 900, is_savepoint: true, external_path: restored } : null,
    },
    history,
  };
}

test('a running job with its deployed record: the deployed spec, the pinned job and Flink savepoints; nothing from status', () => {
  const world = renderedWorld();
  const { state, specConfirmed, message } = rebuildStateFromWorld(
    deployment,
    {
      ...world,
      flink: {
        jobs: [job('RUNNING')],
        checkpoints: statistics(
          [
            checkpoint({
              id: 7,
              is_savepoint: true,
              checkpoint_type: 'SAVEPOINT',
              trigger_timestamp: 2_000,
              latest_ack_timestamp: 2_100,
              external_path: 's3://bucket/savepoints/sp-7',
            }),
          ],
          's3://bucket/savepoints/sp-3',
        ),
      },
    },
    NOW,
  );
  assert.equal(specConfirmed, true);
  assert.equal(reconciliationStateOfPhase(state.phase), 'DEPLOYED');
  assert.deepEqual(state.lastReconciledSpec, withRunningState(spec), 'the spec the cluster was rendered from, with job.state: running as deploy records it');
  assert.equal(state.lastReconciledGeneration, 4, 'the generation the rendering belongs to, not the current one');
  assert.equal(state.deployedJobId, JOB, 'the pinned job id, never the status jobId');
  assert.deepEqual(
    state.savepointHistory.map((r) => r.location),
    ['s3://bucket/savepoints/sp-3', 's3://bucket/savepoints/sp-7'],
    'what Flink restored from, then its newest savepoint; never the status lastSavepoint',
  );
  assert.equal(state.pendingSavepoint, undefined);
  assert.equal(state.revision, 41, 'the revision counter continues from stateRef (the store adds one)');
  assert.equal(state.reconciliationTimestamp, '2026-11-30T00:00:00.000Z');
  assert.doesNotMatch(JSON.stringify(state), /other-team|ffffffff/, 'no status value leaks into the state');
  assert.match(message, /deployed spec of generation 4/);
});

test('a stop-with-savepoint in flight (SYNC_SAVEPOINT) is resumed: UPGRADING with a pending stop of that job', () => {
  const inFlight = checkpoint({ id: 8, status: 'IN_PROGRESS', is_savepoint: true, checkpoint_type: 'SYNC_SAVEPOINT', trigger_timestamp: 5_000 });
  const { state } = rebuildStateFromWorld(deployment, { ...renderedWorld(), flink: { jobs: [job('RUNNING')], checkpoints: statistics([inFlight]) } }, NOW);
  assert.equal(reconciliationStateOfPhase(state.phase), 'UPGRADING');
  assert.deepEqual(state.pendingSavepoint, { kind: 'savepoint', triggerType: 'UPGRADE', jobId: JOB, stopJob: true, requestedAt: 5_000 });
  assert.deepEqual(state.lastReconciledSpec, withRunningState(spec), 'still the old spec: the new one is recorded when the stop completes');
});

test('a manual savepoint in flight is adopted for the unacknowledged nonce; a completed one acknowledges it', () => {
  const withNonce = flinkDeployment('orders')
    .withUid('u1')
    .withGeneration(7)
    .withSpec({ ...spec, job: { ...spec.job!, savepointTriggerNonce: 3 } })
    .build();
  const inFlight = checkpoint({ id: 9, status: 'IN_PROGRESS', is_savepoint: true, checkpoint_type: 'SAVEPOINT', trigger_timestamp: 6_000 });
  const pending = rebuildStateFromWorld(withNonce, { ...renderedWorld(), flink: { jobs: [job('RUNNING')], checkpoints: statistics([inFlight]) } }, NOW).state;
  assert.equal(pending.pendingSavepoint?.triggerType, 'MANUAL');
  assert.equal(pending.pendingSavepoint?.triggerNonce, 3);
  assert.equal(pending.pendingSavepoint?.stopJob, false);
  assert.equal(reconciliationStateOfPhase(pending.phase), 'DEPLOYED');

  const done = checkpoint({
    id: 9,
    is_savepoint: true,
    checkpoint_type: 'SAVEPOINT',
    trigger_timestamp: 6_000,
    latest_ack_timestamp: 6_100,
    external_path: 's3://bucket/savepoints/sp-9',
  });
  const answered = rebuildStateFromWorld(
    withNonce,
    { ...renderedWorld(), flink: { jobs: [job('RUNNING', 1_000)], checkpoints: statistics([done]) } },
    NOW,
  ).state;
  assert.equal(answered.lastReconciledSpec?.job?.savepointTriggerNonce, 3, 'the nonce is not answered a second time');
  const before = rebuildStateFromWorld(withNonce, { ...renderedWorld(), flink: { jobs: [job('RUNNING', 7_000)], checkpoints: statistics([done]) } }, NOW).state;
  assert.equal(before.lastReconciledSpec?.job?.savepointTriggerNonce, undefined, 'a savepoint from before the job started did not answer it');
  // Chaos seed 4410: the savepoint the status reports answered the previous nonce; the new nonce still waits for its own.
  const rebuiltWithReported = (triggerNonce: number) => {
    const d = structuredClone(withNonce);
    d.status = {
      jobStatus: { state: 'RUNNING', lastSavepoint: { location: 's3://bucket/savepoints/sp-9', timeStamp: 6_100, triggerType: 'MANUAL', triggerNonce } },
    };
    return rebuildStateFromWorld(d, { ...renderedWorld(), flink: { jobs: [job('RUNNING', 1_000)], checkpoints: statistics([done]) } }, NOW).state;
  };
  assert.equal(rebuiltWithReported(2).lastReconciledSpec?.job?.savepointTriggerNonce, undefined, 'the reported savepoint answered nonce 2, not 3');
  // Chaos seed 5527: the status says it answered this very nonce: acknowledged, no second savepoint.
  assert.equal(rebuiltWithReported(3).lastReconciledSpec?.job?.savepointTriggerNonce, 3, 'the reported savepoint answered nonce 3');
});

test('no deployed spec recorded (an older rendering): the running job is kept, its spec is unknown, never redeployed by the rebuild', () => {
  const world = renderedWorld();
  delete world.flinkConfigMap.metadata!.annotations![DEPLOYED_SPEC_ANNOTATION];
  const { state, specConfirmed, message } = rebuildStateFromWorld(deployment, { ...world, flink: { jobs: [job('RUNNING')] } }, NOW);
  assert.equal(specConfirmed, false);
  assert.equal(reconciliationStateOfPhase(state.phase), 'DEPLOYED');
  assert.equal(state.deployedJobId, JOB);
  assert.equal(state.lastReconciledSpec, undefined, 'never claims a spec it cannot prove');
  assert.equal(state.upgradeSavepointPath, undefined);
  assert.match(message, /a savepoint first/);
});

test('a deployed-spec annotation that does not match the JobManager spec hash is not trusted', () => {
  const world = renderedWorld();
  world.flinkConfigMap.metadata!.annotations![DEPLOYED_SPEC_ANNOTATION] = canonicalJson({ ...withRunningState(spec), image: 'evil:latest' });
  const { state, specConfirmed } = rebuildStateFromWorld(deployment, { ...world, flink: { jobs: [job('RUNNING')] } }, NOW);
  assert.equal(specConfirmed, false);
  assert.equal(state.lastReconciledSpec, undefined);
});

test('the pinned job id comes from the Flink configuration when no annotation carries it', () => {
  const world = renderedWorld();
  delete world.jobManagerDeployment.metadata!.annotations!['flink-operator.io/job-id'];
  delete world.flinkConfigMap.metadata!.annotations!['flink-operator.io/job-id'];
  const { state } = rebuildStateFromWorld(deployment, { ...world }, NOW);
  assert.equal(state.deployedJobId, JOB, "read from config.yaml's $internal.pipeline.job-id");
});

test('Flink not asked (JobManager not available): the deployed record alone, no savepoints invented', () => {
  const { state } = rebuildStateFromWorld(deployment, renderedWorld(), NOW);
  assert.equal(state.deployedJobId, JOB);
  assert.deepEqual(state.savepointHistory, []);
  assert.equal(reconciliationStateOfPhase(state.phase), 'DEPLOYED');
});

test('no cluster and no Flink left: the status savepoint is only offered as the next restore path, and the message says so', () => {
  const { state, message } = rebuildStateFromWorld(deployment, {}, NOW);
  assert.equal(reconciliationStateOfPhase(state.phase), 'UPGRADING');
  assert.equal(state.firstDeployment, true);
  assert.equal(state.upgradeSavepointPath, 's3://other-team/savepoint-9');
  assert.deepEqual(state.savepointHistory, [], 'never in the history: nothing from status is ever disposed');
  assert.equal(state.deployedJobId, undefined, 'the status jobId is never tracked');
  assert.match(message, /not verified/);

  const suspended = flinkDeployment('orders')
    .withUid('u1')
    .withGeneration(6)
    .withSpec({ ...spec, job: { ...spec.job!, state: 'suspended' } })
    .withStatus(deployment.status!)
    .build();
  const s = rebuildStateFromWorld(suspended, {}, NOW).state;
  assert.equal(reconciliationStateOfPhase(s.phase), 'DEPLOYED');
  assert.equal(s.lastReconciledSpec?.job?.state, 'suspended');
  assert.equal(s.upgradeSavepointPath, 's3://other-team/savepoint-9', 'resume restores from it');

  const stateless = flinkDeployment('orders')
    .withUid('u1')
    .withSpec({ ...spec, job: { ...spec.job!, upgradeMode: 'stateless' } })
    .withStatus(deployment.status!)
    .build();
  assert.equal(rebuildStateFromWorld(stateless, {}, NOW).state.upgradeSavepointPath, undefined);
});

test('a suspended cluster (no JobManager, the Flink ConfigMap left): the pinned job id is kept for an HA resume, the status savepoint only offered', () => {
  const suspended = flinkDeployment('orders')
    .withUid('u1')
    .withGeneration(8)
    .withSpec({ ...spec, job: { ...spec.job!, upgradeMode: 'last-state', state: 'suspended' } })
    .withStatus(deployment.status!)
    .build();
  const { flinkConfigMap } = renderedWorld();
  const { state } = rebuildStateFromWorld(suspended, { flinkConfigMap }, NOW);
  assert.equal(reconciliationStateOfPhase(state.phase), 'DEPLOYED');
  assert.equal(state.lastReconciledSpec?.job?.state, 'suspended');
  assert.equal(state.deployedJobId, JOB, 'a last-state resume can recover this job through Flink HA');
  assert.equal(state.upgradeSavepointPath, 's3://other-team/savepoint-9');
  assert.deepEqual(state.savepointHistory, []);
});

test('a last-state job resumed while its state was lost (no JobManager, the Flink ConfigMap left): rebuilt as suspended, so the resume tries Flink HA first', () => {
  // chaos seeds 9700 and 9801: rebuilt as a first deployment, the resume restored an older manual
  // savepoint under a new job id and dropped the checkpoints Flink HA held.
  const lastState = { ...spec, job: { ...spec.job!, upgradeMode: 'last-state' as const } };
  const resumed = flinkDeployment('orders').withUid('u1').withGeneration(9).withSpec(lastState).withStatus(deployment.status!).build();
  const { flinkConfigMap } = renderedWorld(withRunningState(lastState));
  const { state, message } = rebuildStateFromWorld(resumed, { flinkConfigMap }, NOW);
  assert.equal(state.phase, 'SUSPENDED');
  assert.equal(state.firstDeployment, false);
  assert.equal(state.deployedJobId, JOB, 'the job Flink HA may hold');
  assert.equal(state.lastReconciledSpec?.job?.state, 'suspended');
  assert.equal(state.lastReconciledSpec?.flinkVersion, 'v1_20', 'the spec the cluster ran: the HA resume needs the same Flink version');
  assert.equal(state.upgradeSavepointPath, 's3://other-team/savepoint-9', 'still offered, for when HA does not hold the job');
  assert.match(message, /resumed from Flink HA if HA holds it/);
  // a savepoint-mode job keeps the old behaviour: a new deployment from the restore path
  const savepointMode = rebuildStateFromWorld(
    flinkDeployment('orders').withUid('u1').withSpec(spec).withStatus(deployment.status!).build(),
    { flinkConfigMap: renderedWorld().flinkConfigMap },
    NOW,
  ).state;
  assert.equal(savepointMode.phase, 'STOPPED');
});

test('a suspended cluster whose Flink ConfigMap records its suspend savepoint: that one, not the (hand-edited) status savepoint', () => {
  const suspended = flinkDeployment('orders')
    .withUid('u1')
    .withGeneration(8)
    .withSpec({ ...spec, job: { ...spec.job!, state: 'suspended' } })
    .withStatus(deployment.status!)
    .build();
  const { flinkConfigMap } = renderedWorld();
  flinkConfigMap.metadata!.annotations![LAST_SAVEPOINT_ANNOTATION] = 's3://bucket/savepoints/suspend-1';
  const { state, message } = rebuildStateFromWorld(suspended, { flinkConfigMap }, NOW);
  assert.equal(state.upgradeSavepointPath, 's3://bucket/savepoints/suspend-1');
  assert.match(message, /Flink ConfigMap records/);
});
