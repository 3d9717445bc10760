/**
 * `npm run bench [-- options]`: the operator's benchmarks on the development cluster with simulated
 * Flink (issue 10). Every run starts its own cluster process and operator process.
 *
 *   --quick              smoke run (< 1 min): 1 run, API cost with short windows, scale at 30 only;
 *                        prints the results, writes no file unless --out is given
 *   --runs N             runs per measurement, the report shows medians (default 3)
 *   --sizes a,b,c        FlinkDeployments created at once (default 200,1000,2000,5000,10000)
 *   --churn-seconds S    duration of the spec-change phase (default 60)
 *   --churn-percent P    spec changes per second in % of the deployments (default 1 up to 2,000
 *                        deployments, 0.2 above: issue 22's rate at 10,000)
 *   --seed N             fixed seed of the simulation and of the churn's choices (default 42)
 *   --parallelism N      the operator's parallelism knob in the scale runs (default: the operator's default)
 *   --skip-api-cost, --skip-scale
 *   --shards [N]         also the shard benchmark (shard-bench.ts): two operators on disjoint halves of
 *                        N deployments (default 4000; 200 with --quick), then one operator on the same N;
 *                        after the rest, or alone with --skip-api-cost --skip-scale
 *   --simulation-in-process  run the simulated kubelet, controllers and Flink inside the API server's
 *                        process (the layout before the split; for before/after comparisons)
 *   --out FILE           Markdown file whose results block is replaced (default design/performance.md)
 *   --json FILE          also write every run's raw figures as JSON
 *
 * Profiling: BENCH_CPU_PROF=cluster|operator|both (see bench-processes.ts), then
 * `tsx bench/cpu-profile-summary.ts FILE`.
 */
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { runApiCost, type ApiCostRun } from './api-cost-bench.js';
import { currentLoadAverage, machineDescription, renderResults, writeResults, type BenchResults, type BenchSettings } from './performance-report.js';
import { defaultChurnPercent, runScale, type ScaleRun } from './scale-bench.js';
import { runShards } from './shard-bench.js';
import { resolveOperatorConfig } from '../src/runtime/operator-config.js';

const OPERATOR_DEFAULT_PARALLELISM = resolveOperatorConfig({ env: {} }).parallelism;

interface CliOptions {
  quick?: boolean;
  runs?: string;
  sizes?: string;
  churnSeconds?: string;
  churnPercent?: string;
  seed?: string;
  parallelism?: string;
  skipApiCost?: boolean;
  skipScale?: boolean;
  /** true (the flag alone) or N */
  shards?: boolean | string;
  simulationInProcess?: boolean;
  out?: string;
  json?: string;
}

function log(message: string): void {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function main(): Promise<void> {
  const cli = new Command('bench')
    .option('--quick')
    .option('--runs <n>')
    .option('--sizes <list>')
    .option('--churn-seconds <s>')
    .option('--churn-percent <p>')
    .option('--seed <n>')
    .option('--parallelism <n>')
    .option('--skip-api-cost')
    .option('--skip-scale')
    .option('--shards [n]')
    .option('--simulation-in-process')
    .option('--out <file>')
    .option('--json <file>')
    .parse(process.argv);
  const o = cli.opts<CliOptions>();
  const quick = o.quick ?? false;
  const settings: BenchSettings = {
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    runs: Number(o.runs ?? (quick ? 1 : 3)),
    seed: Number(o.seed ?? 42),
    sizes: (o.sizes ?? (quick ? '30' : '200,1000,2000,5000,10000')).split(',').map(Number),
    churnMs: Number(o.churnSeconds ?? (quick ? 3 : 60)) * 1000,
    scaleReconcileIntervalMs: quick ? 2_000 : 30_000,
    progressCheckIntervalMs: 200,
    parallelism: Number(o.parallelism ?? OPERATOR_DEFAULT_PARALLELISM),
    apiCostReconcileIntervalMs: 1_000,
    simulationPlacement: o.simulationInProcess ? 'in-process' : 'separate',
  };
  const started = Date.now();
  const results: BenchResults = {
    settings,
    startedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    durationMs: 0,
    machine: machineDescription(),
    loadAverageAtStart: currentLoadAverage(),
    apiCost: { configmap: [], legacy: [] },
    scale: {},
  };
  log(`machine: ${results.machine}; load average ${results.loadAverageAtStart.join(' / ')}`);

  if (!o.skipApiCost) {
    const costOptions = {
      seed: settings.seed,
      periodicDeployments: quick ? 3 : 10,
      periodicWindowMs: quick ? 1_500 : 5_000,
      reconcileIntervalMs: settings.apiCostReconcileIntervalMs,
      settleMs: 300,
    };
    // warm-up (discarded): the first processes of a run pay for module loading and JIT
    if (!quick) await runApiCost('configmap', costOptions);
    for (let run = 1; run <= settings.runs; run++) {
      log(`API cost run ${run}/${settings.runs}: ConfigMap layout`);
      const cm: ApiCostRun = await runApiCost('configmap', costOptions);
      results.apiCost.configmap.push(cm);
      log(`API cost run ${run}/${settings.runs}: legacy status layout`);
      results.apiCost.legacy.push(await runApiCost('legacy-status', costOptions, cm));
      log(`API cost run ${run}/${settings.runs}: ConfigMap layout, FlinkStateSnapshot CRD installed`);
      results.apiCost.snapshotResources = [
        ...(results.apiCost.snapshotResources ?? []),
        await runApiCost('configmap', { ...costOptions, snapshotResources: true }),
      ];
    }
  }

  if (!o.skipScale) {
    for (const size of settings.sizes) {
      const runs: ScaleRun[] = [];
      for (let run = 1; run <= settings.runs; run++) {
        log(`scale run ${run}/${settings.runs}: ${size} deployments`);
        const r = await runScale({
          seed: settings.seed + run,
          deployments: size,
          churnMs: settings.churnMs,
          churnPercentPerSecond: o.churnPercent !== undefined ? Number(o.churnPercent) : defaultChurnPercent(size),
          reconcileIntervalMs: settings.scaleReconcileIntervalMs,
          progressCheckIntervalMs: settings.progressCheckIntervalMs,
          parallelism: settings.parallelism,
          settleMs: quick ? 300 : 2_000,
          rawWriteMs: quick ? 700 : 3_000,
          simulationPlacement: settings.simulationPlacement,
        });
        log(
          `  STABLE after ${(r.timeToStableMs / 1000).toFixed(1)} s; churn p99 ${r.churn.p99Ms.toFixed(0)} ms; ${(r.memory.heapPerDeploymentBytes / 1024).toFixed(1)} KiB heap/deployment`,
        );
        runs.push(r);
      }
      results.scale[size] = runs;
    }
  }

  if (o.shards) {
    const size = o.shards === true ? (quick ? 200 : 4000) : Number(o.shards);
    results.shards = [];
    for (let run = 1; run <= settings.runs; run++) {
      log(`shard run ${run}/${settings.runs}: ${size} deployments, two shards, then one operator`);
      const r = await runShards({
        seed: settings.seed + run,
        deployments: size,
        reconcileIntervalMs: quick ? 2_000 : 10_000,
        progressCheckIntervalMs: settings.progressCheckIntervalMs,
        parallelism: settings.parallelism,
        settleMs: quick ? 300 : 2_000,
        warmupPerShard: quick ? 2 : 5,
        simulationPlacement: settings.simulationPlacement,
      });
      log(
        `  STABLE after ${(r.sharded.timeToStableMs / 1000).toFixed(1)} s (single ${(r.single.timeToStableMs / 1000).toFixed(1)} s); ` +
          `requests/deployment ${r.sharded.burst.allRequestsPerDeployment.toFixed(2)} (single ${r.single.burst.allRequestsPerDeployment.toFixed(2)}); cross-shard ${r.isolation.crossShardRequests}`,
      );
      results.shards.push(r);
    }
  }

  results.durationMs = Date.now() - started;
  if (o.json) writeFileSync(o.json, JSON.stringify(results, null, 2));
  const block = renderResults(results);
  const out = o.out ?? (quick ? undefined : 'design/performance.md');
  if (out) {
    writeResults(out, block);
    log(`results written to ${out}`);
  }
  console.log(block);
  log(`done in ${(results.durationMs / 1000).toFixed(0)} s`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
