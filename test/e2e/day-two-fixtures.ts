/**
 * Shared builders and probes for the day-two end-to-end tests (day-two-upgrades.test.ts,
 * day-two-status.test.ts): Flink configuration snippets, a status recorder that sees every
 * version of a FlinkDeployment (a watch), event probes, Kubernetes object probes and lineage
 * checks. Everything here observes the world (the simulated Flink's lineage and storage, the
 * FlinkDeployment, Kubernetes objects, Events); nothing reads the operator's logs.
 */
import assert from 'node:assert/strict';
import { Watch, type CoreV1Event, type V1Deployment } from '@kubernetes/client-node';
import type { FlinkDeploymentStatusV1 } from '../../src/api/flink-deployment-status.js';
import type { FlinkDeploymentV1 } from '../../src/api/flink-deployment.js';
import type { LineageRecord } from '../../src/devcluster/simulation/lineage-recorder.js';
import { flinkPathString } from '../../src/devcluster/simulation/snapshot-storage.js';
import type { OperatorHarness } from './operator-harness.js';

export const NS = 'default';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Flink Kubernetes HA (what the simulated JobManager keeps in `<name>-cluster-config-map`). */
export const HA = {
  'high-availability.type': 'kubernetes',
  'high-availability.storageDir': 'file:///flink-data/ha',
} as const;

/** Periodic checkpoints (the builder's spec already sets execution.checkpointing.dir, Flink 1.20's name of state.checkpoints.dir). */
export const CHECKPOINTS = { 'execution.checkpointing.interval': '100 ms' } as const;

export const stable = (generation: number) => (d: FlinkDeploymentV1) =>
  d.status?.lifecycleState === 'STABLE' &&
  d.status?.observedGeneration === generation &&
  d.status?.jobStatus?.state === 'RUNNING' &&
  d.status?.jobManagerDeploymentStatus === 'READY';

export function ready(status: FlinkDeploymentStatusV1 | undefined) {
  return status?.conditions?.find((c) => c.type === 'Ready');
}

export function lineage(h: OperatorHarness, name: string, namespace = NS): LineageRecord {
  return h.world.simulation.lineage(namespace, name);
}

export function submitted(l: LineageRecord) {
  return l.submissions.filter((s) => s.origin === 'submitted');
}

export function completedSavepoints(l: LineageRecord) {
  return l.savepoints.filter((s) => s.status === 'COMPLETED');
}

/** Compact lineage text for assertion messages. */
export function describeLineage(l: LineageRecord): string {
  return JSON.stringify({
    submissions: l.submissions.map((s) => ({ jobId: s.jobId.slice(0, 8), restoredFrom: s.restoredFrom, origin: s.origin, pod: s.podName })),
    savepoints: l.savepoints.map((s) => ({ kind: s.kind, status: s.status, jobId: s.jobId.slice(0, 8), location: s.location })),
    cancellations: l.cancellations.map((c) => c.jobId.slice(0, 8)),
  });
}

export function assertNoJobIdSubmittedTwice(l: LineageRecord): void {
  const ids = submitted(l).map((s) => s.jobId);
  assert.equal(new Set(ids).size, ids.length, `no job id submitted twice (${describeLineage(l)})`);
}

/** Two Flink path spellings of the same file (`file:///x` = `file:/x` = `/x`). */
export function samePath(a: string | null | undefined, b: string | null | undefined): boolean {
  return typeof a === 'string' && typeof b === 'string' && flinkPathString(a) === flinkPathString(b);
}

/** The newest restorable checkpoint of `jobId` in the simulated storage. */
export function newestCheckpointOf(h: OperatorHarness, jobId: string): string | undefined {
  return h.world.simulation
    .snapshots()
    .filter((s) => s.kind === 'checkpoint' && s.jobId === jobId)
    .sort((a, b) => b.checkpointId - a.checkpointId)[0]?.location;
}

/** The simulated Flink job `jobId` of deployment `name`, as its running JobManager holds it. */
export function flinkJob(h: OperatorHarness, name: string, jobId: string, namespace = NS) {
  for (const jm of h.world.simulation.jobManagers()) {
    if (jm.deployment.namespace !== namespace || jm.deployment.name !== name || jm.isStopped) continue;
    const job = jm.getJob(jobId);
    if (job) return job;
  }
  return undefined;
}

// ---- Kubernetes objects ----

export async function jobManagerDeployment(h: OperatorHarness, name: string, namespace = NS): Promise<V1Deployment | undefined> {
  try {
    return await h.apps.readNamespacedDeployment({ namespace, name });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** Names of the JobManager and TaskManager Deployments of `name` that exist. */
export async function clusterDeploymentNames(h: OperatorHarness, name: string, namespace = NS): Promise<string[]> {
  const names = [name, `${name}-taskmanager`];
  const found: string[] = [];
  for (const n of names) if (await jobManagerDeployment(h, n, namespace)) found.push(n);
  return found;
}

/** Flink's Kubernetes HA ConfigMaps of the cluster (labels as Flink sets them, see kube-ha-metadata-store.ts). */
export async function haConfigMaps(h: OperatorHarness, name: string, namespace = NS) {
  return (await h.core.listNamespacedConfigMap({ namespace, labelSelector: `app=${name},configmap-type=high-availability` })).items;
}

/** Waits until Flink's HA metadata of `name` records a completed checkpoint (what an HA recovery restores). */
export async function haCheckpointRecorded(h: OperatorHarness, name: string, namespace = NS): Promise<void> {
  await h.waitUntil(async () => {
    const cms = await haConfigMaps(h, name, namespace);
    return cms.some((cm) => Object.keys(cm.data ?? {}).some((k) => k.startsWith('completedCheckpoint'))) ? true : undefined;
  }, `a checkpoint of ${name} recorded in Flink's HA metadata`);
}

/** Replaces the image of the JobManager Deployment's Flink container behind the operator's back. */
export async function setJobManagerImage(h: OperatorHarness, name: string, image: string, namespace = NS): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const jm = (await jobManagerDeployment(h, name, namespace))!;
    const container = jm.spec!.template.spec!.containers.find((c) => c.name === 'flink-main-container') ?? jm.spec!.template.spec!.containers[0];
    container.image = image;
    try {
      await h.apps.replaceNamespacedDeployment({ namespace, name, body: jm });
      return;
    } catch (error) {
      if ((error as { code?: number }).code !== 409 || attempt > 10) throw error;
    }
  }
}

export async function jobManagerPodWaitingReasons(h: OperatorHarness, name: string, namespace = NS): Promise<string[]> {
  const pods = await h.core.listNamespacedPod({ namespace, labelSelector: `app=${name},component=jobmanager` });
  return pods.items.flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => c.state?.waiting?.reason ?? '')).filter((r) => r !== '');
}

// ---- Events ----

export interface SeenEvent {
  reason: string;
  type: string;
  message: string;
  count: number;
}

export async function events(h: OperatorHarness, name: string, namespace = NS): Promise<SeenEvent[]> {
  return (await h.events(name, namespace)).map((e: CoreV1Event) => ({
    reason: e.reason ?? '',
    type: e.type ?? '',
    message: e.message ?? '',
    count: e.count ?? 1,
  }));
}

/** How many times an event with `reason` was recorded (aggregated repeats count). */
export async function eventCount(h: OperatorHarness, name: string, reason: string, namespace = NS): Promise<number> {
  return (await events(h, name, namespace)).filter((e) => e.reason === reason).reduce((n, e) => n + e.count, 0);
}

export async function waitForEvent(
  h: OperatorHarness,
  name: string,
  reason: string,
  type: 'Normal' | 'Warning',
  timeoutMs = 15_000,
  namespace = NS,
): Promise<SeenEvent> {
  let seen: SeenEvent[] = [];
  try {
    return await h.waitUntil(
      async () => {
        seen = await events(h, name, namespace);
        return seen.find((e) => e.reason === reason && e.type === type);
      },
      `a ${type} event ${reason} for ${name}`,
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; events seen: ${JSON.stringify(seen.map((e) => `${e.type}/${e.reason}: ${e.message.slice(0, 160)}`))}`);
  }
}

// ---- every version of a FlinkDeployment ----

export interface StatusSample {
  at: number;
  generation: number;
  resourceVersion: string;
  status: FlinkDeploymentStatusV1 | undefined;
}

export interface StatusRecording {
  readonly samples: StatusSample[];
  /** Stops the watch; throws if it ended on its own before (samples would be missing). */
  stop(): Promise<StatusSample[]>;
}

/**
 * Records every version of FlinkDeployment `name` (a watch sees every committed write, so this is
 * stronger than sampling the status every 20 ms). Start it before the action under test.
 */
export async function recordStatuses(h: OperatorHarness, name: string, namespace = NS): Promise<StatusRecording> {
  const samples: StatusSample[] = [];
  let endedEarly: unknown;
  let stopping = false;
  const watch = new Watch(h.kubeConfig);
  const request = await watch.watch(
    `/apis/flink.apache.org/v1/namespaces/${namespace}/flinkdeployments`,
    {},
    (phase, obj: FlinkDeploymentV1) => {
      if (phase === 'DELETED' || obj?.metadata?.name !== name) return;
      samples.push({ at: Date.now(), generation: obj.metadata.generation ?? 0, resourceVersion: obj.metadata.resourceVersion ?? '', status: obj.status });
    },
    (error) => {
      if (!stopping) endedEarly = error ?? new Error('watch closed');
    },
  );
  return {
    samples,
    async stop() {
      stopping = true;
      request.abort();
      if (endedEarly !== undefined)
        throw new Error(`the status watch of ${name} ended before the test stopped it: ${(endedEarly as Error)?.message ?? endedEarly}`);
      return samples;
    },
  };
}

export function describeSample(s: StatusSample): string {
  const r = ready(s.status);
  return JSON.stringify({
    gen: s.generation,
    lifecycle: s.status?.lifecycleState,
    jm: s.status?.jobManagerDeploymentStatus,
    job: s.status?.jobStatus?.state,
    ready: r ? `${r.status}/${r.reason}` : undefined,
    error: s.status?.error?.slice(0, 120),
  });
}

/** Best-effort removal at the end of a test, so that a deployment left behind costs the other tests nothing; never waits. */
export async function discard(h: OperatorHarness, ...names: string[]): Promise<void> {
  for (const name of names) await h.delete(name).catch(() => undefined);
}
