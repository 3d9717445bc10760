/**
 * `npm run test:chaos -- [--runs N] [--seed S | --seeds A,B,C] [--scenario X] [--verbose] [--logs]`:
 * the chaos test of chaos.ts, N runs with seeds S, S+1, … (default: 10 runs from seed 1000), one
 * line per run (and the details of a failed one), then a summary of the scenario mix and of the
 * invariant violations. Exit status 1 when any run violated an invariant (or the harness failed).
 *
 * Scenarios: mixed (default), no-faults (the control: same actions, nothing injected), savepoint,
 * last-state (the upgrade mode), a fault kind (only that fault: kill-leader, pause-leader,
 * rogue-instance, delete-state, stale-state, status-edit, flink-outage, api-faults) or an action
 * kind (upgrade, manual-savepoint, suspend, resume, rollback). `--verbose` prints faults and actions
 * as they happen; `--logs` adds the operators' output to a failed run.
 */
import { chaosRun, FAULT_KINDS, formatRun, INVARIANTS, parseScenario, runKeptInvariants, startChaosWorld, type ChaosRunResult } from './chaos.js';
import { killAllOperatorProcesses } from './crash-recovery.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(value)) throw new Error(`${name} needs an integer`);
  return value;
};
const firstSeed = option('--seed', 1000);
const seedsIndex = args.indexOf('--seeds');
const listed = seedsIndex >= 0 ? (args[seedsIndex + 1] ?? '').split(',').map(Number) : undefined;
if (listed?.some((n) => !Number.isInteger(n))) throw new Error('--seeds needs a comma-separated list of integers');
const runs = listed?.length ?? option('--runs', 10);
const seedAt = (i: number) => listed?.[i] ?? firstSeed + i;
const scenarioIndex = args.indexOf('--scenario');
const scenario = parseScenario(scenarioIndex >= 0 ? (args[scenarioIndex + 1] ?? '') : 'mixed');
const verbose = args.includes('--verbose');
const logs = args.includes('--logs');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllOperatorProcesses();
    process.exit(130);
  });
}

const world = await startChaosWorld();
if (!world.noLeaderElectFlag) console.log('note: `flink-operator run` has no --no-leader-elect flag: the rogue-instance fault is skipped');
const results: ChaosRunResult[] = [];
const started = Date.now();
try {
  for (let i = 0; i < runs; i++) {
    const seed = seedAt(i);
    const r = await chaosRun(world, seed, scenario, verbose ? { log: (line) => console.log(`     ${line}`) } : {});
    results.push(r);
    const ok = runKeptInvariants(r);
    const kinds = [...new Set(r.violations.map((v) => v.invariant.split(' ')[0]))].join(',');
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} seed ${seed} ${r.plan} | faults ${r.faults.length} | ${r.durationMs} ms${ok ? '' : ` | ${r.error ? 'harness error' : `invariants ${kinds}`}`}`,
    );
    if (!ok)
      console.log(
        formatRun(r, logs)
          .split('\n')
          .slice(1)
          .map((l) => `   ${l}`)
          .join('\n'),
      );
  }
} finally {
  await world.stop();
}

// ------------------------------------------------------------------------------ summary

const pad = (s: string | number, n: number) => String(s).padEnd(n);
const padL = (s: string | number, n: number) => String(s).padStart(n);
const failed = results.filter((r) => !runKeptInvariants(r));
console.log(
  `\n${results.length} runs in ${((Date.now() - started) / 1000).toFixed(0)} s, seeds ${listed ? listed.join(',') : `${firstSeed}..${firstSeed + runs - 1}`}, scenario ${scenario}`,
);

console.log('\nscenario mix');
const modes = new Map<string, number>();
for (const r of results) modes.set(r.mode, (modes.get(r.mode) ?? 0) + 1);
console.log(`  upgrade mode   ${[...modes].map(([m, n]) => `${m} ${n}`).join(', ')}`);
const actionCounts = new Map<string, { n: number; done: number }>();
for (const r of results)
  for (const a of r.actions) {
    const c = actionCounts.get(a.kind) ?? { n: 0, done: 0 };
    c.n++;
    if (a.converged) c.done++;
    actionCounts.set(a.kind, c);
  }
console.log(`  actions        ${[...actionCounts].map(([k, c]) => `${k} ${c.n} (${c.done} done)`).join(', ')}`);

console.log(`\n  ${pad('fault', 16)}${padL('injected', 9)}${padL('skipped', 9)}${padL('runs', 6)}${padL('failed runs', 13)}`);
for (const kind of FAULT_KINDS) {
  const injected = results.reduce((n, r) => n + r.faults.filter((f) => f.kind === kind && !f.skipped).length, 0);
  const skipped = results.reduce((n, r) => n + r.faults.filter((f) => f.kind === kind && f.skipped).length, 0);
  const withIt = results.filter((r) => r.faults.some((f) => f.kind === kind && !f.skipped));
  const failedWithIt = withIt.filter((r) => !runKeptInvariants(r)).length;
  console.log(`  ${pad(kind, 16)}${padL(injected, 9)}${padL(skipped, 9)}${padL(withIt.length, 6)}${padL(failedWithIt, 13)}`);
}
if (!world.noLeaderElectFlag) console.log('  (rogue-instance skipped: no --no-leader-elect flag in `flink-operator run --help`)');

console.log(`\n  ${pad('invariant', 40)}${padL('violations', 11)}${padL('runs', 6)}  seeds`);
for (const inv of INVARIANTS) {
  const runsWith = results.filter((r) => r.violations.some((v) => v.invariant === inv));
  const count = results.reduce((n, r) => n + r.violations.filter((v) => v.invariant === inv).length, 0);
  console.log(`  ${pad(inv, 40)}${padL(count, 11)}${padL(runsWith.length, 6)}  ${runsWith.map((r) => r.seed).join(' ')}`);
}
const remedied = results.filter((r) => r.userRemedies.length > 0);
if (remedied.length > 0)
  console.log(
    `  (the harness, as a user, deleted a refused state ConfigMap as status.error advises in ${remedied.length} run(s): seeds ${remedied.map((r) => r.seed).join(' ')})`,
  );
const harness = results.filter((r) => r.error !== undefined);
console.log(`  ${pad('harness errors', 40)}${padL(harness.length, 11)}${padL(harness.length, 6)}  ${harness.map((r) => r.seed).join(' ')}`);

console.log(`\n${results.length - failed.length} passed, ${failed.length} failed`);
process.exit(failed.length === 0 ? 0 : 1);
