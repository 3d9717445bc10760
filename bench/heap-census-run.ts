/**
 * Heap snapshots of the operator at growing numbers of STABLE FlinkDeployments, for
 * bench/heap-census.ts (issue 22: what the operator keeps per deployment).
 *
 *   npx tsx bench/heap-census-run.ts [--sizes 200,1000] [--dir /tmp/census] [--reconcile-seconds 30]
 *
 * One set of bench processes (BenchWorld, as the scale bench): warm-up (20 deployments STABLE, then
 * deleted), a snapshot at 0, then for each size the missing deployments created at once, all
 * STABLE, a settle pause and a steady window as long as the reconcile interval (every deployment
 * has one periodic reconcile in it, as in the scale bench's step 5), then a full GC and
 * `<dir>/operator-<size>.heapsnapshot`. Then, e.g.:
 *
 *   NODE_OPTIONS=--max-old-space-size=6000 npx tsx bench/heap-census.ts \
 *     /tmp/census/operator-200.heapsnapshot /tmp/census/operator-1000.heapsnapshot --per 800
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BenchWorld } from './bench-processes.js';
import { DeploymentDriver, WARMUP_NAMES, warmUpOperator } from './deployment-driver.js';
import { sleep } from './statistics.js';

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

function log(message: string): void {
  console.error(`[census ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function main(): Promise<void> {
  const sizes = option('--sizes', '200,1000').split(',').map(Number);
  const dir = resolve(option('--dir', '/tmp/census'));
  const reconcileIntervalMs = Number(option('--reconcile-seconds', '30')) * 1000;
  mkdirSync(dir, { recursive: true });
  const world = await BenchWorld.start({
    seed: 42,
    stateLayout: 'configmap',
    operatorFlags: { progressCheckIntervalMs: 200, reconcileIntervalMs },
  });
  const driver = new DeploymentDriver(world.driverKubeConfig);
  const snapshot = async (label: string): Promise<void> => {
    const metrics = await world.operatorMetrics(true);
    const path = await world.operator.request<string>('heapSnapshot', join(dir, `operator-${label}.heapsnapshot`));
    log(
      `${path}: heap used ${(metrics.heapUsedBytes / 1048576).toFixed(1)} MiB, informer objects ${((await world.informerHeapBytes()) / 1048576).toFixed(1)} MiB`,
    );
  };
  try {
    await warmUpOperator(world.driverKubeConfig, WARMUP_NAMES);
    await driver.start();
    await sleep(2_000);
    await snapshot('0');
    let created = 0;
    for (const size of sizes) {
      const names = Array.from({ length: size - created }, (_, i) => `scale-${String(created + i).padStart(5, '0')}`);
      const all = Array.from({ length: size }, (_, i) => `scale-${String(i).padStart(5, '0')}`);
      const started = performance.now();
      await driver.createAll(names);
      await driver.waitUntil(() => driver.allStable(all), `${size} deployments STABLE`, 60_000 + 300 * size);
      created = size;
      log(`${size} STABLE after ${((performance.now() - started) / 1000).toFixed(1)} s; steady window ${reconcileIntervalMs / 1000} s`);
      await sleep(2_000 + reconcileIntervalMs);
      await snapshot(String(size));
    }
  } finally {
    driver.stop();
    await world.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
