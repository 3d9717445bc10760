import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isObservationOnly, ObservationHold, type PendingStatusChange } from '../../src/reconciler/observation-hold.js';

const replace = (path: string, value: unknown): PendingStatusChange => ({ op: 'replace', path, value });

test('what is an observation only (held) and what is never held, from a table', () => {
  const rows: Array<[string, PendingStatusChange[], boolean]> = [
    ['TaskManager replicas', [replace('/status/taskManager/replicas', 1)], true],
    [
      'the JobManager gets ready, the job initializes',
      [replace('/status/jobManagerDeploymentStatus', 'READY'), replace('/status/jobStatus/state', 'INITIALIZING')],
      true,
    ],
    [
      'a condition message and reason while its status stays',
      [replace('/status/conditions/1/reason', 'Initializing'), replace('/status/conditions/1/message', 'Job status INITIALIZING')],
      true,
    ],
    ['cluster info', [{ op: 'add', path: '/status/clusterInfo', value: { 'flink-version': '1.20.0' } }], true],
    ['nothing to write', [], false],
    ['the lifecycle', [replace('/status/lifecycleState', 'STABLE')], false],
    ['an error', [{ op: 'add', path: '/status/error', value: 'boom' }], false],
    ['observedGeneration', [replace('/status/observedGeneration', 2)], false],
    ['stateRef', [replace('/status/stateRef/revision', 3)], false],
    ["a condition's status", [replace('/status/conditions/0/status', 'True')], false],
    ['the JobManager in ERROR', [replace('/status/jobManagerDeploymentStatus', 'ERROR')], false],
    ['the JobManager Deployment missing', [replace('/status/jobManagerDeploymentStatus', 'MISSING')], false],
    ['a job FAILED', [replace('/status/jobStatus/state', 'FAILED')], false],
    ['a condition reason that reports a failure', [replace('/status/conditions/1/reason', 'Failing')], false],
    ['an observation next to a lifecycle change', [replace('/status/taskManager/replicas', 2), replace('/status/lifecycleState', 'DEPLOYED')], false],
    ['a removed field', [{ op: 'remove', path: '/status/taskManager/replicas' }], false],
    ['the last savepoint', [{ op: 'add', path: '/status/jobStatus/savepointInfo/lastSavepoint', value: {} }], false],
  ];
  for (const [what, changes, held] of rows) assert.equal(isObservationOnly(changes), held, what);
});

test('an observation is held at most holdMs from the pass that first held it, then written; a transition is never held', () => {
  const hold = new ObservationHold(1_000);
  const replicas = [replace('/status/taskManager/replicas', 1)];
  assert.deepEqual(hold.verdict('uid-1', replicas, false, 10_000), { hold: true, remainingMs: 1_000 });
  assert.deepEqual(hold.verdict('uid-1', replicas, false, 10_400), { hold: true, remainingMs: 600 }, 'timed from the first hold, not extended');
  assert.deepEqual(hold.verdict('uid-1', replicas, true, 10_500), { hold: false }, 'a pass that wrote state writes its status');
  assert.deepEqual(hold.verdict('uid-1', replicas, false, 11_000), { hold: false }, 'the hold ran out');
  hold.release('uid-1');
  assert.equal(hold.size(), 0, 'nothing is kept once the status is written');
  assert.deepEqual(hold.verdict('uid-1', replicas, false, 20_000), { hold: true, remainingMs: 1_000 }, 'a later observation is timed afresh');
  assert.deepEqual(new ObservationHold(0).verdict('uid-2', replicas, false, 0), { hold: false }, 'holdMs 0 never holds');
});
