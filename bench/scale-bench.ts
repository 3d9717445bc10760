/**
 * Scale (issue 10, parts 2 and 3), one run for one size N, in a fresh pair of processes:
 *
 * 1. raw write throughput of the cluster process (raw-write-throughput.ts), which also warms it up;
 * 2. warm-up of the operator: 20 FlinkDeployments in namespace `warmup`, STABLE, then deleted;
 * 3. baseline: full GC, the operator's heap/RSS from /metrics, the informer objects' heap;
 * 4. N FlinkDeployments created at once (32 requests in flight): time until all are STABLE; the
 *    operator's writes and state transitions in that burst (its sustained transitions/s);
 * 5. settle, then a steady window as long as the reconcile interval (so every deployment has one
 *    periodic reconcile in it): the operator's CPU; then full GC: heap/RSS per deployment;
 * 6. churn: every second `churnPercentPerSecond` % of the deployments change spec (a savepoint upgrade) for `churnMs`;
 *    latency from the spec write to status.observedGeneration (p50, p99).
 *
 * CPU and event-loop utilization of every process (operator, API server, simulation) are sampled
 * per phase, and the simulation's share of the API server's requests, to show which process is the
 * bottleneck. By default the simulation runs in its own process (`simulationPlacement`); with
 * 'in-process' it shares the API server's process and its CPU is part of the cluster process's.
 */
import { BenchWorld, type OperatorMetricsSample, type SimulationPlacement } from './bench-processes.js';
import { DeploymentDriver, WARMUP_NAMES, warmUpOperator } from './deployment-driver.js';
import { measureRawWriteThroughput, type RawWriteThroughput } from './raw-write-throughput.js';
import { operatorCost, sumRows, type TallyRow, WRITE_VERBS } from './request-tally.js';
import { percentile, seededRandom, sleep } from './statistics.js';

export interface ScaleOptions {
  seed: number;
  deployments: number;
  churnMs: number;
  /** spec changes per second in the churn phase, in % of the deployments (issue 22: 0.2 at 10,000) */
  churnPercentPerSecond: number;
  /** the operator's reconcile interval; the steady window is as long */
  reconcileIntervalMs: number;
  progressCheckIntervalMs: number;
  parallelism: number;
  settleMs: number;
  rawWriteMs: number;
  /** where the simulated kubelet, controllers and Flink run (default 'separate') */
  simulationPlacement?: SimulationPlacement;
}

/** The churn rate when none is given: 1 %/s up to 2,000 deployments (issue 10's target), 0.2 %/s above (issue 22's, at 10,000). */
export function defaultChurnPercent(deployments: number): number {
  return deployments <= 2_000 ? 1 : 0.2;
}

export interface PhaseLoad {
  /** CPU seconds per wall second of each process in the phase (1 = one core) */
  operatorCpuFraction: number;
  clusterCpuFraction: number;
  /** the simulation process; NaN when the simulation runs inside the cluster process */
  simulationCpuFraction: number;
  operatorEventLoopUtilization: number;
  clusterEventLoopUtilization: number;
  simulationEventLoopUtilization: number;
  /** the simulation's share of all requests the API server answered in the phase */
  simulationRequestShare: number;
  /** the operator's share */
  operatorRequestShare: number;
}

export interface ScaleRun {
  deployments: number;
  raw: RawWriteThroughput;
  /** until all were STABLE, or until the timeout when `stableInTime` is false */
  timeToStableMs: number;
  stableInTime: boolean;
  /** deployments STABLE at the end of the burst window */
  stableCount: number;
  burst: {
    transitions: number;
    operatorWrites: number;
    writesPerTransition: number;
    transitionsPerSecond: number;
    /** transitions/s ÷ (raw writes/s ÷ writes per transition) */
    fractionOfLimit: number;
    reconcileErrors: number;
    /** API requests per deployment in the burst, by actor */
    operatorRequestsPerDeployment: number;
    simulationRequestsPerDeployment: number;
    /** the simulation's requests per deployment by `verb resource/subresource` */
    simulationByRequest: Record<string, number>;
    /** API server requests per transition (watches excluded; Flink REST calls through the proxy included): every actor (operator, simulation, the bench's own creates and watches' lists) / the operator's */
    requestsPerTransition: number;
    operatorRequestsPerTransition: number;
    /**
     * The bound the request mix puts on `fractionOfLimit` if every request cost the API server what
     * a raw write costs: writes per transition ÷ requests per transition (all actors; the operator's alone).
     */
    fractionCeiling: number;
    operatorFractionCeiling: number;
    /** the operator's Kubernetes API requests per transition (watches and Flink REST calls through the service proxy excluded) */
    operatorKubeRequestsPerTransition: number;
    /** the operator's Flink REST calls per transition (through the service proxy; in `direct` mode they do not reach the API server) */
    operatorFlinkCallsPerTransition: number;
    /**
     * transitions/s ÷ (raw writes/s ÷ the operator's own requests per transition): against the
     * operator's own share of the API server (issue 22). `…Kube`: its Kubernetes API requests only;
     * `…WithFlink`: its Flink REST calls through the proxy counted as requests too.
     */
    fractionOfOwnShareKube: number;
    fractionOfOwnShareWithFlink: number;
    /** operator CPU milliseconds per transition in the burst */
    operatorCpuMsPerTransition: number;
    load: PhaseLoad;
  };
  memory: {
    heapBaselineBytes: number;
    heapSettledBytes: number;
    informerHeapBaselineBytes: number;
    informerHeapSettledBytes: number;
    /** (heap growth − informer objects' growth) / N */
    heapPerDeploymentBytes: number;
    informerHeapPerDeploymentBytes: number;
    rssSettledBytes: number;
    rssPerDeploymentBytes: number;
  };
  steady: {
    windowMs: number;
    reconciles: number;
    /** CPU seconds per wall second */
    cpuFraction: number;
    cpuMsPerReconcile: number;
    apiRequests: number;
    load: PhaseLoad;
  };
  churn: {
    /** spec changes per second, in % of the deployments */
    percentPerSecond: number;
    changes: number;
    completed: number;
    p50Ms: number;
    p90Ms: number;
    p99Ms: number;
    maxMs: number;
    /** latencies counted per 100 ms bucket: key = bucket start in ms */
    histogram: Record<string, number>;
    load: PhaseLoad;
  };
}

interface UsageSample {
  cpuSeconds: number;
  eventLoopUtilization: number;
}

const NO_SIMULATION_PROCESS: UsageSample = { cpuSeconds: NaN, eventLoopUtilization: NaN };

interface PhaseMark {
  operator: UsageSample;
  cluster: UsageSample;
  simulation: UsageSample;
  at: number;
}

/** Starts a phase: resets the ELU windows and notes every process's CPU seconds. */
async function phaseStart(world: BenchWorld): Promise<PhaseMark> {
  const [operator, cluster, simulation] = await Promise.all([world.operatorUsage(), world.clusterUsage(), world.simulationUsage()]);
  return { operator, cluster, simulation: simulation ?? NO_SIMULATION_PROCESS, at: performance.now() };
}

/** The end of a phase: its tally and every process's usage, sampled now. */
async function phaseEnd(world: BenchWorld): Promise<PhaseMark & { rows: TallyRow[] }> {
  const [rows, operator, cluster, simulation] = await Promise.all([world.tally(), world.operatorUsage(), world.clusterUsage(), world.simulationUsage()]);
  return { rows, operator, cluster, simulation: simulation ?? NO_SIMULATION_PROCESS, at: performance.now() };
}

function load(rows: readonly TallyRow[], start: PhaseMark, end: PhaseMark): PhaseLoad {
  const { operator, cluster, simulation } = end;
  const all = sumRows(rows, () => true).n || 1;
  const seconds = (end.at - start.at) / 1000;
  return {
    operatorCpuFraction: (operator.cpuSeconds - start.operator.cpuSeconds) / seconds,
    clusterCpuFraction: (cluster.cpuSeconds - start.cluster.cpuSeconds) / seconds,
    simulationCpuFraction: (simulation.cpuSeconds - start.simulation.cpuSeconds) / seconds,
    operatorEventLoopUtilization: operator.eventLoopUtilization,
    clusterEventLoopUtilization: cluster.eventLoopUtilization,
    simulationEventLoopUtilization: simulation.eventLoopUtilization,
    simulationRequestShare: sumRows(rows, (r) => r.actor === 'simulation').n / all,
    operatorRequestShare: sumRows(rows, (r) => r.actor === 'operator').n / all,
  };
}

function simulationByRequest(rows: readonly TallyRow[], n: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    if (r.actor !== 'simulation' || r.verb === 'watch') continue;
    const key = `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`;
    out[key] = (out[key] ?? 0) + r.n / n;
  }
  return out;
}

function latencyHistogram(latencies: readonly number[], bucketMs: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const ms of latencies) {
    const bucket = String(Math.floor(ms / bucketMs) * bucketMs);
    out[bucket] = (out[bucket] ?? 0) + 1;
  }
  return out;
}

/** The operator's own requests per transition, and the throughput against its own share of the raw write rate (see ScaleRun.burst). */
function ownShare(rows: readonly TallyRow[], transitions: number, transitionsPerSecond: number, rawWritesPerSecond: number) {
  const kube = sumRows(rows, (r) => r.verb !== 'watch' && r.actor === 'operator' && r.target !== 'flink-rest').n / transitions;
  const flink = sumRows(rows, (r) => r.verb !== 'watch' && r.actor === 'operator' && r.target === 'flink-rest').n / transitions;
  return {
    operatorKubeRequestsPerTransition: kube,
    operatorFlinkCallsPerTransition: flink,
    fractionOfOwnShareKube: transitionsPerSecond / (rawWritesPerSecond / kube),
    fractionOfOwnShareWithFlink: transitionsPerSecond / (rawWritesPerSecond / (kube + flink)),
  };
}

/** Requests per transition and the ceilings they put on the fraction of the raw limit (see ScaleRun.burst). */
function requestMix(rows: readonly TallyRow[], transitions: number, writesPerTransition: number) {
  const all = sumRows(rows, (r) => r.verb !== 'watch').n / transitions;
  const operator = sumRows(rows, (r) => r.verb !== 'watch' && r.actor === 'operator').n / transitions;
  return {
    requestsPerTransition: all,
    operatorRequestsPerTransition: operator,
    fractionCeiling: writesPerTransition / all,
    operatorFractionCeiling: writesPerTransition / operator,
  };
}

export async function runScale(options: ScaleOptions): Promise<ScaleRun> {
  const world = await BenchWorld.start({
    seed: options.seed,
    stateLayout: 'configmap',
    operatorFlags: {
      progressCheckIntervalMs: options.progressCheckIntervalMs,
      reconcileIntervalMs: options.reconcileIntervalMs,
      parallelism: options.parallelism,
    },
    simulationPlacement: options.simulationPlacement,
  });
  const driver = new DeploymentDriver(world.driverKubeConfig);
  const N = options.deployments;
  try {
    const raw = await measureRawWriteThroughput(world.driverKubeConfig, { durationMs: options.rawWriteMs, concurrency: 32 });

    await warmUpOperator(world.driverKubeConfig, WARMUP_NAMES);
    await driver.start();
    await sleep(options.settleMs);

    const baseline = await world.operatorMetrics(true);
    const informerBaseline = await world.informerHeapBytes();

    // ---- burst: N created at once
    const names = Array.from({ length: N }, (_, i) => `scale-${String(i).padStart(5, '0')}`);
    const stateBefore = await driver.stateConfigMaps();
    await world.resetTally();
    // BENCH_PROFILE_PHASE=burst|steady|churn: CPU profiles of both processes for that phase (BENCH_PROFILE_DIR)
    const profiling = process.env.BENCH_PROFILE_PHASE;
    const profileFor = async (phase: string, body: () => Promise<void>) => {
      if (profiling !== phase) return body();
      await world.profileStart();
      try {
        await body();
      } finally {
        console.error(`[bench] ${phase} profiles: ${(await world.profileStop()).join(', ')}`);
      }
    };
    const burstPhase = await phaseStart(world);
    const burstStart = performance.now();
    let stableInTime = true;
    await profileFor('burst', async () => {
      await driver.createAll(names);
      try {
        await driver.waitUntil(() => driver.allStable(names), `${N} deployments STABLE`, Number(process.env.BENCH_STABLE_TIMEOUT_MS ?? 60_000 + 60 * N));
      } catch (error) {
        // reported as a figure (how many made it), not a crash of the whole benchmark
        stableInTime = false;
        console.error(`[bench] ${(error as Error).message}`);
      }
    });
    const timeToStableMs = performance.now() - burstStart;
    const stableCount = names.filter((n) => driver.allStable([n])).length;
    const burstEnd = await phaseEnd(world);
    const burstRows = burstEnd.rows;
    const afterBurst = await world.operatorMetrics();
    const stateCreates = (await driver.stateConfigMaps()) - stateBefore;
    const cost = operatorCost(burstRows, stateCreates);
    const transitions = cost.stateWrites;
    const operatorWrites = sumRows(burstRows, (r) => r.actor === 'operator' && r.target !== 'flink-rest' && WRITE_VERBS.has(r.verb)).n;
    const writesPerTransition = operatorWrites / transitions;
    const transitionsPerSecond = transitions / (timeToStableMs / 1000);
    const burst: ScaleRun['burst'] = {
      transitions,
      operatorWrites,
      writesPerTransition,
      transitionsPerSecond,
      fractionOfLimit: transitionsPerSecond / (raw.writesPerSecond / writesPerTransition),
      reconcileErrors: afterBurst.reconcileErrors - baseline.reconcileErrors,
      operatorRequestsPerDeployment: sumRows(burstRows, (r) => r.actor === 'operator' && r.verb !== 'watch').n / N,
      simulationRequestsPerDeployment: sumRows(burstRows, (r) => r.actor === 'simulation' && r.verb !== 'watch').n / N,
      simulationByRequest: simulationByRequest(burstRows, N),
      ...requestMix(burstRows, transitions, writesPerTransition),
      ...ownShare(burstRows, transitions, transitionsPerSecond, raw.writesPerSecond),
      operatorCpuMsPerTransition: ((burstEnd.operator.cpuSeconds - burstPhase.operator.cpuSeconds) * 1000) / transitions,
      load: load(burstRows, burstPhase, burstEnd),
    };
    const outcome = { deployments: N, raw, timeToStableMs, stableInTime, stableCount, burst };
    if (!stableInTime) {
      // no steady state to measure: the rest of the run would only measure the backlog
      const none: PhaseLoad = {
        operatorCpuFraction: NaN,
        clusterCpuFraction: NaN,
        simulationCpuFraction: NaN,
        operatorEventLoopUtilization: NaN,
        clusterEventLoopUtilization: NaN,
        simulationEventLoopUtilization: NaN,
        simulationRequestShare: NaN,
        operatorRequestShare: NaN,
      };
      return {
        ...outcome,
        memory: {
          heapBaselineBytes: baseline.heapUsedBytes,
          heapSettledBytes: NaN,
          informerHeapBaselineBytes: informerBaseline,
          informerHeapSettledBytes: NaN,
          heapPerDeploymentBytes: NaN,
          informerHeapPerDeploymentBytes: NaN,
          rssSettledBytes: NaN,
          rssPerDeploymentBytes: NaN,
        },
        steady: { windowMs: NaN, reconciles: NaN, cpuFraction: NaN, cpuMsPerReconcile: NaN, apiRequests: NaN, load: none },
        churn: {
          percentPerSecond: options.churnPercentPerSecond,
          changes: 0,
          completed: 0,
          p50Ms: NaN,
          p90Ms: NaN,
          p99Ms: NaN,
          maxMs: NaN,
          histogram: {},
          load: none,
        },
      };
    }

    // ---- steady state
    await sleep(options.settleMs);
    await world.resetTally();
    const steadyPhase = await phaseStart(world);
    const steadyBefore: OperatorMetricsSample = await world.operatorMetrics();
    const steadyStart = performance.now();
    await profileFor('steady', () => sleep(options.reconcileIntervalMs));
    const steadyWindowMs = performance.now() - steadyStart;
    const steadyEnd = await phaseEnd(world);
    const steadyRows = steadyEnd.rows;
    const steadyAfter = await world.operatorMetrics();
    const steadyReconciles = steadyAfter.reconciles - steadyBefore.reconciles;
    const steadyCpu = steadyAfter.cpuSeconds - steadyBefore.cpuSeconds;

    const settled = await world.operatorMetrics(true);
    const informerSettled = await world.informerHeapBytes();

    // ---- churn: churnPercentPerSecond % of the deployments change spec every second
    const random = seededRandom(options.seed + 1);
    const perTick = Math.max(1, Math.round((N * options.churnPercentPerSecond) / 100));
    await world.resetTally();
    const churnPhase = await phaseStart(world);
    let changes = 0;
    const churnEnd = performance.now() + options.churnMs;
    const inFlight: Promise<void>[] = [];
    const busy = new Set<string>();
    await profileFor('churn', async () => {
      while (performance.now() < churnEnd) {
        const tick = performance.now();
        for (let k = 0; k < perTick; k++) {
          let name: string;
          do name = names[Math.floor(random() * N)]!;
          while (busy.has(name));
          busy.add(name);
          changes++;
          inFlight.push(
            driver
              .changeSpec(name)
              .then(() => driver.waitUntil(() => !driver.isPending(name), `${name} observedGeneration`, 120_000).finally(() => busy.delete(name))),
          );
        }
        await sleep(Math.max(0, 1000 - (performance.now() - tick)));
      }
      await Promise.allSettled(inFlight);
    });
    const churnEnd2 = await phaseEnd(world);
    const churnRows = churnEnd2.rows;
    const latencies = driver.latenciesMs;

    return {
      ...outcome,
      memory: {
        heapBaselineBytes: baseline.heapUsedBytes,
        heapSettledBytes: settled.heapUsedBytes,
        informerHeapBaselineBytes: informerBaseline,
        informerHeapSettledBytes: informerSettled,
        heapPerDeploymentBytes: (settled.heapUsedBytes - baseline.heapUsedBytes - (informerSettled - informerBaseline)) / N,
        informerHeapPerDeploymentBytes: (informerSettled - informerBaseline) / N,
        rssSettledBytes: settled.rssBytes,
        rssPerDeploymentBytes: (settled.rssBytes - baseline.rssBytes) / N,
      },
      steady: {
        windowMs: steadyWindowMs,
        reconciles: steadyReconciles,
        cpuFraction: steadyCpu / (steadyWindowMs / 1000),
        cpuMsPerReconcile: steadyReconciles ? (steadyCpu * 1000) / steadyReconciles : NaN,
        apiRequests:
          operatorCost(steadyRows).reads + operatorCost(steadyRows).stateWrites + operatorCost(steadyRows).statusWrites + operatorCost(steadyRows).otherWrites,
        load: load(steadyRows, steadyPhase, steadyEnd),
      },
      churn: {
        percentPerSecond: options.churnPercentPerSecond,
        changes,
        completed: latencies.length,
        p50Ms: percentile(latencies, 50),
        p90Ms: percentile(latencies, 90),
        p99Ms: percentile(latencies, 99),
        maxMs: percentile(latencies, 100),
        histogram: latencyHistogram(latencies, 100),
        load: load(churnRows, churnPhase, churnEnd2),
      },
    };
  } finally {
    driver.stop();
    await world.stop();
  }
}
