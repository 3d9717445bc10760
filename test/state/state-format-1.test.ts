/**
 * Format 2 reads format 1 (the layout before the named phase): the Apache reconciliation state it
 * kept is turned into the phase by what the state holds (src/api/deployment-phase.ts), and the
 * next write is format 2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { DEPLOYMENT_PHASES, phaseFromReconciliationState, reconciliationStateOfPhase, type DeploymentPhase } from '../../src/api/deployment-phase.js';
import { INTERNAL_STATE_FORMAT_VERSION } from '../../src/api/internal-state.js';
import { decodeStateConfigMap, encodeStateConfigMap } from '../../src/state/state-configmap-codec.js';
import { fullState, ownedDeployment } from './state-fixtures.js';

const deployment = ownedDeployment();

/** A format-1 ConfigMap: today's encoding with `phase` swapped for `reconciliationState`. */
function format1(reconciliationState: string, edit: (data: Record<string, string>) => void = () => {}): V1ConfigMap {
  const state = {
    ...fullState(deployment),
    pendingSavepoint: undefined,
    pendingCheckpoint: undefined,
    jobIdToSubmit: undefined,
    replaceJobManagerUid: undefined,
    upgradeSavepointPath: undefined,
  };
  const cm = encodeStateConfigMap(state, { deployment }).configMap;
  const data = { ...cm.data! };
  delete data.phase;
  delete data.pendingOperation;
  data.formatVersion = '1';
  data.reconciliationState = reconciliationState;
  edit(data);
  return { ...cm, data };
}

test('a format-1 state is read with the phase its reconciliation state and fields tell', () => {
  const cases: Array<[string, (data: Record<string, string>) => void, DeploymentPhase]> = [
    ['DEPLOYED', () => {}, 'DEPLOYED'],
    ['DEPLOYED', (d) => (d.lastStableSpec = d.lastReconciledSpec!), 'RUNNING'],
    ['DEPLOYED', (d) => (d.lastReconciledSpec = d.lastReconciledSpec.replace(/state: running/, 'state: suspended')), 'SUSPENDED'],
    ['UPGRADING', (d) => (d.pendingOperation = 'jobIdToSubmit: a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5\n'), 'DEPLOYING'],
    [
      'UPGRADING',
      (d) => (d.pendingOperation = 'pendingSavepoint:\n  kind: savepoint\n  triggerType: UPGRADE\n  jobId: j\n  stopJob: true\n  requestedAt: 1\n'),
      'STOPPING',
    ],
    ['UPGRADING', (d) => (d.lastReconciledSpec = d.lastReconciledSpec.replace(/state: running/, 'state: suspended')), 'SUSPENDING'],
    ['UPGRADING', () => {}, 'STOPPED'],
    [
      'UPGRADING',
      (d) => {
        delete d.lastReconciledSpec;
        delete d.deployedJobId;
      },
      'NEW',
    ],
    ['ROLLING_BACK', (d) => (d.pendingOperation = 'jobIdToSubmit: a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5\n'), 'ROLLING_BACK'],
    ['ROLLED_BACK', () => {}, 'ROLLED_BACK'],
  ];
  for (const [reconciliationState, edit, phase] of cases) {
    const state = decodeStateConfigMap(format1(reconciliationState, edit));
    assert.equal(state.phase, phase, `${reconciliationState} with ${edit.toString()}`);
    assert.equal(state.formatVersion, INTERNAL_STATE_FORMAT_VERSION, 'read as the current format (the next write is format 2)');
  }
});

test('a format-1 reconciliation state that is not one of the four is a corrupt state naming the key', () => {
  assert.throws(
    () => decodeStateConfigMap(format1('SOMETHING')),
    /reconciliationState.*"SOMETHING" is not one of DEPLOYED, UPGRADING, ROLLING_BACK, ROLLED_BACK/,
  );
});

test('every phase maps to an Apache reconciliation state and back (migrate to v1beta1 and back keeps the phase)', () => {
  const spec = deployment.spec;
  const suspended = { ...spec, job: { ...spec.job!, state: 'suspended' as const } };
  const evidence: Record<DeploymentPhase, Parameters<typeof phaseFromReconciliationState>[1]> = {
    NEW: { reconciledIsStable: false },
    DEPLOYING: { lastReconciledSpec: spec, jobIdToSubmit: 'j', reconciledIsStable: false },
    DEPLOYED: { lastReconciledSpec: spec, deployedJobId: 'j', reconciledIsStable: false },
    RUNNING: { lastReconciledSpec: spec, lastStableSpec: spec, deployedJobId: 'j', reconciledIsStable: true },
    STOPPING: { lastReconciledSpec: spec, deployedJobId: 'j', pendingSavepoint: { stopJob: true }, reconciledIsStable: true },
    STOPPED: { lastReconciledSpec: spec, deployedJobId: 'j', reconciledIsStable: true },
    SUSPENDING: { lastReconciledSpec: suspended, deployedJobId: 'j', reconciledIsStable: false },
    SUSPENDED: { lastReconciledSpec: suspended, deployedJobId: 'j', reconciledIsStable: false },
    FINISHED: { lastReconciledSpec: spec, deployedJobId: 'j', reconciledIsStable: true, finishedAndShutDown: true },
    ROLLING_BACK: { lastReconciledSpec: spec, jobIdToSubmit: 'j', reconciledIsStable: false },
    ROLLED_BACK: { lastReconciledSpec: spec, deployedJobId: 'j', reconciledIsStable: false },
  };
  for (const phase of DEPLOYMENT_PHASES) assert.equal(phaseFromReconciliationState(reconciliationStateOfPhase(phase), evidence[phase]), phase, phase);
});
