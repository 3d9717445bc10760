/**
 * Which savepoint a state calls newest. The Apache operator leaves `jobStatus.upgradeSavepointPath`
 * set after the deployment it was used for, so a migrated RUNNING state carries a path that is not
 * a pending restore: a later savepoint in the history must win over it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyInternalState, type InternalState } from '../../src/api/internal-state.js';
import { newestSavepointOf, restorePathOfDeployment } from '../../src/reconciler/deployment-specs.js';

const OLD = 's3://b/savepoints/savepoint-old';
const NEWER = 's3://b/savepoints/savepoint-newer';

function state(phase: InternalState['phase'], upgradeSavepointPath?: string): InternalState {
  return {
    ...emptyInternalState(),
    phase,
    ...(upgradeSavepointPath ? { upgradeSavepointPath } : {}),
    savepointHistory: [{ location: NEWER, timeStamp: 2, triggerType: 'PERIODIC' }],
  };
}

test('on a deployed cluster a leftover upgradeSavepointPath (migrated from Apache) is not the newest savepoint; the history is', () => {
  assert.equal(newestSavepointOf(state('RUNNING', OLD)), NEWER);
  assert.equal(newestSavepointOf(state('DEPLOYED', OLD)), NEWER);
  assert.equal(restorePathOfDeployment(state('RUNNING', OLD)), OLD, 'it is what that deployment restored from');
});

test('while a restore is pending (stopped, suspended) upgradeSavepointPath is the newest savepoint', () => {
  assert.equal(newestSavepointOf(state('STOPPED', OLD)), OLD);
  assert.equal(newestSavepointOf(state('SUSPENDED', OLD)), OLD);
  assert.equal(restorePathOfDeployment(state('STOPPED', OLD)), undefined);
});
