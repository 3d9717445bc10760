/**
 * Starts the benchmark's child processes (cluster-process.ts, simulation-process.ts unless the
 * simulation runs inside the cluster process, operator-process.ts: one, or several with `operators`,
 * e.g. one per shard) and talks to them: request/answer over the IPC channel, and each operator's
 * /metrics over HTTP. The operator methods take the operator's index (default 0, the first).
 *
 * Guarantees: `stop()` stops every child (gracefully, then SIGKILL after 10 s) and removes the
 * temporary directory; a child that dies early rejects every pending request.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { simulationKubeConfig } from '../src/devcluster/simulation/simulation-kube-config.js';
import type { StateLayout } from '../src/reconciler/reconciler-wiring.js';
import type { OperatorConfig } from '../src/runtime/operator-config.js';
import type { ClusterProcessOptions, ProcessUsage } from './cluster-process.js';
import type { SimulationProcessOptions } from './simulation-process.js';
import type { OperatorProcessOptions } from './operator-process.js';
import { BENCH_DRIVER_USER_AGENT, type TallyRow } from './request-tally.js';

/** A forked child with numbered requests over IPC. */
export class IpcChild {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited = false;
  readonly ready: Promise<Record<string, unknown>>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.ready = new Promise((resolve, reject) => {
      child.on('message', (message: { type?: string; id?: number; result?: unknown; error?: string }) => {
        if (message.type === 'ready') return resolve(message);
        const waiter = message.id !== undefined ? this.pending.get(message.id) : undefined;
        if (!waiter) return;
        this.pending.delete(message.id!);
        if (message.error !== undefined) waiter.reject(new Error(`${name}: ${message.error}`));
        else waiter.resolve(message.result);
      });
      child.on('exit', (code, signal) => {
        this.exited = true;
        const error = new Error(`${name} exited (code ${code}, signal ${signal})`);
        reject(error);
        for (const waiter of this.pending.values()) waiter.reject(error);
        this.pending.clear();
      });
    });
  }

  request<T>(op: string, arg?: unknown): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.name} has exited`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, op, arg });
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    this.request('stop').catch(() => {});
    await exited;
    clearTimeout(kill);
  }
}

/**
 * `BENCH_CPU_PROF=cluster|simulation|operator|both` (both = all; optionally `BENCH_CPU_PROF_DIR`,
 * default ./bench-profiles) runs that child with `--cpu-prof`: .cpuprofile files under DIR/<child>,
 * for bench/cpu-profile-summary.ts, Chrome DevTools or speedscope.
 */
function profilingArgv(which: 'cluster' | 'simulation' | 'operator'): string[] {
  const wanted = process.env.BENCH_CPU_PROF;
  if (wanted !== which && wanted !== 'both') return [];
  // one directory per process kind; the main thread's profile is the largest file (tsx's loader thread writes one too)
  return ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_CPU_PROF_DIR ?? 'bench-profiles', which)}`];
}

function forkTs(script: string, args: string[], extraExecArgv: string[] = []): ChildProcess {
  return fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    // 10,000 deployments: the cluster process holds ~150,000 objects (and their watch windows)
    execArgv: ['--import', 'tsx', '--max-old-space-size=8192', ...extraExecArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

export interface OperatorMetricsSample {
  rssBytes: number;
  heapUsedBytes: number;
  cpuSeconds: number;
  reconciles: number;
  reconcileErrors: number;
  /** leadership lost (flink_operator_leader_transitions_total{direction="lost"}) */
  leadershipLosses: number;
  /** side effects refused by the leadership fence */
  fencedSideEffects: number;
}

/** Where the simulated kubelet, controllers and Flink run (see cluster-process.ts). */
export type SimulationPlacement = 'separate' | 'in-process';

/** One operator process of a BenchWorld with several (`operators`): its flags over the shared `operatorFlags`, its own User-Agent. */
export interface OperatorProcessSpec {
  flags?: Partial<Record<keyof OperatorConfig, unknown>>;
  userAgent?: string;
}

/** The cluster process, the simulation process, the operator process(es) and the benchmark's own client (driver) configuration. */
export class BenchWorld {
  /** the first operator process (the only one unless `operators` named several) */
  readonly operator: IpcChild;
  readonly metricsUrl: string;

  private constructor(
    readonly dir: string,
    readonly cluster: IpcChild,
    /** undefined when the simulation runs inside the cluster process */
    readonly simulation: IpcChild | undefined,
    readonly operators: readonly IpcChild[],
    readonly metricsUrls: readonly string[],
    readonly driverKubeConfig: KubeConfig,
  ) {
    this.operator = operators[0];
    this.metricsUrl = metricsUrls[0];
  }

  static async start(options: {
    seed: number;
    stateLayout: StateLayout;
    operatorFlags: Partial<Record<keyof OperatorConfig, unknown>>;
    simulation?: Partial<Pick<ClusterProcessOptions, 'podReadyDelayMs' | 'jobStartDelayMs' | 'savepointDurationMs'>>;
    /** default 'separate' */
    simulationPlacement?: SimulationPlacement;
    /** The FlinkStateSnapshot CRD installed and handled (snapshot resources recorded). */
    snapshotResources?: boolean;
    /** Several operator processes (default: one, with `operatorFlags` and client-node's User-Agent). */
    operators?: readonly OperatorProcessSpec[];
  }): Promise<BenchWorld> {
    const dir = mkdtempSync(join(tmpdir(), 'flink-operator-bench-'));
    const kubeconfigPath = join(dir, 'kubeconfig');
    const placement = options.simulationPlacement ?? 'separate';
    const timing = { seed: options.seed, podReadyDelayMs: 30, jobStartDelayMs: 30, savepointDurationMs: 50, ...options.simulation };
    const clusterOptions: ClusterProcessOptions = { kubeconfigPath, simulation: placement, stateSnapshotCrd: options.snapshotResources ?? false, ...timing };
    const cluster = new IpcChild('cluster process', forkTs('./cluster-process.ts', [JSON.stringify(clusterOptions)], profilingArgv('cluster')));
    const started: IpcChild[] = [cluster];
    try {
      await cluster.ready;
      let simulation: IpcChild | undefined;
      if (placement === 'separate') {
        const simulationOptions: SimulationProcessOptions = { kubeconfigPath, ...timing };
        simulation = new IpcChild('simulation process', forkTs('./simulation-process.ts', [JSON.stringify(simulationOptions)], profilingArgv('simulation')));
        started.unshift(simulation);
        const { proxyUrl } = await simulation.ready;
        await cluster.request('proxyTo', proxyUrl);
      }
      const specs = options.operators ?? [{}];
      const operators = specs.map((spec, i) => {
        const operatorOptions: OperatorProcessOptions = {
          kubeconfigPath,
          stateLayout: options.stateLayout,
          flags: { ...options.operatorFlags, ...spec.flags },
          stateSnapshots: options.snapshotResources ?? false,
          ...(spec.userAgent !== undefined ? { userAgent: spec.userAgent } : {}),
        };
        const operator = new IpcChild(
          specs.length === 1 ? 'operator process' : `operator process ${i}`,
          forkTs('./operator-process.ts', [JSON.stringify(operatorOptions)], ['--expose-gc', ...profilingArgv('operator')]),
        );
        started.unshift(operator);
        return operator;
      });
      const ready = await Promise.all(operators.map((o) => o.ready));
      const base = new KubeConfig();
      base.loadFromFile(kubeconfigPath);
      return new BenchWorld(
        dir,
        cluster,
        simulation,
        operators,
        ready.map((r) => `http://127.0.0.1:${r.httpPort as number}/metrics`),
        simulationKubeConfig(base, BENCH_DRIVER_USER_AGENT),
      );
    } catch (error) {
      for (const child of started) await child.stop();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  tally(): Promise<TallyRow[]> {
    return this.cluster.request('tally');
  }

  resetTally(): Promise<void> {
    return this.cluster.request('reset');
  }

  clusterUsage(): Promise<ProcessUsage> {
    return this.cluster.request('usage');
  }

  /** The simulation process's usage; undefined when the simulation runs inside the cluster process. */
  async simulationUsage(): Promise<ProcessUsage | undefined> {
    return this.simulation?.request<ProcessUsage>('usage');
  }

  operatorUsage(index = 0): Promise<{ cpuSeconds: number; eventLoopUtilization: number }> {
    return this.operators[index].request('usage');
  }

  /** A scrape of the operator's /metrics (after a full GC when `collectGarbage`). */
  async operatorMetrics(collectGarbage = false, index = 0): Promise<OperatorMetricsSample> {
    if (collectGarbage) await this.operators[index].request('gc');
    const text = await (await fetch(this.metricsUrls[index])).text();
    const value = (name: string, labels?: string) => {
      let sum = 0;
      for (const line of text.split('\n')) {
        if (!line.startsWith(name)) continue;
        const rest = line.slice(name.length);
        if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
        if (labels && !rest.includes(labels)) continue;
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return sum;
    };
    return {
      rssBytes: value('flink_operator_process_resident_memory_bytes'),
      heapUsedBytes: value('flink_operator_nodejs_heap_size_used_bytes'),
      cpuSeconds: value('flink_operator_process_cpu_seconds_total'),
      reconciles: value('flink_operator_reconcile_total'),
      reconcileErrors: value('flink_operator_reconcile_total', 'result="error"'),
      leadershipLosses: value('flink_operator_leader_transitions_total', 'direction="lost"'),
      fencedSideEffects: value('flink_operator_fenced_side_effects_total'),
    };
  }

  private children(): IpcChild[] {
    return [...this.operators, this.cluster, ...(this.simulation ? [this.simulation] : [])];
  }

  /** Starts a CPU profile in every child (BENCH_PROFILE_PHASE, see scale-bench.ts). */
  async profileStart(): Promise<void> {
    await Promise.all(this.children().map((c) => c.request('profileStart')));
  }

  /** Stops the profiles; the paths of the .cpuprofile files (under BENCH_PROFILE_DIR). */
  async profileStop(): Promise<string[]> {
    return Promise.all(this.children().map((c) => c.request<string>('profileStop')));
  }

  informerHeapBytes(index = 0): Promise<number> {
    return this.operators[index].request('informerHeap');
  }

  async stop(): Promise<void> {
    await Promise.all(this.operators.map((operator) => operator.stop()));
    await this.simulation?.stop();
    await this.cluster.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
