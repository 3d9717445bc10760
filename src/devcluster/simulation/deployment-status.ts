/**
 * Pure computations of the simulated Deployment controller, following kube-controller-manager's
 * `pkg/controller/deployment` (sync.go `calculateStatus`, progress.go, util/deployment_util.go):
 * the pod-template-hash, maxUnavailable/maxSurge, the Deployment status fields and the
 * Available / Progressing conditions with the real reasons and messages.
 *
 * Caveats: minReadySeconds is treated as 0 (available = ready); the ReplicaFailure condition is not
 * produced; the hash is FNV-1a over the template's JSON (the real one hashes Go's printed struct),
 * so the values differ from a real cluster's but behave the same (stable per template, new per change).
 */
import type { V1Deployment, V1DeploymentCondition, V1DeploymentStatus, V1PodTemplateSpec, V1ReplicaSet } from '@kubernetes/client-node';

/** Stable JSON (sorted keys) so that equal templates hash equally whatever their key order. */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The `pod-template-hash` label value for a template (k8s: SafeEncodeString(fmt.Sprint(fnv32a(template)))). */
export function podTemplateHash(template: V1PodTemplateSpec | undefined, collisionCount = 0): string {
  let hash = 0x811c9dc5;
  const text = stableJson(template ?? {}) + (collisionCount > 0 ? String(collisionCount) : '');
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return [...String(hash)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

function resolvePercent(value: number | string | undefined, total: number, roundUp: boolean, fallback: string): number {
  const v = value ?? fallback;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return Number(v) || 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** maxUnavailable as the controller resolves it (0 for Recreate; 25% rounded down by default). */
export function maxUnavailable(d: V1Deployment): number {
  const replicas = d.spec?.replicas ?? 1;
  if (d.spec?.strategy?.type === 'Recreate' || replicas === 0) return 0;
  const surge = resolvePercent(d.spec?.strategy?.rollingUpdate?.maxSurge, replicas, true, '25%');
  let unavailable = resolvePercent(d.spec?.strategy?.rollingUpdate?.maxUnavailable, replicas, false, '25%');
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return Math.min(unavailable, replicas);
}

export function replicaSetRevision(rs: V1ReplicaSet): number {
  return Number(rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '0') || 0;
}

export interface StatusInputs {
  readonly deployment: V1Deployment;
  /** Every ReplicaSet the Deployment owns, the new one included. */
  readonly replicaSets: readonly V1ReplicaSet[];
  readonly newReplicaSet: V1ReplicaSet | undefined;
  /** Whether the new ReplicaSet was created in this sync (reason NewReplicaSetCreated). */
  readonly createdNewReplicaSet: boolean;
  readonly now: Date;
}

function setCondition(
  conditions: V1DeploymentCondition[],
  next: Omit<V1DeploymentCondition, 'lastTransitionTime' | 'lastUpdateTime'>,
  now: Date,
  touch = false,
): V1DeploymentCondition[] {
  const existing = conditions.find((c) => c.type === next.type);
  if (!touch && existing && existing.status === next.status && existing.reason === next.reason && existing.message === next.message) return conditions;
  const updated: V1DeploymentCondition = {
    ...next,
    lastUpdateTime: now,
    lastTransitionTime: existing && existing.status === next.status ? (existing.lastTransitionTime ?? now) : now,
  };
  return [...conditions.filter((c) => c.type !== next.type), updated];
}

/** Whether the rollout is complete (k8s DeploymentComplete). */
export function deploymentComplete(d: V1Deployment, status: V1DeploymentStatus): boolean {
  const replicas = d.spec?.replicas ?? 1;
  return (
    (status.updatedReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0)
  );
}

/** k8s DeploymentProgressing: the new status shows progress over the old one. */
function progressed(old: V1DeploymentStatus | undefined, next: V1DeploymentStatus): boolean {
  const o = old ?? {};
  return (
    (next.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) ||
    (next.replicas ?? 0) < (o.replicas ?? 0) ||
    (next.readyReplicas ?? 0) > (o.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) > (o.availableReplicas ?? 0)
  );
}

/** Milliseconds until the progress deadline of an incomplete rollout passes (null: no deadline pending). */
export function progressDeadlineRemainingMs(d: V1Deployment, status: V1DeploymentStatus, now: Date): number | null {
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (!progressing || progressing.status !== 'True' || progressing.reason === 'NewReplicaSetAvailable') return null;
  const deadlineSeconds = d.spec?.progressDeadlineSeconds ?? 600;
  const since = progressing.lastUpdateTime ? new Date(progressing.lastUpdateTime).getTime() : now.getTime();
  return Math.max(0, since + deadlineSeconds * 1000 - now.getTime());
}

/**
 * The Deployment status the controller would write (sync.go calculateStatus + progress.go
 * syncRolloutStatus). `scalingOnly`: the template did not change, only replicas (the real
 * controller then leaves Progressing alone).
 */
export function computeDeploymentStatus(inputs: StatusInputs & { readonly scalingOnly?: boolean }): V1DeploymentStatus {
  const { deployment: d, replicaSets, newReplicaSet, now } = inputs;
  const specReplicas = d.spec?.replicas ?? 1;
  const sum = (f: (rs: V1ReplicaSet) => number | undefined) => replicaSets.reduce((acc, rs) => acc + (f(rs) ?? 0), 0);
  const actual = sum((rs) => rs.status?.replicas);
  const total = sum((rs) => rs.spec?.replicas);
  const available = sum((rs) => rs.status?.availableReplicas);
  const status: V1DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: actual,
    updatedReplicas: newReplicaSet?.status?.replicas ?? 0,
    readyReplicas: sum((rs) => rs.status?.readyReplicas),
    availableReplicas: available,
  };
  const unavailable = Math.max(0, total - available);
  if (unavailable > 0) status.unavailableReplicas = unavailable;
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;

  let conditions = [...(d.status?.conditions ?? [])];
  conditions =
    available >= specReplicas - maxUnavailable(d)
      ? setCondition(
          conditions,
          { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
          now,
        )
      : setCondition(
          conditions,
          { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' },
          now,
        );

  const name = newReplicaSet?.metadata?.name;
  if (name !== undefined) {
    const current = conditions.find((c) => c.type === 'Progressing');
    if (inputs.createdNewReplicaSet) {
      conditions = setCondition(
        conditions,
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated', message: `Created new replica set "${name}"` },
        now,
      );
    } else if (!current) {
      conditions = setCondition(
        conditions,
        { type: 'Progressing', status: 'True', reason: 'FoundNewReplicaSet', message: `Found new replica set "${name}"` },
        now,
      );
    }
    if (!inputs.scalingOnly) {
      if (deploymentComplete(d, status)) {
        conditions = setCondition(
          conditions,
          { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${name}" has successfully progressed.` },
          now,
        );
      } else if (progressed(d.status, status)) {
        conditions = setCondition(
          conditions,
          { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `ReplicaSet "${name}" is progressing.` },
          now,
          true,
        );
      } else if (progressDeadlineRemainingMs(d, { conditions }, now) === 0) {
        conditions = setCondition(
          conditions,
          { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${name}" has timed out progressing.` },
          now,
        );
      }
    }
  }
  // the real controller lists Available before Progressing
  status.conditions = conditions.sort((a, b) => (a.type === 'Available' ? -1 : b.type === 'Available' ? 1 : 0));
  return status;
}

/** Status equality ignoring condition timestamps (to skip no-op writes). */
export function sameDeploymentStatus(a: V1DeploymentStatus | undefined, b: V1DeploymentStatus): boolean {
  const strip = (s: V1DeploymentStatus | undefined) =>
    stableJson({ ...(s ?? {}), conditions: (s?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })) });
  return strip(a) === strip(b);
}
