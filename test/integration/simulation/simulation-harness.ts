/**
 * Shared helpers for the simulation's integration tests: a simulated cluster with fast timings,
 * client-node API clients for it, polling, and a namespace per test.
 */
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Deployment } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulatedCluster, type SimulatedCluster, type SimulationOptions } from '../../../src/devcluster/simulated-cluster.js';

export interface Harness {
  sc: SimulatedCluster;
  core: CoreV1Api;
  apps: AppsV1Api;
  errors: Array<{ what: string; error: unknown }>;
}

export async function startHarness(simulation: SimulationOptions = {}): Promise<Harness> {
  const errors: Harness['errors'] = [];
  const sc = await startSimulatedCluster({
    simulation: { podReadyDelayMs: 20, jobStartDelayMs: 20, savepointDurationMs: 30, onError: (error, what) => errors.push({ what, error }), ...simulation },
  });
  const kc = sc.cluster.kubeConfig();
  return { sc, core: kc.makeApiClient(CoreV1Api), apps: kc.makeApiClient(AppsV1Api), errors };
}

let nsCounter = 0;
export async function freshNamespace(h: Harness, prefix = 'sim'): Promise<string> {
  const name = `${prefix}-${process.pid}-${nsCounter++}`;
  await h.core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** Polls `probe` until it returns a truthy value; fails with `what` and the last value after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false | null>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
      last = v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await sleep(10);
  }
}

export function deployment(
  name: string,
  opts: { replicas?: number; image?: string; strategy?: 'Recreate' | 'RollingUpdate'; progressDeadlineSeconds?: number } = {},
): V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas: opts.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      strategy: opts.strategy ? { type: opts.strategy } : undefined,
      progressDeadlineSeconds: opts.progressDeadlineSeconds,
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: opts.image ?? 'example/app:1.0' }] } },
    },
  };
}

/** Patches a Deployment; strategic merge (the default, as kubectl) merges containers by name. */
export async function patchDeployment(
  h: Harness,
  namespace: string,
  name: string,
  body: object,
  strategy: PatchStrategy = PatchStrategy.StrategicMergePatch,
): Promise<void> {
  await h.apps.patchNamespacedDeployment({ namespace, name, body }, setHeaderOptions('Content-Type', strategy));
}

/** The Deployment once its rollout is complete at `generation` with `replicas` available. */
export async function rolledOut(h: Harness, namespace: string, name: string, replicas: number, generation: number): Promise<V1Deployment> {
  return eventually(async () => {
    const d = await h.apps.readNamespacedDeployment({ namespace, name });
    const s = d.status;
    const progressing = s?.conditions?.find((c) => c.type === 'Progressing');
    const ok =
      s?.observedGeneration === generation &&
      (s.replicas ?? 0) === replicas &&
      (s.updatedReplicas ?? 0) === replicas &&
      (s.availableReplicas ?? 0) === replicas &&
      progressing?.reason === 'NewReplicaSetAvailable';
    return ok ? d : undefined;
  }, `deployment ${namespace}/${name} rolled out (${replicas} replicas, generation ${generation})`);
}
