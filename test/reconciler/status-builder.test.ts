/**
 * jobStatus.lastCheckpoint in the v1 status of both kinds: derived from the state's lastCheckpoint
 * (written when a checkpoint the operator took completes, checkpoint-steps.ts), in the fields of
 * Apache's status Checkpoint (flink-kubernetes-operator-api api/status/Checkpoint.java: timeStamp,
 * triggerType, formatType, triggerNonce), never read back from a previous status.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobStatusV1beta1Schema, JobStatusV1Schema } from '../../src/api/flink-deployment-status.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { FlinkSessionJobV1 } from '../../src/api/flink-session-job.js';
import { emptyInternalState, type CheckpointRecord, type InternalState, type SessionJobInternalState } from '../../src/api/internal-state.js';
import { validateSessionJobStatusSchema, validateStatusSchema } from '../../src/api/schema-validator.js';
import { buildSessionJobStatus } from '../../src/reconciler/session-job-status.js';
import { buildStatus, lastCheckpointOf } from '../../src/reconciler/status-builder.js';

const JOB_ID = 'e0896d685ba400cb33d4ce9cdf9e0d57';
const NOW = new Date('2026-07-14T08:00:00Z');

const MANUAL: CheckpointRecord = {
  timeStamp: 1784032982517,
  triggerType: 'MANUAL',
  checkpointId: 42,
  triggerNonce: 3,
  jobId: JOB_ID,
  location: 's3://flink/checkpoints/e0896d/chk-42',
};
const PERIODIC: CheckpointRecord = { timeStamp: 1784032990000, triggerType: 'PERIODIC', checkpointId: 43, jobId: JOB_ID };

function deploymentState(lastCheckpoint?: CheckpointRecord): InternalState {
  return { ...emptyInternalState(), revision: 4, phase: 'RUNNING', deployedJobId: JOB_ID, ...(lastCheckpoint ? { lastCheckpoint } : {}) };
}

function sessionJobState(lastCheckpoint?: CheckpointRecord): SessionJobInternalState {
  return { ...emptyInternalState(), revision: 4, phase: 'RUNNING', deployedJobId: JOB_ID, ...(lastCheckpoint ? { lastCheckpoint } : {}) };
}

function deployment(status?: FlinkDeploymentV1['status']): FlinkDeploymentV1 {
  return {
    apiVersion: 'flink.apache.org/v1',
    kind: 'FlinkDeployment',
    metadata: { name: 'orders', namespace: 'default' },
    spec: { flinkVersion: 'v1_20', job: { jarURI: 'local:///opt/flink/usrlib/orders.jar', upgradeMode: 'savepoint' } },
    ...(status ? { status } : {}),
  };
}

function sessionJob(status?: FlinkSessionJobV1['status']): FlinkSessionJobV1 {
  return {
    apiVersion: 'flink.apache.org/v1',
    kind: 'FlinkSessionJob',
    metadata: { name: 'clickstream', namespace: 'default' },
    spec: { deploymentName: 'session-cluster', job: { jarURI: 'https://repo.example.com/clickstream.jar', upgradeMode: 'savepoint' } },
    ...(status ? { status } : {}),
  };
}

const running = { jobId: JOB_ID, state: 'RUNNING' as const, name: 'orders', startTime: 1784030000000, updateTime: 1784030001000 };

function deploymentStatus(state: InternalState, previous?: FlinkDeploymentV1['status']) {
  return buildStatus(deployment(previous), state, { observed: { jobManager: 'READY', job: running, savepointsAwaitingDisposal: 0 } }, NOW);
}

function sessionJobStatus(state: SessionJobInternalState, previous?: FlinkSessionJobV1['status']) {
  return buildSessionJobStatus(sessionJob(previous), state, { observed: { cluster: { kind: 'ready', highAvailability: false }, jobs: [running] } }, NOW);
}

test('lastCheckpointOf shows what Apache status Checkpoint shows; checkpoint id, job id and location stay in the state', () => {
  assert.deepEqual(lastCheckpointOf(MANUAL), { timeStamp: 1784032982517, triggerType: 'MANUAL', triggerNonce: 3 });
  assert.deepEqual(lastCheckpointOf(PERIODIC), { timeStamp: 1784032990000, triggerType: 'PERIODIC' }, 'no nonce for a periodic checkpoint');
});

test('FlinkDeployment: jobStatus.lastCheckpoint is the state lastCheckpoint, and valid in both status layouts', () => {
  const status = deploymentStatus(deploymentState(MANUAL));
  assert.deepEqual(status.jobStatus?.lastCheckpoint, { timeStamp: 1784032982517, triggerType: 'MANUAL', triggerNonce: 3 });
  assert.deepEqual(validateStatusSchema(status, 'v1'), []);
  assert.deepEqual(validateStatusSchema(status, 'v1beta1'), [], 'v1beta1 is the storage version: every v1 write goes through it');
});

test('FlinkSessionJob: jobStatus.lastCheckpoint by the same mapping, valid in both status layouts', () => {
  const status = sessionJobStatus(sessionJobState(PERIODIC));
  assert.deepEqual(status.jobStatus?.lastCheckpoint, { timeStamp: 1784032990000, triggerType: 'PERIODIC' });
  assert.deepEqual(validateSessionJobStatusSchema(status, 'v1'), []);
  assert.deepEqual(validateSessionJobStatusSchema(status, 'v1beta1'), []);
});

test('both kinds: no lastCheckpoint in the state, none in the status, whatever the previous status showed (derived, never read back)', () => {
  const stale = { timeStamp: 1, triggerType: 'MANUAL' as const, triggerNonce: 99 };
  const dep = deploymentStatus(deploymentState(), { jobStatus: { jobId: JOB_ID, state: 'RUNNING', lastCheckpoint: stale } });
  assert.equal(dep.jobStatus?.lastCheckpoint, undefined);
  const sj = sessionJobStatus(sessionJobState(), { jobStatus: { jobId: JOB_ID, state: 'RUNNING', lastCheckpoint: stale } });
  assert.equal(sj.jobStatus?.lastCheckpoint, undefined);
  const newer = deploymentStatus(deploymentState(PERIODIC), { jobStatus: { jobId: JOB_ID, state: 'RUNNING', lastCheckpoint: stale } });
  assert.deepEqual(newer.jobStatus?.lastCheckpoint, lastCheckpointOf(PERIODIC), 'a newer checkpoint replaces what the status showed');
});

test('the storage (v1beta1) jobStatus declares lastCheckpoint exactly as v1 does, so a v1 status write is not pruned', () => {
  assert.deepEqual(JobStatusV1beta1Schema.properties.lastCheckpoint, JobStatusV1Schema.properties.lastCheckpoint);
});
