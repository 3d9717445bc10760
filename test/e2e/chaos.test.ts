/**
 * The chaos test (chaos.ts) for a handful of seeds: two leader-elect operator processes, a seeded
 * sequence of user actions and faults, then the invariants judged by the simulated Flink's lineage.
 * The seeds together cover both upgrade modes, every action kind and every fault kind:
 *
 *   12  savepoint:  manual-savepoint[pause-leader+stale-state], upgrade[status-edit+flink-outage]
 *   57  last-state: upgrade[delete-state+stale-state], manual-savepoint[pause-leader]
 *   14  savepoint:  manual-savepoint[pause-leader], suspend[kill-leader], resume[delete-state]
 *   78  savepoint:  upgrade[api-faults+delete-state], upgrade[status-edit+rogue-instance]
 *   51  savepoint:  upgrade[rogue-instance], rollback[api-faults]
 *
 * (rogue-instance needs `--no-leader-elect`; without that flag it is skipped.)
 * `npm run test:chaos -- --runs 30 --seed 1` runs many more.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chaosRun, describePlan, formatRun, planChaosRun, runKeptInvariants, startChaosWorld, type ChaosWorld } from './chaos.js';

let world: ChaosWorld;
before(async () => {
  world = await startChaosWorld();
});
after(async () => {
  await world?.stop();
});

const SEEDS = [12, 57, 14, 78, 51];

for (const seed of SEEDS) {
  test(`chaos seed ${seed} (${describePlan(planChaosRun(seed))}) keeps every invariant`, { timeout: 120_000 }, async (t) => {
    const r = await chaosRun(world, seed, 'mixed', { actionTimeoutMs: 10_000, convergeTimeoutMs: 20_000 });
    t.diagnostic(formatRun(r).split('\n').slice(1, 4).join('\n'));
    assert.ok(runKeptInvariants(r), formatRun(r, true));
  });
}
