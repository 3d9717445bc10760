/**
 * The crash test of issue 7: the operator runs as a child process (`flink-operator run`) against
 * the development cluster; during a savepoint upgrade it is killed with SIGKILL at random moments
 * (seeded) and restarted. Each run must converge to STABLE on the new spec with exactly one
 * savepoint taken for the upgrade, the new job restored from it, and no job id submitted twice.
 *
 * Used by test/e2e/crash-recovery.test.ts (a few seeds) and test/e2e/run-crash-test.ts (many).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startSimulatedCluster, type SimulatedCluster } from '../../src/devcluster/simulated-cluster.js';
import { installCrd, SESSION_JOB_CRD_FILE } from './operator-harness.js';
import { seededRandom } from '../../src/devcluster/simulation/simulation-random.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GROUP = 'flink.apache.org';

export interface CrashWorld {
  world: SimulatedCluster;
  kubeconfigPath: string;
  stop(): Promise<void>;
}

export async function startCrashWorld(): Promise<CrashWorld> {
  const world = await startSimulatedCluster({ simulation: { podReadyDelayMs: 30, jobStartDelayMs: 30, savepointDurationMs: 150 } });
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'crash-test-')), 'kubeconfig');
  writeFileSync(kubeconfigPath, world.cluster.kubeconfigYaml());
  // Both CRDs, as `kubectl apply -f crds/` installs them: `flink-operator run` watches both kinds.
  await installCrd(world.cluster.kubeConfig());
  await installCrd(world.cluster.kubeConfig(), SESSION_JOB_CRD_FILE);
  return { world, kubeconfigPath, stop: () => world.stop() };
}

export interface OperatorProcessOptions {
  /** More `run` flags after the defaults (a later flag wins), e.g. leader election or `--namespace`. */
  readonly extraArgs?: readonly string[];
  /** Output chunks kept (default 200). */
  readonly keepChunks?: number;
}

const liveProcesses = new Set<ChildProcess>();
let exitHookInstalled = false;

/** SIGKILLs every operator process still running (synchronous: usable from an `exit` handler). */
export function killAllOperatorProcesses(): void {
  for (const child of liveProcesses) child.kill('SIGKILL');
  liveProcesses.clear();
}

/**
 * One operator process: `node --import tsx src/cli/main.ts run` against the kubeconfig, Flink's REST
 * API through the API server's service proxy, short intervals, HTTP on 127.0.0.1 (any port). Keeps
 * the tail of its output; `kill()` (SIGKILL) resolves once it has exited. Processes still running
 * when this process exits are SIGKILLed (they would otherwise outlive the cluster).
 */
export class OperatorProcess {
  private readonly child: ChildProcess;
  readonly output: string[] = [];
  readonly exited: Promise<void>;
  private hasExited = false;
  private stopped = false;

  constructor(
    kubeconfigPath: string,
    readonly identity: string,
    options: OperatorProcessOptions = {},
  ) {
    this.child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'src/cli/main.ts'),
        'run',
        '--kubeconfig',
        kubeconfigPath,
        '--flink-rest-access',
        'apiserver-proxy',
        '--http-port',
        '0',
        '--http-host',
        '127.0.0.1',
        '--progress-check-interval',
        '50ms',
        '--reconcile-interval',
        '2s',
        '--requeue-jitter',
        '0',
        '--log-level',
        'warn',
        '--identity',
        identity,
        // leader election is on by default: short leases, so a restarted process (a new identity, as a new pod) takes over in ~1.5 s
        '--lease-namespace',
        'default',
        '--lease-duration',
        '1500ms',
        '--renew-deadline',
        '1000ms',
        '--retry-period',
        '200ms',
        ...(options.extraArgs ?? []),
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keepChunks = options.keepChunks ?? 200;
    const keep = (chunk: Buffer) => {
      this.output.push(chunk.toString());
      if (this.output.length > keepChunks) this.output.shift();
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    liveProcesses.add(this.child);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', killAllOperatorProcesses);
    }
    this.exited = new Promise((resolve) =>
      this.child.once('exit', () => {
        this.hasExited = true;
        liveProcesses.delete(this.child);
        resolve();
      }),
    );
  }

  /** Not exited yet (it may be stopped). */
  get alive(): boolean {
    return !this.hasExited;
  }

  /** Stopped with SIGSTOP and not continued yet. */
  get paused(): boolean {
    return this.stopped && !this.hasExited;
  }

  /** SIGSTOP: the process freezes (timers, sockets and all) until `resume()`. */
  pause(): void {
    if (this.hasExited) return;
    this.child.kill('SIGSTOP');
    this.stopped = true;
  }

  /** SIGCONT. */
  resume(): void {
    if (this.hasExited) return;
    this.child.kill('SIGCONT');
    this.stopped = false;
  }

  async kill(): Promise<void> {
    if (!this.hasExited) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** The kept output, each line prefixed with the identity. */
  tail(chars = 3_000): string {
    return this.output
      .join('')
      .slice(-chars)
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => `[${this.identity}] ${l}`)
      .join('\n');
  }
}

/**
 * What is going on while the operator gets killed. `non-running-upgrade`: a savepoint upgrade to an
 * image that never starts, then the fix (the kills fall during the fix: the JobManager that never
 * started is replaced and the job restores from the upgrade savepoint). `jobmanager-recovery`: the
 * JobManager Deployment of an HA job is deleted (the kills fall during its recovery: the same job
 * id is recovered from Flink's HA metadata, no savepoint, no new job id).
 */
export type CrashScenario = 'savepoint-upgrade' | 'manual-savepoint' | 'rollback' | 'non-running-upgrade' | 'jobmanager-recovery';

export interface CrashRunResult {
  scenario: CrashScenario | 'session-job-upgrade' | 'snapshot-resources';
  seed: number;
  kills: number;
  /** The persisted step found in the state ConfigMap right after each kill. */
  killedDuring: string[];
  savepointsForUpgrade: number;
  /** Savepoints the scenario must take (1, or 0 for a recovery through HA). */
  expectedSavepoints: number;
  submissions: number;
  restoredFromUpgradeSavepoint: boolean;
  duplicateJobIds: string[];
  converged: boolean;
  durationMs: number;
  detail: string;
  /** Invariants a scenario checks itself, each broken one described (snapshot-crash.ts). */
  violations?: string[];
}

export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

interface ScenarioPlan {
  /** The FlinkDeployment to create. */
  body: FlinkDeploymentV1;
  /** The change made once it is STABLE (a merge patch of the FlinkDeployment), or an action on the cluster. */
  change: Record<string, unknown> | ((kc: KubeConfig, name: string) => Promise<void>);
  /** A second change, made once the first has reached `afterFirst`; the kills fall after it. */
  then?: { when: (d: FlinkDeploymentV1) => boolean; change: Record<string, unknown> };
  /** When the run is over. */
  done: (d: FlinkDeploymentV1) => boolean;
  /** Kill delays are drawn from [0, this) ms. */
  killWindowMs: number;
  /** Expected lineage: savepoints taken after the change, submissions in total. */
  expectedSavepoints: number;
  expectedSubmissions: number;
}

function plan(scenario: CrashScenario, name: string): ScenarioPlan {
  const base = flinkDeployment(name).withSpec({ job: { upgradeMode: 'savepoint' } });
  const stableAt = (generation: number) => (d: FlinkDeploymentV1) =>
    d.status?.lifecycleState === 'STABLE' && d.status.observedGeneration === generation && d.status.jobStatus?.state === 'RUNNING';
  switch (scenario) {
    case 'savepoint-upgrade':
      return {
        body: base.build(),
        change: { spec: { image: 'flink:1.20.1' } },
        done: stableAt(2),
        killWindowMs: 400,
        expectedSavepoints: 1,
        expectedSubmissions: 2,
      };
    case 'manual-savepoint':
      return {
        body: base.build(),
        change: { spec: { job: { savepointTriggerNonce: 1 } } },
        done: (d) => stableAt(2)(d) && d.status?.jobStatus?.lastSavepoint?.triggerType === 'MANUAL',
        killWindowMs: 500,
        expectedSavepoints: 1,
        expectedSubmissions: 1,
      };
    case 'non-running-upgrade':
      return {
        body: base.build(),
        change: { spec: { image: 'flink:missing' } },
        // The upgrade savepoint is taken and the new JobManager never pulls its image.
        then: {
          when: (d) => d.status?.observedGeneration === 2 && d.status.jobManagerDeploymentStatus === 'ERROR',
          change: { spec: { image: 'flink:1.20.1' } },
        },
        done: stableAt(3),
        killWindowMs: 400,
        expectedSavepoints: 1,
        expectedSubmissions: 2,
      };
    case 'jobmanager-recovery':
      return {
        body: base
          .withFlinkConfiguration({
            'high-availability.type': 'kubernetes',
            'high-availability.storageDir': 'file:///flink-data/ha',
            'execution.checkpointing.interval': '100 ms',
          })
          .build(),
        change: async (kc, name) => {
          await new Promise((r) => setTimeout(r, 400)); // a checkpoint in the HA store first
          await kc.makeApiClient(AppsV1Api).deleteNamespacedDeployment({ namespace: 'default', name });
        },
        done: (d) => stableAt(1)(d) && d.status?.jobManagerDeploymentStatus === 'READY',
        killWindowMs: 500,
        expectedSavepoints: 0,
        expectedSubmissions: 1,
      };
    case 'rollback':
      return {
        body: base
          .withFlinkConfiguration({ 'kubernetes.operator.deployment.rollback.enabled': 'true', 'kubernetes.operator.deployment.readiness.timeout': '3 s' })
          .build(),
        change: { spec: { image: 'flink:crashloop' } },
        done: (d) => d.status?.lifecycleState === 'ROLLED_BACK' && d.status.jobStatus?.state === 'RUNNING',
        killWindowMs: 4000,
        expectedSavepoints: 1,
        expectedSubmissions: 2,
      };
  }
}

/**
 * One run: deploy, make the scenario's change, kill the operator 1–2 times at random moments while
 * it carries the change out, restart it each time, and check the lineage.
 */
export async function crashRun(world: CrashWorld, seed: number, scenario: CrashScenario = 'savepoint-upgrade'): Promise<CrashRunResult> {
  const started = Date.now();
  const random = seededRandom(seed);
  const name = `${scenario === 'savepoint-upgrade' ? 'crash' : scenario}-${seed}`;
  const p = plan(scenario, name);
  const kc = world.world.cluster.kubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const read = async () =>
    (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'flinkdeployments', name })) as FlinkDeploymentV1;
  const when = (predicate: (d: FlinkDeploymentV1) => boolean) => async () => {
    const d = await read();
    return predicate(d) ? d : undefined;
  };

  let operator = new OperatorProcess(world.kubeconfigPath, `${name}-op`);
  const killedDuring: string[] = [];
  try {
    await custom.createNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: 'flinkdeployments', body: p.body });
    const before = await until(
      when((d) => d.status?.lifecycleState === 'STABLE' && d.status.jobStatus?.state === 'RUNNING'),
      30_000,
      `${name} STABLE before the change`,
    );
    const changedAt = Date.now();
    const patch = (body: Record<string, unknown>) =>
      custom.patchNamespacedCustomObject(
        { group: GROUP, version: 'v1', namespace: 'default', plural: 'flinkdeployments', name, body },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    if (typeof p.change === 'function') await p.change(kc, name);
    else await patch(p.change);
    if (p.then) {
      await until(when(p.then.when), 30_000, `${name} after the first change`);
      await patch(p.then.change);
    }
    const kills = random() < 0.5 ? 1 : 2;
    for (let k = 0; k < kills; k++) {
      await new Promise((r) => setTimeout(r, Math.floor(random() * p.killWindowMs)));
      await operator.kill();
      const cm = await core.readNamespacedConfigMap({ namespace: 'default', name: `${name}-operator-state` }).catch(() => undefined);
      const data = cm?.data ?? {};
      const pending = data.pendingOperation ?? '';
      killedDuring.push(
        pending.includes('pendingSavepoint')
          ? 'savepoint pending'
          : pending.includes('jobIdToSubmit')
            ? `${data.phase} deploy pending`
            : `${data.phase ?? 'no state'} (rev ${data.revision})`,
      );
      await new Promise((r) => setTimeout(r, Math.floor(random() * 200)));
      operator = new OperatorProcess(world.kubeconfigPath, `${name}-op-${k + 1}`);
    }
    const after = await until(when(p.done), 45_000, `${name} done after the change`);

    const lineage = world.world.simulation.lineage('default', name);
    const newSavepoints = lineage.savepoints.filter((s) => Date.parse(s.triggeredAt) >= changedAt);
    // A job recovered from HA metadata is the same job continuing, not a second submission of its id.
    const submitted = lineage.submissions.filter((s) => s.origin === 'submitted');
    const ids = submitted.map((s) => s.jobId);
    const duplicateJobIds = ids.filter((id, i) => ids.indexOf(id) !== i);
    const newest = lineage.submissions.at(-1);
    const completed = newSavepoints.filter((s) => s.status === 'COMPLETED');
    const restored =
      scenario === 'manual-savepoint'
        ? newest?.jobId === before.status?.jobStatus?.jobId && after.status?.jobStatus?.lastSavepoint?.location === completed[0]?.location
        : scenario === 'jobmanager-recovery'
          ? newest?.origin === 'ha-recovered' && newest.jobId === before.status?.jobStatus?.jobId && after.status?.jobStatus?.jobId === newest.jobId
          : completed.length === 1 && newest?.restoredFrom === completed[0].location && newest.jobId === after.status?.jobStatus?.jobId;
    return {
      scenario,
      seed,
      kills,
      killedDuring,
      savepointsForUpgrade: newSavepoints.length,
      expectedSavepoints: p.expectedSavepoints,
      submissions: submitted.length,
      restoredFromUpgradeSavepoint: restored,
      duplicateJobIds,
      converged: p.done(after) && newSavepoints.length === p.expectedSavepoints && submitted.length === p.expectedSubmissions,
      durationMs: Date.now() - started,
      detail: JSON.stringify({ savepoints: lineage.savepoints, submissions: lineage.submissions }),
    };
  } catch (error) {
    throw new Error(
      `${scenario} seed ${seed} (killed during: ${killedDuring.join(', ')}): ${(error as Error).message}\noperator output:\n${operator.output.join('').slice(-3000)}`,
    );
  } finally {
    await operator.kill();
  }
}

/** True when a run kept every invariant. */
export function runKeptInvariants(r: CrashRunResult): boolean {
  return (
    r.converged &&
    r.savepointsForUpgrade === r.expectedSavepoints &&
    r.restoredFromUpgradeSavepoint &&
    r.duplicateJobIds.length === 0 &&
    (r.violations ?? []).length === 0
  );
}
