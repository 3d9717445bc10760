/**
 * Renders benchmark results as the Markdown block of design/performance.md, and writes it between
 * the `<!-- bench:results:begin -->` / `<!-- bench:results:end -->` markers (the hand-written
 * analysis around them is kept).
 */
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { ApiCostRun, FlowCost } from './api-cost-bench.js';
import type { ScaleRun } from './scale-bench.js';
import type { ShardRun } from './shard-bench.js';
import { renderShardResults } from './shard-report.js';
import { formatBytes, median, round } from './statistics.js';

export const RESULTS_BEGIN = '<!-- bench:results:begin -->';
export const RESULTS_END = '<!-- bench:results:end -->';

export interface BenchSettings {
  command: string;
  runs: number;
  seed: number;
  sizes: number[];
  churnMs: number;
  scaleReconcileIntervalMs: number;
  progressCheckIntervalMs: number;
  parallelism: number;
  apiCostReconcileIntervalMs: number;
  /** where the simulated kubelet, controllers and Flink ran (absent in results written before the split: in-process) */
  simulationPlacement?: 'separate' | 'in-process';
}

export interface BenchResults {
  settings: BenchSettings;
  startedAt: string;
  durationMs: number;
  machine: string;
  loadAverageAtStart: number[];
  /** snapshotResources: the ConfigMap layout with the FlinkStateSnapshot CRD installed (absent in results written before issue 19). */
  apiCost: { configmap: ApiCostRun[]; legacy: ApiCostRun[]; snapshotResources?: ApiCostRun[] };
  scale: Record<number, ScaleRun[]>;
  /** the shard benchmark's runs (`--shards`; absent when not run) */
  shards?: ShardRun[];
}

export function machineDescription(): string {
  const cpu = cpus();
  return `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${formatBytes(totalmem())} RAM, ${osType()} ${release()}, Node.js ${process.version}`;
}

export function currentLoadAverage(): number[] {
  return loadavg().map((l) => round(l, 1));
}

/** The median of every numeric leaf over runs of the same shape (other leaves: the first run's). */
export function medianDeep<T>(runs: readonly T[]): T {
  const first = runs[0] as unknown;
  if (typeof first === 'number') return median(runs as unknown as number[]) as unknown as T;
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first as T;
  const out: Record<string, unknown> = {};
  const keys = new Set(runs.flatMap((r) => Object.keys(r as object)));
  for (const key of keys) {
    const values = runs.map((r) => (r as Record<string, unknown>)[key]);
    if (values.every((v) => typeof v === 'number' || v === undefined) && values.some((v) => typeof v === 'number'))
      out[key] = median(values.map((v) => v ?? 0));
    else out[key] = medianDeep(values.filter((v) => v !== undefined));
  }
  return out as T;
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? String(round(n, digits)) : 'n/a');
const pct = (n: number) => (Number.isFinite(n) ? `${n < 0.1 ? round(n * 100, 1) : Math.round(n * 100)}%` : 'n/a');
const verbs = (v: Record<string, number>) =>
  Object.entries(v)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${fmt(n)}`)
    .join(', ') || 'none';

function writes(f: FlowCost): number {
  return f.stateWrites + f.statusWrites + f.otherWrites;
}

/** What recording snapshots as FlinkStateSnapshot resources costs (design/011): the same flows with and without the CRD. */
function snapshotResourceCostTable(without: ApiCostRun, withCrd: ApiCostRun): string[] {
  const rows = ['| flow | figure | without the FlinkStateSnapshot CRD | with it |', '|---|---|---|---|'];
  const flows: Array<['deploy' | 'upgrade' | 'periodic', string]> = [
    ['periodic', 'periodic reconcile, unchanged deployment (per reconcile)'],
    ['deploy', 'new deployment → STABLE (whole flow)'],
    ['upgrade', 'full savepoint upgrade → STABLE (whole flow)'],
  ];
  for (const [key, title] of flows) {
    const a = without[key];
    const b = withCrd[key];
    const per = (f: FlowCost) => (key === 'periodic' ? f.transitions || 1 : 1);
    const snapshotRequests = (f: FlowCost) =>
      Object.entries(f.byRequest)
        .filter(([request]) => request.includes('flinkstatesnapshots'))
        .reduce((n, [, count]) => n + count, 0);
    rows.push(`| ${title} | API requests | ${fmt((writes(a) + a.reads) / per(a), 2)} | ${fmt((writes(b) + b.reads) / per(b), 2)} |`);
    rows.push(`| ${title} | of them flinkstatesnapshots | ${fmt(snapshotRequests(a) / per(a), 2)} | ${fmt(snapshotRequests(b) / per(b), 2)} |`);
    rows.push(`| ${title} | state ConfigMap writes | ${fmt(a.stateWrites / per(a), 2)} | ${fmt(b.stateWrites / per(b), 2)} |`);
  }
  return rows;
}

function apiCostTable(cm: ApiCostRun, legacy: ApiCostRun): string[] {
  const rows: string[] = [];
  rows.push('| flow | figure | ConfigMap layout | legacy status layout | legacy ÷ ConfigMap |');
  rows.push('|---|---|---|---|---|');
  const ratio = (a: number, b: number) => (a === 0 && b === 0 ? '=' : a === 0 ? '∞' : `${fmt(b / a, 2)}×`);
  const flows: Array<['deploy' | 'upgrade' | 'periodic', string]> = [
    ['periodic', 'periodic reconcile, unchanged deployment (per reconcile)'],
    ['deploy', 'new deployment → STABLE (whole flow)'],
    ['upgrade', 'full savepoint upgrade → STABLE (whole flow)'],
  ];
  for (const [key, title] of flows) {
    const a = cm[key];
    const b = legacy[key];
    const per = key === 'periodic' ? a.transitions || 1 : 1;
    const perB = key === 'periodic' ? b.transitions || 1 : 1;
    const line = (figure: string, x: number, y: number, digits = 1) =>
      rows.push(`| ${title} | ${figure} | ${fmt(x, digits)} | ${fmt(y, digits)} | ${ratio(x, y)} |`);
    line('API requests', (writes(a) + a.reads) / per, (writes(b) + b.reads) / perB, 2);
    line('writes', writes(a) / per, writes(b) / perB, 2);
    line('GETs + LISTs', a.reads / per, b.reads / perB, 2);
    line('bytes sent', a.bytesSent / per, b.bytesSent / perB, 0);
    line('bytes received', a.bytesReceived / per, b.bytesReceived / perB, 0);
    line('Flink REST calls (service proxy)', a.flinkRest / per, b.flinkRest / perB, 2);
    if (key !== 'periodic') {
      const t = a.transitions || 1;
      line('state transitions (design/005 steps)', a.transitions, b.transitions, 0);
      line('state writes per transition (ConfigMap; legacy: status PUTs)', a.stateWrites / t, (b.byRequest['update flinkdeployments/status'] ?? 0) / t, 2);
      line(
        'status patches per transition',
        (a.byRequest['patch flinkdeployments/status'] ?? 0) / t,
        (b.byRequest['patch flinkdeployments/status'] ?? 0) / t,
        2,
      );
      line('bytes sent per transition', a.bytesSent / t, b.bytesSent / t, 0);
    }
  }
  rows.push('');
  rows.push(
    `Leader election (on by default) is left out of every figure above: ${fmt(cm.periodic.leaseRequests, 0)} Lease requests (GET + PUT per retry period) ` +
      `in the periodic window, a fixed cost of the operator process whatever the number of deployments.`,
  );
  rows.push('');
  rows.push('Requests by verb (median run; Flink REST, watches and Lease renewals not included):');
  rows.push('');
  for (const [key] of flows) {
    rows.push(`- ${key}, ConfigMap layout: ${verbs(cm[key].byVerb)}${key === 'periodic' ? ` (over ${fmt(cm[key].transitions, 0)} reconciles)` : ''}`);
    rows.push(`- ${key}, legacy layout: ${verbs(legacy[key].byVerb)}${key === 'periodic' ? ` (over ${fmt(legacy[key].transitions, 0)} reconciles)` : ''}`);
  }
  rows.push('');
  rows.push('Requests by resource (median run):');
  rows.push('');
  for (const [key] of flows) {
    rows.push(`- ${key}, ConfigMap layout: ${verbs(cm[key].byRequest)}`);
    rows.push(`- ${key}, legacy layout: ${verbs(legacy[key].byRequest)}`);
  }
  return rows;
}

function scaleTable(runs: Record<number, ScaleRun>, settings: BenchSettings): string[] {
  const sizes = Object.keys(runs)
    .map(Number)
    .sort((a, b) => a - b);
  const rows: string[] = [];
  const header = `| figure | ${sizes.map((n) => `${n.toLocaleString('en-US')} deployments`).join(' | ')} | target |`;
  rows.push(header, `|---|${sizes.map(() => '---').join('|')}|---|`);
  const line = (figure: string, f: (r: ScaleRun) => string, target = '') =>
    rows.push(`| ${figure} | ${sizes.map((n) => f(runs[n])).join(' | ')} | ${target} |`);
  line('time until all STABLE', (r) =>
    r.stableInTime
      ? `${fmt(r.timeToStableMs / 1000, 1)} s`
      : `not within ${fmt(r.timeToStableMs / 1000, 0)} s: ${fmt(r.stableCount, 0)} of ${r.deployments} STABLE`,
  );
  line('operator heap after settling, beyond the informer objects, per deployment', (r) => formatBytes(r.memory.heapPerDeploymentBytes), '≤ 5 KiB');
  line('informer objects, per deployment (heap of a structured clone)', (r) => formatBytes(r.memory.informerHeapPerDeploymentBytes));
  line('operator heap used after settling (after full GC)', (r) => formatBytes(r.memory.heapSettledBytes));
  line('operator RSS after settling', (r) => formatBytes(r.memory.rssSettledBytes));
  line('operator RSS growth per deployment', (r) => formatBytes(r.memory.rssPerDeploymentBytes));
  line(`steady state: operator CPU (reconcile interval ${settings.scaleReconcileIntervalMs / 1000} s)`, (r) => `${pct(r.steady.cpuFraction)} of a core`);
  line('steady state: CPU per periodic reconcile', (r) => `${fmt(r.steady.cpuMsPerReconcile, 2)} ms`);
  line('steady state: operator API requests in the window', (r) => fmt(r.steady.apiRequests, 0), '0');
  line(
    'steady state: projected CPU at the default 60 s interval',
    (r) => `${pct((r.steady.cpuMsPerReconcile * r.deployments) / 60_000)} of a core`,
    '≤ 10% at 10,000',
  );
  line('churn: spec changes per second, in % of the deployments', (r) => `${fmt(r.churn.percentPerSecond, 1)} %`);
  line('churn: spec changes', (r) => `${fmt(r.churn.changes, 0)} (${fmt(r.churn.completed, 0)} observed)`);
  line('churn: spec write → observedGeneration p50', (r) => `${fmt(r.churn.p50Ms, 0)} ms`);
  line('churn: spec write → observedGeneration p90', (r) => `${fmt(r.churn.p90Ms, 0)} ms`);
  line('churn: spec write → observedGeneration p99', (r) => `${fmt(r.churn.p99Ms, 0)} ms`, '< 1 s at 2,000 (1 %/s), < 2 s at 10,000 (0.2 %/s)');
  line('raw writes/s of the cluster (ConfigMap PUT + status merge patch, 32 in flight)', (r) => fmt(r.raw.writesPerSecond, 0));
  line('creation burst: operator writes per transition', (r) => fmt(r.burst.writesPerTransition, 2));
  line('creation burst: sustained transitions/s', (r) => fmt(r.burst.transitionsPerSecond, 1));
  line('creation burst: fraction of raw writes/s ÷ writes per transition', (r) => pct(r.burst.fractionOfLimit));
  line('creation burst: operator CPU per transition', (r) => `${fmt(r.burst.operatorCpuMsPerTransition, 2)} ms`, '≤ 1.5 ms');
  line(
    "creation burst: the operator's own requests per transition, Kubernetes API / Flink REST through the proxy",
    (r) => `${fmt(r.burst.operatorKubeRequestsPerTransition, 2)} / ${fmt(r.burst.operatorFlinkCallsPerTransition, 2)}`,
    '≤ 4 (Kubernetes API)',
  );
  line(
    "creation burst: fraction of raw writes/s ÷ the operator's own requests per transition, Kubernetes API only / Flink REST counted too",
    (r) => `${pct(r.burst.fractionOfOwnShareKube)} / ${pct(r.burst.fractionOfOwnShareWithFlink)}`,
    '≥ 40%',
  );
  line(
    'creation burst: API requests per transition, all actors / operator (Flink REST through the proxy included)',
    (r) => `${fmt(r.burst.requestsPerTransition, 1)} / ${fmt(r.burst.operatorRequestsPerTransition, 1)}`,
  );
  line(
    'creation burst: ceiling of the fraction from that mix (writes per transition ÷ requests per transition), all actors / operator alone',
    (r) => `${pct(r.burst.fractionCeiling)} / ${pct(r.burst.operatorFractionCeiling)}`,
  );
  line('creation burst: reconcile errors', (r) => fmt(r.burst.reconcileErrors, 0));
  line(
    'creation burst: API requests per deployment, operator / simulation (watches excluded)',
    (r) => `${fmt(r.burst.operatorRequestsPerDeployment, 1)} / ${fmt(r.burst.simulationRequestsPerDeployment, 1)}`,
  );
  for (const [phase, key] of [
    ['creation burst', 'burst'],
    ['steady state', 'steady'],
    ['churn', 'churn'],
  ] as const) {
    line(
      `${phase}: CPU (cores), operator / API server / simulation process`,
      (r) => `${fmt(r[key].load.operatorCpuFraction, 2)} / ${fmt(r[key].load.clusterCpuFraction, 2)} / ${fmt(r[key].load.simulationCpuFraction, 2)}`,
    );
    line(
      `${phase}: event-loop utilization, operator / API server / simulation process`,
      (r) =>
        `${pct(r[key].load.operatorEventLoopUtilization)} / ${pct(r[key].load.clusterEventLoopUtilization)} / ${pct(r[key].load.simulationEventLoopUtilization)}`,
    );
    line(
      `${phase}: share of API requests, simulation / operator`,
      (r) => `${pct(r[key].load.simulationRequestShare)} / ${pct(r[key].load.operatorRequestShare)}`,
    );
  }
  return rows;
}

function sizesLabel(scale: Record<number, ScaleRun>): string {
  const largest = Math.max(...Object.keys(scale).map(Number));
  return Number.isFinite(largest) ? `${largest.toLocaleString('en-US')} deployments` : 'no scale run';
}

function simulationBreakdown(scale: Record<number, ScaleRun>): string {
  const largest = Math.max(...Object.keys(scale).map(Number));
  const run = scale[largest];
  return run ? verbs(run.burst.simulationByRequest) : 'n/a';
}

export function renderResults(results: BenchResults): string {
  const s = results.settings;
  const cm = results.apiCost.configmap.length ? medianDeep(results.apiCost.configmap) : undefined;
  const legacy = results.apiCost.legacy.length ? medianDeep(results.apiCost.legacy) : undefined;
  const withSnapshots = results.apiCost.snapshotResources?.length ? medianDeep(results.apiCost.snapshotResources) : undefined;
  const scale: Record<number, ScaleRun> = {};
  for (const [n, runs] of Object.entries(results.scale)) scale[Number(n)] = medianDeep(runs);
  const lines = [
    RESULTS_BEGIN,
    `### Results of ${results.startedAt}`,
    '',
    `- command: \`${s.command}\` (${fmt(results.durationMs / 60_000, 1)} min)`,
    `- machine: ${results.machine}; load average at start ${results.loadAverageAtStart.join(' / ')}`,
    `- medians of ${s.runs} run(s), each in fresh processes (API server, ${s.simulationPlacement === 'separate' ? 'simulation, ' : ''}operator); seed ${s.seed}; warm-up before measuring (scale: raw-write phase + 20 deployments created and deleted)`,
    `- operator: \`parallelism\` ${s.parallelism}, \`progressCheckIntervalMs\` ${s.progressCheckIntervalMs}, \`flinkRestAccess\` apiserver-proxy; simulation: pod ready 30 ms, job start 30 ms, savepoint 50 ms, ${s.simulationPlacement === 'separate' ? "in its own process (its Flink REST answers reach the API server's service proxy over loopback HTTP)" : "inside the API server's process"}`,
    '',
    `#### API cost (reconcile interval ${s.apiCostReconcileIntervalMs / 1000} s for the periodic window)`,
    '',
    ...(cm && legacy ? apiCostTable(cm, legacy) : ['(not run)']),
    '',
    ...(cm && withSnapshots
      ? [
          'The same flows (ConfigMap layout) with the FlinkStateSnapshot CRD installed: savepoints recorded as resources (design/011).',
          '',
          ...snapshotResourceCostTable(cm, withSnapshots),
          '',
        ]
      : []),
    `#### Scale (churn ${s.churnMs / 1000} s)`,
    '',
    ...(Object.keys(scale).length ? scaleTable(scale, s) : ['(not run)']),
    '',
    `The simulation's requests per deployment in the creation burst (${sizesLabel(scale)}): ${simulationBreakdown(scale)}.`,
    '',
    ...(results.shards?.length ? [...renderShardResults(results.shards, medianDeep), ''] : []),
    RESULTS_END,
  ];
  return lines.join('\n');
}

/** Replaces the results block of `path` (or appends one). */
export function writeResults(path: string, block: string): void {
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Performance\n';
  const begin = current.indexOf(RESULTS_BEGIN);
  const end = current.indexOf(RESULTS_END);
  const next = begin >= 0 && end > begin ? current.slice(0, begin) + block + current.slice(end + RESULTS_END.length) : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(path, next);
}
