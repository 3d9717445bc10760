/**
 * The chaos test: the operator runs as child processes (`flink-operator run`, two of them with
 * leader election and short leases) against the development cluster, while a seeded sequence of
 * user actions (savepoint or last-state upgrades, manual savepoints, suspend and resume, rollback)
 * is carried out and faults are injected at seeded random moments: SIGKILL of the leader, SIGSTOP of
 * the leader past its lease, a second instance without leader election, the state ConfigMap
 * deleted or put back to an older copy, status hand-edits, a Flink REST outage, ~10% failing API
 * writes. Every run ends with all faults removed, waits for convergence, and judges what happened
 * by the simulated Flink's lineage record:
 *
 *   1. no job id submitted twice (origin `submitted`; `ha-recovered` repeats are last-state);
 *   2. no job ended without a savepoint: every later submission restores from a completed savepoint
 *      (or a checkpoint) of this deployment, every job but the running one ended by a completed
 *      stop-with-savepoint (or is still held by Flink HA after a last-state suspend), nothing
 *      cancelled;
 *   3. exactly one completed savepoint per upgrade / suspend / manual nonce (stop-with-savepoint for
 *      upgrades and suspends, a savepoint for nonces; at most one for last-state), none otherwise;
 *   4. every new job restored from the newest completed savepoint (or a newer checkpoint) that
 *      existed when it was submitted;
 *   5. converged to the spec (STABLE/RUNNING, SUSPENDED or ROLLED_BACK on the current generation,
 *      the status naming the running job, the deployed resources rendering the spec).
 *
 * Everything random (the mix of actions and faults, their moments and durations) comes from
 * seededRandom(seed), so `--seed S` replays the same plan; process and network timing still vary.
 *
 * Used by test/e2e/chaos.test.ts (a few seeds), test/e2e/run-chaos-test.ts (`npm run test:chaos`)
 * and test/e2e/leadership-faults.test.ts (the helpers and the lineage checks).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
  type V1Deployment,
} from '@kubernetes/client-node';
import { flinkDeployment } from '../../src/api/flink-deployment-builder.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import { startSimulatedCluster, type LineageRecord, type SimulatedCluster } from '../../src/devcluster/simulated-cluster.js';
import type { FaultFailure, FaultMatch } from '../../src/devcluster/apiserver/faults.js';
import { parseFlinkConfigYaml } from '../../src/devcluster/simulation/flink-configuration.js';
import { randomHex, seededRandom, type RandomSource } from '../../src/devcluster/simulation/simulation-random.js';
import type { StoredSnapshot } from '../../src/devcluster/simulation/snapshot-storage.js';
import { OperatorProcess } from './crash-recovery.js';
import { installCrd, SESSION_JOB_CRD_FILE, STATE_SNAPSHOT_CRD_FILE } from './operator-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GROUP = 'flink.apache.org';
const VERSION = 'v1';
const PLURAL = 'flinkdeployments';
export const LEASE_NAMESPACE = 'default';

/** Short leases, so a standby takes over within ~1.5 s (the flags `flink-operator run` takes). */
export const SHORT_LEASE_ARGS = ['--lease-duration', '1500ms', '--renew-deadline', '1000ms', '--retry-period', '200ms'] as const;
/** How long a SIGSTOP must last at least to outlive the lease (lease duration + margin). */
const LEASE_DURATION_MS = 1_500;

export const HA_CONFIGURATION = {
  'high-availability.type': 'kubernetes',
  'high-availability.storageDir': 'file:///flink-data/ha',
  'execution.checkpointing.interval': '100 ms',
} as const;

// ------------------------------------------------------------------------------------ small tools

/** Resolves after `ms`, or at once when `signal` aborts (never rejects); the timer is always cleared. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Polls `probe` every `intervalMs` until it returns a value (errors count as "not yet"); resolves
 * undefined after `timeoutMs` (or when `signal` aborts).
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  intervalMs = 100,
  signal?: AbortSignal,
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    try {
      value = await probe();
    } catch {
      value = undefined;
    }
    if (value !== undefined) return value;
    if (Date.now() >= deadline || signal?.aborted) return undefined;
    await sleep(Math.min(intervalMs, Math.max(1, deadline - Date.now())), signal);
  }
}

/** As pollUntil, but throws `timed out waiting for <what>` (with `detail()` appended) on timeout. */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
  detail?: () => Promise<string> | string,
): Promise<T> {
  const value = await pollUntil(probe, timeoutMs);
  if (value !== undefined) return value;
  const extra = detail ? `: ${await Promise.resolve(detail()).catch((e: unknown) => String(e))}` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${extra}`);
}

function errorCode(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Retries a harness request through injected API faults (409, 429, 5xx, a lost connection). */
export async function retrying<T>(what: string, fn: () => Promise<T>, attempts = 12): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (error) {
      last = error;
      const code = errorCode(error);
      const transient = code === undefined || code === 409 || code === 429 || code >= 500;
      if (!transient) throw error;
      await sleep(50 * (i + 1));
    }
  }
  throw new Error(`${what}: still failing after ${attempts} attempts: ${(last as Error)?.message ?? String(last)}`);
}

/**
 * A `FaultMatch.path` that is a predicate: FaultInjector tests `path instanceof RegExp` and calls
 * `.test(path?query)` for every request it sees (fail rules until one matches, every delay rule),
 * so a RegExp whose `test` is overridden lets a rule match only while it is switched on, only a
 * fraction of the requests, or act the moment a request arrives (no change to src/devcluster).
 */
export class GatedPattern extends RegExp {
  constructor(private readonly gate: (pathAndQuery: string) => boolean) {
    super('(?:)');
  }

  override test(pathAndQuery: string): boolean {
    return this.gate(pathAndQuery);
  }
}

// ----------------------------------------------------------------------------------- the world

export interface ChaosWorld {
  readonly world: SimulatedCluster;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  /** `flink-operator run --help` lists the option `--no-leader-elect`. */
  readonly noLeaderElectFlag: boolean;
  /** Runs per seed so far: a seed run again gets fresh names (the lineage is kept per namespace/name). */
  readonly runsBySeed: Map<number, number>;
  stop(): Promise<void>;
}

/** `flink-operator run --help`, to see which flags this operator takes (bounded: 30 s). */
export async function operatorRunHelp(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'run', '--help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 30_000)))]);
  clearTimeout(timer);
  if (child.exitCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
  return out;
}

/** One development cluster (API server + simulated kubelet and Flink) in this process, the CRD installed. */
export async function startChaosWorld(): Promise<ChaosWorld> {
  const help = operatorRunHelp();
  const world = await startSimulatedCluster({ simulation: { podReadyDelayMs: 30, jobStartDelayMs: 30, savepointDurationMs: 150 } });
  try {
    const kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'chaos-test-')), 'kubeconfig');
    writeFileSync(kubeconfigPath, world.cluster.kubeconfigYaml());
    await installCrd(world.cluster.kubeConfig());
    await installCrd(world.cluster.kubeConfig(), SESSION_JOB_CRD_FILE);
    // All of crds/, as `kubectl apply -f crds/` installs them: the operator records its savepoints as FlinkStateSnapshots under the faults too.
    await installCrd(world.cluster.kubeConfig(), STATE_SNAPSHOT_CRD_FILE);
    const noLeaderElectFlag = /^\s+--no-leader-elect\b/m.test(await help); // an option line, not a mention in a description
    return { world, kubeconfigPath, kubeConfig: world.cluster.kubeConfig(), noLeaderElectFlag, runsBySeed: new Map(), stop: () => world.stop() };
  } catch (error) {
    await world.stop();
    throw error;
  }
}

/**
 * The flags of an instance without leader election, configured otherwise like the leader-elect ones
 * (same Lease name and namespace, short timings): `--no-leader-elect` where it exists, else none
 * (election is off by default there, and the Lease flags are then unused).
 */
export function withoutLeaderElectionArgs(world: ChaosWorld, leaseName: string): string[] {
  return [...(world.noLeaderElectFlag ? ['--no-leader-elect'] : []), '--lease-name', leaseName, '--lease-namespace', LEASE_NAMESPACE, ...SHORT_LEASE_ARGS];
}

/** Leader-election flags for a process competing for `leaseName` with short leases. */
export function leaderElectionArgs(leaseName: string): string[] {
  return ['--leader-elect', '--lease-name', leaseName, '--lease-namespace', LEASE_NAMESPACE, ...SHORT_LEASE_ARGS];
}

// ------------------------------------------------------------------------ one FlinkDeployment

/** Typed access to one FlinkDeployment and its objects; writes go through `retrying`. */
export class DeploymentHandle {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly coordination: CoordinationV1Api;

  constructor(
    kubeConfig: KubeConfig,
    readonly namespace: string,
    readonly name: string,
  ) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.apps = kubeConfig.makeApiClient(AppsV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  get stateConfigMapName(): string {
    return `${this.name}-operator-state`;
  }

  async ensureNamespace(): Promise<void> {
    await retrying('create namespace', async () => {
      try {
        await this.core.createNamespace({ body: { metadata: { name: this.namespace } } });
      } catch (error) {
        if (errorCode(error) !== 409) throw error;
        const existing = await this.core.readNamespace({ name: this.namespace });
        if (existing.metadata?.deletionTimestamp) throw error; // still terminating: retry
      }
    });
  }

  async read(): Promise<FlinkDeploymentV1 | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural: PLURAL,
        name: this.name,
      })) as FlinkDeploymentV1;
    } catch (error) {
      if (errorCode(error) === 404) return undefined;
      throw error;
    }
  }

  async create(body: FlinkDeploymentV1): Promise<FlinkDeploymentV1> {
    return retrying('create FlinkDeployment', async () => {
      try {
        return (await this.custom.createNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: this.namespace,
          plural: PLURAL,
          body,
        })) as FlinkDeploymentV1;
      } catch (error) {
        if (errorCode(error) === 409) {
          const existing = await this.read();
          if (existing) return existing;
        }
        throw error;
      }
    });
  }

  /** A JSON merge patch of the main resource (what `kubectl patch --type merge` sends). */
  async patch(body: Record<string, unknown>): Promise<FlinkDeploymentV1> {
    return retrying(
      'patch FlinkDeployment',
      async () =>
        (await this.custom.patchNamespacedCustomObject(
          { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name: this.name, body },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )) as FlinkDeploymentV1,
    );
  }

  /** A JSON merge patch of /status (a user hand-editing the status). */
  async patchStatus(status: Record<string, unknown>): Promise<void> {
    await retrying('patch FlinkDeployment status', () =>
      this.custom.patchNamespacedCustomObjectStatus(
        { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name: this.name, body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  async configMap(name: string): Promise<V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ namespace: this.namespace, name });
    } catch (error) {
      if (errorCode(error) === 404) return undefined;
      throw error;
    }
  }

  stateConfigMap(): Promise<V1ConfigMap | undefined> {
    return this.configMap(this.stateConfigMapName);
  }

  flinkConfigMap(): Promise<V1ConfigMap | undefined> {
    return this.configMap(`flink-config-${this.name}`);
  }

  async jobManagerDeployment(): Promise<V1Deployment | undefined> {
    try {
      return await this.apps.readNamespacedDeployment({ namespace: this.namespace, name: this.name });
    } catch (error) {
      if (errorCode(error) === 404) return undefined;
      throw error;
    }
  }

  /** Deletes the state ConfigMap; false when there was none. */
  async deleteStateConfigMap(): Promise<boolean> {
    return retrying('delete state ConfigMap', async () => {
      try {
        await this.core.deleteNamespacedConfigMap({ namespace: this.namespace, name: this.stateConfigMapName });
        return true;
      } catch (error) {
        if (errorCode(error) === 404) return false;
        throw error;
      }
    });
  }

  /**
   * Puts an older copy of the state ConfigMap back: its data, binaryData and annotations on the
   * current object (PUT with the current resourceVersion; created from the copy when missing).
   * Returns what was replaced.
   */
  async restoreStateConfigMap(old: V1ConfigMap): Promise<{ from: string; to: string }> {
    return retrying('put back an old state ConfigMap', async () => {
      const current = await this.stateConfigMap();
      if (!current) {
        const body: V1ConfigMap = {
          metadata: {
            name: this.stateConfigMapName,
            namespace: this.namespace,
            labels: old.metadata?.labels,
            annotations: old.metadata?.annotations,
            ownerReferences: old.metadata?.ownerReferences,
          },
          data: old.data,
          binaryData: old.binaryData,
        };
        await this.core.createNamespacedConfigMap({ namespace: this.namespace, body });
        return { from: 'missing', to: `revision ${old.data?.revision ?? '?'}` };
      }
      const body: V1ConfigMap = {
        ...current,
        metadata: { ...current.metadata, annotations: old.metadata?.annotations },
        data: old.data,
        binaryData: old.binaryData,
      };
      await this.core.replaceNamespacedConfigMap({ namespace: this.namespace, name: this.stateConfigMapName, body });
      return { from: `revision ${current.data?.revision ?? '?'}`, to: `revision ${old.data?.revision ?? '?'}` };
    });
  }

  /** Job ids Flink's Kubernetes HA metadata holds for this deployment (`jobGraph-<id>` keys). */
  async haJobIds(): Promise<string[]> {
    const list = await this.core.listNamespacedConfigMap({ namespace: this.namespace, labelSelector: `app=${this.name},configmap-type=high-availability` });
    const ids = new Set<string>();
    for (const cm of list.items) for (const key of Object.keys(cm.data ?? {})) if (key.startsWith('jobGraph-')) ids.add(key.slice('jobGraph-'.length));
    return [...ids];
  }

  async leaseHolder(leaseName: string): Promise<string | undefined> {
    try {
      const lease = await this.coordination.readNamespacedLease({ namespace: LEASE_NAMESPACE, name: leaseName });
      return lease.spec?.holderIdentity || undefined;
    } catch (error) {
      if (errorCode(error) === 404) return undefined;
      throw error;
    }
  }

  /**
   * Deletes the FlinkDeployment and waits (bounded) for the operator to finish it; strips the
   * finalizers when it does not. Then deletes the namespace (not waited for long).
   */
  async cleanUp(waitMs = 10_000): Promise<void> {
    await this.custom
      .deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name: this.name })
      .catch(() => undefined);
    const gone = await pollUntil(async () => ((await this.read()) === undefined ? true : undefined), waitMs, 100);
    if (!gone) {
      await this.custom
        .patchNamespacedCustomObject(
          { group: GROUP, version: VERSION, namespace: this.namespace, plural: PLURAL, name: this.name, body: { metadata: { finalizers: null } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .catch(() => undefined);
    }
    await this.core.deleteNamespace({ name: this.namespace }).catch(() => undefined);
  }
}

// -------------------------------------------------------------------------- convergence gates

/**
 * `REPORTED`: a rollback whose target (`lastStableSpec`, which lives only in the state ConfigMap)
 * was lost with the state during it (design/004 caveat): the operator cannot roll back, so the
 * status must say the broken spec failed (status.error) on the current generation instead.
 */
export type Expectation = 'RUNNING' | 'SUSPENDED' | 'ROLLED_BACK' | 'REPORTED';

/** What the status must say: the lifecycle and job state of `expectation`, on the current generation. */
export function statusConverged(d: FlinkDeploymentV1 | undefined, expectation: Expectation): boolean {
  const s = d?.status;
  if (!d || !s || s.observedGeneration === undefined || s.observedGeneration !== d.metadata.generation) return false;
  switch (expectation) {
    case 'RUNNING':
      return s.lifecycleState === 'STABLE' && s.jobStatus?.state === 'RUNNING';
    case 'SUSPENDED':
      return s.lifecycleState === 'SUSPENDED';
    case 'ROLLED_BACK':
      return s.lifecycleState === 'ROLLED_BACK' && s.jobStatus?.state === 'RUNNING';
    case 'REPORTED':
      return s.lifecycleState !== 'STABLE' && typeof s.error === 'string' && s.error.length > 0;
  }
}

/** A one-line summary of a FlinkDeployment's status, for failure details. */
export function describeStatus(d: FlinkDeploymentV1 | undefined): string {
  if (!d) return 'no FlinkDeployment';
  const s = d.status;
  const error = s?.error ? `, error "${String(s.error).slice(0, 200)}"` : '';
  return (
    `generation ${d.metadata.generation}, observedGeneration ${s?.observedGeneration}, lifecycle ${s?.lifecycleState}, job ${s?.jobStatus?.jobId} ${s?.jobStatus?.state}, ` +
    `JobManager ${s?.jobManagerDeploymentStatus}, lastSavepoint ${s?.jobStatus?.lastSavepoint?.location ?? '-'} (${s?.jobStatus?.lastSavepoint?.triggerType ?? '-'})${error}`
  );
}

/** The jobs of the simulated JobManagers running for `namespace/name` (JobManager pod → jobs). */
export function runningJobs(world: SimulatedCluster, namespace: string, name: string): Array<{ pod: string; jobId: string; state: string }> {
  const out: Array<{ pod: string; jobId: string; state: string }> = [];
  for (const jm of world.simulation.jobManagers()) {
    if (jm.isStopped || jm.deployment.namespace !== namespace || jm.deployment.name !== name) continue;
    for (const job of jm.listJobs()) out.push({ pod: jm.pod.name, jobId: job.jobId, state: job.state });
  }
  return out;
}

const NON_TERMINAL = new Set(['INITIALIZING', 'CREATED', 'RUNNING', 'RESTARTING', 'CANCELLING', 'FAILING', 'SUSPENDED', 'RECONCILING']);

// ---------------------------------------------------------------------------- lineage checks

export type InvariantName =
  | '1 no job id submitted twice'
  | '2 no stop without a savepoint'
  | '3 one savepoint per action'
  | '4 restored from the newest savepoint'
  | '5 converged to the spec'
  | '6 no snapshot resource twice';

export const INVARIANTS: readonly InvariantName[] = [
  '1 no job id submitted twice',
  '2 no stop without a savepoint',
  '3 one savepoint per action',
  '4 restored from the newest savepoint',
  '5 converged to the spec',
  '6 no snapshot resource twice',
];

export interface Violation {
  readonly invariant: InvariantName;
  readonly detail: string;
}

export type UpgradeMode = 'savepoint' | 'last-state';
export type ActionKind = 'upgrade' | 'manual-savepoint' | 'suspend' | 'resume' | 'rollback';
export const ACTION_KINDS: readonly ActionKind[] = ['upgrade', 'manual-savepoint', 'suspend', 'resume', 'rollback'];

/** A user action as the lineage checks need it. */
export interface CheckedAction {
  readonly kind: ActionKind;
  /** Epoch ms at which the change was sent; the action's window lasts until the next one's. */
  readonly startedAt: number;
  /** e.g. `#2 upgrade (chaos.revision=2)`. */
  readonly label: string;
}

/** A snapshot seen in the simulated storage while the run went on. */
export interface SeenSnapshot extends StoredSnapshot {
  readonly firstSeenAt: number;
}

export interface LineageCheckInput {
  readonly lineage: LineageRecord;
  readonly mode: UpgradeMode;
  readonly actions: readonly CheckedAction[];
  /** Epoch ms of the run's start (times in details are relative to it). */
  readonly t0: number;
  /** Savepoints and checkpoints seen in the simulated storage (location → what it was). */
  readonly snapshots?: ReadonlyMap<string, SeenSnapshot>;
  /** The job the deployment runs at the end (undefined when suspended or unknown). */
  readonly finalJobId?: string;
  readonly finalSuspended: boolean;
  /** Job ids Flink's HA metadata still holds at the end (a last-state suspend keeps the job there). */
  readonly haJobIds?: readonly string[];
}

const CHECKPOINT_PATH = /\/([0-9a-f]{32})\/chk-(\d+)$/;

/** Invariants 1–4 from the lineage (5 needs the objects: see chaosRun). */
export function checkLineage(input: LineageCheckInput): Violation[] {
  const { lineage, t0 } = input;
  const rel = (iso: string | null | undefined) => (iso ? `+${((Date.parse(iso) - t0) / 1000).toFixed(1)}s` : '?');
  const out: Violation[] = [];
  const submissions = lineage.submissions;
  const completed = lineage.savepoints.filter((s) => s.status === 'COMPLETED' && s.location);
  const completedLocations = new Set(completed.map((s) => s.location!));
  const jobIds = new Set(submissions.map((s) => s.jobId));

  // 1: no job id submitted twice
  const submittedBy = new Map<string, typeof submissions>();
  for (const s of submissions) if (s.origin === 'submitted') submittedBy.set(s.jobId, [...(submittedBy.get(s.jobId) ?? []), s]);
  for (const [jobId, list] of submittedBy) {
    if (list.length > 1) {
      out.push({
        invariant: '1 no job id submitted twice',
        detail: `job ${jobId} submitted ${list.length} times: ${list.map((s) => `${rel(s.at)} on ${s.podName} from ${s.restoredFrom ?? 'nothing'}`).join('; ')}`,
      });
    }
  }

  // 2a: every later submission restores from a completed savepoint or a checkpoint of this deployment
  const isOwnCheckpoint = (path: string) => {
    const m = CHECKPOINT_PATH.exec(path);
    return m !== null && jobIds.has(m[1]);
  };
  submissions.forEach((s, i) => {
    if (i === 0 || s.origin !== 'submitted') return;
    if (s.restoredFrom === null) {
      out.push({
        invariant: '2 no stop without a savepoint',
        detail: `job ${s.jobId} submitted at ${rel(s.at)} on ${s.podName} without any restore path (state lost)`,
      });
    } else if (!completedLocations.has(s.restoredFrom) && !isOwnCheckpoint(s.restoredFrom)) {
      out.push({
        invariant: '2 no stop without a savepoint',
        detail: `job ${s.jobId} submitted at ${rel(s.at)} restored from ${s.restoredFrom}, which is neither a completed savepoint nor a checkpoint of this deployment`,
      });
    }
  });
  // 2b: every job but the running one ended by a completed stop-with-savepoint (or is still in HA after a last-state suspend)
  const lastAppearance = new Map<string, number>();
  for (const s of submissions) lastAppearance.set(s.jobId, Math.max(lastAppearance.get(s.jobId) ?? 0, Date.parse(s.at)));
  for (const [jobId, lastAt] of lastAppearance) {
    if (jobId === input.finalJobId) continue;
    const stopped = completed.some((p) => p.jobId === jobId && p.kind === 'stop-with-savepoint' && Date.parse(p.triggeredAt) >= lastAt - 5);
    if (stopped) continue;
    const lastJob = submissions.at(-1)?.jobId === jobId;
    if (input.finalSuspended && lastJob && input.mode === 'last-state' && (input.haJobIds ?? []).includes(jobId)) continue;
    const savepoints =
      lineage.savepoints
        .filter((p) => p.jobId === jobId)
        .map((p) => `${p.kind} ${p.status}`)
        .join(', ') || 'none';
    out.push({
      invariant: '2 no stop without a savepoint',
      detail: `job ${jobId} (last started ${rel(new Date(lastAt).toISOString())}) ended without a completed stop-with-savepoint after it started (its savepoints: ${savepoints})`,
    });
  }
  for (const c of lineage.cancellations) {
    out.push({ invariant: '2 no stop without a savepoint', detail: `job ${c.jobId} cancelled at ${rel(c.at)} (nobody asked for a cancellation)` });
  }

  // 3: one completed savepoint per action, attributed by trigger time to the action window it fell in
  const windows: Array<{ label: string; kind: ActionKind | 'initial'; from: number; to: number }> = [];
  const firstAction = input.actions[0]?.startedAt ?? Number.POSITIVE_INFINITY;
  windows.push({ label: 'initial deployment', kind: 'initial', from: Number.NEGATIVE_INFINITY, to: firstAction });
  input.actions.forEach((a, i) =>
    windows.push({ label: a.label, kind: a.kind, from: a.startedAt, to: input.actions[i + 1]?.startedAt ?? Number.POSITIVE_INFINITY }),
  );
  for (const w of windows) {
    const inWindow = completed.filter((p) => Date.parse(p.triggeredAt) >= w.from && Date.parse(p.triggeredAt) < w.to);
    const stops = inWindow.filter((p) => p.kind === 'stop-with-savepoint');
    const manual = inWindow.filter((p) => p.kind === 'savepoint');
    let stopRange: [number, number] = [0, 0];
    let manualRange: [number, number] = [0, 0];
    if (w.kind === 'upgrade' || w.kind === 'suspend') stopRange = input.mode === 'savepoint' ? [1, 1] : [0, 1];
    if (w.kind === 'rollback') stopRange = [1, 1];
    if (w.kind === 'manual-savepoint') manualRange = [1, 1];
    const describe = (list: typeof completed) => list.map((p) => `${p.location} of job ${p.jobId.slice(0, 8)} triggered ${rel(p.triggeredAt)}`).join('; ');
    const expected = (r: [number, number]) => (r[0] === r[1] ? `${r[0]}` : `${r[0]}..${r[1]}`);
    if (stops.length < stopRange[0] || stops.length > stopRange[1]) {
      out.push({
        invariant: '3 one savepoint per action',
        detail: `${w.label}: ${stops.length} completed stop-with-savepoints, expected ${expected(stopRange)}${stops.length ? ` (${describe(stops)})` : ''}`,
      });
    }
    if (manual.length < manualRange[0] || manual.length > manualRange[1]) {
      out.push({
        invariant: '3 one savepoint per action',
        detail: `${w.label}: ${manual.length} completed savepoints, expected ${expected(manualRange)}${manual.length ? ` (${describe(manual)})` : ''}`,
      });
    }
  }
  for (const p of lineage.savepoints.filter((x) => x.status === 'IN_PROGRESS')) {
    out.push({
      invariant: '3 one savepoint per action',
      detail: `${p.kind} ${p.triggerId} of job ${p.jobId} triggered ${rel(p.triggeredAt)} still IN_PROGRESS at the end`,
    });
  }

  // 4: every new submission restored from the newest completed savepoint (or a newer checkpoint) at its time
  submissions.forEach((s, i) => {
    if (i === 0 || s.origin !== 'submitted') return;
    const at = Date.parse(s.at);
    const before = completed.filter((p) => Date.parse(p.completedAt ?? p.triggeredAt) <= at);
    const newest = before.reduce<(typeof completed)[number] | undefined>(
      (a, b) => (!a || Date.parse(b.completedAt!) >= Date.parse(a.completedAt!) ? b : a),
      undefined,
    );
    if (!newest) {
      if (s.restoredFrom !== null && !isOwnCheckpoint(s.restoredFrom)) {
        out.push({
          invariant: '4 restored from the newest savepoint',
          detail: `job ${s.jobId} submitted at ${rel(s.at)} restored from ${s.restoredFrom} although no savepoint had completed`,
        });
      }
      return;
    }
    if (s.restoredFrom === newest.location) return;
    if (s.restoredFrom !== null) {
      const cp = CHECKPOINT_PATH.exec(s.restoredFrom);
      if (cp && jobIds.has(cp[1])) {
        const savepointSnapshot = input.snapshots?.get(newest.location!);
        const checkpointSnapshot = input.snapshots?.get(s.restoredFrom);
        if (savepointSnapshot && savepointSnapshot.jobId === cp[1] && Number(cp[2]) > savepointSnapshot.checkpointId) return;
        if (checkpointSnapshot && checkpointSnapshot.completedAt > Date.parse(newest.completedAt!)) return;
      }
    }
    out.push({
      invariant: '4 restored from the newest savepoint',
      detail: `job ${s.jobId} submitted at ${rel(s.at)} restored from ${s.restoredFrom ?? 'nothing'}, but the newest completed savepoint then was ${newest.location} (${newest.kind} of job ${newest.jobId.slice(0, 8)}, completed ${rel(newest.completedAt)})`,
    });
  });
  return out;
}

/** A compact, readable lineage: one token per submission and savepoint, in time order. */
export function describeLineage(lineage: LineageRecord, t0: number): string {
  const rel = (iso: string | null) => (iso ? `+${((Date.parse(iso) - t0) / 1000).toFixed(1)}s` : '?');
  const events: Array<[number, string]> = [];
  for (const s of lineage.submissions)
    events.push([Date.parse(s.at), `${rel(s.at)} ${s.origin} ${s.jobId.slice(0, 8)} from ${s.restoredFrom?.replace(/^.*\//, '') ?? '-'}`]);
  for (const p of lineage.savepoints)
    events.push([
      Date.parse(p.triggeredAt),
      `${rel(p.triggeredAt)} ${p.kind} ${p.jobId.slice(0, 8)} ${p.status}${p.location ? ` ${p.location.replace(/^.*\//, '')}` : ''}`,
    ]);
  for (const c of lineage.cancellations) events.push([Date.parse(c.at), `${rel(c.at)} cancel ${c.jobId.slice(0, 8)}`]);
  return events
    .sort((a, b) => a[0] - b[0])
    .map((e) => e[1])
    .join(' | ');
}

// ---------------------------------------------------------------------------------- the plan

export type FaultKind = 'kill-leader' | 'pause-leader' | 'rogue-instance' | 'delete-state' | 'stale-state' | 'status-edit' | 'flink-outage' | 'api-faults';
export const FAULT_KINDS: readonly FaultKind[] = [
  'kill-leader',
  'pause-leader',
  'rogue-instance',
  'delete-state',
  'stale-state',
  'status-edit',
  'flink-outage',
  'api-faults',
];
const PROCESS_FAULTS = new Set<FaultKind>(['kill-leader', 'pause-leader', 'rogue-instance']);

/**
 * `mixed` (default), an upgrade mode, a fault kind (only that fault), an action kind (only that
 * action; suspend/resume alternate), or `no-faults` (the control: the same actions, nothing injected).
 */
export type ChaosScenario = 'mixed' | 'no-faults' | UpgradeMode | FaultKind | ActionKind;
export const SCENARIOS: readonly ChaosScenario[] = ['mixed', 'no-faults', 'savepoint', 'last-state', ...FAULT_KINDS, ...ACTION_KINDS];

export function parseScenario(text: string): ChaosScenario {
  if ((SCENARIOS as readonly string[]).includes(text)) return text as ChaosScenario;
  throw new Error(`unknown scenario "${text}"; one of: ${SCENARIOS.join(', ')}`);
}

export interface PlannedFault {
  readonly kind: FaultKind;
  /** After the action's change was sent. */
  readonly afterMs: number;
  /** How long it lasts (pause, rogue instance, outages). */
  readonly durationMs: number;
  /** A value in [0, 1) for the fault's own choices (which failure, which old copy, ...). */
  readonly variant: number;
}

export interface PlannedAction {
  readonly kind: ActionKind;
  readonly faults: readonly PlannedFault[];
  /** For upgrades: 0 = a flinkConfiguration value, 1 = the parallelism, 2 = the image. */
  readonly variant: number;
}

export interface ChaosPlan {
  readonly seed: number;
  readonly scenario: ChaosScenario;
  readonly mode: UpgradeMode;
  readonly rollbackEnabled: boolean;
  readonly actions: readonly PlannedAction[];
}

function pick<T>(random: RandomSource, weighted: ReadonlyArray<readonly [T, number]>): T {
  const total = weighted.reduce((n, [, w]) => n + w, 0);
  let r = random() * total;
  for (const [value, weight] of weighted) {
    if ((r -= weight) < 0) return value;
  }
  return weighted.at(-1)![0];
}

function faultDuration(kind: FaultKind, random: RandomSource): number {
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  switch (kind) {
    case 'pause-leader':
      return between(LEASE_DURATION_MS + 1_000, LEASE_DURATION_MS + 2_500);
    case 'rogue-instance':
      return between(3_500, 6_000);
    case 'flink-outage':
      return between(1_500, 4_000);
    case 'api-faults':
      return between(3_000, 6_000);
    default:
      return 0;
  }
}

/** The run's plan: a pure function of (seed, scenario). */
export function planChaosRun(seed: number, scenario: ChaosScenario = 'mixed'): ChaosPlan {
  const random = seededRandom(seed);
  const mode: UpgradeMode =
    scenario === 'savepoint' || scenario === 'last-state' ? scenario : scenario === 'rollback' ? 'savepoint' : random() < 0.6 ? 'savepoint' : 'last-state';
  const count = 2 + Math.floor(random() * 3);
  const forcedAction = (ACTION_KINDS as readonly string[]).includes(scenario) ? (scenario as ActionKind) : undefined;
  const forcedFault = (FAULT_KINDS as readonly string[]).includes(scenario) ? (scenario as FaultKind) : undefined;
  const actions: PlannedAction[] = [];
  let suspended = false;
  for (let i = 0; i < count; i++) {
    let kind: ActionKind;
    const rolledBack = actions.at(-1)?.kind === 'rollback';
    if (suspended) kind = 'resume';
    else if (rolledBack)
      kind = 'upgrade'; // ROLLED_BACK until the user fixes the spec
    else if (forcedAction === 'resume' || forcedAction === 'suspend') kind = 'suspend';
    else if (forcedAction) kind = forcedAction;
    else {
      kind = pick<ActionKind>(random, [
        ['upgrade', 45],
        ['manual-savepoint', 20],
        ['suspend', 25],
        ['rollback', mode === 'savepoint' ? 10 : 0],
      ]);
    }
    suspended = kind === 'suspend';
    const faults: PlannedFault[] = [];
    const faultCount = scenario === 'no-faults' ? 0 : random() < 0.5 ? 1 : 2;
    for (let f = 0; f < faultCount; f++) {
      let fk = forcedFault ?? FAULT_KINDS[Math.floor(random() * FAULT_KINDS.length)];
      // The rollback target (lastStableSpec) lives only in the state ConfigMap (design/004): a run that
      // loses it during the rollback cannot be expected to roll back, so no state loss is planned there.
      if (kind === 'rollback' && (fk === 'delete-state' || fk === 'stale-state')) fk = 'api-faults';
      faults.push({ kind: fk, afterMs: Math.floor(random() * 1_200), durationMs: faultDuration(fk, random), variant: random() });
    }
    actions.push({ kind, faults, variant: random() });
  }
  return { seed, scenario, mode, rollbackEnabled: actions.some((a) => a.kind === 'rollback'), actions };
}

/** `savepoint: upgrade, suspend, resume`: the scenario mix of a plan. */
export function describePlan(plan: ChaosPlan): string {
  return `${plan.mode}: ${plan.actions.map((a) => `${a.kind}[${a.faults.map((f) => f.kind).join('+')}]`).join(', ')}`;
}

// ------------------------------------------------------------------------------ the processes

/** The operator processes of one run: leader-elect members (a leader and a standby) and rogue instances. */
export class OperatorPool {
  private readonly processes: OperatorProcess[] = [];
  private counter = 0;

  constructor(
    private readonly world: ChaosWorld,
    private readonly prefix: string,
    private readonly electArgs: readonly string[],
    private readonly rogueArgs: readonly string[],
  ) {}

  /** A new leader-elect member. */
  spawnMember(): OperatorProcess {
    const p = new OperatorProcess(this.world.kubeconfigPath, `${this.prefix}-op${++this.counter}`, { extraArgs: this.electArgs });
    this.processes.push(p);
    return p;
  }

  /** A new instance without leader election. */
  spawnRogue(): OperatorProcess {
    const p = new OperatorProcess(this.world.kubeconfigPath, `${this.prefix}-rogue${++this.counter}`, { extraArgs: this.rogueArgs });
    this.processes.push(p);
    return p;
  }

  /** Live leader-elect members (paused ones included). */
  members(): OperatorProcess[] {
    return this.processes.filter((p) => p.alive && !p.identity.includes('-rogue'));
  }

  rogues(): OperatorProcess[] {
    return this.processes.filter((p) => p.alive && p.identity.includes('-rogue'));
  }

  byIdentity(identity: string | undefined): OperatorProcess | undefined {
    return identity ? this.processes.find((p) => p.identity === identity && p.alive) : undefined;
  }

  /** SIGCONT to every paused process. */
  resumeAll(): void {
    for (const p of this.processes) if (p.paused) p.resume();
  }

  async killAll(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.kill()));
  }

  /** The output of every process this pool started, newest last. */
  tail(charsPerProcess = 2_000): string {
    return this.processes
      .map((p) => p.tail(charsPerProcess))
      .filter((t) => t.length > 0)
      .join('\n');
  }
}

// ------------------------------------------------------------------------------------ the run

export interface ActionRecord extends CheckedAction {
  /** ms since the run started */
  readonly atMs: number;
  readonly generation: number;
  converged: boolean;
  convergedAfterMs?: number;
  note?: string;
}

export interface FaultRecord {
  readonly kind: FaultKind;
  readonly action: number;
  /** ms since the run started */
  atMs: number;
  endMs?: number;
  detail: string;
  skipped?: boolean;
}

export interface ChaosRunResult {
  readonly seed: number;
  readonly scenario: ChaosScenario;
  readonly mode: UpgradeMode;
  readonly plan: string;
  readonly actions: ActionRecord[];
  readonly faults: FaultRecord[];
  /** What the harness did as a user following the operator's advice (deleting a refused state ConfigMap). */
  readonly userRemedies: Array<{ atMs: number; detail: string }>;
  /** Lease holders as they changed (ms since the run started). */
  readonly leaders: Array<{ atMs: number; holder: string }>;
  readonly violations: Violation[];
  finalStatus: string;
  lineage: string;
  /** The harness itself failed (not an invariant of the operator). */
  error?: string;
  durationMs: number;
  /** The operator processes' output (when the run failed). */
  logTail: string;
}

export interface ChaosRunOptions {
  /** Per action: how long the change may take while its faults go on, and again after them. Default 15 s. */
  readonly actionTimeoutMs?: number;
  /** The end: how long convergence may take with all faults removed. Default 30 s. */
  readonly convergeTimeoutMs?: number;
  /** Progress lines (faults, actions) as they happen. */
  readonly log?: (line: string) => void;
}

/** True when a run kept every invariant and the harness did not fail. */
export function runKeptInvariants(r: ChaosRunResult): boolean {
  return r.error === undefined && r.violations.length === 0;
}

/** The run, readable: plan, faults with their times, actions, violations, lineage. */
export function formatRun(r: ChaosRunResult, withLogs = false): string {
  const lines = [
    `seed ${r.seed} (${r.scenario}) ${r.plan}, ${r.durationMs} ms`,
    `  actions: ${r.actions.map((a) => `${a.label} at +${(a.atMs / 1000).toFixed(1)}s ${a.converged ? `done in ${a.convergedAfterMs} ms` : `NOT DONE${a.note ? ` (${a.note})` : ''}`}`).join('; ')}`,
    `  faults: ${r.faults.map((f) => `${f.kind}${f.skipped ? ' (skipped)' : ''} at +${(f.atMs / 1000).toFixed(1)}s${f.endMs !== undefined && f.endMs > f.atMs + 50 ? `..+${(f.endMs / 1000).toFixed(1)}s` : ''}: ${f.detail}`).join('; ') || 'none'}`,
    `  leaders: ${r.leaders.map((l) => `${l.holder} at +${(l.atMs / 1000).toFixed(1)}s`).join(', ')}`,
    ...(r.userRemedies.length > 0 ? [`  user: ${r.userRemedies.map((u) => `+${(u.atMs / 1000).toFixed(1)}s ${u.detail}`).join('; ')}`] : []),
    `  final: ${r.finalStatus}`,
    `  lineage: ${r.lineage}`,
  ];
  if (r.error) lines.push(`  HARNESS ERROR: ${r.error}`);
  for (const v of r.violations) lines.push(`  VIOLATION [${v.invariant}] ${v.detail}`);
  if (withLogs && r.logTail)
    lines.push(
      `  operator output (tail):\n${r.logTail
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n')}`,
    );
  return lines.join('\n');
}

export function expectationAfter(kind: ActionKind | undefined): Expectation {
  return kind === 'suspend' ? 'SUSPENDED' : kind === 'rollback' ? 'ROLLED_BACK' : 'RUNNING';
}

/**
 * The gate of a user action: the status says it is done (expectationAfter(kind) on the current
 * generation) consistently with what Flink did: the status names the newest submitted job, a new
 * job was deployed after `startedAt` (upgrade, resume, rollback), or the status' last savepoint is
 * a manual savepoint completed after it (manual-savepoint).
 */
export function actionDone(world: ChaosWorld, h: DeploymentHandle, kind: ActionKind, startedAt: number) {
  return async (): Promise<FlinkDeploymentV1 | undefined> => {
    const d = await h.read();
    if (!statusConverged(d, expectationAfter(kind))) return undefined;
    const lineage = world.world.simulation.lineage(h.namespace, h.name);
    const last = lineage.submissions.at(-1);
    if (kind !== 'suspend' && d!.status?.jobStatus?.jobId !== last?.jobId) return undefined;
    if ((kind === 'upgrade' || kind === 'resume' || kind === 'rollback') && (!last || Date.parse(last.at) < startedAt)) return undefined;
    if (kind === 'manual-savepoint') {
      const location = d!.status?.jobStatus?.lastSavepoint?.location;
      const taken = lineage.savepoints.some(
        (p) => p.kind === 'savepoint' && p.status === 'COMPLETED' && p.location === location && Date.parse(p.triggeredAt) >= startedAt,
      );
      if (!taken) return undefined;
    }
    return d;
  };
}

/** The FlinkDeployment of a run: standalone, savepoint dir, HA + checkpoints for last-state. */
export function chaosDeployment(name: string, namespace: string, mode: UpgradeMode, rollbackEnabled = false): FlinkDeploymentV1 {
  let b = flinkDeployment(name)
    .inNamespace(namespace)
    .withSpec({ mode: 'standalone', job: { upgradeMode: mode } })
    .withFlinkConfiguration({ 'state.savepoints.dir': 'file:///flink-data/savepoints', 'chaos.revision': '0' });
  if (mode === 'last-state') b = b.withFlinkConfiguration(HA_CONFIGURATION);
  if (rollbackEnabled) {
    b = b.withFlinkConfiguration({ 'kubernetes.operator.deployment.rollback.enabled': 'true', 'kubernetes.operator.deployment.readiness.timeout': '6 s' });
  }
  return b.build();
}

/**
 * One chaos run: its own namespace, FlinkDeployment and Lease; two leader-elect operator processes
 * (a leader and a standby); the plan's actions one after the other, each waited for (bounded), its
 * faults at their moments; then every fault removed, convergence, and the invariants.
 */
export async function chaosRun(world: ChaosWorld, seed: number, scenario: ChaosScenario = 'mixed', options: ChaosRunOptions = {}): Promise<ChaosRunResult> {
  const plan = planChaosRun(seed, scenario);
  const t0 = Date.now();
  const since = () => Date.now() - t0;
  const log = options.log ?? (() => {});
  const actionTimeoutMs = options.actionTimeoutMs ?? 15_000;
  const convergeTimeoutMs = options.convergeTimeoutMs ?? 30_000;
  const repeat = world.runsBySeed.get(seed) ?? 0;
  world.runsBySeed.set(seed, repeat + 1);
  const name = repeat === 0 ? `chaos-${seed}` : `chaos-${seed}-${repeat}`;
  const namespace = name;
  const leaseName = `${name}-lease`;
  const h = new DeploymentHandle(world.kubeConfig, namespace, name);
  const sim = world.world.simulation;
  const faults = world.world.cluster.faults;
  const harnessRandom = seededRandom(seed ^ 0x5eed);
  const requestRandom = seededRandom((seed * 7919 + 17) >>> 0);
  const workerArgs = ['--namespace', namespace, '--retry-max-delay', '1s'];
  const pool = new OperatorPool(
    world,
    name,
    [...leaderElectionArgs(leaseName), ...workerArgs],
    [...withoutLeaderElectionArgs(world, leaseName), ...workerArgs],
  );

  const result: ChaosRunResult = {
    seed,
    scenario,
    mode: plan.mode,
    plan: describePlan(plan),
    actions: [],
    faults: [],
    userRemedies: [],
    leaders: [],
    violations: [],
    finalStatus: '',
    lineage: '',
    durationMs: 0,
    logTail: '',
  };
  const faultStop = new AbortController();
  const running: Array<Promise<void>> = [];
  const captures: V1ConfigMap[] = [];
  const snapshots = new Map<string, SeenSnapshot>();
  let processLock: Promise<void> = Promise.resolve();

  // Fault switches: rules stay in the injector (count Infinity) and match only while switched on.
  let outageOn = false;
  let apiFaultsOn = false;
  const proxyPath = new RegExp(`/namespaces/${namespace}/services/[^/]*${name}-rest(:[^/]*)?/proxy(/|$)`);
  const outageFailure: FaultFailure =
    harnessRandom() < 0.5 ? { code: 503, message: 'error trying to reach service: dial tcp 10.244.0.1:8081: connect: connection refused' } : 'reset';
  faults.failNext({ path: new GatedPattern((p) => outageOn && proxyPath.test(p)) }, outageFailure, Number.POSITIVE_INFINITY);
  const haConfigMap = /-cluster-config-map(\?|$)/;
  const writeTargets: FaultMatch[] = [
    ...['update', 'patch'].map((verb) => ({ verb, resource: 'flinkdeployments', namespace })),
    ...['update', 'patch', 'delete'].map((verb) => ({ verb, resource: 'configmaps', namespace })),
    ...['create', 'update', 'patch', 'delete'].flatMap((verb) => [
      { verb, resource: 'deployments', subresource: '', namespace },
      { verb, resource: 'services', subresource: '', namespace },
    ]),
    ...['create', 'update'].map((verb) => ({ verb, resource: 'leases', namespace: LEASE_NAMESPACE, name: leaseName })),
  ];
  for (const target of writeTargets) {
    for (const [code, p] of [
      [503, 0.04],
      [500, 0.03],
      [409, 0.03],
    ] as const) {
      faults.failNext(
        { ...target, path: new GatedPattern((path) => apiFaultsOn && !haConfigMap.test(path) && requestRandom() < p) },
        { code, message: `injected chaos fault (${code})` },
        Number.POSITIVE_INFINITY,
      );
    }
  }

  // Watchers: the snapshots in the simulated storage (for "a newer checkpoint") and the Lease holder.
  let polling = false;
  let ticks = 0;
  const poller = setInterval(() => {
    if (polling) return;
    polling = true;
    void (async () => {
      for (const s of sim.snapshots()) if (!snapshots.has(s.location)) snapshots.set(s.location, { ...s, firstSeenAt: Date.now() });
      if (ticks++ % 3 === 0) {
        const holder = await h.leaseHolder(leaseName).catch(() => undefined);
        if (holder && result.leaders.at(-1)?.holder !== holder) result.leaders.push({ atMs: since(), holder });
      }
    })().finally(() => (polling = false));
  }, 50);

  const stateStep = async () => {
    const cm = await h.stateConfigMap().catch(() => undefined);
    if (!cm) return 'no state ConfigMap';
    const data = cm.data ?? {};
    const pending = data.pendingOperation ?? '';
    return pending.includes('pendingSavepoint')
      ? `${data.phase}, savepoint pending (rev ${data.revision})`
      : pending.includes('jobIdToSubmit')
        ? `${data.phase}, deploy pending (rev ${data.revision})`
        : `${data.phase ?? '?'} (rev ${data.revision})`;
  };

  const capture = async () => {
    const cm = await h.stateConfigMap().catch(() => undefined);
    if (cm && captures.at(-1)?.metadata?.resourceVersion !== cm.metadata?.resourceVersion) captures.push(cm);
  };

  const leader = async (): Promise<OperatorProcess | undefined> => pool.byIdentity(await h.leaseHolder(leaseName).catch(() => undefined));

  const runFault = async (f: PlannedFault, actionIndex: number): Promise<void> => {
    await sleep(f.afterMs, faultStop.signal);
    if (faultStop.signal.aborted) return;
    const record: FaultRecord = { kind: f.kind, action: actionIndex, atMs: since(), detail: '' };
    result.faults.push(record);
    const signal = faultStop.signal;
    try {
      switch (f.kind) {
        case 'kill-leader': {
          const victim = (await leader()) ?? pool.members().find((p) => !p.paused) ?? pool.members()[0];
          if (!victim) {
            record.detail = 'no operator process alive';
            break;
          }
          await victim.kill();
          const step = await stateStep();
          await sleep(Math.floor(f.variant * 300), signal);
          const replacement = pool.spawnMember();
          record.detail = `SIGKILL ${victim.identity} during ${step}; started ${replacement.identity}`;
          break;
        }
        case 'pause-leader': {
          const victim = await leader();
          if (!victim || victim.paused) {
            record.detail = victim ? `leader ${victim.identity} already paused` : 'no leader to pause';
            record.skipped = true;
            break;
          }
          if (pool.members().filter((p) => p !== victim && !p.paused).length === 0) pool.spawnMember();
          const step = await stateStep();
          victim.pause();
          try {
            await sleep(f.durationMs, signal);
          } finally {
            victim.resume();
          }
          record.detail = `SIGSTOP ${victim.identity} for ${f.durationMs} ms during ${step}, then SIGCONT (leader then: ${(await h.leaseHolder(leaseName).catch(() => undefined)) ?? '?'})`;
          break;
        }
        case 'rogue-instance': {
          if (!world.noLeaderElectFlag) {
            record.detail = 'skipped: this operator has no --no-leader-elect flag';
            record.skipped = true;
            break;
          }
          const rogue = pool.spawnRogue();
          try {
            await sleep(f.durationMs, signal);
          } finally {
            await rogue.kill();
          }
          record.detail = `${rogue.identity} (--no-leader-elect) ran for ${f.durationMs} ms next to the leader`;
          break;
        }
        case 'delete-state': {
          const step = await stateStep();
          const deleted = await h.deleteStateConfigMap();
          record.detail = deleted ? `deleted ${h.stateConfigMapName} during ${step}` : 'no state ConfigMap to delete';
          break;
        }
        case 'stale-state': {
          const current = await h.stateConfigMap();
          const older = captures.filter((c) => c.data?.revision !== current?.data?.revision);
          if (older.length === 0) {
            record.detail = 'no older copy captured';
            record.skipped = true;
            break;
          }
          const old = older[Math.floor(f.variant * older.length)];
          const step = await stateStep();
          const swap = await h.restoreStateConfigMap(old);
          record.detail = `state ConfigMap put back from ${swap.from} to the copy of ${swap.to} (${old.data?.phase}) during ${step}`;
          break;
        }
        case 'status-edit': {
          const jobId = randomHex(harnessRandom, 32);
          const location = `file:/flink-data/savepoints/savepoint-madeup-${randomHex(harnessRandom, 12)}`;
          await h.patchStatus({ jobStatus: { jobId, lastSavepoint: { location, timeStamp: Date.now(), triggerType: 'MANUAL' } } });
          record.detail = `status hand-edited: jobStatus.jobId ${jobId}, lastSavepoint ${location}`;
          break;
        }
        case 'flink-outage': {
          outageOn = true;
          try {
            await sleep(f.durationMs, signal);
          } finally {
            outageOn = false;
          }
          record.detail = `Flink REST (service proxy) answering ${outageFailure === 'reset' ? 'connection resets' : '503'} for ${f.durationMs} ms`;
          break;
        }
        case 'api-faults': {
          apiFaultsOn = true;
          try {
            await sleep(f.durationMs, signal);
          } finally {
            apiFaultsOn = false;
          }
          record.detail = `~10% of writes failing (503/500/409) for ${f.durationMs} ms`;
          break;
        }
      }
    } catch (error) {
      record.detail += ` (fault failed: ${(error as Error).message})`;
    } finally {
      record.endMs = since();
      log(`seed ${seed} +${(record.atMs / 1000).toFixed(1)}s ${f.kind}: ${record.detail}`);
    }
  };

  const scheduleFault = (f: PlannedFault, actionIndex: number): Promise<void> => {
    if (!PROCESS_FAULTS.has(f.kind)) return runFault(f, actionIndex);
    // process faults one at a time: a kill and a pause of the same leader do not overlap
    const run = processLock.then(() => runFault(f, actionIndex));
    processLock = run.catch(() => undefined);
    return run;
  };

  /**
   * What a user does when the operator refuses a state ConfigMap that was put back to an older
   * revision (or holds another deployment's content), as its status.error and event advise: delete
   * it, so the operator rebuilds it from the cluster and Flink (design/004, recovery rules). Done at
   * most once per refused ConfigMap object (its uid), recorded as a `user` entry of the fault list.
   */
  const remedied = new Set<string>();
  const followRefusedStateAdvice = async (): Promise<void> => {
    const d = await h.read().catch(() => undefined);
    if (!/older than revision|belongs to FlinkDeployment/.test(d?.status?.error ?? '')) return;
    const cm = await h.stateConfigMap().catch(() => undefined);
    const uid = cm?.metadata?.uid;
    if (!uid || remedied.has(uid)) return;
    // only the refused object: older than a revision seen before, or another deployment's content (not its rebuilt successor, while the status still shows the old error)
    // (the newest revision may be known only to the operator: then the error names the refused one)
    const newestSeen = Math.max(d?.status?.stateRef?.revision ?? 0, ...captures.map((c) => Number(c.data?.revision ?? 0)));
    const named = /holds operator state revision (\d+), older than/.exec(d?.status?.error ?? '')?.[1];
    const revision = Number(cm.data?.revision ?? 0);
    const refused =
      revision < newestSeen ||
      (named !== undefined && revision === Number(named)) ||
      (cm.data?.deploymentUid !== undefined && cm.data.deploymentUid !== d?.metadata.uid);
    if (!refused) return;
    remedied.add(uid);
    if (await h.deleteStateConfigMap().catch(() => false)) {
      result.userRemedies.push({ atMs: since(), detail: `deleted the refused ${h.stateConfigMapName} as status.error advises` });
      log(`seed ${seed} +${(since() / 1000).toFixed(1)}s user: deleted the refused state ConfigMap`);
    }
  };
  const withRemedy =
    <T>(probe: () => Promise<T | undefined>) =>
    async (): Promise<T | undefined> => {
      await followRefusedStateAdvice();
      return probe();
    };

  const stopFaults = async () => {
    faultStop.abort();
    await Promise.allSettled(running);
    outageOn = false;
    apiFaultsOn = false;
    faults.clear();
    pool.resumeAll();
    await Promise.all(pool.rogues().map((p) => p.kill()));
  };

  let suspendedAtEnd = false;
  let expectation: Expectation = 'RUNNING';
  try {
    await h.ensureNamespace();
    pool.spawnMember();
    pool.spawnMember();
    await h.create(chaosDeployment(name, namespace, plan.mode, plan.rollbackEnabled));
    await waitUntil(
      async () => {
        const d = await h.read();
        return statusConverged(d, 'RUNNING') && d!.status?.jobStatus?.jobId === sim.lineage(namespace, name).submissions.at(-1)?.jobId ? d : undefined;
      },
      40_000,
      `${name} STABLE before the first action`,
      async () => describeStatus(await h.read()),
    );
    await capture();

    let upgrades = 0;
    let nonce = 0;
    let parallelism = 2;
    let brokenImage = false;
    for (const [i, action] of plan.actions.entries()) {
      await capture();
      const startedAt = Date.now();
      let change: Record<string, unknown>;
      let label: string;
      switch (action.kind) {
        case 'upgrade': {
          upgrades++;
          // a last-state upgrade keeps the JobGraph in Flink HA (the parallelism with it): change values it applies
          let variant = Math.floor(action.variant * 3);
          if (variant === 1 && plan.mode === 'last-state') variant = 0;
          const spec: Record<string, unknown> =
            variant === 0
              ? { flinkConfiguration: { 'chaos.revision': String(upgrades) } }
              : variant === 1
                ? { job: { parallelism: (parallelism = parallelism === 2 ? 3 : 2) } }
                : { image: `flink:1.20.${upgrades}` };
          if (brokenImage && variant !== 2) spec.image = `flink:1.20.${upgrades}`;
          brokenImage = false;
          change = { spec };
          label = `#${i + 1} ${plan.mode} upgrade (${JSON.stringify(spec)})`;
          break;
        }
        case 'manual-savepoint':
          change = { spec: { job: { savepointTriggerNonce: ++nonce } } };
          label = `#${i + 1} manual savepoint (nonce ${nonce})`;
          break;
        case 'suspend':
          change = { spec: { job: { state: 'suspended' } } };
          label = `#${i + 1} suspend`;
          break;
        case 'resume':
          change = { spec: { job: { state: 'running' } } };
          label = `#${i + 1} resume`;
          break;
        case 'rollback':
          change = { spec: { image: 'flink:crashloop' } };
          brokenImage = true;
          label = `#${i + 1} upgrade to a crash-looping image (rollback)`;
          break;
      }
      const patched = await h.patch(change);
      const record: ActionRecord = {
        kind: action.kind,
        startedAt,
        label,
        atMs: startedAt - t0,
        generation: patched.metadata.generation ?? 0,
        converged: false,
      };
      result.actions.push(record);
      expectation = expectationAfter(action.kind);
      suspendedAtEnd = action.kind === 'suspend';
      log(`seed ${seed} +${(record.atMs / 1000).toFixed(1)}s ${label}`);
      const mine = action.faults.map((f) => scheduleFault(f, i));
      running.push(...mine);
      // done while its faults go on (bounded), and done (again) once they are over; a stuck action ends the sequence
      const done = withRemedy(actionDone(world, h, action.kind, startedAt));
      const [first] = await Promise.all([pollUntil(done, actionTimeoutMs), Promise.allSettled(mine)]);
      const again = await pollUntil(done, actionTimeoutMs);
      if (again) {
        record.converged = true;
        record.convergedAfterMs = Date.now() - startedAt;
      } else {
        record.note = `${first ? 'done, then not any more after its faults' : 'not done'} within ${actionTimeoutMs} ms: ${describeStatus(await h.read().catch(() => undefined))}`;
        break;
      }
    }

    // The end: no faults, one leader, convergence.
    await stopFaults();
    const rollback = result.actions.at(-1)?.kind === 'rollback' ? result.actions.at(-1) : undefined;
    if (rollback && expectation === 'ROLLED_BACK') {
      const lost =
        result.faults.some((f) => !f.skipped && (f.kind === 'delete-state' || f.kind === 'stale-state') && f.atMs >= rollback.atMs) ||
        result.userRemedies.some((u) => u.atMs >= rollback.atMs);
      if (lost) {
        expectation = 'REPORTED';
        rollback.note = `${rollback.note ? `${rollback.note}; ` : ''}its rollback target was lost with the state ConfigMap during it: expecting the failure reported instead`;
      }
    }
    if (pool.members().length === 0) pool.spawnMember();
    const finalGate = async () => {
      const d = await h.read();
      if (!statusConverged(d, expectation)) return undefined;
      if (expectation !== 'SUSPENDED' && expectation !== 'REPORTED' && d!.status?.jobStatus?.jobId !== sim.lineage(namespace, name).submissions.at(-1)?.jobId)
        return undefined;
      return d;
    };
    let final = await pollUntil(withRemedy(finalGate), convergeTimeoutMs);
    if (final) {
      // it must stay there
      const submissionsBefore = sim.lineage(namespace, name).submissions.length;
      await sleep(1_000);
      const settled = await finalGate().catch(() => undefined);
      const moved = sim.lineage(namespace, name).submissions.length !== submissionsBefore;
      if (!settled || moved) {
        result.violations.push({
          invariant: '5 converged to the spec',
          detail: `converged, then moved again within 1 s (${moved ? 'a new submission' : describeStatus(await h.read().catch(() => undefined))})`,
        });
      }
      final = settled ?? final;
    }
    const current = await h.read();
    result.finalStatus = describeStatus(current);
    if (!final) {
      result.violations.push({
        invariant: '5 converged to the spec',
        detail: `not ${expectation} on generation ${current?.metadata.generation} within ${convergeTimeoutMs} ms after the faults ended: ${describeStatus(current)}`,
      });
    }

    // 5: the objects render the spec and Flink runs what the status says
    const lineage = sim.lineage(namespace, name);
    const jobs = runningJobs(world.world, namespace, name);
    const live = jobs.filter((j) => NON_TERMINAL.has(j.state));
    const spec = current?.spec;
    if (expectation === 'SUSPENDED') {
      if (live.length > 0)
        result.violations.push({
          invariant: '5 converged to the spec',
          detail: `suspended, but Flink still runs ${live.map((j) => `${j.jobId} ${j.state} on ${j.pod}`).join(', ')}`,
        });
    } else if (current && expectation !== 'REPORTED') {
      const statusJob = current.status?.jobStatus?.jobId;
      if (live.length !== 1 || live[0].jobId !== statusJob || live[0].state !== 'RUNNING') {
        result.violations.push({
          invariant: '5 converged to the spec',
          detail: `status names job ${statusJob}, Flink runs [${live.map((j) => `${j.jobId} ${j.state} on ${j.pod}`).join(', ')}]`,
        });
      }
      if (expectation === 'RUNNING' && spec) {
        const jm = await h.jobManagerDeployment().catch(() => undefined);
        const image = jm?.spec?.template.spec?.containers.find((c) => c.name === 'flink-main-container')?.image;
        if (image !== spec.image)
          result.violations.push({ invariant: '5 converged to the spec', detail: `JobManager Deployment runs image ${image}, the spec says ${spec.image}` });
        const configText = (await h.flinkConfigMap().catch(() => undefined))?.data?.['config.yaml'];
        const rendered = configText ? parseFlinkConfigYaml(configText) : new Map<string, string>();
        const revision = spec.flinkConfiguration?.['chaos.revision'];
        const wanted = typeof revision === 'string' || typeof revision === 'number' ? String(revision) : '';
        if (rendered.get('chaos.revision') !== wanted)
          result.violations.push({
            invariant: '5 converged to the spec',
            detail: `flink-config-${name} has chaos.revision ${rendered.get('chaos.revision')}, the spec says ${wanted}`,
          });
        const last = lineage.submissions.at(-1);
        if (last && spec.job?.parallelism !== undefined && last.parallelism !== spec.job.parallelism) {
          result.violations.push({
            invariant: '5 converged to the spec',
            detail: `the running job has parallelism ${last.parallelism}, the spec says ${spec.job.parallelism}`,
          });
        }
      }
    }

    // 6: the FlinkStateSnapshots the operator recorded (design/011): no savepoint twice, each one Flink took
    const completedPaths = new Set(lineage.savepoints.filter((sp) => sp.status === 'COMPLETED' && sp.location).map((sp) => sp.location));
    const resources = (
      (await h.custom.listNamespacedCustomObject({ group: 'flink.apache.org', version: 'v1beta1', namespace, plural: 'flinkstatesnapshots' })) as {
        items: Array<{ metadata: { name?: string }; spec?: { savepoint?: unknown; jobReference?: { name?: string } }; status?: { path?: string } }>;
      }
    ).items.filter((r) => r.spec?.savepoint && r.spec.jobReference?.name === name);
    const byPath = new Map<string, string[]>();
    for (const r of resources) byPath.set(r.status?.path ?? '(no path)', [...(byPath.get(r.status?.path ?? '(no path)') ?? []), r.metadata.name ?? '']);
    for (const [path, names] of byPath) {
      if (names.length > 1) result.violations.push({ invariant: '6 no snapshot resource twice', detail: `${path} recorded by ${names.join(', ')}` });
      if (!completedPaths.has(path))
        result.violations.push({ invariant: '6 no snapshot resource twice', detail: `${names.join(', ')} name ${path}, which Flink never completed` });
    }

    // 1–4 from the lineage
    // the job that still runs (what Flink says, not what the status says); every other job must have ended with a savepoint
    const finalJobId =
      expectation === 'SUSPENDED' ? undefined : live.length === 1 ? live[0].jobId : live.length === 0 ? undefined : current?.status?.jobStatus?.jobId;
    const haJobIds = plan.mode === 'last-state' ? await h.haJobIds().catch(() => []) : [];
    for (const s of sim.snapshots()) if (!snapshots.has(s.location)) snapshots.set(s.location, { ...s, firstSeenAt: Date.now() });
    result.violations.unshift(
      ...checkLineage({ lineage, mode: plan.mode, actions: result.actions, t0, snapshots, finalJobId, finalSuspended: suspendedAtEnd, haJobIds }),
    );
    result.lineage = describeLineage(lineage, t0);
  } catch (error) {
    result.error = (error as Error).message;
    result.lineage = describeLineage(sim.lineage(namespace, name), t0);
    result.finalStatus ||= describeStatus(await h.read().catch(() => undefined));
  } finally {
    await stopFaults();
    clearInterval(poller);
    while (polling) await sleep(10);
    await h.cleanUp().catch(() => undefined);
    if (!runKeptInvariants(result)) result.logTail = pool.tail();
    await pool.killAll();
    result.durationMs = Date.now() - t0;
  }
  return result;
}
