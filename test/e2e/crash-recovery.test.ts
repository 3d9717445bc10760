/**
 * Crash safety (issues 7, 8 and 15): the operator SIGKILLed during a savepoint upgrade (2 seeds), a
 * manual savepoint and a rollback (1 seed each), the fix of an upgrade whose JobManager never started
 * and the recovery of a deleted JobManager Deployment (1 seed each), and the savepoint upgrade of a
 * FlinkSessionJob (issue 18, 1 seed), and FlinkStateSnapshot resource writes (issue 19, 1 seed, last:
 * their run installs the FlinkStateSnapshot CRD); `npm run test:crash -- --runs 30 [--scenario ...]` for more.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { crashRun, runKeptInvariants, startCrashWorld, type CrashScenario, type CrashWorld } from './crash-recovery.js';
import { closeJarServer, sessionJobCrashRun } from './session-job-crash.js';
import { snapshotCrashRun } from './snapshot-crash.js';

let world: CrashWorld;
before(async () => {
  world = await startCrashWorld();
});
after(async () => {
  await world?.stop();
  await closeJarServer();
});

const runs: Array<[CrashScenario | 'session-job-upgrade', number]> = [
  ['savepoint-upgrade', 11],
  ['savepoint-upgrade', 41],
  ['manual-savepoint', 7],
  ['rollback', 5],
  ['non-running-upgrade', 3],
  ['jobmanager-recovery', 9],
  ['session-job-upgrade', 13],
];

for (const [scenario, seed] of runs) {
  test(`operator killed during a ${scenario} converges without repeating or losing anything (seed ${seed})`, { timeout: 120_000 }, async () => {
    const r = scenario === 'session-job-upgrade' ? await sessionJobCrashRun(world, seed) : await crashRun(world, seed, scenario);
    const context = `killed during ${r.killedDuring.join(', ')}: ${r.detail}`;
    assert.equal(r.savepointsForUpgrade, r.expectedSavepoints, `exactly ${r.expectedSavepoints} savepoint(s) for the change; ${context}`);
    assert.deepEqual(r.duplicateJobIds, [], 'no job id submitted twice');
    assert.equal(r.restoredFromUpgradeSavepoint, true, `the job (re)started from / reports that savepoint; ${context}`);
    assert.equal(r.converged, true, `converged with the expected submissions (${r.submissions}); ${context}`);
    assert.ok(runKeptInvariants(r));
  });
}

// Last: the first of these installs the FlinkStateSnapshot CRD, which the runs above go without.
for (const seed of [7100]) {
  test(`operator killed around a FlinkStateSnapshot resource write loses and duplicates no snapshot (seed ${seed})`, { timeout: 120_000 }, async () => {
    const r = await snapshotCrashRun(world, seed);
    assert.deepEqual(r.violations, [], `killed during ${r.killedDuring.join(', ')}: ${r.detail}`);
    assert.deepEqual(r.duplicateJobIds, [], 'no job id submitted twice');
    assert.ok(runKeptInvariants(r));
  });
}
