/**
 * Crash safety of a savepoint upgrade (issue 7): 5 seeded runs in the suite; run
 * `npm run test:crash -- --runs 30` for the long version.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { crashRun, runKeptInvariants, startCrashWorld, type CrashWorld } from './crash-recovery.js';

let world: CrashWorld;
before(async () => {
  world = await startCrashWorld();
});
after(async () => {
  await world?.stop();
});

for (const seed of [11, 23, 37, 41, 59]) {
  test(`operator killed during a savepoint upgrade converges without repeating or losing anything (seed ${seed})`, { timeout: 120_000 }, async () => {
    const r = await crashRun(world, seed);
    assert.equal(r.converged, true, `converged on the new spec (${r.detail})`);
    assert.equal(r.savepointsForUpgrade, 1, `exactly one savepoint for the upgrade; killed during ${r.killedDuring.join(', ')}: ${r.detail}`);
    assert.equal(r.submissions, 2, `one submission before and one after the upgrade: ${r.detail}`);
    assert.deepEqual(r.duplicateJobIds, [], 'no job id submitted twice');
    assert.equal(r.restoredFromUpgradeSavepoint, true, `the new job restored from the upgrade savepoint: ${r.detail}`);
    assert.ok(runKeptInvariants(r));
  });
}
