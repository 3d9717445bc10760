/** Test fixtures for operator state: a deployment with a uid, and a state that sets every field. */
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { InternalState } from '../../src/api/internal-state.js';

export function ownedDeployment(name = 'orders', uid = '11111111-2222-3333-4444-555555555555'): FlinkDeploymentV1 {
  return flinkDeployment(name).inNamespace('team-a').withUid(uid).withGeneration(3).build();
}

/** An InternalState with every field set (so a codec test covers every key; a test checks it against the schema). */
export function fullState(deployment: FlinkDeploymentV1 = ownedDeployment()): InternalState {
  const state = {
    formatVersion: 2,
    revision: 7,
    phase: 'DEPLOYED',
    reconciliationTimestamp: '2026-11-30T03:00:00.000Z',
    lastReconciledSpec: structuredClone(deployment.spec),
    lastReconciledGeneration: 3,
    lastStableSpec: { ...structuredClone(deployment.spec), image: 'flink:1.19' },
    lastStableGeneration: 2,
    lastStableFirstDeployment: true,
    firstDeployment: false,
    upgradeSavepointPath: 'file:///flink-data/savepoints/savepoint-aaaa',
    jobIdToSubmit: 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5',
    replaceJobManagerUid: '99999999-8888-7777-6666-555555555555',
    deployedJobId: 'ffffeeeeddddccccbbbbaaaa99998888',
    deployedFrom: 'file:///flink-data/savepoints/savepoint-0',
    pendingSavepoint: {
      kind: 'savepoint',
      triggerType: 'MANUAL',
      formatType: 'CANONICAL',
      jobId: 'ffffeeeeddddccccbbbbaaaa99998888',
      stopJob: false,
      requestedAt: 1764471600000,
      triggerId: 'trigger-1',
      triggerNonce: 4,
      failures: 1,
      targetDirectory: 'file:///flink-data/savepoints',
      snapshotResource: { name: 'orders-before-migration', uid: '12121212-3434-5656-7878-909090909090', backoffLimit: 2 },
      notBefore: 1764471610000,
    },
    pendingCheckpoint: {
      kind: 'checkpoint',
      triggerType: 'PERIODIC',
      checkpointType: 'FULL',
      jobId: 'ffffeeeeddddccccbbbbaaaa99998888',
      stopJob: false,
      requestedAt: 1764471600001,
    },
    savepointHistory: [
      {
        location: 'file:///flink-data/savepoints/savepoint-1',
        timeStamp: 1764400000000,
        triggerType: 'PERIODIC',
        formatType: 'CANONICAL',
        jobId: 'ffffeeeeddddccccbbbbaaaa99998888',
      },
      {
        location: 'file:///flink-data/savepoints/savepoint-2',
        timeStamp: 1764460000000,
        triggerType: 'MANUAL',
        triggerNonce: 3,
        snapshotResource: 'orders-savepoint-manual-1764460000000',
      },
    ],
    snapshotResourceWrites: [
      {
        name: 'orders-savepoint-manual-1764460000000',
        action: 'publish',
        snapshotType: 'SAVEPOINT',
        triggerType: 'MANUAL',
        jobReference: { kind: 'FlinkDeployment', name: 'orders' },
        formatType: 'CANONICAL',
        disposeOnDelete: false,
        status: { state: 'COMPLETED', path: 'file:///flink-data/savepoints/savepoint-2', resultTimestamp: '2025-11-29T23:46:40.000Z', failures: 0 },
      },
      {
        name: 'orders-before-migration',
        uid: '12121212-3434-5656-7878-909090909090',
        action: 'delete',
        snapshotType: 'CHECKPOINT',
        triggerType: 'PERIODIC',
        jobReference: { kind: 'FlinkDeployment', name: 'orders' },
      },
    ],
    takenSnapshots: ['12121212-3434-5656-7878-909090909090'],
    lastCheckpoint: {
      timeStamp: 1764460000000,
      triggerType: 'PERIODIC',
      formatType: 'FULL',
      checkpointId: 17,
      location: 'file:///flink-data/checkpoints/chk-17',
      triggerNonce: 2,
      jobId: 'ffffeeeeddddccccbbbbaaaa99998888',
    },
    lastPeriodicSavepointTimestamp: 1764400000000,
    lastPeriodicCheckpointTimestamp: 1764460000000,
    failedUpgrade: {
      generation: 4,
      reason: 'savepoint of job ffffeeeeddddccccbbbbaaaa99998888 failed: Checkpoint was declined.',
      at: '2026-11-30T03:05:00.000Z',
    },
    // Its spec (recorded with the intent) is left out here: the size tests count on the other keys staying small.
    inPlaceScaling: {
      generation: 5,
      jobId: 'ffffeeeeddddccccbbbbaaaa99998888',
      requirements: { cbc357ccb763df2852fee8c4fc7d55f2: { lowerBound: 1, upperBound: 4 } },
    },
    lastWriter: { holderIdentity: 'operator-0', leaseTransitions: 2 },
  };
  return state as InternalState;
}
