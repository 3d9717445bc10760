/**
 * `npm run test:crash -- [--runs N] [--seed S] [--scenario savepoint-upgrade|manual-savepoint|rollback|non-running-upgrade|jobmanager-recovery|session-job-upgrade|snapshot-resources]`: the crash test of crash-recovery.ts, many times,
 * with a summary of where the kills landed and whether every run kept the invariants.
 */
import { crashRun, runKeptInvariants, startCrashWorld, type CrashRunResult, type CrashScenario } from './crash-recovery.js';
import { closeJarServer, sessionJobCrashRun } from './session-job-crash.js';
import { snapshotCrashRun } from './snapshot-crash.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const runs = option('--runs', 30);
const firstSeed = option('--seed', 1000);
const scenarioIndex = args.indexOf('--scenario');
const scenario = (scenarioIndex >= 0 ? args[scenarioIndex + 1] : 'savepoint-upgrade') as CrashScenario | 'session-job-upgrade' | 'snapshot-resources';

const world = await startCrashWorld();
const results: CrashRunResult[] = [];
let failures = 0;
try {
  for (let i = 0; i < runs; i++) {
    const seed = firstSeed + i;
    try {
      const r =
        scenario === 'session-job-upgrade'
          ? await sessionJobCrashRun(world, seed)
          : scenario === 'snapshot-resources'
            ? await snapshotCrashRun(world, seed)
            : await crashRun(world, seed, scenario);
      results.push(r);
      const ok = runKeptInvariants(r);
      if (!ok) failures++;
      console.log(
        `${ok ? 'ok  ' : 'FAIL'} ${scenario} seed ${seed}: ${r.kills} kill(s) during [${r.killedDuring.join('; ')}], savepoints ${r.savepointsForUpgrade}, submissions ${r.submissions}, restored ${r.restoredFromUpgradeSavepoint}, ${r.durationMs} ms${ok ? '' : `\n     ${(r.violations ?? []).join('\n     ')}\n     ${r.detail}`}`,
      );
    } catch (error) {
      failures++;
      console.log(`FAIL seed ${seed}: ${(error as Error).message}`);
    }
  }
} finally {
  await world.stop();
  await closeJarServer();
}
const phases = new Map<string, number>();
for (const r of results) for (const p of r.killedDuring) phases.set(p, (phases.get(p) ?? 0) + 1);
console.log(`\nkills by persisted step: ${[...phases].map(([p, n]) => `${p}: ${n}`).join(', ')}`);
console.log(`${runs - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
