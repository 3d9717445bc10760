/**
 * Shards (issue 22): two operator processes on disjoint halves of N FlinkDeployments (label
 * selectors `flink-operator.io/shard=a` / `=b`, each with its own Lease, identity and User-Agent),
 * against one cluster process and one simulation process; then, in fresh processes of the same
 * invocation, one operator without a selector on the same N, for the "same load per deployment"
 * comparison. Each layout:
 *
 * 1. warm-up: `warmupPerShard` deployments per shard in namespace `warmup`, STABLE, then deleted;
 * 2. N deployments (half labelled a, half b, interleaved, names `shard-<s>-<i>`) created at once by
 *    the driver (32 requests in flight) until all are STABLE: per operator, the time until its half
 *    is STABLE, its API requests per deployment, CPU and event-loop use; the API server's and the
 *    simulation's too;
 * 3. a steady window as long as the reconcile interval (every deployment has one periodic
 *    reconcile in it): CPU and API requests;
 * 4. sharded only: the stamps of every ConfigMap, Deployment and Service named for a deployment.
 *
 * Isolation is judged by the API server's request log (request-tally.ts): a request of operator
 * `a` whose object name belongs to a deployment of shard `b` (the FlinkDeployment, its state
 * ConfigMap, Deployments, Services, `<name>-rest` proxy, Events) is a cross-shard request. Creates
 * carry no name in the log: what was created is judged by its stamp (LEADER_ANNOTATION names the
 * shard, fencing-token.ts). Lists and watches name nothing; the state ConfigMap informer is not
 * shard-filtered by design (design/012), so each operator still lists and watches every state.
 *
 * Caveats: the two layouts run one after the other on a shared 2-core machine; their absolute times
 * are comparable only roughly, the request counts exactly.
 */
import { AppsV1Api, CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { LEADER_ANNOTATION, parseFencingToken } from '../src/runtime/fencing-token.js';
import { BenchWorld, type OperatorProcessSpec, type SimulationPlacement } from './bench-processes.js';
import { DeploymentDriver, warmUpOperator } from './deployment-driver.js';
import type { ProcessUsage } from './process-usage.js';
import { benchOperatorUserAgent, namedShardOf, operatorCost, shardDeploymentName, sumRows, type TallyRow } from './request-tally.js';
import { sleep } from './statistics.js';

export const SHARD_LABEL = 'flink-operator.io/shard';
export const SHARDS = ['a', 'b'] as const;
/** The label of the single operator (no selector) of the comparison run. */
export const SINGLE_OPERATOR = 'all';
const LEASE_NAMESPACE = 'default';

export interface ShardBenchOptions {
  seed: number;
  /** N, split in halves between the shards */
  deployments: number;
  /** the operators' reconcile interval; the steady window is as long */
  reconcileIntervalMs: number;
  progressCheckIntervalMs: number;
  parallelism: number;
  settleMs: number;
  warmupPerShard: number;
  simulationPlacement?: SimulationPlacement;
}

/** One operator process's share of a layout. */
export interface OperatorShare {
  /** the deployments its selector matches */
  deployments: number;
  timeToOwnStableMs: number;
  /** creation burst, per deployment of its own: API requests (watches, Lease and Flink REST left out), writes, GETs + LISTs, Flink REST calls */
  apiRequestsPerDeployment: number;
  writesPerDeployment: number;
  readsPerDeployment: number;
  flinkRestPerDeployment: number;
  /** Lease requests of its leader election in the burst (a fixed cost per process) */
  leaseRequests: number;
  reconcileErrors: number;
  /** pod LISTs per deployment it owns (the reconciler's diagnosis of a JobManager DEPLOYING for long: each one a namespace scan) */
  podListsPerDeployment: number;
  /** leadership lost and side effects refused by the leadership fence in the burst (a renewal that came too late) */
  leadershipLosses: number;
  fencedSideEffects: number;
  burstCpuFraction: number;
  burstEventLoopUtilization: number;
  steadyCpuFraction: number;
  /** API requests in the steady window (watches and Lease left out) */
  steadyApiRequests: number;
  /** those by `verb resource[/subresource]` */
  steadyByRequest: Record<string, number>;
  /** heap used after settling (after a full GC) */
  heapSettledBytes: number;
}

export interface ShardLayoutRun {
  /** by operator label: `a`, `b` (sharded) or SINGLE_OPERATOR */
  operators: Record<string, OperatorShare>;
  timeToStableMs: number;
  stableInTime: boolean;
  stableCount: number;
  burst: {
    /** every operator's API requests (watches, Lease and Flink REST left out) ÷ N */
    operatorApiRequestsPerDeployment: number;
    operatorFlinkRestPerDeployment: number;
    /** every actor's requests (operators, simulation, driver; Flink REST included, watches excluded) ÷ N */
    allRequestsPerDeployment: number;
    simulationRequestsPerDeployment: number;
    /** the API server's CPU seconds in the burst ÷ N */
    clusterCpuMsPerDeployment: number;
    clusterCpuFraction: number;
    clusterEventLoopUtilization: number;
    simulationCpuFraction: number;
    simulationEventLoopUtilization: number;
  };
  steady: {
    windowMs: number;
    clusterCpuFraction: number;
  };
}

export interface ShardIsolation {
  /** requests of one shard's operator naming an object of the other shard's deployments (burst + steady) */
  crossShardRequests: number;
  /** those requests by `operator → shard: verb resource[/subresource]` */
  crossShardByRequest: Record<string, number>;
  /** every request of a shard's operator naming an object of a shard deployment (its own or not): what the check looked at */
  namedRequests: number;
  /** operator requests without a shard User-Agent (attributed by the named object's shard, when they name one) */
  unlabelledOperatorRequests: number;
  /** objects named for a deployment that carry a stamp, and of those, stamped by the other shard */
  stampedObjects: number;
  foreignStamps: number;
}

export interface ShardRun {
  deployments: number;
  sharded: ShardLayoutRun;
  single: ShardLayoutRun;
  isolation: ShardIsolation;
}

const leaseNameOf = (label: string) => `flink-operator-shard-${label}`;

interface Mark {
  operators: Array<Pick<ProcessUsage, 'cpuSeconds' | 'eventLoopUtilization'>>;
  cluster: ProcessUsage;
  simulation: ProcessUsage | undefined;
  at: number;
}

async function mark(world: BenchWorld): Promise<Mark> {
  const [operators, cluster, simulation] = await Promise.all([
    Promise.all(world.operators.map((_, i) => world.operatorUsage(i))),
    world.clusterUsage(),
    world.simulationUsage(),
  ]);
  return { operators, cluster, simulation, at: performance.now() };
}

const cpuFraction = (start: { cpuSeconds: number } | undefined, end: { cpuSeconds: number } | undefined, seconds: number) =>
  start && end ? (end.cpuSeconds - start.cpuSeconds) / seconds : NaN;

/** Half a, half b, interleaved (a0, b0, a1, b1, …), so both operators are loaded from the first second. */
function shardedNames(n: number, suffix: (i: number) => string | number): { name: string; shard: string }[] {
  return Array.from({ length: n }, (_, i) => {
    const shard = SHARDS[i % SHARDS.length];
    return { name: shardDeploymentName(shard, suffix(Math.floor(i / SHARDS.length))), shard };
  });
}

async function warmUp(world: BenchWorld, perShard: number): Promise<void> {
  const deployments = shardedNames(perShard * SHARDS.length, (i) => `w${i}`);
  await warmUpOperator(
    world.driverKubeConfig,
    deployments.map((d) => d.name),
    shardLabelsOf(deployments),
  );
}

/** The shard label of each of `deployments`, by name. */
function shardLabelsOf(deployments: readonly { name: string; shard: string }[]): (name: string) => Record<string, string> {
  const shards = new Map(deployments.map((d) => [d.name, d.shard]));
  return (name) => ({ [SHARD_LABEL]: shards.get(name) ?? '' });
}

/** Every operator row of the sharded world: its sender's label, or (no shard User-Agent) the named object's shard. */
function senderOf(row: TallyRow): string | undefined {
  return row.operatorLabel ?? row.namedShard;
}

function isolationOf(rows: readonly TallyRow[]): Omit<ShardIsolation, 'stampedObjects' | 'foreignStamps'> {
  const crossShardByRequest: Record<string, number> = {};
  let crossShardRequests = 0;
  for (const r of rows) {
    if (r.actor !== 'operator' || r.operatorLabel === undefined || r.namedShard === undefined || r.operatorLabel === r.namedShard) continue;
    crossShardRequests += r.n;
    const key = `${r.operatorLabel} → ${r.namedShard}: ${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`;
    crossShardByRequest[key] = (crossShardByRequest[key] ?? 0) + r.n;
  }
  const unlabelledOperatorRequests = sumRows(rows, (r) => r.actor === 'operator' && r.operatorLabel === undefined).n;
  const namedRequests = sumRows(rows, (r) => r.actor === 'operator' && r.operatorLabel !== undefined && r.namedShard !== undefined).n;
  return { crossShardRequests, crossShardByRequest, namedRequests, unlabelledOperatorRequests };
}

/** The stamps on every ConfigMap, Deployment and Service named for a shard deployment: how many, and how many name the other shard. */
async function stampCheck(kubeConfig: KubeConfig, namespace: string): Promise<{ stampedObjects: number; foreignStamps: number }> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const lists: KubernetesObject[][] = [
    (await core.listNamespacedConfigMap({ namespace })).items,
    (await core.listNamespacedService({ namespace })).items,
    (await apps.listNamespacedDeployment({ namespace })).items,
  ];
  let stampedObjects = 0;
  let foreignStamps = 0;
  for (const object of lists.flat()) {
    const shard = namedShardOf(object.metadata?.name ?? '');
    const stamp = parseFencingToken(object.metadata?.annotations?.[LEADER_ANNOTATION]);
    if (shard === undefined || !stamp) continue;
    stampedObjects++;
    if (stamp.shard !== `${LEASE_NAMESPACE}/${leaseNameOf(shard)}`) foreignStamps++;
  }
  return { stampedObjects, foreignStamps };
}

/** One layout: the given operators (label → selector or none), warm-up, burst, steady window. */
async function runLayout(
  options: ShardBenchOptions,
  labels: readonly string[],
  sharded: boolean,
): Promise<{ run: ShardLayoutRun; rows: TallyRow[]; stamps?: { stampedObjects: number; foreignStamps: number } }> {
  const specs: OperatorProcessSpec[] = labels.map((label) => ({
    userAgent: benchOperatorUserAgent(label),
    flags: {
      identity: `bench-operator-${label}`,
      leaseName: leaseNameOf(label),
      leaseNamespace: LEASE_NAMESPACE,
      ...(sharded ? { labelSelector: `${SHARD_LABEL}=${label}` } : {}),
    },
  }));
  const world = await BenchWorld.start({
    seed: options.seed,
    stateLayout: 'configmap',
    operatorFlags: {
      progressCheckIntervalMs: options.progressCheckIntervalMs,
      reconcileIntervalMs: options.reconcileIntervalMs,
      parallelism: options.parallelism,
    },
    simulationPlacement: options.simulationPlacement,
    operators: specs,
  });
  const driver = new DeploymentDriver(world.driverKubeConfig);
  const N = options.deployments;
  try {
    await warmUp(world, options.warmupPerShard);
    await driver.start();
    await sleep(options.settleMs);
    const baseline = await Promise.all(labels.map((_, i) => world.operatorMetrics(false, i)));

    // ---- burst: N created at once, half per shard
    const deployments = shardedNames(N, (i) => i);
    const names = deployments.map((d) => d.name);
    const ownNames = new Map(labels.map((label) => [label, deployments.filter((d) => !sharded || d.shard === label).map((d) => d.name)]));
    const own = (label: string) => ownNames.get(label) ?? [];
    await world.resetTally();
    const burstStart = await mark(world);
    const timeout = Number(process.env.BENCH_STABLE_TIMEOUT_MS ?? 60_000 + 60 * N);
    const ownStableAt = new Map<string, number>();
    const halves = labels.map((label) =>
      driver
        .waitUntil(() => driver.allStable(own(label)), `the deployments of ${label} STABLE`, timeout)
        .then(() => void ownStableAt.set(label, performance.now()))
        .catch(() => {}),
    );
    let stableInTime = true;
    await driver.createAll(
      deployments.map((d) => d.name),
      shardLabelsOf(deployments),
    );
    try {
      await driver.waitUntil(() => driver.allStable(names), `${N} deployments STABLE`, timeout);
    } catch (error) {
      stableInTime = false;
      console.error(`[bench] ${(error as Error).message}`);
    }
    const allStableAt = performance.now();
    await Promise.all(halves);
    const burstEnd = await mark(world);
    const burstRows = await world.tally();
    const afterBurst = await Promise.all(labels.map((_, i) => world.operatorMetrics(false, i)));
    const burstSeconds = (burstEnd.at - burstStart.at) / 1000;

    // ---- steady window
    await sleep(options.settleMs);
    await world.resetTally();
    const steadyStart = await mark(world);
    await sleep(options.reconcileIntervalMs);
    const steadyEnd = await mark(world);
    const steadyRows = await world.tally();
    const steadySeconds = (steadyEnd.at - steadyStart.at) / 1000;
    const settled = await Promise.all(labels.map((_, i) => world.operatorMetrics(true, i)));
    const stamps = sharded ? await stampCheck(world.driverKubeConfig, driver.namespace) : undefined;

    const operators: Record<string, OperatorShare> = {};
    labels.forEach((label, i) => {
      const mine = (rows: readonly TallyRow[]) => rows.filter((r) => r.actor === 'operator' && senderOf(r) === label);
      const cost = operatorCost(mine(burstRows));
      const steadyCost = operatorCost(mine(steadyRows));
      const count = own(label).length || 1;
      const at = ownStableAt.get(label);
      operators[label] = {
        deployments: own(label).length,
        timeToOwnStableMs: at === undefined ? NaN : at - burstStart.at,
        apiRequestsPerDeployment: (cost.reads + cost.stateWrites + cost.statusWrites + cost.otherWrites) / count,
        writesPerDeployment: (cost.stateWrites + cost.statusWrites + cost.otherWrites) / count,
        readsPerDeployment: cost.reads / count,
        flinkRestPerDeployment: cost.flinkRest / count,
        leaseRequests: cost.leaseRequests,
        reconcileErrors: afterBurst[i].reconcileErrors - baseline[i].reconcileErrors,
        podListsPerDeployment: (cost.byRequest['list pods'] ?? 0) / count,
        leadershipLosses: afterBurst[i].leadershipLosses - baseline[i].leadershipLosses,
        fencedSideEffects: afterBurst[i].fencedSideEffects - baseline[i].fencedSideEffects,
        burstCpuFraction: cpuFraction(burstStart.operators[i], burstEnd.operators[i], burstSeconds),
        burstEventLoopUtilization: burstEnd.operators[i].eventLoopUtilization,
        steadyCpuFraction: cpuFraction(steadyStart.operators[i], steadyEnd.operators[i], steadySeconds),
        steadyApiRequests: steadyCost.reads + steadyCost.stateWrites + steadyCost.statusWrites + steadyCost.otherWrites,
        steadyByRequest: steadyCost.byRequest,
        heapSettledBytes: settled[i].heapUsedBytes,
      };
    });
    const all = operatorCost(burstRows);
    const run: ShardLayoutRun = {
      operators,
      timeToStableMs: allStableAt - burstStart.at,
      stableInTime,
      stableCount: names.filter((n) => driver.allStable([n])).length,
      burst: {
        operatorApiRequestsPerDeployment: (all.reads + all.stateWrites + all.statusWrites + all.otherWrites) / N,
        operatorFlinkRestPerDeployment: all.flinkRest / N,
        allRequestsPerDeployment: sumRows(burstRows, (r) => r.verb !== 'watch').n / N,
        simulationRequestsPerDeployment: sumRows(burstRows, (r) => r.actor === 'simulation' && r.verb !== 'watch').n / N,
        clusterCpuMsPerDeployment: ((burstEnd.cluster.cpuSeconds - burstStart.cluster.cpuSeconds) * 1000) / N,
        clusterCpuFraction: cpuFraction(burstStart.cluster, burstEnd.cluster, burstSeconds),
        clusterEventLoopUtilization: burstEnd.cluster.eventLoopUtilization,
        simulationCpuFraction: cpuFraction(burstStart.simulation, burstEnd.simulation, burstSeconds),
        simulationEventLoopUtilization: burstEnd.simulation?.eventLoopUtilization ?? NaN,
      },
      steady: { windowMs: steadySeconds * 1000, clusterCpuFraction: cpuFraction(steadyStart.cluster, steadyEnd.cluster, steadySeconds) },
    };
    return { run, rows: [...burstRows, ...steadyRows], ...(stamps ? { stamps } : {}) };
  } finally {
    driver.stop();
    await world.stop();
  }
}

/** The sharded layout (one operator per shard), then the single operator on the same N, each in fresh processes. */
export async function runShards(options: ShardBenchOptions): Promise<ShardRun> {
  const sharded = await runLayout(options, SHARDS, true);
  const single = await runLayout(options, [SINGLE_OPERATOR], false);
  const stamps = sharded.stamps ?? { stampedObjects: NaN, foreignStamps: NaN };
  return {
    deployments: options.deployments,
    sharded: sharded.run,
    single: single.run,
    isolation: { ...isolationOf(sharded.rows), ...stamps },
  };
}
