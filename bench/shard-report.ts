/**
 * Renders the shard benchmark's runs (shard-bench.ts) as the "Shards" part of the results block
 * (performance-report.ts calls it): one table per operator process, one table of the API server's
 * load per deployment, sharded against the single operator, and the isolation figures.
 *
 * Guarantees: the isolation counts (cross-shard requests, foreign stamps) are the worst over the
 * runs, never a median; every other figure is the median of the runs (medianDeep).
 */
import type { ShardLayoutRun, ShardRun, OperatorShare } from './shard-bench.js';
import { SHARDS, SINGLE_OPERATOR } from './shard-bench.js';
import { formatBytes, round } from './statistics.js';

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? String(round(n, digits)) : 'n/a');
const pct = (n: number) => (Number.isFinite(n) ? `${n < 0.1 ? round(n * 100, 1) : Math.round(n * 100)}%` : 'n/a');
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${fmt(a / b, 2)}×` : 'n/a');
const seconds = (ms: number) => (Number.isFinite(ms) ? `${fmt(ms / 1000, 1)} s` : 'not within the timeout');

function steadyRequests(byRequest: Record<string, number>): string {
  return Object.entries(byRequest)
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1])
    .map(([k, n]) => `${k} ${fmt(n, 0)}`)
    .join(', ');
}

function timeToStable(layout: ShardLayoutRun): string {
  return layout.stableInTime ? seconds(layout.timeToStableMs) : `not within ${seconds(layout.timeToStableMs)}: ${fmt(layout.stableCount, 0)} STABLE`;
}

function operatorTable(run: ShardRun): string[] {
  const sharded = SHARDS.map((s) => run.sharded.operators[s]);
  const single = run.single.operators[SINGLE_OPERATOR];
  const rows = ['| figure | operator a (shard=a) | operator b (shard=b) | single operator (no selector) |', '|---|---|---|---|'];
  const line = (figure: string, f: (o: OperatorShare) => string) => rows.push(`| ${figure} | ${sharded.map(f).join(' | ')} | ${single ? f(single) : 'n/a'} |`);
  line('deployments it owns', (o) => fmt(o.deployments, 0));
  line('time until its deployments are STABLE', (o) => seconds(o.timeToOwnStableMs));
  line('creation burst: API requests per deployment it owns (watches, Lease, Flink REST left out)', (o) => fmt(o.apiRequestsPerDeployment, 2));
  line('creation burst: of them writes / GETs + LISTs', (o) => `${fmt(o.writesPerDeployment, 2)} / ${fmt(o.readsPerDeployment, 2)}`);
  line('creation burst: Flink REST calls (service proxy) per deployment', (o) => fmt(o.flinkRestPerDeployment, 2));
  line('creation burst: Lease requests (leader election, per process)', (o) => fmt(o.leaseRequests, 0));
  line('creation burst: reconcile errors', (o) => fmt(o.reconcileErrors, 0));
  line('creation burst: pod LISTs per deployment it owns (diagnosis of a slow JobManager)', (o) => fmt(o.podListsPerDeployment, 2));
  line('creation burst: leadership lost / side effects refused by the lease fence', (o) => `${fmt(o.leadershipLosses, 0)} / ${fmt(o.fencedSideEffects, 0)}`);
  line('creation burst: CPU (cores) / event-loop utilization', (o) => `${fmt(o.burstCpuFraction, 2)} / ${pct(o.burstEventLoopUtilization)}`);
  line('steady state: CPU (cores) / API requests in the window', (o) => `${fmt(o.steadyCpuFraction, 2)} / ${fmt(o.steadyApiRequests, 0)}`);
  line('heap used after settling (after full GC)', (o) => formatBytes(o.heapSettledBytes));
  return rows;
}

function loadTable(run: ShardRun): string[] {
  const a = run.sharded;
  const b = run.single;
  const rows = ['| figure | two shards (a + b) | single operator | shards ÷ single |', '|---|---|---|---|'];
  const line = (figure: string, x: number, y: number, digits = 2, unit = '') =>
    rows.push(`| ${figure} | ${fmt(x, digits)}${unit} | ${fmt(y, digits)}${unit} | ${ratio(x, y)} |`);
  rows.push(`| time until all STABLE | ${timeToStable(a)} | ${timeToStable(b)} | ${ratio(a.timeToStableMs, b.timeToStableMs)} |`);
  line(
    'creation burst: operator API requests per deployment (watches, Lease, Flink REST left out)',
    a.burst.operatorApiRequestsPerDeployment,
    b.burst.operatorApiRequestsPerDeployment,
  );
  line('creation burst: operator Flink REST calls per deployment', a.burst.operatorFlinkRestPerDeployment, b.burst.operatorFlinkRestPerDeployment);
  line(
    'creation burst: API server requests per deployment, every actor (watches excluded)',
    a.burst.allRequestsPerDeployment,
    b.burst.allRequestsPerDeployment,
  );
  line('creation burst: of them the simulation', a.burst.simulationRequestsPerDeployment, b.burst.simulationRequestsPerDeployment);
  line('creation burst: API server CPU per deployment', a.burst.clusterCpuMsPerDeployment, b.burst.clusterCpuMsPerDeployment, 2, ' ms');
  line('creation burst: API server CPU (cores)', a.burst.clusterCpuFraction, b.burst.clusterCpuFraction);
  line('creation burst: API server event-loop utilization', a.burst.clusterEventLoopUtilization * 100, b.burst.clusterEventLoopUtilization * 100, 0, '%');
  line('creation burst: simulation CPU (cores)', a.burst.simulationCpuFraction, b.burst.simulationCpuFraction);
  line('steady state: API server CPU (cores)', a.steady.clusterCpuFraction, b.steady.clusterCpuFraction);
  return rows;
}

/** The "Shards" part of the results block: the median of `runs` (and the worst isolation figures). */
export function renderShardResults(runs: readonly ShardRun[], median: (runs: readonly ShardRun[]) => ShardRun): string[] {
  if (runs.length === 0) return [];
  const run = median(runs);
  const worst = (f: (r: ShardRun) => number) => Math.max(...runs.map(f));
  const crossShard = worst((r) => r.isolation.crossShardRequests);
  const examples = Object.entries(run.isolation.crossShardByRequest)
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 5)
    .map(([k, n]) => `${k} ${fmt(n, 0)}`);
  const sharded = run.sharded.burst.allRequestsPerDeployment;
  const single = run.single.burst.allRequestsPerDeployment;
  return [
    `#### Shards (${run.deployments.toLocaleString('en-US')} deployments: two operators with selectors \`flink-operator.io/shard=a\` / \`=b\` on disjoint halves, then one operator without a selector on the same N, each in fresh processes)`,
    '',
    ...operatorTable(run),
    '',
    ...loadTable(run),
    '',
    `- total load per deployment (API server requests of every actor, creation burst): sharded ${fmt(sharded, 2)} vs single ${fmt(single, 2)} (${ratio(sharded, single)}); ` +
      `the operators' own: ${fmt(run.sharded.burst.operatorApiRequestsPerDeployment, 2)} vs ${fmt(run.single.burst.operatorApiRequestsPerDeployment, 2)}`,
    `- cross-shard requests (an operator's requests naming an object of the other shard's deployments: FlinkDeployment, state ConfigMap, Deployments, Services, \`-rest\` proxy, Events; burst + steady, worst run): ${fmt(crossShard, 0)}${examples.length ? ` (${examples.join(', ')})` : ''} of ${fmt(run.isolation.namedRequests, 0)} requests naming a deployment's object`,
    `- objects (ConfigMaps, Deployments, Services) stamped by the other shard: ${fmt(
      worst((r) => r.isolation.foreignStamps),
      0,
    )} of ${fmt(run.isolation.stampedObjects, 0)} stamped; operator requests without a shard User-Agent: ${fmt(
      worst((r) => r.isolation.unlabelledOperatorRequests),
      0,
    )}`,
    ...[...SHARDS, SINGLE_OPERATOR]
      .map((label) => [label, run.sharded.operators[label] ?? run.single.operators[label]] as const)
      .filter(([, o]) => o && o.steadyApiRequests > 0)
      .map(([label, o]) => `- steady-state requests of operator ${label}: ${steadyRequests(o.steadyByRequest)}`),
    '- not shard-filtered by design (design/012): each operator lists and watches every state ConfigMap (and the owned Deployments and Services), so watch traffic to the operators grows with the number of shards; the table counts requests, not watch events.',
  ];
}
