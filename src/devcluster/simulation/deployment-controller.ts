/**
 * The simulated Deployment controller (kube-controller-manager's, reduced): for each Deployment it
 * keeps one ReplicaSet per pod template (`<deployment>-<pod-template-hash>`, owner-referenced,
 * labelled and annotated as the real controller does), scales it, rolls out template changes, and
 * keeps the Deployment's status and conditions.
 *
 * Rollouts:
 * - `Recreate` (the strategy the operator renders): old ReplicaSets are scaled to 0 first; the new
 *   one is created/scaled only once no old pod is left.
 * - `RollingUpdate`: APPROXIMATED: the new ReplicaSet gets all replicas at once (a 100% surge) and
 *   old ReplicaSets shrink as new pods become available, so availability never drops but the
 *   maxSurge/maxUnavailable step sizes are not honoured.
 * Old ReplicaSets at 0 replicas beyond `revisionHistoryLimit` (default 10) are deleted.
 *
 * Guarantees: level-based (every sync reads the informer caches and converges); creating the same
 * ReplicaSet twice is harmless (its name is deterministic, a 409 AlreadyExists is ignored); status
 * is written only when it changed, with the cached resourceVersion (a 409 retries the sync).
 * Caveats: `paused` only freezes scaling/rollout; minReadySeconds counts as 0; no ReplicaFailure.
 */
import type { V1Deployment, V1ReplicaSet } from '@kubernetes/client-node';
import type { SimulationAppsApi } from './simulation-api-client.js';
import { KeyedWorkQueue } from './keyed-work-queue.js';
import { OwnerIndex, controllerOf, objectKey, splitKey } from './owner-index.js';
import type { SimulationInformer } from './simulation-informer.js';
import {
  computeDeploymentStatus,
  maxUnavailable,
  podTemplateHash,
  progressDeadlineRemainingMs,
  replicaSetRevision,
  sameDeploymentStatus,
} from './deployment-status.js';
import { UnseenOwnWrites } from './unseen-own-writes.js';

export interface DeploymentControllerDeps {
  readonly apps: SimulationAppsApi;
  readonly deployments: SimulationInformer<V1Deployment>;
  readonly replicaSets: SimulationInformer<V1ReplicaSet>;
  readonly onError?: (error: unknown, what: string) => void;
  readonly concurrency?: number;
}

const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';

function isConflictOrExists(error: unknown): boolean {
  const code = (error as { code?: number }).code;
  return code === 409;
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: number }).code === 404;
}

function needsScale(rs: V1ReplicaSet, desired: number): boolean {
  return (rs.spec?.replicas ?? 0) !== desired || rs.metadata?.annotations?.[DESIRED] !== String(desired);
}

export class DeploymentController {
  private readonly queue: KeyedWorkQueue;
  private readonly rsIndex = new OwnerIndex();
  /** Deployments this controller wrote (revision annotation, status) whose cache does not show it yet. */
  private readonly ownWrites = new UnseenOwnWrites();

  constructor(private readonly deps: DeploymentControllerDeps) {
    this.queue = new KeyedWorkQueue((key) => this.sync(key), {
      concurrency: deps.concurrency ?? 8,
      onError: (key, error) => {
        if (!isConflictOrExists(error) && !isNotFound(error)) deps.onError?.(error, `deployment controller sync ${key}`);
      },
    });
    deps.deployments.on((type, d) => {
      if (type !== 'delete') this.queue.add(objectKey(d));
      else this.ownWrites.forget(objectKey(d));
    });
    deps.replicaSets.on((type, rs) => {
      this.rsIndex.observe(type, rs);
      const owner = controllerOf(rs);
      if (owner?.kind === 'Deployment') this.queue.add(`${rs.metadata?.namespace}/${owner.name}`);
    });
  }

  async stop(): Promise<void> {
    await this.queue.stop();
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private ownedReplicaSets(d: V1Deployment): V1ReplicaSet[] {
    const out: V1ReplicaSet[] = [];
    for (const key of this.rsIndex.owned(d.metadata?.uid)) {
      const { namespace, name } = splitKey(key);
      const rs = this.deps.replicaSets.get(namespace, name);
      if (rs && controllerOf(rs)?.uid === d.metadata?.uid) out.push(rs);
    }
    return out;
  }

  private async sync(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const { namespace, name } = splitKey(key);
    const d = this.deps.deployments.get(namespace, name);
    if (!d || d.metadata?.deletionTimestamp) return;
    const desired = d.spec?.replicas ?? 1;
    const hash = podTemplateHash(d.spec?.template, d.status?.collisionCount ?? 0);
    let owned = this.ownedReplicaSets(d);
    let newRS = owned.find((rs) => rs.metadata?.labels?.['pod-template-hash'] === hash);
    const oldRSs = owned.filter((rs) => rs !== newRS);
    // k8s isScalingEvent: the new ReplicaSet exists but was last sized for another replica count
    const scalingOnly = newRS !== undefined && newRS.metadata?.annotations?.[DESIRED] !== String(desired);
    let created = false;
    const replace = (rs: V1ReplicaSet) => {
      owned = owned.map((o) => (o.metadata?.uid === rs.metadata?.uid ? rs : o));
      if (newRS && newRS.metadata?.uid === rs.metadata?.uid) newRS = rs;
    };

    if (!d.spec?.paused) {
      if (d.spec?.strategy?.type === 'Recreate') {
        let oldPodsLeft = false;
        for (const rs of oldRSs) {
          if ((rs.spec?.replicas ?? 0) > 0) replace(await this.scale(rs, 0, desired));
          if ((rs.status?.replicas ?? 0) > 0) oldPodsLeft = true;
        }
        if (!oldPodsLeft) {
          if (!newRS) {
            newRS = await this.createReplicaSet(d, hash, desired, owned);
            if (newRS) {
              owned.push(newRS);
              created = true;
            }
          } else if (needsScale(newRS, desired)) replace(await this.scale(newRS, desired, desired));
        }
      } else {
        if (!newRS) {
          newRS = await this.createReplicaSet(d, hash, desired, owned);
          if (newRS) {
            owned.push(newRS);
            created = true;
          }
        } else if (needsScale(newRS, desired)) replace(await this.scale(newRS, desired, desired));
        // old ReplicaSets keep only what the new one cannot serve yet (oldest shrink first)
        let budget = Math.max(0, desired - maxUnavailable(d) - (newRS?.status?.availableReplicas ?? 0));
        const byRevisionDesc = [...oldRSs].sort((a, b) => replicaSetRevision(b) - replicaSetRevision(a));
        for (const rs of byRevisionDesc) {
          const current = rs.spec?.replicas ?? 0;
          const keep = Math.min(current, budget);
          budget -= keep;
          if (keep !== current) replace(await this.scale(rs, keep, desired));
        }
      }
      await this.cleanupHistory(d, owned, newRS);
    }

    // While the cache still shows the version our previous annotation patch / status write
    // replaced, the cached annotations and status are stale: writing now would repeat the patch
    // or send a stale resourceVersion (a sure 409). The watch event of that write requeues this
    // key; the next sync writes from the fresh object (see unseen-own-writes.ts).
    // Caveat: the Progressing condition of a just-created ReplicaSet (NewReplicaSetCreated) is then
    // written by that next sync as FoundNewReplicaSet, as the real controller does after a conflict.
    const cacheIsBehind = this.ownWrites.cacheIsBehind(key, d.metadata?.resourceVersion);
    let latest = d;
    if (!cacheIsBehind && newRS && d.metadata?.annotations?.[REVISION] !== String(replicaSetRevision(newRS))) {
      latest = await this.deps.apps.patchNamespacedDeployment({
        namespace,
        name,
        body: { metadata: { annotations: { [REVISION]: String(replicaSetRevision(newRS)) } } },
      });
      this.ownWrites.noteWrite(key, [d.metadata?.resourceVersion]);
    }

    const now = new Date();
    const status = computeDeploymentStatus({ deployment: d, replicaSets: owned, newReplicaSet: newRS, createdNewReplicaSet: created, now, scalingOnly });
    if (!cacheIsBehind && !sameDeploymentStatus(d.status, status)) {
      await this.deps.apps.replaceNamespacedDeploymentStatus({ namespace, name, body: { ...latest, status } });
      this.ownWrites.noteWrite(key, [d.metadata?.resourceVersion, latest.metadata?.resourceVersion]);
    }
    const remaining = progressDeadlineRemainingMs(d, status, now);
    return remaining !== null && remaining > 0 ? { requeueAfterMs: remaining + 5 } : undefined;
  }

  /** Sets a ReplicaSet's replicas, and its desired-replicas annotation to the Deployment's replicas (k8s SetReplicasAnnotations). */
  private async scale(rs: V1ReplicaSet, replicas: number, deploymentReplicas: number): Promise<V1ReplicaSet> {
    return this.deps.apps.patchNamespacedReplicaSet({
      namespace: rs.metadata!.namespace!,
      name: rs.metadata!.name!,
      body: { metadata: { annotations: { [DESIRED]: String(deploymentReplicas) } }, spec: { replicas } },
    });
  }

  private async createReplicaSet(d: V1Deployment, hash: string, replicas: number, owned: V1ReplicaSet[]): Promise<V1ReplicaSet | undefined> {
    const namespace = d.metadata!.namespace!;
    const revision = owned.reduce((max, rs) => Math.max(max, replicaSetRevision(rs)), 0) + 1;
    const templateLabels = { ...(d.spec?.template?.metadata?.labels ?? {}), 'pod-template-hash': hash };
    const body: V1ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata!.name}-${hash}`,
        namespace,
        labels: templateLabels,
        annotations: {
          [DESIRED]: String(replicas),
          'deployment.kubernetes.io/max-replicas': String(replicas + (d.spec?.strategy?.type === 'Recreate' ? 0 : Math.ceil(replicas * 0.25))),
          [REVISION]: String(revision),
        },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata!.name!, uid: d.metadata!.uid!, controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: {
        replicas,
        minReadySeconds: d.spec?.minReadySeconds,
        selector: { ...d.spec!.selector, matchLabels: { ...(d.spec?.selector?.matchLabels ?? {}), 'pod-template-hash': hash } },
        template: { ...d.spec?.template, metadata: { ...d.spec?.template?.metadata, labels: templateLabels } },
      },
    };
    try {
      return await this.deps.apps.createNamespacedReplicaSet({ namespace, body });
    } catch (error) {
      if (isConflictOrExists(error)) return undefined; // created by an earlier sync; the informer will show it
      throw error;
    }
  }

  private async cleanupHistory(d: V1Deployment, owned: V1ReplicaSet[], newRS: V1ReplicaSet | undefined): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit ?? 10;
    const idle = owned
      .filter((rs) => rs !== newRS && (rs.spec?.replicas ?? 0) === 0 && (rs.status?.replicas ?? 0) === 0)
      .sort((a, b) => replicaSetRevision(a) - replicaSetRevision(b));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      try {
        await this.deps.apps.deleteNamespacedReplicaSet({ namespace: rs.metadata!.namespace!, name: rs.metadata!.name! });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
  }
}
