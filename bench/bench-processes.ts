/**
 * Starts the benchmark's child processes (cluster-process.ts, simulation-process.ts unless the
 * simulation runs inside the cluster process, operator-process.ts) and talks to them:
 * request/answer over the IPC channel, and the operator's /metrics over HTTP.
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
    execArgv: ['--import', 'tsx', ...extraExecArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

export interface OperatorMetricsSample {
  rssBytes: number;
  heapUsedBytes: number;
  cpuSeconds: number;
  reconciles: number;
  reconcileErrors: number;
}

/** Where the simulated kubelet, controllers and Flink run (see cluster-process.ts). */
export type SimulationPlacement = 'separate' | 'in-process';

/** The cluster process, the simulation process, the operator process and the benchmark's own client (driver) configuration. */
export class BenchWorld {
  private constructor(
    readonly dir: string,
    readonly cluster: IpcChild,
    /** undefined when the simulation runs inside the cluster process */
    readonly simulation: IpcChild | undefined,
    readonly operator: IpcChild,
    readonly metricsUrl: string,
    readonly driverKubeConfig: KubeConfig,
  ) {}

  static async start(options: {
    seed: number;
    stateLayout: StateLayout;
    operatorFlags: Partial<Record<keyof OperatorConfig, unknown>>;
    simulation?: Partial<Pick<ClusterProcessOptions, 'podReadyDelayMs' | 'jobStartDelayMs' | 'savepointDurationMs'>>;
    /** default 'separate' */
    simulationPlacement?: SimulationPlacement;
    /** The FlinkStateSnapshot CRD installed and handled (snapshot resources recorded). */
    snapshotResources?: boolean;
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
      const operatorOptions: OperatorProcessOptions = {
        kubeconfigPath,
        stateLayout: options.stateLayout,
        flags: options.operatorFlags,
        stateSnapshots: options.snapshotResources ?? false,
      };
      const operator = new IpcChild(
        'operator process',
        forkTs('./operator-process.ts', [JSON.stringify(operatorOptions)], ['--expose-gc', ...profilingArgv('operator')]),
      );
      started.unshift(operator);
      const ready = await operator.ready;
      const base = new KubeConfig();
      base.loadFromFile(kubeconfigPath);
      return new BenchWorld(
        dir,
        cluster,
        simulation,
        operator,
        `http://127.0.0.1:${ready.httpPort as number}/metrics`,
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

  operatorUsage(): Promise<{ cpuSeconds: number; eventLoopUtilization: number }> {
    return this.operator.request('usage');
  }

  /** A scrape of the operator's /metrics (after a full GC when `collectGarbage`). */
  async operatorMetrics(collectGarbage = false): Promise<OperatorMetricsSample> {
    if (collectGarbage) await this.operator.request('gc');
    const text = await (await fetch(this.metricsUrl)).text();
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
    };
  }

  private children(): IpcChild[] {
    return [this.operator, this.cluster, ...(this.simulation ? [this.simulation] : [])];
  }

  /** Starts a CPU profile in every child (BENCH_PROFILE_PHASE, see scale-bench.ts). */
  async profileStart(): Promise<void> {
    await Promise.all(this.children().map((c) => c.request('profileStart')));
  }

  /** Stops the profiles; the paths of the .cpuprofile files (under BENCH_PROFILE_DIR). */
  async profileStop(): Promise<string[]> {
    return Promise.all(this.children().map((c) => c.request<string>('profileStop')));
  }

  informerHeapBytes(): Promise<number> {
    return this.operator.request('informerHeap');
  }

  async stop(): Promise<void> {
    await this.operator.stop();
    await this.simulation?.stop();
    await this.cluster.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
